//! MPI datatypes: type trees built by the constructors (`tree`), compiled at commit into a
//! flat block list (`flatten`), used to pack and unpack user memory (`pack`) and to convert
//! to the portable external32 representation (`external32`).
//!
//! Offsets are relative to the user's buffer pointer and may be negative; with a null
//! buffer (`MPI_BOTTOM`) they are absolute addresses.

mod basic;
mod external32;
mod flatten;
mod pack;
mod tree;

#[cfg(test)]
mod tests;

pub use basic::{Basic, Marker, Pair};
pub use flatten::{Blocks, Seg};
pub use tree::{Datatype, Distrib, Kind, Order, DFLT_DARG};

use flatten::{flatten, Flat};

/// The element a predefined reduction works on (`Datatype::reduction_unit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Basic(Basic),
    Pair(Pair),
}
use std::sync::atomic::Ordering;

impl Datatype {
    /// The constructor and its arguments (for `MPI_Type_get_envelope/get_contents`).
    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    /// True for the predefined types (combiner `MPI_COMBINER_NAMED`).
    pub fn is_named(&self) -> bool {
        matches!(self.kind, Kind::Basic(_) | Kind::Marker(_) | Kind::Pair { .. })
    }

    /// The basic type of a predefined basic type.
    pub fn as_basic(&self) -> Option<Basic> {
        match self.kind {
            Kind::Basic(b) => Some(b),
            _ => None,
        }
    }

    /// The pair of a predefined pair type (MINLOC/MAXLOC).
    pub fn as_pair(&self) -> Option<Pair> {
        match self.kind {
            Kind::Pair { pair, .. } => Some(pair),
            _ => None,
        }
    }

    /// Marks the type usable for communication and compiles its flat form now.
    pub fn commit(&self) {
        self.flat();
        self.committed.store(true, Ordering::Release);
    }

    pub fn committed(&self) -> bool {
        self.committed.load(Ordering::Acquire)
    }

    /// Records that a large-count (`_c`) constructor made this type (set once, right after
    /// construction).
    pub fn mark_large_counts(&self) {
        self.large_counts.store(true, Ordering::Release);
    }

    pub fn large_counts(&self) -> bool {
        self.large_counts.load(Ordering::Acquire)
    }

    /// The flat form, compiled on first use (children get compiled as parts of parents).
    pub(crate) fn flat(&self) -> &Flat {
        self.flat.get_or_init(|| flatten(self))
    }

    /// Data bytes in one item.
    pub fn size(&self) -> usize {
        self.size
    }

    /// `ub - lb`: the distance between consecutive items. May be zero or negative.
    pub fn extent(&self) -> isize {
        self.ub - self.lb
    }

    pub fn lb(&self) -> isize {
        self.lb
    }

    pub fn ub(&self) -> isize {
        self.ub
    }

    /// Lowest data byte offset of one item (0 when it holds no data).
    pub fn true_lb(&self) -> isize {
        self.true_lb
    }

    /// Span of the data bytes of one item.
    pub fn true_extent(&self) -> isize {
        self.true_ub - self.true_lb
    }

    /// Basic elements in one item.
    pub fn elements(&self) -> usize {
        self.elements
    }

    /// True when `count` items are `count * size()` bytes starting at `buf + true_lb()`:
    /// send and receive straight from user memory.
    pub fn is_contiguous(&self) -> bool {
        let f = self.flat();
        f.reps == 1 && matches!(f.runs.as_slice(), [r] if r.count == 1 && r.len as isize == self.extent())
    }

    /// The data bytes of `count` items as (offset from the buffer, length), in packed order,
    /// adjacent blocks merged: the iovec view for gather/scatter transports.
    pub fn blocks(&self, count: usize) -> Blocks<'_> {
        if self.is_contiguous() && count > 0 {
            return Blocks::single(self.flat().runs[0].off, self.size * count);
        }
        Blocks::new(self.flat(), self.extent(), count)
    }

    /// The type signature of one item as runs of one basic type, in packed order: the
    /// runs, and how many times they repeat.
    pub fn segments(&self) -> (&[Seg], usize) {
        let f = self.flat();
        (&f.segs, f.seg_reps)
    }

    /// The type signature of one item: runs of (basic type, count), adjacent runs of the
    /// same type merged. Two types match for communication iff these are equal per byte.
    pub fn signature(&self) -> Vec<(Basic, usize)> {
        let (segs, reps) = self.segments();
        let mut out: Vec<(Basic, usize)> = Vec::new();
        for s in std::iter::repeat_n(segs, reps).flatten() {
            match out.last_mut() {
                Some((b, n)) if *b == s.basic => *n += s.n,
                _ => out.push((s.basic, s.n)),
            }
        }
        out
    }

    /// What a predefined reduction combines in this type: the one basic type or predefined
    /// pair type (`MPI_DOUBLE_INT`, ...) every element is made of, with pairs kept whole
    /// (a vector of `MPI_2INT` is a run of pairs, not of ints). None when the type mixes
    /// them or holds no data.
    pub fn reduction_unit(&self) -> Option<Unit> {
        match &self.kind {
            Kind::Basic(b) => Some(Unit::Basic(*b)),
            Kind::Pair { pair, .. } => Some(Unit::Pair(*pair)),
            Kind::Marker(_) => None,
            Kind::Struct { blocklens, types, .. } => {
                let mut units = blocklens.iter().zip(types).filter(|(&n, t)| n > 0 && t.size() > 0).map(|(_, t)| t.reduction_unit());
                let first = units.next()??;
                units.all(|u| u == Some(first)).then_some(first)
            }
            Kind::Contiguous { old, .. }
            | Kind::Vector { old, .. }
            | Kind::Hvector { old, .. }
            | Kind::Indexed { old, .. }
            | Kind::Hindexed { old, .. }
            | Kind::IndexedBlock { old, .. }
            | Kind::HindexedBlock { old, .. }
            | Kind::Subarray { old, .. }
            | Kind::Darray { old, .. }
            | Kind::Resized { old, .. }
            | Kind::Dup { old } => old.reduction_unit(),
        }
    }

    /// Where `count` items lie in memory: (offset of the lowest data byte from the buffer
    /// pointer, bytes up to the highest). A buffer of that length holds them in the type's
    /// own layout (what a user reduction function is handed).
    pub fn data_span(&self, count: usize) -> (isize, usize) {
        if count == 0 || self.size == 0 {
            return (0, 0);
        }
        let last = (count as isize - 1).wrapping_mul(self.extent());
        let (lo, hi) = (self.true_lb + last.min(0), self.true_ub + last.max(0));
        (lo, (hi - lo) as usize)
    }

    /// Basic elements wholly contained in the first `bytes` packed bytes of any number of
    /// items (`MPI_Get_elements`); `None` when `bytes` ends inside a basic element.
    pub fn elements_for_bytes(&self, bytes: usize) -> Option<usize> {
        if self.size == 0 {
            return (bytes == 0).then_some(0);
        }
        let (segs, reps) = self.segments();
        // Whole items, then whole repetitions of the signature within one.
        let (rep_size, rep_elements) = (self.size / reps, self.elements / reps);
        let mut n = (bytes / self.size) * self.elements;
        let mut rem = bytes % self.size;
        n += (rem / rep_size) * rep_elements;
        rem %= rep_size;
        for s in segs {
            if rem == 0 {
                break;
            }
            let len = s.n * s.basic.size();
            if rem >= len {
                n += s.n;
                rem -= len;
            } else {
                if !rem.is_multiple_of(s.basic.size()) {
                    return None;
                }
                n += rem / s.basic.size();
                rem = 0;
            }
        }
        Some(n)
    }

    /// Bytes of `count` items packed natively (`external32_size` for external32).
    pub fn packed_size(&self, count: usize) -> Option<usize> {
        self.size.checked_mul(count)
    }
}
