//! Transports move bytes between ranks; protocols (eager, rendezvous, synchronous) sit
//! above them in `protocol.rs`, so no protocol logic is duplicated per transport.

pub mod shm;

use crate::header::HEADER_LEN;

/// A received message still held in transport memory. `header` and `payload` stay valid
/// until the transport's `release` is called for `peer`. The header is read in place, with
/// no 48-byte copy per message (the store-forwarding stall perf showed on the receive path
/// came from moving the decoded header out of a `Result`; see `Header::decode_valid`).
#[derive(Clone, Copy, Debug)]
pub struct Incoming {
    /// Transport-local peer index.
    pub peer: usize,
    pub header: *const [u8; HEADER_LEN],
    pub payload: *const u8,
    pub len: usize,
}

/// What every transport offers the protocol layer ("active messages first").
pub trait Transport {
    /// Largest payload a single `try_send` carries (rendezvous chunk size).
    fn max_payload(&self) -> usize;
    /// Largest message sent eagerly; larger messages use rendezvous.
    fn eager_max(&self) -> usize;
    /// Sends one header plus payload to `peer`; returns false when there is no room now (the
    /// caller keeps the message queued and retries after progress).
    ///
    /// # Safety
    /// `payload` must be valid for reads of `len` bytes.
    unsafe fn try_send(&mut self, peer: usize, header: &[u8; HEADER_LEN], payload: *const u8, len: usize) -> bool;
    /// Like `try_send`, with the payload written by `fill` directly into transport memory.
    fn try_send_with(&mut self, peer: usize, header: &[u8; HEADER_LEN], len: usize, fill: &mut dyn FnMut(&mut [u8])) -> bool;
    /// The next received message, if any; it must be `release`d before the next call.
    fn recv_next(&mut self) -> Option<Incoming>;
    /// Frees the message last returned by `recv_next` for `peer`.
    fn release(&mut self, peer: usize);
    /// Wakes `peer` if it sleeps waiting for messages.
    fn wake(&mut self, peer: usize);
    /// Announces that this rank is about to sleep. `None`: a message arrived meanwhile (or
    /// the transport cannot sleep), so poll again instead.
    fn prepare_sleep(&mut self) -> Option<SleepToken>;
    /// A wait that slept is over: senders need not wake this rank any more.
    fn end_sleep(&mut self);
}

/// Permission to sleep on a transport's doorbell word; used outside the engine lock.
pub struct SleepToken {
    word: *const std::sync::atomic::AtomicU32,
}

// SAFETY: the word lives in a mapping that outlives every wait (the engine keeps it mapped
// until MPI_Finalize, which no waiter can overlap).
unsafe impl Send for SleepToken {}

impl SleepToken {
    /// # Safety
    /// `word` must stay mapped until `sleep` returns.
    pub unsafe fn new(word: *const std::sync::atomic::AtomicU32) -> SleepToken {
        SleepToken { word }
    }

    /// Sleeps until a sender rings the doorbell or `timeout_us` passes. On a timeout the
    /// doorbell stays armed (see `Transport::end_sleep`).
    pub fn sleep(self, timeout_us: u64) {
        let ts = libc::timespec { tv_sec: (timeout_us / 1_000_000) as _, tv_nsec: ((timeout_us % 1_000_000) * 1000) as _ };
        // SAFETY: futex wait on a 4-byte aligned shared word that stays mapped (see `new`).
        unsafe {
            let w = &*self.word;
            libc::syscall(libc::SYS_futex, w.as_ptr(), libc::FUTEX_WAIT, 1, &ts as *const libc::timespec, 0, 0);
        }
    }
}
