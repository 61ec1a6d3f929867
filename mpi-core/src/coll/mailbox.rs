//! Matching for collective traffic. Collective contexts (odd context ids) carry only
//! schedule messages: no wildcards, no probes, few messages in flight, and each receive is
//! usually posted just before or just after its message arrives. A short list scanned in
//! order matches them for a fraction of the general matcher's cost (hash maps, a request
//! per receive, an allocation per early message), which is most of a small collective's
//! time.
//!
//! Order: arrivals and posted receives are both kept in order, and every collective
//! message of a context goes through here (eager and rendezvous alike), so MPI's
//! non-overtaking rule holds for messages with the same (context, source, tag).

use crate::error::ErrorClass;
use crate::request::{RawBuf, ReqId};
use std::collections::VecDeque;

/// Whether `ctx` is a collective context (`Comm::coll_ctx` is the odd one of a pair).
#[inline]
pub fn is_coll_ctx(ctx: u32) -> bool {
    ctx & 1 == 1
}

/// How a posted collective receive stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecvState {
    Waiting,
    Done,
    Failed(ErrorClass),
    /// Matched a rendezvous offer: request `ReqId` receives the data.
    Req(ReqId),
    /// Slot not in use.
    Free,
}

/// A receive waiting for its message; `slot` is where its outcome goes.
pub(crate) struct Posted {
    pub ctx: u32,
    pub src: i32,
    pub tag: i32,
    pub buf: RawBuf,
    pub slot: u32,
}

/// A message that arrived before its receive.
pub(crate) enum EarlyMsg {
    /// Payload copied out of the transport; `sync` = (sender world rank, sender request)
    /// to acknowledge on match.
    Eager { data: Vec<u8>, sync: Option<(usize, ReqId)> },
    /// A rendezvous offer; the data stays at the sender until matched.
    /// `flags`: the offer's `FLAG_ROOTED`/`FLAG_TO_ROOT` bits.
    Rts { world: usize, sreq: ReqId, len: usize, addr: u64, key: u32, flags: u8 },
}

pub(crate) struct Early {
    pub ctx: u32,
    pub src: i32,
    pub tag: i32,
    pub msg: EarlyMsg,
}

/// Posted receives, early messages and receive outcomes of all collective contexts.
#[derive(Default)]
pub struct Mailbox {
    posted: Vec<Posted>,
    early: VecDeque<Early>,
    slots: Vec<RecvState>,
    free_slots: Vec<u32>,
    /// Payload buffers of consumed early messages, reused so an early message allocates
    /// nothing in the steady state.
    spare_bufs: Vec<Vec<u8>>,
}

/// Spare payload buffers kept, and the largest capacity worth keeping.
const SPARE_BUFS: usize = 16;
const SPARE_BUF_MAX: usize = 64 * 1024;

impl Mailbox {
    /// A slot holding `state`.
    pub(crate) fn new_slot(&mut self, state: RecvState) -> u32 {
        match self.free_slots.pop() {
            Some(i) => {
                self.slots[i as usize] = state;
                i
            }
            None => {
                self.slots.push(state);
                (self.slots.len() - 1) as u32
            }
        }
    }

    pub(crate) fn slot(&self, i: u32) -> RecvState {
        self.slots[i as usize]
    }

    pub(crate) fn set_slot(&mut self, i: u32, state: RecvState) {
        self.slots[i as usize] = state;
    }

    pub(crate) fn free_slot(&mut self, i: u32) {
        self.slots[i as usize] = RecvState::Free;
        self.free_slots.push(i);
    }

    /// Queues a receive that found no early message.
    pub(crate) fn post(&mut self, p: Posted) {
        self.posted.push(p);
    }

    /// Withdraws the posted receive watched by `slot` (if still waiting) and frees the slot.
    pub(crate) fn cancel(&mut self, slot: u32) {
        self.posted.retain(|p| p.slot != slot);
        self.free_slot(slot);
    }

    /// The earliest-posted receive for (ctx, src, tag), removed.
    #[inline]
    pub(crate) fn take_posted(&mut self, ctx: u32, src: i32, tag: i32) -> Option<Posted> {
        let i = self.posted.iter().position(|p| p.ctx == ctx && p.src == src && p.tag == tag)?;
        Some(self.posted.remove(i))
    }

    /// The earliest early message for (ctx, src, tag), removed.
    #[inline]
    pub(crate) fn take_early(&mut self, ctx: u32, src: i32, tag: i32) -> Option<Early> {
        if self.early.is_empty() {
            return None;
        }
        let i = self.early.iter().position(|e| e.ctx == ctx && e.src == src && e.tag == tag)?;
        self.early.remove(i)
    }

    pub(crate) fn push_early(&mut self, e: Early) {
        self.early.push_back(e);
    }

    /// A copy of `bytes` in a reused buffer.
    pub(crate) fn copy_of(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut v = self.spare_bufs.pop().unwrap_or_default();
        v.clear();
        v.extend_from_slice(bytes);
        v
    }

    /// Returns a payload buffer for reuse.
    pub(crate) fn recycle(&mut self, v: Vec<u8>) {
        if self.spare_bufs.len() < SPARE_BUFS && v.capacity() <= SPARE_BUF_MAX {
            self.spare_bufs.push(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn early(ctx: u32, src: i32, tag: i32, byte: u8) -> Early {
        Early { ctx, src, tag, msg: EarlyMsg::Eager { data: vec![byte], sync: None } }
    }

    #[test]
    fn early_messages_match_in_arrival_order_per_envelope() {
        let mut m = Mailbox::default();
        m.push_early(early(1, 0, 7, 1));
        m.push_early(early(1, 1, 7, 2));
        m.push_early(early(1, 0, 7, 3));
        m.push_early(early(3, 0, 7, 4));
        let byte = |e: Option<Early>| match e.map(|e| e.msg) {
            Some(EarlyMsg::Eager { data, .. }) => data[0],
            _ => 0,
        };
        assert_eq!(byte(m.take_early(3, 0, 7)), 4);
        assert_eq!(byte(m.take_early(1, 0, 7)), 1);
        assert_eq!(byte(m.take_early(1, 0, 7)), 3);
        assert_eq!(byte(m.take_early(1, 0, 7)), 0);
        assert_eq!(byte(m.take_early(1, 1, 7)), 2);
    }

    #[test]
    fn posted_receives_match_in_posting_order_and_cancel() {
        let mut m = Mailbox::default();
        let (a, b, c) = (m.new_slot(RecvState::Waiting), m.new_slot(RecvState::Waiting), m.new_slot(RecvState::Waiting));
        for slot in [a, b, c] {
            m.post(Posted { ctx: 1, src: 2, tag: 5, buf: RawBuf::EMPTY, slot });
        }
        m.cancel(b);
        assert_eq!(m.slot(b), RecvState::Free);
        assert_eq!(m.take_posted(1, 2, 5).map(|p| p.slot), Some(a));
        assert_eq!(m.take_posted(1, 2, 5).map(|p| p.slot), Some(c));
        assert!(m.take_posted(1, 2, 5).is_none());
        // Freed slots are reused.
        assert_eq!(m.new_slot(RecvState::Done), b);
    }

    #[test]
    fn collective_contexts_are_the_odd_ones() {
        assert!(!is_coll_ctx(0) && is_coll_ctx(1) && !is_coll_ctx(2) && is_coll_ctx(3));
    }
}
