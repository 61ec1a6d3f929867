//! Transports move bytes between ranks; protocols (eager, rendezvous, synchronous) sit
//! above them in `protocol.rs`, so no protocol logic is duplicated per transport. A
//! transport says what it can do (eager and chunk sizes, zero-copy get/put, whether it is a
//! byte stream) and the protocol asks; `set::Transports` holds every transport of this
//! process and `wireup` decides, once at start-up, which one reaches each peer.

pub mod set;
pub mod shm;
pub mod tcp;
pub mod verbs;
pub mod wireup;

pub use set::{Link, Transports, Via};

use crate::header::HEADER_LEN;

/// A received message still held in transport memory. `header` and `payload` stay valid
/// until the transport's `release` is called for `peer`. The header is read in place, with
/// no 48-byte copy per message (the store-forwarding stall perf showed on the receive path
/// came from moving the decoded header out of a `Result`; see `Header::decode_valid`).
#[derive(Clone, Copy, Debug)]
pub struct Incoming {
    /// The transport it came through.
    pub via: Via,
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
    /// Rendezvous chunk size toward `peer` (at most `max_payload`).
    fn chunk(&self, _peer: usize) -> usize {
        self.max_payload()
    }
    /// Largest message sent eagerly; larger messages use rendezvous.
    fn eager_max(&self) -> usize;
    /// Sends one header plus payload to `peer`; returns false when there is no room now (the
    /// caller keeps the message queued and retries after progress).
    ///
    /// # Safety
    /// `payload` must be valid for reads of `len` bytes.
    unsafe fn try_send(&mut self, peer: usize, header: &[u8; HEADER_LEN], payload: *const u8, len: usize) -> bool;
    /// As `try_send`, for a rendezvous chunk of a send buffer that stays valid until the
    /// send completes: the transport may keep reading `payload` after returning, until
    /// `holds_lent(peer)` is false (TCP: the part of a chunk a socket did not take is sent
    /// later from there instead of being copied).
    ///
    /// # Safety
    /// `payload` must stay valid for reads of `len` bytes until `holds_lent(peer)` is false.
    unsafe fn try_send_lent(&mut self, peer: usize, header: &[u8; HEADER_LEN], payload: *const u8, len: usize) -> bool {
        // SAFETY: forwarded caller contract.
        unsafe { self.try_send(peer, header, payload, len) }
    }
    /// Still reads a buffer given to `try_send_lent` for `peer`.
    fn holds_lent(&self, _peer: usize) -> bool {
        false
    }
    /// Like `try_send`, with the payload written by `fill` directly into transport memory.
    fn try_send_with(&mut self, peer: usize, header: &[u8; HEADER_LEN], len: usize, fill: &mut dyn FnMut(&mut [u8])) -> bool;
    /// The next received message, if any; it must be `release`d before the next call.
    fn recv_next(&mut self) -> Option<Incoming>;
    /// As `recv_next`, for a transport that can receive a large payload straight into its
    /// destination (a byte stream: TCP): `place(header, payload_len)` names where the
    /// payload goes, if the protocol knows (a rendezvous chunk for a contiguous receive);
    /// the returned message's payload then already sits there (`payload` points at it).
    fn recv_placed(&mut self, _place: &mut dyn FnMut(&[u8; HEADER_LEN], usize) -> Option<*mut u8>) -> Option<Incoming> {
        self.recv_next()
    }
    /// Frees the message last returned by `recv_next` for `peer`.
    fn release(&mut self, peer: usize);
    /// Wakes `peer` if it sleeps waiting for messages.
    fn wake(&mut self, peer: usize);
    /// Wakes this process's own sleeping waits (another thread completed a request).
    fn wake_self(&mut self);
    /// Work of its own, once per progress pass before `recv_next` (sockets: readiness,
    /// connection set-up, pending output).
    fn progress(&mut self) {}
    /// A kernel byte stream with its own buffering (TCP): the protocol does not push
    /// unmatched data to such a peer ahead of its clear-to-send.
    fn streams(&self) -> bool {
        false
    }
    /// Bytes handed over by `try_send` that still sit in the transport (finalize drains
    /// them before the ranks part).
    fn has_pending_output(&self) -> bool {
        false
    }
    /// The transport has a zero-copy get/put at all (shm: CMA); a sender offers its
    /// buffer's address only then.
    fn has_zcopy(&self) -> bool {
        false
    }
    /// A zero-copy get/put with `peer` is possible now (shm: CMA allowed).
    fn zcopy_ready(&mut self, _peer: usize) -> bool {
        false
    }
    /// Offers `len` bytes at `ptr` (a rendezvous send buffer) for the receiver's zero-copy
    /// `get`; returns the key the receiver must present (shm: 0; verbs: the rkey), or
    /// `None` to stream instead. An offer is `withdraw`n once the receiver answered.
    fn offer(&mut self, _ptr: *const u8, _len: usize) -> Option<u32> {
        None
    }
    /// The receiver is done with an offer (as given to `offer`).
    fn withdraw(&mut self, _ptr: *const u8, _len: usize) {}
    /// Cooperative copies: the receiver lets the sender write part of a message straight
    /// into its receive buffer, which it never offered (shm: `process_vm_writev`).
    fn coop(&self) -> bool {
        false
    }
    /// Reads `len` bytes at `remote` in `peer`'s memory into `dst`; returns how many it
    /// read (fewer on a refusal, which callers handle by streaming).
    ///
    /// # Safety
    /// `dst` must be valid for `len` bytes; `remote` must be a buffer `peer` offered with
    /// `key`.
    unsafe fn get(&mut self, _peer: usize, _dst: *mut u8, _remote: u64, _key: u32, _len: usize) -> usize {
        0
    }
    /// Writes `len` bytes from `src` to `remote` in `peer`'s memory; returns how many.
    ///
    /// # Safety
    /// `src` must be valid for `len` bytes; `remote` must be a buffer `peer` offered (with
    /// `key`, or any buffer of a cooperative copy when `coop`).
    unsafe fn put(&mut self, _peer: usize, _remote: u64, _key: u32, _src: *const u8, _len: usize) -> usize {
        0
    }
    /// Announces that this rank is about to sleep. `None`: a message arrived meanwhile (or
    /// the transport cannot sleep), so poll again instead.
    fn prepare_sleep(&mut self) -> Option<SleepToken>;
    /// A wait that slept is over: senders need not wake this rank any more.
    fn end_sleep(&mut self);
}

/// Permission to sleep until a transport has news; used outside the engine lock.
pub enum SleepToken {
    /// The shared-memory doorbell word (a futex).
    Doorbell(*const std::sync::atomic::AtomicU32),
    /// A pollable descriptor that becomes readable on news (TCP: the epoll instance,
    /// polled without taking its events; verbs: the completion channel), and an eventfd
    /// other threads of this process write to wake us (see
    /// `tcp::TcpTransport::prepare_sleep`).
    Epoll { epoll: std::os::fd::RawFd, wake: std::os::fd::RawFd },
}

// SAFETY: the word lives in a mapping that outlives every wait (the engine keeps it mapped
// until MPI_Finalize, which no waiter can overlap).
unsafe impl Send for SleepToken {}

impl SleepToken {
    /// # Safety
    /// `word` must stay mapped until `sleep` returns.
    pub unsafe fn new(word: *const std::sync::atomic::AtomicU32) -> SleepToken {
        SleepToken::Doorbell(word)
    }

    /// Sleeps until a sender rings the doorbell (or a socket is ready) or `timeout_us`
    /// passes. On a timeout the doorbell stays armed (see `Transport::end_sleep`).
    pub fn sleep(self, timeout_us: u64) {
        match self {
            SleepToken::Doorbell(word) => {
                let ts = libc::timespec { tv_sec: (timeout_us / 1_000_000) as _, tv_nsec: ((timeout_us % 1_000_000) * 1000) as _ };
                // SAFETY: futex wait on a 4-byte aligned shared word that stays mapped (see `new`).
                unsafe {
                    let w = &*word;
                    libc::syscall(libc::SYS_futex, w.as_ptr(), libc::FUTEX_WAIT, 1, &ts as *const libc::timespec, 0, 0);
                }
            }
            SleepToken::Epoll { epoll, wake } => {
                let mut fds = [libc::pollfd { fd: epoll, events: libc::POLLIN, revents: 0 }, libc::pollfd { fd: wake, events: libc::POLLIN, revents: 0 }];
                let ms = timeout_us.div_ceil(1000).min(i32::MAX as u64) as i32;
                // SAFETY: both fds stay open until MPI_Finalize, which no wait overlaps.
                // poll(2) on an epoll fd reports whether events are ready without taking
                // them, so the next progress pass still sees every one; the eventfd is
                // level-triggered and cleared under the engine lock once no wait sleeps.
                unsafe { libc::poll(fds.as_mut_ptr(), 2, ms) };
            }
        }
    }
}
