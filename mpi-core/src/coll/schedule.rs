//! The schedule type and its executor.

use crate::datatype::Datatype;
use crate::error::ErrorClass;
use crate::op::{Elem, PredefOp};
use crate::request::{ReqId, SendMode};
use std::sync::Arc;

/// Reduction kernel supplied by the C layer: `inout = input op inout` over `bytes` bytes
/// (a whole number of elements). Non-commutative ops rely on the schedule's operand order.
pub type ReduceFn = Arc<dyn Fn(*const u8, *mut u8, usize) + Send + Sync>;

/// The reduction of a schedule. Predefined (op, element) pairs need no allocation, which
/// matters for small reductions where every allocation is a visible share of the call.
/// Either kind works on packed data: a run of whole items of the collective's datatype.
#[derive(Clone)]
pub enum Reducer {
    Predef { op: PredefOp, elem: Elem },
    Custom(ReduceFn),
}

impl Reducer {
    /// `inout = input op inout` over `bytes` bytes.
    fn apply(&self, input: *const u8, inout: *mut u8, bytes: usize) {
        match self {
            Reducer::Predef { op, elem } => {
                // SAFETY: the schedule passes ranges of `bytes` bytes inside its buffers, which
                // hold packed data (staged or contiguous); the C layer validated (op, elem)
                // before building the schedule.
                let _ = unsafe { crate::op::reduce_packed(*op, *elem, input, inout, bytes / elem.packed_size()) };
            }
            Reducer::Custom(f) => f(input, inout, bytes),
        }
    }
}

/// Tag bit of the traffic between the two groups of an intercommunicator collective.
/// Schedule tags stay below it (`COLL_TAG_MASK`), so a message between the groups never
/// matches local-group traffic of the same collective: both travel on one context and
/// their senders' rank labels overlap (each is a rank in its own group).
pub const REMOTE_TAG: i32 = 0x2000_0000;
/// Schedule tags (a communicator's collective sequence number) are taken modulo this + 1.
pub const COLL_TAG_MASK: u32 = 0x1fff_ffff;

/// The communicator a schedule runs on, as the engine needs it.
///
/// Peers `0..size()` are the ranks of `world_ranks`, the group the algorithms run over.
/// An intercommunicator collective also reaches the `remote` group: its rank j is peer
/// `size() + j` (`remote_peer`), so the algorithms of `coll::algorithms` run unchanged
/// over the local group inside the same schedule.
#[derive(Clone, Debug)]
pub struct CollComm {
    /// Collective context id (never matches user point-to-point traffic).
    pub ctx: u32,
    pub rank: usize,
    pub world_ranks: Arc<[usize]>,
    /// Intercommunicators: the remote group (world ranks).
    pub remote: Option<Arc<[usize]>>,
}

impl CollComm {
    /// A view of `world_ranks` only (intracommunicators, or one group).
    pub fn new(ctx: u32, rank: usize, world_ranks: Arc<[usize]>) -> CollComm {
        CollComm { ctx, rank, world_ranks, remote: None }
    }

    /// Size of the group the algorithms run over (the local group of an intercommunicator).
    pub fn size(&self) -> usize {
        self.world_ranks.len()
    }

    /// Size of the remote group (0 on an intracommunicator).
    pub fn remote_size(&self) -> usize {
        self.remote.as_ref().map_or(0, |r| r.len())
    }

    /// The peer index of rank `j` of the remote group.
    pub fn remote_peer(&self, j: usize) -> usize {
        self.size() + j
    }

    /// Where peer `p` is: (world rank, its rank in its own group, the tag its traffic
    /// with this process uses, given the schedule's `tag`).
    #[inline]
    pub(crate) fn route(&self, p: usize, tag: i32) -> (usize, usize, i32) {
        let n = self.world_ranks.len();
        match &self.remote {
            Some(r) if p >= n => (r[p - n], p - n, tag | REMOTE_TAG),
            _ => (self.world_ranks[p], p, tag),
        }
    }
}

/// Where a piece of data lives: caller memory or a schedule-owned temporary buffer.
#[derive(Clone, Copy, Debug)]
pub enum Buf {
    User(*mut u8),
    Temp(usize),
}

/// A byte range of a `Buf`.
#[derive(Clone, Copy, Debug)]
pub struct Slice {
    pub buf: Buf,
    pub off: usize,
    pub len: usize,
}

impl Slice {
    pub fn user(ptr: *const u8, len: usize) -> Slice {
        Slice { buf: Buf::User(ptr as *mut u8), off: 0, len }
    }

    /// A sub-range `[off, off+len)` of this slice.
    pub fn sub(&self, off: usize, len: usize) -> Slice {
        debug_assert!(off + len <= self.len, "sub-slice out of range");
        Slice { buf: self.buf, off: self.off + off, len }
    }
}

/// One step of a round.
#[derive(Clone, Copy, Debug)]
pub enum Action {
    /// `mode`: `Standard`, or `TowardRoot`/`FromRoot` in rooted collectives.
    Send { to: usize, data: Slice, mode: SendMode },
    Recv { from: usize, data: Slice },
    /// `inout = input op inout` with the schedule's reduction kernel.
    Reduce { input: Slice, inout: Slice },
    Copy { from: Slice, to: Slice },
    /// Unpack packed bytes into a non-contiguous caller buffer (entry `target` of the
    /// schedule's unpack list), typically in the last round.
    Unpack { from: Slice, target: usize },
}

/// Where an `Unpack` action writes: `count` items of `ty` at caller address `dst`.
#[derive(Clone, Debug)]
pub struct UnpackTarget {
    pub ty: Arc<Datatype>,
    pub dst: *mut u8,
    pub count: usize,
}

/// Rounds of actions. In each round all sends and receives start together; when they have
/// all completed, the round's local actions (Reduce, Copy) run in order; then the next round
/// begins. A round without transfers runs its local actions at once.
///
/// Schedules are recycled by the engine (`Engine::new_schedule`): every vector keeps its
/// capacity, so a collective that was run before allocates nothing.
pub struct Schedule {
    pub comm: CollComm,
    pub tag: i32,
    /// Use flat trees (`algorithms::flat`: oversubscribed, few ranks); set by the engine.
    pub flat: bool,
    /// Every action, round after round; round r is `actions[starts[r]..starts[r+1]]`.
    actions: Vec<Action>,
    starts: Vec<usize>,
    /// Byte offset of each temporary buffer in `arena` (16-byte aligned).
    temp_offsets: Vec<usize>,
    arena_len: usize,
    /// All temporary buffers. Kept across reuses; only grown (zero-filled) when too small.
    arena: Vec<u128>,
    reduce: Option<Reducer>,
    unpacks: Vec<UnpackTarget>,
    /// Buffers made outside the schedule that its slices point into (staged user data).
    kept: Vec<Box<[u8]>>,
    round: usize,
    /// The current round's transfers that did not complete when started.
    pending: Vec<Pending>,
    /// The current round's transfers were started (its local actions run when they end).
    pub(crate) in_flight: bool,
    started: bool,
    /// A transfer failed (reported when the schedule ends).
    pub(crate) failed: Option<ErrorClass>,
}

// SAFETY: raw pointers refer to caller buffers that stay valid until the collective
// completes (MPI's rule) and to the schedule's own heap buffers; used under the engine lock.
unsafe impl Send for Schedule {}

impl Schedule {
    pub fn new(comm: CollComm, tag: i32) -> Schedule {
        Schedule {
            comm,
            tag,
            flat: false,
            actions: Vec::new(),
            starts: Vec::new(),
            temp_offsets: Vec::new(),
            arena_len: 0,
            arena: Vec::new(),
            reduce: None,
            unpacks: Vec::new(),
            kept: Vec::new(),
            round: 0,
            pending: Vec::new(),
            in_flight: false,
            started: false,
            failed: None,
        }
    }

    /// Empties a finished schedule for reuse, keeping the vectors' capacity. An arena above
    /// `keep_arena` bytes is freed (one large collective should not pin its memory).
    pub(crate) fn recycle(&mut self, keep_arena: usize) {
        self.actions.clear();
        self.starts.clear();
        self.temp_offsets.clear();
        self.arena_len = 0;
        if self.arena.len() * 16 > keep_arena {
            self.arena = Vec::new();
        }
        self.reduce = None;
        self.unpacks.clear();
        self.kept.clear();
        self.round = 0;
        self.pending.clear();
        self.in_flight = false;
        self.started = false;
        self.failed = None;
    }

    /// Sets the reduction kernel used by `Action::Reduce`.
    pub fn set_reduce(&mut self, f: ReduceFn) {
        self.reduce = Some(Reducer::Custom(f));
    }

    /// Sets a predefined reduction (no allocation).
    pub fn set_reducer(&mut self, r: Reducer) {
        self.reduce = Some(r);
    }

    /// A temporary buffer of `len` bytes owned by the schedule. Its contents are undefined
    /// (a recycled arena is not cleared): every algorithm writes a temporary before reading
    /// it. Temporaries cannot be added after the schedule started.
    pub fn temp(&mut self, len: usize) -> Slice {
        assert!(!self.started, "Schedule::temp after the schedule started");
        self.temp_offsets.push(self.arena_len);
        self.arena_len += len.div_ceil(16) * 16;
        Slice { buf: Buf::Temp(self.temp_offsets.len() - 1), off: 0, len }
    }

    /// Starts a new round; following `push`es go into it.
    pub fn next_round(&mut self) {
        self.starts.push(self.actions.len());
    }

    /// Adds an action to the current round (starting the first round if needed).
    pub fn push(&mut self, a: Action) {
        if self.starts.is_empty() {
            self.starts.push(0);
        }
        self.actions.push(a);
    }

    pub fn send(&mut self, to: usize, data: Slice) {
        self.push(Action::Send { to, data, mode: SendMode::Standard });
    }

    /// A send toward the root of a gather or reduce (`SendMode::TowardRoot`).
    pub fn send_to_root(&mut self, to: usize, data: Slice) {
        self.push(Action::Send { to, data, mode: SendMode::TowardRoot });
    }

    /// A send from the root of a bcast or scatter, or down its tree (`SendMode::FromRoot`).
    pub fn send_from_root(&mut self, to: usize, data: Slice) {
        self.push(Action::Send { to, data, mode: SendMode::FromRoot });
    }

    pub fn recv(&mut self, from: usize, data: Slice) {
        self.push(Action::Recv { from, data });
    }

    pub fn reduce(&mut self, input: Slice, inout: Slice) {
        self.push(Action::Reduce { input, inout });
    }

    pub fn copy(&mut self, from: Slice, to: Slice) {
        if from.len > 0 {
            self.push(Action::Copy { from, to });
        }
    }

    /// Keeps `b` alive as long as the schedule (its heap bytes never move).
    pub fn keep(&mut self, b: Box<[u8]>) {
        self.kept.push(b);
    }

    /// Adds, to the current round, the unpacking of `from` into `target`.
    pub fn unpack(&mut self, from: Slice, target: UnpackTarget) {
        self.unpacks.push(target);
        let target = self.unpacks.len() - 1;
        self.push(Action::Unpack { from, target });
    }

    /// Number of rounds.
    pub fn round_count(&self) -> usize {
        self.starts.len()
    }

    /// The actions of round `r`.
    pub fn round_actions(&self, r: usize) -> &[Action] {
        let end = self.starts.get(r + 1).copied().unwrap_or(self.actions.len());
        &self.actions[self.starts[r]..end]
    }

    /// Address of the first byte of `s` (temporaries are allocated on first use).
    pub(crate) fn ptr(&mut self, s: Slice) -> *mut u8 {
        let base = match s.buf {
            Buf::User(p) => p,
            Buf::Temp(i) => {
                if self.arena.len() * 16 < self.arena_len {
                    self.arena.resize(self.arena_len / 16, 0);
                }
                (self.arena.as_mut_ptr() as *mut u8).wrapping_add(self.temp_offsets[i])
            }
        };
        base.wrapping_add(s.off)
    }

    /// Index range in `action(..)` of the current round's actions (empty when done); marks
    /// the schedule started.
    pub(crate) fn round_range(&mut self) -> std::ops::Range<usize> {
        self.started = true;
        if self.round >= self.round_count() {
            return 0..0;
        }
        let end = self.starts.get(self.round + 1).copied().unwrap_or(self.actions.len());
        self.starts[self.round]..end
    }

    pub(crate) fn action(&self, k: usize) -> Action {
        self.actions[k]
    }

    /// Runs the current round's local actions and moves to the next round.
    pub(crate) fn finish_round(&mut self) {
        let end = self.starts.get(self.round + 1).copied().unwrap_or(self.actions.len());
        for k in self.starts[self.round]..end {
            match self.actions[k] {
                Action::Reduce { input, inout } => {
                    let (i, o) = (self.ptr(input), self.ptr(inout));
                    let f = self.reduce.as_ref().expect("Reduce action without a reduction kernel");
                    f.apply(i, o, inout.len.min(input.len));
                }
                Action::Copy { from, to } => {
                    let n = from.len.min(to.len);
                    let (f, t) = (self.ptr(from), self.ptr(to));
                    // SAFETY: both ranges lie within caller or temporary buffers of at least
                    // `n` bytes; `move_bytes` tolerates overlap (in-place collectives).
                    unsafe { crate::copy::move_bytes(f as *const u8, t, n) };
                }
                Action::Unpack { from, target } => {
                    let src = self.ptr(from);
                    let u = &self.unpacks[target];
                    // SAFETY: `from` lies in a schedule buffer of `from.len` bytes; the target
                    // is the caller's buffer for `count` items of `ty`, valid until completion.
                    unsafe { u.ty.unpack(std::slice::from_raw_parts(src, from.len), u.dst, u.count) };
                }
                Action::Send { .. } | Action::Recv { .. } => {}
            }
        }
        self.round += 1;
    }

    pub(crate) fn done(&self) -> bool {
        self.round >= self.round_count()
    }

    pub(crate) fn pending_mut(&mut self) -> &mut Vec<Pending> {
        &mut self.pending
    }
}

/// A transfer of the current round still in progress.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Pending {
    /// A send (or other operation) with a request.
    Req(ReqId),
    /// A receive in the collective mailbox (`Mailbox` slot).
    Recv(u32),
}

/// The engine's collective state: running nonblocking schedules with the request each
/// completes, finished schedules kept for reuse, and the matching of collective traffic.
#[derive(Default)]
pub struct Colls {
    pub(crate) active: Vec<(ReqId, Box<Schedule>)>,
    /// Boxed: a schedule is handed out and taken back as a `Box` (its address must not
    /// change while receives point into its arena).
    #[allow(clippy::vec_box)]
    pub(crate) spare: Vec<Box<Schedule>>,
    pub(crate) mail: super::mailbox::Mailbox,
}

impl Colls {
    pub fn is_empty(&self) -> bool {
        self.active.is_empty()
    }
}
