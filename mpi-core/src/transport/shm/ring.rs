//! A single-producer/single-consumer ring of fixed-size cells in shared memory.
//!
//! Cell layout (64-byte aligned): `flag: u32` (0 = empty, 1 = full, 2 = full with the
//! payload over the header's spare tail), `len: u32` (payload bytes), 48-byte wire header,
//! then the payload: up to 8 bytes right after the header, in the flag's line (so an
//! 8-byte send moves one line between cores), up to 16 over the header's last 8 bytes when
//! the header can spare them (`header::EAGER_SPARE`: still one line), larger ones from the
//! next line on (aligned copies).
//! Each side keeps its position privately; only the per-cell flag is shared, written with
//! release and read with acquire ordering.

use crate::header::{has_spare_tail, EAGER_SPARE, HEADER_LEN};
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};

const FLAG_OFF: usize = 0;
const LEN_OFF: usize = 4;
const HDR_OFF: usize = 8;
/// Offset of a payload of up to `TAIL` bytes: right after the header, in the flag's line.
const TAIL_OFF: usize = HDR_OFF + HEADER_LEN;
const TAIL: usize = 64 - TAIL_OFF;
/// Offset of a larger payload: the next line, so copies into and out of the cell use
/// aligned stores (at `TAIL_OFF`, every 64-byte store of a 1 KiB copy split across two
/// lines: bw at 1 KiB was 40 % below 512 B and 2 KiB).
const PAYLOAD_OFF: usize = 64;

/// Offset of a payload of `TAIL + 1 ..= OVERLAY_MAX` bytes whose header has a spare tail
/// (`EAGER_SPARE`): laid over it, so the message still moves one line between cores
/// (16 B message rate: two lines per message cost ~25 %).
const OVERLAY_OFF: usize = TAIL_OFF - EAGER_SPARE;
const OVERLAY_MAX: usize = TAIL + EAGER_SPARE;
/// Flag values: a full cell, and a full cell whose payload lies at `OVERLAY_OFF`.
const FULL: u32 = 1;
const FULL_OVERLAID: u32 = 2;

/// Where a payload of `len` bytes starts within its cell.
#[inline]
fn payload_off(len: usize) -> usize {
    if len <= TAIL {
        TAIL_OFF
    } else {
        PAYLOAD_OFF
    }
}

/// Asks for the line at `p` ahead of use (a hint: never faults).
#[inline]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Bytes one cell occupies for `payload_cap` payload bytes.
pub fn cell_size(payload_cap: usize) -> usize {
    (PAYLOAD_OFF + payload_cap).div_ceil(64) * 64
}

/// One side's view of a ring.
pub struct Ring {
    base: *mut u8,
    cells: usize,
    cell_size: usize,
    payload_cap: usize,
    /// Next cell to write (producer) or read (consumer).
    pos: usize,
    /// Consumer: messages popped since the last poll that found the ring empty.
    streak: Cell<u32>,
}

impl Ring {
    /// # Safety
    /// `base` must point to `cells * cell_size(payload_cap)` bytes of shared memory, 64-byte
    /// aligned and zero-initialised, that stay mapped for the lifetime of the ring, with
    /// exactly one producer and one consumer.
    pub unsafe fn new(base: *mut u8, cells: usize, payload_cap: usize) -> Ring {
        Ring { base, cells, cell_size: cell_size(payload_cap), payload_cap, pos: 0, streak: Cell::new(0) }
    }

    /// Bytes a ring of this shape needs.
    pub fn bytes_needed(cells: usize, payload_cap: usize) -> usize {
        cells * cell_size(payload_cap)
    }

    pub fn payload_cap(&self) -> usize {
        self.payload_cap
    }

    #[inline]
    fn cell(&self) -> *mut u8 {
        // SAFETY: pos < cells, so the cell lies inside the region given to `new`.
        unsafe { self.base.add(self.pos * self.cell_size) }
    }

    #[inline]
    fn flag(cell: *mut u8) -> &'static AtomicU32 {
        // SAFETY: the flag is a 4-byte aligned u32 inside the mapped cell, only ever accessed
        // atomically by both processes; the mapping outlives the ring.
        unsafe { AtomicU32::from_ptr(cell.add(FLAG_OFF) as *mut u32) }
    }

    /// Producer: writes one message if the next cell is free.
    ///
    /// # Safety
    /// `payload` must be valid for reads of `len <= payload_cap` bytes.
    #[inline]
    pub unsafe fn try_push(&mut self, header: &[u8; HEADER_LEN], payload: *const u8, len: usize) -> bool {
        debug_assert!(len <= self.payload_cap);
        let cell = self.cell();
        if Self::flag(cell).load(Ordering::Acquire) != 0 {
            return false;
        }
        // Two branches, each with its own stores, on purpose: one sequence choosing only the
        // payload offset (the whole header written, then the payload over its tail) made bw
        // 64 B 0.54-0.66 instead of 0.80-1.03 GB/s and the 16 B rate 10-14 instead of 13-18
        // M msg/s, though 64 B takes neither overlay nor a different store.
        let full = if len > TAIL && len <= OVERLAY_MAX && has_spare_tail(header) {
            // SAFETY: as below; the header's spare tail is overwritten by the payload.
            unsafe {
                (cell.add(LEN_OFF) as *mut u32).write(len as u32);
                std::ptr::copy_nonoverlapping(header.as_ptr(), cell.add(HDR_OFF), HEADER_LEN - EAGER_SPARE);
                std::ptr::copy_nonoverlapping(payload, cell.add(OVERLAY_OFF), len);
            }
            FULL_OVERLAID
        } else {
            // SAFETY: the cell is empty, so the consumer does not read it until the flag
            // store; all writes stay within the cell.
            unsafe {
                (cell.add(LEN_OFF) as *mut u32).write(len as u32);
                std::ptr::copy_nonoverlapping(header.as_ptr(), cell.add(HDR_OFF), HEADER_LEN);
                crate::copy::copy_bytes(payload, cell.add(payload_off(len)), len);
            }
            FULL
        };
        Self::flag(cell).store(full, Ordering::Release);
        self.pos = if self.pos + 1 == self.cells { 0 } else { self.pos + 1 };
        true
    }

    /// Producer: like `try_push`, but `fill` writes the `len` payload bytes straight into
    /// the cell (used to pack non-contiguous data without an intermediate copy).
    #[inline]
    pub fn try_push_with(&mut self, header: &[u8; HEADER_LEN], len: usize, fill: &mut dyn FnMut(&mut [u8])) -> bool {
        debug_assert!(len <= self.payload_cap);
        let cell = self.cell();
        if Self::flag(cell).load(Ordering::Acquire) != 0 {
            return false;
        }
        // SAFETY: the cell is empty (the consumer does not read it until the flag store) and
        // the payload area holds payload_cap ≥ len bytes.
        unsafe {
            (cell.add(LEN_OFF) as *mut u32).write(len as u32);
            std::ptr::copy_nonoverlapping(header.as_ptr(), cell.add(HDR_OFF), HEADER_LEN);
            fill(std::slice::from_raw_parts_mut(cell.add(payload_off(len)), len));
        }
        Self::flag(cell).store(FULL, Ordering::Release);
        self.pos = if self.pos + 1 == self.cells { 0 } else { self.pos + 1 };
        true
    }

    /// Consumer: the next full cell's header, payload pointer and length, without consuming
    /// (both pointers stay valid until `pop`).
    #[inline]
    pub fn peek(&self) -> Option<(*const [u8; HEADER_LEN], *const u8, usize)> {
        let cell = self.cell();
        let full = Self::flag(cell).load(Ordering::Acquire);
        if full == 0 {
            self.streak.set(0);
            return None;
        }
        // SAFETY: the cell is full: the producer does not touch it until we clear the flag.
        unsafe {
            let len = ((cell.add(LEN_OFF) as *const u32).read() as usize).min(self.payload_cap);
            let off = if full == FULL_OVERLAID { OVERLAY_OFF } else { payload_off(len) };
            Some((cell.add(HDR_OFF) as *const [u8; HEADER_LEN], cell.add(off) as *const u8, len))
        }
    }

    /// Consumer: is a message waiting?
    #[inline]
    pub fn has_message(&self) -> bool {
        Self::flag(self.cell()).load(Ordering::Acquire) != 0
    }

    /// Consumer: frees the cell returned by the last `peek`.
    #[inline]
    pub fn pop(&mut self) {
        Self::flag(self.cell()).store(0, Ordering::Release);
        self.pos = if self.pos + 1 == self.cells { 0 } else { self.pos + 1 };
        // In a run of messages (this pop follows another without an empty poll between),
        // start fetching the next two cells now, so their transfers from the producer's
        // core overlap with handling this message (8 B message rate +30 %). Not for a
        // lone message (a ping-pong): there, fetching cells the producer is about to write
        // only makes its writes slower (16 B latency +20 %).
        let streak = self.streak.get().wrapping_add(1); // after 2^32 pops: one pop without prefetch
        self.streak.set(streak);
        if streak > 1 {
            // Further into a run, the previous pop already asked for the next cell.
            let from = if streak == 2 { 1 } else { 2 };
            for d in from..=2 {
                // No `%`: a division per message costs more than the prefetch saves.
                let ahead = if self.pos + d < self.cells { self.pos + d } else { self.pos + d - self.cells };
                // SAFETY: ahead < cells: inside the ring's region.
                prefetch(unsafe { self.base.add(ahead * self.cell_size) });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Producer and consumer views of a 4-cell ring in `mem` (kept alive by the caller).
    fn ring_pair(mem: &mut Vec<u64>, cap: usize) -> (Ring, Ring) {
        *mem = vec![0u64; Ring::bytes_needed(4, cap) / 8 + 8];
        let base = ((mem.as_mut_ptr() as usize).div_ceil(64) * 64) as *mut u8;
        // SAFETY: test memory, zeroed, large enough and aligned; it outlives both views.
        unsafe { (Ring::new(base, 4, cap), Ring::new(base, 4, cap)) }
    }

    #[test]
    fn fifo_and_full() {
        let cap = 100;
        let mut mem = Vec::new();
        let (mut tx, mut rx) = ring_pair(&mut mem, cap);
        let h = [7u8; HEADER_LEN];
        for i in 0..4u8 {
            let data = [i; 10];
            assert!(unsafe { tx.try_push(&h, data.as_ptr(), 1 + i as usize) });
        }
        assert!(!unsafe { tx.try_push(&h, std::ptr::null(), 0) }, "ring of 4 is full");
        for i in 0..4u8 {
            let (hh, p, len) = rx.peek().unwrap();
            assert_eq!(unsafe { *hh }, h);
            assert_eq!(len, 1 + i as usize);
            assert_eq!(unsafe { *p }, i);
            rx.pop();
        }
        assert!(rx.peek().is_none());
        // Payloads in the flag's line and from the next line on, across laps.
        for lap in 0..6usize {
            let big: Vec<u8> = (0..cap).map(|i| (i + lap) as u8).collect();
            let lens = [TAIL, TAIL + 1, cap];
            for &len in &lens {
                assert!(unsafe { tx.try_push(&h, big.as_ptr(), len) });
            }
            for &len in &lens {
                let (_, p, got) = rx.peek().unwrap();
                assert_eq!(got, len);
                assert_eq!(unsafe { std::slice::from_raw_parts(p, len) }, &big[..len]);
                rx.pop();
            }
            assert!(rx.peek().is_none());
        }
        assert!(unsafe { tx.try_push(&h, std::ptr::null(), 0) });
    }

    #[test]
    fn overlaid_payloads() {
        use crate::header::{Header, Kind};
        let mut mem = Vec::new();
        let (mut tx, mut rx) = ring_pair(&mut mem, 100);
        let data: Vec<u8> = (1..=17).collect();
        for len in 8..=17 {
            // An eager header may lose its tail to a 9–16 byte payload; a data chunk's
            // header (its offset matters) never does.
            for kind in [Kind::Eager, Kind::Data] {
                let mut hdr = Header::new(kind);
                hdr.offset = 0x1122_3344_5566_7788;
                let h = hdr.encode();
                assert!(unsafe { tx.try_push(&h, data.as_ptr(), len) });
                let (hh, p, got) = rx.peek().unwrap();
                assert_eq!(got, len);
                assert_eq!(unsafe { std::slice::from_raw_parts(p, len) }, &data[..len]);
                let overlaid = kind == Kind::Eager && (9..=16).contains(&len);
                assert_eq!(p as usize - hh as usize, if overlaid { 40 } else if len <= 8 { 48 } else { 56 });
                let keep = if overlaid { HEADER_LEN - EAGER_SPARE } else { HEADER_LEN };
                assert_eq!(unsafe { &(&*hh)[..keep] }, &h[..keep], "{kind:?} header, {len} bytes");
                rx.pop();
            }
        }
    }
}
