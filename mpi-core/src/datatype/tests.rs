//! Unit tests and property tests: random type trees checked against a reference walk that
//! follows the standard's definition of each constructor directly (no flattening, no
//! lowering of subarray/darray).

use super::*;
use proptest::prelude::*;
use std::sync::Arc;

/// The type map of `count` items: (byte offset, basic type) of every basic element, in order.
fn reference(t: &Datatype, count: usize) -> Vec<(isize, Basic)> {
    let mut out = Vec::new();
    for i in 0..count {
        walk(t, i as isize * t.extent(), &mut out);
    }
    out
}

fn walk(t: &Datatype, base: isize, out: &mut Vec<(isize, Basic)>) {
    let rep = |old: &Arc<Datatype>, at: isize, n: usize, out: &mut Vec<(isize, Basic)>| {
        for k in 0..n {
            walk(old, at + k as isize * old.extent(), out);
        }
    };
    match t.kind() {
        Kind::Basic(b) => out.push((base, *b)),
        Kind::Marker(_) => {}
        Kind::Pair { pair, .. } => {
            let (a, b) = pair.members();
            out.push((base, a));
            out.push((base + a.size().next_multiple_of(b.align()) as isize, b));
        }
        Kind::Contiguous { count, old } => rep(old, base, *count, out),
        Kind::Vector { count, blocklen, stride, old } => {
            for j in 0..*count as isize {
                rep(old, base + j * stride * old.extent(), *blocklen, out)
            }
        }
        Kind::Hvector { count, blocklen, stride, old } => {
            for j in 0..*count as isize {
                rep(old, base + j * stride, *blocklen, out)
            }
        }
        Kind::Indexed { blocklens, displs, old } => {
            for (bl, d) in blocklens.iter().zip(displs) {
                rep(old, base + d * old.extent(), *bl, out)
            }
        }
        Kind::Hindexed { blocklens, displs, old } => {
            for (bl, d) in blocklens.iter().zip(displs) {
                rep(old, base + d, *bl, out)
            }
        }
        Kind::IndexedBlock { blocklen, displs, old } => {
            for d in displs {
                rep(old, base + d * old.extent(), *blocklen, out)
            }
        }
        Kind::HindexedBlock { blocklen, displs, old } => {
            for d in displs {
                rep(old, base + d, *blocklen, out)
            }
        }
        Kind::Struct { blocklens, displs, types } => {
            for ((bl, d), t) in blocklens.iter().zip(displs).zip(types) {
                rep(t, base + d, *bl, out)
            }
        }
        Kind::Resized { old, .. } | Kind::Dup { old } => walk(old, base, out),
        Kind::Subarray { sizes, subsizes, starts, order, old, .. } => {
            let owned = |d: usize, i: usize| i >= starts[d] && i < starts[d] + subsizes[d];
            grid_walk(sizes, *order, &owned, old, base, out)
        }
        Kind::Darray { size: _, rank, gsizes, distribs, dargs, psizes, order, old, .. } => {
            let n = gsizes.len();
            let mut coords = vec![0; n];
            let mut r = *rank;
            for d in (0..n).rev() {
                coords[d] = r % psizes[d];
                r /= psizes[d];
            }
            let owned = |d: usize, i: usize| match distribs[d] {
                Distrib::None => true,
                Distrib::Block => {
                    let b = if dargs[d] == DFLT_DARG { gsizes[d].div_ceil(psizes[d]) } else { dargs[d] as usize };
                    i / b == coords[d]
                }
                Distrib::Cyclic => {
                    let b = if dargs[d] == DFLT_DARG { 1 } else { dargs[d] as usize };
                    (i / b) % psizes[d] == coords[d]
                }
            };
            grid_walk(gsizes, *order, &owned, old, base, out)
        }
    }
}

/// Every item of a `sizes` array in storage order, kept when each index is `owned`.
fn grid_walk(sizes: &[usize], order: Order, owned: &dyn Fn(usize, usize) -> bool, old: &Arc<Datatype>, base: isize, out: &mut Vec<(isize, Basic)>) {
    let total: usize = sizes.iter().product();
    let n = sizes.len();
    for lin in 0..total {
        // Decompose the storage-order linear index into per-dimension indices.
        let mut idx = vec![0; n];
        let mut r = lin;
        let dims: Vec<usize> = match order {
            Order::C => (0..n).rev().collect(),
            Order::Fortran => (0..n).collect(),
        };
        for &d in &dims {
            idx[d] = r % sizes[d];
            r /= sizes[d];
        }
        if (0..n).all(|d| owned(d, idx[d])) {
            walk(old, base + lin as isize * old.extent(), out);
        }
    }
}

fn bytes_of(map: &[(isize, Basic)]) -> Vec<isize> {
    map.iter().flat_map(|&(o, b)| (0..b.size() as isize).map(move |k| o + k)).collect()
}

// ---- unit tests ------------------------------------------------------------------------

fn int() -> Arc<Datatype> {
    Datatype::basic(Basic::I32)
}

#[test]
fn pair_types_have_mpich_sizes_and_extents() {
    let cases = [
        (Pair::FloatInt, 8, 8),
        (Pair::DoubleInt, 12, 16),
        (Pair::LongInt, 12, 16),
        (Pair::ShortInt, 6, 8),
        (Pair::TwoInt, 8, 8),
        (Pair::LongDoubleInt, 20, 32),
    ];
    for (p, size, extent) in cases {
        let t = Datatype::pair(p);
        assert_eq!((t.size(), t.extent()), (size, extent), "{p:?}");
        assert_eq!(t.elements(), 2);
        assert!(t.committed());
    }
    assert_eq!(Datatype::pair(Pair::TwoInt).reduction_unit(), Some(Unit::Pair(Pair::TwoInt)));
    assert_eq!(Datatype::pair(Pair::DoubleInt).reduction_unit(), Some(Unit::Pair(Pair::DoubleInt)));
}

#[test]
fn struct_is_padded_to_alignment() {
    let t = Datatype::structure(&[1, 1], &[0, 8], &[Datatype::basic(Basic::F64), Datatype::basic(Basic::Char)]).unwrap();
    assert_eq!((t.size(), t.lb(), t.extent(), t.true_extent()), (9, 0, 16, 9));
}

#[test]
fn vector_bounds_and_blocks() {
    let t = Datatype::vector(3, 2, 4, &int()).unwrap();
    t.commit();
    assert_eq!((t.size(), t.lb(), t.extent()), (24, 0, 40));
    assert!(!t.is_contiguous());
    assert_eq!(t.blocks(1).collect::<Vec<_>>(), vec![(0, 8), (16, 8), (32, 8)]);
    // Negative stride: blocks go downwards, lb is negative.
    let n = Datatype::vector(3, 1, -2, &int()).unwrap();
    assert_eq!((n.lb(), n.ub(), n.true_lb()), (-16, 4, -16));
    assert_eq!(n.blocks(1).collect::<Vec<_>>(), vec![(0, 4), (-8, 4), (-16, 4)]);
}

#[test]
fn contiguous_fast_path_merges_items() {
    let t = Datatype::contiguous(4, &int()).unwrap();
    assert!(t.is_contiguous());
    assert_eq!(t.blocks(1000).collect::<Vec<_>>(), vec![(0, 16000)]);
    let v = Datatype::vector(2, 1, 1, &int()).unwrap();
    assert_eq!(v.blocks(3).collect::<Vec<_>>(), vec![(0, 24)]);
    assert_eq!(int().blocks(0).count(), 0);
}

#[test]
fn markers_set_sticky_bounds() {
    let lb = Datatype::marker(Marker::Lb);
    let ub = Datatype::marker(Marker::Ub);
    let t = Datatype::structure(&[1, 1, 1], &[-4, 0, 20], &[lb, int(), ub]).unwrap();
    assert_eq!((t.lb(), t.ub(), t.size(), t.true_lb(), t.true_extent()), (-4, 20, 4, 0, 4));
    // The bounds stick through an enclosing type.
    let c = Datatype::contiguous(2, &t).unwrap();
    assert_eq!((c.lb(), c.ub()), (-4, 44));
    let s = Datatype::structure(&[1, 1], &[0, 100], &[c, Datatype::basic(Basic::Char)]).unwrap();
    assert_eq!((s.lb(), s.ub()), (-4, 44));
}

#[test]
fn a_marker_sets_only_its_own_bound() {
    let lb = Datatype::marker(Marker::Lb);
    let ub = Datatype::marker(Marker::Ub);
    let t = Datatype::structure(&[1], &[10], &[lb.clone()]).unwrap();
    assert_eq!((t.lb(), t.ub(), t.extent(), t.size()), (10, 0, -10, 0));
    let t = Datatype::structure(&[1], &[10], &[ub]).unwrap();
    assert_eq!((t.lb(), t.ub()), (0, 10));
    let t = Datatype::structure(&[1, 1], &[20, 0], &[lb.clone(), int()]).unwrap();
    assert_eq!((t.lb(), t.ub()), (20, 4));
    // The real entries keep their padding when only lb is given (as MPICH).
    let t = Datatype::structure(&[1, 1, 1], &[-8, 0, 8], &[lb, Datatype::basic(Basic::F64), Datatype::basic(Basic::Char)]).unwrap();
    assert_eq!((t.lb(), t.ub()), (-8, 16));
}

#[test]
fn resized_changes_only_bounds() {
    let t = Datatype::resized(&int(), -4, 16).unwrap();
    assert_eq!((t.lb(), t.extent(), t.true_lb(), t.true_extent(), t.size()), (-4, 16, 0, 4, 4));
    assert_eq!(t.blocks(2).collect::<Vec<_>>(), vec![(0, 4), (16, 4)]);
}

#[test]
fn subarray_c_and_fortran() {
    let c = Datatype::subarray(&[4, 5], &[2, 3], &[1, 2], Order::C, &int()).unwrap();
    assert_eq!((c.lb(), c.extent(), c.size()), (0, 80, 24));
    assert_eq!(c.blocks(1).collect::<Vec<_>>(), vec![(28, 12), (48, 12)]);
    let f = Datatype::subarray(&[4, 5], &[2, 3], &[1, 2], Order::Fortran, &int()).unwrap();
    assert_eq!(f.blocks(1).collect::<Vec<_>>(), vec![(36, 8), (52, 8), (68, 8)]);
    assert!(Datatype::subarray(&[4], &[3], &[2], Order::C, &int()).is_err());
}

#[test]
fn darray_block_cyclic() {
    // 8 items, 2 processes, cyclic(2): rank 1 owns 2,3,6,7.
    let t = Datatype::darray(2, 1, &[8], &[Distrib::Cyclic], &[2], &[2], Order::C, &int()).unwrap();
    assert_eq!((t.lb(), t.extent(), t.size()), (0, 32, 16));
    assert_eq!(t.blocks(1).collect::<Vec<_>>(), vec![(8, 8), (24, 8)]);
    // 2-D block x block on a 2x2 grid, rank 3 owns the bottom-right 2x2 of a 4x4.
    let b = Datatype::darray(4, 3, &[4, 4], &[Distrib::Block; 2], &[DFLT_DARG; 2], &[2, 2], Order::C, &int()).unwrap();
    assert_eq!(b.blocks(1).collect::<Vec<_>>(), vec![(40, 8), (56, 8)]);
    assert!(Datatype::darray(4, 0, &[4], &[Distrib::Block], &[1], &[4], Order::C, &int()).is_ok());
    assert!(Datatype::darray(4, 0, &[5], &[Distrib::Block], &[1], &[4], Order::C, &int()).is_err());
    assert!(Datatype::darray(3, 0, &[4, 4], &[Distrib::Block; 2], &[DFLT_DARG; 2], &[2, 2], Order::C, &int()).is_err());
}

#[test]
fn pack_unpack_negative_offsets() {
    let t = Datatype::vector(3, 1, -2, &int()).unwrap();
    let src: Vec<i32> = (0..5).collect();
    let mut packed = vec![0u8; 12];
    // SAFETY: the type reaches 4 ints below its base; base is src[4].
    let n = unsafe { t.pack(src.as_ptr().add(4) as *const u8, 1, &mut packed) };
    assert_eq!(n, 12);
    let vals: Vec<i32> = packed.chunks(4).map(|c| i32::from_ne_bytes(c.try_into().unwrap())).collect();
    assert_eq!(vals, vec![4, 2, 0]);
    let mut dst = [0i32; 5];
    // SAFETY: as above.
    unsafe { t.unpack(&packed, dst.as_mut_ptr().add(4) as *mut u8, 1) };
    assert_eq!(dst, [0, 0, 2, 0, 4]);
}

#[test]
fn mpi_bottom_uses_absolute_addresses() {
    let data = [1i32, 2, 3, 4];
    let addr = data.as_ptr() as isize;
    let t = Datatype::hindexed(vec![1, 1], vec![addr + 12, addr], &int()).unwrap();
    let mut packed = [0u8; 8];
    // SAFETY: the displacements are the addresses of data[3] and data[0].
    unsafe { t.pack(std::ptr::null(), 1, &mut packed) };
    assert_eq!(packed[..4], 4i32.to_ne_bytes());
    assert_eq!(packed[4..], 1i32.to_ne_bytes());
}

#[test]
fn elements_for_partial_bytes() {
    let t = Datatype::pair(Pair::DoubleInt);
    assert_eq!(t.elements_for_bytes(0), Some(0));
    assert_eq!(t.elements_for_bytes(8), Some(1));
    assert_eq!(t.elements_for_bytes(12), Some(2));
    assert_eq!(t.elements_for_bytes(20), Some(3));
    assert_eq!(t.elements_for_bytes(10), None);
    assert_eq!(int().elements_for_bytes(6), None);
}

#[test]
fn external32_is_big_endian() {
    let t = Datatype::structure(
        &[1, 1, 1],
        &[0, 8, 16],
        &[int(), Datatype::basic(Basic::F64), Datatype::basic(Basic::ComplexF32)],
    )
    .unwrap();
    #[repr(C)]
    struct S {
        a: i32,
        b: f64,
        c: [f32; 2],
    }
    let s = S { a: 0x01020304, b: 1.0, c: [1.0, -2.0] };
    let mut out = vec![0u8; t.size()];
    // SAFETY: `s` has the layout the type describes.
    unsafe { t.pack_external32(&s as *const S as *const u8, 1, &mut out) };
    assert_eq!(out[..4], [1, 2, 3, 4]);
    assert_eq!(out[4..12], 1.0f64.to_be_bytes());
    assert_eq!(out[12..16], 1.0f32.to_be_bytes());
    assert_eq!(out[16..20], (-2.0f32).to_be_bytes());
    let mut back = S { a: 0, b: 0.0, c: [0.0; 2] };
    // SAFETY: as above.
    unsafe { t.unpack_external32(&out, &mut back as *mut S as *mut u8, 1) };
    assert_eq!((back.a, back.b, back.c), (s.a, s.b, s.c));
}

#[test]
fn external32_long_double_is_binary128() {
    // x87 1.0: mantissa 0x8000_0000_0000_0000, sign/exponent 0x3fff.
    let mut native = [0u8; 16];
    native[..8].copy_from_slice(&(1u64 << 63).to_le_bytes());
    native[8..10].copy_from_slice(&0x3fffu16.to_le_bytes());
    native[10..].fill(0xAA); // padding is not data
    let t = Datatype::basic(Basic::LongDouble);
    let mut out = [0u8; 16];
    // SAFETY: `native` holds one long double.
    unsafe { t.pack_external32(native.as_ptr(), 1, &mut out) };
    assert_eq!(out, (0x3fffu128 << 112).to_be_bytes());
    let mut back = [0u8; 16];
    // SAFETY: as above.
    unsafe { t.unpack_external32(&out, back.as_mut_ptr(), 1) };
    assert_eq!(back[..10], native[..10]);
}

#[test]
fn external32_narrows_long_and_wchar() {
    // C long and unsigned long are 4 bytes in external32, wchar_t 2 (MPI-3.1 table 13.2),
    // though 8 and 4 in memory: sizes, big-endian truncation, and widening back.
    for (b, native, ext) in [(Basic::Long, 8, 4), (Basic::ULong, 8, 4), (Basic::Wchar, 4, 2), (Basic::I64, 8, 8), (Basic::U64, 8, 8)] {
        let t = Datatype::basic(b);
        assert_eq!((t.size(), t.external32_size(3)), (native, Some(3 * ext)), "{b:?}");
    }
    let longs = [1i64, -2, 0x1_2345_6789];
    let t = Datatype::basic(Basic::Long);
    let mut out = [0u8; 12];
    // SAFETY: `longs` holds three longs.
    assert_eq!(unsafe { t.pack_external32(longs.as_ptr() as *const u8, 3, &mut out) }, 12);
    assert_eq!(out, [0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0x23, 0x45, 0x67, 0x89]);
    let mut back = [7i64; 3];
    // SAFETY: as above.
    assert_eq!(unsafe { t.unpack_external32(&out, back.as_mut_ptr() as *mut u8, 3) }, 12);
    assert_eq!(back, [1, -2, 0x2345_6789], "sign-extended back");
    let t = Datatype::basic(Basic::ULong);
    let mut back = [7u64; 3];
    // SAFETY: as above.
    unsafe { t.unpack_external32(&out, back.as_mut_ptr() as *mut u8, 3) };
    assert_eq!(back, [1, 0xffff_fffe, 0x2345_6789], "zero-extended back");
    let w = [0x41u32, 0xac00];
    let t = Datatype::basic(Basic::Wchar);
    let mut out = [0u8; 4];
    // SAFETY: `w` holds two wchar_t.
    unsafe { t.pack_external32(w.as_ptr() as *const u8, 2, &mut out) };
    assert_eq!(out, [0, 0x41, 0xac, 0]);
    let mut back = [0u32; 2];
    // SAFETY: as above.
    unsafe { t.unpack_external32(&out, back.as_mut_ptr() as *mut u8, 2) };
    assert_eq!(back, w);
    // MPI_LONG_INT { long; int }: 16 bytes apart in memory, 8 in external32.
    let p = Datatype::pair(Pair::LongInt);
    p.commit();
    assert_eq!((p.size(), p.external32_size(2)), (12, Some(16)));
    #[repr(C)]
    struct LongInt {
        v: i64,
        i: i32,
    }
    let items = [LongInt { v: -3, i: 5 }, LongInt { v: 4, i: -6 }];
    let mut out = [0u8; 16];
    // SAFETY: `items` holds two MPI_LONG_INT.
    unsafe { p.pack_external32(items.as_ptr() as *const u8, 2, &mut out) };
    assert_eq!(out, [0xff, 0xff, 0xff, 0xfd, 0, 0, 0, 5, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xfa]);
    let mut back = [LongInt { v: 0, i: 0 }, LongInt { v: 0, i: 0 }];
    // SAFETY: as above.
    unsafe { p.unpack_external32(&out, back.as_mut_ptr() as *mut u8, 2) };
    assert_eq!([(back[0].v, back[0].i), (back[1].v, back[1].i)], [(-3, 5), (4, -6)]);
}

#[test]
fn empty_blocks_may_have_any_displacement() {
    let t = Datatype::hindexed(vec![0, 4, 0], vec![isize::MAX, 8, isize::MIN], &int()).unwrap();
    assert_eq!((t.size(), t.lb(), t.extent(), t.true_lb(), t.true_extent()), (16, 8, 16, 8, 16));
    let big = Datatype::resized(&int(), 0, 1 << 40).unwrap();
    let t = Datatype::indexed(vec![0, 1], vec![i32::MAX as isize, 0], &big).unwrap();
    assert_eq!((t.size(), t.lb(), t.extent()), (4, 0, 1 << 40));
    let t = Datatype::structure(&[0, 1], &[isize::MAX, 4], &[Datatype::basic(Basic::F64), int()]).unwrap();
    assert_eq!((t.size(), t.lb(), t.extent()), (4, 4, 4));
    let t = Datatype::hvector(3, 0, isize::MAX, &int()).unwrap();
    assert_eq!((t.size(), t.lb(), t.extent()), (0, 0, 0));
    // A placed block still may not overflow.
    assert!(Datatype::hindexed(vec![1], vec![isize::MAX], &int()).is_err());
}

#[test]
fn signature_and_uniform_basic() {
    let v = Datatype::vector(2, 3, 5, &Datatype::basic(Basic::F64)).unwrap();
    assert_eq!(v.signature(), vec![(Basic::F64, 6)]);
    assert_eq!(v.reduction_unit(), Some(Unit::Basic(Basic::F64)));
    let s = Datatype::structure(&[2, 1], &[0, 16], &[int(), Datatype::basic(Basic::F64)]).unwrap();
    assert_eq!(s.signature(), vec![(Basic::I32, 2), (Basic::F64, 1)]);
    assert_eq!(s.reduction_unit(), None);
    // Pairs stay whole through derived types; a struct of the same pair twice is uniform.
    let di = Datatype::pair(Pair::DoubleInt);
    let vp = Datatype::vector(3, 1, 2, &di).unwrap();
    assert_eq!(vp.reduction_unit(), Some(Unit::Pair(Pair::DoubleInt)));
    let sp = Datatype::structure(&[1, 2], &[0, 64], &[di.clone(), Datatype::contiguous(2, &di).unwrap()]).unwrap();
    assert_eq!(sp.reduction_unit(), Some(Unit::Pair(Pair::DoubleInt)));
    let mixed = Datatype::structure(&[1, 1], &[0, 64], &[di, Datatype::basic(Basic::F64)]).unwrap();
    assert_eq!(mixed.reduction_unit(), None);
}

#[test]
fn data_span_covers_every_item() {
    let v = Datatype::vector(2, 1, 3, &Datatype::basic(Basic::F64)).unwrap(); // extent 32, data 0..8, 24..32
    assert_eq!(v.data_span(0), (0, 0));
    assert_eq!(v.data_span(1), (0, 32));
    assert_eq!(v.data_span(3), (0, 96));
    let r = Datatype::resized(&Datatype::basic(Basic::I32), 4, -8).unwrap(); // data at 0..4, items 8 bytes down
    assert_eq!(r.data_span(3), (-16, 20));
}

// ---- property tests --------------------------------------------------------------------

const LEAVES: [Basic; 7] = [Basic::I8, Basic::I16, Basic::I32, Basic::F64, Basic::LongDouble, Basic::ComplexF32, Basic::U64];

fn leaf() -> impl Strategy<Value = Arc<Datatype>> {
    prop_oneof![
        4 => (0..LEAVES.len()).prop_map(|i| Datatype::basic(LEAVES[i])),
        1 => prop_oneof![Just(Pair::DoubleInt), Just(Pair::ShortInt), Just(Pair::TwoInt)].prop_map(Datatype::pair),
    ]
}

/// A count or block length: mostly 1..=3, sometimes 0.
fn small() -> impl Strategy<Value = usize> + Clone {
    prop_oneof![1 => Just(0usize), 8 => 1usize..4]
}

fn node(inner: impl Strategy<Value = Arc<Datatype>> + Clone + 'static) -> impl Strategy<Value = Arc<Datatype>> {
    let displs = prop::collection::vec((small(), -6isize..7), 0..4);
    prop_oneof![
        (small(), inner.clone()).prop_map(|(n, t)| Datatype::contiguous(n, &t).unwrap()),
        (small(), small(), -4isize..5, inner.clone()).prop_map(|(c, b, s, t)| Datatype::vector(c, b, s, &t).unwrap()),
        (small(), small(), -40isize..41, inner.clone()).prop_map(|(c, b, s, t)| Datatype::hvector(c, b, s, &t).unwrap()),
        (displs.clone(), inner.clone()).prop_map(|(v, t)| {
            let (b, d): (Vec<_>, Vec<_>) = v.into_iter().unzip();
            Datatype::indexed(b, d, &t).unwrap()
        }),
        (displs.clone(), inner.clone()).prop_map(|(v, t)| {
            let (b, d): (Vec<_>, Vec<_>) = v.into_iter().map(|(b, d)| (b, d * 5)).unzip();
            Datatype::hindexed(b, d, &t).unwrap()
        }),
        (small(), prop::collection::vec(-5isize..6, 0..4), inner.clone())
            .prop_map(|(b, d, t)| Datatype::indexed_block(b, d, &t).unwrap()),
        (small(), prop::collection::vec(-30isize..31, 0..4), inner.clone())
            .prop_map(|(b, d, t)| Datatype::hindexed_block(b, d, &t).unwrap()),
        prop::collection::vec((small(), -30isize..31, inner.clone()), 0..4).prop_map(|v| {
            let b: Vec<_> = v.iter().map(|x| x.0).collect();
            let d: Vec<_> = v.iter().map(|x| x.1).collect();
            let t: Vec<_> = v.into_iter().map(|x| x.2).collect();
            Datatype::structure(&b, &d, &t).unwrap()
        }),
        (inner.clone(), -16isize..17, -8isize..33).prop_map(|(t, lb, ext)| Datatype::resized(&t, lb, ext).unwrap()),
        inner.clone().prop_map(|t| Datatype::dup(&t).unwrap()),
        (prop::collection::vec((1usize..4, 0usize..4, 0usize..4), 1..4), any::<bool>(), inner.clone()).prop_map(|(dims, c, t)| {
            let sizes: Vec<_> = dims.iter().map(|d| d.0).collect();
            let subs: Vec<_> = dims.iter().map(|d| 1 + d.1 % d.0).collect();
            let starts: Vec<_> = dims.iter().zip(&subs).map(|(d, s)| d.2 % (d.0 - s + 1)).collect();
            let order = if c { Order::C } else { Order::Fortran };
            Datatype::subarray(&sizes, &subs, &starts, order, &t).unwrap()
        }),
        (prop::collection::vec((1usize..6, 1usize..4, 0usize..3, 0i32..3), 1..3), any::<usize>(), any::<bool>(), inner)
            .prop_map(|(dims, r, c, t)| {
                let gs: Vec<_> = dims.iter().map(|d| d.0).collect();
                let ds: Vec<_> = dims.iter().map(|d| [Distrib::Block, Distrib::Cyclic, Distrib::None][d.2]).collect();
                let ps: Vec<_> = dims.iter().zip(&ds).map(|(d, &k)| if k == Distrib::None { 1 } else { d.1 }).collect();
                let dargs: Vec<_> = dims
                    .iter()
                    .zip(&ds)
                    .map(|(d, &k)| match (k, d.3) {
                        (_, 0) | (Distrib::None, _) => DFLT_DARG,
                        (Distrib::Block, _) => d.0.div_ceil(d.1) as i32 + d.3 - 1,
                        (_, a) => a,
                    })
                    .collect();
                let size: usize = ps.iter().product();
                let order = if c { Order::C } else { Order::Fortran };
                Datatype::darray(size, r % size, &gs, &ds, &dargs, &ps, order, &t).unwrap()
            }),
    ]
}

fn tree() -> impl Strategy<Value = Arc<Datatype>> {
    leaf().prop_recursive(4, 64, 4, node)
}

/// A buffer covering every byte of `map`, and the offset of the type's origin in it.
fn buffer_for(bytes: &[isize]) -> (Vec<u8>, isize) {
    let lo = bytes.iter().copied().min().unwrap_or(0).min(0);
    let hi = bytes.iter().copied().max().unwrap_or(0).max(0) + 1;
    let buf = (0..(hi - lo)).map(|i| (i * 7 % 251) as u8 + 1).collect();
    (buf, -lo)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn flat_form_matches_reference(t in tree(), count in 0usize..4) {
        t.commit();
        let map = reference(&t, count);
        prop_assert_eq!(map.iter().map(|x| x.1.size()).sum::<usize>(), t.size() * count);
        prop_assert_eq!(map.len(), t.elements() * count);
        let blocks: Vec<isize> = t.blocks(count).flat_map(|(o, l)| (0..l as isize).map(move |k| o + k)).collect();
        prop_assert_eq!(&blocks, &bytes_of(&map));
        // Adjacent blocks are merged.
        let b: Vec<_> = t.blocks(count).collect();
        for w in b.windows(2) {
            prop_assert!(w[0].0 + w[0].1 as isize != w[1].0);
        }
        // Signature and bounds.
        let sig: Vec<Basic> = t.signature().iter().flat_map(|&(b, n)| std::iter::repeat_n(b, n)).collect();
        let one = reference(&t, 1);
        prop_assert_eq!(sig, one.iter().map(|x| x.1).collect::<Vec<_>>());
        let bytes1 = bytes_of(&one);
        if let (Some(lo), Some(hi)) = (bytes1.iter().min(), bytes1.iter().max()) {
            prop_assert_eq!(t.true_lb(), *lo);
            prop_assert_eq!(t.true_extent(), hi + 1 - lo);
        }
    }

    #[test]
    fn pack_unpack_round_trip(t in tree(), count in 0usize..4, cut_frac in 0.0f64..=1.0, chunk in 1usize..40) {
        t.commit();
        let map = reference(&t, count);
        let bytes = bytes_of(&map);
        let (src, origin) = buffer_for(&bytes);
        let total = t.size() * count;
        let mut packed = vec![0u8; total];
        // SAFETY: `src` covers every byte of the type map relative to `origin`.
        let n = unsafe { t.pack(src.as_ptr().offset(origin), count, &mut packed) };
        prop_assert_eq!(n, total);
        let expect: Vec<u8> = bytes.iter().map(|&o| src[(o + origin) as usize]).collect();
        prop_assert_eq!(&packed, &expect);
        // Packing in pieces gives the same stream.
        let mut pieces = vec![0u8; total];
        for (i, c) in pieces.chunks_mut(chunk).enumerate() {
            // SAFETY: as above.
            let m = unsafe { t.pack_range(src.as_ptr().offset(origin), count, i * chunk, c) };
            prop_assert_eq!(m, c.len());
        }
        prop_assert_eq!(&pieces, &packed);
        // Full unpack: every mapped byte restored, nothing else touched.
        let mut dst = vec![0u8; src.len()];
        // SAFETY: `dst` is as large as `src`.
        unsafe { t.unpack(&packed, dst.as_mut_ptr().offset(origin), count) };
        for (i, &v) in dst.iter().enumerate() {
            let mapped = bytes.contains(&(i as isize - origin));
            prop_assert_eq!(v, if mapped { src[i] } else { 0 });
        }
        // Partial unpack (a short message), in pieces.
        let cut = (total as f64 * cut_frac) as usize;
        let mut part = vec![0u8; src.len()];
        for (i, c) in packed[..cut].chunks(chunk).enumerate() {
            // SAFETY: as above.
            unsafe { t.unpack_range(c, part.as_mut_ptr().offset(origin), count, i * chunk) };
        }
        let written = &bytes[..cut];
        for (i, &v) in part.iter().enumerate() {
            let mapped = written.contains(&(i as isize - origin));
            prop_assert_eq!(v, if mapped { src[i] } else { 0 });
        }
        // Get_elements on the partial byte count.
        let mut end = 0;
        let mut whole = Some(0);
        for &(_, b) in &reference(&t, count + 1) {
            if end + b.size() <= cut {
                end += b.size();
                whole = whole.map(|w| w + 1);
            } else {
                if end != cut {
                    whole = None;
                }
                break;
            }
        }
        if t.size() > 0 || cut == 0 {
            prop_assert_eq!(t.elements_for_bytes(cut), whole);
        }
    }

    #[test]
    fn external32_round_trip(t in tree(), count in 0usize..3) {
        t.commit();
        let map = reference(&t, count);
        if map.iter().any(|x| x.1 == Basic::LongDouble) {
            return Ok(()); // x87 padding bytes do not survive; tested on its own above
        }
        let bytes = bytes_of(&map);
        let (src, origin) = buffer_for(&bytes);
        let mut ext = vec![0u8; t.external32_size(count).unwrap()];
        // SAFETY: `src` covers the type map.
        unsafe { t.pack_external32(src.as_ptr().offset(origin), count, &mut ext) };
        // Each value's bytes, reversed per swap unit, in type-map order.
        let mut expect = Vec::new();
        for &(o, b) in &map {
            let v: Vec<u8> = (0..b.size() as isize).map(|k| src[(o + k + origin) as usize]).collect();
            for unit in v.chunks(b.swap_unit()) {
                expect.extend(unit.iter().rev());
            }
        }
        prop_assert_eq!(&ext, &expect);
        let mut dst = vec![0u8; src.len()];
        // SAFETY: `dst` is as large as `src`.
        unsafe { t.unpack_external32(&ext, dst.as_mut_ptr().offset(origin), count) };
        for &o in &bytes {
            prop_assert_eq!(dst[(o + origin) as usize], src[(o + origin) as usize]);
        }
    }
}

/// Large-count blocks (billions of bytes of one basic type) flatten to one run each,
/// without a step per copy.
#[test]
fn large_blocks_flatten_in_one_step() {
    let byte = Datatype::basic(Basic::Byte);
    let big = 5_000_000_000usize;
    let t = Datatype::contiguous(big, &byte).unwrap();
    t.commit();
    assert_eq!(t.blocks(1).collect::<Vec<_>>(), vec![(0, big)]);
    let g = 1usize << 31;
    let v = Datatype::hvector(3, g, 2 * g as isize, &byte).unwrap();
    v.commit();
    assert_eq!(v.size(), 3 * g);
    assert_eq!(v.blocks(1).collect::<Vec<_>>(), vec![(0, g), (2 * g as isize, g), (4 * g as isize, g)]);
    // A child with a gap still gets one run per copy.
    let r = Datatype::resized(&Datatype::basic(Basic::I32), 0, 8).unwrap();
    let c = Datatype::contiguous(3, &r).unwrap();
    c.commit();
    assert_eq!(c.blocks(1).collect::<Vec<_>>(), vec![(0, 4), (8, 4), (16, 4)]);
}

/// Packs and unpacks one item of `t`, whole and in odd-sized pieces starting mid-block,
/// and checks the bytes against a byte-by-byte walk of the type map.
fn check_pack_in_pieces(t: &Datatype, what: &str, unpack: bool) {
    let elem = t.flat().runs.first().map_or(1, |r| r.len);
    let offs: Vec<isize> = reference(t, 1).iter().flat_map(|&(o, b)| (0..b.size() as isize).map(move |k| o + k)).collect();
    let (src, origin) = buffer_for(&offs);
    let expect: Vec<u8> = offs.iter().map(|&o| src[(o + origin) as usize]).collect();
    let mut packed = vec![0u8; t.size()];
    // SAFETY: `src` covers every byte of the type map around `origin`.
    let base = unsafe { src.as_ptr().offset(origin) };
    assert_eq!(unsafe { t.pack(base, 1, &mut packed) }, t.size());
    assert!(packed == expect, "pack, {what}");
    let mut pieces = vec![0u8; t.size()];
    let mut from = 0;
    for step in [elem / 2 + 1, 1, 7 * elem + 3, 4096 + 5].iter().cycle() {
        if from >= t.size() {
            break;
        }
        let end = (from + step).min(t.size());
        // SAFETY: as above.
        let n = unsafe { t.pack_range(base, 1, from, &mut pieces[from..end]) };
        assert_eq!(n, end - from);
        from = end;
    }
    assert!(pieces == expect, "pack in pieces, {what}");
    if !unpack {
        return;
    }
    let mut dst = vec![0u8; src.len()];
    // SAFETY: `dst` is as large as `src`.
    let dbase = unsafe { dst.as_mut_ptr().offset(origin) };
    let mut from = 0;
    for step in [3 * elem + 1, elem, 1000].iter().cycle() {
        if from >= t.size() {
            break;
        }
        let end = (from + step).min(t.size());
        // SAFETY: as above.
        unsafe { t.unpack_range(&expect[from..end], dbase, 1, from) };
        from = end;
    }
    let mut want = vec![0u8; src.len()];
    for &o in &offs {
        want[(o + origin) as usize] = src[(o + origin) as usize];
    }
    assert!(dst == want, "unpack, {what}");
}

/// Arrays of a multi-block type (structs, resized vectors) store the element's runs once
/// with a repetition count, however long the array: contiguous, vector and hvector of
/// them, in a resize or a dup; nested further they are written out, correctly.
#[test]
fn arrays_of_structs_are_one_repetition() {
    let f64t = Datatype::basic(Basic::F64);
    let st = Datatype::structure(&[1, 1], &[0, 8], &[Datatype::basic(Basic::I32), f64t.clone()]).unwrap();
    let col = Datatype::resized(&Datatype::vector(8, 1, 2, &f64t).unwrap(), 0, 17 * 8).unwrap();
    let n = 100_000;
    let cases: Vec<(&str, Arc<Datatype>, usize)> = vec![
        ("contiguous of structs", Datatype::contiguous(n, &st).unwrap(), 2),
        ("vector of structs", Datatype::vector(n, 1, 3, &st).unwrap(), 2),
        ("vector of 2-struct blocks", Datatype::vector(n, 2, 3, &st).unwrap(), 3),
        ("hvector of structs, negative stride", Datatype::hvector(n, 1, -40, &st).unwrap(), 2),
        ("contiguous of resized vectors", Datatype::contiguous(n / 8, &col).unwrap(), 1),
        ("dup of a resized array", Datatype::dup(&Datatype::resized(&Datatype::contiguous(n, &st).unwrap(), -8, 64).unwrap()).unwrap(), 2),
        ("contiguous of a contiguous of structs", Datatype::contiguous(7, &Datatype::contiguous(n / 7, &st).unwrap()).unwrap(), 2),
        ("vector of arrays (written out)", Datatype::vector(3, 1, 2, &Datatype::contiguous(1000, &st).unwrap()).unwrap(), 0),
        ("struct of an array and a double", Datatype::structure(&[1, 1], &[0, -16], &[Datatype::contiguous(1000, &st).unwrap(), f64t.clone()]).unwrap(), 0),
    ];
    for (what, t, runs) in cases {
        t.commit();
        if runs > 0 {
            assert_eq!(t.flat().runs.len(), runs, "{what}: {:?}", &t.flat().runs[..t.flat().runs.len().min(4)]);
            assert!(t.segments().0.len() <= 2, "{what}: signature stored once");
        }
        check_pack_in_pieces(&t, what, true);
        let map = reference(&t, 1);
        let sig: Vec<Basic> = t.signature().iter().flat_map(|&(b, n)| std::iter::repeat_n(b, n)).collect();
        assert!(sig == map.iter().map(|x| x.1).collect::<Vec<_>>(), "{what}: signature");
        assert_eq!(t.external32_size(1), Some(map.iter().map(|x| x.1.external32_size()).sum()), "{what}");
        // MPI_Get_elements at a few cut points: the elements whose bytes all came.
        for cut in [0, 4, 12, 16, 20, t.size() / 2, t.size() - 8, t.size()] {
            let mut bytes = 0;
            let whole = map.iter().take_while(|x| { bytes += x.1.size(); bytes <= cut }).count();
            let at_edge = map.iter().scan(0, |b, x| { *b += x.1.size(); Some(*b) }).any(|b| b == cut) || cut == 0;
            assert_eq!(t.elements_for_bytes(cut), at_edge.then_some(whole), "{what}: {cut} bytes");
        }
    }
}

/// Vectors of a million blocks are one run, in the flat form and in the constructor: a
/// hvector of 2^40 blocks (described, never packed) commits at once. Packing and unpacking
/// them, whole and in odd-sized pieces starting mid-block, moves exactly the bytes a
/// byte-by-byte walk of the type map names, for every block length the copy loop treats
/// apart (1, 2, 4, 8, 16 bytes) and others, with positive, negative and zero strides.
#[test]
fn long_vectors_are_one_run() {
    let huge = Datatype::hvector(1 << 40, 1, 2, &Datatype::basic(Basic::Byte)).unwrap();
    huge.commit();
    assert_eq!((huge.size(), huge.flat().runs.len()), (1 << 40, 1));
    for (elem, count, stride) in [(1usize, 100_003usize, 3isize), (2, 50_001, 2), (4, 70_000, -2), (8, 1 << 20, 2), (16, 9_999, 3), (12, 5_000, 2), (24, 7, 0)] {
        let old = Datatype::contiguous(elem, &Datatype::basic(Basic::Byte)).unwrap();
        let v = Datatype::hvector(count, 1, stride * elem as isize, &old).unwrap();
        v.commit();
        assert_eq!(v.flat().runs.len(), 1, "elem {elem} stride {stride}");
        // Stride 0: every block is the same bytes, not a receive layout.
        check_pack_in_pieces(&v, &format!("elem {elem} stride {stride}"), stride != 0);
    }
}

/// Indexed types whose blocks merge into short runs of mixed lengths (1, 2 or 3 doubles;
/// 4- and 8-byte struct members) take the size-class copy, whole and in pieces: the bytes
/// a byte-by-byte walk of the type map names, nothing else.
#[test]
fn short_runs_of_mixed_lengths() {
    let f64t = Datatype::basic(Basic::F64);
    let n = 2014;
    let merged: Vec<isize> = (0..n as isize).map(|i| i * 3 + i % 3).collect();
    // Steps of 1, 1, 2, 2, 2 doubles: runs of 3, 1, 1, 3, 1, 1, ... doubles.
    let triples: Vec<isize> = (0..n as isize).scan(0, |pos, i| {
        let d = *pos;
        *pos += if i % 5 < 2 { 1 } else { 2 };
        Some(d)
    }).collect();
    let st = Datatype::structure(&[1, 1, 2], &[0, 8, 16], &[Datatype::basic(Basic::I32), f64t.clone(), Datatype::basic(Basic::I16)]).unwrap();
    let cases: Vec<(&str, Arc<Datatype>)> = vec![
        ("indexed_block, 1 and 2 doubles merged", Datatype::indexed_block(1, merged, &f64t).unwrap()),
        ("indexed_block, runs of 1 to 3 doubles", Datatype::indexed_block(1, triples, &f64t).unwrap()),
        ("vector of 3 of a struct of 4, 8 and 4 bytes", Datatype::vector(3, 1, 5, &st).unwrap()),
    ];
    for (what, t) in cases {
        t.commit();
        assert_eq!(t.flat().uniform, 0, "{what}: mixed run lengths");
        check_pack_in_pieces(&t, what, true);
    }
}
