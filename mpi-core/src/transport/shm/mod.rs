//! Shared-memory transport between ranks of one node: one SPSC ring per ordered pair of
//! local ranks in a single segment, plus per rank a doorbell line (the bell word for
//! sleeping waits, then its pid, whether it registered for `membarrier`, its CMA cookie,
//! then its CPU set: `node_cpus`) and two
//! barrier lines (`arrive_word`, `release_word`; see `coll/flag_barrier.rs`).

mod cma;
mod membarrier;
pub mod ring;
pub mod segment;

use super::{Incoming, SleepToken, Transport, Via};
use crate::header::HEADER_LEN;
use ring::Ring;
use segment::Segment;
use std::sync::atomic::{compiler_fence, fence, AtomicU32, Ordering};

const MAGIC: u64 = 0x4f78_4d50_4953_484d; // "OxMPISHM"
const LINE: usize = 64;

/// Shape of the segment, identical on every local rank.
#[derive(Clone, Copy, Debug)]
pub struct ShmShape {
    pub nlocal: usize,
    pub cells: usize,
    pub cell_payload: usize,
    pub eager_max: usize,
}

impl ShmShape {
    /// Header line, then per local rank a doorbell line, an arrival line and a release line.
    fn rings_offset(&self) -> usize {
        (LINE * (1 + 3 * self.nlocal)).div_ceil(4096) * 4096
    }
    fn ring_bytes(&self) -> usize {
        Ring::bytes_needed(self.cells, self.cell_payload).div_ceil(4096) * 4096
    }
    /// Total segment size.
    pub fn segment_len(&self) -> usize {
        self.rings_offset() + self.nlocal * self.nlocal * self.ring_bytes()
    }
    fn ring_offset(&self, src: usize, dst: usize) -> usize {
        self.rings_offset() + (src * self.nlocal + dst) * self.ring_bytes()
    }
}

/// This rank's view of the node's segment.
pub struct ShmTransport {
    seg: Segment,
    shape: ShmShape,
    me: usize,
    /// Rings this rank writes, indexed by destination local rank (None for itself).
    tx: Vec<Option<Ring>>,
    /// Rings this rank reads, indexed by source local rank (None for itself).
    rx: Vec<Option<Ring>>,
    /// Round-robin position for fairness between senders.
    cursor: usize,
    /// Single-copy reads (`process_vm_readv`) still allowed: cleared after the first refusal
    /// (e.g. `ptrace_scope`, seccomp), so later transfers fall back to the ring at once.
    cma_ok: bool,
    /// Per local rank: has its published pid been checked to name the process that owns
    /// the segment slot (0 = not yet, 1 = yes, 2 = no: never pull from it)?
    cma_checked: Vec<u8>,
    /// Order of this rank's single copies (see `cma`).
    cma_order: cma::CopyOrder,
    /// Rendezvous sends of at least this many bytes are offered for a single-copy read
    /// (`OXMPI_SHM_CMA_MIN`; usize::MAX = never).
    cma_min: usize,
    /// In a flag barrier: its flags come without wake-ups (see `coll/flag_barrier.rs`),
    /// so this rank must not sleep.
    awake: bool,
    /// Every local rank registered for membarrier: senders skip the fence per message and
    /// a rank about to sleep issues the barrier instead (see `membarrier`).
    fenceless: bool,
}

/// Rings a rank pre-faults at start-up, at most (beyond this many local ranks, a rank
/// talks to few of its peers and the memory would mostly go unused).
const PREFAULT_MAX_PEERS: usize = 32;

/// `OXMPI_SHM_CMA_MIN`, 0 meaning never.
fn cma_min() -> usize {
    match crate::config::config().get("SHM_CMA_MIN") {
        0 => usize::MAX,
        n => n,
    }
}

/// Maps the pages of the rings this rank writes and reads now, at start-up: otherwise the
/// first laps of every ring take a page fault per cell page (a few hundred per peer, each
/// about a microsecond), which lands in the first measured messages of a program.
fn prefault_rings(seg: &Segment, shape: ShmShape, me: usize) {
    if shape.nlocal > PREFAULT_MAX_PEERS + 1 {
        return;
    }
    const MADV_POPULATE_WRITE: libc::c_int = 23;
    for peer in (0..shape.nlocal).filter(|&p| p != me) {
        for off in [shape.ring_offset(me, peer), shape.ring_offset(peer, me)] {
            // SAFETY: the ring's region lies inside the mapping (see `segment_len`), page
            // aligned; populating pages does not change their contents.
            let p = unsafe { seg.base().add(off) };
            // SAFETY: as above; madvise only maps the range.
            if unsafe { libc::madvise(p as *mut libc::c_void, shape.ring_bytes(), MADV_POPULATE_WRITE) } != 0 {
                // Older kernels: a read per page maps it as well.
                for page in (0..shape.ring_bytes()).step_by(4096) {
                    // SAFETY: inside the ring's region; a plain read of shared zeroes.
                    unsafe { std::ptr::read_volatile(p.add(page)) };
                }
            }
        }
    }
}

/// A value only this process holds at a known address: a peer reads it through
/// `process_vm_readv` once and compares it with the copy in our doorbell line, to be sure
/// the pid it uses names us (pid namespaces could make it name someone else).
static CMA_COOKIE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

// SAFETY: the transport is only used under the engine lock; the raw pointers refer to a
// process-wide shared mapping owned by `seg`.
unsafe impl Send for ShmTransport {}

impl ShmTransport {
    /// Creates the segment (local rank 0). Others `attach` after a fence.
    pub fn create(name: &str, shape: ShmShape, me: usize) -> std::io::Result<ShmTransport> {
        let seg = Segment::create(name, shape.segment_len())?;
        // SAFETY: the header line lies at the start of the fresh mapping.
        unsafe {
            (seg.base() as *mut u64).write(MAGIC);
            (seg.base().add(8) as *mut u64).write(shape.segment_len() as u64);
        }
        Ok(Self::from_segment(seg, shape, me))
    }

    /// Attaches to the segment local rank 0 created.
    pub fn attach(name: &str, shape: ShmShape, me: usize) -> std::io::Result<ShmTransport> {
        let seg = Segment::attach(name, shape.segment_len())?;
        // SAFETY: reading the header line written by the creator before the fence.
        let (magic, len) = unsafe { ((seg.base() as *const u64).read(), (seg.base().add(8) as *const u64).read()) };
        if magic != MAGIC || len != shape.segment_len() as u64 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "shared-memory segment has a different layout (ranks started with different OXMPI_SHM_* settings?)",
            ));
        }
        Ok(Self::from_segment(seg, shape, me))
    }

    fn from_segment(seg: Segment, shape: ShmShape, me: usize) -> ShmTransport {
        let ring = |src: usize, dst: usize| {
            if src == dst {
                return None;
            }
            // SAFETY: the ring's region lies inside the segment (see `segment_len`), is
            // page aligned and zero-filled at creation; src writes it, dst reads it.
            Some(unsafe { Ring::new(seg.base().add(shape.ring_offset(src, dst)), shape.cells, shape.cell_payload) })
        };
        prefault_rings(&seg, shape, me);
        let tx = (0..shape.nlocal).map(|d| ring(me, d)).collect();
        let rx = (0..shape.nlocal).map(|s| ring(s, me)).collect();
        let t = ShmTransport { seg, shape, me, tx, rx, cursor: 0, cma_ok: true, cma_checked: vec![0; shape.nlocal], cma_order: cma::CopyOrder::from_config(), cma_min: cma_min(), awake: false, fenceless: false };
        // Publish our pid, cookie address and cookie value for single-copy reads; peers
        // read them only after the start-up fences that follow (long before any rendezvous).
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        let cookie = (u64::from(std::process::id()) << 32) ^ nanos ^ 0x9e37_79b9_7f4a_7c15;
        CMA_COOKIE.store(cookie, Ordering::Relaxed);
        t.pid_word(me).store(std::process::id(), Ordering::Relaxed);
        let registered = crate::config::config().get("SHM_MEMBARRIER") != 0 && membarrier::register();
        t.membarrier_word(me).store(u32::from(registered), Ordering::Relaxed);
        t.cookie_words(me).0.store(CMA_COOKIE.as_ptr() as u64, Ordering::Relaxed);
        t.cookie_words(me).1.store(cookie, Ordering::Relaxed);
        // And the CPUs we may run on, for `node_cpus` (also read after the fences).
        for (word, bits) in t.cpu_words(me).iter().zip(crate::affinity::fold_cpus(&crate::affinity::allowed_cpus())) {
            word.store(bits, Ordering::Relaxed);
        }
        t
    }

    /// Local rank `local`'s published CPU set, folded into 256 bits (the second half of
    /// its doorbell line).
    fn cpu_words(&self, local: usize) -> [&std::sync::atomic::AtomicU64; 4] {
        // SAFETY: 8-byte aligned words at offsets 32..64 of the rank's doorbell line, used
        // only for this and only atomically.
        std::array::from_fn(|i| unsafe { std::sync::atomic::AtomicU64::from_ptr(self.seg.base().add(LINE * (1 + local) + 32 + 8 * i) as *mut u64) })
    }

    /// How many distinct CPUs the node's ranks may use between them (each published its
    /// own set at start-up; valid after the start-up fences). Under a launcher that gives
    /// every task a CPU of its own, one rank's mask alone would make the node look
    /// oversubscribed.
    pub fn node_cpus(&self) -> usize {
        let mut union = [0u64; 4];
        for local in 0..self.shape.nlocal {
            for (u, w) in union.iter_mut().zip(self.cpu_words(local)) {
                *u |= w.load(Ordering::Relaxed);
            }
        }
        union.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Drops the fence per message (see `membarrier`) if every local rank registered for
    /// membarrier. Call after the start-up fences, on every local rank.
    pub fn settle_wake(&mut self) {
        self.fenceless = (0..self.shape.nlocal).all(|local| self.membarrier_word(local).load(Ordering::Relaxed) == 1);
    }

    /// The word where local rank `local` says it registered for membarrier (1) or not (0).
    fn membarrier_word(&self, local: usize) -> &AtomicU32 {
        // SAFETY: inside the rank's doorbell line, after the pid; accessed only atomically.
        unsafe { AtomicU32::from_ptr(self.seg.base().add(LINE * (1 + local) + 12) as *mut u32) }
    }

    /// Address and value of local rank `local`'s cookie (in its doorbell line).
    fn cookie_words(&self, local: usize) -> (&std::sync::atomic::AtomicU64, &std::sync::atomic::AtomicU64) {
        let line = LINE * (1 + local);
        // SAFETY: 8-byte aligned words inside the rank's doorbell line, accessed atomically.
        unsafe {
            (
                std::sync::atomic::AtomicU64::from_ptr(self.seg.base().add(line + 16) as *mut u64),
                std::sync::atomic::AtomicU64::from_ptr(self.seg.base().add(line + 24) as *mut u64),
            )
        }
    }

    /// The word holding local rank `local`'s pid (in its doorbell line, after the bell).
    fn pid_word(&self, local: usize) -> &AtomicU32 {
        // SAFETY: inside the rank's doorbell line (see `doorbell`), accessed only atomically.
        unsafe { AtomicU32::from_ptr(self.seg.base().add(LINE * (1 + local) + 8) as *mut u32) }
    }

    /// Removes the segment's name once every local rank has attached.
    pub fn unlink(&mut self) {
        self.seg.unlink();
    }

    fn doorbell(&self, local: usize) -> &AtomicU32 {
        // SAFETY: doorbell lines follow the header line, one per local rank, inside the
        // mapping; accessed only atomically.
        unsafe { AtomicU32::from_ptr(self.seg.base().add(LINE * (1 + local)) as *mut u32) }
    }

    /// This rank's index among the node's ranks.
    pub fn local_rank(&self) -> usize {
        self.me
    }

    /// Local rank `local`'s barrier arrival word: it writes the barrier's token there and
    /// the barrier's root reads it (a line of its own, after the doorbell lines).
    pub fn arrive_word(&self, local: usize) -> &std::sync::atomic::AtomicU64 {
        assert!(local < self.shape.nlocal);
        // SAFETY: the arrival lines follow the doorbell lines inside the mapping (see
        // `rings_offset`); 8-byte aligned; accessed only atomically by every process.
        unsafe { std::sync::atomic::AtomicU64::from_ptr(self.seg.base().add(LINE * (1 + self.shape.nlocal + local)) as *mut u64) }
    }

    /// Local rank `local`'s barrier release word: a barrier's root writes the token there,
    /// the rank reads it (a line of its own, after the arrival lines).
    pub fn release_word(&self, local: usize) -> &std::sync::atomic::AtomicU64 {
        assert!(local < self.shape.nlocal);
        // SAFETY: as for `arrive_word`, one block of lines further.
        unsafe { std::sync::atomic::AtomicU64::from_ptr(self.seg.base().add(LINE * (1 + 2 * self.shape.nlocal + local)) as *mut u64) }
    }

    /// While set, this rank does not sleep (`prepare_sleep` refuses).
    pub fn hold_awake(&mut self, on: bool) {
        self.awake = on;
    }

    fn any_message(&self) -> bool {
        self.rx.iter().flatten().any(|r| r.has_message())
    }
}

impl Transport for ShmTransport {
    fn max_payload(&self) -> usize {
        self.shape.cell_payload
    }

    fn eager_max(&self) -> usize {
        self.shape.eager_max
    }

    #[inline]
    unsafe fn try_send(&mut self, peer: usize, header: &[u8; HEADER_LEN], payload: *const u8, len: usize) -> bool {
        let ring = self.tx[peer].as_mut().expect("shm send to self");
        // SAFETY: forwarded caller contract.
        unsafe { ring.try_push(header, payload, len) }
    }

    fn try_send_with(&mut self, peer: usize, header: &[u8; HEADER_LEN], len: usize, fill: &mut dyn FnMut(&mut [u8])) -> bool {
        self.tx[peer].as_mut().expect("shm send to self").try_push_with(header, len, fill)
    }

    #[inline]
    fn recv_next(&mut self) -> Option<Incoming> {
        let n = self.shape.nlocal;
        let mut src = self.cursor;
        for _ in 0..n {
            if let Some(ring) = &self.rx[src] {
                if let Some((header, payload, len)) = ring.peek() {
                    self.cursor = if src + 1 == n { 0 } else { src + 1 };
                    return Some(Incoming { via: Via::Shm, peer: src, header, payload, len });
                }
            }
            src = if src + 1 == n { 0 } else { src + 1 };
        }
        None
    }

    #[inline]
    fn release(&mut self, peer: usize) {
        if let Some(r) = self.rx[peer].as_mut() {
            r.pop();
        }
    }

    #[inline]
    fn wake(&mut self, peer: usize) {
        // Order the message store before reading the doorbell (pairs with prepare_sleep):
        // with a fence, or, fenceless, by the sleeper's membarrier (the compiler must still
        // not move the read up).
        if self.fenceless {
            compiler_fence(Ordering::SeqCst);
        } else {
            fence(Ordering::SeqCst);
        }
        let bell = self.doorbell(peer);
        if bell.load(Ordering::Relaxed) != 0 {
            bell.store(0, Ordering::Relaxed);
            // SAFETY: futex wake on a shared 4-byte aligned word inside the mapping.
            unsafe { libc::syscall(libc::SYS_futex, bell.as_ptr(), libc::FUTEX_WAKE, i32::MAX, 0, 0, 0) };
        }
    }

    fn wake_self(&mut self) {
        self.wake(self.me);
    }

    fn has_zcopy(&self) -> bool {
        true
    }

    fn zcopy_ready(&mut self, peer: usize) -> bool {
        self.cma_ready(peer)
    }

    /// CMA needs no registration: any buffer of at least `OXMPI_SHM_CMA_MIN` bytes is
    /// offered by its address alone.
    fn offer(&mut self, _ptr: *const u8, len: usize) -> Option<u32> {
        (len >= self.cma_min).then_some(0)
    }

    fn coop(&self) -> bool {
        true
    }

    unsafe fn get(&mut self, peer: usize, dst: *mut u8, remote: u64, _key: u32, len: usize) -> usize {
        // SAFETY: forwarded caller contract.
        unsafe { self.pull(peer, dst, remote, len) }
    }

    unsafe fn put(&mut self, peer: usize, remote: u64, _key: u32, src: *const u8, len: usize) -> usize {
        // SAFETY: forwarded caller contract.
        unsafe { ShmTransport::put(self, peer, remote, src, len) }
    }

    fn prepare_sleep(&mut self) -> Option<SleepToken> {
        if self.awake {
            return None;
        }
        let bell = self.doorbell(self.me);
        // Still armed by an earlier sleep of this wait (it timed out): every sender that
        // stored a message since then has found the bell set and cleared it, so looking
        // at the rings suffices. Otherwise arm it, then, for fenceless senders, make
        // their message stores visible before we look (a failed barrier means we cannot
        // know: stay awake). Once per wait, not per timed-out sleep: each barrier
        // interrupts every running rank of the node.
        if bell.load(Ordering::Relaxed) == 0 {
            bell.store(1, Ordering::SeqCst);
            if self.fenceless && !membarrier::global() {
                bell.store(0, Ordering::Relaxed);
                return None;
            }
        }
        if self.any_message() {
            bell.store(0, Ordering::Relaxed);
            return None;
        }
        // SAFETY: the doorbell lives in `seg`, mapped until the transport is dropped at
        // MPI_Finalize, after every wait has returned.
        Some(unsafe { SleepToken::new(bell as *const AtomicU32) })
    }

    fn end_sleep(&mut self) {
        self.doorbell(self.me).store(0, Ordering::Relaxed);
    }
}
