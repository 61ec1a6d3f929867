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

impl Datatype {
    /// Calls `f(memory offset, position in the range, length)` for the pieces of packed
    /// bytes `[from, from + len)` of `count` items (clamped to the end of the data), and
    /// returns how many bytes that range holds.
    fn walk(&self, count: usize, from: usize, len: usize, mut f: impl FnMut(isize, usize, usize)) -> usize {
        let total = self.size.saturating_mul(count);
        if from >= total {
            return 0;
        }
        let end = from + len.min(total - from);
        let flat = self.flat();
        if self.is_contiguous() {
            f(flat.blocks[0].off.wrapping_add(from as isize), 0, end - from);
            return end - from;
        }
        let ext = self.extent();
        let mut pos = from;
        let mut item = pos / self.size;
        let mut in_item = pos % self.size;
        // The block holding byte `in_item`: the last one starting at or before it.
        let mut b = flat.starts.partition_point(|&s| s <= in_item) - 1;
        while pos < end {
            let blk = flat.blocks[b];
            let skip = in_item - flat.starts[b];
            let n = (blk.len - skip).min(end - pos);
            let off = (item as isize).wrapping_mul(ext).wrapping_add(blk.off).wrapping_add(skip as isize);
            f(off, pos - from, n);
            pos += n;
            in_item += n;
            if skip + n == blk.len {
                b += 1;
                if b == flat.blocks.len() {
                    b = 0;
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
        self.walk(count, from, dst.len(), |off, pos, n| {
            // SAFETY: the caller guarantees the source bytes are readable; `walk` keeps
            // pos + n within dst.len(). User memory and `dst` may not overlap (MPI rule).
            unsafe { ptr::copy_nonoverlapping(at(src, off), out.add(pos), n) }
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
        self.walk(count, from, src.len(), |off, pos, n| {
            // SAFETY: the caller guarantees the destination bytes are writable; `walk`
            // keeps pos + n within src.len().
            unsafe { ptr::copy_nonoverlapping(inp.add(pos), at(dst, off) as *mut u8, n) }
        })
    }
}
