//! Requests: the engine's record of every pending operation, in a slab indexed by id.
//! Ids travel in wire headers (sender/receiver request ids), so a request's slot is only
//! reused after the operation is complete and the user released it.

use crate::error::ErrorClass;

pub type ReqId = u32;

/// Completion information, ABI-agnostic (the C layer maps it to `MPI_Status`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    pub source: i32,
    pub tag: i32,
    /// Bytes received (sends: 0).
    pub bytes: usize,
    pub cancelled: bool,
    pub error: Option<ErrorClass>,
    /// A send's status: the C layer sets only its cancelled bit in the user's status and
    /// leaves source, tag and count alone, as MPICH does (MPI leaves them undefined for
    /// sends). Programs wait for a receive and a send with `MPI_Waitany` into one status
    /// and read the receive's from it whichever completed last (MPICH's `irsendf`).
    pub send: bool,
}

impl Status {
    /// The status of an operation not yet done (a send's marked as one).
    pub fn fresh(op: &Op) -> Status {
        Status { send: matches!(op, Op::Send { .. }), ..Status::default() }
    }
}

/// The send modes of MPI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    Standard,
    Synchronous,
    Ready,
    Buffered,
    /// Standard mode, from a collective toward its root (gather, reduce): many ranks send
    /// to one, so when oversubscribed such sends are pushed up to a larger limit
    /// (`OXMPI_OSUB_PUSH_ROOT_MAX`), each sender completing without the root running.
    TowardRoot,
    /// Standard mode, from a collective's root to one of many receivers (bcast, scatter);
    /// see `header::FLAG_ROOTED`.
    FromRoot,
}

/// A user buffer: raw because it belongs to the C caller, who may not touch it until the
/// request completes.
#[derive(Clone, Copy, Debug)]
pub struct RawBuf {
    pub ptr: *mut u8,
    pub len: usize,
}

impl RawBuf {
    pub const EMPTY: RawBuf = RawBuf { ptr: std::ptr::null_mut(), len: 0 };
}

/// A non-contiguous user buffer: packed into / unpacked from `Request::staging` at start
/// and completion, so the protocols only ever see contiguous bytes.
#[derive(Clone, Debug)]
pub struct Layout {
    pub dt: std::sync::Arc<crate::datatype::Datatype>,
    pub base: *mut u8,
    pub count: usize,
}

impl Layout {
    /// Bytes of the packed form.
    pub fn bytes(&self) -> usize {
        self.dt.size() * self.count
    }
}

/// Arguments to (re)start an operation; kept by persistent requests.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    Send { buf: RawBuf, dest_world: usize, ctx: u32, src_rank: i32, tag: i32, mode: SendMode },
    Recv { buf: RawBuf, ctx: u32, src: i32, tag: i32 },
    /// A collective operation run as a schedule by the progress engine.
    Coll,
    /// A generalized request (`MPI_Grequest_start`): the user's operation, complete when
    /// the user says so; the C layer holds its callbacks.
    Generalized,
    /// A partitioned send or receive (`MPI_Psend_init`, `MPI_Precv_init`): the engine's
    /// `partitioned` module holds its arguments and rounds.
    Partitioned,
}

/// What a request is doing right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Persistent request not started (or completed and waited for).
    Inactive,
    /// Send: queued or eager message waiting for a synchronous acknowledgement.
    SendPending,
    /// Rendezvous send: RTS out, waiting for CTS.
    SendAwaitCts,
    /// Rendezvous send: streaming data to `rreq`.
    SendStreaming,
    /// Pushed send (`FLAG_PUSH`): streaming its data behind the offer, with no `Cts`.
    SendPushing,
    /// Receive posted in the matching engine.
    RecvPosted,
    /// Receive matched a rendezvous message; data chunks arriving.
    RecvData,
    /// A message removed from the queues by `MPI_Mprobe`, not yet received.
    Message,
    /// A collective schedule in progress.
    CollActive,
    /// A generalized request the user has not completed yet.
    GeneralizedActive,
    Complete,
}

pub struct Request {
    pub op: Op,
    pub state: State,
    pub status: Status,
    pub persistent: bool,
    /// The user freed the request while it was pending: drop it on completion.
    pub freed: bool,
    /// Rendezvous send: its buffer was offered to the transport for a zero-copy read, to
    /// be withdrawn when the receiver's clear-to-send comes.
    pub offered: bool,
    /// Rendezvous: total message length.
    pub total: usize,
    /// Rendezvous: bytes sent or received so far.
    pub done: usize,
    /// Rendezvous send: the receiver's request id (from the CTS).
    pub rreq: ReqId,
    /// Owner data of the C layer (e.g. the communicator handle for error reporting).
    pub owner: i64,
    /// The parts only buffered sends, non-contiguous buffers and matched probes use.
    pub extra: Option<Box<Extra>>,
}

/// The rarely used parts of a request, boxed: every receive builds, moves and drops its
/// request, and these made it 168 bytes instead of 104.
#[derive(Default)]
pub struct Extra {
    /// Buffered send: its buffer and region there, released on completion.
    pub bsend_region: Option<(crate::bsend::Owner, crate::bsend::Region)>,
    /// Non-contiguous user buffer of this operation, if any.
    pub layout: Option<Layout>,
    /// Packed bytes for `layout` (send: packed at start; receive: unpacked at completion).
    pub staging: Vec<u8>,
    /// A message taken by `MPI_Mprobe` (state `Message`).
    pub message: Option<(crate::matching::Envelope, crate::protocol::Unexpected)>,
}

impl Request {
    pub fn new(op: Op) -> Request {
        Request {
            op,
            state: State::Inactive,
            status: Status::fresh(&op),
            persistent: false,
            offered: false,
            freed: false,
            total: 0,
            done: 0,
            rreq: 0,
            owner: 0,
            extra: None,
        }
    }

    /// The non-contiguous buffer layout, if any.
    #[inline]
    pub fn layout(&self) -> Option<&Layout> {
        self.extra.as_ref().and_then(|e| e.layout.as_ref())
    }

    /// The rarely used parts, created on first use.
    pub fn extra(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Default::default)
    }

    pub fn is_complete(&self) -> bool {
        self.state == State::Complete
    }
}

/// Id of the one shared request that stands for "a send that completed when it started"
/// (an eager `MPI_Isend` handed to the transport at once): such sends create no request at
/// all; their handles all name this permanent, always-complete slot.
pub const COMPLETED_SEND: ReqId = 0;

/// Slab of requests with a free list. Slot `COMPLETED_SEND` is permanent: removing it is a
/// no-op and it always reads as a complete send with an empty status (a send's, so the C
/// layer leaves the user status's source, tag and count alone, as for any other send).
pub struct RequestTable {
    slots: Vec<Option<Request>>,
    free: Vec<ReqId>,
}

impl Default for RequestTable {
    fn default() -> Self {
        let mut done = Request::new(Op::Coll);
        done.state = State::Complete;
        done.status.send = true;
        RequestTable { slots: vec![Some(done)], free: Vec::new() }
    }
}

impl RequestTable {
    #[inline]
    pub fn insert(&mut self, r: Request) -> ReqId {
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = Some(r);
                id
            }
            None => {
                self.slots.push(Some(r));
                (self.slots.len() - 1) as ReqId
            }
        }
    }

    #[inline]
    pub fn get(&self, id: ReqId) -> Option<&Request> {
        self.slots.get(id as usize).and_then(|s| s.as_ref())
    }

    #[inline]
    pub fn get_mut(&mut self, id: ReqId) -> Option<&mut Request> {
        self.slots.get_mut(id as usize).and_then(|s| s.as_mut())
    }

    /// Takes request `id` out of the table (None for a free slot and for `COMPLETED_SEND`,
    /// which stays).
    #[inline]
    pub fn remove(&mut self, id: ReqId) -> Option<Request> {
        if id == COMPLETED_SEND {
            return None;
        }
        let r = self.slots.get_mut(id as usize)?.take();
        if r.is_some() {
            self.free.push(id);
        }
        r
    }

    /// Drops request `id` where it lies (no move out of the table, unlike `remove`); a
    /// no-op for a free slot and for `COMPLETED_SEND`.
    #[inline]
    pub fn discard(&mut self, id: ReqId) {
        if id == COMPLETED_SEND {
            return;
        }
        if let Some(s) = self.slots.get_mut(id as usize).filter(|s| s.is_some()) {
            *s = None;
            self.free.push(id);
        }
    }

    /// Whether a request of `owner` (the C layer's communicator handle) is still in
    /// progress: `MPI_Comm_disconnect` waits until none is.
    pub fn any_pending(&self, owner: i64) -> bool {
        self.slots.iter().flatten().any(|r| r.owner == owner && !matches!(r.state, State::Complete | State::Inactive))
    }

    /// The user's wait/test found request `id` complete: returns its (status, owner,
    /// persistent) and releases it — a persistent request becomes inactive, any other is
    /// dropped (`COMPLETED_SEND` stays). One lookup: this runs once per completed request
    /// of every wait. None for a free slot or an inactive request.
    #[inline]
    pub fn finish(&mut self, id: ReqId) -> Option<(Status, i64, bool)> {
        let slot = self.slots.get_mut(id as usize)?;
        let r = slot.as_mut().filter(|r| r.state != State::Inactive)?;
        let out = (r.status, r.owner, r.persistent);
        if r.persistent {
            r.state = State::Inactive;
        } else if id != COMPLETED_SEND {
            *slot = None;
            self.free.push(id);
        }
        Some(out)
    }

    /// Number of live requests.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
