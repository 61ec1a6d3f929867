//! Shared-memory transport between ranks of one node: one SPSC ring per ordered pair of
//! local ranks in a single segment, plus one doorbell word per rank for sleeping waits.

pub mod ring;
pub mod segment;

use super::{Incoming, SleepToken, Transport};
use crate::header::HEADER_LEN;
use ring::Ring;
use segment::Segment;
use std::sync::atomic::{fence, AtomicU32, Ordering};

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
    fn rings_offset(&self) -> usize {
        (LINE * (1 + self.nlocal)).div_ceil(4096) * 4096
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
}

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
        let tx = (0..shape.nlocal).map(|d| ring(me, d)).collect();
        let rx = (0..shape.nlocal).map(|s| ring(s, me)).collect();
        ShmTransport { seg, shape, me, tx, rx, cursor: 0 }
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
                    return Some(Incoming { peer: src, header, payload, len });
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
        // Order the message store before reading the doorbell (pairs with prepare_sleep).
        fence(Ordering::SeqCst);
        let bell = self.doorbell(peer);
        if bell.load(Ordering::Relaxed) != 0 {
            bell.store(0, Ordering::Relaxed);
            // SAFETY: futex wake on a shared 4-byte aligned word inside the mapping.
            unsafe { libc::syscall(libc::SYS_futex, bell.as_ptr(), libc::FUTEX_WAKE, i32::MAX, 0, 0, 0) };
        }
    }

    fn prepare_sleep(&mut self) -> Option<SleepToken> {
        let bell = self.doorbell(self.me);
        bell.store(1, Ordering::SeqCst);
        if self.any_message() {
            bell.store(0, Ordering::Relaxed);
            return None;
        }
        // SAFETY: the doorbell lives in `seg`, mapped until the transport is dropped at
        // MPI_Finalize, after every wait has returned.
        Some(unsafe { SleepToken::new(bell as *const AtomicU32) })
    }
}
