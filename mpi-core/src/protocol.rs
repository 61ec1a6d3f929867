//! The protocol engine: eager and rendezvous transfers, synchronous/buffered modes, matching
//! of arrivals, and the per-peer outgoing queues, all above the `Transport` trait.
//!
//! Eager (≤ the transport's limit): header and payload in one transport message; the send
//! completes when it is copied out (synchronous sends wait for a `SyncAck` from the match).
//! Rendezvous: `Rts` → receiver matches → `Cts` → sender streams `Data` chunks in a
//! pipeline through the transport. An unmatched large message is never buffered whole.

use crate::coll::mailbox::is_coll_ctx;
use crate::bsend::{Buffers, Owner, Region};
use crate::coll::Colls;
use crate::error::{fatal, ErrorClass, MpiError, MpiResult};
use crate::header::{Header, Kind, FLAG_COOP, FLAG_PUSH, FLAG_ROOTED, FLAG_SYNC, FLAG_TO_ROOT, HEADER_LEN};
use crate::matching::{accepts, Envelope, Matcher};
use crate::request::{Layout, Op, RawBuf, ReqId, Request, RequestTable, SendMode, State, Status};
use crate::transport::{Incoming, Link, SleepToken, Transports, Via};
use std::collections::VecDeque;

/// `dest_world` of a send to `MPI_PROC_NULL`: completes at once.
pub const PROC_NULL_WORLD: usize = usize::MAX;

/// A message that arrived before its receive was posted.
#[derive(Debug)]
pub enum Unexpected {
    /// Eager payload copied out of the transport; `sync` = (sender world rank, sender request)
    /// to acknowledge on match.
    Eager { data: Vec<u8>, sync: Option<(usize, ReqId)> },
    /// A rendezvous offer: the data stays at the sender until we match it. `addr`: the
    /// sender's contiguous buffer, offered for a single-copy read (0 = not offered), with
    /// the transport's `key` for it (verbs: the rkey). `flags`: the offer's
    /// `FLAG_ROOTED`/`FLAG_TO_ROOT` bits.
    Rts { world: usize, sreq: ReqId, len: usize, addr: u64, key: u32, flags: u8 },
    /// A pushed message (`FLAG_PUSH`) from `world` whose offer matched on arrival: its data
    /// chunks follow in the ring. Never queued: unmatched ones are held until complete.
    Pushed { world: usize, len: usize },
}

impl Unexpected {
    /// The offer carried by an `Rts` header from `world`.
    pub(crate) fn offer(world: usize, hdr: &Header) -> Unexpected {
        if hdr.flags & FLAG_PUSH != 0 {
            Unexpected::Pushed { world, len: hdr.len as usize }
        } else {
            Unexpected::Rts { world, sreq: hdr.sreq, len: hdr.len as usize, addr: hdr.offset, key: hdr.rreq, flags: hdr.flags & (FLAG_ROOTED | FLAG_TO_ROOT) }
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Unexpected::Eager { data, .. } => data.len(),
            Unexpected::Rts { len, .. } | Unexpected::Pushed { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// How a world rank is reached (decided once, by `transport::wireup`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// This process.
    Local,
    /// Through a transport.
    Peer(Link),
    /// On another node with the network transports turned off (`OXMPI_TRANSPORT=shm`).
    Unreachable,
}

/// Work queued for a peer because its transport had no room.
enum Outgoing {
    /// One message; `done` completes when it is handed to the transport.
    Msg { hdr: Header, payload: *const u8, len: usize, done: Option<ReqId> },
    /// Rendezvous data of send request `sreq`, streamed chunk by chunk.
    Stream { sreq: ReqId },
}

/// Where the data chunks of a sender's pushed message in progress go.
enum Push {
    /// Into receive request `ReqId` (the offer matched on arrival).
    Into(ReqId),
    /// Held until complete (`head` is the offer), then matched like an eager message.
    Held { head: Header, data: Vec<u8> },
}

/// Where a blocking receive stands (see `Engine::begin_blocking_recv`).
#[derive(Clone, Copy, Debug)]
pub enum BlockingRecv {
    /// Complete, with this status.
    Done(Status),
    /// Waiting without a request: ask `poll_blocking_recv` after each progress pass.
    Waiting,
    /// Waiting on this request (another receive was pending, or a rendezvous offer matched).
    Request(ReqId),
}

/// The one blocking receive that may wait without a request. It is the only receive posted
/// on its context (checked when it starts), so the first arrival it accepts is its message
/// and needs no queue: ping-pong code pays for no request record, no posted-queue entry
/// and no completion bookkeeping.
struct WaitingRecv {
    buf: RawBuf,
    ctx: u32,
    src: i32,
    tag: i32,
    /// As `Request::owner`, for a request made if a rendezvous offer matches.
    owner: i64,
    now: BlockingRecv,
}

/// Per-process engine state (one per MPI process, behind the runtime's lock).
pub struct Engine {
    pub rank: usize,
    pub size: usize,
    pub(crate) routes: Vec<Route>,
    /// Every transport; the protocol addresses them through `Link`s only.
    pub(crate) net: Transports,
    matcher: Matcher<ReqId, Unexpected>,
    pub reqs: RequestTable,
    outq: Vec<VecDeque<Outgoing>>,
    /// World ranks whose `outq` is non-empty.
    busy: Vec<usize>,
    send_seq: Vec<u32>,
    recv_seq: Vec<u32>,
    /// Messages to this process itself.
    self_q: VecDeque<(Header, Vec<u8>)>,
    /// The largest eager limit of any transport (receives, which do not know their sender,
    /// use it to choose between staging and streaming a non-contiguous buffer).
    eager_max: usize,
    /// Single-copy messages of at least this many bytes are copied cooperatively
    /// (`OXMPI_SHM_COOP_MIN`; usize::MAX = never).
    coop_min: usize,
    bsend: Buffers,
    /// More local ranks than CPUs: blocked waits yield at once instead of spinning.
    pub oversubscribed: bool,
    /// World ranks on this host.
    host_mates: Vec<bool>,
    /// Active collective schedules and recycled ones (see `coll/stepping.rs`).
    pub(crate) colls: Colls,
    /// Buffers of consumed unexpected eager messages, reused for the next ones.
    spare: Vec<Vec<u8>>,
    /// A blocking receive waiting without a request, if any.
    waiting: Option<WaitingRecv>,
    /// Sends above the eager limit and up to this many bytes are pushed (`FLAG_PUSH`);
    /// 0 = never (`OXMPI_SHM_PUSH_MAX`, or `OXMPI_OSUB_PUSH_MAX` when oversubscribed).
    push_max: usize,
    /// The same for `SendMode::TowardRoot` sends (`OXMPI_OSUB_PUSH_ROOT_MAX` when
    /// oversubscribed, else as `push_max`).
    push_root_max: usize,
    /// Per sender world rank: its pushed message in progress, if any. A sender streams
    /// one pushed message at a time, right behind its offer, so one entry suffices.
    pushing: Vec<Option<Push>>,
    /// Per world rank: bound to the same CPU as this process (oversubscribed; see
    /// `FLAG_ROOTED`). A guess from the binding rule, used only for speed.
    pub(crate) cpu_mates: Vec<bool>,
    /// Requests that complete when two others have (`MPI_Isendrecv`; see `join`).
    joins: Vec<Join>,
    /// Partitioned requests (`MPI_Psend_init`, `MPI_Precv_init`; see `partitioned`).
    pub(crate) parts: crate::partitioned::Parts,
    /// Called with the id of a request the user freed while it was active, when it
    /// completes (just before it is dropped): the C layer copies a Fortran section's
    /// temporary back then, since no wait will.
    pub freed_hook: Option<fn(ReqId)>,
}

/// A request completed by the engine when both `send` and `recv` have: it takes the
/// receive's status (and the first error of either). `keep` holds staged outgoing data
/// (`MPI_Isendrecv_replace`) until the send is done.
struct Join {
    outer: ReqId,
    send: ReqId,
    recv: ReqId,
    keep: Vec<u8>,
}

/// Most buffers `Engine::spare` keeps, and the largest capacity worth keeping (held
/// pushed messages can reach `OXMPI_OSUB_PUSH_ROOT_MAX`; eager ones are 8 KiB).
const SPARE_BUFFERS: usize = 64;
const SPARE_BUFFER_MAX: usize = 64 * 1024;

// SAFETY: raw pointers in queued work refer to user buffers or the shm mapping, which stay
// valid while the operations are pending; the engine is only used under the runtime lock.
unsafe impl Send for Engine {}


impl Engine {
    /// An engine for `size` ranks; `routes[r]` tells how rank `r` is reached.
    pub fn new(rank: usize, size: usize, routes: Vec<Route>, net: Transports, oversubscribed: bool) -> Engine {
        let eager_max = match net.any_eager_max() {
            0 => usize::MAX,
            n => n,
        };
        Engine {
            rank,
            size,
            routes,
            net,
            matcher: Matcher::new(),
            reqs: RequestTable::default(),
            outq: (0..size).map(|_| VecDeque::new()).collect(),
            busy: Vec::new(),
            send_seq: vec![0; size],
            recv_seq: vec![0; size],
            self_q: VecDeque::new(),
            eager_max,
            coop_min: match crate::config::config().get("SHM_COOP_MIN") {
                0 => usize::MAX,
                n => n,
            },
            bsend: Buffers::default(),
            oversubscribed,
            colls: Colls::default(),
            spare: Vec::new(),
            waiting: None,
            push_max: crate::config::config().get(if oversubscribed { "OSUB_PUSH_MAX" } else { "SHM_PUSH_MAX" }),
            push_root_max: crate::config::config().get(if oversubscribed { "OSUB_PUSH_ROOT_MAX" } else { "SHM_PUSH_MAX" }),
            pushing: (0..size).map(|_| None).collect(),
            cpu_mates: vec![false; size],
            host_mates: vec![false; size],
            joins: Vec::new(),
            parts: Default::default(),
            freed_hook: None,
        }
    }

    /// Records the world ranks bound to our CPU (oversubscribed runs).
    /// The world ranks on this host (the launcher's node map).
    pub fn set_host_mates(&mut self, mates: &[usize]) {
        for &m in mates {
            self.host_mates[m] = true;
        }
    }

    /// Every rank of `world` is on this host.
    pub fn on_my_host(&self, world: &[usize]) -> bool {
        world.iter().all(|&w| self.host_mates.get(w).copied().unwrap_or(false))
    }

    /// Routes for the peers the TCP transport added (processes of other jobs: `dpm.rs`);
    /// they take the indices after our job's ranks, in both.
    #[cold]
    pub(crate) fn grow_peers(&mut self) {
        let n = self.net.tcp.as_ref().map_or(0, |t| t.peer_count());
        while self.routes.len() < n {
            let peer = self.routes.len();
            self.routes.push(Route::Peer(Link { via: Via::Tcp, peer }));
            self.outq.push(VecDeque::new());
            self.send_seq.push(0);
            self.recv_seq.push(0);
            self.pushing.push(None);
            self.cpu_mates.push(false);
            self.host_mates.push(false);
        }
    }

    /// Adds the TCP transport after start-up (see `Transports::add_tcp`).
    pub(crate) fn add_tcp(&mut self, t: crate::transport::tcp::TcpTransport) {
        self.net.add_tcp(t);
        self.eager_max = match self.net.any_eager_max() {
            0 => usize::MAX,
            n => n,
        };
    }

    pub fn set_cpu_mates(&mut self, mates: &[usize]) {
        for &m in mates {
            self.cpu_mates[m] = true;
        }
    }

    fn route(&self, world: usize) -> MpiResult<Route> {
        match self.routes.get(world) {
            Some(Route::Unreachable) => Err(MpiError::new(
                ErrorClass::Other,
                format!("rank {world} runs on another node and OXMPI_TRANSPORT=shm turned the network transports off"),
            )),
            Some(r) => Ok(*r),
            None => Err(MpiError::new(ErrorClass::Rank, format!("world rank {world} out of range"))),
        }
    }

    // ---------------------------------------------------------------- sending

    /// Blocking-send fast path: a standard-mode eager message handed to the transport at
    /// once, with no request. Returns false when the caller must take the general path.
    #[inline]
    pub fn try_send_now(&mut self, buf: RawBuf, dest: usize, ctx: u32, src_rank: i32, tag: i32) -> bool {
        let Some(Route::Peer(link)) = self.routes.get(dest).copied() else { return false };
        if buf.len > self.net.eager_max(link) {
            return false;
        }
        let mut hdr = Header::new(Kind::Eager);
        hdr.ctx = ctx;
        hdr.src = src_rank;
        hdr.tag = tag;
        hdr.len = buf.len as u64;
        self.push_now(dest, link, &mut hdr, buf.ptr, buf.len)
    }

    /// Hands one message to the transport at once if nothing is queued for `dest`; true
    /// when it went out (the caller queues it otherwise, preserving order).
    #[inline]
    fn push_now(&mut self, dest: usize, link: Link, hdr: &mut Header, payload: *const u8, len: usize) -> bool {
        if !self.outq[dest].is_empty() {
            return false;
        }
        hdr.seq = self.send_seq[dest];
        // SAFETY: the caller's buffer is valid for `len` bytes while the send is pending.
        if unsafe { self.net.try_send(link, &hdr.encode(), payload, len) } {
            self.send_seq[dest] = self.send_seq[dest].wrapping_add(1);
            self.net.wake(link);
            true
        } else {
            false
        }
    }

    /// Creates a request for `op` without starting it (persistent requests start later).
    pub fn create(&mut self, op: Op, persistent: bool) -> ReqId {
        let mut r = Request::new(op);
        r.persistent = persistent;
        self.reqs.insert(r)
    }

    /// Starts (or restarts, for persistent requests) the operation of request `rid`.
    pub fn start(&mut self, rid: ReqId) -> MpiResult<()> {
        let r = self.reqs.get_mut(rid).ok_or_else(|| MpiError::new(ErrorClass::Request, "invalid request"))?;
        if r.persistent && r.state != State::Inactive && r.state != State::Complete {
            return Err(MpiError::new(ErrorClass::Request, "MPI_Start on a persistent request that is still active"));
        }
        r.status = Status::fresh(&r.op);
        r.done = 0;
        r.total = 0;
        let proc_null = match r.op {
            Op::Send { dest_world, .. } => dest_world == PROC_NULL_WORLD,
            Op::Recv { src, .. } => src == crate::matching::PROC_NULL,
            Op::Coll | Op::Generalized | Op::Partitioned => return Err(MpiError::new(ErrorClass::Request, "only persistent requests can be started")),
        };
        if proc_null {
            r.status = Status { source: crate::matching::PROC_NULL, tag: crate::matching::ANY_TAG, ..r.status };
            self.complete(rid);
            return Ok(());
        }
        if let Some(l) = r.layout().cloned() {
            // Large non-contiguous transfers to another process stream: packed straight
            // into transport cells and unpacked straight out of them. Everything else is
            // packed into `staging` first.
            let streamed = l.bytes() > self.eager_max
                && match r.op {
                    Op::Send { dest_world, mode, .. } => {
                        mode != SendMode::Buffered && matches!(self.routes.get(dest_world), Some(Route::Peer(_)))
                    }
                    _ => true,
                };
            if streamed {
                stream_layout(r, &l);
            } else {
                stage(r, &l);
            }
        }
        match r.op {
            Op::Send { buf, dest_world, ctx, src_rank, tag, mode } => {
                if mode == SendMode::Buffered {
                    self.bsend(buf, dest_world, ctx, src_rank, tag)?;
                    self.complete(rid);
                    Ok(())
                } else {
                    self.start_send(rid, buf, dest_world, ctx, src_rank, tag, mode)
                }
            }
            Op::Recv { ctx, src, tag, .. } => {
                self.start_recv(rid, ctx, src, tag);
                Ok(())
            }
            Op::Coll | Op::Generalized | Op::Partitioned => unreachable!("rejected above"),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn start_send(&mut self, rid: ReqId, buf: RawBuf, dest: usize, ctx: u32, src_rank: i32, tag: i32, mode: SendMode) -> MpiResult<()> {
        let route = self.route(dest)?;
        let sync = mode == SendMode::Synchronous;
        let Route::Peer(link) = route else { return self.send_to_self(rid, buf, ctx, src_rank, tag, sync) };
        // Pushing unmatched data ahead of the clear-to-send suits bounded rings; a byte
        // stream would make the receiver buffer it whole.
        let push_max = if self.net.streams(link) {
            0
        } else if mode == SendMode::TowardRoot {
            self.push_root_max
        } else {
            self.push_max
        };
        let mut hdr = eager_header(ctx, src_rank, tag, rid, buf.len, sync);
        if buf.len <= self.net.eager_max(link) {
            self.reqs.get_mut(rid).unwrap().state = State::SendPending;
            // Nothing queued for this peer: hand the message over directly (the common case
            // of MPI_Isend), skipping the queue bookkeeping.
            if self.push_now(dest, link, &mut hdr, buf.ptr, buf.len) {
                if !sync {
                    self.complete(rid);
                }
                return Ok(());
            }
            let done = if sync { None } else { Some(rid) };
            self.push_or_queue(dest, Outgoing::Msg { hdr, payload: buf.ptr, len: buf.len, done });
        } else if buf.len <= push_max && !sync {
            // Pushed: the offer, then the data right behind it (see `FLAG_PUSH`).
            hdr.kind = Kind::Rts;
            hdr.flags = FLAG_PUSH;
            let r = self.reqs.get_mut(rid).unwrap();
            r.state = State::SendPushing;
            r.total = buf.len;
            self.push_or_queue(dest, Outgoing::Msg { hdr, payload: std::ptr::null(), len: 0, done: None });
            self.push_or_queue(dest, Outgoing::Stream { sreq: rid });
        } else {
            hdr.kind = Kind::Rts;
            hdr.flags = match mode {
                SendMode::FromRoot => FLAG_ROOTED,
                SendMode::TowardRoot => FLAG_ROOTED | FLAG_TO_ROOT,
                _ => 0,
            };
            // A contiguous buffer (a streamed non-contiguous one has a null pointer) is
            // offered for a single-copy read if the transport takes it: `offset` carries
            // its address, `rreq` (unused in an offer) the transport's key for it.
            let offer = if buf.ptr.is_null() { None } else { self.net.offer(link, buf.ptr, buf.len) };
            if let Some(key) = offer {
                hdr.offset = buf.ptr as u64;
                hdr.rreq = key;
            }
            let r = self.reqs.get_mut(rid).unwrap();
            r.offered = offer.is_some();
            r.state = State::SendAwaitCts;
            r.total = buf.len;
            self.push_or_queue(dest, Outgoing::Msg { hdr, payload: std::ptr::null(), len: 0, done: None });
        }
        Ok(())
    }

    /// A send to this process itself. A point-to-point message with nothing of this
    /// process queued ahead of it is delivered at once, from the user's buffer (matched
    /// and copied into a posted receive, or kept as unexpected, as any arrival: 154 →
    /// 112–122 ns for an `MPI_Irecv` + `MPI_Isend` + `MPI_Waitall` to oneself); otherwise
    /// (and for collectives, whose arrivals may advance schedules) it is copied into the
    /// self queue, which progress delivers in order. The receive may then complete before
    /// the send: a send's completion leaves the status's source, tag and count alone
    /// (`Status::send`), so a program reading the receive's status from one
    /// `MPI_Waitany` status buffer (MPICH's `irsendf`) still finds it there.
    #[allow(clippy::too_many_arguments)]
    fn send_to_self(&mut self, rid: ReqId, buf: RawBuf, ctx: u32, src_rank: i32, tag: i32, sync: bool) -> MpiResult<()> {
        let hdr = eager_header(ctx, src_rank, tag, rid, buf.len, sync);
        if self.self_q.is_empty() && !is_coll_ctx(ctx) {
            // `handle` makes a slice of the payload: never from a null pointer (a program
            // may send 0 items from NULL).
            let payload = if buf.len == 0 { std::ptr::NonNull::<u8>::dangling().as_ptr() } else { buf.ptr };
            self.handle(self.rank, &hdr, payload, buf.len);
        } else {
            let data = if buf.len == 0 {
                Vec::new()
            } else {
                // SAFETY: the user buffer is valid for `len` bytes.
                self.spare_copy(unsafe { std::slice::from_raw_parts(buf.ptr as *const u8, buf.len) })
            };
            self.self_q.push_back((hdr, data));
        }
        if sync {
            self.reqs.get_mut(rid).unwrap().state = State::SendPending;
        } else {
            self.complete(rid);
        }
        Ok(())
    }

    /// `MPI_Bsend`: copies into the communicator's or the process's buffer and sends from
    /// there; the user's part completes at once.
    fn bsend(&mut self, buf: RawBuf, dest: usize, ctx: u32, src_rank: i32, tag: i32) -> MpiResult<()> {
        let owner = self.bsend.owner_for(ctx);
        let (region, at) = self.bsend.reserve(owner, buf.len)?;
        let mut owned = Vec::new();
        let copy = match region {
            Region::At(_) => {
                // SAFETY: the region of the attached buffer at `at` is reserved for this copy.
                unsafe { crate::copy::copy_bytes(buf.ptr as *const u8, at, buf.len) };
                RawBuf { ptr: at, len: buf.len }
            }
            Region::Owned => {
                // SAFETY: the user buffer is valid for `len` bytes.
                owned = unsafe { copy_to_vec(buf) };
                RawBuf { ptr: owned.as_mut_ptr(), len: buf.len }
            }
        };
        let op = Op::Send { buf: copy, dest_world: dest, ctx, src_rank, tag, mode: SendMode::Standard };
        let rid = self.create(op, false);
        let r = self.reqs.get_mut(rid).unwrap();
        r.freed = true;
        let e = r.extra();
        e.bsend_region = Some((owner, region));
        // Moving the vector keeps its heap block (and `copy.ptr`) where it is.
        e.staging = owned;
        self.start_send(rid, copy, dest, ctx, src_rank, tag, SendMode::Standard)
    }

    /// `MPI_Buffer_attach`, `MPI_Session_attach_buffer` and `MPI_Comm_attach_buffer`;
    /// `automatic` for `MPI_BUFFER_AUTOMATIC`.
    pub fn buffer_attach(&mut self, owner: Owner, base: *mut u8, size: usize, automatic: bool) -> MpiResult<()> {
        self.bsend.attach(owner, base, size, automatic)
    }

    /// Records the session the communicator on context `ctx` derives from (None: the World
    /// Model's, or freed), whose buffer its buffered sends use when it has none of its own.
    pub fn buffer_session(&mut self, ctx: u32, session: Option<u32>) {
        self.bsend.set_session(ctx, session)
    }

    /// Whether `owner`'s buffer holds no pending buffered send (a detach or flush may end).
    pub fn buffer_idle(&self, owner: Owner) -> bool {
        self.bsend.idle(owner)
    }

    /// Detaches `owner`'s buffer once idle: (base, size, automatic), None if none attached.
    pub fn buffer_detach(&mut self, owner: Owner) -> Option<(*mut u8, usize, bool)> {
        self.bsend.detach(owner)
    }

    /// `MPI_Buffer_iflush`/`MPI_Comm_iflush_buffer`: a request that completes once
    /// `owner`'s buffer holds no pending message.
    pub fn buffer_iflush(&mut self, owner: Owner) -> ReqId {
        if self.bsend.idle(owner) {
            return self.completed_request(Status::default());
        }
        let rid = self.create(Op::Generalized, false);
        self.reqs.get_mut(rid).unwrap().state = State::GeneralizedActive;
        self.bsend.wait_idle(rid, owner);
        rid
    }

    pub(crate) fn send_ctrl(&mut self, dest: usize, hdr: Header) {
        if self.routes[dest] == Route::Local {
            self.self_q.push_back((hdr, Vec::new()));
        } else {
            self.push_or_queue(dest, Outgoing::Msg { hdr, payload: std::ptr::null(), len: 0, done: None });
        }
    }

    fn push_or_queue(&mut self, dest: usize, item: Outgoing) {
        if self.outq[dest].is_empty() {
            self.busy.push(dest);
        }
        self.outq[dest].push_back(item);
        self.flush(dest);
    }

    /// Hands queued work for `dest` to its transport until it runs out of room; returns
    /// whether anything moved (progress, so a waiting sender keeps spinning, not yielding).
    fn flush(&mut self, dest: usize) -> bool {
        let Route::Peer(link) = self.routes[dest] else { unreachable!("queued work only for peers behind a transport") };
        let mut pushed = false;
        while let Some(front) = self.outq[dest].front_mut() {
            match front {
                Outgoing::Msg { hdr, payload, len, done } => {
                    hdr.seq = self.send_seq[dest];
                    // SAFETY: payload is a pending user buffer or null with len 0.
                    if !unsafe { self.net.try_send(link, &hdr.encode(), *payload, *len) } {
                        break;
                    }
                    pushed = true;
                    self.send_seq[dest] = self.send_seq[dest].wrapping_add(1);
                    let done = *done;
                    self.outq[dest].pop_front();
                    if let Some(rid) = done {
                        self.complete(rid);
                    }
                }
                Outgoing::Stream { sreq } => {
                    let sreq = *sreq;
                    let r = self.reqs.get_mut(sreq).unwrap();
                    let Op::Send { buf, .. } = r.op else { unreachable!() };
                    // A streamed non-contiguous buffer is packed chunk by chunk into the cells.
                    let layout = if buf.ptr.is_null() { r.layout().cloned() } else { None };
                    let net = &mut self.net;
                    let chunk_max = net.max_payload(link);
                    let mut hdr = Header::new(Kind::Data);
                    hdr.rreq = r.rreq;
                    if r.state == State::SendPushing {
                        hdr.flags = FLAG_PUSH;
                    }
                    let mut stalled = false;
                    while r.done < r.total {
                        let n = chunk_max.min(r.total - r.done);
                        hdr.offset = r.done as u64;
                        hdr.seq = self.send_seq[dest];
                        let sent = match &layout {
                            Some(l) => {
                                let from = r.done;
                                // SAFETY: the layout describes the pending user send buffer.
                                net.try_send_with(link, &hdr.encode(), n, &mut |dst| unsafe {
                                    l.dt.pack_range(l.base, l.count, from, dst);
                                })
                            }
                            // SAFETY: [done, done+n) lies within the pending user buffer,
                            // which stays valid until the send completes, after holds_lent.
                            None => unsafe { net.try_send_lent(link, &hdr.encode(), buf.ptr.add(r.done), n) },
                        };
                        if !sent {
                            stalled = true;
                            break;
                        }
                        pushed = true;
                        self.send_seq[dest] = self.send_seq[dest].wrapping_add(1);
                        r.done += n;
                    }
                    // The transport may still send the last chunk from the user buffer.
                    if stalled || net.holds_lent(link) {
                        break;
                    }
                    self.outq[dest].pop_front();
                    self.complete(sreq);
                }
            }
        }
        if pushed {
            self.net.wake(link);
        }
        pushed
    }

    // -------------------------------------------------------------- receiving

    /// `MPI_Irecv` into a contiguous buffer from a real source (not `MPI_PROC_NULL`): the
    /// common case, without `start`'s generality. `owner` as in `Request::owner`.
    #[inline]
    pub fn post_recv(&mut self, buf: RawBuf, ctx: u32, src: i32, tag: i32, owner: i64) -> ReqId {
        let mut r = Request::new(Op::Recv { buf, ctx, src, tag });
        r.owner = owner;
        r.state = State::RecvPosted;
        let rid = self.reqs.insert(r);
        self.start_recv(rid, ctx, src, tag);
        rid
    }

    #[inline]
    fn start_recv(&mut self, rid: ReqId, ctx: u32, src: i32, tag: i32) {
        if let Some((env, u)) = self.matcher.take_unexpected(ctx, src, tag) {
            self.deliver(rid, env, u);
        } else {
            self.reqs.get_mut(rid).unwrap().state = State::RecvPosted;
            self.matcher.push_posted(ctx, src, tag, rid);
        }
    }

    /// Blocking-receive fast path: an eager message already waiting is copied out with no
    /// request. Returns its status, or None when the caller must post a request.
    pub fn try_recv_now(&mut self, buf: RawBuf, ctx: u32, src: i32, tag: i32) -> Option<Status> {
        let (env, u) = self.matcher.take_unexpected_if(ctx, src, tag, |u| matches!(u, Unexpected::Eager { .. }))?;
        let Unexpected::Eager { data, sync } = u else { unreachable!() };
        let status = copy_in(buf, None, env, &data);
        self.recycle(data);
        if let Some((world, sreq)) = sync {
            self.ack_sync(world, sreq);
        }
        Some(status)
    }

    /// `MPI_Recv` into a contiguous buffer from a real source (or `MPI_ANY_SOURCE`): done at
    /// once if a matching eager message waits; otherwise, when no other receive is posted
    /// and nothing unexpected sits on `ctx` (and no other thread's blocking receive is
    /// waiting), it waits without a request (`Waiting`, poll with `poll_blocking_recv`);
    /// else it posts a request like `post_recv`. Always inlined: `MPI_Recv` and
    /// `MPI_Recv_c` both call it, and a call of its own costs the int form's hot path.
    #[inline(always)]
    pub fn begin_blocking_recv(&mut self, buf: RawBuf, ctx: u32, src: i32, tag: i32, owner: i64) -> BlockingRecv {
        if let Some(st) = self.try_recv_now(buf, ctx, src, tag) {
            return BlockingRecv::Done(st);
        }
        if self.waiting.is_some() || !self.matcher.is_quiet(ctx) {
            return BlockingRecv::Request(self.post_recv(buf, ctx, src, tag, owner));
        }
        self.waiting = Some(WaitingRecv { buf, ctx, src, tag, owner, now: BlockingRecv::Waiting });
        BlockingRecv::Waiting
    }

    /// The request-free blocking receive after a progress pass: still `Waiting`, or how it
    /// ended (the receive is then no longer this engine's to track).
    #[inline]
    pub fn poll_blocking_recv(&mut self) -> BlockingRecv {
        let now = self.waiting.as_ref().expect("a blocking receive is waiting").now;
        if !matches!(now, BlockingRecv::Waiting) {
            self.waiting = None;
        }
        now
    }

    /// An arrival on a user context: true when the waiting blocking receive took it.
    #[inline]
    fn waiting_takes(&mut self, world: usize, hdr: &Header, env: Envelope, payload: *const u8, len: usize) -> bool {
        let Some(w) = self.waiting.as_mut() else { return false };
        if !matches!(w.now, BlockingRecv::Waiting) || w.ctx != env.ctx || !accepts(w.src, w.tag, env) {
            return false;
        }
        let (buf, sync) = (w.buf, hdr.flags & FLAG_SYNC != 0);
        if hdr.kind == Kind::Eager {
            // SAFETY: the transport holds `len` payload bytes until release.
            w.now = BlockingRecv::Done(copy_in(buf, None, env, unsafe { std::slice::from_raw_parts(payload, len) }));
            if sync {
                self.ack_sync(world, hdr.sreq);
            }
        } else {
            let mut r = Request::new(Op::Recv { buf, ctx: w.ctx, src: w.src, tag: w.tag });
            r.owner = w.owner;
            r.state = State::RecvPosted;
            let rid = self.reqs.insert(r);
            w.now = BlockingRecv::Request(rid);
            self.deliver(rid, env, Unexpected::offer(world, hdr));
        }
        true
    }

    /// A copy of `bytes` in a spare buffer (see `recycle`): an early arrival's payload, or a
    /// queued message to this process itself.
    #[inline]
    fn spare_copy(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut data = self.spare.pop().unwrap_or_default();
        data.clear();
        data.extend_from_slice(bytes);
        data
    }

    /// Keeps the buffer of a consumed unexpected eager message for the next one, so the
    /// steady state of early arrivals does not allocate.
    #[inline]
    fn recycle(&mut self, data: Vec<u8>) {
        if self.spare.len() < SPARE_BUFFERS && data.capacity() != 0 && data.capacity() <= SPARE_BUFFER_MAX {
            self.spare.push(data);
        }
    }

    pub(crate) fn ack_sync(&mut self, world: usize, sreq: ReqId) {
        let mut h = Header::new(Kind::SyncAck);
        h.sreq = sreq;
        self.send_ctrl(world, h);
    }

    /// A matched message meets receive request `rid`.
    pub(crate) fn deliver(&mut self, rid: ReqId, env: Envelope, u: Unexpected) {
        let r = self.reqs.get_mut(rid).unwrap();
        let buf = match r.op {
            Op::Recv { buf, .. } => buf,
            Op::Send { .. } | Op::Coll | Op::Generalized | Op::Partitioned => fatal("a non-receive request matched a message"),
        };
        match u {
            Unexpected::Eager { data, sync } => {
                r.status = copy_in(buf, r.layout(), env, &data);
                self.recycle(data);
                if let Some((world, sreq)) = sync {
                    self.ack_sync(world, sreq);
                }
                self.complete(rid);
            }
            Unexpected::Pushed { world, len } => {
                expect_data(r, env, buf, len);
                self.begin_push(world, Push::Into(rid));
            }
            Unexpected::Rts { world, sreq, len, addr, key, flags } => {
                expect_data(r, env, buf, len);
                let mut h = Header::new(Kind::Cts);
                h.sreq = sreq;
                h.rreq = rid;
                // Single copy: read the sender's buffer straight into ours. The Cts then
                // tells the sender how many bytes it need not stream (`len`); all of them
                // (the truncated excess is dropped) completes both sides at once.
                if let (true, None, Route::Peer(link)) = (addr != 0, r.layout(), self.routes[world]) {
                    // A rooted collective's message from a rank on our CPU: the sender
                    // writes it all (see `FLAG_ROOTED`), and completes when it has.
                    let coop_ok = self.net.coop(link);
                    if coop_ok && flags & FLAG_ROOTED != 0 && self.cpu_mates[world] && buf.len >= len && self.net.zcopy_ready(link) {
                        h.flags = FLAG_COOP;
                        h.len = 0;
                        h.offset = buf.ptr as u64;
                        self.send_ctrl(world, h);
                        return;
                    }
                    // Large and not truncated: the sender writes the second half into our
                    // buffer while we read the first, so two cores copy at once (when
                    // oversubscribed, only toward a root: see `FLAG_TO_ROOT`).
                    let split = (len / 2) & !4095;
                    let coop = coop_ok && len >= self.coop_min && (!self.oversubscribed || flags & FLAG_TO_ROOT != 0);
                    if coop && buf.len >= len && split > 0 && self.net.zcopy_ready(link) {
                        h.flags = FLAG_COOP;
                        h.len = split as u64;
                        h.offset = buf.ptr as u64;
                        self.send_ctrl(world, h);
                        // SAFETY: as below; the sender writes only bytes [split, len).
                        let got = unsafe { self.net.get(link, buf.ptr, addr, key, split) };
                        if got != split {
                            fatal(&format!("single-copy read of a message from rank {world} failed mid-transfer (process_vm_readv)"));
                        }
                        self.reqs.get_mut(rid).unwrap().done = split;
                        return;
                    }
                    let fit = len.min(buf.len);
                    // SAFETY: buf is the pending receive buffer, valid for buf.len ≥ fit bytes;
                    // the sender keeps its buffer untouched until our Cts.
                    let got = unsafe { self.net.get(link, buf.ptr, addr, key, fit) };
                    let skip = if got == fit { len } else { got };
                    r.done = skip;
                    h.len = skip as u64;
                    self.send_ctrl(world, h);
                    if skip == len {
                        self.complete(rid);
                    }
                    return;
                }
                self.send_ctrl(world, h);
            }
        }
    }

    fn handle(&mut self, world: usize, hdr: &Header, payload: *const u8, len: usize) {
        match hdr.kind {
            Kind::Eager | Kind::Rts if is_coll_ctx(hdr.ctx) => self.coll_arrival(world, hdr, payload, len),
            Kind::Eager | Kind::Rts => {
                let env = Envelope { ctx: hdr.ctx, src: hdr.src, tag: hdr.tag };
                if self.waiting_takes(world, hdr, env, payload, len) {
                    return;
                }
                let sync = (hdr.flags & FLAG_SYNC != 0).then_some((world, hdr.sreq));
                if let Some(rid) = self.matcher.match_posted(env) {
                    if hdr.kind == Kind::Eager {
                        let r = self.reqs.get_mut(rid).unwrap();
                        let Op::Recv { buf, .. } = r.op else { fatal("send request posted as receive") };
                        // SAFETY: the transport holds `len` payload bytes until release.
                        r.status = copy_in(buf, r.layout(), env, unsafe { std::slice::from_raw_parts(payload, len) });
                        if let Some((w, s)) = sync {
                            self.ack_sync(w, s);
                        }
                        self.complete(rid);
                    } else {
                        self.deliver(rid, env, Unexpected::offer(world, hdr));
                    }
                } else if hdr.flags & FLAG_PUSH != 0 {
                    self.hold_pushed(world, hdr);
                } else {
                    let u = if hdr.kind == Kind::Eager {
                        // SAFETY: as above.
                        let data = self.spare_copy(unsafe { std::slice::from_raw_parts(payload, len) });
                        Unexpected::Eager { data, sync }
                    } else {
                        Unexpected::offer(world, hdr)
                    };
                    self.matcher.push_unexpected(env, u);
                }
            }
            Kind::Cts => {
                let Some(r) = self.reqs.get_mut(hdr.sreq).filter(|r| r.state == State::SendAwaitCts) else {
                    fatal(&format!("clear-to-send from rank {world} for unknown send request {}", hdr.sreq))
                };
                r.rreq = hdr.rreq;
                // `len`: bytes the receiver already read itself (single copy).
                let skip = hdr.len as usize;
                if skip > r.total {
                    fatal(&format!("clear-to-send from rank {world} skips beyond the message"));
                }
                r.done = skip;
                r.state = State::SendStreaming;
                // The receiver has read what it reads of an offer (a cooperative copy only
                // happens on transports that keep nothing per offer).
                if std::mem::take(&mut r.offered) {
                    if let (Op::Send { buf, .. }, Route::Peer(link)) = (r.op, self.routes[world]) {
                        self.net.withdraw(link, buf.ptr, buf.len);
                    }
                }
                if hdr.flags & FLAG_COOP != 0 {
                    // The receiver reads [0, skip) itself: write the rest into its buffer (as
                    // much as the kernel lets us; it reads whatever we could not), then wait
                    // for its ReadDone, as it may still be reading our buffer.
                    let (Op::Send { buf, .. }, Route::Peer(link)) = (r.op, self.routes[world]) else {
                        fatal(&format!("cooperative clear-to-send from rank {world} for a send it cannot write"))
                    };
                    let rest = r.total - skip;
                    // SAFETY: our send buffer is valid for `total` bytes; the receiver handed
                    // us [offset, offset + total) of its buffer and reads it only after PutDone.
                    let wrote = unsafe { self.net.put(link, hdr.offset + skip as u64, 0, buf.ptr.add(skip), rest) };
                    let mut h = Header::new(Kind::PutDone);
                    h.sreq = hdr.sreq;
                    h.rreq = hdr.rreq;
                    h.len = wrote as u64;
                    h.offset = buf.ptr as u64;
                    self.send_ctrl(world, h);
                    // A split of 0 (`FLAG_ROOTED`): the receiver reads nothing of ours once we
                    // wrote it all, so the send is over and no ReadDone will come.
                    if skip == 0 && wrote == rest {
                        self.complete(hdr.sreq);
                    }
                } else if skip == r.total {
                    self.complete(hdr.sreq);
                } else {
                    self.push_or_queue(world, Outgoing::Stream { sreq: hdr.sreq });
                }
            }
            Kind::PutDone => {
                let Some(r) = self.reqs.get_mut(hdr.rreq).filter(|r| r.state == State::RecvData && r.done + hdr.len as usize <= r.total) else {
                    fatal(&format!("write notice from rank {world} for unknown receive request {} or beyond its message", hdr.rreq))
                };
                let Op::Recv { buf, .. } = r.op else { unreachable!() };
                // Our own part [0, done) is in; the sender wrote `len` bytes after it. Read
                // whatever it could not write ourselves.
                let own = r.done;
                let at = own + hdr.len as usize;
                let missing = r.total - at;
                if missing > 0 {
                    let Route::Peer(link) = self.routes[world] else { unreachable!("cooperative transfers go through a transport") };
                    // SAFETY: [at, total) lies in our receive buffer (total ≤ buf.len); the
                    // sender keeps its buffer untouched until our ReadDone.
                    let got = unsafe { self.net.get(link, buf.ptr.add(at), hdr.offset + at as u64, 0, missing) };
                    if got != missing {
                        fatal(&format!("single-copy read of a message from rank {world} failed mid-transfer (process_vm_readv)"));
                    }
                }
                self.complete(hdr.rreq);
                // The sender wrote everything of a split-0 transfer and completed then.
                if own == 0 && missing == 0 {
                    return;
                }
                let mut h = Header::new(Kind::ReadDone);
                h.sreq = hdr.sreq;
                self.send_ctrl(world, h);
            }
            Kind::ReadDone => match self.reqs.get(hdr.sreq).map(|r| r.state) {
                Some(State::SendStreaming) => self.complete(hdr.sreq),
                _ => fatal(&format!("read notice from rank {world} for unknown send request {}", hdr.sreq)),
            },
            Kind::Data => {
                let rid = if hdr.flags & FLAG_PUSH == 0 {
                    hdr.rreq
                } else {
                    match self.pushing[world].as_mut() {
                        Some(Push::Into(rid)) => *rid,
                        Some(Push::Held { head, data }) => {
                            if hdr.offset != data.len() as u64 || data.len() + len > head.len as usize {
                                fatal(&format!("pushed data from rank {world} out of place (offset {}, {} of {} bytes held)", hdr.offset, data.len(), head.len));
                            }
                            // SAFETY: the transport holds `len` payload bytes until release.
                            data.extend_from_slice(unsafe { std::slice::from_raw_parts(payload, len) });
                            if data.len() == head.len as usize {
                                self.arrive_held(world);
                            }
                            return;
                        }
                        None => fatal(&format!("pushed data from rank {world} without its offer")),
                    }
                };
                let Some(r) = self.reqs.get_mut(rid).filter(|r| r.state == State::RecvData) else {
                    fatal(&format!("data from rank {world} for unknown receive request {rid}"))
                };
                let Op::Recv { buf, .. } = r.op else { unreachable!() };
                let off = hdr.offset as usize;
                if off + len > r.total {
                    fatal(&format!("data from rank {world} beyond the announced message length"));
                }
                let fit = buf.len.saturating_sub(off).min(len);
                // SAFETY: [off, off+fit) lies within the receive buffer (or its layout); the
                // transport holds `len` ≥ fit payload bytes until release.
                unsafe { place(buf, r.layout(), off, std::slice::from_raw_parts(payload, fit)) };
                r.done += len;
                if r.done >= r.total {
                    if hdr.flags & FLAG_PUSH != 0 {
                        self.pushing[world] = None;
                    }
                    self.complete(rid);
                }
            }
            Kind::SyncAck => {
                match self.reqs.get(hdr.sreq).map(|r| r.state) {
                    Some(State::SendPending) => self.complete(hdr.sreq),
                    _ => fatal(&format!("synchronous-send acknowledgement from rank {world} for unknown request {}", hdr.sreq)),
                }
            }
        }
    }

    /// A pushed message whose offer matched nothing yet: its data is collected as it
    /// arrives, and matched once complete (until then it has not arrived, as far as
    /// matching and probes go; nothing else from its sender can come before it).
    pub(crate) fn hold_pushed(&mut self, world: usize, hdr: &Header) {
        self.begin_push(world, Push::Held { head: *hdr, data: Vec::with_capacity(hdr.len as usize) });
    }

    /// Records where the data of `world`'s pushed message goes; a sender streams one at a
    /// time, so a second offer before the first one's data is a protocol fault.
    fn begin_push(&mut self, world: usize, to: Push) {
        if self.pushing[world].replace(to).is_some() {
            fatal(&format!("rank {world} offered a pushed message before finishing the previous one"));
        }
    }

    /// A held pushed message is complete: it arrives now, as an eager message would.
    fn arrive_held(&mut self, world: usize) {
        let Some(Push::Held { head, data }) = self.pushing[world].take() else { unreachable!("called for held data") };
        let mut h = head;
        h.kind = Kind::Eager;
        h.flags = 0;
        self.handle(world, &h, data.as_ptr(), data.len());
    }

    pub(crate) fn complete(&mut self, rid: ReqId) {
        let r = self.reqs.get_mut(rid).unwrap();
        r.state = State::Complete;
        // Flush requests a buffered send's completion ends (empty, no allocation, else).
        let mut flushed = Vec::new();
        if let Some(e) = r.extra.as_mut() {
            if let (Some(l), Op::Recv { .. }, false) = (&e.layout, r.op, e.staging.is_empty()) {
                let n = r.status.bytes.min(e.staging.len());
                // SAFETY: the layout describes the caller's receive buffer, valid until the
                // request completes (now).
                unsafe { l.dt.unpack(&e.staging[..n], l.base, l.count) };
            }
            if let Some((owner, region)) = e.bsend_region.take() {
                flushed = self.bsend.release(owner, region);
            }
        }
        if r.freed {
            if let Some(hook) = self.freed_hook {
                hook(rid);
            }
            self.reqs.discard(rid);
        }
        for f in flushed {
            self.complete(f);
        }
    }

    // --------------------------------------------------------------- progress

    /// Moves queued sends forward and handles arrived messages. Returns how many events
    /// happened (0 = idle).
    pub fn progress(&mut self) -> usize {
        let mut events = 0;
        let mut i = 0;
        while i < self.busy.len() {
            let dest = self.busy[i];
            if self.flush(dest) {
                events += 1;
            }
            if self.outq[dest].is_empty() {
                self.busy.swap_remove(i);
            } else {
                i += 1;
            }
        }
        while let Some((hdr, data)) = self.self_q.pop_front() {
            // `handle` copies what it keeps, so the buffer is free again afterwards.
            self.handle(self.rank, &hdr, data.as_ptr(), data.len());
            self.recycle(data);
            events += 1;
        }
        if self.net.progress() {
            self.grow_peers();
        }
        for _ in 0..64 {
            let reqs = &self.reqs;
            let Some(m) = self.net.recv_next(&mut |h, n| placement(reqs, h, n)) else { break };
            self.receive(m);
            events += 1;
        }
        if !self.colls.is_empty() {
            events += self.advance_collectives();
        }
        if !self.joins.is_empty() {
            events += self.advance_joins();
        }
        if self.parts.busy() {
            events += self.advance_partitioned();
        }
        events
    }

    fn receive(&mut self, m: Incoming) {
        let world = self.net.world_of(m.via, m.peer);
        // SAFETY: the header stays in transport memory, untouched by the peer, until release.
        let b = unsafe { &*m.header };
        let Some(hdr) = Header::decode_valid(b, m.len, 1 << 60) else {
            let e = Header::decode(b, m.len, 1 << 60).err().map_or_else(String::new, |e| e.to_string());
            fatal(&format!("from rank {world}: {e}"))
        };
        if hdr.seq != self.recv_seq[world] {
            fatal(&format!("message from rank {world} out of sequence (got {}, expected {})", hdr.seq, self.recv_seq[world]));
        }
        self.recv_seq[world] = self.recv_seq[world].wrapping_add(1);
        self.handle(world, &hdr, m.payload, m.len);
        self.net.release(&m);
    }

    /// True when nothing is queued locally, so sleeping until a remote event is safe.
    pub fn idle(&self) -> bool {
        self.busy.is_empty() && self.self_q.is_empty()
    }

    /// Prepares to sleep on the transport's doorbell (None: poll again instead).
    pub fn prepare_sleep(&mut self) -> Option<SleepToken> {
        if !self.idle() {
            return None;
        }
        self.net.prepare_sleep()
    }

    /// A sleep ended; the next progress pass follows (see `Transports::after_sleep`).
    pub fn after_sleep(&mut self) {
        self.net.after_sleep();
    }

    /// A wait that slept is over (see `Transport::end_sleep`).
    pub fn end_sleep(&mut self) {
        self.net.end_sleep();
    }

    // ----------------------------------------------------- probe, cancel, misc

    /// `MPI_Iprobe`: status of the earliest matching unexpected message.
    pub fn iprobe(&self, ctx: u32, src: i32, tag: i32) -> Option<Status> {
        self.matcher.peek_unexpected(ctx, src, tag).map(|(env, u)| Status {
            source: env.src,
            tag: env.tag,
            bytes: u.len(),
            cancelled: false,
            error: None,
            send: false,
        })
    }

    /// `MPI_Improbe`: removes the earliest matching message into a message request.
    pub fn improbe(&mut self, ctx: u32, src: i32, tag: i32) -> Option<ReqId> {
        let (env, u) = self.matcher.take_unexpected(ctx, src, tag)?;
        let mut r = Request::new(Op::Recv { buf: RawBuf::EMPTY, ctx, src, tag });
        r.state = State::Message;
        r.status = Status { source: env.src, tag: env.tag, bytes: u.len(), cancelled: false, error: None, send: false };
        r.extra().message = Some((env, u));
        Some(self.reqs.insert(r))
    }

    /// `MPI_Imrecv`: receives message request `rid` into `buf`; `rid` becomes the receive.
    pub fn mrecv(&mut self, rid: ReqId, buf: RawBuf, layout: Option<Layout>) -> MpiResult<()> {
        let r = self
            .reqs
            .get_mut(rid)
            .filter(|r| r.state == State::Message)
            .ok_or_else(|| MpiError::new(ErrorClass::Request, "not a message handle from MPI_Mprobe/MPI_Improbe"))?;
        let (env, u) = r.extra().message.take().expect("a message request holds its message");
        if let Op::Recv { buf: b, .. } = &mut r.op {
            *b = buf;
        }
        if let Some(l) = layout {
            if l.bytes() > self.eager_max {
                stream_layout(r, &l);
            } else {
                stage(r, &l);
            }
            r.extra().layout = Some(l);
        }
        self.deliver(rid, env, u);
        Ok(())
    }

    /// `MPI_Cancel`: a posted receive is removed and completes as cancelled; sends are not
    /// cancellable here (the standard allows that: they complete normally).
    pub fn cancel(&mut self, rid: ReqId) {
        let Some(r) = self.reqs.get(rid) else { return };
        if r.state != State::RecvPosted {
            return;
        }
        let Op::Recv { ctx, src, tag, .. } = r.op else { return };
        if self.matcher.cancel_posted(ctx, src, tag, rid) {
            let r = self.reqs.get_mut(rid).unwrap();
            r.status.cancelled = true;
            r.status.source = -1;
            self.complete(rid);
        }
    }

    /// A collective request completed by the runtime (`close_coll_request`) rather than by
    /// one schedule: `MPI_Comm_idup`, whose agreement is a chain of schedules.
    pub fn open_coll_request(&mut self) -> ReqId {
        let rid = self.create(Op::Coll, false);
        self.reqs.get_mut(rid).unwrap().state = State::CollActive;
        rid
    }

    /// Completes a request from `open_coll_request`, with `error` in its status.
    pub fn close_coll_request(&mut self, rid: ReqId, error: Option<ErrorClass>) {
        if let Some(r) = self.reqs.get_mut(rid) {
            r.status.error = error;
            self.complete(rid);
        }
    }

    /// `MPI_Isendrecv`: a request that completes when both started requests `send` and
    /// `recv` have, with the receive's status; `keep` (staged send data) lives until then.
    pub fn join(&mut self, send: ReqId, recv: ReqId, keep: Vec<u8>) -> ReqId {
        let outer = self.create(Op::Coll, false);
        self.reqs.get_mut(outer).unwrap().state = State::CollActive;
        self.joins.push(Join { outer, send, recv, keep });
        // Both may be done already (eager send, message waiting).
        self.advance_joins();
        outer
    }

    /// Completes the joins whose two requests are done.
    #[cold]
    fn advance_joins(&mut self) -> usize {
        let mut ended = 0;
        let mut i = 0;
        while i < self.joins.len() {
            let j = &self.joins[i];
            let done = |rid| self.reqs.get(rid).is_none_or(|r| r.is_complete());
            if !(done(j.send) && done(j.recv)) {
                i += 1;
                continue;
            }
            let j = self.joins.swap_remove(i);
            let send_err = self.reqs.remove(j.send).and_then(|r| r.status.error);
            let mut st = self.reqs.remove(j.recv).map_or_else(Status::default, |r| r.status);
            st.error = st.error.or(send_err);
            drop(j.keep);
            if let Some(r) = self.reqs.get_mut(j.outer) {
                r.status = st;
                self.complete(j.outer);
            }
            ended += 1;
        }
        ended
    }

    /// `MPI_Grequest_start`: a request that completes when `grequest_complete` says so.
    pub fn grequest_start(&mut self) -> ReqId {
        let rid = self.create(Op::Generalized, false);
        self.reqs.get_mut(rid).unwrap().state = State::GeneralizedActive;
        rid
    }

    /// A request complete from the start with status `st`: an operation the call already
    /// did (nonblocking MPI-IO). Waits and tests finish it like any other.
    pub fn completed_request(&mut self, st: Status) -> ReqId {
        let rid = self.create(Op::Generalized, false);
        let r = self.reqs.get_mut(rid).expect("just created");
        r.status = st;
        r.state = State::Complete;
        rid
    }

    /// `MPI_Grequest_complete`: generalized request `rid` is complete. Returns whether the
    /// user had already freed it (it is gone now, and its free callback is due). Wakes
    /// this process's sleeping waits: another thread may be waiting for it.
    pub fn grequest_complete(&mut self, rid: ReqId) -> MpiResult<bool> {
        let r = self.reqs.get(rid).filter(|r| matches!(r.op, Op::Generalized));
        let Some(r) = r else {
            return Err(MpiError::new(ErrorClass::Request, "not a generalized request (from MPI_Grequest_start)"));
        };
        if r.state != State::GeneralizedActive {
            return Err(MpiError::new(ErrorClass::Request, "the generalized request was completed already"));
        }
        let freed = r.freed;
        self.complete(rid);
        self.net.wake_self();
        Ok(freed)
    }

    /// Wakes this process's own sleeping wait (see `grequest_complete`).
    pub fn wake_self(&mut self) {
        self.net.wake_self();
    }

    /// Pending work remains that finalize must drain (queued sends, buffered sends).
    pub fn has_outgoing(&self) -> bool {
        !self.busy.is_empty() || self.bsend.any_pending() || self.net.has_pending_output()
    }
}

/// The header of an eager message (the start of every send's envelope).
fn eager_header(ctx: u32, src_rank: i32, tag: i32, sreq: ReqId, len: usize, sync: bool) -> Header {
    let mut hdr = Header::new(Kind::Eager);
    hdr.ctx = ctx;
    hdr.src = src_rank;
    hdr.tag = tag;
    hdr.sreq = sreq;
    hdr.len = len as u64;
    if sync {
        hdr.flags |= FLAG_SYNC;
    }
    hdr
}

/// Streams a non-contiguous buffer: no staging; the buffer's null pointer with the packed
/// length tells the copy paths to pack/unpack through the layout.
fn stream_layout(r: &mut Request, l: &Layout) {
    r.extra().staging = Vec::new();
    let len = l.bytes();
    match &mut r.op {
        Op::Send { buf, .. } | Op::Recv { buf, .. } => *buf = RawBuf { ptr: std::ptr::null_mut(), len },
        Op::Coll | Op::Generalized | Op::Partitioned => {}
    }
}

/// Where the payload of a received frame goes, for a transport that can receive it there
/// directly (`Transport::recv_placed`): a rendezvous chunk of a receive into a contiguous
/// buffer (or its staging), when it fits whole. None: the transport buffers it as usual.
fn placement(reqs: &RequestTable, header: &[u8; HEADER_LEN], len: usize) -> Option<*mut u8> {
    let hdr = Header::decode_valid(header, len, 1 << 60)?;
    if hdr.kind != Kind::Data || hdr.flags & FLAG_PUSH != 0 {
        return None;
    }
    let r = reqs.get(hdr.rreq).filter(|r| r.state == State::RecvData)?;
    let Op::Recv { buf, .. } = r.op else { return None };
    let off = hdr.offset as usize;
    // SAFETY (pointer arithmetic): off + len ≤ buf.len, inside the pending receive buffer.
    (!buf.ptr.is_null() && off.checked_add(len)? <= buf.len && off + len <= r.total).then(|| unsafe { buf.ptr.add(off) })
}

/// Copies `data` to byte `off` of a receive buffer: straight for contiguous buffers (or
/// staging), through the layout for a streamed non-contiguous one. Data a transport
/// already received in place (`placement`) is not copied again.
///
/// # Safety
/// `buf` (or the layout's buffer) must be valid for the bytes written.
unsafe fn place(buf: RawBuf, layout: Option<&Layout>, off: usize, data: &[u8]) {
    if data.is_empty() || (!buf.ptr.is_null() && std::ptr::eq(data.as_ptr(), buf.ptr.wrapping_add(off))) {
        return;
    }
    match layout {
        // SAFETY: per the function contract.
        Some(l) if buf.ptr.is_null() => unsafe {
            l.dt.unpack_range(data, l.base, l.count, off);
        },
        // SAFETY: per the function contract; off + len ≤ buf.len (callers clamp).
        _ => unsafe { crate::copy::copy_bytes(data.as_ptr(), buf.ptr.add(off), data.len()) },
    }
}

/// A receive matched an offer of `len` bytes, whose data comes in chunks: the status is
/// known now (truncated if the buffer is shorter).
fn expect_data(r: &mut Request, env: Envelope, buf: RawBuf, len: usize) {
    let error = receive_error(buf, r.layout(), len);
    r.state = State::RecvData;
    r.total = len;
    r.done = 0;
    r.status = Status {
        source: env.src,
        tag: env.tag,
        bytes: len.min(buf.len),
        cancelled: false,
        error,
        send: false,
    };
}

/// The error of a receive of `len` bytes: MPI_ERR_TRUNCATE when they do not fit, or when a
/// non-contiguous receive type would take them ending inside one of its basic elements
/// (the send's type signature differs; MPICH reports that as truncation, and its
/// errors/pt2pt/truncmsg2 expects it). Contiguous types take any bytes, as in MPICH, and
/// MPI_Get_count tells a partial element by MPI_UNDEFINED.
#[inline]
fn receive_error(buf: RawBuf, layout: Option<&Layout>, len: usize) -> Option<ErrorClass> {
    let partial = || layout.is_some_and(|l| l.dt.elements_for_bytes(len).is_none());
    (len > buf.len || partial()).then_some(ErrorClass::Truncate)
}

/// Points a request with a non-contiguous buffer at its staging bytes (packing sends).
fn stage(r: &mut Request, l: &Layout) {
    let bytes = l.bytes();
    let packs = matches!(r.op, Op::Send { .. });
    let staging = &mut r.extra().staging;
    staging.clear();
    staging.resize(bytes, 0);
    if packs {
        // SAFETY: the layout describes the caller's send buffer, valid during the call.
        unsafe { l.dt.pack(l.base, l.count, staging) };
    }
    let ptr = staging.as_mut_ptr();
    match &mut r.op {
        Op::Send { buf, .. } | Op::Recv { buf, .. } => *buf = RawBuf { ptr, len: bytes },
        Op::Coll | Op::Generalized | Op::Partitioned => {}
    }
}

/// Copies an arrived payload into a receive buffer, truncating to fit.
fn copy_in(buf: RawBuf, layout: Option<&Layout>, env: Envelope, data: &[u8]) -> Status {
    let n = data.len().min(buf.len);
    // SAFETY: the receive buffer (or its layout) is valid for `buf.len` bytes and n ≤ buf.len.
    unsafe { place(buf, layout, 0, &data[..n]) };
    Status {
        source: env.src,
        tag: env.tag,
        bytes: n,
        cancelled: false,
        error: receive_error(buf, layout, data.len()),
        send: false,
    }
}

/// # Safety
/// `buf` must be valid for reads of `buf.len` bytes.
unsafe fn copy_to_vec(buf: RawBuf) -> Vec<u8> {
    if buf.len == 0 {
        return Vec::new();
    }
    // SAFETY: per the function contract.
    unsafe { std::slice::from_raw_parts(buf.ptr as *const u8, buf.len) }.to_vec()
}

#[allow(dead_code)]
const _: () = assert!(HEADER_LEN == 48);
