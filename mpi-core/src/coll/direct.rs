//! Small blocking collectives without a schedule. For a barrier or a few-byte allreduce the
//! work is one message exchange per round, and building, running and recycling a schedule
//! (action list, staging views, reduction setup) costs more than the exchange itself. A
//! `Direct` holds the whole state of one such collective inline (its temporary included)
//! and `Engine::advance_direct` runs it round by round: receive posted in the collective
//! mailbox, eager send with no request, local reduction.
//!
//! Covered: barrier (dissemination), allreduce and allgather on a power-of-two rank count
//! (recursive doubling; rank order kept, so any predefined op), bcast and reduce (binomial
//! trees). Everything else, and anything above `COLL_DIRECT_MAX` bytes, takes the schedule
//! path.
//!
//! Oversubscribed (more local ranks than CPUs, few ranks: `OSUB_FLAT_PROCS`), barrier,
//! bcast and reduce use flat trees instead (`BarrierFlat`, `BcastFlat`, `ReduceFlat`), and
//! scatter runs directly too (`ScatterFlat`): only
//! the root talks to everyone, so a rank never waits for another non-root rank to be
//! scheduled and forward the data; eager sends complete at once, so the root of a bcast
//! and the leaves of a reduce finish without waiting; and the barrier releases rank 0
//! first, which then usually sends the next rooted collective's data before the others
//! even run again (measured with 4 ranks on 2 cores: see docs/performance.md).

use super::schedule::CollComm;
use crate::error::ErrorClass;
use crate::op::{Elem, PredefOp};
use crate::request::ReqId;
use std::sync::Arc;

/// Largest temporary a `Direct` carries inline (the cap on `COLL_DIRECT_MAX`).
pub const DIRECT_TMP: usize = 2048;

/// Sends of one round that may be waiting for room (a binomial root sends to log2 p
/// children in one round; beyond this many queued sends the round waits for one first).
pub(crate) const MAX_SENDS: usize = 16;

/// Most ranks a flat collective may have (its root sends to all others in one round).
pub const FLAT_MAX_PROCS: usize = MAX_SENDS + 1;

/// Which collective a `Direct` runs.
#[derive(Clone, Copy, Debug)]
pub enum DirectOp {
    Barrier,
    /// Recursive doubling over `buf` (the caller copied its input there).
    Allreduce { op: PredefOp, elem: Elem },
    Bcast { root: usize },
    /// Binomial tree toward `root` (commutative ops only): `buf` is this rank's
    /// accumulator, holding its input at the start (the result, at the root).
    Reduce { op: PredefOp, elem: Elem, root: usize },
    /// Recursive doubling on a power-of-two rank count: `buf` holds the p blocks of
    /// `blk` bytes, this rank's already in place.
    Allgather { blk: usize },
    /// Flat barrier: everyone signals rank 0, which answers everyone once it heard from all.
    BarrierFlat,
    /// Barrier over shared-memory flags (`flag_barrier`): same shape as `BarrierFlat`,
    /// without messages. `round`: the root's next rank to wait for.
    BarrierShm,
    /// Flat bcast: the root sends to every rank itself.
    BcastFlat { root: usize },
    /// Flat scatter: the root sends block i (`blk` bytes of `buf`) to rank i itself; the
    /// others receive `blk` bytes into `buf`. The root's own block is the caller's to copy.
    ScatterFlat { root: usize, blk: usize },
    /// Flat reduce (commutative ops): every rank sends `buf` to the root, which combines
    /// them one by one into its accumulator `buf`.
    ReduceFlat { op: PredefOp, elem: Elem, root: usize },
}

/// One small blocking collective in progress (see the module doc). `tmp` (allreduce: at
/// least `len` bytes) belongs to the caller and must stay valid until it finished: a posted
/// receive may point into it.
pub struct Direct {
    pub ctx: u32,
    pub tag: i32,
    pub rank: usize,
    pub world: Arc<[usize]>,
    pub op: DirectOp,
    /// The caller's buffer: the vector (allreduce) or message (bcast).
    pub buf: *mut u8,
    pub len: usize,
    pub(crate) round: usize,
    /// Receive of the current round (a mailbox slot), if still pending.
    pub(crate) recv: Option<u32>,
    /// Sends that did not go out at once.
    pub(crate) sends: [ReqId; MAX_SENDS],
    pub(crate) nsends: usize,
    /// The current round's transfers were started.
    pub(crate) in_flight: bool,
    /// The current round receives a child's data (reduce).
    pub(crate) received: bool,
    /// Caller-provided temporary of `len` bytes for the partner's vector (allreduce).
    pub(crate) tmp: *mut u8,
    /// A transfer failed (reported when the operation ends).
    pub(crate) failed: Option<ErrorClass>,
}

impl Direct {
    pub fn new(comm: CollComm, tag: i32, op: DirectOp, buf: *mut u8, len: usize, tmp: *mut u8) -> Direct {
        Direct { ctx: comm.ctx, tag, rank: comm.rank, world: comm.world_ranks, op, buf, len, round: 0, recv: None, sends: [0; MAX_SENDS], nsends: 0, in_flight: false, received: false, tmp, failed: None }
    }

    pub fn size(&self) -> usize {
        self.world.len()
    }
}

/// Whether a reduce of `len` bytes can run directly (the caller's temporary holds the
/// accumulator in its upper half).
pub fn reduce_fits(len: usize, max: usize) -> bool {
    len <= max.min(DIRECT_TMP / 2)
}

/// Whether allreduce of `len` bytes on `n` ranks can run directly.
pub fn allreduce_fits(n: usize, len: usize, max: usize) -> bool {
    n.is_power_of_two() && len <= max.min(DIRECT_TMP)
}

impl Direct {
    /// Number of rounds this rank takes part in.
    pub(crate) fn rounds(&self) -> usize {
        let n = self.size();
        match self.op {
            DirectOp::Barrier | DirectOp::Allreduce { .. } | DirectOp::Allgather { .. } => (usize::BITS - (n - 1).leading_zeros()) as usize,
            DirectOp::Reduce { root, .. } => {
                let vr = (self.rank + n - root) % n;
                if vr == 0 {
                    (usize::BITS - (n - 1).leading_zeros()) as usize
                } else {
                    vr.trailing_zeros() as usize + 1
                }
            }
            _ if n == 1 => 0,
            DirectOp::BarrierShm => 1,
            DirectOp::BarrierFlat => {
                if self.rank == 0 {
                    n
                } else {
                    1
                }
            }
            DirectOp::BcastFlat { .. } | DirectOp::ScatterFlat { .. } => 1,
            DirectOp::ReduceFlat { root, .. } => {
                if self.rank == root {
                    n - 1
                } else {
                    1
                }
            }
            DirectOp::Bcast { root } => {
                if n == 1 {
                    0
                } else if self.rank == root {
                    1
                } else {
                    2
                }
            }
        }
    }

    pub(crate) fn tmp_ptr(&mut self) -> *mut u8 {
        self.tmp
    }
}
