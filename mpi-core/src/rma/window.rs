//! The window object, how it reaches each target, and the table of windows.

use super::am::{Incoming, PendingReply};
use super::words::TargetWords;
use crate::request::ReqId;
use crate::transport::shm::segment::Segment;
use std::collections::VecDeque;
use std::sync::Arc;

/// How the window's memory came to be (`MPI_WIN_CREATE_FLAVOR`; MPICH's values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    Create = 1,
    Allocate = 2,
    Dynamic = 3,
    Shared = 4,
}

/// How this process reaches one target's window memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Mapped here (our own memory, or a shared-memory window of a rank on this node):
    /// window offset `o` is at address `base + o` (`base` 0 for dynamic windows, whose
    /// displacements are addresses).
    Mapped { base: u64 },
    /// In another process on this node, read and written through the kernel
    /// (`process_vm_readv`/`writev`) at address `base + o`.
    Cma { pid: i32, base: u64 },
    /// Active messages, applied by the target's progress engine.
    Am,
}

/// Lock held by this process (as origin) on one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held {
    None,
    Shared,
    Exclusive,
    /// `MPI_MODE_NOCHECK`: an epoch with no lock taken.
    NoCheck,
}

/// One target rank of a window, as this process sees it.
pub struct Target {
    pub world: usize,
    pub access: Access,
    /// Window size in bytes at the target (`usize::MAX` for dynamic windows: displacements
    /// are checked against the attached regions by the target).
    pub size: usize,
    pub disp_unit: usize,
    /// The target's lock words in the node segment (null when reached by active messages:
    /// the target takes its own words for us).
    pub words: *const TargetWords,
    /// Passive-target epoch this process holds on the target.
    pub held: Held,
    /// A lock on an active-message target whose request is not sent yet (exclusive?):
    /// `MPI_Win_lock` need not block (MPI 4.1 §12.5.3), so the request rides on the epoch's
    /// first operation — lock, operations and unlock cost one round trip instead of three,
    /// and an epoch without operations sends nothing (`sync::before_operation`).
    pub lock_unsent: Option<bool>,
    /// The lock request is sent and its grant (the reply to the operation carrying it) has
    /// not arrived yet.
    pub awaiting_grant: bool,
    /// Replies (acknowledgements or data) awaited from the target, in issue order.
    pub pending: VecDeque<PendingReply>,
}

/// A window as this process holds it.
pub struct Win {
    /// Index (in the runtime's communicator table) of the window's private communicator, a
    /// duplicate of the one it was created on: its traffic never matches the user's.
    pub comm: usize,
    /// Point-to-point context of `comm` (active messages, post/complete notices).
    pub ctx: u32,
    /// This process's rank in the window's group.
    pub rank: usize,
    /// World rank of each member of the window's group (`MPI_Win_get_group`).
    pub world_ranks: Arc<[usize]>,
    /// This process's window memory (null for a dynamic window or size 0).
    pub base: *mut u8,
    pub size: usize,
    pub disp_unit: usize,
    pub flavor: Flavor,
    /// Error handler handle of the C layer (opaque here).
    pub errhandler: i32,
    pub name: String,
    /// The window hints (`info::WIN_HINTS` in the C layer) given at creation or by
    /// `MPI_Win_set_info`.
    pub info: Vec<(String, String)>,
    pub targets: Vec<Target>,
    /// The node segment: every local member's lock words, then (allocated flavors) their
    /// window memory. Unmapped when the window is freed.
    pub segment: Option<Segment>,
    /// This process's own lock words (taken for active-message origins, too).
    pub my_words: *const TargetWords,
    /// When every member is on this node: the fence's barrier in the node segment, and the
    /// number of fences passed on it.
    pub node_barrier: Option<*const super::words::NodeBarrier>,
    pub barrier_round: u32,
    /// Some rank may reach this one by active messages: the progress engine serves them.
    pub serve: bool,
    /// Memory regions attached to a dynamic window: (address, length).
    pub attached: Vec<(u64, usize)>,
    /// A fence opened an access and exposure epoch (the last fence had no `NOSUCCEED`).
    pub fence_epoch: bool,
    /// An operation was issued in the current fence epoch (a lock may not start then).
    pub fence_used: bool,
    /// `MPI_Win_start`'s group (ranks in the window), while its access epoch is open.
    pub start_group: Option<Vec<usize>>,
    /// `MPI_Win_post`'s group, while its exposure epoch is open, and how many of its
    /// origins have completed.
    pub post_group: Option<Vec<usize>>,
    /// Receives of the post group's completion notices.
    pub post_recvs: Vec<ReqId>,
    /// `MPI_Win_lock_all` holds (shared) every target.
    pub lock_all: bool,
    /// Active-message requests (and replies) this process sent and the buffers they read.
    pub sends: Vec<(ReqId, Vec<u8>)>,
    /// Active-message requests received, applied in arrival order.
    pub incoming: VecDeque<Incoming>,
    /// Lock requests from active-message origins not granted yet: (origin rank, exclusive).
    pub lock_queue: VecDeque<(usize, bool)>,
    /// Requests held back, in arrival order, from origins whose lock request waits in
    /// `lock_queue` (an origin sends its lock with its first operation, not before).
    pub parked: VecDeque<(usize, Vec<u8>)>,
    /// Bytes the fast path copied since this process last synchronised the window (flush,
    /// fence, unlock, complete): once more than the cache holds, its copies stream
    /// (`fast::copy`).
    pub moved: usize,
}

// SAFETY: the raw pointers refer to window memory and the node segment, which live as long
// as the window; the window is only used under the runtime lock.
unsafe impl Send for Win {}

impl Win {
    /// Whether this process may access `target` now: inside a fence epoch, a PSCW access
    /// epoch naming it, or a passive-target epoch on it.
    pub fn in_epoch(&self, target: usize) -> bool {
        self.fence_epoch
            || self.lock_all
            || self.targets[target].held != Held::None
            || self.start_group.as_ref().is_some_and(|g| g.contains(&target))
    }

    /// The operations so far are complete: the next copies start a new volume.
    pub fn synced(&mut self) {
        self.moved = 0;
    }

    /// Any access epoch open (fence epochs aside).
    pub fn in_sync_epoch(&self) -> bool {
        self.lock_all || self.start_group.is_some() || self.targets.iter().any(|t| t.held != Held::None)
    }
}

/// Windows by index; freed slots are reused.
#[derive(Default)]
pub struct WinTable {
    slots: Vec<Option<Box<Win>>>,
    /// Live windows: the progress engine services them while any exists.
    pub live: usize,
}

impl WinTable {
    pub fn get(&self, idx: usize) -> Option<&Win> {
        self.slots.get(idx)?.as_deref()
    }

    pub fn get_mut(&mut self, idx: usize) -> Option<&mut Win> {
        self.slots.get_mut(idx)?.as_deref_mut()
    }

    pub fn insert(&mut self, w: Win) -> usize {
        self.live += 1;
        if let Some(i) = self.slots.iter().position(Option::is_none) {
            self.slots[i] = Some(Box::new(w));
            return i;
        }
        self.slots.push(Some(Box::new(w)));
        self.slots.len() - 1
    }

    pub fn remove(&mut self, idx: usize) -> Option<Win> {
        let w = self.slots.get_mut(idx)?.take().map(|b| *b)?;
        self.live -= 1;
        Some(w)
    }

    /// Number of slots (live or free), for iterating with `take`.
    pub fn slots_len(&self) -> usize {
        self.slots.len()
    }

    /// Takes window `idx` out of its slot for a moment (so it can be used alongside the rest
    /// of the runtime); `put_back` returns it.
    pub fn take(&mut self, idx: usize) -> Option<Box<Win>> {
        self.slots.get_mut(idx)?.take()
    }

    pub fn put_back(&mut self, idx: usize, w: Box<Win>) {
        self.slots[idx] = Some(w);
    }

    /// True when no window exists.
    pub fn is_empty(&self) -> bool {
        self.slots.iter().all(Option::is_none)
    }
}
