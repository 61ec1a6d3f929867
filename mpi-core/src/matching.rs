//! MPI matching engine (DESIGN §5): posted-receive and unexpected-message queues per
//! communicator context, matched on (context, source, tag) with wildcards, preserving
//! MPI's non-overtaking order.
//!
//! Every queued entry lives in a slab (index-linked, reused via a free list, so the steady
//! state does not allocate) and is threaded on intrusive FIFO lists keyed by pattern:
//!
//! * Posted receives sit on exactly one list chosen by their pattern: exact `(src, tag)`,
//!   `(ANY_SOURCE, tag)`, `(src, ANY_TAG)` or `(ANY_SOURCE, ANY_TAG)`. An arrival inspects
//!   at most the four list heads that can match it and takes the lowest sequence number,
//!   which is the earliest-posted matching receive.
//! * Unexpected messages sit on four lists at once (by `(src, tag)`, by tag, by source,
//!   and overall); each is in arrival order, so any receive pattern finds its earliest
//!   match at a single list head, and removal unlinks in O(1) from all four.
//!
//! Every operation is O(1) expected (hash lookups) except `cancel_posted`, which scans
//! the one list its pattern selects. Empty lists are removed from their maps, so memory
//! is bounded by the peak number of live entries, not by the number of distinct tags seen.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// Wildcard source (receives only).
pub const ANY_SOURCE: i32 = -2;
/// Wildcard tag (receives only).
pub const ANY_TAG: i32 = -1;
/// `MPI_PROC_NULL`: never queued; receives from it complete at once (handled above the matcher).
pub const PROC_NULL: i32 = -1;

/// Matching key of a message: communicator context, source rank, tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    pub ctx: u32,
    pub src: i32,
    pub tag: i32,
}

// ---------------------------------------------------------------------------------------
// Hashing: keys are small integers; SipHash would dominate the hot path.

/// Multiply-rotate hasher in the style of rustc-hash 2: one multiply per word, with the
/// well-mixed high product bits rotated down because hashbrown indexes by the low bits.
#[derive(Default, Clone, Copy)]
struct FxHasher {
    h: u64,
}

const FX_K: u64 = 0xf135_7aea_2e62_a9c5;

impl FxHasher {
    #[inline]
    fn add(&mut self, x: u64) {
        self.h = self.h.wrapping_add(x).wrapping_mul(FX_K);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u32(&mut self, x: u32) {
        self.add(u64::from(x));
    }
    #[inline]
    fn write_i32(&mut self, x: i32) {
        self.add(u64::from(x as u32));
    }
    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.h.rotate_left(26)
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Packs `(src, tag)` into one word so the exact-bucket lookup hashes a single u64.
#[inline]
fn pair(src: i32, tag: i32) -> u64 {
    (u64::from(src as u32) << 32) | u64::from(tag as u32)
}

// ---------------------------------------------------------------------------------------
// Slab of nodes threaded on K intrusive doubly-linked lists (indices, no unsafe).

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Link {
    prev: u32,
    next: u32,
}

const UNLINKED: Link = Link {
    prev: NIL,
    next: NIL,
};

/// Head and tail of one FIFO list.
#[derive(Clone, Copy)]
struct Ends {
    head: u32,
    tail: u32,
}

impl Ends {
    const EMPTY: Ends = Ends {
        head: NIL,
        tail: NIL,
    };
    #[inline]
    fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

struct Node<T, const K: usize> {
    links: [Link; K],
    seq: u64,
    src: i32,
    tag: i32,
    /// `None` while the slot is on the free list (then `links[0].next` chains it).
    val: Option<T>,
}

struct Slab<T, const K: usize> {
    nodes: Vec<Node<T, K>>,
    free: u32,
    len: usize,
}

impl<T, const K: usize> Slab<T, K> {
    const fn new() -> Self {
        Slab {
            nodes: Vec::new(),
            free: NIL,
            len: 0,
        }
    }

    #[inline]
    fn alloc(&mut self, seq: u64, src: i32, tag: i32, val: T) -> u32 {
        let node = Node {
            links: [UNLINKED; K],
            seq,
            src,
            tag,
            val: Some(val),
        };
        self.len += 1;
        if self.free != NIL {
            let i = self.free;
            self.free = self.nodes[i as usize].links[0].next;
            self.nodes[i as usize] = node;
            i
        } else {
            let i = u32::try_from(self.nodes.len()).ok().filter(|&i| i != NIL);
            let i = i.expect("matching queue exceeds u32::MAX - 1 entries");
            self.nodes.push(node);
            i
        }
    }

    /// Frees a slot that has already been unlinked from all its lists.
    #[inline(always)]
    fn release(&mut self, i: u32) -> T {
        let n = &mut self.nodes[i as usize];
        let v = n.val.take().expect("releasing a free slot");
        n.links[0].next = self.free;
        self.free = i;
        self.len -= 1;
        v
    }

    #[inline]
    fn node(&self, i: u32) -> &Node<T, K> {
        &self.nodes[i as usize]
    }

    #[inline]
    fn push_back(&mut self, k: usize, ends: &mut Ends, i: u32) {
        let tail = ends.tail;
        self.nodes[i as usize].links[k] = Link {
            prev: tail,
            next: NIL,
        };
        if tail == NIL {
            ends.head = i;
        } else {
            self.nodes[tail as usize].links[k].next = i;
        }
        ends.tail = i;
    }

    #[inline(always)]
    fn unlink(&mut self, k: usize, ends: &mut Ends, i: u32) {
        let Link { prev, next } = self.nodes[i as usize].links[k];
        if prev == NIL {
            ends.head = next;
        } else {
            self.nodes[prev as usize].links[k].next = next;
        }
        if next == NIL {
            ends.tail = prev;
        } else {
            self.nodes[next as usize].links[k].prev = prev;
        }
        self.nodes[i as usize].links[k] = UNLINKED;
    }

    /// Appends `i` to the list stored under `key`, creating the list if needed.
    #[inline]
    fn push_keyed<Q: Hash + Eq + Copy>(&mut self, k: usize, lists: &mut Lists<Q>, key: Q, i: u32) {
        let ends = lists.entry(key);
        self.push_back(k, ends, i);
    }

    /// Unlinks `i` from the (non-empty) list under `key`.
    #[inline]
    fn unlink_keyed<Q: Hash + Eq + Copy>(&mut self, k: usize, lists: &mut Lists<Q>, key: Q, i: u32) {
        let (ends, in_map) = lists.find(&key).expect("node not on its keyed list");
        self.unlink(k, ends, i);
        if in_map && ends.is_empty() {
            lists.map_live -= 1;
        }
    }
}

/// FIFO lists by key. One list lives outside the map ("hot"): a context usually has one
/// active key at a time (a ping-pong, a window of same-tag messages, a collective), which
/// then costs no hashing at all. At most one non-empty list exists per key, hot or mapped.
struct Lists<Q> {
    hot_key: Option<Q>,
    hot: Ends,
    map: FxMap<Q, Ends>,
    /// Non-empty lists in `map` (lookups skip the map when it holds none).
    map_live: usize,
    /// Map size at which empty lists are dropped (bounds memory by the peak of live keys,
    /// not by the number of distinct tags ever seen). Emptied lists otherwise stay, so the
    /// next message with the same key reuses its entry without a hash insert.
    gc_at: usize,
}

impl<Q> Default for Lists<Q> {
    fn default() -> Self {
        Lists { hot_key: None, hot: Ends::EMPTY, map: FxMap::default(), map_live: 0, gc_at: 32 }
    }
}

impl<Q: Hash + Eq + Copy> Lists<Q> {
    /// No list holds anything.
    #[inline]
    fn is_idle(&self) -> bool {
        self.hot.is_empty() && self.map_live == 0
    }

    /// The non-empty list under `key`, and whether it is in the map.
    #[inline]
    fn find(&mut self, key: &Q) -> Option<(&mut Ends, bool)> {
        if self.hot_key.as_ref() == Some(key) && !self.hot.is_empty() {
            return Some((&mut self.hot, false));
        }
        if self.map_live == 0 {
            return None;
        }
        self.map.get_mut(key).filter(|e| !e.is_empty()).map(|e| (e, true))
    }

    #[inline]
    fn head(&self, key: &Q) -> Option<u32> {
        if self.hot_key.as_ref() == Some(key) && !self.hot.is_empty() {
            return Some(self.hot.head);
        }
        if self.map_live == 0 {
            return None;
        }
        self.map.get(key).and_then(head)
    }

    /// The list to append to for `key` (created empty if needed).
    #[inline]
    fn entry(&mut self, key: Q) -> &mut Ends {
        if self.hot_key == Some(key) {
            return &mut self.hot;
        }
        if self.hot.is_empty() && (self.map_live == 0 || self.map.get(&key).is_none_or(|e| e.is_empty())) {
            self.hot_key = Some(key);
            return &mut self.hot;
        }
        if self.map.len() >= self.gc_at && !self.map.contains_key(&key) {
            self.map.retain(|_, e| !e.is_empty());
            self.gc_at = (2 * self.map.len()).max(32);
        }
        let e = self.map.entry(key).or_insert(Ends::EMPTY);
        if e.is_empty() {
            self.map_live += 1;
        }
        e
    }

    #[cfg(test)]
    fn capacity(&self) -> usize {
        self.map.capacity()
    }
}

#[inline]
fn head(e: &Ends) -> Option<u32> {
    (!e.is_empty()).then_some(e.head)
}

// ---------------------------------------------------------------------------------------

/// Which list a receive pattern lives on (posted side) or is answered from (unexpected).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Pattern {
    Exact,
    AnySrc,
    AnyTag,
    AnyAny,
}

#[inline]
fn pattern(src: i32, tag: i32) -> Pattern {
    debug_assert!(
        src >= 0 || src == ANY_SOURCE,
        "invalid receive source {src}"
    );
    debug_assert!(tag >= 0 || tag == ANY_TAG, "invalid receive tag {tag}");
    match (src == ANY_SOURCE, tag == ANY_TAG) {
        (false, false) => Pattern::Exact,
        (true, false) => Pattern::AnySrc,
        (false, true) => Pattern::AnyTag,
        (true, true) => Pattern::AnyAny,
    }
}

/// Does a receive for (`src`, `tag`) (wildcards allowed) match an arrival from `env`?
#[inline]
pub fn accepts(src: i32, tag: i32, env: Envelope) -> bool {
    (src == ANY_SOURCE || src == env.src) && (tag == ANY_TAG || tag == env.tag)
}

// Link slots of an unexpected node.
const U_EXACT: usize = 0;
const U_TAG: usize = 1;
const U_SRC: usize = 2;
const U_ALL: usize = 3;

/// Queues of one communicator context.
#[derive(Default)]
struct Ctx {
    /// Posted receives, one list per pattern (each node is on exactly one).
    p_exact: Lists<u64>,
    p_any_src: Lists<i32>, // keyed by tag
    p_any_tag: Lists<i32>, // keyed by src
    p_any_any: Ends,
    /// Unexpected messages, each on all four lists, all in arrival order.
    u_exact: Lists<u64>,
    u_by_tag: Lists<i32>,
    u_by_src: Lists<i32>,
    u_all: Ends,
}

impl Default for Ends {
    fn default() -> Self {
        Ends::EMPTY
    }
}

/// Matching engine over request handles `R` (posted receives) and message descriptors `M`
/// (unexpected messages).
pub struct Matcher<R, M> {
    /// Indexed by context id: contexts are small dense integers, no hashing needed.
    ctxs: Vec<Ctx>,
    posted: Slab<R, 1>,
    unexp: Slab<M, 4>,
    /// Shared posting/arrival stamp; only relative order within one side matters.
    seq: u64,
}

impl<R: Copy + PartialEq, M> Default for Matcher<R, M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<R: Copy + PartialEq, M> Matcher<R, M> {
    pub fn new() -> Self {
        Matcher {
            ctxs: Vec::new(),
            posted: Slab::new(),
            unexp: Slab::new(),
            seq: 0,
        }
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// An arrival: remove and return the earliest-posted receive matching `env`, if any.
    pub fn match_posted(&mut self, env: Envelope) -> Option<R> {
        debug_assert!(
            env.src >= 0 && env.tag >= 0,
            "arrivals carry concrete src/tag"
        );
        let c = self.ctxs.get_mut(env.ctx as usize)?;
        let slab = &mut self.posted;
        if c.p_any_src.is_idle() && c.p_any_tag.is_idle() && c.p_any_any.is_empty() {
            // No wildcard receive posted (the common case): pop the head of one list.
            let (ends, in_map) = c.p_exact.find(&pair(env.src, env.tag))?;
            let i = ends.head;
            slab.unlink(0, ends, i);
            if in_map && ends.is_empty() {
                c.p_exact.map_live -= 1;
            }
            return Some(slab.release(i));
        }
        // The four lists that can hold a receive matching this arrival; lowest seq wins.
        let cands = [
            (Pattern::Exact, c.p_exact.head(&pair(env.src, env.tag))),
            (Pattern::AnySrc, c.p_any_src.head(&env.tag)),
            (Pattern::AnyTag, c.p_any_tag.head(&env.src)),
            (Pattern::AnyAny, head(&c.p_any_any)),
        ];
        let (which, i) = cands
            .into_iter()
            .filter_map(|(p, h)| h.map(|i| (p, i)))
            .min_by_key(|&(_, i)| slab.node(i).seq)?;
        let n = slab.node(i);
        let (src, tag) = (n.src, n.tag);
        match which {
            Pattern::Exact => slab.unlink_keyed(0, &mut c.p_exact, pair(src, tag), i),
            Pattern::AnySrc => slab.unlink_keyed(0, &mut c.p_any_src, tag, i),
            Pattern::AnyTag => slab.unlink_keyed(0, &mut c.p_any_tag, src, i),
            Pattern::AnyAny => slab.unlink(0, &mut c.p_any_any, i),
        }
        Some(slab.release(i))
    }

    /// No posted receive matched: queue the message as unexpected (arrival order).
    pub fn push_unexpected(&mut self, env: Envelope, msg: M) {
        debug_assert!(
            env.src >= 0 && env.tag >= 0,
            "arrivals carry concrete src/tag"
        );
        let seq = self.next_seq();
        let i = self.unexp.alloc(seq, env.src, env.tag, msg);
        let c = ctx_slot(&mut self.ctxs, env.ctx);
        let s = &mut self.unexp;
        s.push_keyed(U_EXACT, &mut c.u_exact, pair(env.src, env.tag), i);
        s.push_keyed(U_TAG, &mut c.u_by_tag, env.tag, i);
        s.push_keyed(U_SRC, &mut c.u_by_src, env.src, i);
        s.push_back(U_ALL, &mut c.u_all, i);
    }

    /// Earliest-arrived unexpected message matching the receive pattern: each pattern
    /// maps to one arrival-ordered list, so this is its head.
    #[inline]
    fn unexp_head(&self, ctx: u32, src: i32, tag: i32) -> Option<u32> {
        let c = self.ctxs.get(ctx as usize)?;
        // The common case when receives are posted ahead: nothing unexpected at all.
        head(&c.u_all)?;
        match pattern(src, tag) {
            Pattern::Exact => c.u_exact.head(&pair(src, tag)),
            Pattern::AnySrc => c.u_by_tag.head(&tag),
            Pattern::AnyTag => c.u_by_src.head(&src),
            Pattern::AnyAny => head(&c.u_all),
        }
    }

    /// A receive (ctx, src, tag) is being posted: remove and return the earliest-arrived
    /// matching unexpected message, if any (also used by MPI_Mprobe/Improbe).
    pub fn take_unexpected(&mut self, ctx: u32, src: i32, tag: i32) -> Option<(Envelope, M)> {
        self.take_unexpected_if(ctx, src, tag, |_| true)
    }

    /// Like `take_unexpected`, but only if the earliest match satisfies `want`.
    #[inline]
    pub fn take_unexpected_if(&mut self, ctx: u32, src: i32, tag: i32, want: impl FnOnce(&M) -> bool) -> Option<(Envelope, M)> {
        let i = self.unexp_head(ctx, src, tag)?;
        if !want(self.unexp.node(i).val.as_ref().expect("live node")) {
            return None;
        }
        let c = &mut self.ctxs[ctx as usize];
        let s = &mut self.unexp;
        let (msrc, mtag) = (s.node(i).src, s.node(i).tag);
        s.unlink_keyed(U_EXACT, &mut c.u_exact, pair(msrc, mtag), i);
        s.unlink_keyed(U_TAG, &mut c.u_by_tag, mtag, i);
        s.unlink_keyed(U_SRC, &mut c.u_by_src, msrc, i);
        s.unlink(U_ALL, &mut c.u_all, i);
        Some((
            Envelope {
                ctx,
                src: msrc,
                tag: mtag,
            },
            s.release(i),
        ))
    }

    /// Nothing matched: post the receive.
    pub fn push_posted(&mut self, ctx: u32, src: i32, tag: i32, r: R) {
        let p = pattern(src, tag);
        let seq = self.next_seq();
        let i = self.posted.alloc(seq, src, tag, r);
        let c = ctx_slot(&mut self.ctxs, ctx);
        let s = &mut self.posted;
        match p {
            Pattern::Exact => s.push_keyed(0, &mut c.p_exact, pair(src, tag), i),
            Pattern::AnySrc => s.push_keyed(0, &mut c.p_any_src, tag, i),
            Pattern::AnyTag => s.push_keyed(0, &mut c.p_any_tag, src, i),
            Pattern::AnyAny => s.push_back(0, &mut c.p_any_any, i),
        }
    }

    /// MPI_Probe/Iprobe: the earliest-arrived matching unexpected message, not removed.
    pub fn peek_unexpected(&self, ctx: u32, src: i32, tag: i32) -> Option<(Envelope, &M)> {
        let i = self.unexp_head(ctx, src, tag)?;
        let n = self.unexp.node(i);
        let env = Envelope {
            ctx,
            src: n.src,
            tag: n.tag,
        };
        Some((env, n.val.as_ref().expect("live node")))
    }

    /// Mutable access to a queued unexpected message (e.g. to append data that arrives later).
    pub fn peek_unexpected_mut(
        &mut self,
        ctx: u32,
        src: i32,
        tag: i32,
    ) -> Option<(Envelope, &mut M)> {
        let i = self.unexp_head(ctx, src, tag)?;
        let n = &mut self.unexp.nodes[i as usize];
        let env = Envelope {
            ctx,
            src: n.src,
            tag: n.tag,
        };
        Some((env, n.val.as_mut().expect("live node")))
    }

    /// MPI_Cancel of a posted receive: remove it if still posted; true if it was.
    /// Scans only the list selected by the receive's own (src, tag) pattern.
    pub fn cancel_posted(&mut self, ctx: u32, src: i32, tag: i32, r: R) -> bool {
        let p = pattern(src, tag);
        let Some(c) = self.ctxs.get_mut(ctx as usize) else {
            return false;
        };
        let s = &mut self.posted;
        let start = match p {
            Pattern::Exact => c.p_exact.head(&pair(src, tag)),
            Pattern::AnySrc => c.p_any_src.head(&tag),
            Pattern::AnyTag => c.p_any_tag.head(&src),
            Pattern::AnyAny => head(&c.p_any_any),
        };
        let mut cur = start.unwrap_or(NIL);
        while cur != NIL {
            let n = s.node(cur);
            if n.val == Some(r) {
                match p {
                    Pattern::Exact => s.unlink_keyed(0, &mut c.p_exact, pair(src, tag), cur),
                    Pattern::AnySrc => s.unlink_keyed(0, &mut c.p_any_src, tag, cur),
                    Pattern::AnyTag => s.unlink_keyed(0, &mut c.p_any_tag, src, cur),
                    Pattern::AnyAny => s.unlink(0, &mut c.p_any_any, cur),
                }
                s.release(cur);
                return true;
            }
            cur = n.links[0].next;
        }
        false
    }

    /// Nothing posted and nothing unexpected on `ctx`: a receive posted now is the only
    /// one there, so the next arrival it matches is its message (the request-free blocking
    /// receive of `Engine::begin_blocking_recv` relies on this).
    #[inline]
    pub fn is_quiet(&self, ctx: u32) -> bool {
        self.ctxs.get(ctx as usize).is_none_or(|c| {
            c.u_all.is_empty() && c.p_exact.is_idle() && c.p_any_src.is_idle() && c.p_any_tag.is_idle() && c.p_any_any.is_empty()
        })
    }

    /// Number of posted receives across all contexts.
    pub fn posted_len(&self) -> usize {
        self.posted.len
    }

    /// Number of unexpected messages across all contexts.
    pub fn unexpected_len(&self) -> usize {
        self.unexp.len
    }
}

/// Grows the dense context table on first use of a context id.
#[inline]
fn ctx_slot(ctxs: &mut Vec<Ctx>, ctx: u32) -> &mut Ctx {
    let i = ctx as usize;
    if i >= ctxs.len() {
        grow_ctxs(ctxs, i);
    }
    &mut ctxs[i]
}

#[cold]
fn grow_ctxs(ctxs: &mut Vec<Ctx>, i: usize) {
    ctxs.resize_with(i + 1, Ctx::default);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type M = Matcher<u32, &'static str>;

    fn env(ctx: u32, src: i32, tag: i32) -> Envelope {
        Envelope { ctx, src, tag }
    }

    #[test]
    fn exact_fifo_and_no_match() {
        let mut m = M::new();
        assert_eq!(m.match_posted(env(0, 1, 2)), None);
        m.push_posted(0, 1, 2, 10);
        m.push_posted(0, 1, 2, 11);
        m.push_posted(0, 1, 3, 12);
        assert_eq!(m.match_posted(env(0, 2, 2)), None);
        assert_eq!(m.match_posted(env(0, 1, 2)), Some(10));
        assert_eq!(m.match_posted(env(0, 1, 2)), Some(11));
        assert_eq!(m.match_posted(env(0, 1, 2)), None);
        assert_eq!(m.posted_len(), 1);
        assert_eq!(m.match_posted(env(0, 1, 3)), Some(12));
        assert_eq!(m.posted_len(), 0);
    }

    #[test]
    fn posted_wildcards_resolve_in_posting_order() {
        let mut m = M::new();
        m.push_posted(0, ANY_SOURCE, 5, 1);
        m.push_posted(0, 3, 5, 2);
        m.push_posted(0, 3, ANY_TAG, 3);
        m.push_posted(0, ANY_SOURCE, ANY_TAG, 4);
        m.push_posted(0, 3, 5, 5);
        // (3,5) matches all; earliest posted first.
        assert_eq!(m.match_posted(env(0, 3, 5)), Some(1));
        assert_eq!(m.match_posted(env(0, 3, 5)), Some(2));
        assert_eq!(m.match_posted(env(0, 3, 5)), Some(3));
        assert_eq!(m.match_posted(env(0, 3, 5)), Some(4));
        assert_eq!(m.match_posted(env(0, 3, 5)), Some(5));
        assert_eq!(m.match_posted(env(0, 3, 5)), None);

        // An exact receive posted before a wildcard wins, and vice versa.
        m.push_posted(0, 1, 1, 6);
        m.push_posted(0, ANY_SOURCE, ANY_TAG, 7);
        assert_eq!(m.match_posted(env(0, 2, 9)), Some(7));
        m.push_posted(0, ANY_SOURCE, 1, 8);
        assert_eq!(m.match_posted(env(0, 1, 1)), Some(6));
        assert_eq!(m.match_posted(env(0, 1, 1)), Some(8));
        // Wildcards only match what they cover.
        m.push_posted(0, 4, ANY_TAG, 9);
        m.push_posted(0, ANY_SOURCE, 7, 10);
        assert_eq!(m.match_posted(env(0, 5, 8)), None);
        assert_eq!(m.match_posted(env(0, 5, 7)), Some(10));
        assert_eq!(m.match_posted(env(0, 4, 7)), Some(9));
        assert_eq!(m.posted_len(), 0);
    }

    #[test]
    fn unexpected_wildcards_take_earliest_arrival() {
        let mut m = M::new();
        m.push_unexpected(env(0, 1, 1), "a");
        m.push_unexpected(env(0, 2, 1), "b");
        m.push_unexpected(env(0, 1, 2), "c");
        m.push_unexpected(env(0, 2, 2), "d");
        m.push_unexpected(env(0, 1, 1), "e");
        assert_eq!(m.take_unexpected(0, 3, ANY_TAG), None);
        assert_eq!(m.take_unexpected(0, 2, 2), Some((env(0, 2, 2), "d")));
        assert_eq!(
            m.take_unexpected(0, ANY_SOURCE, 2),
            Some((env(0, 1, 2), "c"))
        );
        assert_eq!(m.take_unexpected(0, 2, ANY_TAG), Some((env(0, 2, 1), "b")));
        assert_eq!(
            m.take_unexpected(0, ANY_SOURCE, ANY_TAG),
            Some((env(0, 1, 1), "a"))
        );
        assert_eq!(
            m.take_unexpected(0, ANY_SOURCE, ANY_TAG),
            Some((env(0, 1, 1), "e"))
        );
        assert_eq!(m.take_unexpected(0, ANY_SOURCE, ANY_TAG), None);
        assert_eq!(m.unexpected_len(), 0);
    }

    #[test]
    fn contexts_isolated() {
        let mut m = M::new();
        m.push_posted(1, 0, 0, 1);
        m.push_unexpected(env(2, 0, 0), "x");
        assert_eq!(m.match_posted(env(0, 0, 0)), None);
        assert_eq!(m.match_posted(env(2, 0, 0)), None);
        assert_eq!(m.take_unexpected(1, ANY_SOURCE, ANY_TAG), None);
        assert_eq!(m.peek_unexpected(7, ANY_SOURCE, ANY_TAG), None);
        assert!(!m.cancel_posted(0, 0, 0, 1));
        assert_eq!(m.match_posted(env(1, 0, 0)), Some(1));
        assert_eq!(
            m.take_unexpected(2, ANY_SOURCE, ANY_TAG),
            Some((env(2, 0, 0), "x"))
        );
    }

    #[test]
    fn cancel() {
        let mut m = M::new();
        m.push_posted(0, 1, 1, 1);
        m.push_posted(0, 1, 1, 2);
        m.push_posted(0, 1, 1, 3);
        m.push_posted(0, ANY_SOURCE, ANY_TAG, 4);
        assert!(m.cancel_posted(0, 1, 1, 2));
        assert!(!m.cancel_posted(0, 1, 1, 2));
        assert!(!m.cancel_posted(0, 1, 1, 4)); // wrong pattern
        assert!(m.cancel_posted(0, ANY_SOURCE, ANY_TAG, 4));
        assert_eq!(m.posted_len(), 2);
        assert_eq!(m.match_posted(env(0, 1, 1)), Some(1));
        assert!(m.cancel_posted(0, 1, 1, 3));
        assert_eq!(m.match_posted(env(0, 1, 1)), None);
        assert_eq!(m.posted_len(), 0);
    }

    #[test]
    fn probe_and_peek_mut() {
        let mut m: Matcher<u32, Vec<u8>> = Matcher::default();
        assert!(m.peek_unexpected(0, ANY_SOURCE, ANY_TAG).is_none());
        m.push_unexpected(env(0, 1, 4), vec![1]);
        m.push_unexpected(env(0, 2, 4), vec![2]);
        let (e, v) = m.peek_unexpected(0, ANY_SOURCE, 4).unwrap();
        assert_eq!((e, v.as_slice()), (env(0, 1, 4), &[1u8][..]));
        let (e, v) = m.peek_unexpected_mut(0, 2, ANY_TAG).unwrap();
        assert_eq!(e, env(0, 2, 4));
        v.push(3);
        assert_eq!(m.unexpected_len(), 2); // probes do not remove
        assert_eq!(m.take_unexpected(0, 2, 4), Some((env(0, 2, 4), vec![2, 3])));
        assert_eq!(m.take_unexpected(0, 1, 4), Some((env(0, 1, 4), vec![1])));
    }

    #[test]
    fn reverse_order_match_of_many_tags() {
        let mut m = M::new();
        for t in 0..10_000 {
            m.push_posted(0, 0, t, t as u32);
        }
        for t in (0..10_000).rev() {
            assert_eq!(m.match_posted(env(0, 0, t)), Some(t as u32));
        }
        assert_eq!(m.posted_len(), 0);
    }

    #[test]
    fn distinct_tags_over_time_do_not_leak() {
        let mut m: Matcher<u32, u32> = Matcher::new();
        for t in 0..200_000i32 {
            m.push_posted(0, 1, t, 0);
            m.push_posted(0, ANY_SOURCE, t, 1);
            m.push_unexpected(env(0, 1, t + 1), 2);
            assert_eq!(m.match_posted(env(0, 1, t)), Some(0));
            assert_eq!(m.match_posted(env(0, 2, t)), Some(1));
            assert_eq!(m.take_unexpected(0, 1, t + 1), Some((env(0, 1, t + 1), 2)));
        }
        let c = &m.ctxs[0];
        for cap in [c.p_exact.capacity(), c.u_exact.capacity()] {
            assert!(cap < 64, "exact map grew to {cap}");
        }
        for cap in [
            c.p_any_src.capacity(),
            c.u_by_tag.capacity(),
            c.u_by_src.capacity(),
        ] {
            assert!(cap < 64, "map grew to {cap}");
        }
        assert!(m.posted.nodes.len() <= 2 && m.unexp.nodes.len() <= 1);
    }

    // ---- property test against a linear-list reference model -------------------------

    #[derive(Default)]
    struct Model {
        posted: Vec<(u32, i32, i32, u32)>, // posting order: ctx, src, tag, id
        unexp: Vec<(Envelope, (u32, u32))>, // arrival order
    }

    fn covers(src: i32, tag: i32, e: &Envelope) -> bool {
        (src == ANY_SOURCE || src == e.src) && (tag == ANY_TAG || tag == e.tag)
    }

    impl Model {
        fn find_unexp(&self, ctx: u32, src: i32, tag: i32) -> Option<usize> {
            self.unexp
                .iter()
                .position(|(e, _)| e.ctx == ctx && covers(src, tag, e))
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Post(u32, i32, i32),
        Arrive(u32, i32, i32),
        Probe(u32, i32, i32),
        ProbeMut(u32, i32, i32),
        Mprobe(u32, i32, i32),
        Cancel(usize),
    }

    fn src_pat() -> impl Strategy<Value = i32> {
        prop_oneof![3 => 0..4i32, 1 => Just(ANY_SOURCE)]
    }
    fn tag_pat() -> impl Strategy<Value = i32> {
        prop_oneof![3 => 0..4i32, 1 => Just(ANY_TAG)]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..3u32, src_pat(), tag_pat()).prop_map(|(c, s, t)| Op::Post(c, s, t)),
            4 => (0..3u32, 0..4i32, 0..4i32).prop_map(|(c, s, t)| Op::Arrive(c, s, t)),
            1 => (0..3u32, src_pat(), tag_pat()).prop_map(|(c, s, t)| Op::Probe(c, s, t)),
            1 => (0..3u32, src_pat(), tag_pat()).prop_map(|(c, s, t)| Op::ProbeMut(c, s, t)),
            1 => (0..3u32, src_pat(), tag_pat()).prop_map(|(c, s, t)| Op::Mprobe(c, s, t)),
            1 => any::<usize>().prop_map(Op::Cancel),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
        #[test]
        fn matches_reference_model(ops in prop::collection::vec(op(), 1..400)) {
            let mut m: Matcher<u32, (u32, u32)> = Matcher::new();
            let mut model = Model::default();
            let mut recvs: Vec<(u32, i32, i32)> = Vec::new(); // every receive id ever posted
            let mut next_msg = 0u32;
            for op in ops {
                match op {
                    Op::Post(c, s, t) => {
                        let want = model.find_unexp(c, s, t).map(|i| model.unexp.remove(i));
                        let got = m.take_unexpected(c, s, t);
                        prop_assert_eq!(got, want);
                        if got.is_none() {
                            let id = recvs.len() as u32;
                            recvs.push((c, s, t));
                            model.posted.push((c, s, t, id));
                            m.push_posted(c, s, t, id);
                        }
                    }
                    Op::Arrive(c, s, t) => {
                        let e = env(c, s, t);
                        let want = model
                            .posted
                            .iter()
                            .position(|&(pc, ps, pt, _)| pc == c && covers(ps, pt, &e))
                            .map(|i| model.posted.remove(i).3);
                        let got = m.match_posted(e);
                        prop_assert_eq!(got, want);
                        if got.is_none() {
                            next_msg += 1;
                            model.unexp.push((e, (next_msg, 0)));
                            m.push_unexpected(e, (next_msg, 0));
                        }
                    }
                    Op::Probe(c, s, t) => {
                        let want = model.find_unexp(c, s, t).map(|i| (model.unexp[i].0, &model.unexp[i].1));
                        prop_assert_eq!(m.peek_unexpected(c, s, t), want);
                    }
                    Op::ProbeMut(c, s, t) => {
                        let want = model.find_unexp(c, s, t);
                        let got = m.peek_unexpected_mut(c, s, t);
                        prop_assert_eq!(got.is_some(), want.is_some());
                        if let (Some((ge, gm)), Some(i)) = (got, want) {
                            prop_assert_eq!(ge, model.unexp[i].0);
                            prop_assert_eq!(*gm, model.unexp[i].1);
                            gm.1 += 1;
                            model.unexp[i].1 .1 += 1;
                        }
                    }
                    Op::Mprobe(c, s, t) => {
                        let want = model.find_unexp(c, s, t).map(|i| model.unexp.remove(i));
                        prop_assert_eq!(m.take_unexpected(c, s, t), want);
                    }
                    Op::Cancel(k) => {
                        if recvs.is_empty() {
                            continue;
                        }
                        let id = (k % recvs.len()) as u32;
                        let (c, s, t) = recvs[id as usize];
                        let want = model.posted.iter().position(|p| p.3 == id).map(|i| model.posted.remove(i));
                        prop_assert_eq!(m.cancel_posted(c, s, t, id), want.is_some());
                    }
                }
                prop_assert_eq!(m.posted_len(), model.posted.len());
                prop_assert_eq!(m.unexpected_len(), model.unexp.len());
                for c in 0..4u32 {
                    let quiet = !model.posted.iter().any(|p| p.0 == c) && !model.unexp.iter().any(|u| u.0.ctx == c);
                    prop_assert_eq!(m.is_quiet(c), quiet);
                }
            }
        }
    }
}
