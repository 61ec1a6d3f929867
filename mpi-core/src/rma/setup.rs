//! Window construction and destruction. The C layer runs the collective steps (duplicate
//! the communicator, gather every member's `Card`, the barriers); these functions do the
//! local parts between them:
//!
//! 1. `card`: what this process tells the others about its window memory;
//! 2. `create_segment` (the lowest member on each node): the node segment with every
//!    local member's lock words and, for `MPI_Win_allocate(_shared)`, their memory;
//! 3. `attach_segment` (the other local members), after a barrier;
//! 4. `build` (everyone, after a second barrier, which also lets the creator unlink the
//!    name: no `/dev/shm` entry outlives the constructor).

use super::access::cma_works;
use super::words::WORDS_LEN;
use super::window::{Access, Flavor, Held, Target, Win};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::protocol::Route;
use crate::runtime::Runtime;
use crate::transport::set::Via;
use crate::transport::shm::segment::Segment;
use std::collections::VecDeque;

/// Bytes of one encoded card.
pub const CARD_LEN: usize = 48;

/// A byte every process publishes for its peers' CMA probe.
static PROBE: u8 = 1;

/// One member's window, as published to the others.
#[derive(Clone, Copy, Debug)]
pub struct Card {
    pub pid: i32,
    pub base: u64,
    pub size: usize,
    pub disp_unit: usize,
    pub probe: u64,
    pub node: usize,
}

impl Card {
    pub fn encode(&self) -> [u8; CARD_LEN] {
        let mut b = [0u8; CARD_LEN];
        for (i, v) in [self.pid as u64, self.base, self.size as u64, self.disp_unit as u64, self.probe, self.node as u64].iter().enumerate() {
            b[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        b
    }

    pub fn decode(b: &[u8]) -> Card {
        let f = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
        Card { pid: f(0) as i32, base: f(1), size: f(2) as usize, disp_unit: f(3) as usize, probe: f(4), node: f(5) as usize }
    }
}

/// This process's card for a window of `size` bytes at `base` (ignored by allocating flavors).
pub fn card(rt: &Runtime, base: *mut u8, size: usize, disp_unit: usize) -> Card {
    Card {
        pid: std::process::id() as i32,
        base: base as u64,
        size,
        disp_unit,
        probe: &PROBE as *const u8 as u64,
        node: rt.bootstrap.node_of_ranks()[rt.bootstrap.rank()],
    }
}

/// Members of the window on this node, in window rank order.
fn locals(rt: &Runtime, cards: &[Card]) -> Vec<usize> {
    let me = rt.bootstrap.node_of_ranks()[rt.bootstrap.rank()];
    (0..cards.len()).filter(|&r| cards[r].node == me).collect()
}

/// Whether the memory of flavor `flavor` lives in the node segment.
fn in_segment(flavor: Flavor) -> bool {
    matches!(flavor, Flavor::Allocate | Flavor::Shared)
}

/// Offsets of each local member's memory in the node segment, and the segment length.
/// Shared windows are contiguous by default (rank r's memory follows rank r-1's, as
/// `MPI_Win_allocate_shared` promises without `alloc_shared_noncontig`); otherwise each
/// part starts on its own page.
fn layout(flavor: Flavor, cards: &[Card], locals: &[usize], noncontig: bool) -> (Vec<usize>, usize) {
    let page = 4096;
    let words = ((locals.len() + 1) * WORDS_LEN).next_multiple_of(page);
    let mut off = words;
    let mut offs = Vec::with_capacity(locals.len());
    for &r in locals {
        if !in_segment(flavor) {
            offs.push(0);
            continue;
        }
        if flavor == Flavor::Allocate || noncontig {
            off = off.next_multiple_of(page);
        }
        offs.push(off);
        off += cards[r].size;
    }
    (offs, off.max(words))
}

fn segment_name(rt: &Runtime, ctx: u32, leader_world: usize) -> String {
    format!("{}-w{leader_world}-c{ctx}", crate::transport::wireup::shm_name(rt.bootstrap.job_id(), 0))
}

/// Step 2: the lowest local member creates the node segment (others: None).
pub fn create_segment(rt: &Runtime, ctx: u32, world_ranks: &[usize], my_rank: usize, flavor: Flavor, cards: &[Card], noncontig: bool) -> MpiResult<Option<Segment>> {
    let l = locals(rt, cards);
    if l[0] != my_rank {
        return Ok(None);
    }
    let (_, len) = layout(flavor, cards, &l, noncontig);
    Segment::create(&segment_name(rt, ctx, world_ranks[l[0]]), len)
        .map(Some)
        .map_err(|e| MpiError::new(ErrorClass::NoMem, format!("cannot create the window's shared-memory segment of {len} bytes: {e}")))
}

/// Step 3: the other local members attach to it.
pub fn attach_segment(rt: &Runtime, ctx: u32, world_ranks: &[usize], flavor: Flavor, cards: &[Card], noncontig: bool) -> MpiResult<Segment> {
    let l = locals(rt, cards);
    let (_, len) = layout(flavor, cards, &l, noncontig);
    Segment::attach(&segment_name(rt, ctx, world_ranks[l[0]]), len)
        .map_err(|e| MpiError::new(ErrorClass::Other, format!("cannot attach to the window's shared-memory segment: {e}")))
}

/// What the C layer passes to `build`.
pub struct Spec {
    pub comm: usize,
    pub ctx: u32,
    pub rank: usize,
    pub world_ranks: std::sync::Arc<[usize]>,
    pub flavor: Flavor,
    pub noncontig: bool,
    pub errhandler: i32,
    pub info: Vec<(String, String)>,
}

/// Step 4: the window, with this process's base address (the allocated memory for the
/// allocating flavors).
pub fn build(rt: &mut Runtime, spec: Spec, cards: &[Card], mut segment: Segment) -> (usize, *mut u8) {
    segment.unlink();
    let l = locals(rt, cards);
    let (offs, _) = layout(spec.flavor, cards, &l, spec.noncontig);
    let seg = segment.base();
    let local_index = |r: usize| l.iter().position(|&x| x == r);
    let me = spec.rank;
    let my_local = local_index(me).expect("this process is a local member");
    // SAFETY (address arithmetic only): offsets lie inside the segment (see `layout`).
    let part = |r: usize| seg.wrapping_add(offs[local_index(r).unwrap()]);
    // The window's `NodeBarrier` first, then each local member's lock words.
    let words = |r: usize| seg.wrapping_add((local_index(r).unwrap() + 1) * WORDS_LEN) as *const super::words::TargetWords;
    let my_base = if in_segment(spec.flavor) {
        if cards[me].size == 0 {
            std::ptr::null_mut()
        } else {
            part(me)
        }
    } else {
        cards[me].base as *mut u8
    };
    let dynamic = spec.flavor == Flavor::Dynamic;
    let mut targets = Vec::with_capacity(cards.len());
    for (r, c) in cards.iter().enumerate() {
        let world = spec.world_ranks[r];
        let local = local_index(r).is_some();
        let shm_route = match rt.engine.routes[world] {
            Route::Local => true,
            Route::Peer(link) => link.via == Via::Shm,
            Route::Unreachable => false,
        };
        let access = if r == me {
            Access::Mapped { base: if dynamic { 0 } else { my_base as u64 } }
        } else if local && (spec.flavor == Flavor::Shared || (spec.flavor == Flavor::Allocate && shm_route)) {
            Access::Mapped { base: part(r) as u64 }
        } else if local && shm_route && !in_segment(spec.flavor) && cma_works(c.pid, c.probe) {
            Access::Cma { pid: c.pid, base: if dynamic { 0 } else { c.base } }
        } else {
            Access::Am
        };
        targets.push(Target {
            world,
            access,
            size: if dynamic { usize::MAX } else { c.size },
            disp_unit: c.disp_unit,
            words: if local { words(r) } else { std::ptr::null() },
            held: Held::None,
            lock_unsent: None,
            awaiting_grant: false,
            pending: VecDeque::new(),
        });
    }
    let serve = targets.iter().enumerate().any(|(r, t)| r != me && !matches!(t.access, Access::Mapped { .. }));
    let w = Win {
        comm: spec.comm,
        ctx: spec.ctx,
        rank: me,
        world_ranks: spec.world_ranks,
        base: my_base,
        size: if dynamic { 0 } else { cards[me].size },
        disp_unit: cards[me].disp_unit,
        flavor: spec.flavor,
        errhandler: spec.errhandler,
        name: String::new(),
        info: spec.info,
        targets,
        my_words: seg.wrapping_add((my_local + 1) * WORDS_LEN) as *const _,
        node_barrier: (l.len() == cards.len()).then_some(seg as *const super::words::NodeBarrier),
        barrier_round: 0,
        segment: Some(segment),
        serve,
        attached: Vec::new(),
        fence_epoch: false,
        fence_used: false,
        moved: 0,
        start_group: None,
        post_group: None,
        post_recvs: Vec::new(),
        lock_all: false,
        sends: Vec::new(),
        incoming: VecDeque::new(),
        lock_queue: VecDeque::new(),
        parked: VecDeque::new(),
    };
    (rt.wins.insert(w), my_base)
}

/// Checks, before `MPI_Win_free`'s barrier, that no epoch is open, and completes this
/// process's operations.
pub fn free_begin(idx: usize) -> MpiResult<()> {
    crate::runtime::with(|rt| {
        let w = rt.wins.get(idx).ok_or_else(|| MpiError::new(ErrorClass::Win, "invalid window"))?;
        if w.in_sync_epoch() || w.post_group.is_some() {
            return Err(MpiError::new(ErrorClass::RmaSync, "MPI_Win_free while a lock, PSCW access or exposure epoch is open on the window"));
        }
        // A fence epoch ends at the next fence: its operations are not complete yet (as
        // MPICH; an epoch that an empty fence opened is fine to free).
        if w.fence_epoch && w.fence_used {
            return Err(MpiError::new(ErrorClass::RmaSync, "MPI_Win_free with RMA operations of a fence epoch that no MPI_Win_fence has completed (call MPI_Win_fence first)"));
        }
        Ok(())
    })?;
    super::sync::wait_replies(idx, None);
    Ok(())
}

/// After `MPI_Win_free`'s barrier (every member's operations are complete): waits for this
/// process's own replies to be sent, then drops the window. Returns its communicator.
pub fn free_end(idx: usize) -> Option<usize> {
    let done = |rt: &mut Runtime| {
        let Some(mut w) = rt.wins.take(idx) else { return true };
        super::am::reap(rt, &mut w);
        let empty = w.sends.is_empty() && w.incoming.is_empty();
        rt.wins.put_back(idx, w);
        empty
    };
    crate::runtime::wait_until(done);
    crate::runtime::with(|rt| rt.wins.remove(idx).map(|w| w.comm))
}

/// `MPI_Win_shared_query`: (size, disp_unit, address) of `rank`'s memory when it is mapped
/// here; `None` as rank: the lowest rank with memory.
pub fn shared_query(w: &Win, rank: Option<usize>) -> (usize, usize, *mut u8) {
    let pick = rank.or_else(|| (0..w.targets.len()).find(|&r| w.targets[r].size > 0 && w.targets[r].size != usize::MAX));
    let Some(r) = pick else { return (0, w.disp_unit, std::ptr::null_mut()) };
    let t = &w.targets[r];
    match t.access {
        // An empty segment has no address: NULL, as MPICH gives (its rma/win_shared_* tests).
        Access::Mapped { .. } if t.size == 0 => (0, t.disp_unit, std::ptr::null_mut()),
        Access::Mapped { base } if w.flavor != Flavor::Dynamic => (t.size, t.disp_unit, base as *mut u8),
        _ => (0, t.disp_unit, std::ptr::null_mut()),
    }
}

/// `MPI_Win_attach`.
pub fn attach(w: &mut Win, base: u64, size: usize) -> MpiResult<()> {
    if w.flavor != Flavor::Dynamic {
        return Err(MpiError::new(ErrorClass::RmaFlavor, "MPI_Win_attach on a window not created by MPI_Win_create_dynamic"));
    }
    let end = base + size as u64;
    if w.attached.iter().any(|&(a, n)| base < a + n as u64 && a < end) {
        return Err(MpiError::new(ErrorClass::RmaAttach, "MPI_Win_attach of memory overlapping a region attached already"));
    }
    w.attached.push((base, size));
    Ok(())
}

/// `MPI_Win_detach`.
pub fn detach(w: &mut Win, base: u64) -> MpiResult<()> {
    if w.flavor != Flavor::Dynamic {
        return Err(MpiError::new(ErrorClass::RmaFlavor, "MPI_Win_detach on a window not created by MPI_Win_create_dynamic"));
    }
    match w.attached.iter().position(|&(a, _)| a == base) {
        Some(i) => {
            w.attached.remove(i);
            Ok(())
        }
        None => Err(MpiError::new(ErrorClass::RmaAttach, format!("MPI_Win_detach of {base:#x}, which is not the start of an attached region"))),
    }
}
