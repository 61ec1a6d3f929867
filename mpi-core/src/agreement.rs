//! Context-id agreement as a state machine of collective schedules.
//!
//! Every communicator constructor ends with its members agreeing on a free context slot:
//! they AND their free-slot masks (`comm::ContextAlloc`) and take the lowest common slot.
//! On an intercommunicator the two groups AND locally, their leaders swap and combine the
//! results, and each leader broadcasts the outcome to its group. A round that ends empty
//! (some member offered nothing: see `ContextAlloc` for the turn-taking) is run again.
//!
//! Written as a state machine so that `MPI_Comm_idup` does not block: its agreement sits
//! in `Runtime::pending_comms` and moves on in every progress pass; the blocking
//! constructors run the same machine to completion in a wait.
//!
//! Every round of one agreement reuses its tags: rounds follow each other in the same
//! order on every member, and messages between two processes on one (context, tag) are
//! matched in order, so a later round's traffic can never match an earlier round's.

use crate::coll::schedule::Reducer;
use crate::coll::{algorithms, CollComm, Slice};
use crate::comm::{ContextAlloc, Held, MASK_WORDS};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::op::{Elem, PredefOp};
use crate::request::ReqId;
use crate::runtime::Runtime;

/// The leaders' exchange of an intercommunicator agreement.
#[derive(Clone)]
pub struct LeaderLink {
    /// This process (a leader) as seen on the communicator that reaches the other leader.
    pub view: CollComm,
    /// The other leader's rank in `view`.
    pub peer: usize,
    pub tag: i32,
}

/// Where an agreement stands.
enum Stage {
    /// Next: offer a mask and start a round.
    Offer,
    /// The local AND is running.
    Reduce(ReqId),
    /// The leaders' swap is running (leaders only).
    Leaders(ReqId),
    /// The broadcast of the combined mask is running.
    Bcast(ReqId),
    Done,
}

/// One context-id agreement.
pub struct Agreement {
    /// Priority key among this process's concurrent agreements (`ContextAlloc`): the same
    /// value on every member, distinct between agreements that may overlap.
    key: u64,
    /// The local group (a leader is rank 0) and the tag of its traffic.
    local: CollComm,
    tag: i32,
    /// The leaders' exchange, on the leaders of an intercommunicator agreement.
    leader: Option<LeaderLink>,
    /// A broadcast from local rank 0 follows the AND (and the leaders' swap): set on every
    /// member of an agreement spanning two groups.
    two_groups: bool,
    /// The mask offered, then agreed; the last word is ANDed "every process offered its
    /// real mask". Boxed: schedules point into it while they run.
    buf: Box<[u64; MASK_WORDS + 1]>,
    theirs: Box<[u64; MASK_WORDS + 1]>,
    /// What this process offered in the current round.
    held: Held,
    /// The current round is the agreement's first.
    first: bool,
    stage: Stage,
}

impl Agreement {
    pub fn new(key: u64, local: CollComm, tag: i32, leader: Option<LeaderLink>, two_groups: bool) -> Agreement {
        Agreement { key, local, tag, leader, two_groups, buf: Box::new([0; MASK_WORDS + 1]), theirs: Box::new([0; MASK_WORDS + 1]), held: Held::Nothing, first: true, stage: Stage::Offer }
    }

    /// The priority key of an agreement whose traffic runs under `tag` on the collective
    /// context of a communicator with point-to-point context `ctx`.
    pub fn key_of(ctx: u32, tag: i32) -> u64 {
        ((ctx as u64) << 32) | tag as u32 as u64
    }

    /// Moves the agreement on as far as it goes without waiting. `Some` once it ended: the
    /// slot taken (already marked used), or the error (nothing taken).
    pub fn poll(&mut self, rt: &mut Runtime) -> Option<MpiResult<usize>> {
        match self.step(rt) {
            Ok(Some(slot)) => {
                self.stage = Stage::Done;
                Some(Ok(slot))
            }
            Ok(None) => None,
            Err(e) => {
                self.stage = Stage::Done;
                rt.comms.contexts.abandon(self.key, self.held);
                Some(Err(e))
            }
        }
    }

    fn step(&mut self, rt: &mut Runtime) -> MpiResult<Option<usize>> {
        loop {
            match self.stage {
                Stage::Offer => {
                    if self.alone() {
                        if let Some(slot) = rt.comms.contexts.take_local() {
                            return Ok(Some(slot));
                        }
                    }
                    let (mask, held) = rt.comms.contexts.offer(self.key, self.first);
                    self.held = held;
                    self.buf[..MASK_WORDS].copy_from_slice(&mask);
                    // "Every member offered all its main slots": an empty result is then final.
                    self.buf[MASK_WORDS] = (held == Held::Main) as u64;
                    let b = slice(&mut self.buf);
                    let mut s = rt.engine.new_schedule(self.local.clone(), self.tag);
                    s.set_reducer(Reducer::Predef { op: PredefOp::Band, elem: Elem::Uint64 });
                    algorithms::allreduce(&mut s, b, b, 8, true);
                    self.stage = Stage::Reduce(rt.engine.start_boxed(s)?);
                }
                Stage::Reduce(rid) => {
                    if !finished(rt, rid)? {
                        return Ok(None);
                    }
                    match &self.leader {
                        Some(l) if self.local.rank == 0 => {
                            let mut s = rt.engine.new_schedule(l.view.clone(), l.tag);
                            s.send(l.peer, slice(&mut self.buf));
                            s.recv(l.peer, slice(&mut self.theirs));
                            self.stage = Stage::Leaders(rt.engine.start_boxed(s)?);
                        }
                        _ if self.two_groups => self.start_bcast(rt)?,
                        _ => {
                            if let Some(slot) = self.conclude(rt)? {
                                return Ok(Some(slot));
                            }
                        }
                    }
                }
                Stage::Leaders(rid) => {
                    if !finished(rt, rid)? {
                        return Ok(None);
                    }
                    for (a, b) in self.buf.iter_mut().zip(self.theirs.iter()) {
                        *a &= *b;
                    }
                    if self.two_groups {
                        self.start_bcast(rt)?;
                    } else if let Some(slot) = self.conclude(rt)? {
                        return Ok(Some(slot));
                    }
                }
                Stage::Bcast(rid) => {
                    if !finished(rt, rid)? {
                        return Ok(None);
                    }
                    if let Some(slot) = self.conclude(rt)? {
                        return Ok(Some(slot));
                    }
                }
                Stage::Done => return Err(MpiError::new(ErrorClass::Intern, "context agreement polled after it ended")),
            }
        }
    }

    /// This process is the agreement's only member: no consensus needed.
    fn alone(&self) -> bool {
        self.local.size() == 1 && self.leader.is_none() && !self.two_groups
    }

    /// The broadcast of the combined mask from local rank 0.
    fn start_bcast(&mut self, rt: &mut Runtime) -> MpiResult<()> {
        let mut s = rt.engine.new_schedule(self.local.clone(), self.tag);
        algorithms::bcast(&mut s, slice(&mut self.buf), 0);
        self.stage = Stage::Bcast(rt.engine.start_boxed(s)?);
        Ok(())
    }

    /// Ends a round: the slot agreed on, or `None` and the next round is due (another
    /// agreement held the real mask somewhere).
    fn conclude(&mut self, rt: &mut Runtime) -> MpiResult<Option<usize>> {
        let agreed: [u64; MASK_WORDS] = self.buf[..MASK_WORDS].try_into().unwrap();
        let (held, first) = (std::mem::replace(&mut self.held, Held::Nothing), std::mem::replace(&mut self.first, false));
        if let Some(slot) = rt.comms.contexts.conclude(self.key, held, first, &agreed) {
            return Ok(Some(slot));
        }
        if self.buf[MASK_WORDS] == 1 {
            return Err(MpiError::new(ErrorClass::Other, format!("out of communicator context ids ({} in use); free unused communicators", ContextAlloc::capacity())));
        }
        self.stage = Stage::Offer;
        Ok(None)
    }
}

/// The bytes of an agreement buffer, for a schedule.
fn slice(b: &mut [u64; MASK_WORDS + 1]) -> Slice {
    Slice::user(b.as_mut_ptr() as *const u8, b.len() * 8)
}

/// Whether schedule request `rid` has completed; finishes it if so.
fn finished(rt: &mut Runtime, rid: ReqId) -> MpiResult<bool> {
    if rt.engine.reqs.get(rid).is_some_and(|r| !r.is_complete()) {
        return Ok(false);
    }
    match rt.engine.reqs.finish(rid).and_then(|(st, _, _)| st.error) {
        Some(class) => Err(MpiError::new(class, "an internal exchange of a communicator constructor failed")),
        None => Ok(true),
    }
}
