//! The committed form (DESIGN §7): one item of a type flattened to typed runs (for the type
//! signature and external32) and to byte blocks with adjacent blocks merged (for pack,
//! unpack and iovec lists). Both are in type-map order, which is the packed order.

use super::basic::Basic;
use super::tree::{Datatype, Kind};

/// `n` consecutive values of one basic type at byte offset `off` of an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    pub off: isize,
    pub basic: Basic,
    pub n: usize,
}

/// `len` data bytes at offset `off` of an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub off: isize,
    pub len: usize,
}

/// One item of a type, flattened.
#[derive(Debug, Default)]
pub struct Flat {
    pub segs: Vec<Seg>,
    pub blocks: Vec<Block>,
    /// Packed position of each block's first byte (prefix sums of the lengths).
    pub starts: Vec<usize>,
    /// Bytes of the item in external32 (not the native size for C `long` and `wchar_t`).
    pub ext_size: usize,
}

fn push_seg(out: &mut Vec<Seg>, s: Seg) {
    if let Some(last) = out.last_mut() {
        if last.basic == s.basic && last.off.wrapping_add((last.n * s.basic.size()) as isize) == s.off {
            last.n += s.n;
            return;
        }
    }
    out.push(s);
}

/// Flattens one item of `t`. Children are flattened once (cached on them) and replicated.
pub(crate) fn flatten(t: &Datatype) -> Flat {
    let mut segs = Vec::new();
    match &t.kind {
        Kind::Basic(b) => segs.push(Seg { off: 0, basic: *b, n: 1 }),
        Kind::Marker(_) => {}
        kind => kind.for_each_piece(|child, disp, bl| {
            let child_segs = &child.flat().segs;
            let ext = child.extent();
            // A child that is one run of values filling its extent: the bl copies are one
            // run too (what the loop below would merge them into, without bl steps, which
            // a large-count block of billions of bytes needs).
            if let [s] = child_segs.as_slice() {
                if (s.n * s.basic.size()) as isize == ext {
                    push_seg(&mut segs, Seg { off: disp.wrapping_add(s.off), basic: s.basic, n: s.n * bl });
                    return;
                }
            }
            for k in 0..bl {
                let base = disp.wrapping_add((k as isize).wrapping_mul(ext));
                for s in child_segs {
                    push_seg(&mut segs, Seg { off: base.wrapping_add(s.off), ..*s });
                }
            }
        }),
    }
    let mut blocks: Vec<Block> = Vec::new();
    for s in &segs {
        let len = s.n * s.basic.size();
        match blocks.last_mut() {
            Some(b) if b.off.wrapping_add(b.len as isize) == s.off => b.len += len,
            _ => blocks.push(Block { off: s.off, len }),
        }
    }
    let mut starts = Vec::with_capacity(blocks.len());
    let mut pos = 0;
    for b in &blocks {
        starts.push(pos);
        pos += b.len;
    }
    debug_assert_eq!(pos, t.size);
    let ext_size = segs.iter().map(|s| s.n * s.basic.external32_size()).sum();
    Flat { segs, blocks, starts, ext_size }
}

/// The byte blocks of `count` items, blocks of consecutive items merged when adjacent.
pub struct Blocks<'a> {
    /// The whole buffer as one block (contiguous fast path), until taken.
    single: Option<(isize, usize)>,
    flat: &'a Flat,
    extent: isize,
    count: usize,
    item: usize,
    idx: usize,
}

impl<'a> Blocks<'a> {
    pub(crate) fn new(flat: &'a Flat, extent: isize, count: usize) -> Self {
        Blocks { single: None, flat, extent, count, item: 0, idx: 0 }
    }

    pub(crate) fn single(off: isize, len: usize) -> Self {
        static EMPTY: Flat = Flat { segs: Vec::new(), blocks: Vec::new(), starts: Vec::new(), ext_size: 0 };
        Blocks { single: Some((off, len)), flat: &EMPTY, extent: 0, count: 0, item: 0, idx: 0 }
    }

    fn next_raw(&mut self) -> Option<(isize, usize)> {
        if self.flat.blocks.is_empty() || self.item >= self.count {
            return None;
        }
        let b = self.flat.blocks[self.idx];
        let off = (self.item as isize).wrapping_mul(self.extent).wrapping_add(b.off);
        self.idx += 1;
        if self.idx == self.flat.blocks.len() {
            self.idx = 0;
            self.item += 1;
        }
        Some((off, b.len))
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
            let save = (self.item, self.idx);
            match self.next_raw() {
                Some((o, l)) if off.wrapping_add(len as isize) == o => len += l,
                Some(_) => {
                    (self.item, self.idx) = save;
                    return Some((off, len));
                }
                None => return Some((off, len)),
            }
        }
    }
}
