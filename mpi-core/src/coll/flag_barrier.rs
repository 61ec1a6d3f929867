//! Barrier over shared-memory flags, for a communicator whose ranks all share one node:
//! every rank but the root writes the barrier's token into its own arrival word; the
//! root, once it has seen every token, writes the token into each rank's release word.
//!
//! Why not messages: a message costs a ring cell, a header and the matching on both sides,
//! while a flag is one cache line moving between two cores. Why this shape: the root
//! leaves first and the others one line transfer later, so a rooted collective right
//! after a barrier (OSU times `bcast` and `scatter` between barriers) finds the root
//! already sending; with the dissemination barrier the last rank to arrive left first
//! and then waited a whole message latency for the root (2-rank bcast of 1 B–4 KiB was
//! 1.2–1.75 × MPICH; now 0.15 against 0.22 µs).
//!
//! Tokens: the collective context in the high half and the collective sequence number in
//! the low, so two barriers of one communicator never share a token (a rank that races
//! ahead into the next barrier writes a token the root cannot mistake). Nothing is cleared
//! after a barrier: clearing would put one more line transfer in front of the next
//! arrival. A token can only be mistaken by a later communicator on the same context,
//! whose sequence numbers start again: `forget` clears a rank's words when it frees a
//! communicator (by then the root has read its arrivals and it has read its releases).
//!
//! No wake-ups: neither side sleeps while in a flag barrier (`ShmTransport::hold_awake`),
//! so no store needs the fence a wake-up check costs. A rank is in at most one blocking
//! barrier at a time below `MPI_THREAD_MULTIPLE` (at that level the message barrier is
//! used), so one arrival and one release word per rank suffice. The root of one barrier
//! may go on to other barriers before a slow rank has read its release: that word is the
//! slow rank's own, and nobody writes it again until that rank arrives somewhere.

use crate::transport::shm::ShmTransport;
use std::sync::atomic::Ordering;

/// The token of the barrier with collective context `ctx` and sequence tag `tag` (never 0:
/// collective contexts are odd).
pub fn token(ctx: u32, tag: i32) -> u64 {
    (u64::from(ctx) << 32) | u64::from(tag as u32)
}

/// A rank other than the root: announces its arrival.
pub fn arrive(shm: &mut ShmTransport, token: u64) {
    shm.hold_awake(true);
    shm.arrive_word(shm.local_rank()).store(token, Ordering::Release);
}

/// A rank other than the root: whether the root released it.
pub fn released(shm: &mut ShmTransport, token: u64) -> bool {
    let done = shm.release_word(shm.local_rank()).load(Ordering::Acquire) == token;
    if done {
        shm.hold_awake(false);
    }
    done
}

/// The root: whether local rank `local` has arrived.
pub fn arrived(shm: &ShmTransport, local: usize, token: u64) -> bool {
    shm.arrive_word(local).load(Ordering::Acquire) == token
}

/// The root: releases local rank `local`.
pub fn release(shm: &ShmTransport, local: usize, token: u64) {
    shm.release_word(local).store(token, Ordering::Release);
}

/// This rank frees a communicator with collective context `ctx`: clears its own words if
/// they hold a token of it, so a later communicator on the same context starts clean.
pub fn forget(shm: &ShmTransport, ctx: u32) {
    let me = shm.local_rank();
    for w in [shm.arrive_word(me), shm.release_word(me)] {
        if w.load(Ordering::Relaxed) >> 32 == u64::from(ctx) {
            w.store(0, Ordering::Relaxed);
        }
    }
}
