//! Partitioned point-to-point communication (MPI-4.0 chapter 4), built from the engine's
//! ordinary messages on the communicator's collective context, in a tag range no
//! collective uses (see docs/partitioned.md):
//! - pairing: `psend_init` sends a setup message (tag `SETUP_TAG | user tag`) with the
//!   sender's partitioning and the base of the data tags it took; `precv_init` posts the
//!   receive for it. Both travel on one (context, source, tag), so pairs match in the order
//!   of their initialisation calls, as the standard asks, and init stays local;
//! - rounds: each send partition is its own message (tag `DATA_TAG | base + p`), sent when
//!   `MPI_Pready` marks it; at `MPI_Start` the receiver posts one receive per send
//!   partition straight into that partition's bytes of its buffer (of the packed stream,
//!   staged, for a non-contiguous datatype). A receive partition has arrived once the send
//!   partitions covering its bytes have, whatever the sender has not marked yet.
//!
//! Receives on a collective context go through the collective mailbox (`coll::mailbox`),
//! as schedules' do: its transfers (`Pending`) are what a round's children are.

use crate::coll::schedule::Pending;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::protocol::{Engine, PROC_NULL_WORLD};
use crate::request::{Layout, Op, RawBuf, ReqId, SendMode, State, Status};
use std::collections::HashMap;

/// Tag of setup messages (plus the user tag modulo `PART_TAG_MASK + 1`). The collective
/// context's other tags stay below it: schedules below 2^30, constructor exchanges
/// below 0x6000_0000.
pub const SETUP_TAG: i32 = 0x6000_0000;
/// Tag of partition data (plus the sender's data tag sequence).
pub const DATA_TAG: i32 = 0x7000_0000;
pub const PART_TAG_MASK: u32 = 0x0fff_ffff;

/// The setup message: send partitions, bytes per send partition, data tag base.
type Setup = [u64; 3];

/// How a partitioned request reaches its partner.
enum Pairing {
    /// `MPI_PROC_NULL`: every round completes at its start (a send to `MPI_PROC_NULL`
    /// "returns as soon as possible", MPI-4.1 §3.10, so it waits for no `MPI_Pready`).
    Null,
    /// Send side: its data tags start at `base`.
    Sender { base: u32 },
    /// Receive side before the setup message arrived (its receive).
    Awaiting(Pending),
    /// Receive side, paired with a sender of `parts` partitions of `part_bytes` bytes.
    Paired { base: u32, parts: usize, part_bytes: usize },
}

/// One send partition of the current round.
#[derive(Clone, Copy)]
enum Child {
    /// Not marked ready yet (send side).
    Idle,
    /// Its message (send) or receive is in flight.
    Issued(Pending),
    /// Received when posted (its staged bytes not unpacked yet).
    Arrived,
    Done,
}

/// A partitioned request: its arguments, its pairing and its current round.
struct Partitioned {
    send: bool,
    /// World rank of the partner (`PROC_NULL_WORLD` for `MPI_PROC_NULL`).
    peer: usize,
    /// The communicator's collective context.
    ctx: u32,
    /// Send: our rank in the communicator; receive: the source's.
    label: i32,
    /// The user's tag.
    tag: i32,
    /// Contiguous buffer (`RawBuf::EMPTY` when `layout` describes it).
    buf: RawBuf,
    layout: Option<Layout>,
    parts: usize,
    part_bytes: usize,
    pairing: Pairing,
    /// The setup message (sent from / received into this heap cell).
    setup: Box<Setup>,
    /// Send side: the setup message's request until it is released.
    setup_send: Option<ReqId>,
    active: bool,
    /// Per send partition of the round.
    children: Vec<Child>,
    /// Children before this one are all `Done`.
    first_open: usize,
    remaining: usize,
    error: Option<ErrorClass>,
    /// Packed bytes of a non-contiguous buffer, or the sink of a mismatched sender's data.
    staging: Vec<u8>,
}

impl Partitioned {
    fn total(&self) -> usize {
        self.parts * self.part_bytes
    }

    /// Receive side: the sender's data go to the sink (it sends more than fits).
    fn sinks(&self) -> bool {
        matches!(self.pairing, Pairing::Paired { parts, part_bytes, .. } if parts * part_bytes > self.total())
    }
}

/// The engine's partitioned requests, by the id of the user's request.
#[derive(Default)]
pub struct Parts {
    ops: HashMap<ReqId, Partitioned>,
    /// Requests with a round in progress (advanced by `Engine::progress`).
    active: Vec<ReqId>,
    /// Setup requests of freed partitioned requests, dropped once complete (a receive still
    /// posted must keep its buffer).
    orphans: Vec<(Pending, Box<Setup>)>,
    /// Next data tag of this process as a sender.
    next_tag: u32,
}

impl Parts {
    /// Whether `Engine::progress` has anything to advance.
    pub fn busy(&self) -> bool {
        !self.active.is_empty() || !self.orphans.is_empty()
    }
}

/// Where a partitioned request's arguments come from (see `psend_init`).
pub struct PartArgs {
    pub buf: RawBuf,
    pub layout: Option<Layout>,
    pub parts: usize,
    pub part_bytes: usize,
    /// Send: the destination's world rank; receive: the source's (or `PROC_NULL_WORLD`).
    pub peer: usize,
    /// The communicator's collective context.
    pub ctx: u32,
    /// Send: our rank in the communicator; receive: the source's rank in it.
    pub label: i32,
    pub tag: i32,
    /// The user request's owner (`Request::owner`).
    pub owner: i64,
}

impl Engine {
    /// `MPI_Psend_init`: an inactive partitioned send request; its setup message leaves now.
    pub fn psend_init(&mut self, a: PartArgs) -> ReqId {
        let mut p = self.new_partitioned(true, &a);
        if a.peer != PROC_NULL_WORLD {
            let base = self.parts.next_tag;
            self.parts.next_tag = (base.wrapping_add(a.parts as u32)) & PART_TAG_MASK;
            *p.setup = [a.parts as u64, a.part_bytes as u64, base as u64];
            let msg = RawBuf { ptr: p.setup.as_mut_ptr() as *mut u8, len: std::mem::size_of::<Setup>() };
            let op = Op::Send { buf: msg, dest_world: a.peer, ctx: a.ctx, src_rank: a.label, tag: setup_tag(a.tag), mode: SendMode::Standard };
            let rid = self.create(op, false);
            // A failed start (an unreachable peer) needs no report here: each round's data
            // sends fail the same way and report it.
            match self.start(rid) {
                Ok(()) => p.setup_send = Some(rid),
                Err(_) => self.reqs.discard(rid),
            }
            p.pairing = Pairing::Sender { base };
        }
        self.insert_partitioned(p, a.owner)
    }

    /// `MPI_Precv_init`: an inactive partitioned receive request, whose setup receive is
    /// posted now (so pairs match in init order).
    pub fn precv_init(&mut self, a: PartArgs) -> ReqId {
        let mut p = self.new_partitioned(false, &a);
        if a.peer != PROC_NULL_WORLD {
            let cell = RawBuf { ptr: p.setup.as_mut_ptr() as *mut u8, len: std::mem::size_of::<Setup>() };
            p.pairing = match self.coll_post_recv(cell, a.ctx, a.label, setup_tag(a.tag)) {
                Some(slot) => Pairing::Awaiting(Pending::Recv(slot)),
                None => paired(&p.setup),
            };
        }
        self.insert_partitioned(p, a.owner)
    }

    fn new_partitioned(&self, send: bool, a: &PartArgs) -> Partitioned {
        Partitioned {
            send,
            peer: a.peer,
            ctx: a.ctx,
            label: a.label,
            tag: a.tag,
            buf: a.buf,
            layout: a.layout.clone(),
            parts: a.parts,
            part_bytes: a.part_bytes,
            pairing: Pairing::Null,
            setup: Box::new([0; 3]),
            setup_send: None,
            active: false,
            children: Vec::new(),
            first_open: 0,
            remaining: 0,
            error: None,
            staging: Vec::new(),
        }
    }

    fn insert_partitioned(&mut self, p: Partitioned, owner: i64) -> ReqId {
        let rid = self.create(Op::Partitioned, true);
        self.reqs.get_mut(rid).expect("just created").owner = owner;
        self.parts.ops.insert(rid, p);
        rid
    }

    /// Whether request `rid` is partitioned: Some(is a send).
    pub fn partitioned_side(&self, rid: ReqId) -> Option<bool> {
        self.parts.ops.get(&rid).map(|p| p.send)
    }

    /// `MPI_Start` of partitioned request `rid` (inactive: checked by the caller).
    pub fn part_start(&mut self, rid: ReqId) -> MpiResult<()> {
        let r = self.reqs.get_mut(rid).ok_or_else(|| MpiError::new(ErrorClass::Request, "invalid request"))?;
        if r.state != State::Inactive {
            return Err(MpiError::new(ErrorClass::Request, "MPI_Start on a partitioned request that is still active (not completed by a wait or test)"));
        }
        r.status = Status::default();
        r.state = State::CollActive;
        let p = self.parts.ops.get_mut(&rid).expect("partitioned request");
        p.active = true;
        p.error = None;
        p.children.clear();
        p.first_open = 0;
        p.remaining = 0;
        if p.send && matches!(p.pairing, Pairing::Null) {
            p.children = vec![Child::Done; p.parts];
        } else if p.send {
            p.children = vec![Child::Idle; p.parts];
            p.remaining = p.parts;
            if p.layout.is_some() {
                p.staging.resize(p.total(), 0);
            }
        }
        self.parts.active.push(rid);
        if !p.send {
            self.pair(rid);
        }
        self.advance_part(rid);
        Ok(())
    }

    /// Receive side: takes the setup message if it arrived and, in a round, posts the
    /// receives of the send partitions.
    fn pair(&mut self, rid: ReqId) {
        if let Pairing::Awaiting(setup) = self.parts.ops[&rid].pairing {
            if !self.coll_done(setup) {
                return;
            }
            let err = self.coll_finish(setup);
            let p = self.parts.ops.get_mut(&rid).expect("partitioned request");
            p.pairing = paired(&p.setup);
            p.error = p.error.or(err);
        }
        let p = self.parts.ops.get_mut(&rid).expect("partitioned request");
        let Pairing::Paired { base, parts, part_bytes } = p.pairing else { return };
        if !p.active || !p.children.is_empty() {
            return;
        }
        // Sizes must match. A larger sender's data go to a sink (so it completes); a smaller
        // one's arrive, and the receive reports the mismatch all the same (as MPICH does).
        let theirs = parts * part_bytes;
        let sink = theirs > p.total();
        if theirs != p.total() {
            p.error = Some(if sink { ErrorClass::Truncate } else { ErrorClass::Other });
        }
        let staged = sink || p.layout.is_some();
        if staged {
            p.staging.resize(theirs, 0);
        }
        let target = if staged { p.staging.as_mut_ptr() } else { p.buf.ptr };
        let (ctx, src) = (p.ctx, p.label);
        let mut children = Vec::with_capacity(parts.max(1));
        for q in 0..parts {
            let part = RawBuf { ptr: target.wrapping_add(q * part_bytes), len: part_bytes };
            children.push(match self.coll_post_recv(part, ctx, src, data_tag(base, q)) {
                Some(slot) => Child::Issued(Pending::Recv(slot)),
                None => Child::Arrived,
            });
        }
        if parts == 0 {
            // Nothing to receive: `advance_part` completes the round.
            children.push(Child::Done);
        }
        let p = self.parts.ops.get_mut(&rid).expect("partitioned request");
        p.remaining = parts;
        p.children = children;
    }

    /// `MPI_Pready` (and its range and list forms): marks send partitions ready and sends
    /// them. Checked first, so an error marks none.
    pub fn pready(&mut self, rid: ReqId, partitions: &[usize]) -> MpiResult<()> {
        let p = self.parts.ops.get(&rid).filter(|p| p.send).ok_or_else(|| MpiError::new(ErrorClass::Request, "not a partitioned send request (from MPI_Psend_init)"))?;
        if let Some(&i) = partitions.iter().find(|&&i| i >= p.parts) {
            return Err(MpiError::new(ErrorClass::Arg, format!("partition {i} out of range (the request has {} partitions)", p.parts)));
        }
        if matches!(p.pairing, Pairing::Null) && self.reqs.get(rid).is_some_and(|r| r.state != State::Inactive) {
            // Its round completed at MPI_Start: marking partitions ready does nothing.
            return Ok(());
        }
        if !p.active {
            // A round whose partitions were all marked (and so sent) stays active for the
            // program until MPI_Wait/MPI_Test completes it.
            if let (Some(&i), Some(State::Complete)) = (partitions.first(), self.reqs.get(rid).map(|r| r.state)) {
                return Err(MpiError::new(ErrorClass::Arg, format!("partition {i} was already marked ready in this round (all are: complete the request with MPI_Wait or MPI_Test)")));
            }
            return Err(MpiError::new(ErrorClass::Request, "the partitioned send request is not started (call MPI_Start first)"));
        }
        let mut seen = vec![false; p.parts];
        for &i in partitions {
            if seen[i] || !matches!(p.children[i], Child::Idle) {
                return Err(MpiError::new(ErrorClass::Arg, format!("partition {i} was already marked ready in this round")));
            }
            seen[i] = true;
        }
        for &i in partitions {
            self.issue(rid, i);
        }
        self.advance_part(rid);
        Ok(())
    }

    /// Sends send partition `i` of `rid`.
    fn issue(&mut self, rid: ReqId, i: usize) {
        let p = self.parts.ops.get_mut(&rid).expect("partitioned request");
        let (off, len) = (i * p.part_bytes, p.part_bytes);
        let Pairing::Sender { base } = p.pairing else {
            p.children[i] = Child::Done;
            p.remaining -= 1;
            return;
        };
        let ptr = match &p.layout {
            Some(l) => {
                // SAFETY: the layout describes the caller's send buffer, valid while the
                // request is active; `staging` holds the whole packed stream.
                unsafe { l.dt.pack_range(l.base, l.count, off, &mut p.staging[off..off + len]) };
                p.staging.as_mut_ptr().wrapping_add(off)
            }
            None => p.buf.ptr.wrapping_add(off),
        };
        let (msg, dest, ctx, label, tag) = (RawBuf { ptr, len }, p.peer, p.ctx, p.label, data_tag(base, i));
        let child = if self.try_send_now(msg, dest, ctx, label, tag) {
            Child::Done
        } else {
            let op = Op::Send { buf: msg, dest_world: dest, ctx, src_rank: label, tag, mode: SendMode::Standard };
            let c = self.create(op, false);
            match self.start(c) {
                Ok(()) => Child::Issued(Pending::Req(c)),
                Err(e) => {
                    self.reqs.discard(c);
                    self.parts.ops.get_mut(&rid).expect("partitioned request").error.get_or_insert(e.class);
                    Child::Done
                }
            }
        };
        let p = self.parts.ops.get_mut(&rid).expect("partitioned request");
        p.children[i] = child;
        if matches!(child, Child::Done) {
            p.remaining -= 1;
        }
    }

    /// `MPI_Parrived`: whether receive partition `i` of `rid` has arrived (true for an
    /// inactive request or a complete round), as of the last `progress`.
    pub fn parrived(&self, rid: ReqId, i: usize) -> MpiResult<bool> {
        let p = self.parts.ops.get(&rid).filter(|p| !p.send).ok_or_else(|| MpiError::new(ErrorClass::Request, "not a partitioned receive request (from MPI_Precv_init)"))?;
        if i >= p.parts {
            return Err(MpiError::new(ErrorClass::Arg, format!("partition {i} out of range (the request has {} partitions)", p.parts)));
        }
        // `progress` (which the caller ran) paired the request and advanced its round.
        if !p.active {
            return Ok(true);
        }
        // Nothing has arrived before the setup message has.
        let Pairing::Paired { parts: their_parts, part_bytes: theirs, .. } = p.pairing else { return Ok(false) };
        let done = |q: usize| p.children.get(q).is_none_or(|c| matches!(c, Child::Done));
        let (from, to) = (i * p.part_bytes, (i + 1) * p.part_bytes);
        if from == to || theirs == 0 {
            // Empty partitions cover no bytes: partition i waits for the send partition at
            // the same place in the sender's partitioning (its empty message), so that it
            // arrives when the sender marks that one ready, not before (as mpi4py checks).
            return Ok(their_parts == 0 || done(i * their_parts / p.parts));
        }
        let last = (to - 1) / theirs;
        Ok((from / theirs..=last).all(done))
    }

    /// Advances the round of `rid`: releases finished children (unpacking a staged
    /// receive's bytes) and completes the user's request when all are done.
    fn advance_part(&mut self, rid: ReqId) -> usize {
        let mut events = 0;
        let Some(p) = self.parts.ops.get_mut(&rid) else { return 0 };
        if !p.active {
            return 0;
        }
        // The children are taken out while the engine checks them, so a round in which
        // nothing finished costs one map lookup, not one per partition (this runs on every
        // progress call while the round is active).
        let first = p.first_open;
        let mut children = std::mem::take(&mut p.children);
        for (q, child) in children.iter_mut().enumerate().skip(first) {
            let err = match *child {
                Child::Issued(c) if self.coll_done(c) => self.coll_finish(c),
                Child::Arrived => None,
                _ => continue,
            };
            *child = Child::Done;
            let p = self.parts.ops.get_mut(&rid).expect("partitioned request");
            if let (false, Some(l), false) = (p.send, &p.layout, p.sinks()) {
                let len = r_len(&p.pairing);
                let off = q * len;
                // SAFETY: the layout describes the caller's receive buffer, valid while the
                // request is active.
                unsafe { l.dt.unpack_range(&p.staging[off..off + len], l.base, l.count, off) };
            }
            p.error = p.error.or(err);
            p.remaining -= 1;
            events += 1;
        }
        let p = self.parts.ops.get_mut(&rid).expect("partitioned request");
        p.children = children;
        while p.children.get(p.first_open).is_some_and(|c| matches!(c, Child::Done)) {
            p.first_open += 1;
        }
        let paired = matches!(p.pairing, Pairing::Null | Pairing::Sender { .. } | Pairing::Paired { .. });
        let started = p.send || !p.children.is_empty() || matches!(p.pairing, Pairing::Null);
        if !(paired && started && p.remaining == 0) {
            return events;
        }
        p.active = false;
        let status = match (p.send, p.peer == PROC_NULL_WORLD) {
            (true, _) => Status { error: p.error, ..Status::default() },
            (false, true) => Status { source: crate::matching::PROC_NULL, tag: crate::matching::ANY_TAG, ..Status::default() },
            // A larger sender's surplus went to the sink: the buffer holds `total` bytes.
            (false, false) => Status { source: p.label, tag: p.tag, bytes: (r_len(&p.pairing) * p.children.len()).min(p.total()), error: p.error, cancelled: false, send: false },
        };
        self.parts.active.retain(|&a| a != rid);
        if let Some(r) = self.reqs.get_mut(rid) {
            r.status = status;
            self.complete(rid);
            self.net.wake_self();
        }
        events + 1
    }

    /// Advances every partitioned round in progress (from `progress`).
    #[cold]
    pub(crate) fn advance_partitioned(&mut self) -> usize {
        let mut events = 0;
        // Taken out while it is walked (no copy per progress call); a completed round's
        // `retain` then finds nothing, so the finished ones are dropped here.
        let mut active = std::mem::take(&mut self.parts.active);
        for &rid in &active {
            // A receive paired and posted in this round has nothing to pair.
            if self.parts.ops.get(&rid).is_some_and(|p| !p.send && (p.children.is_empty() || matches!(p.pairing, Pairing::Awaiting(_)))) {
                self.pair(rid);
            }
            events += self.advance_part(rid);
        }
        active.retain(|rid| self.parts.ops.get(rid).is_some_and(|p| p.active));
        active.append(&mut self.parts.active);
        self.parts.active = active;
        let mut i = 0;
        while i < self.parts.orphans.len() {
            let c = self.parts.orphans[i].0;
            if self.coll_done(c) {
                self.coll_finish(c);
                self.parts.orphans.swap_remove(i);
            } else {
                i += 1;
            }
        }
        events
    }

    /// The user freed inactive partitioned request `rid` (the caller drops the request).
    pub fn part_free(&mut self, rid: ReqId) {
        let Some(p) = self.parts.ops.remove(&rid) else { return };
        self.parts.active.retain(|&a| a != rid);
        let setup = match p.pairing {
            Pairing::Awaiting(c) => Some(c),
            _ => p.setup_send.map(Pending::Req),
        };
        if let Some(c) = setup {
            if self.coll_done(c) {
                self.coll_finish(c);
            } else {
                // Still posted or queued: its buffer must outlive it.
                self.parts.orphans.push((c, p.setup));
            }
        }
    }
}

/// The pairing a setup message describes.
fn paired(setup: &Setup) -> Pairing {
    let [parts, part_bytes, base] = *setup;
    Pairing::Paired { base: base as u32, parts: parts as usize, part_bytes: part_bytes as usize }
}

/// Bytes of one send partition, as the receive side knows them.
fn r_len(pairing: &Pairing) -> usize {
    match pairing {
        Pairing::Paired { part_bytes, .. } => *part_bytes,
        _ => 0,
    }
}

fn setup_tag(tag: i32) -> i32 {
    SETUP_TAG | (tag as u32 & PART_TAG_MASK) as i32
}

fn data_tag(base: u32, q: usize) -> i32 {
    DATA_TAG | (base.wrapping_add(q as u32) & PART_TAG_MASK) as i32
}
