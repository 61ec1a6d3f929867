//! The engine's collective side: starting, stepping and finishing collective schedules
//! (`coll::schedule`) and direct collectives (`coll::direct`), their receives through the
//! collective mailbox, and the shared-memory flag barrier. The point-to-point protocol
//! these ride on is in `protocol.rs`; nothing here names a transport except the flag
//! barrier, which is a shared-memory algorithm by nature.

use crate::coll::algorithms::tuning as coll_tuning;
use crate::coll::direct::{Direct, DirectOp};
use crate::coll::flag_barrier;
use crate::coll::mailbox::{Early, EarlyMsg, Posted, RecvState};
use crate::coll::schedule::Pending;
use crate::coll::{Action, CollComm, Schedule};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::header::{Header, Kind, FLAG_SYNC};
use crate::matching::Envelope;
use crate::protocol::{Engine, Route, Unexpected};
use crate::request::{Op, RawBuf, ReqId, Request, SendMode, State};
use crate::transport::{Link, Via};

impl Engine {
    /// An empty schedule for a collective on `comm` with `tag`, recycled when possible (its
    /// vectors and temporary arena keep their capacity, so a repeated collective allocates
    /// nothing).
    pub fn new_schedule(&mut self, comm: CollComm, tag: i32) -> Box<Schedule> {
        let flat = crate::coll::algorithms::flat(self.oversubscribed, comm.size(), || self.on_my_host(&comm.world_ranks) && comm.remote.as_ref().is_none_or(|r| self.on_my_host(r)));
        let mut s = match self.colls.spare.pop() {
            Some(mut s) => {
                s.comm = comm;
                s.tag = tag;
                s
            }
            None => Box::new(Schedule::new(comm, tag)),
        };
        s.flat = flat;
        s
    }

    /// Returns a schedule that ran to completion (or never started) to the spare pool.
    pub fn recycle_schedule(&mut self, mut s: Box<Schedule>) {
        let t = coll_tuning();
        if self.colls.spare.len() < t.spare_schedules {
            s.recycle(t.keep_temp);
            self.colls.spare.push(s);
        }
    }

    /// Starts collective schedule `s`; returns the request that completes with it.
    pub fn start_schedule(&mut self, s: Schedule) -> MpiResult<ReqId> {
        self.start_boxed(Box::new(s))
    }

    /// Starts schedule `s` (from `new_schedule`) as a nonblocking collective; returns the
    /// request that completes with it.
    pub fn start_boxed(&mut self, s: Box<Schedule>) -> MpiResult<ReqId> {
        let rid = self.create(Op::Coll, false);
        if let Err(e) = self.run_schedule(rid, s) {
            self.reqs.discard(rid);
            return Err(e);
        }
        Ok(rid)
    }

    /// Runs schedule `s` as request `rid`'s operation (a new nonblocking collective, or a
    /// start of a persistent one): `rid` is active until the schedule ends. On an error
    /// here `rid` is left inactive.
    pub fn run_schedule(&mut self, rid: ReqId, mut s: Box<Schedule>) -> MpiResult<()> {
        let r = self.reqs.get_mut(rid).ok_or_else(|| MpiError::new(ErrorClass::Request, "invalid request"))?;
        r.state = State::CollActive;
        r.status = Default::default();
        match self.advance(&mut s) {
            Ok(true) => {
                self.complete(rid);
                self.recycle_schedule(s);
            }
            Ok(false) => self.colls.active.push((rid, s)),
            Err(e) => {
                if let Some(r) = self.reqs.get_mut(rid) {
                    r.state = State::Inactive;
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// Blocking collectives: advances schedule `s`, held by the caller (no request), as far
    /// as it goes without waiting; true when finished. Call it again after progress.
    pub fn advance_schedule(&mut self, s: &mut Schedule) -> MpiResult<bool> {
        self.advance(s)
    }

    /// Advances one schedule as far as it goes without waiting; true when finished.
    ///
    /// A round posts its receives first (an arrival then lands in the receive buffer
    /// instead of being copied aside as unexpected), then its sends: eager sends go out at
    /// once with no request; only transfers that cannot complete now get a request.
    fn advance(&mut self, s: &mut Schedule) -> MpiResult<bool> {
        loop {
            if s.in_flight {
                if !s.pending_mut().iter().all(|&p| self.coll_done(p)) {
                    return Ok(false);
                }
                let mut failed = None;
                for p in s.pending_mut().drain(..) {
                    failed = failed.or(self.coll_finish(p));
                }
                // A failed transfer does not stop the schedule: the peers it still serves
                // (a subtree of a broadcast) would wait forever. The error is reported at the end.
                s.failed = s.failed.or(failed);
                s.in_flight = false;
                s.finish_round();
            }
            if s.done() {
                return match s.failed.take() {
                    Some(e) => Err(MpiError::new(e, MISMATCH)),
                    None => Ok(true),
                };
            }
            let round = s.round_range();
            let (ctx, me, tag) = (s.comm.ctx, s.comm.rank as i32, s.tag);
            for k in round.clone() {
                if let Action::Recv { from, data } = s.action(k) {
                    let buf = RawBuf { ptr: s.ptr(data), len: data.len };
                    let (_, from, tag) = s.comm.route(from, tag);
                    if let Some(slot) = self.coll_post_recv(buf, ctx, from as i32, tag) {
                        s.pending_mut().push(Pending::Recv(slot));
                    }
                }
            }
            for k in round {
                if let Action::Send { to, data, mode } = s.action(k) {
                    let buf = RawBuf { ptr: s.ptr(data), len: data.len };
                    let (dest_world, _, tag) = s.comm.route(to, tag);
                    if !self.try_send_now(buf, dest_world, ctx, me, tag) {
                        let q = self.create(Op::Send { buf, dest_world, ctx, src_rank: me, tag, mode }, false);
                        s.pending_mut().push(Pending::Req(q));
                        if let Err(e) = self.start(q) {
                            // The schedule is dropped on error: nothing may point into it.
                            for p in s.pending_mut().drain(..) {
                                if let Pending::Recv(slot) = p {
                                    self.colls.mail.cancel(slot);
                                }
                            }
                            return Err(e);
                        }
                    }
                }
            }
            s.in_flight = true;
        }
    }

    /// Whether a pending transfer of a schedule has completed.
    #[inline]
    pub(crate) fn coll_done(&self, p: Pending) -> bool {
        let rid = match p {
            Pending::Req(q) => q,
            Pending::Recv(i) => match self.colls.mail.slot(i) {
                RecvState::Waiting => return false,
                RecvState::Req(q) => q,
                _ => return true,
            },
        };
        self.reqs.get(rid).is_none_or(|r| r.is_complete())
    }

    /// Releases a completed pending transfer; its error, if it failed.
    pub(crate) fn coll_finish(&mut self, p: Pending) -> Option<ErrorClass> {
        let rid = match p {
            Pending::Req(q) => q,
            Pending::Recv(i) => {
                let st = self.colls.mail.slot(i);
                self.colls.mail.free_slot(i);
                match st {
                    RecvState::Req(q) => q,
                    RecvState::Failed(e) => return Some(e),
                    _ => return None,
                }
            }
        };
        self.reqs.remove(rid).and_then(|r| r.status.error.or_else(|| short_receive(&r)))
    }

    /// Posts a collective receive into `buf`: matched at once against early messages (then
    /// None, unless it failed or needs a rendezvous), else queued in the mailbox. Returns
    /// the mailbox slot to watch.
    pub(crate) fn coll_post_recv(&mut self, buf: RawBuf, ctx: u32, src: i32, tag: i32) -> Option<u32> {
        let state = match self.colls.mail.take_early(ctx, src, tag) {
            Some(Early { msg: EarlyMsg::Eager { data, sync }, .. }) => {
                let state = coll_copy(buf, &data);
                self.colls.mail.recycle(data);
                if let Some((w, s)) = sync {
                    self.ack_sync(w, s);
                }
                if state == RecvState::Done {
                    return None;
                }
                state
            }
            Some(Early { msg: EarlyMsg::Rts { world, sreq, len, addr, key, flags }, .. }) => {
                RecvState::Req(self.coll_rendezvous(buf, ctx, src, tag, Unexpected::Rts { world, sreq, len, addr, key, flags }))
            }
            None => {
                let slot = self.colls.mail.new_slot(RecvState::Waiting);
                self.colls.mail.post(Posted { ctx, src, tag, buf, slot });
                return Some(slot);
            }
        };
        Some(self.colls.mail.new_slot(state))
    }

    /// A message on a collective context arrived (eager or rendezvous offer): delivered to
    /// the earliest matching posted receive, else kept as early.
    pub(crate) fn coll_arrival(&mut self, world: usize, hdr: &Header, payload: *const u8, len: usize) {
        let (ctx, src, tag) = (hdr.ctx, hdr.src, hdr.tag);
        let sync = (hdr.flags & FLAG_SYNC != 0).then_some((world, hdr.sreq));
        let rts = (hdr.kind == Kind::Rts).then(|| Unexpected::offer(world, hdr));
        // SAFETY: the transport holds `len` payload bytes until release.
        let data = unsafe { std::slice::from_raw_parts(payload, len) };
        match (self.colls.mail.take_posted(ctx, src, tag), rts) {
            (Some(p), None) => {
                let state = coll_copy(p.buf, data);
                self.colls.mail.set_slot(p.slot, state);
                if let Some((w, s)) = sync {
                    self.ack_sync(w, s);
                }
            }
            (Some(p), Some(offer)) => {
                let rid = self.coll_rendezvous(p.buf, ctx, src, tag, offer);
                self.colls.mail.set_slot(p.slot, RecvState::Req(rid));
            }
            (None, None) => {
                let data = self.colls.mail.copy_of(data);
                self.colls.mail.push_early(Early { ctx, src, tag, msg: EarlyMsg::Eager { data, sync } });
            }
            (None, Some(Unexpected::Rts { world, sreq, len, addr, key, flags })) => {
                self.colls.mail.push_early(Early { ctx, src, tag, msg: EarlyMsg::Rts { world, sreq, len, addr, key, flags } });
            }
            (None, Some(Unexpected::Pushed { .. })) => self.hold_pushed(world, hdr),
            (None, Some(Unexpected::Eager { .. })) => unreachable!("offers are rendezvous"),
        }
    }

    /// A receive request for a matched rendezvous offer, started on it.
    fn coll_rendezvous(&mut self, buf: RawBuf, ctx: u32, src: i32, tag: i32, offer: Unexpected) -> ReqId {
        let rid = self.create(Op::Recv { buf, ctx, src, tag }, false);
        self.deliver(rid, Envelope { ctx, src, tag }, offer);
        rid
    }

    /// Advances a small blocking collective run without a schedule (`coll::direct`) as far
    /// as it goes without waiting; true when finished. On an error its receive is withdrawn
    /// (nothing points into it any more).
    pub fn advance_direct(&mut self, d: &mut Direct) -> MpiResult<bool> {
        let r = self.step_direct(d);
        if r.is_err() {
            if let Some(slot) = d.recv.take() {
                self.colls.mail.cancel(slot);
            }
        }
        r
    }

    /// Whether a blocking barrier over the ranks `world` can use shared-memory flags
    /// (`DirectOp::BarrierShm`): all on this node, at most `SHM_BARRIER_MAX` of them, not
    /// oversubscribed (a flag barrier's waits never sleep, which suits one rank per CPU
    /// only; the flat message barrier serves oversubscribed runs) and below
    /// `MPI_THREAD_MULTIPLE` (one arrival word per process).
    pub fn flag_barrier_fits(&self, world: &[usize]) -> bool {
        static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let max = *MAX.get_or_init(|| crate::config::config().get("SHM_BARRIER_MAX"));
        (2..=max).contains(&world.len())
            && self.net.shm.is_some()
            && !self.oversubscribed
            && crate::runtime::thread_level() < crate::runtime::THREAD_MULTIPLE
            && world.iter().all(|&w| matches!(self.routes.get(w), Some(Route::Peer(Link { via: Via::Shm, .. }) | Route::Local)))
    }

    /// One step of a `BarrierShm` (see `coll/flag_barrier.rs`); true when it is over.
    fn step_flag_barrier(&mut self, d: &mut Direct) -> bool {
        let token = flag_barrier::token(d.ctx, d.tag);
        let shm = self.net.shm.as_mut().expect("flag barrier without shared memory");
        let me = shm.local_rank();
        let local = |w: usize| match self.routes[w] {
            Route::Peer(Link { via: Via::Shm, peer }) => peer,
            _ => me,
        };
        if d.rank != 0 {
            if !d.in_flight {
                flag_barrier::arrive(shm, token);
                d.in_flight = true;
            }
            return flag_barrier::released(shm, token);
        }
        if d.round == 0 {
            shm.hold_awake(true);
            d.round = 1;
        }
        while d.round < d.size() {
            if !flag_barrier::arrived(shm, local(d.world[d.round]), token) {
                return false;
            }
            d.round += 1;
        }
        for k in 1..d.size() {
            flag_barrier::release(shm, local(d.world[k]), token);
        }
        shm.hold_awake(false);
        true
    }

    /// This rank frees a communicator with collective context `coll_ctx`: its flag-barrier
    /// words must not carry that context's tokens into a later communicator.
    pub fn forget_context(&mut self, coll_ctx: u32) {
        if let Some(shm) = self.net.shm.as_ref() {
            flag_barrier::forget(shm, coll_ctx);
        }
    }

    fn step_direct(&mut self, d: &mut Direct) -> MpiResult<bool> {
        if let DirectOp::BarrierShm = d.op {
            return Ok(self.step_flag_barrier(d));
        }
        loop {
            if d.in_flight {
                if d.recv.is_some_and(|slot| !self.coll_done(Pending::Recv(slot))) {
                    return Ok(false);
                }
                if !d.sends[..d.nsends].iter().all(|&q| self.coll_done(Pending::Req(q))) {
                    return Ok(false);
                }
                let mut failed = d.recv.take().and_then(|slot| self.coll_finish(Pending::Recv(slot)));
                for k in 0..d.nsends {
                    failed = failed.or(self.coll_finish(Pending::Req(d.sends[k])));
                }
                d.nsends = 0;
                d.failed = d.failed.or(failed); // reported at the end, as for schedules
                d.in_flight = false;
                if let (DirectOp::Reduce { op, elem, .. } | DirectOp::ReduceFlat { op, elem, .. }, true) = (d.op, d.received) {
                    // SAFETY: `tmp` holds a child's `len` bytes, `buf` this rank's
                    // accumulator of `len` bytes; the C layer validated (op, elem).
                    let _ = unsafe { crate::op::reduce(op, elem, d.tmp, d.buf, d.len / elem.size()) };
                }
                if let DirectOp::Allreduce { op, elem } = d.op {
                    let partner = d.rank ^ (1 << d.round);
                    let (tmp, buf, count) = (d.tmp_ptr(), d.buf, d.len / elem.size());
                    // SAFETY: `buf` is the caller's vector of `len` bytes, `tmp` holds the
                    // partner's (len ≤ DIRECT_TMP); the C layer validated (op, elem).
                    unsafe {
                        if partner < d.rank {
                            let _ = crate::op::reduce(op, elem, tmp, buf, count); // lower ∘ mine
                        } else {
                            let _ = crate::op::reduce(op, elem, buf, tmp, count);
                            crate::copy::copy_bytes(tmp, buf, d.len);
                        }
                    }
                }
                d.round += 1;
            }
            if d.round >= d.rounds() {
                return match d.failed.take() {
                    Some(e) => Err(MpiError::new(e, MISMATCH)),
                    None => Ok(true),
                };
            }
            let (n, me, r) = (d.size(), d.rank, d.round);
            d.received = false;
            match d.op {
                DirectOp::Reduce { root, .. } => {
                    let vr = (me + n - root) % n;
                    let mask = 1 << r;
                    let real = |v: usize| (v + root) % n;
                    if vr & mask != 0 {
                        self.direct_send(d, real(vr - mask), RawBuf { ptr: d.buf, len: d.len })?;
                    } else if vr + mask < n {
                        let tmp = RawBuf { ptr: d.tmp, len: d.len };
                        d.recv = self.coll_post_recv(tmp, d.ctx, real(vr + mask) as i32, d.tag);
                        d.received = true;
                    }
                }
                DirectOp::Allgather { blk } => {
                    let mask = 1 << r;
                    let partner = me ^ mask;
                    let (mine, theirs) = (me & !(mask - 1), partner & !(mask - 1));
                    // SAFETY (pointer arithmetic): both ranges lie in the caller's buffer of n
                    // blocks.
                    let at = |b: usize| RawBuf { ptr: d.buf.wrapping_add(b * blk), len: mask * blk };
                    let (out, inn) = (at(mine), at(theirs));
                    d.recv = self.coll_post_recv(inn, d.ctx, partner as i32, d.tag);
                    self.direct_send(d, partner, out)?;
                }
                DirectOp::Barrier => {
                    let k = 1 << r;
                    d.recv = self.coll_post_recv(RawBuf::EMPTY, d.ctx, ((me + n - k) % n) as i32, d.tag);
                    self.direct_send(d, (me + k) % n, RawBuf::EMPTY)?;
                }
                DirectOp::Allreduce { .. } => {
                    let partner = me ^ (1 << r);
                    let tmp = RawBuf { ptr: d.tmp_ptr(), len: d.len };
                    d.recv = self.coll_post_recv(tmp, d.ctx, partner as i32, d.tag);
                    self.direct_send(d, partner, RawBuf { ptr: d.buf, len: d.len })?;
                }
                DirectOp::BarrierShm => unreachable!("flag barriers do not run in rounds"),
                DirectOp::BarrierFlat => {
                    if me != 0 {
                        d.recv = self.coll_post_recv(RawBuf::EMPTY, d.ctx, 0, d.tag);
                        self.direct_send(d, 0, RawBuf::EMPTY)?;
                    } else if r + 1 < n {
                        d.recv = self.coll_post_recv(RawBuf::EMPTY, d.ctx, (r + 1) as i32, d.tag);
                    } else {
                        for k in 1..n {
                            self.direct_send(d, k, RawBuf::EMPTY)?;
                        }
                    }
                }
                DirectOp::BcastFlat { root } => {
                    let buf = RawBuf { ptr: d.buf, len: d.len };
                    if me == root {
                        for k in 1..n {
                            self.direct_send(d, (root + k) % n, buf)?;
                        }
                    } else {
                        d.recv = self.coll_post_recv(buf, d.ctx, root as i32, d.tag);
                    }
                }
                DirectOp::ScatterFlat { root, blk } => {
                    if me == root {
                        for k in 1..n {
                            let to = (root + k) % n;
                            // SAFETY: the root's buffer holds n blocks of `blk` bytes.
                            let ptr = unsafe { d.buf.add(to * blk) };
                            self.direct_send(d, to, RawBuf { ptr, len: blk })?;
                        }
                    } else {
                        d.recv = self.coll_post_recv(RawBuf { ptr: d.buf, len: d.len }, d.ctx, root as i32, d.tag);
                    }
                }
                DirectOp::ReduceFlat { root, .. } => {
                    if me == root {
                        let tmp = RawBuf { ptr: d.tmp, len: d.len };
                        d.recv = self.coll_post_recv(tmp, d.ctx, ((root + r + 1) % n) as i32, d.tag);
                        d.received = true;
                    } else {
                        self.direct_send(d, root, RawBuf { ptr: d.buf, len: d.len })?;
                    }
                }
                DirectOp::Bcast { root } => {
                    let vr = (me + n - root) % n;
                    let buf = RawBuf { ptr: d.buf, len: d.len };
                    // Binomial tree: receive from the parent (vr minus its lowest set bit),
                    // then send to the children vr + m for m below that bit.
                    let low = if vr == 0 { n.next_power_of_two() } else { vr & vr.wrapping_neg() };
                    if r == 0 && vr != 0 {
                        d.recv = self.coll_post_recv(buf, d.ctx, ((vr - low + root) % n) as i32, d.tag);
                    } else {
                        let mut m = low >> 1;
                        while m > 0 {
                            if vr + m < n {
                                self.direct_send(d, (vr + m + root) % n, buf)?;
                            }
                            m >>= 1;
                        }
                    }
                }
            }
            d.in_flight = true;
        }
    }

    /// A send of a direct collective: eager at once with no request when possible.
    fn direct_send(&mut self, d: &mut Direct, to: usize, buf: RawBuf) -> MpiResult<()> {
        let dest_world = d.world[to];
        if self.try_send_now(buf, dest_world, d.ctx, d.rank as i32, d.tag) {
            return Ok(());
        }
        if d.nsends == d.sends.len() {
            return Err(MpiError::new(ErrorClass::Intern, "too many queued sends in one round of a direct collective"));
        }
        let q = self.create(Op::Send { buf, dest_world, ctx: d.ctx, src_rank: d.rank as i32, tag: d.tag, mode: SendMode::Standard }, false);
        d.sends[d.nsends] = q;
        d.nsends += 1;
        self.start(q)
    }

    pub(crate) fn advance_collectives(&mut self) -> usize {
        let mut finished = 0;
        let mut i = 0;
        // No allocation per poll: schedules are taken out one at a time (advancing one may
        // start requests, which needs `&mut self`) and put back unless finished.
        while i < self.colls.active.len() {
            let (rid, mut s) = self.colls.active.swap_remove(i);
            let outcome = self.advance(&mut s);
            match outcome {
                Ok(false) => {
                    self.colls.active.push((rid, s));
                    let last = self.colls.active.len() - 1;
                    self.colls.active.swap(i, last);
                    i += 1;
                    continue;
                }
                Ok(true) => self.recycle_schedule(s),
                Err(e) => {
                    if let Some(r) = self.reqs.get_mut(rid) {
                        r.status.error = Some(e.class);
                    }
                }
            }
            self.complete(rid);
            finished += 1;
        }
        finished
    }
}

/// The error of a collective whose transfers failed (in practice: sizes that differ between
/// ranks).
const MISMATCH: &str = "a message inside a collective was longer or shorter than expected: do all ranks pass matching counts and datatypes?";

/// Every collective receive expects exactly its buffer's length: a message that is
/// shorter means the ranks disagree about counts or datatypes (as a longer one does), an
/// error MPICH reports too (its errors/coll/bcastlength) rather than leaving stale data.
fn short_receive(r: &Request) -> Option<ErrorClass> {
    match r.op {
        Op::Recv { buf, .. } if r.status.bytes < buf.len => Some(ErrorClass::Other),
        _ => None,
    }
}

/// Copies an arrived collective payload into its receive buffer: Done, or Failed when its
/// length is not the buffer's (the ranks disagree about the sizes).
fn coll_copy(buf: RawBuf, data: &[u8]) -> RecvState {
    if data.len() > buf.len {
        return RecvState::Failed(ErrorClass::Truncate);
    }
    if data.len() < buf.len {
        return RecvState::Failed(ErrorClass::Other);
    }
    if !data.is_empty() {
        // SAFETY: the receive buffer is valid for `buf.len` ≥ data.len() bytes.
        unsafe { crate::copy::copy_bytes(data.as_ptr(), buf.ptr, data.len()) };
    }
    RecvState::Done
}
