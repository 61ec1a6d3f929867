//! Single-copy transfers with a local peer through the kernel (CMA): `pull` reads a peer's
//! buffer (`process_vm_readv`), `put` writes into one (`process_vm_writev`: the sending
//! side's half of a cooperative rendezvous, so both cores copy at once).
//!
//! Large copies alternate direction: every other one runs back to front, in chunks. A
//! program that moves the same buffers again and again (a halo exchange, the bandwidth
//! benchmarks) touched their end last, and a copy that starts there finds it still in
//! cache; copying front to front each time, a working set a little above the cache misses
//! on every line. One core copying 2 MiB at a time through its 2 MiB L2, alternating:
//! 14.5 against 9–11 GB/s (see docs/performance.md).

use super::ShmTransport;
use std::sync::atomic::Ordering;

/// Most iovecs handed to one call (well under the kernel's `IOV_MAX` of 1024).
const IOVS: usize = 64;

/// Most bytes one call moves: the kernel caps a call at about 2 GiB (`MAX_RW_COUNT`).
const CALL_MAX: usize = 1 << 30;

/// Which way large copies run (the tunables `SHM_CMA_REVERSE_MIN` and
/// `SHM_CMA_REVERSE_CHUNK`): each pair of buffers alternates, so a buffer copied again
/// is copied the other way whatever else moved in between.
pub(super) struct CopyOrder {
    /// Copies from this many bytes alternate direction; 0 = never.
    min: usize,
    chunk: usize,
    /// Recent pairs of buffers (both addresses folded) and whether their last copy ran
    /// back to front; direct-mapped, so a collision only costs one copy's order.
    last: [(u64, bool); PAIRS],
}

/// Pairs of buffers `CopyOrder` remembers.
const PAIRS: usize = 16;

impl CopyOrder {
    pub(super) fn from_config() -> CopyOrder {
        let c = crate::config::config();
        CopyOrder { min: c.get("SHM_CMA_REVERSE_MIN"), chunk: c.get("SHM_CMA_REVERSE_CHUNK").max(4096), last: [(0, false); PAIRS] }
    }

    /// Whether the copy of `len` bytes between `local` and `remote` runs back to front:
    /// the opposite of the last copy between the same two buffers (front to front the
    /// first time).
    fn backward(&mut self, local: *mut u8, remote: u64, len: usize) -> bool {
        if self.min == 0 || len < self.min || len <= self.chunk {
            return false;
        }
        let key = (local as u64).rotate_left(32) ^ remote;
        let slot = &mut self.last[(key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 60) as usize % PAIRS];
        let backward = slot.0 == key && !slot.1;
        *slot = (key, backward);
        backward
    }
}

/// Direction of a transfer, as seen from this process.
#[derive(Clone, Copy)]
enum Dir {
    Read,
    Write,
}

impl ShmTransport {
    /// Whether single-copy transfers with local rank `peer` work (the kernel has not refused
    /// one and the peer's published pid was verified to name it).
    pub fn cma_ready(&mut self, peer: usize) -> bool {
        self.cma_pid(peer).is_some()
    }

    /// The pid to name in single-copy calls to `peer`, if they work (see `cma_ready`).
    fn cma_pid(&mut self, peer: usize) -> Option<libc::pid_t> {
        if !self.cma_ok || peer == self.me {
            return None;
        }
        let pid = self.pid_word(peer).load(Ordering::Relaxed) as libc::pid_t;
        self.cma_peer_ok(peer, pid).then_some(pid)
    }

    /// Whether single-copy reads from `peer` reach the right process (checked once).
    fn cma_peer_ok(&mut self, peer: usize, pid: libc::pid_t) -> bool {
        if self.cma_checked[peer] == 0 {
            let (addr, want) = self.cookie_words(peer);
            let (addr, want) = (addr.load(Ordering::Relaxed), want.load(Ordering::Relaxed));
            let mut got = 0u64;
            let local = libc::iovec { iov_base: &mut got as *mut u64 as *mut libc::c_void, iov_len: 8 };
            let remote = libc::iovec { iov_base: addr as usize as *mut libc::c_void, iov_len: 8 };
            // SAFETY: reads 8 bytes into a local u64; the kernel validates the remote side.
            let r = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
            self.cma_checked[peer] = if r == 8 && got == want && want != 0 { 1 } else { 2 };
        }
        self.cma_checked[peer] == 1
    }

    /// Single copy: reads `len` bytes at address `remote` of local rank `peer` into `dst`.
    /// Returns how many bytes arrived (a prefix); fewer than `len` means the rest must come
    /// another way (the kernel refused: CMA is then disabled).
    ///
    /// # Safety
    /// `dst` must be valid for writes of `len` bytes; `remote` must be a buffer of `peer` that
    /// stays unmodified until the caller tells the peer the read is over.
    pub unsafe fn pull(&mut self, peer: usize, dst: *mut u8, remote: u64, len: usize) -> usize {
        // SAFETY: passed on from the caller.
        unsafe { self.transfer(Dir::Read, peer, dst, remote, len) }
    }

    /// Writes `len` bytes from `src` to address `remote` of local rank `peer`. Returns how
    /// many bytes landed (a prefix); fewer than `len` means the rest must go another way.
    ///
    /// # Safety
    /// `src` must be valid for reads of `len` bytes; `remote` must be a buffer `peer` handed
    /// us for writing and does not touch until we tell it the write is over.
    pub unsafe fn put(&mut self, peer: usize, remote: u64, src: *const u8, len: usize) -> usize {
        // SAFETY: passed on from the caller (the kernel only reads `src` for a write).
        unsafe { self.transfer(Dir::Write, peer, src as *mut u8, remote, len) }
    }

    /// Moves `len` bytes between our `local` and the peer's `remote`; returns the prefix
    /// that moved.
    ///
    /// # Safety
    /// As `pull` (for `Dir::Read`) or `put` (for `Dir::Write`).
    unsafe fn transfer(&mut self, dir: Dir, peer: usize, local: *mut u8, remote: u64, len: usize) -> usize {
        let Some(pid) = self.cma_pid(peer) else { return 0 };
        let chunk = self.cma_order.chunk;
        // SAFETY: the chunks cover [0, len) of both buffers, as the caller vouched for.
        if self.cma_order.backward(local, remote, len) && unsafe { backward(dir, pid, local, remote, len, chunk) } {
            return len;
        }
        // Front to front (and after a backward copy that stopped short, which is no prefix).
        let mut done = 0;
        while done < len {
            let n = (len - done).min(CALL_MAX);
            // SAFETY: [done, done + n) lies in both buffers per the caller's contract; the
            // kernel checks the remote range and fails cleanly if it is not mapped.
            let r = unsafe { call(dir, pid, &[iov(local, done, n)], &[iov(remote as *mut u8, done, n)]) };
            if r <= 0 {
                self.cma_ok = false;
                break;
            }
            done += r as usize;
        }
        done
    }
}

/// An iovec for `[at, at + n)` of the buffer at `base`.
fn iov(base: *mut u8, at: usize, n: usize) -> libc::iovec {
    libc::iovec { iov_base: base.wrapping_add(at) as *mut libc::c_void, iov_len: n }
}

/// One `process_vm_readv`/`process_vm_writev` call over matching iovec lists.
///
/// # Safety
/// Every local iovec must be valid for the transfer's direction.
unsafe fn call(dir: Dir, pid: libc::pid_t, local: &[libc::iovec], remote: &[libc::iovec]) -> isize {
    // SAFETY: per the contract; the kernel validates the remote iovecs.
    unsafe {
        match dir {
            Dir::Read => libc::process_vm_readv(pid, local.as_ptr(), local.len() as _, remote.as_ptr(), remote.len() as _, 0),
            Dir::Write => libc::process_vm_writev(pid, local.as_ptr(), local.len() as _, remote.as_ptr(), remote.len() as _, 0),
        }
    }
}

/// Copies `len` bytes chunk by chunk from the last chunk to the first (each chunk front to
/// back, so the hardware prefetchers still see ascending streams). False if a call moved
/// less than asked: the caller then copies it all again front to front.
///
/// # Safety
/// As `ShmTransport::transfer`.
unsafe fn backward(dir: Dir, pid: libc::pid_t, local: *mut u8, remote: u64, len: usize, chunk: usize) -> bool {
    let mut end = len;
    while end > 0 {
        let (mut l, mut r) = ([iov(local, 0, 0); IOVS], [iov(local, 0, 0); IOVS]);
        let (mut k, mut bytes) = (0, 0);
        while end > 0 && k < IOVS && (k == 0 || bytes + chunk <= CALL_MAX) {
            // Chunks start at multiples of `chunk` (the last one, copied first, may be short).
            let start = (end - 1) / chunk * chunk;
            l[k] = iov(local, start, end - start);
            r[k] = iov(remote as *mut u8, start, end - start);
            bytes += end - start;
            k += 1;
            end = start;
        }
        // SAFETY: the iovecs lie inside both buffers (the caller's contract).
        if unsafe { call(dir, pid, &l[..k], &r[..k]) } != bytes as isize {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed ^ (i >> 12) as u8)).collect()
    }

    /// Back-to-front copies through our own pid move exactly the bytes, both directions:
    /// lengths that are and are not chunk multiples, and more chunks than one call takes.
    #[test]
    fn backward_copies_every_byte() {
        let pid = std::process::id() as libc::pid_t;
        for (len, chunk) in [(4096 * 3, 4096), (4096 * 3 + 7, 4096), (5, 4096), (300 * 1024 + 5, 4096), (1 << 20, 262144)] {
            for (seed, dir) in [(1u8, Dir::Read), (2, Dir::Write)] {
                let src = pattern(len, seed);
                let mut dst = vec![0u8; len + 64];
                let (local, remote) = match dir {
                    Dir::Read => (dst.as_mut_ptr(), src.as_ptr() as u64),
                    Dir::Write => (src.as_ptr() as *mut u8, dst.as_mut_ptr() as u64),
                };
                // SAFETY: both buffers hold len bytes and live in this process.
                assert!(unsafe { backward(dir, pid, local, remote, len, chunk) }, "len {len} chunk {chunk}");
                assert!(dst[..len] == src[..], "len {len} chunk {chunk}: bytes differ");
                assert!(dst[len..].iter().all(|&b| b == 0), "len {len}: wrote past the end");
            }
        }
    }

    /// Each pair of buffers alternates; other pairs in between do not disturb it; small
    /// copies and a zero threshold never run backward.
    #[test]
    fn order_alternates_per_buffer_pair() {
        let mut o = CopyOrder { min: 1 << 20, chunk: 1 << 18, last: [(0, false); PAIRS] };
        let (a, b) = (0x7f00_0000_0000usize as *mut u8, 0x5500_0010_0000u64);
        let (c, d) = (0x7f00_0020_0000usize as *mut u8, 0x5500_0030_0000u64);
        let mut seen = vec![];
        for _ in 0..3 {
            seen.push(o.backward(a, b, 2 << 20));
            assert!(!o.backward(a, b, 4096), "small copies run forward");
            o.backward(c, d, 2 << 20);
        }
        assert_eq!(seen, [false, true, false]);
        o.min = 0;
        assert!(!o.backward(a, b, 2 << 20) && !o.backward(a, b, 2 << 20));
    }
}
