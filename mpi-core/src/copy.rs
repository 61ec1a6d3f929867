//! Byte copies for the message paths. Most messages there are a few bytes long, where a
//! call into the C library's `memcpy` (PLT hop plus size dispatch) costs more than the copy;
//! up to 32 bytes the copy is done inline with at most four loads and stores. Long copies
//! whose destination sits just past the source modulo 4 KiB run backwards (`copy_long`).

/// Copies `len` bytes from `src` to `dst` (non-overlapping).
///
/// # Safety
/// As `std::ptr::copy_nonoverlapping`: `src` readable and `dst` writable for `len` bytes,
/// the two ranges disjoint.
#[inline(always)]
pub unsafe fn copy_bytes(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY (all arms): every access lies within [0, len) of both ranges (the pairs of
    // accesses overlap instead of running past the end); unaligned reads and writes are
    // used because user buffers have any alignment.
    unsafe {
        match len {
            0 => {}
            1..=3 => {
                *dst = *src;
                *dst.add(len / 2) = *src.add(len / 2);
                *dst.add(len - 1) = *src.add(len - 1);
            }
            4..=7 => {
                let (a, b) = ((src as *const u32).read_unaligned(), (src.add(len - 4) as *const u32).read_unaligned());
                (dst as *mut u32).write_unaligned(a);
                (dst.add(len - 4) as *mut u32).write_unaligned(b);
            }
            8..=16 => {
                let (a, b) = ((src as *const u64).read_unaligned(), (src.add(len - 8) as *const u64).read_unaligned());
                (dst as *mut u64).write_unaligned(a);
                (dst.add(len - 8) as *mut u64).write_unaligned(b);
            }
            17..=32 => {
                let (a, b) = ((src as *const u128).read_unaligned(), (src.add(len - 16) as *const u128).read_unaligned());
                (dst as *mut u128).write_unaligned(a);
                (dst.add(len - 16) as *mut u128).write_unaligned(b);
            }
            _ => copy_long(src, dst, len),
        }
    }
}

/// Copies `len` bytes from `src` to `dst` (non-overlapping), for lengths past the inline
/// cases.
///
/// glibc's `memcpy` copies a few KiB and more with `rep movsb`, which crawls when the
/// destination lies 1–63 bytes past the source modulo 4 KiB: every load's page offset
/// matches a store just issued (4K aliasing). Measured here (AMD EPYC), 64 × 256 KiB
/// copies: 14–17 GB/s at most offsets, 6–7 at 16 bytes; 16 KiB copies 47 against 29. The
/// pair is common: glibc's `malloc` returns large blocks 16 bytes past a page boundary,
/// while windows, `MPI_Alloc_mem` and `posix_memalign` buffers start on one, so every
/// `MPI_Get` from a window into a `malloc`ed buffer hit it. Such copies run backwards in
/// 16-byte vectors, whose loads never meet the stores in flight (13.6 and 57 GB/s there).
///
/// # Safety
/// As `copy_bytes`.
#[inline]
pub unsafe fn copy_long(src: *const u8, dst: *mut u8, len: usize) {
    if len >= ALIAS_MIN && (1..64).contains(&((dst as usize).wrapping_sub(src as usize) & 4095)) {
        // SAFETY: caller's contract.
        return unsafe { copy_backward(src, dst, len) };
    }
    // SAFETY: caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, len) }
}

/// `copy_long` for ranges that may overlap (a process's own window): overlapping ones
/// take `memmove`.
///
/// # Safety
/// As `std::ptr::copy`.
#[inline]
pub unsafe fn move_bytes(src: *const u8, dst: *mut u8, len: usize) {
    let (s, d) = (src as usize, dst as usize);
    if s.wrapping_add(len) <= d || d.wrapping_add(len) <= s {
        // SAFETY: caller's contract; the ranges are disjoint.
        unsafe { copy_long(src, dst, len) }
    } else {
        // SAFETY: caller's contract.
        unsafe { std::ptr::copy(src, dst, len) }
    }
}

/// Below this glibc copies with vector loops that check for the aliasing themselves (2 KiB
/// at a 16-byte distance measured within 15 % of other distances).
const ALIAS_MIN: usize = 2048;

/// Copies 64 bytes per step from the end down, then the head below 64 bytes.
///
/// # Safety
/// As `copy_bytes`, with `len` ≥ 64.
unsafe fn copy_backward(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_storeu_si128};
        let mut i = len;
        // SAFETY: every access lies within [0, len) of both ranges (caller's contract);
        // unaligned loads and stores; SSE2 is part of x86_64.
        unsafe {
            while i >= 64 {
                i -= 64;
                let (s, d) = (src.add(i), dst.add(i));
                let a = _mm_loadu_si128(s.add(48) as *const __m128i);
                let b = _mm_loadu_si128(s.add(32) as *const __m128i);
                let c = _mm_loadu_si128(s.add(16) as *const __m128i);
                let e = _mm_loadu_si128(s as *const __m128i);
                _mm_storeu_si128(d.add(48) as *mut __m128i, a);
                _mm_storeu_si128(d.add(32) as *mut __m128i, b);
                _mm_storeu_si128(d.add(16) as *mut __m128i, c);
                _mm_storeu_si128(d as *mut __m128i, e);
            }
            copy_bytes(src, dst, i);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: caller's contract.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, len)
    }
}

/// Copies `len` bytes from `src` to `dst` (non-overlapping) with non-temporal stores: the
/// destination's cache lines are written straight to memory, neither read first (a plain
/// copy reads each line it writes: three memory transfers per byte instead of two) nor
/// left in this CPU's cache. For transfers whose volume exceeds the cache, where the
/// bytes cannot stay cached anyway (glibc makes the same choice above three quarters of
/// the shared cache, but per call, never for a stream of 1 MiB calls). Other
/// architectures: a plain copy. The stores are fenced before it returns, so they are
/// ordered before any later store, as a plain copy's are.
///
/// # Safety
/// As `copy_bytes`.
pub unsafe fn copy_streaming(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        // The unaligned head up to a 16-byte boundary of `dst`, then 64 bytes per step,
        // then the tail, plainly.
        let head = (dst as usize).wrapping_neg() & 15;
        if len < head + 64 {
            // SAFETY: caller's contract.
            return unsafe { std::ptr::copy_nonoverlapping(src, dst, len) };
        }
        let body = (len - head) & !63;
        // SAFETY: every access lies within [0, len) of both ranges (caller's contract);
        // the streaming stores go to 16-byte aligned addresses of `dst` (after `head`);
        // SSE2, which these intrinsics need, is part of x86_64.
        unsafe {
            std::ptr::copy_nonoverlapping(src, dst, head);
            let (mut s, mut d) = (src.add(head), dst.add(head));
            let end = d.add(body);
            while d < end {
                let a = _mm_loadu_si128(s as *const __m128i);
                let b = _mm_loadu_si128(s.add(16) as *const __m128i);
                let c = _mm_loadu_si128(s.add(32) as *const __m128i);
                let e = _mm_loadu_si128(s.add(48) as *const __m128i);
                _mm_stream_si128(d as *mut __m128i, a);
                _mm_stream_si128(d.add(16) as *mut __m128i, b);
                _mm_stream_si128(d.add(32) as *mut __m128i, c);
                _mm_stream_si128(d.add(48) as *mut __m128i, e);
                s = s.add(64);
                d = d.add(64);
            }
            _mm_sfence();
            std::ptr::copy_nonoverlapping(s, d, len - head - body);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: caller's contract.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_small_length_and_offset() {
        let src: Vec<u8> = (0..100u8).collect();
        for len in 0..=70 {
            for off in 0..4 {
                let mut dst = vec![0xEEu8; 80];
                // SAFETY: both ranges are inside their vectors and disjoint.
                unsafe { copy_bytes(src.as_ptr().add(off), dst.as_mut_ptr().add(off), len) };
                assert_eq!(&dst[off..off + len], &src[off..off + len], "len {len} off {off}");
                assert!(dst[..off].iter().chain(&dst[off + len..]).all(|&b| b == 0xEE), "len {len} wrote outside");
            }
        }
    }

    /// Long copies at every distance modulo 4 KiB that takes the backward loop and around
    /// it, lengths around the 64-byte steps: the bytes arrive, nothing outside is touched;
    /// `move_bytes` also for overlapping ranges in both directions.
    #[test]
    fn long_copies_at_aliasing_distances() {
        let src: Vec<u8> = (0..3 * 4096u32).map(|i| (i * 13 + 5) as u8).collect();
        for len in [2047, 2048, 2049, 2111, 4096, 4096 + 63, 8000] {
            for dist in [0, 1, 15, 16, 17, 63, 64, 4032, 4095] {
                let mut dst = vec![0xEEu8; 3 * 4096 + 8192];
                // Put the destination `dist` bytes past the source modulo 4 KiB.
                let want = (src.as_ptr() as usize + dist) % 4096;
                let doff = (want + 4096 - dst.as_ptr() as usize % 4096) % 4096;
                // SAFETY: both ranges are inside their vectors and disjoint.
                unsafe { copy_bytes(src.as_ptr(), dst.as_mut_ptr().add(doff), len) };
                assert_eq!(&dst[doff..doff + len], &src[..len], "len {len} dist {dist}");
                assert!(dst[..doff].iter().chain(&dst[doff + len..]).all(|&b| b == 0xEE), "len {len} wrote outside");
            }
            for shift in [-100isize, -16, -1, 1, 16, 100] {
                let mut buf = src.clone();
                let (from, to) = (4096isize, 4096 + shift);
                // SAFETY: both ranges are inside `buf`.
                unsafe { move_bytes(buf.as_ptr().offset(from), buf.as_mut_ptr().offset(to), len) };
                assert_eq!(&buf[to as usize..to as usize + len], &src[from as usize..from as usize + len], "len {len} shift {shift}");
            }
        }
    }

    /// Every alignment of source and destination, lengths around the 64-byte steps and
    /// the 16-byte head: the bytes arrive, nothing outside is touched.
    #[test]
    fn streaming_copy_every_alignment() {
        let src: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in (0..300).chain([1000, 4000]) {
            for soff in 0..17 {
                for doff in [0, 1, 8, 15, 16, 33] {
                    let mut dst = vec![0xEEu8; 4096 + 64];
                    let len = len.min(4096 - soff).min(4096 - doff);
                    // SAFETY: both ranges are inside their vectors and disjoint.
                    unsafe { copy_streaming(src.as_ptr().add(soff), dst.as_mut_ptr().add(doff), len) };
                    assert_eq!(&dst[doff..doff + len], &src[soff..soff + len], "len {len} soff {soff} doff {doff}");
                    assert!(dst[..doff].iter().chain(&dst[doff + len..]).all(|&b| b == 0xEE), "len {len} wrote outside");
                }
            }
        }
    }
}
