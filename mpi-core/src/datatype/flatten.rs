//! The committed form (DESIGN §7): one item of a type compiled to strided runs of byte
//! blocks (for pack, unpack and iovec lists; adjacent blocks merged) and to its type
//! signature as typed counts (for external32 and `MPI_Get_elements`). Both are in type-map
//! order, which is the packed order. A run keeps a vector's equal blocks as one entry, so
//! committing, packing and walking a vector of a million elements does not first build a
//! million-entry list (that cost 44 ns per element at commit).

use super::basic::Basic;
use super::tree::{Datatype, IndexedPieces, Kind};

/// `n` consecutive values of one basic type in the packed stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    pub basic: Basic,
    pub n: usize,
}

/// `count` blocks of `len` data bytes, block k at byte offset `off + k * stride` of an item
/// (`stride` is unused when `count` is 1). Blocks never touch: adjacent blocks are merged
/// into one, within a run and across runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub off: isize,
    pub len: usize,
    pub stride: isize,
    pub count: usize,
}

impl Run {
    /// Offset of the last block.
    fn last_off(&self) -> isize {
        self.off.wrapping_add(((self.count - 1) as isize).wrapping_mul(self.stride))
    }
}

/// One item of a type, flattened: `reps` copies of `runs`, copy j at `j * rep_stride`
/// (an array of structs, a vector of multi-block blocks: their runs stored once).
#[derive(Debug)]
pub struct Flat {
    pub runs: Vec<Run>,
    /// Packed position of each run's first byte in a copy (prefix sums of `len * count`).
    pub starts: Vec<usize>,
    pub reps: usize,
    pub rep_stride: isize,
    /// Packed bytes of one copy of `runs`.
    pub rep_size: usize,
    /// The type signature: `segs` repeated `seg_reps` times, as runs of one basic type
    /// (adjacent runs of the same type merged, except across repetitions).
    pub segs: Vec<Seg>,
    pub seg_reps: usize,
    /// Bytes of the item in external32 (not the native size for C `long` and `wchar_t`).
    pub ext_size: usize,
    /// The block length of every run when they all have the same, else 0.
    pub uniform: usize,
}

fn push_seg(out: &mut Vec<Seg>, s: Seg) {
    match out.last_mut() {
        Some(last) if last.basic == s.basic => last.n += s.n,
        _ => out.push(s),
    }
}

/// Appends `times` copies of the signature `sig` to `out` (which stands for `out` repeated
/// `reps` times): one merged run for a one-type signature, a repetition when `out` is still
/// empty, else copy by copy.
fn push_segs(out: &mut Vec<Seg>, reps: &mut usize, sig: &[Seg], times: usize) {
    if times == 0 || sig.is_empty() {
        return;
    }
    if out.is_empty() && times > 1 && sig.len() > 1 {
        (*out, *reps) = (sig.to_vec(), times);
        return;
    }
    if *reps > 1 {
        let one = std::mem::take(out);
        for _ in 0..std::mem::replace(reps, 1) {
            one.iter().for_each(|s| push_seg(out, *s));
        }
    }
    if let [s] = sig {
        push_seg(out, Seg { n: s.n * times, ..*s });
        return;
    }
    for _ in 0..times {
        sig.iter().for_each(|s| push_seg(out, *s));
    }
}

/// Appends one block, merging it into the last block when adjacent, or into the last run
/// when it continues that run's stride.
#[inline]
fn push_block(runs: &mut Vec<Run>, off: isize, len: usize) {
    if len == 0 {
        return;
    }
    if let Some(last) = runs.last_mut() {
        let last_off = last.last_off();
        if last_off.wrapping_add(last.len as isize) == off {
            if last.count == 1 {
                last.len += len;
            } else {
                last.count -= 1;
                let merged = Run { off: last_off, len: last.len + len, stride: 0, count: 1 };
                runs.push(merged);
            }
            return;
        }
        if last.len == len {
            if last.count == 1 {
                last.stride = off.wrapping_sub(last.off);
                last.count = 2;
                return;
            }
            if off == last_off.wrapping_add(last.stride) {
                last.count += 1;
                return;
            }
        }
    }
    runs.push(Run { off, len, stride: 0, count: 1 });
}

/// Appends a run (its first block through `push_block`, so it merges like single blocks).
#[inline]
fn push_run(runs: &mut Vec<Run>, r: Run) {
    if r.count == 0 || r.len == 0 {
        return;
    }
    if r.count == 1 || r.stride == r.len as isize {
        push_block(runs, r.off, r.len * r.count);
        return;
    }
    push_block(runs, r.off, r.len);
    let last = runs.last_mut().expect("push_block added a block");
    if last.len == r.len && last.last_off() == r.off && (last.count == 1 || last.stride == r.stride) {
        last.stride = r.stride;
        last.count += r.count - 1;
    } else {
        runs.push(Run { off: r.off.wrapping_add(r.stride), count: r.count - 1, ..r });
    }
}

/// A flat form under construction: `runs` repeated `reps` times, `rep_stride` bytes apart.
struct Builder {
    runs: Vec<Run>,
    segs: Vec<Seg>,
    seg_reps: usize,
    reps: usize,
    rep_stride: isize,
}

impl Builder {
    fn new() -> Self {
        Builder { runs: Vec::new(), segs: Vec::new(), seg_reps: 1, reps: 1, rep_stride: 0 }
    }

    /// Writes the repetition out as runs, before anything is appended after it.
    fn expand(&mut self) {
        if self.reps > 1 {
            let one = std::mem::take(&mut self.runs);
            for j in 0..self.reps {
                let base = (j as isize).wrapping_mul(self.rep_stride);
                for r in &one {
                    push_run(&mut self.runs, Run { off: base.wrapping_add(r.off), ..*r });
                }
            }
            self.reps = 1;
        }
    }

    fn run(&mut self, r: Run) {
        self.expand();
        push_run(&mut self.runs, r);
    }

    /// Appends `times` copies of the runs `rs`, copy j at `disp + j * stride`: one run when
    /// `rs` is one block or the copies continue its stride; a repetition (`reps`) when the
    /// form is still empty; else copy by copy.
    fn repeat(&mut self, rs: &[Run], disp: isize, times: usize, stride: isize) {
        match rs {
            [] => {}
            [r] if r.count == 1 => self.run(Run { off: disp.wrapping_add(r.off), stride, count: times, ..*r }),
            [r] if stride == r.stride.wrapping_mul(r.count as isize) => {
                self.run(Run { off: disp.wrapping_add(r.off), count: r.count * times, ..*r })
            }
            _ if self.runs.is_empty() && times > 1 => {
                self.runs = rs.iter().map(|r| Run { off: disp.wrapping_add(r.off), ..*r }).collect();
                (self.reps, self.rep_stride) = (times, stride);
            }
            _ => {
                for j in 0..times {
                    let base = disp.wrapping_add((j as isize).wrapping_mul(stride));
                    for r in rs {
                        self.run(Run { off: base.wrapping_add(r.off), ..*r });
                    }
                }
            }
        }
    }

    /// Appends `bl` consecutive items of `child` at `disp`.
    fn place(&mut self, child: &Datatype, disp: isize, bl: usize) {
        if bl == 0 {
            return;
        }
        let cf = child.flat();
        push_segs(&mut self.segs, &mut self.seg_reps, &cf.segs, cf.seg_reps * bl);
        self.place_runs(cf, child.extent(), disp, bl);
    }

    /// The runs of `place`: `bl` copies of the flat form `cf` (of extent `ext`) at `disp`.
    fn place_runs(&mut self, cf: &Flat, ext: isize, disp: isize, bl: usize) {
        if cf.reps == 1 {
            self.repeat(&cf.runs, disp, bl, ext);
        } else if bl == 1 || cf.rep_stride.wrapping_mul(cf.reps as isize) == ext {
            // The items continue the child's own repetition.
            self.repeat(&cf.runs, disp, cf.reps * bl, cf.rep_stride);
        } else {
            for k in 0..bl {
                self.repeat(&cf.runs, disp.wrapping_add((k as isize).wrapping_mul(ext)), cf.reps, cf.rep_stride);
            }
        }
    }

    /// Appends the pieces (disp, items) of an indexed kind, all copies of `old`: the
    /// signature once for all their items, and for a one-block `old` a run per piece with
    /// no further look at `old`.
    fn place_indexed(&mut self, old: &Datatype, pieces: IndexedPieces) {
        let cf = old.flat();
        let ext = old.extent();
        let mut items = 0;
        match (cf.reps, cf.runs.as_slice()) {
            (1, [r]) if r.count == 1 => {
                self.expand();
                // At most a run per piece: growing the list by doubling cost a third of
                // the time (copies and page faults); the excess is given back below.
                self.runs.reserve(pieces.size_hint().0);
                for (d, bl) in pieces.filter(|p| p.1 > 0) {
                    items += bl;
                    push_run(&mut self.runs, Run { off: d.wrapping_add(r.off), len: r.len, stride: ext, count: bl });
                }
            }
            _ => {
                for (d, bl) in pieces.filter(|p| p.1 > 0) {
                    items += bl;
                    self.place_runs(cf, ext, d, bl);
                }
            }
        }
        push_segs(&mut self.segs, &mut self.seg_reps, &cf.segs, cf.seg_reps * items);
    }

    /// Appends a vector: `count` blocks of `bl` items of `old`, block j at `j * stride`
    /// bytes. A vector of one-block blocks is one run; of anything else, a repetition.
    fn place_vector(&mut self, old: &Datatype, count: usize, bl: usize, stride: isize) {
        if count == 0 || bl == 0 {
            return;
        }
        let mut one = Builder::new();
        one.place(old, 0, bl);
        one.expand();
        push_segs(&mut self.segs, &mut self.seg_reps, &one.segs, one.seg_reps * count);
        self.repeat(&one.runs, 0, count, stride);
    }
}

/// Flattens one item of `t`. Children are flattened once (cached on them) and replicated.
pub(crate) fn flatten(t: &Datatype) -> Flat {
    let mut b = Builder::new();
    match &t.kind {
        Kind::Basic(basic) => {
            push_block(&mut b.runs, 0, basic.size());
            b.segs.push(Seg { basic: *basic, n: 1 });
        }
        Kind::Marker(_) => {}
        Kind::Vector { count, blocklen, stride, old } => b.place_vector(old, *count, *blocklen, stride.wrapping_mul(old.extent())),
        Kind::Hvector { count, blocklen, stride, old } => b.place_vector(old, *count, *blocklen, *stride),
        kind => {
            match kind.indexed_pieces() {
                Some((old, pieces)) => b.place_indexed(old, pieces),
                None => kind.for_each_piece(|child, disp, bl| b.place(child, disp, bl)),
            }
        }
    }
    let Builder { mut runs, segs, seg_reps, reps, rep_stride } = b;
    if runs.capacity() > 2 * runs.len() {
        runs.shrink_to_fit();
    }
    let mut starts = Vec::with_capacity(runs.len());
    let mut pos = 0;
    for r in &runs {
        starts.push(pos);
        pos += r.len * r.count;
    }
    debug_assert_eq!(pos * reps, t.size);
    let ext_size = segs.iter().map(|s| s.n * s.basic.external32_size()).sum::<usize>() * seg_reps;
    let uniform = runs.first().map_or(0, |r| r.len);
    let uniform = if runs.iter().all(|r| r.len == uniform) { uniform } else { 0 };
    Flat { runs, starts, reps, rep_stride, rep_size: pos, segs, seg_reps, ext_size, uniform }
}

/// The byte blocks of `count` items, blocks of consecutive items merged when adjacent.
pub struct Blocks<'a> {
    /// The whole buffer as one block (contiguous fast path), until taken.
    single: Option<(isize, usize)>,
    flat: &'a Flat,
    extent: isize,
    count: usize,
    item: usize,
    /// Copy of the runs, run and block within it of the next block.
    rep: usize,
    run: usize,
    k: usize,
}

impl<'a> Blocks<'a> {
    pub(crate) fn new(flat: &'a Flat, extent: isize, count: usize) -> Self {
        Blocks { single: None, flat, extent, count, item: 0, rep: 0, run: 0, k: 0 }
    }

    pub(crate) fn single(off: isize, len: usize) -> Self {
        static EMPTY: Flat =
            Flat { runs: Vec::new(), starts: Vec::new(), reps: 1, rep_stride: 0, rep_size: 0, segs: Vec::new(), seg_reps: 1, ext_size: 0, uniform: 0 };
        Blocks { single: Some((off, len)), flat: &EMPTY, extent: 0, count: 0, item: 0, rep: 0, run: 0, k: 0 }
    }

    fn next_raw(&mut self) -> Option<(isize, usize)> {
        if self.flat.runs.is_empty() || self.item >= self.count {
            return None;
        }
        let r = self.flat.runs[self.run];
        let off = (self.item as isize)
            .wrapping_mul(self.extent)
            .wrapping_add((self.rep as isize).wrapping_mul(self.flat.rep_stride))
            .wrapping_add(r.off)
            .wrapping_add((self.k as isize).wrapping_mul(r.stride));
        self.k += 1;
        if self.k == r.count {
            self.k = 0;
            self.run += 1;
            if self.run == self.flat.runs.len() {
                self.run = 0;
                self.rep += 1;
                if self.rep == self.flat.reps {
                    self.rep = 0;
                    self.item += 1;
                }
            }
        }
        Some((off, r.len))
    }
}

impl Iterator for Blocks<'_> {
    type Item = (isize, usize);

    fn next(&mut self) -> Option<(isize, usize)> {
        if let Some(b) = self.single.take() {
            return Some(b);
        }
        let (off, mut len) = self.next_raw()?;
        loop {
            let save = (self.item, self.rep, self.run, self.k);
            match self.next_raw() {
                Some((o, l)) if off.wrapping_add(len as isize) == o => len += l,
                Some(_) => {
                    (self.item, self.rep, self.run, self.k) = save;
                    return Some((off, len));
                }
                None => return Some((off, len)),
            }
        }
    }
}
