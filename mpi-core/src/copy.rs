//! Byte copies for the message paths. Most messages there are a few bytes long, where a
//! call into the C library's `memcpy` (PLT hop plus size dispatch) costs more than the copy;
//! up to 32 bytes the copy is done inline with at most four loads and stores.

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
            _ => std::ptr::copy_nonoverlapping(src, dst, len),
        }
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
}
