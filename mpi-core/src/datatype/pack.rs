//! Copying between user memory laid out by a type and a packed byte stream. Everything is a
//! walk over a byte range of the packed stream, so a transport can pack or unpack a large
//! message piece by piece (pipelining) without a full intermediate copy.

use super::flatten::Run;
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

/// Runs `$typed!(T)` with T the unsigned integer of `$len` bytes for lengths 1, 2, 4, 8
/// and 16 (one load and store per block), else `$other`.
macro_rules! by_width {
    ($len:expr, $typed:ident, $other:block) => {
        match $len {
            1 => $typed!(u8),
            2 => $typed!(u16),
            4 => $typed!(u32),
            8 => $typed!(u64),
            16 => $typed!(u128),
            _ => $other,
        }
    };
}

/// Copies `p.count` blocks of `p.len` bytes from `src` (k-th at `k * sstride`) to `dst`
/// (k-th at `k * dstride`), with one load and store per block for the small power-of-two
/// lengths of vectors of basic types (a `memcpy` call each cost 3.4 ns per 8-byte element).
///
/// # Safety
/// Every source block must be readable and every destination block writable, not
/// overlapping each other.
#[inline(always)]
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
    by_width!(len, typed, {
        for k in 0..count as isize {
            // SAFETY: as above.
            unsafe { crate::copy::copy_bytes(src.wrapping_offset(k * sstride), dst.wrapping_offset(k * dstride), len) }
        }
    })
}

/// What `walk` hands its caller: a piece of a run, or whole consecutive runs at memory
/// offset `base`, `times` copies of them `stride` bytes apart (whole repetitions of an
/// item's runs), packed from `pos` on.
enum Step<'a> {
    Piece(Piece),
    Runs { base: isize, runs: &'a [Run], times: usize, stride: isize, pos: usize },
}

/// Copies whole runs between memory (`mem`: the item's base address) and the packed stream
/// at `packed`, packing when `PACK`. Runs of one block length (`uniform`, 0 when they
/// differ) of a small power of two are copied in one loop of typed loads and stores:
/// an indexed type's blocks at a few nanoseconds per run otherwise.
///
/// # Safety
/// As for `copy_blocks`, for every block of `runs`.
#[inline(always)]
unsafe fn copy_runs<const PACK: bool>(mem: *mut u8, packed: *mut u8, runs: &[Run], uniform: usize, times: usize, stride: isize) {
    macro_rules! typed {
        ($t:ty) => {{
            let mut q = packed as *mut $t;
            for j in 0..times as isize {
                let mem = mem.wrapping_offset(j * stride);
                for r in runs {
                    let mut m = mem.wrapping_offset(r.off);
                    for _ in 0..r.count {
                        // SAFETY: every block of `runs` is in the caller's ranges; `q` walks
                        // the packed bytes of these runs.
                        unsafe {
                            if PACK {
                                ptr::write_unaligned(q, ptr::read_unaligned(m as *const $t));
                            } else {
                                ptr::write_unaligned(m as *mut $t, ptr::read_unaligned(q));
                            }
                            q = q.add(1);
                        }
                        m = m.wrapping_offset(r.stride);
                    }
                }
            }
        }};
    }
    by_width!(uniform, typed, {
        let mut q = packed;
        for j in 0..times as isize {
            let mem = mem.wrapping_offset(j * stride);
            for r in runs {
                let m = mem.wrapping_offset(r.off);
                // SAFETY: as above.
                unsafe {
                    if r.len <= 32 && r.count < 4 {
                        // Few short blocks of mixed lengths (an indexed type whose adjacent
                        // blocks merged: 8 and 16 bytes in turn) by size class, which stays
                        // one branch target where `copy_blocks`'s exact widths alternated
                        // (6.7 ns per 8-byte element, 0.45 in MPICH); longer runs keep its
                        // one typed load and store per block.
                        for k in 0..r.count as isize {
                            let (a, b) = (m.wrapping_offset(k * r.stride), q.add(k as usize * r.len));
                            if PACK {
                                crate::copy::copy_bytes(a, b, r.len);
                            } else {
                                crate::copy::copy_bytes(b, a, r.len);
                            }
                        }
                    } else if PACK {
                        copy_blocks(m, r.stride, q, r.len as isize, r.len, r.count);
                    } else {
                        copy_blocks(q, r.len as isize, m, r.stride, r.len, r.count);
                    }
                    q = q.add(r.len * r.count);
                }
            }
        }
    })
}

/// The piece of run `r` from its byte `rel`, at most `want` bytes, at `pos` in the
/// range: the rest of a block, or whole blocks.
fn part_of_run(r: Run, rel: usize, base: isize, want: usize, pos: usize, f: &mut impl FnMut(Step)) -> usize {
    let (k, skip) = (rel / r.len, rel % r.len);
    let off = base.wrapping_add(r.off).wrapping_add((k as isize).wrapping_mul(r.stride));
    if skip > 0 || want < r.len {
        let n = (r.len - skip).min(want);
        f(Step::Piece(Piece { off: off.wrapping_add(skip as isize), stride: 0, len: n, count: 1, pos }));
        n
    } else {
        let blocks = (want / r.len).min(r.count - k);
        f(Step::Piece(Piece { off, stride: r.stride, len: r.len, count: blocks, pos }));
        blocks * r.len
    }
}

impl Datatype {
    /// Calls `f` for the pieces of packed bytes `[from, from + len)` of `count` items
    /// (clamped to the end of the data), positions relative to `from`, and returns how many
    /// bytes that range holds. Runs that lie wholly in the range come in one step per item.
    fn walk(&self, count: usize, from: usize, len: usize, mut f: impl FnMut(Step)) -> usize {
        let total = self.size.saturating_mul(count);
        if from >= total {
            return 0;
        }
        let end = from + len.min(total - from);
        let flat = self.flat();
        if self.is_contiguous() {
            f(Step::Piece(Piece { off: flat.runs[0].off.wrapping_add(from as isize), stride: 0, len: end - from, count: 1, pos: 0 }));
            return end - from;
        }
        let ext = self.extent();
        let (nruns, rep_size) = (flat.runs.len(), flat.rep_size);
        let mut pos = from;
        // Where `pos` is: item, copy of the runs in it (`rep`), byte in that copy.
        let in_item = pos % self.size;
        let mut item_base = ((pos / self.size) as isize).wrapping_mul(ext);
        let (mut rep, mut in_rep) = (in_item / rep_size, in_item % rep_size);
        let mut base = item_base.wrapping_add((rep as isize).wrapping_mul(flat.rep_stride));
        // The run holding byte `in_rep`: the last one starting at or before it.
        let mut ri = flat.starts.partition_point(|&s| s <= in_rep) - 1;
        let mut next_rep = |rep: &mut usize, base: &mut isize| {
            *rep += 1;
            if *rep == flat.reps {
                *rep = 0;
                item_base = item_base.wrapping_add(ext);
            }
            *base = item_base.wrapping_add((*rep as isize).wrapping_mul(flat.rep_stride));
        };
        while pos < end {
            // Whole repetitions of the runs, at once.
            let times = if in_rep == 0 { ((end - pos) / rep_size).min(flat.reps - rep) } else { 0 };
            if times > 0 {
                f(Step::Runs { base, runs: &flat.runs, times, stride: flat.rep_stride, pos: pos - from });
                pos += times * rep_size;
                rep += times - 1;
                next_rep(&mut rep, &mut base);
                continue;
            }
            let rel = in_rep - flat.starts[ri];
            let limit = in_rep + (end - pos);
            // Runs ri..b end within the range.
            let mut b = ri;
            if rel == 0 {
                b += flat.starts[ri + 1..].partition_point(|&s| s <= limit);
                if b == nruns - 1 && rep_size <= limit {
                    b = nruns;
                }
            }
            if b > ri {
                f(Step::Runs { base, runs: &flat.runs[ri..b], times: 1, stride: 0, pos: pos - from });
                let stop = if b == nruns { rep_size } else { flat.starts[b] };
                pos += stop - in_rep;
                if b == nruns {
                    (ri, in_rep) = (0, 0);
                    next_rep(&mut rep, &mut base);
                } else {
                    (ri, in_rep) = (b, stop);
                }
                continue;
            }
            let r = flat.runs[ri];
            let n = part_of_run(r, rel, base, end - pos, pos - from, &mut f);
            pos += n;
            in_rep += n;
            if in_rep - flat.starts[ri] == r.len * r.count {
                ri += 1;
                if ri == nruns {
                    (ri, in_rep) = (0, 0);
                    next_rep(&mut rep, &mut base);
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
        let uniform = self.flat().uniform;
        // SAFETY (both arms): the caller guarantees the source bytes are readable; `walk`
        // keeps every step within dst.len(). User memory and `dst` may not overlap (MPI rule).
        self.walk(count, from, dst.len(), |step| match step {
            Step::Piece(p) => unsafe { copy_blocks(at(src, p.off), p.stride, out.add(p.pos), p.len as isize, p.len, p.count) },
            Step::Runs { base, runs, times, stride, pos } => unsafe {
                copy_runs::<true>(at(src, base) as *mut u8, out.add(pos), runs, uniform, times, stride)
            },
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
        let uniform = self.flat().uniform;
        // SAFETY (both arms): the caller guarantees the destination bytes are writable;
        // `walk` keeps every step within src.len().
        self.walk(count, from, src.len(), |step| match step {
            Step::Piece(p) => unsafe { copy_blocks(inp.add(p.pos), p.len as isize, at(dst, p.off) as *mut u8, p.stride, p.len, p.count) },
            Step::Runs { base, runs, times, stride, pos } => unsafe {
                copy_runs::<false>(at(dst, base) as *mut u8, inp.add(pos) as *mut u8, runs, uniform, times, stride)
            },
        })
    }
}
