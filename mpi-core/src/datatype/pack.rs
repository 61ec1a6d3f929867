//! Copying between user memory laid out by a type and a packed byte stream. Everything is a
//! walk over a byte range of the packed stream, so a transport can pack or unpack a large
//! message piece by piece (pipelining) without a full intermediate copy.

use super::tree::Datatype;
use std::ptr;

/// Address of byte `off` of a user buffer. A null buffer is `MPI_BOTTOM`: the offsets are
/// then absolute addresses, turned into pointers by an integer cast.
fn at(base: *const u8, off: isize) -> *const u8 {
    if base.is_null() {
        off as usize as *const u8
    } else {
        base.wrapping_offset(off)
    }
}

/// `count` blocks of `len` bytes, the k-th at memory offset `off + k * stride` and at
/// `pos + k * len` in the packed range.
struct Piece {
    off: isize,
    stride: isize,
    len: usize,
    count: usize,
    pos: usize,
}

/// Copies `p.count` blocks of `p.len` bytes from `src` (k-th at `k * sstride`) to `dst`
/// (k-th at `k * dstride`), with one load and store per block for the small power-of-two
/// lengths of vectors of basic types (a `memcpy` call each cost 3.4 ns per 8-byte element).
///
/// # Safety
/// Every source block must be readable and every destination block writable, not
/// overlapping each other.
unsafe fn copy_blocks(src: *const u8, sstride: isize, dst: *mut u8, dstride: isize, len: usize, count: usize) {
    macro_rules! typed {
        ($t:ty) => {
            for k in 0..count as isize {
                // SAFETY: block k lies inside the caller's readable/writable ranges.
                unsafe {
                    let v = ptr::read_unaligned(src.wrapping_offset(k * sstride) as *const $t);
                    ptr::write_unaligned(dst.wrapping_offset(k * dstride) as *mut $t, v);
                }
            }
        };
    }
    match len {
        1 => typed!(u8),
        2 => typed!(u16),
        4 => typed!(u32),
        8 => typed!(u64),
        16 => typed!(u128),
        _ => {
            for k in 0..count as isize {
                // SAFETY: as above.
                unsafe { ptr::copy_nonoverlapping(src.wrapping_offset(k * sstride), dst.wrapping_offset(k * dstride), len) }
            }
        }
    }
}

impl Datatype {
    /// Calls `f` for the pieces of packed bytes `[from, from + len)` of `count` items
    /// (clamped to the end of the data), positions relative to `from`, and returns how many
    /// bytes that range holds. Whole blocks of a run come as one piece.
    fn walk(&self, count: usize, from: usize, len: usize, mut f: impl FnMut(Piece)) -> usize {
        let total = self.size.saturating_mul(count);
        if from >= total {
            return 0;
        }
        let end = from + len.min(total - from);
        let flat = self.flat();
        if self.is_contiguous() {
            f(Piece { off: flat.runs[0].off.wrapping_add(from as isize), stride: 0, len: end - from, count: 1, pos: 0 });
            return end - from;
        }
        let ext = self.extent();
        let mut pos = from;
        let mut item = pos / self.size;
        let mut in_item = pos % self.size;
        // The run holding byte `in_item`: the last one starting at or before it.
        let mut ri = flat.starts.partition_point(|&s| s <= in_item) - 1;
        while pos < end {
            let r = flat.runs[ri];
            let rel = in_item - flat.starts[ri];
            let (k, skip) = (rel / r.len, rel % r.len);
            let off = (item as isize)
                .wrapping_mul(ext)
                .wrapping_add(r.off)
                .wrapping_add((k as isize).wrapping_mul(r.stride));
            let want = end - pos;
            let n = if skip > 0 || want < r.len {
                let n = (r.len - skip).min(want);
                f(Piece { off: off.wrapping_add(skip as isize), stride: 0, len: n, count: 1, pos: pos - from });
                n
            } else {
                let blocks = (want / r.len).min(r.count - k);
                f(Piece { off, stride: r.stride, len: r.len, count: blocks, pos: pos - from });
                blocks * r.len
            };
            pos += n;
            in_item += n;
            if in_item - flat.starts[ri] == r.len * r.count {
                ri += 1;
                if ri == flat.runs.len() {
                    ri = 0;
                    item += 1;
                    in_item = 0;
                }
            }
        }
        end - from
    }

    /// Packs `count` items at `src` into `dst`; returns the bytes written
    /// (`min(dst.len(), count * size())`).
    ///
    /// # Safety
    /// Every data byte of the `count` items (offsets from `blocks(count)`, relative to
    /// `src`, absolute if `src` is null) must be readable.
    pub unsafe fn pack(&self, src: *const u8, count: usize, dst: &mut [u8]) -> usize {
        // SAFETY: forwarded from the caller.
        unsafe { self.pack_range(src, count, 0, dst) }
    }

    /// Packs bytes `[from, from + dst.len())` of the packed stream of `count` items at `src`
    /// into `dst`; returns the bytes written (fewer at the end of the stream).
    ///
    /// # Safety
    /// As for [`Datatype::pack`].
    pub unsafe fn pack_range(&self, src: *const u8, count: usize, from: usize, dst: &mut [u8]) -> usize {
        let out = dst.as_mut_ptr();
        self.walk(count, from, dst.len(), |p| {
            // SAFETY: the caller guarantees the source bytes are readable; `walk` keeps the
            // piece within dst.len(). User memory and `dst` may not overlap (MPI rule).
            unsafe { copy_blocks(at(src, p.off), p.stride, out.add(p.pos), p.len as isize, p.len, p.count) }
        })
    }

    /// Unpacks the packed stream `src` into `count` items at `dst`. A short `src` (a
    /// partial message) fills items as far as its bytes go; returns the bytes consumed.
    ///
    /// # Safety
    /// Every data byte of the `count` items at `dst` (offsets as for `pack`) must be
    /// writable.
    pub unsafe fn unpack(&self, src: &[u8], dst: *mut u8, count: usize) -> usize {
        // SAFETY: forwarded from the caller.
        unsafe { self.unpack_range(src, dst, count, 0) }
    }

    /// Unpacks `src` as bytes `[from, from + src.len())` of the packed stream of `count`
    /// items at `dst`; returns the bytes consumed.
    ///
    /// # Safety
    /// As for [`Datatype::unpack`].
    pub unsafe fn unpack_range(&self, src: &[u8], dst: *mut u8, count: usize, from: usize) -> usize {
        let inp = src.as_ptr();
        self.walk(count, from, src.len(), |p| {
            // SAFETY: the caller guarantees the destination bytes are writable; `walk`
            // keeps the piece within src.len().
            unsafe { copy_blocks(inp.add(p.pos), p.len as isize, at(dst, p.off) as *mut u8, p.stride, p.len, p.count) }
        })
    }
}
