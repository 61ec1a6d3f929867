//! Per-rank synchronisation words in a window's node segment, shared by every local
//! member: the passive-target lock (readers/writer) and the accumulate mutex that makes
//! accumulates atomic per element whoever applies them (a local origin through the
//! mapping or CMA, or the target itself for an active-message origin).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Bit of `TargetWords::lock` held by an exclusive lock; the bits below count shared ones.
const EXCLUSIVE: u64 = 1 << 63;

/// The words of one rank, a cache line of their own.
#[repr(C, align(64))]
pub struct TargetWords {
    pub lock: AtomicU64,
    pub acc: AtomicU32,
    /// Lock requests that reached this rank by active messages and wait in its queue
    /// (`am::grant_locks`). While any wait, processes that take the lock directly may not
    /// take it exclusively: a local rank re-locking in a loop would otherwise always find
    /// the word taken when the target polls its queue (MPICH's linked_list_bench_lock_excl
    /// spun forever so over TCP).
    pub queued: AtomicU32,
}

/// The fence's barrier among a window's members when they all share this node (the first
/// line of the node segment): arrivals count up, the last one resets the count and moves
/// the generation on, which the others wait for. Flags in one line instead of messages.
#[repr(C, align(64))]
pub struct NodeBarrier {
    pub arrived: AtomicU32,
    pub generation: AtomicU32,
}

impl NodeBarrier {
    /// Arrives at barrier number `round` (0, 1, ... on every member) of `n` members; true
    /// when this was the last arrival (the barrier is complete).
    pub fn arrive(&self, n: u32, round: u32) -> bool {
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == n {
            // Nobody arrives at the next round before the generation moves: reset first.
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.store(round.wrapping_add(1), Ordering::Release);
            return true;
        }
        false
    }

    /// Whether barrier number `round` is complete.
    pub fn passed(&self, round: u32) -> bool {
        self.generation.load(Ordering::Acquire) == round.wrapping_add(1)
    }
}

/// Bytes reserved per rank in the node segment (and for the `NodeBarrier` before them).
pub const WORDS_LEN: usize = std::mem::size_of::<TargetWords>();

impl TargetWords {
    /// Takes the lock for a process that reaches the words directly: as `try_grant`, but an
    /// exclusive lock waits behind the requests queued by active messages.
    pub fn try_lock(&self, exclusive: bool) -> bool {
        if exclusive && self.queued.load(Ordering::Acquire) != 0 {
            return false;
        }
        self.try_grant(exclusive)
    }

    /// Takes the lock if it is free for this kind (shared locks share).
    pub fn try_grant(&self, exclusive: bool) -> bool {
        if exclusive {
            return self.lock.compare_exchange(0, EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed).is_ok();
        }
        let v = self.lock.load(Ordering::Relaxed);
        v & EXCLUSIVE == 0 && self.lock.compare_exchange(v, v + 1, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }

    pub fn unlock(&self, exclusive: bool) {
        if exclusive {
            self.lock.store(0, Ordering::Release);
        } else {
            self.lock.fetch_sub(1, Ordering::Release);
        }
    }

    /// Waits for and takes the accumulate mutex (out of line: rarely reached).
    #[cold]
    #[inline(never)]
    fn acc_contended(&self) {
        while self.acc.compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
            std::hint::spin_loop();
            if self.acc.load(Ordering::Relaxed) != 0 {
                std::thread::yield_now();
            }
        }
    }

    /// Runs `f` holding the accumulate mutex (held only for the copy and the reduction,
    /// never across an MPI call, so spinning is bounded).
    #[inline(always)]
    pub fn with_acc<R>(&self, f: impl FnOnce() -> R) -> R {
        self.lock_acc();
        let r = f();
        self.unlock_acc();
        r
    }

    /// Takes the accumulate mutex; `unlock_acc` must follow, with no MPI call between. For
    /// the shortest fast path, where a closure passed to `with_acc` was left out of line.
    #[inline(always)]
    pub fn lock_acc(&self) {
        if self.acc.compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed).is_err() {
            self.acc_contended();
        }
    }

    #[inline(always)]
    pub fn unlock_acc(&self) {
        self.acc.store(0, Ordering::Release);
    }
}

/// A process that died holding the accumulate mutex leaves it held; the job ends anyway
/// (the launcher tears it down), so no robust-mutex machinery is needed.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_barrier_rounds() {
        let b = NodeBarrier { arrived: AtomicU32::new(0), generation: AtomicU32::new(0) };
        assert!(!b.arrive(2, 0));
        assert!(!b.passed(0));
        assert!(b.arrive(2, 0));
        assert!(b.passed(0));
        assert!(!b.arrive(2, 1));
        assert!(!b.passed(1));
        assert!(b.arrive(2, 1));
        assert!(b.passed(1));
    }

    #[test]
    fn lock_kinds_exclude_each_other() {
        let w = TargetWords { lock: AtomicU64::new(0), acc: AtomicU32::new(0), queued: AtomicU32::new(0) };
        assert!(w.try_lock(false));
        assert!(w.try_lock(false));
        assert!(!w.try_lock(true));
        w.unlock(false);
        w.unlock(false);
        assert!(w.try_lock(true));
        assert!(!w.try_lock(false));
        assert!(!w.try_lock(true));
        w.unlock(true);
        assert!(w.try_lock(false));
        assert_eq!(w.with_acc(|| 7), 7);
        assert_eq!(w.acc.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn queued_requests_hold_back_direct_exclusive_lockers() {
        let w = TargetWords { lock: AtomicU64::new(0), acc: AtomicU32::new(0), queued: AtomicU32::new(1) };
        assert!(!w.try_lock(true), "a direct exclusive locker must wait behind the queue");
        assert!(w.try_grant(true), "the queue's grant takes the free lock");
        w.queued.store(0, Ordering::Relaxed);
        assert!(!w.try_lock(true));
        w.unlock(true);
        assert!(w.try_lock(true));
    }
}
