//! The registration cache: memory registrations kept across rendezvous transfers.
//!
//! Why: `ibv_reg_mr` pins pages and programs the device's translation tables, tens of
//! microseconds per call plus per-page work, while MPI programs send from and receive
//! into the same buffers again and again. So registrations stay after use and are found
//! again by address.
//!
//! Rules:
//! * Ranges are page-aligned (the device translates whole pages anyway), and a request is
//!   served by any live registration covering it; a miss registers the union of the
//!   request with the live registrations it overlaps (growing buffers end up in one
//!   registration) and drops the overlapped ones nobody uses.
//! * The bytes kept are bounded: beyond the limit the least recently used registrations
//!   not in use are dropped (one in use is never dropped, so the bound may be exceeded
//!   while offers or transfers need more).
//! * `invalidate` (the engine's munmap/mremap/madvise hooks: the virtual range will map
//!   other pages) removes every overlapping registration from the index at once, so it is
//!   never handed out again; one still in use (an offer) is deregistered when released.
//!
//! The device side is behind [`Registrar`], so the bookkeeping is tested without a device.

use std::collections::{BTreeMap, BTreeSet};

/// A registration as the device knows it.
pub struct Registered<M> {
    pub mr: M,
    pub lkey: u32,
    pub rkey: u32,
}

/// Registers and deregisters memory (verbs: `ibv_reg_mr` / `ibv_dereg_mr`).
pub trait Registrar {
    type Mr;
    /// Registers `[addr, addr + len)`; `writable` asks for local and remote write access
    /// as well as remote read.
    fn register(&mut self, addr: usize, len: usize, writable: bool)
        -> Option<Registered<Self::Mr>>;
    fn deregister(&mut self, mr: Self::Mr);
}

struct Entry<M> {
    start: usize,
    end: usize,
    mr: M,
    lkey: u32,
    rkey: u32,
    refs: u32,
    writable: bool,
    /// Invalidated while in use: not in the index, deregistered at the last release.
    dead: bool,
    /// LRU stamp, valid while idle.
    stamp: u64,
}

/// A registration handed out: keys for the device, `id` for `release`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegRef {
    pub id: usize,
    pub lkey: u32,
    pub rkey: u32,
}

pub struct RegCache<R: Registrar> {
    reg: R,
    slots: Vec<Option<Entry<R::Mr>>>,
    free: Vec<usize>,
    /// Live (not invalidated) entries by (start, id).
    index: BTreeSet<(usize, usize)>,
    /// Live entries with no user, by LRU stamp.
    idle: BTreeMap<u64, usize>,
    /// Bytes registered (live and dead-in-use).
    bytes: usize,
    limit: usize,
    /// Longest live entry ever: bounds the backward scans of the index.
    max_len: usize,
    clock: u64,
    page: usize,
}

impl<R: Registrar> RegCache<R> {
    /// `limit` bytes kept registered at most (beyond what is in use); `page` a power of 2.
    pub fn new(reg: R, limit: usize, page: usize) -> RegCache<R> {
        debug_assert!(page.is_power_of_two());
        RegCache {
            reg,
            slots: Vec::new(),
            free: Vec::new(),
            index: BTreeSet::new(),
            idle: BTreeMap::new(),
            bytes: 0,
            limit,
            max_len: 0,
            clock: 0,
            page,
        }
    }

    pub fn registrar(&mut self) -> &mut R {
        &mut self.reg
    }

    /// Registered bytes now.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Registrations held now (live and dead-in-use).
    pub fn entries(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    fn align(&self, addr: usize, len: usize) -> Option<(usize, usize)> {
        let end = addr.checked_add(len)?.checked_add(self.page - 1)? & !(self.page - 1);
        Some((addr & !(self.page - 1), end))
    }

    fn entry(&self, id: usize) -> &Entry<R::Mr> {
        self.slots[id].as_ref().expect("live cache id")
    }

    fn entry_mut(&mut self, id: usize) -> &mut Entry<R::Mr> {
        self.slots[id].as_mut().expect("live cache id")
    }

    /// Ids of live entries overlapping `[s, e)`.
    fn overlapping(&self, s: usize, e: usize) -> Vec<usize> {
        let mut out = Vec::new();
        for &(start, id) in self.index.range(..(e, 0)).rev() {
            if start.saturating_add(self.max_len) <= s {
                break;
            }
            if self.entry(id).end > s {
                out.push(id);
            }
        }
        out
    }

    /// A registration covering `[addr, addr + len)` (writable if `need_write`), counted in
    /// use until `release`. None when the memory cannot be registered (or `len` is 0).
    pub fn acquire(&mut self, addr: usize, len: usize, need_write: bool) -> Option<RegRef> {
        if len == 0 {
            return None;
        }
        let (s, e) = self.align(addr, len)?;
        // A live entry covering the range: start <= s and end >= e.
        let mut hit = None;
        for &(start, id) in self.index.range(..=(s, usize::MAX)).rev() {
            if start.saturating_add(self.max_len) < e {
                break;
            }
            let en = self.entry(id);
            if en.end >= e && (en.writable || !need_write) {
                hit = Some(id);
                break;
            }
        }
        if let Some(id) = hit {
            let en = self.entry_mut(id);
            en.refs += 1;
            let (first, stamp) = (en.refs == 1, en.stamp);
            let r = RegRef {
                id,
                lkey: en.lkey,
                rkey: en.rkey,
            };
            if first {
                self.idle.remove(&stamp);
            }
            return Some(r);
        }
        // Miss: register the union with the overlapped entries when that works.
        let over = self.overlapping(s, e);
        let (mut us, mut ue) = (s, e);
        for &id in &over {
            let en = self.entry(id);
            us = us.min(en.start);
            ue = ue.max(en.end);
        }
        let mut got = self
            .reg
            .register(us, ue - us, true)
            .map(|r| (r, us, ue, true));
        if got.is_none() && (us, ue) != (s, e) {
            got = self.reg.register(s, e - s, true).map(|r| (r, s, e, true));
        }
        if got.is_none() && !need_write {
            // Read-only memory (constants in .rodata) registers for remote read only.
            got = self.reg.register(s, e - s, false).map(|r| (r, s, e, false));
        }
        let (r, start, end, writable) = got?;
        // Overlapped entries nobody uses and the new one covers are redundant now.
        for id in over {
            let en = self.entry(id);
            if en.refs == 0 && en.start >= start && en.end <= end && (writable || !en.writable) {
                let stamp = en.stamp;
                self.idle.remove(&stamp);
                self.remove(id);
            }
        }
        let id = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        let rr = RegRef {
            id,
            lkey: r.lkey,
            rkey: r.rkey,
        };
        self.slots[id] = Some(Entry {
            start,
            end,
            mr: r.mr,
            lkey: r.lkey,
            rkey: r.rkey,
            refs: 1,
            writable,
            dead: false,
            stamp: 0,
        });
        self.index.insert((start, id));
        self.bytes += end - start;
        self.max_len = self.max_len.max(end - start);
        self.evict();
        Some(rr)
    }

    /// Ends one use of `id` (from `acquire`).
    pub fn release(&mut self, id: usize) {
        let Some(Some(en)) = self.slots.get_mut(id) else {
            return;
        };
        if en.refs == 0 {
            return;
        }
        en.refs -= 1;
        if en.refs > 0 {
            return;
        }
        if en.dead {
            self.remove(id);
            return;
        }
        self.clock += 1;
        en.stamp = self.clock;
        self.idle.insert(self.clock, id);
        self.evict();
    }

    /// Drops every registration overlapping `[addr, addr + len)`: none is handed out again.
    pub fn invalidate(&mut self, addr: usize, len: usize) {
        if self.index.is_empty() || len == 0 {
            return;
        }
        let Some((s, e)) = self.align(addr, len) else {
            return;
        };
        for id in self.overlapping(s, e) {
            let en = self.entry_mut(id);
            if en.refs > 0 {
                en.dead = true;
                let start = en.start;
                self.index.remove(&(start, id));
            } else {
                let stamp = en.stamp;
                self.idle.remove(&stamp);
                self.remove(id);
            }
        }
    }

    /// Deregisters and forgets entry `id` (not idle any more).
    fn remove(&mut self, id: usize) {
        if let Some(en) = self.slots[id].take() {
            self.index.remove(&(en.start, id));
            self.bytes -= en.end - en.start;
            self.reg.deregister(en.mr);
            self.free.push(id);
        }
    }

    fn evict(&mut self) {
        while self.bytes > self.limit {
            let Some((_, id)) = self.idle.pop_first() else {
                break;
            };
            self.remove(id);
        }
    }

    /// Deregisters everything (at close; offers still outstanding die with it).
    pub fn clear(&mut self) {
        for id in 0..self.slots.len() {
            self.remove(id);
        }
        self.idle.clear();
        self.index.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const PAGE: usize = 4096;

    /// A fake device over a fake address space: each page has a generation bumped when it
    /// is "unmapped and mapped again"; a registration remembers the generations it pinned,
    /// so using a stale one is detectable.
    #[derive(Default)]
    struct Fake {
        next: u32,
        live: HashMap<u32, (usize, usize, bool, Vec<u64>)>,
        gen: HashMap<usize, u64>,
        read_only: Vec<(usize, usize)>,
        unmapped: Vec<(usize, usize)>,
        registers: usize,
    }

    impl Fake {
        fn gen_of(&self, page: usize) -> u64 {
            *self.gen.get(&page).unwrap_or(&0)
        }
        fn remap(&mut self, addr: usize, len: usize) {
            let mut p = addr & !(PAGE - 1);
            while p < addr + len {
                *self.gen.entry(p).or_insert(0) += 1;
                p += PAGE;
            }
        }
        /// The registration `key` maps [addr, addr+len) with current pages.
        fn valid(&self, key: u32, addr: usize, len: usize, write: bool) -> bool {
            let Some((s, l, w, gens)) = self.live.get(&key) else {
                return false;
            };
            if addr < *s || addr + len > s + l || (write && !w) {
                return false;
            }
            let mut p = addr & !(PAGE - 1);
            while p < addr + len {
                if gens[(p - s) / PAGE] != self.gen_of(p) {
                    return false;
                }
                p += PAGE;
            }
            true
        }
    }

    impl Registrar for Fake {
        type Mr = u32;
        fn register(&mut self, addr: usize, len: usize, writable: bool) -> Option<Registered<u32>> {
            let hits =
                |v: &Vec<(usize, usize)>| v.iter().any(|&(a, l)| a < addr + len && addr < a + l);
            if hits(&self.unmapped) || (writable && hits(&self.read_only)) {
                return None;
            }
            self.registers += 1;
            self.next += 1;
            let gens = (0..len / PAGE)
                .map(|i| self.gen_of(addr + i * PAGE))
                .collect();
            self.live.insert(self.next, (addr, len, writable, gens));
            Some(Registered {
                mr: self.next,
                lkey: self.next,
                rkey: self.next + 1000,
            })
        }
        fn deregister(&mut self, mr: u32) {
            assert!(self.live.remove(&mr).is_some(), "double deregistration");
        }
    }

    fn cache(limit: usize) -> RegCache<Fake> {
        RegCache::new(Fake::default(), limit, PAGE)
    }

    #[test]
    fn hits_reuse_and_alignment() {
        let mut c = cache(1 << 20);
        let a = c.acquire(0x10010, 100, true).unwrap();
        assert_eq!(c.bytes(), PAGE);
        c.release(a.id);
        // Another buffer in the same page: same registration.
        let b = c.acquire(0x10800, 0x100, true).unwrap();
        assert_eq!(a, b);
        c.release(b.id);
        assert_eq!(c.registrar().registers, 1);
        // Crossing into the next page: a new one (the union of both pages).
        let d = c.acquire(0x10f00, 0x200, false).unwrap();
        assert_ne!(d.lkey, a.lkey);
        assert_eq!(c.registrar().live[&d.lkey].0, 0x10000);
        assert_eq!(c.registrar().live[&d.lkey].1, 2 * PAGE);
        // The old one was idle and covered: dropped.
        assert_eq!(c.entries(), 1);
        assert_eq!(c.bytes(), 2 * PAGE);
        c.release(d.id);
        assert!(c.acquire(0x5000, 0, true).is_none());
    }

    #[test]
    fn lru_bound_spares_entries_in_use() {
        let mut c = cache(3 * PAGE);
        let ids: Vec<_> = (0..3)
            .map(|i| c.acquire(0x100000 + i * 0x10000, 10, true).unwrap())
            .collect();
        for r in &ids {
            c.release(r.id);
        }
        // Touch the first again: the second is now the least recently used.
        let again = c.acquire(0x100000, 10, true).unwrap();
        c.release(again.id);
        let big = c.acquire(0x200000, 2 * PAGE, true).unwrap();
        assert!(c.bytes() <= 3 * PAGE + 2 * PAGE);
        // The in-use one stays whatever the limit; idle ones went, oldest first.
        assert!(c.registrar().live.contains_key(&big.lkey));
        assert!(
            !c.registrar().live.contains_key(&ids[1].lkey),
            "LRU victim first"
        );
        // Over the limit with everything in use: kept, trimmed at release.
        let huge = c.acquire(0x400000, 10 * PAGE, true).unwrap();
        assert!(c.bytes() >= 12 * PAGE);
        c.release(huge.id);
        c.release(big.id);
        assert!(c.bytes() <= 3 * PAGE);
    }

    #[test]
    fn invalidate_idle_and_in_use() {
        let mut c = cache(1 << 20);
        let idle = c.acquire(0x10000, PAGE, true).unwrap();
        c.release(idle.id);
        let busy = c.acquire(0x20000, 2 * PAGE, true).unwrap();
        c.invalidate(0x10fff, 1);
        assert!(
            !c.registrar().live.contains_key(&idle.lkey),
            "idle entry deregistered at once"
        );
        c.invalidate(0x21000, 10);
        assert!(
            c.registrar().live.contains_key(&busy.lkey),
            "in use: kept until release"
        );
        // Never handed out again.
        let fresh = c.acquire(0x20000, 2 * PAGE, true).unwrap();
        assert_ne!(fresh.lkey, busy.lkey);
        c.release(busy.id);
        assert!(
            !c.registrar().live.contains_key(&busy.lkey),
            "dead entry deregistered at its last release"
        );
        c.release(fresh.id);
        // Releasing twice is harmless.
        c.release(busy.id);
        c.clear();
        assert!(c.registrar().live.is_empty());
        assert_eq!(c.bytes(), 0);
    }

    #[test]
    fn read_only_memory() {
        let mut c = cache(1 << 20);
        c.registrar().read_only.push((0x30000, PAGE));
        assert!(
            c.acquire(0x30000, 8, true).is_none(),
            "a write target cannot be read-only memory"
        );
        let r = c.acquire(0x30000, 8, false).unwrap();
        assert!(!c.registrar().live[&r.lkey].2);
        c.release(r.id);
        // A read-only entry does not serve a write request.
        assert!(c.acquire(0x30000, 8, true).is_none());
        c.registrar().unmapped.push((0x40000, PAGE));
        assert!(c.acquire(0x40000, 8, false).is_none());
    }

    #[test]
    fn union_falls_back_to_the_request() {
        let mut c = cache(1 << 20);
        c.registrar().read_only.push((0x50000, PAGE));
        let ro = c.acquire(0x50000, 8, false).unwrap();
        // Overlaps the read-only entry; the writable union fails, the request alone works.
        let w = c.acquire(0x50ff0, 0x20, false).unwrap();
        let _ = (ro, w);
        assert_eq!(c.entries(), 2);
    }

    fn xorshift(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    /// Random acquire/release/invalidate+remap against the fake address space: every
    /// registration handed out must map the range's current pages.
    #[test]
    fn never_hands_out_stale_registrations() {
        for seed in 1..=50u64 {
            let mut rng = seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1;
            let mut c = cache(16 * PAGE);
            let mut held: Vec<(usize, usize, usize, u32)> = Vec::new();
            for _ in 0..3000 {
                let r = xorshift(&mut rng);
                let addr = 0x100000 + (r as usize % (64 * PAGE));
                let len = 1 + (r >> 20) as usize % (6 * PAGE);
                match r % 5 {
                    0 | 1 => {
                        if let Some(g) = c.acquire(addr, len, true) {
                            assert!(
                                c.registrar().valid(g.lkey, addr, len, true),
                                "seed {seed}: stale or short registration"
                            );
                            held.push((g.id, addr, len, g.lkey));
                        }
                    }
                    2 | 3 => {
                        if !held.is_empty() {
                            let (id, ..) = held.swap_remove((r >> 8) as usize % held.len());
                            c.release(id);
                        }
                    }
                    _ => {
                        c.invalidate(addr, len);
                        c.registrar().remap(addr, len);
                    }
                }
                let in_use: usize = held.len();
                assert!(
                    c.entries() <= in_use + 16 + 1,
                    "seed {seed}: cache grew past its bound"
                );
            }
            for (id, ..) in held.drain(..) {
                c.release(id);
            }
            assert!(c.bytes() <= 16 * PAGE);
            c.clear();
            assert!(c.registrar().live.is_empty());
        }
    }
}
