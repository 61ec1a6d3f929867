//! The type tree: one node per constructor call, keeping the constructor's arguments (for
//! `MPI_Type_get_contents`) and the bounds, size and alignment computed when it is built.
//! Subarray and darray are also lowered to a tree of simpler nodes, which is what gets
//! flattened; the user-visible arguments stay on the node.

use super::basic::{Basic, Marker, Pair};
use super::flatten::Flat;
use crate::error::{ErrorClass, MpiError, MpiResult};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

/// Storage order of a multi-dimensional array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Row-major: the last dimension varies fastest.
    C,
    /// Column-major: the first dimension varies fastest.
    Fortran,
}

/// How one dimension of a darray is distributed over the process grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distrib {
    Block,
    Cyclic,
    None,
}

/// `darg` meaning "the default distribution argument" (MPI_DISTRIBUTE_DFLT_DARG).
pub const DFLT_DARG: i32 = -49767;

/// The constructor a type was made with, and its arguments.
#[derive(Debug)]
pub enum Kind {
    Basic(Basic),
    Marker(Marker),
    Pair { pair: Pair, lowered: Arc<Datatype> },
    Contiguous { count: usize, old: Arc<Datatype> },
    /// Stride in extents of `old`.
    Vector { count: usize, blocklen: usize, stride: isize, old: Arc<Datatype> },
    /// Stride in bytes.
    Hvector { count: usize, blocklen: usize, stride: isize, old: Arc<Datatype> },
    /// Displacements in extents of `old`.
    Indexed { blocklens: Vec<usize>, displs: Vec<isize>, old: Arc<Datatype> },
    /// Displacements in bytes.
    Hindexed { blocklens: Vec<usize>, displs: Vec<isize>, old: Arc<Datatype> },
    IndexedBlock { blocklen: usize, displs: Vec<isize>, old: Arc<Datatype> },
    HindexedBlock { blocklen: usize, displs: Vec<isize>, old: Arc<Datatype> },
    Struct { blocklens: Vec<usize>, displs: Vec<isize>, types: Vec<Arc<Datatype>> },
    Subarray {
        sizes: Vec<usize>,
        subsizes: Vec<usize>,
        starts: Vec<usize>,
        order: Order,
        old: Arc<Datatype>,
        lowered: Arc<Datatype>,
    },
    Darray {
        size: usize,
        rank: usize,
        gsizes: Vec<usize>,
        distribs: Vec<Distrib>,
        dargs: Vec<i32>,
        psizes: Vec<usize>,
        order: Order,
        old: Arc<Datatype>,
        lowered: Arc<Datatype>,
    },
    Resized { lb: isize, extent: isize, old: Arc<Datatype> },
    Dup { old: Arc<Datatype> },
}

/// A datatype. Immutable once built; shared through `Arc`, so a request holding one keeps
/// it alive after the user frees the handle.
#[derive(Debug)]
pub struct Datatype {
    pub(crate) kind: Kind,
    pub(crate) size: usize,
    pub(crate) lb: isize,
    pub(crate) ub: isize,
    /// Bounds of the data bytes alone (0, 0 when the type holds no data).
    pub(crate) true_lb: isize,
    pub(crate) true_ub: isize,
    /// Set by an MPI_LB/MPI_UB marker or a resize: such bounds win over data bounds.
    pub(crate) explicit_lb: bool,
    pub(crate) explicit_ub: bool,
    pub(crate) align: usize,
    /// Basic elements in one item.
    pub(crate) elements: usize,
    pub(crate) committed: AtomicBool,
    /// Made by an MPI-4.0 large-count (`_c`) constructor: its envelope reports the
    /// constructor's counts as large counts.
    pub(crate) large_counts: AtomicBool,
    pub(crate) flat: OnceLock<Flat>,
}

/// The pieces of an indexed kind (`Kind::indexed_pieces`): (displacement × `scale`, the
/// piece's block length or the common `blocklen`).
pub(crate) struct IndexedPieces<'a> {
    displs: &'a [isize],
    blocklens: Option<&'a [usize]>,
    blocklen: usize,
    scale: isize,
    i: usize,
}

impl Iterator for IndexedPieces<'_> {
    type Item = (isize, usize);

    #[inline]
    fn next(&mut self) -> Option<(isize, usize)> {
        let d = *self.displs.get(self.i)?;
        let bl = self.blocklens.map_or(self.blocklen, |b| b[self.i]);
        self.i += 1;
        Some((d.wrapping_mul(self.scale), bl))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.displs.len() - self.i;
        (n, Some(n))
    }
}

/// `check_displacements` of an indexed kind with one block length: every condition is
/// "displacement plus a constant in range", so the two extreme displacements decide.
fn check_block(old: &Arc<Datatype>, displs: &[isize], bl: usize, scale: isize, check: impl Fn(&Arc<Datatype>, isize, isize, usize) -> MpiResult<()>) -> MpiResult<()> {
    if bl == 0 || displs.is_empty() {
        return Ok(());
    }
    let (lo, hi) = displs.iter().fold((isize::MAX, isize::MIN), |(l, h), &d| (l.min(d), h.max(d)));
    check(old, lo, scale, bl)?;
    check(old, hi, scale, bl)
}

/// `check_displacements` of an indexed kind with a length per block: each block in 128-bit
/// arithmetic (nothing can overflow there); only one out of range takes the exact check,
/// which makes the error.
fn check_indexed(old: &Arc<Datatype>, displs: &[isize], bls: &[usize], scale: isize, check: impl Fn(&Arc<Datatype>, isize, isize, usize) -> MpiResult<()>) -> MpiResult<()> {
    let (ext, top, bottom) = (old.extent() as i128, old.ub.max(old.true_ub) as i128, old.lb.min(old.true_lb) as i128);
    let fits = |v: i128| (isize::MIN as i128..=isize::MAX as i128).contains(&v);
    for (&bl, &d) in bls.iter().zip(displs) {
        if bl == 0 {
            continue;
        }
        let disp = d as i128 * scale as i128;
        let last = (bl as i128 - 1) * ext;
        let low = disp + last.min(0);
        if !(bl - 1 <= isize::MAX as usize && fits(disp) && fits(last) && fits(disp + last) && fits(disp + last + top) && fits(low) && fits(low + bottom)) {
            check(old, d, scale, bl)?;
        }
    }
    Ok(())
}

/// For `for_each_piece_weighted`: the pieces (disp, bl) of copies of `old` reduced to the
/// one reaching the lowest bound (carrying every item) and the one reaching the highest.
/// Empty pieces place nothing (their displacements may be anything).
/// With one block length the extremes are the lowest and highest displacement (one
/// min/max pass the compiler vectorises).
fn extremes(old: &Arc<Datatype>, pieces: IndexedPieces, f: &mut impl FnMut(&Arc<Datatype>, isize, usize, usize)) {
    if pieces.blocklens.is_none() {
        let (bl, n) = (pieces.blocklen, pieces.displs.len());
        if bl > 0 && n > 0 {
            let s = pieces.scale;
            let (lo, hi) = pieces.displs.iter().fold((isize::MAX, isize::MIN), |(l, h), &d| {
                let v = d.wrapping_mul(s);
                (l.min(v), h.max(v))
            });
            f(old, lo, bl, bl.saturating_mul(n));
            f(old, hi, bl, 0);
        }
        return;
    }
    let ext = old.extent();
    let (mut items, mut lo, mut hi) = (0usize, (isize::MAX, 0, 0), (isize::MIN, 0, 0));
    for (d, bl) in pieces.filter(|p| p.1 > 0) {
        let first = items == 0;
        items = items.saturating_add(bl);
        let span = (bl as isize - 1).wrapping_mul(ext);
        let (l, h) = (d.wrapping_add(span.min(0)), d.wrapping_add(span.max(0)));
        if first || l < lo.0 {
            lo = (l, d, bl);
        }
        if first || h > hi.0 {
            hi = (h, d, bl);
        }
    }
    if items > 0 {
        f(old, lo.1, lo.2, items);
        f(old, hi.1, hi.2, 0);
    }
}

fn arg(msg: impl Into<String>) -> MpiError {
    MpiError::new(ErrorClass::Arg, msg)
}

fn too_large() -> MpiError {
    MpiError::new(ErrorClass::Arg, "the datatype is too large (size or displacement overflows)")
}

fn mul(a: isize, b: isize) -> MpiResult<isize> {
    a.checked_mul(b).ok_or_else(too_large)
}

fn add(a: isize, b: isize) -> MpiResult<isize> {
    a.checked_add(b).ok_or_else(too_large)
}

fn to_isize(n: usize) -> MpiResult<isize> {
    isize::try_from(n).map_err(|_| too_large())
}

impl Kind {
    /// Calls `f(child, byte displacement, blocklength)` for each block of copies of a child
    /// type; copy k of a block sits at `displacement + k * child.extent()`.
    pub(crate) fn for_each_piece(&self, mut f: impl FnMut(&Arc<Datatype>, isize, usize)) {
        match self {
            Kind::Basic(_) | Kind::Marker(_) => {}
            Kind::Pair { lowered, .. } | Kind::Subarray { lowered, .. } | Kind::Darray { lowered, .. } => {
                f(lowered, 0, 1)
            }
            Kind::Resized { old, .. } | Kind::Dup { old } => f(old, 0, 1),
            Kind::Contiguous { count, old } => f(old, 0, *count),
            Kind::Vector { count, blocklen, stride, old } => {
                for j in 0..*count {
                    f(old, (j as isize).wrapping_mul(*stride).wrapping_mul(old.extent()), *blocklen)
                }
            }
            Kind::Hvector { count, blocklen, stride, old } => {
                for j in 0..*count {
                    f(old, (j as isize).wrapping_mul(*stride), *blocklen)
                }
            }
            Kind::Indexed { .. } | Kind::Hindexed { .. } | Kind::IndexedBlock { .. } | Kind::HindexedBlock { .. } => {
                let (old, pieces) = self.indexed_pieces().expect("an indexed kind");
                pieces.for_each(|(d, bl)| f(old, d, bl))
            }
            Kind::Struct { blocklens, displs, types } => {
                for ((bl, d), t) in blocklens.iter().zip(displs).zip(types) {
                    f(t, *d, *bl)
                }
            }
        }
    }

    /// What the constructor needs of the pieces, without visiting each: `f(type, disp, bl,
    /// items)` where `disp` and `bl` place copies whose bounds matter and `items` is how
    /// many items of `type` the call stands for (sizes add up by it). Pieces of one type
    /// (vectors, the indexed kinds) come as the two that reach the lowest and the highest
    /// bound, carrying all their items between them: a million blocks in two calls, after
    /// a tight loop over the displacements for the indexed kinds.
    pub(crate) fn for_each_piece_weighted(&self, mut f: impl FnMut(&Arc<Datatype>, isize, usize, usize)) {
        match self {
            Kind::Vector { count, blocklen, stride, old } if *count > 0 => {
                let last = ((count - 1) as isize).wrapping_mul(*stride).wrapping_mul(old.extent());
                f(old, 0, *blocklen, *blocklen);
                f(old, last, *blocklen, blocklen.saturating_mul(count - 1));
            }
            Kind::Hvector { count, blocklen, stride, old } if *count > 0 => {
                f(old, 0, *blocklen, *blocklen);
                f(old, ((count - 1) as isize).wrapping_mul(*stride), *blocklen, blocklen.saturating_mul(count - 1));
            }
            _ => match self.indexed_pieces() {
                Some((old, pieces)) => extremes(old, pieces, &mut f),
                None => self.for_each_piece(|t, disp, bl| f(t, disp, bl, bl)),
            },
        }
    }

    /// For the indexed kinds (pieces that are all copies of one type): that type and the
    /// pieces as (byte displacement, items).
    pub(crate) fn indexed_pieces(&self) -> Option<(&Arc<Datatype>, IndexedPieces<'_>)> {
        let (displs, blocklens, blocklen, scale, old) = match self {
            Kind::Indexed { blocklens, displs, old } => (displs, Some(blocklens), 0, old.extent(), old),
            Kind::Hindexed { blocklens, displs, old } => (displs, Some(blocklens), 0, 1, old),
            Kind::IndexedBlock { blocklen, displs, old } => (displs, None, *blocklen, old.extent(), old),
            Kind::HindexedBlock { blocklen, displs, old } => (displs, None, *blocklen, 1, old),
            _ => return None,
        };
        Some((old, IndexedPieces { displs, blocklens: blocklens.map(|b| &b[..]), blocklen, scale, i: 0 }))
    }

    /// Checks that displacements cannot overflow when placed (so `for_each_piece`'s
    /// wrapping arithmetic never actually wraps). Empty blocks place nothing, so their
    /// displacements may be anything (MPICH's indexed_misc puts LLONG_MAX there).
    fn check_displacements(&self) -> MpiResult<()> {
        let mut res = Ok(());
        let check = |old: &Arc<Datatype>, d: isize, scale: isize, bl: usize| -> MpiResult<()> {
            if bl == 0 {
                return Ok(());
            }
            let disp = mul(d, scale)?;
            let last = mul(to_isize(bl.saturating_sub(1))?, old.extent())?;
            add(add(disp, last)?, old.ub.max(old.true_ub))?;
            add(add(disp, last.min(0))?, old.lb.min(old.true_lb))?;
            Ok(())
        };
        match self {
            Kind::Vector { count, blocklen, stride, old } if *count > 0 && *blocklen > 0 => {
                let last = to_isize(count - 1).and_then(|c| mul(c, *stride));
                res = last.and_then(|l| check(old, l, old.extent(), *blocklen));
            }
            Kind::Hvector { count, blocklen, stride, old } if *count > 0 && *blocklen > 0 => {
                let last = to_isize(count - 1).and_then(|c| mul(c, *stride));
                res = last.and_then(|l| check(old, l, 1, *blocklen));
            }
            Kind::Contiguous { count, old } => res = check(old, 0, 1, *count),
            Kind::Indexed { blocklens, displs, old } => res = check_indexed(old, displs, blocklens, old.extent(), check),
            Kind::IndexedBlock { blocklen, displs, old } => res = check_block(old, displs, *blocklen, old.extent(), check),
            Kind::Hindexed { blocklens, displs, old } => res = check_indexed(old, displs, blocklens, 1, check),
            Kind::HindexedBlock { blocklen, displs, old } => res = check_block(old, displs, *blocklen, 1, check),
            Kind::Struct { blocklens, displs, types } => {
                for ((bl, d), t) in blocklens.iter().zip(displs).zip(types) {
                    res = res.and_then(|_| check(t, *d, 1, *bl));
                }
            }
            _ => {}
        }
        res
    }
}

/// Running min/max.
#[derive(Default)]
struct Range(Option<(isize, isize)>);

impl Range {
    fn add(&mut self, lo: isize, hi: isize) {
        self.0 = Some(match self.0 {
            None => (lo, hi),
            Some((a, b)) => (a.min(lo), b.max(hi)),
        });
    }
}

impl Datatype {
    fn leaf(kind: Kind, size: usize, lb: isize, ub: isize, explicit: (bool, bool), align: usize, elements: usize) -> Arc<Self> {
        let (true_lb, true_ub) = if size > 0 { (lb, ub) } else { (0, 0) };
        Arc::new(Datatype {
            kind,
            size,
            lb,
            ub,
            true_lb,
            true_ub,
            explicit_lb: explicit.0,
            explicit_ub: explicit.1,
            align,
            elements,
            committed: AtomicBool::new(false),
            large_counts: AtomicBool::new(false),
            flat: OnceLock::new(),
        })
    }

    /// A predefined basic type (committed).
    pub fn basic(b: Basic) -> Arc<Self> {
        let t = Self::leaf(Kind::Basic(b), b.size(), 0, b.size() as isize, (false, false), b.align(), 1);
        t.commit();
        t
    }

    /// `MPI_LB` or `MPI_UB`: holds no data, sets a sticky bound at its displacement.
    pub fn marker(m: Marker) -> Arc<Self> {
        let t = Self::leaf(Kind::Marker(m), 0, 0, 0, (m == Marker::Lb, m == Marker::Ub), 1, 0);
        t.commit();
        t
    }

    /// A predefined pair type (committed): a struct of its two members, padded.
    pub fn pair(p: Pair) -> Arc<Self> {
        let (a, b) = p.members();
        let off = b.align().max(a.size()).next_multiple_of(b.align()) as isize;
        let lowered = Self::structure(&[1, 1], &[0, off], &[Self::basic(a), Self::basic(b)])
            .expect("pair types are valid structs");
        let t = Self::derived(Kind::Pair { pair: p, lowered }).expect("pair types are valid");
        t.commit();
        t
    }

    /// Builds a derived node: size, alignment and bounds from the pieces.
    fn derived(kind: Kind) -> MpiResult<Arc<Self>> {
        kind.check_displacements()?;
        let mut size: usize = 0;
        let mut elements: usize = 0;
        let mut align = 1;
        let mut any = Range::default();
        let mut expl_lb: Option<isize> = None;
        let mut expl_ub: Option<isize> = None;
        let mut data = Range::default();
        let mut overflow = false;
        kind.for_each_piece_weighted(|t, disp, bl, items| {
            if bl == 0 {
                return;
            }
            match t.size.checked_mul(items).and_then(|s| size.checked_add(s)) {
                Some(s) => size = s,
                None => overflow = true,
            }
            elements = elements.saturating_add(t.elements.saturating_mul(items));
            align = align.max(t.align);
            // Copies sit at disp + k*extent, k in 0..bl: the extremes are at k = 0 or bl-1.
            let span = (bl as isize - 1).wrapping_mul(t.extent());
            let (lo_shift, hi_shift) = (span.min(0), span.max(0));
            // A marker sets only its own bound: a struct of MPI_LB markers alone has ub 0,
            // not the markers' place (MPICH's rule, which drops the markers, builds the
            // rest and resizes; the MPI-1 text would count the marker in max_j disp_j).
            if !matches!(t.kind, Kind::Marker(_)) {
                any.add(disp + lo_shift + t.lb, disp + hi_shift + t.ub);
            }
            if t.explicit_lb {
                let v = disp + lo_shift + t.lb;
                expl_lb = Some(expl_lb.map_or(v, |e| e.min(v)));
            }
            if t.explicit_ub {
                let v = disp + hi_shift + t.ub;
                expl_ub = Some(expl_ub.map_or(v, |e| e.max(v)));
            }
            if t.size > 0 {
                data.add(disp + lo_shift + t.true_lb, disp + hi_shift + t.true_ub);
            }
        });
        if overflow || isize::try_from(size).is_err() {
            return Err(too_large());
        }
        let (any_lb, any_ub) = any.0.unwrap_or((0, 0));
        let (mut lb, mut ub) = (expl_lb.unwrap_or(any_lb), expl_ub.unwrap_or(any_ub));
        let (true_lb, true_ub) = data.0.unwrap_or((0, 0));
        let (explicit_lb, explicit_ub) = (expl_lb.is_some(), expl_ub.is_some());
        match &kind {
            Kind::Resized { lb: new_lb, extent, .. } => {
                lb = *new_lb;
                ub = add(*new_lb, *extent)?;
            }
            // The standard's "epsilon": a struct's extent is rounded up to its alignment. As
            // MPICH does, the span of the entries other than markers is rounded, and an
            // MPI_LB marker moves lb without undoing the padding of ub.
            Kind::Struct { .. } if !explicit_ub => {
                let ext = any_ub - any_lb;
                if ext > 0 && ext % align as isize != 0 {
                    ub += align as isize - ext % align as isize;
                }
            }
            _ => {}
        }
        let resized = matches!(kind, Kind::Resized { .. });
        Ok(Arc::new(Datatype {
            kind,
            size,
            lb,
            ub,
            true_lb,
            true_ub,
            explicit_lb: explicit_lb || resized,
            explicit_ub: explicit_ub || resized,
            align,
            elements,
            committed: AtomicBool::new(false),
            large_counts: AtomicBool::new(false),
            flat: OnceLock::new(),
        }))
    }

    pub fn contiguous(count: usize, old: &Arc<Self>) -> MpiResult<Arc<Self>> {
        Self::derived(Kind::Contiguous { count, old: old.clone() })
    }

    /// `count` blocks of `blocklen` items, block starts `stride` extents apart.
    pub fn vector(count: usize, blocklen: usize, stride: isize, old: &Arc<Self>) -> MpiResult<Arc<Self>> {
        Self::derived(Kind::Vector { count, blocklen, stride, old: old.clone() })
    }

    /// Like `vector` with the stride in bytes.
    pub fn hvector(count: usize, blocklen: usize, stride: isize, old: &Arc<Self>) -> MpiResult<Arc<Self>> {
        Self::derived(Kind::Hvector { count, blocklen, stride, old: old.clone() })
    }

    /// The indexed constructors take the arrays by value: the type keeps them (the C layer
    /// has converted them already, so no second copy).
    pub fn indexed(blocklens: Vec<usize>, displs: Vec<isize>, old: &Arc<Self>) -> MpiResult<Arc<Self>> {
        if blocklens.len() != displs.len() {
            return Err(arg("blocklengths and displacements differ in length"));
        }
        Self::derived(Kind::Indexed { blocklens, displs, old: old.clone() })
    }

    pub fn hindexed(blocklens: Vec<usize>, displs: Vec<isize>, old: &Arc<Self>) -> MpiResult<Arc<Self>> {
        if blocklens.len() != displs.len() {
            return Err(arg("blocklengths and displacements differ in length"));
        }
        Self::derived(Kind::Hindexed { blocklens, displs, old: old.clone() })
    }

    pub fn indexed_block(blocklen: usize, displs: Vec<isize>, old: &Arc<Self>) -> MpiResult<Arc<Self>> {
        Self::derived(Kind::IndexedBlock { blocklen, displs, old: old.clone() })
    }

    pub fn hindexed_block(blocklen: usize, displs: Vec<isize>, old: &Arc<Self>) -> MpiResult<Arc<Self>> {
        Self::derived(Kind::HindexedBlock { blocklen, displs, old: old.clone() })
    }

    /// General struct (byte displacements); `MPI_LB`/`MPI_UB` markers allowed among `types`.
    pub fn structure(blocklens: &[usize], displs: &[isize], types: &[Arc<Self>]) -> MpiResult<Arc<Self>> {
        if blocklens.len() != displs.len() || blocklens.len() != types.len() {
            return Err(arg("blocklengths, displacements and types differ in length"));
        }
        Self::derived(Kind::Struct { blocklens: blocklens.to_vec(), displs: displs.to_vec(), types: types.to_vec() })
    }

    /// Same type map, with lower bound `lb` and extent `extent`.
    pub fn resized(old: &Arc<Self>, lb: isize, extent: isize) -> MpiResult<Arc<Self>> {
        Self::derived(Kind::Resized { lb, extent, old: old.clone() })
    }

    pub fn dup(old: &Arc<Self>) -> MpiResult<Arc<Self>> {
        Self::derived(Kind::Dup { old: old.clone() })
    }

    /// A block of `subsizes` starting at `starts` in an array of `sizes` items of `old`.
    /// Lowered to one hindexed node per dimension (fastest first) over a resized child
    /// whose extent is that dimension's stride; the result spans the whole array.
    pub fn subarray(sizes: &[usize], subsizes: &[usize], starts: &[usize], order: Order, old: &Arc<Self>) -> MpiResult<Arc<Self>> {
        let n = sizes.len();
        if n == 0 || subsizes.len() != n || starts.len() != n {
            return Err(arg("sizes, subsizes and starts must have ndims > 0 entries each"));
        }
        for d in 0..n {
            if sizes[d] == 0 || subsizes[d] == 0 || subsizes[d] > sizes[d] || starts[d] > sizes[d] - subsizes[d] {
                return Err(arg(format!(
                    "dimension {d}: need 0 < subsize ({}) <= size ({}) and 0 <= start ({}) <= size - subsize",
                    subsizes[d], sizes[d], starts[d]
                )));
            }
        }
        let runs: Vec<Vec<(usize, usize)>> = (0..n).map(|d| vec![(starts[d], subsizes[d])]).collect();
        let lowered = lower_grid(sizes, &runs, order, old)?;
        Self::derived(Kind::Subarray {
            sizes: sizes.to_vec(),
            subsizes: subsizes.to_vec(),
            starts: starts.to_vec(),
            order,
            old: old.clone(),
            lowered,
        })
    }

    /// The part of a distributed global array that process `rank` of a `psizes` grid
    /// (row-major rank order) owns (MPI-3.1 §4.1.4).
    #[allow(clippy::too_many_arguments)]
    pub fn darray(
        size: usize,
        rank: usize,
        gsizes: &[usize],
        distribs: &[Distrib],
        dargs: &[i32],
        psizes: &[usize],
        order: Order,
        old: &Arc<Self>,
    ) -> MpiResult<Arc<Self>> {
        let n = gsizes.len();
        if n == 0 || distribs.len() != n || dargs.len() != n || psizes.len() != n {
            return Err(arg("gsizes, distribs, dargs and psizes must have ndims > 0 entries each"));
        }
        if psizes.contains(&0) || psizes.iter().try_fold(1usize, |a, &p| a.checked_mul(p)) != Some(size) {
            return Err(arg(format!("the process grid {psizes:?} does not have {size} processes")));
        }
        if rank >= size {
            return Err(arg(format!("rank {rank} is not below size {size}")));
        }
        // Row-major coordinates of `rank` in the grid.
        let mut coords = vec![0; n];
        let mut r = rank;
        for d in (0..n).rev() {
            coords[d] = r % psizes[d];
            r /= psizes[d];
        }
        let mut runs = Vec::with_capacity(n);
        for d in 0..n {
            let (g, p, c) = (gsizes[d], psizes[d], coords[d]);
            if g == 0 {
                return Err(arg(format!("gsizes[{d}] must be positive")));
            }
            let mut dim_runs = Vec::new();
            match distribs[d] {
                Distrib::None => {
                    if p != 1 {
                        return Err(arg(format!("dimension {d} is not distributed but has {p} processes")));
                    }
                    dim_runs.push((0, g));
                }
                Distrib::Block => {
                    let b = if dargs[d] == DFLT_DARG { g.div_ceil(p) } else { dargs[d].max(0) as usize };
                    if b == 0 || b.saturating_mul(p) < g {
                        return Err(arg(format!("dimension {d}: block size {} cannot cover {g} items on {p} processes", dargs[d])));
                    }
                    let start = (b * c).min(g);
                    let len = (g - start).min(b);
                    if len > 0 {
                        dim_runs.push((start, len));
                    }
                }
                Distrib::Cyclic => {
                    let b = if dargs[d] == DFLT_DARG { 1 } else { dargs[d].max(0) as usize };
                    if b == 0 {
                        return Err(arg(format!("dimension {d}: cyclic block size must be positive")));
                    }
                    let mut start = b * c;
                    while start < g {
                        dim_runs.push((start, (g - start).min(b)));
                        start += b * p;
                    }
                }
            }
            runs.push(dim_runs);
        }
        let lowered = lower_grid(gsizes, &runs, order, old)?;
        Self::derived(Kind::Darray {
            size,
            rank,
            gsizes: gsizes.to_vec(),
            distribs: distribs.to_vec(),
            dargs: dargs.to_vec(),
            psizes: psizes.to_vec(),
            order,
            old: old.clone(),
            lowered,
        })
    }
}

/// The items of an array of `sizes` whose index in each dimension d lies in one of the
/// (start, len) runs of `runs[d]`, in storage order, with lb 0 and the whole array as extent.
fn lower_grid(sizes: &[usize], runs: &[Vec<(usize, usize)>], order: Order, old: &Arc<Datatype>) -> MpiResult<Arc<Datatype>> {
    let dims: Vec<usize> = match order {
        Order::C => (0..sizes.len()).rev().collect(),
        Order::Fortran => (0..sizes.len()).collect(),
    };
    let mut stride = old.extent();
    let mut t = old.clone();
    for d in dims {
        // Consecutive indices of this dimension are `stride` bytes apart.
        let child = if t.extent() == stride { t } else { Datatype::resized(&t, 0, stride)? };
        let lens: Vec<usize> = runs[d].iter().map(|r| r.1).collect();
        let displs = runs[d].iter().map(|r| to_isize(r.0).and_then(|s| mul(s, stride))).collect::<MpiResult<Vec<_>>>()?;
        t = Datatype::hindexed(lens, displs, &child)?;
        stride = mul(stride, to_isize(sizes[d])?)?;
    }
    Datatype::resized(&t, 0, stride)
}
