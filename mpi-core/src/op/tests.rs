use super::kernels::{kernel_size, Cplx, Loc};
use super::*;
use proptest::prelude::*;
use std::mem::size_of;

/// Reduces `a` into a copy of `b` (aligned, disjoint buffers).
fn run<T: Copy>(op: PredefOp, elem: Elem, a: &[T], b: &[T]) -> Result<Vec<T>, MpiError> {
    assert_eq!(size_of::<T>(), elem.size(), "{}", elem.name());
    assert_eq!(a.len(), b.len());
    let mut out = b.to_vec();
    // SAFETY: both vectors hold a.len() elements of elem.size() bytes.
    unsafe { reduce(op, elem, a.as_ptr() as *const u8, out.as_mut_ptr() as *mut u8, a.len()) }?;
    Ok(out)
}

/// Same, with both buffers placed at byte offset `shift` inside byte vectors (unaligned for
/// shift not a multiple of the alignment).
fn run_shifted<T: Copy>(op: PredefOp, elem: Elem, a: &[T], b: &[T], shift: usize) -> Vec<T> {
    let n = std::mem::size_of_val(a);
    let mut ab = vec![0u8; n + shift];
    let mut bb = vec![0u8; n + shift];
    // SAFETY: the byte vectors have n bytes after `shift`; unaligned reads/writes of T.
    unsafe {
        std::ptr::copy_nonoverlapping(a.as_ptr() as *const u8, ab.as_mut_ptr().add(shift), n);
        std::ptr::copy_nonoverlapping(b.as_ptr() as *const u8, bb.as_mut_ptr().add(shift), n);
        reduce(op, elem, ab.as_ptr().add(shift), bb.as_mut_ptr().add(shift), a.len()).unwrap();
        (0..a.len()).map(|i| std::ptr::read_unaligned((bb.as_ptr().add(shift) as *const T).add(i))).collect()
    }
}

fn ld(x: f64) -> F80 {
    F80::from_f64(x)
}

use Elem as E;
use PredefOp as P;

const C_INT: &[Elem] = &[
    E::Char, E::SignedChar, E::UnsignedChar, E::Wchar, E::Short, E::UnsignedShort, E::Int, E::Unsigned, E::Long,
    E::UnsignedLong, E::LongLong, E::UnsignedLongLong, E::Int8, E::Int16, E::Int32, E::Int64, E::Uint8, E::Uint16,
    E::Uint32, E::Uint64,
];
const F_INT: &[Elem] = &[E::Integer, E::Integer1, E::Integer2, E::Integer4, E::Integer8];
const MULTI: &[Elem] = &[E::Aint, E::Offset, E::Count];
const FLOAT: &[Elem] = &[E::Float, E::Double, E::LongDouble, E::Real, E::DoublePrecision, E::Real4, E::Real8, E::CFloat16, E::Real16];
const LOGICAL: &[Elem] = &[E::Logical, E::CBool, E::CxxBool];
const COMPLEX: &[Elem] = &[
    E::Complex, E::DoubleComplex, E::Complex8, E::Complex16, E::CFloatComplex, E::CDoubleComplex,
    E::CLongDoubleComplex, E::CxxFloatComplex, E::CxxDoubleComplex, E::CxxLongDoubleComplex, E::Complex32,
];
const BYTE: &[Elem] = &[E::Byte];
const PAIRS: &[Elem] = &[
    E::FloatInt, E::DoubleInt, E::LongInt, E::ShortInt, E::TwoInt, E::LongDoubleInt, E::TwoInteger, E::TwoReal,
    E::TwoDoublePrecision,
];

/// The standard's table (MPI-3.1 §5.9.2) plus MPICH's extension of the logical ops,
/// written out independently of `applies_to`.
fn allowed(op: PredefOp) -> Vec<Elem> {
    let groups: &[&[Elem]] = match op {
        P::Max | P::Min => &[C_INT, F_INT, MULTI, FLOAT],
        P::Sum | P::Prod => &[C_INT, F_INT, MULTI, FLOAT, COMPLEX],
        P::Land | P::Lor | P::Lxor => &[C_INT, F_INT, MULTI, FLOAT, LOGICAL],
        P::Band | P::Bor | P::Bxor => &[C_INT, F_INT, MULTI, BYTE],
        P::Maxloc | P::Minloc => &[PAIRS],
        P::Replace | P::NoOp => &[C_INT, F_INT, MULTI, FLOAT, LOGICAL, COMPLEX, BYTE, PAIRS],
    };
    groups.concat()
}

#[test]
fn layouts_match_c() {
    for &e in Elem::ALL {
        assert_eq!(kernel_size(e.repr()), e.size(), "{}", e.name());
    }
    assert_eq!(E::LongDouble.size(), 16);
    assert_eq!(E::LongDoubleInt.size(), 32);
    assert_eq!(E::DoubleInt.size(), 16);
    assert_eq!(E::LongInt.size(), 16);
    assert_eq!(E::ShortInt.size(), 8);
    assert_eq!(E::FloatInt.size(), 8);
    assert_eq!(E::CLongDoubleComplex.size(), 32);
    assert_eq!(std::mem::align_of::<F80>(), 16);
}

#[test]
fn every_elem_is_in_exactly_one_group_list() {
    let all: Vec<Elem> = [C_INT, F_INT, MULTI, FLOAT, LOGICAL, COMPLEX, BYTE, PAIRS].concat();
    assert_eq!(all.len(), Elem::ALL.len());
    for e in Elem::ALL {
        assert_eq!(all.iter().filter(|x| *x == e).count(), 1, "{}", e.name());
    }
}

/// Every (op, type) pair: defined ones succeed, the others fail with MPI_ERR_OP naming both.
#[test]
fn op_type_table() {
    for op in PredefOp::ALL {
        let ok = allowed(op);
        for &e in Elem::ALL {
            let a = vec![0u8; e.size() * 3];
            let mut b = vec![0u8; e.size() * 3];
            // SAFETY: three elements in each buffer.
            let r = unsafe { reduce(op, e, a.as_ptr(), b.as_mut_ptr(), 3) };
            if ok.contains(&e) {
                assert_eq!(r, Ok(()), "{} on {}", op.name(), e.name());
            } else {
                let err = r.expect_err(&format!("{} on {} must fail", op.name(), e.name()));
                assert_eq!(err.class, ErrorClass::Op);
                assert!(err.msg.starts_with(&format!("{} is not defined for {} ", op.name(), e.name())), "{}", err.msg);
            }
            // Count 0 still checks the pair.
            // SAFETY: nothing is accessed for count 0.
            let r0 = unsafe { reduce(op, e, a.as_ptr(), b.as_mut_ptr(), 0) };
            assert_eq!(r0.is_ok(), ok.contains(&e));
        }
    }
    assert_eq!(
        // SAFETY: count 0.
        unsafe { reduce(P::Band, E::Double, std::ptr::null(), std::ptr::null_mut(), 0) }.unwrap_err().msg,
        "MPI_BAND is not defined for MPI_DOUBLE (MPI_BAND applies to integer types and MPI_BYTE)"
    );
}

#[test]
fn int_ops() {
    let a = [5i32, -3, 0, 12, 7];
    let b = [2i32, 4, 0, 10, 0];
    let r = |op| run(op, E::Int, &a, &b).unwrap();
    assert_eq!(r(P::Max), [5, 4, 0, 12, 7]);
    assert_eq!(r(P::Min), [2, -3, 0, 10, 0]);
    assert_eq!(r(P::Sum), [7, 1, 0, 22, 7]);
    assert_eq!(r(P::Prod), [10, -12, 0, 120, 0]);
    assert_eq!(r(P::Land), [1, 1, 0, 1, 0]);
    assert_eq!(r(P::Lor), [1, 1, 0, 1, 1]);
    assert_eq!(r(P::Lxor), [0, 0, 0, 0, 1]);
    assert_eq!(r(P::Band), [5 & 2, -3 & 4, 0, 12 & 10, 0]);
    assert_eq!(r(P::Bor), [5 | 2, -3 | 4, 0, 12 | 10, 7]);
    assert_eq!(r(P::Bxor), [5 ^ 2, -3 ^ 4, 0, 12 ^ 10, 7]);
    assert_eq!(r(P::Replace), a);
    assert_eq!(r(P::NoOp), b);
}

/// Signedness and wrapping of each integer representation, through one Elem each.
#[test]
fn int_widths_signedness_and_wrapping() {
    assert_eq!(run(P::Max, E::Char, &[-1i8], &[1]).unwrap(), [1]);
    assert_eq!(run(P::Max, E::UnsignedChar, &[255u8], &[1]).unwrap(), [255]);
    assert_eq!(run(P::Sum, E::SignedChar, &[127i8], &[1]).unwrap(), [-128]);
    assert_eq!(run(P::Sum, E::Uint8, &[255u8], &[1]).unwrap(), [0]);
    assert_eq!(run(P::Min, E::Short, &[-5i16], &[3]).unwrap(), [-5]);
    assert_eq!(run(P::Min, E::UnsignedShort, &[0xffffu16], &[3]).unwrap(), [3]);
    assert_eq!(run(P::Prod, E::Int16, &[300i16], &[300]).unwrap(), [300i16.wrapping_mul(300)]);
    assert_eq!(run(P::Max, E::Unsigned, &[u32::MAX], &[0]).unwrap(), [u32::MAX]);
    assert_eq!(run(P::Max, E::Wchar, &[-1i32], &[0]).unwrap(), [0]);
    assert_eq!(run(P::Sum, E::Long, &[i64::MAX], &[1]).unwrap(), [i64::MIN]);
    assert_eq!(run(P::Max, E::UnsignedLong, &[u64::MAX], &[1]).unwrap(), [u64::MAX]);
    assert_eq!(run(P::Max, E::LongLong, &[-1i64], &[1]).unwrap(), [1]);
    assert_eq!(run(P::Bxor, E::UnsignedLongLong, &[0xf0u64], &[0xff]).unwrap(), [0x0f]);
    assert_eq!(run(P::Sum, E::Uint16, &[1u16], &[2]).unwrap(), [3]);
    assert_eq!(run(P::Sum, E::Uint32, &[1u32], &[2]).unwrap(), [3]);
    assert_eq!(run(P::Sum, E::Uint64, &[1u64], &[2]).unwrap(), [3]);
    assert_eq!(run(P::Sum, E::Int8, &[1i8], &[2]).unwrap(), [3]);
    assert_eq!(run(P::Sum, E::Int32, &[1i32], &[2]).unwrap(), [3]);
    assert_eq!(run(P::Sum, E::Int64, &[1i64], &[2]).unwrap(), [3]);
    assert_eq!(run(P::Sum, E::Aint, &[-1i64], &[2]).unwrap(), [1]);
    assert_eq!(run(P::Max, E::Offset, &[-1i64], &[2]).unwrap(), [2]);
    assert_eq!(run(P::Bor, E::Count, &[1i64], &[2]).unwrap(), [3]);
    assert_eq!(run(P::Sum, E::Integer, &[1i32], &[2]).unwrap(), [3]);
    assert_eq!(run(P::Min, E::Integer1, &[-1i8], &[2]).unwrap(), [-1]);
    assert_eq!(run(P::Min, E::Integer2, &[-1i16], &[2]).unwrap(), [-1]);
    assert_eq!(run(P::Band, E::Integer4, &[6i32], &[3]).unwrap(), [2]);
    assert_eq!(run(P::Prod, E::Integer8, &[-4i64], &[3]).unwrap(), [-12]);
}

#[test]
fn logical_ops_give_zero_or_one() {
    let a = [0u8, 0, 2, 2];
    let b = [0u8, 7, 0, 1];
    assert_eq!(run(P::Land, E::CBool, &a, &b).unwrap(), [0, 0, 0, 1]);
    assert_eq!(run(P::Lor, E::CxxBool, &a, &b).unwrap(), [0, 1, 1, 1]);
    assert_eq!(run(P::Lxor, E::CBool, &a, &b).unwrap(), [0, 1, 1, 0]);
    let a = [0i32, 0, -1, 5];
    let b = [0i32, 1, 0, 1];
    assert_eq!(run(P::Land, E::Logical, &a, &b).unwrap(), [0, 0, 0, 1]);
    assert_eq!(run(P::Lor, E::Logical, &a, &b).unwrap(), [0, 1, 1, 1]);
    assert_eq!(run(P::Lxor, E::Logical, &a, &b).unwrap(), [0, 1, 1, 0]);
    assert_eq!(run(P::Lxor, E::UnsignedLong, &[0u64, 9], &[3, 9]).unwrap(), [1, 0]);
}

/// MPICH defines the logical ops on floating-point types and MPI_AINT/OFFSET/COUNT too
/// (its coll/allred and coll/oplxor tests use them): nonzero is true, results are 1 or 0.
#[test]
fn logical_ops_on_floats_and_multi_language_types() {
    let a = [0.0f64, 0.0, -2.5, 0.5];
    let b = [0.0f64, 3.0, 0.0, 1e-300];
    assert_eq!(run(P::Land, E::Double, &a, &b).unwrap(), [0.0, 0.0, 0.0, 1.0]);
    assert_eq!(run(P::Lor, E::Double, &a, &b).unwrap(), [0.0, 1.0, 1.0, 1.0]);
    assert_eq!(run(P::Lxor, E::Double, &a, &b).unwrap(), [0.0, 1.0, 1.0, 0.0]);
    let a = [0.0f32, -0.0, 7.0, 1.0];
    let b = [1.0f32, 0.0, 0.0, 2.0];
    assert_eq!(run(P::Lxor, E::Float, &a, &b).unwrap(), [1.0, 0.0, 1.0, 0.0]);
    assert_eq!(run(P::Land, E::Real, &a, &b).unwrap(), [0.0, 0.0, 0.0, 1.0]);
    assert_eq!(run(P::Lor, E::Aint, &[0i64, 0, 5], &[0, -1, 0]).unwrap(), [0, 1, 1]);
    assert_eq!(run(P::Lxor, E::Count, &[3i64, 0], &[4, 0]).unwrap(), [0, 0]);
    assert_eq!(run(P::Land, E::Integer, &[3i32, 0], &[4, 9]).unwrap(), [1, 0]);
    assert_eq!(run(P::Lor, E::CDoubleComplex, &[[0.0f64, 1.0]], &[[0.0, 0.0]]).unwrap_err().class, ErrorClass::Op);
}

#[test]
fn byte_bitwise() {
    let a = [0b1100u8, 0xff];
    let b = [0b1010u8, 0x0f];
    assert_eq!(run(P::Band, E::Byte, &a, &b).unwrap(), [0b1000, 0x0f]);
    assert_eq!(run(P::Bor, E::Byte, &a, &b).unwrap(), [0b1110, 0xff]);
    assert_eq!(run(P::Bxor, E::Byte, &a, &b).unwrap(), [0b0110, 0xf0]);
    assert_eq!(run(P::Sum, E::Byte, &a, &b).unwrap_err().class, ErrorClass::Op);
}

#[test]
fn float_ops() {
    let a = [1.5f64, -2.0, 3.0];
    let b = [2.0f64, -4.0, 0.5];
    assert_eq!(run(P::Max, E::Double, &a, &b).unwrap(), [2.0, -2.0, 3.0]);
    assert_eq!(run(P::Min, E::DoublePrecision, &a, &b).unwrap(), [1.5, -4.0, 0.5]);
    assert_eq!(run(P::Sum, E::Real8, &a, &b).unwrap(), [3.5, -6.0, 3.5]);
    assert_eq!(run(P::Prod, E::Double, &a, &b).unwrap(), [3.0, 8.0, 1.5]);
    let a = [1.5f32, -2.0];
    let b = [2.0f32, -4.0];
    assert_eq!(run(P::Max, E::Float, &a, &b).unwrap(), [2.0, -2.0]);
    assert_eq!(run(P::Min, E::Real, &a, &b).unwrap(), [1.5, -4.0]);
    assert_eq!(run(P::Sum, E::Real4, &a, &b).unwrap(), [3.5, -6.0]);
    assert_eq!(run(P::Prod, E::Float, &a, &b).unwrap(), [3.0, 8.0]);
    // binary16: computed in f32, rounded back (2049 is not representable: rounds to even).
    let h = |v: &[f32]| v.iter().map(|&x| half::f16::from_f32(x)).collect::<Vec<_>>();
    let (a, b) = (h(&[1.5, -2.0, 2048.0]), h(&[2.0, -4.0, 1.0]));
    assert_eq!(run(P::Sum, E::CFloat16, &a, &b).unwrap(), h(&[3.5, -6.0, 2048.0]));
    assert_eq!(run(P::Prod, E::CFloat16, &a, &b).unwrap(), h(&[3.0, 8.0, 2048.0]));
    assert_eq!(run(P::Max, E::CFloat16, &a, &b).unwrap(), h(&[2.0, -2.0, 2048.0]));
    assert_eq!(run(P::Min, E::CFloat16, &a, &b).unwrap(), h(&[1.5, -4.0, 1.0]));
    assert_eq!(run(P::Band, E::CFloat16, &a, &b).unwrap_err().class, ErrorClass::Op);
}

/// binary128 (MPI_REAL16, MPI_COMPLEX32) as bit patterns: `q(h)` has high word `h`.
#[test]
#[cfg(target_arch = "x86_64")]
fn quad_ops() {
    let q = |hi: u64| (hi as u128) << 64;
    let (one_half3, two, m2, m4) = (q(0x3fff_8000_0000_0000), q(0x4000_0000_0000_0000), q(0xc000_0000_0000_0000), q(0xc001_0000_0000_0000));
    let (a, b) = ([one_half3, m2], [two, m4]);
    assert_eq!(run(P::Sum, E::Real16, &a, &b).unwrap(), [q(0x4000_c000_0000_0000), q(0xc001_8000_0000_0000)]);
    assert_eq!(run(P::Prod, E::Real16, &a, &b).unwrap(), [q(0x4000_8000_0000_0000), q(0x4002_0000_0000_0000)]);
    assert_eq!(run(P::Max, E::Real16, &a, &b).unwrap(), [two, m2]);
    assert_eq!(run(P::Min, E::Real16, &a, &b).unwrap(), [one_half3, m4]);
    // 1 + 2^-112 is exact only in quad precision (its last mantissa bit).
    assert_eq!(run(P::Sum, E::Real16, &[q(0x3fff_0000_0000_0000)], &[q(0x3f8f_0000_0000_0000)]).unwrap(), [q(0x3fff_0000_0000_0000) | 1]);
    assert_eq!(run(P::Band, E::Real16, &a, &b).unwrap_err().class, ErrorClass::Op);
    // (1.5 + 2i) * (2 - 2i) = 7 + 1i; sum = 3.5 + 0i.
    let (x, y) = ([[one_half3, two]], [[two, m2]]);
    assert_eq!(run(P::Prod, E::Complex32, &x, &y).unwrap(), [[q(0x4001_c000_0000_0000), q(0x3fff_0000_0000_0000)]]);
    assert_eq!(run(P::Sum, E::Complex32, &x, &y).unwrap(), [[q(0x4000_c000_0000_0000), 0]]);
    assert_eq!(run(P::Max, E::Complex32, &x, &y).unwrap_err().class, ErrorClass::Op);
}

#[test]
fn long_double_sum_keeps_extended_precision() {
    let tiny = 2f64.powi(-60);
    // 1 + 2^-60 needs 61 significant bits: lost in f64, kept in the 64-bit x87 significand.
    let s = run(P::Sum, E::LongDouble, &[ld(1.0)], &[ld(tiny)]).unwrap();
    let back = run(P::Sum, E::LongDouble, &[ld(-1.0)], &s).unwrap();
    assert_eq!(back[0].to_f64(), tiny);
    assert_eq!((1.0 + tiny) - 1.0, 0.0);
}

#[test]
fn long_double_ops() {
    let a = [ld(3.0), ld(-1.0), ld(0.25)];
    let b = [ld(2.0), ld(5.0), ld(0.25)];
    let f = |v: Vec<F80>| v.iter().map(|x| x.to_f64()).collect::<Vec<_>>();
    assert_eq!(f(run(P::Prod, E::LongDouble, &a, &b).unwrap()), [6.0, -5.0, 0.0625]);
    assert_eq!(f(run(P::Max, E::LongDouble, &a, &b).unwrap()), [3.0, 5.0, 0.25]);
    assert_eq!(f(run(P::Min, E::LongDouble, &a, &b).unwrap()), [2.0, -1.0, 0.25]);
    // MAX returns the winner's bytes exactly (the 6 padding bytes included).
    let mut big = ld(7.0);
    big.0[15] = 0xab;
    assert_eq!(run(P::Max, E::LongDouble, &[big], &[ld(1.0)]).unwrap()[0].0, big.0);
    assert_eq!(F80::from_f64(f64::NAN).partial_cmp(&ld(1.0)), None);
    assert!(ld(-2.0) < ld(1.0) && ld(1.0) == ld(1.0));
}

#[test]
fn complex_sum_and_prod() {
    // (1+2i)(3+4i) = -5+10i
    let a = [Cplx { re: 1.0f32, im: 2.0 }];
    let b = [Cplx { re: 3.0f32, im: 4.0 }];
    assert_eq!(run(P::Prod, E::Complex, &a, &b).unwrap(), [Cplx { re: -5.0, im: 10.0 }]);
    assert_eq!(run(P::Sum, E::CFloatComplex, &a, &b).unwrap(), [Cplx { re: 4.0, im: 6.0 }]);
    let a = [Cplx { re: 1.0f64, im: 2.0 }, Cplx { re: 0.0, im: 1.0 }];
    let b = [Cplx { re: 3.0f64, im: 4.0 }, Cplx { re: 0.0, im: 1.0 }];
    assert_eq!(run(P::Prod, E::DoubleComplex, &a, &b).unwrap(), [Cplx { re: -5.0, im: 10.0 }, Cplx { re: -1.0, im: 0.0 }]);
    assert_eq!(run(P::Sum, E::CDoubleComplex, &a, &b).unwrap()[0], Cplx { re: 4.0, im: 6.0 });
    let a = [Cplx { re: ld(1.0), im: ld(2.0) }];
    let b = [Cplx { re: ld(3.0), im: ld(4.0) }];
    let p = run(P::Prod, E::CLongDoubleComplex, &a, &b).unwrap()[0];
    assert_eq!((p.re.to_f64(), p.im.to_f64()), (-5.0, 10.0));
    let s = run(P::Sum, E::CxxLongDoubleComplex, &a, &b).unwrap()[0];
    assert_eq!((s.re.to_f64(), s.im.to_f64()), (4.0, 6.0));
    assert_eq!(run(P::Max, E::Complex16, &a.map(|_| Cplx { re: 0.0f64, im: 0.0 }), &[Cplx { re: 0.0, im: 0.0 }]).unwrap_err().class, ErrorClass::Op);
}

/// MAXLOC/MINLOC on each pair layout: value decides, ties take the lower index (from either
/// side).
fn check_loc<V: Copy + PartialEq + std::fmt::Debug, I: Copy + PartialEq + std::fmt::Debug>(
    e: Elem,
    v: impl Fn(i32) -> V,
    i: impl Fn(i32) -> I,
) {
    let l = |a, b| Loc { v: v(a), i: i(b) };
    let a = [l(5, 1), l(1, 7), l(3, 4), l(3, 9), l(-2, 0)];
    let b = [l(2, 0), l(4, 2), l(3, 8), l(3, 2), l(-2, 3)];
    assert_eq!(run(P::Maxloc, e, &a, &b).unwrap(), [l(5, 1), l(4, 2), l(3, 4), l(3, 2), l(-2, 0)], "{}", e.name());
    assert_eq!(run(P::Minloc, e, &a, &b).unwrap(), [l(2, 0), l(1, 7), l(3, 4), l(3, 2), l(-2, 0)], "{}", e.name());
    assert_eq!(run_shifted(P::Maxloc, e, &a, &b, 3), [l(5, 1), l(4, 2), l(3, 4), l(3, 2), l(-2, 0)], "{}", e.name());
    check_loc_layouts(e, v, i);
}

/// Also on packed pairs and with marked padding (`check_loc_layouts`).
#[test]
fn maxloc_minloc_ties_take_lower_index() {
    check_loc(E::FloatInt, |x| x as f32, |i| i);
    check_loc(E::DoubleInt, |x| x as f64, |i| i);
    check_loc(E::LongInt, |x| x as i64, |i| i);
    check_loc(E::ShortInt, |x| x as i16, |i| i);
    check_loc(E::TwoInt, |x| x, |i| i);
    check_loc(E::TwoInteger, |x| x, |i| i);
    check_loc(E::TwoReal, |x| x as f32, |i| i as f32);
    check_loc(E::TwoDoublePrecision, |x| x as f64, |i| i as f64);
    check_loc(E::LongDoubleInt, |x| LdEq(ld(x as f64)), |i| i);
}

/// The packed form of a pair (value bytes, then index bytes) and back.
fn pack_pair<V: Copy, I: Copy>(x: &Loc<V, I>) -> Vec<u8> {
    let (v, i) = (x.v, x.i);
    // SAFETY: reading the bytes of plain values.
    unsafe {
        let mut out = std::slice::from_raw_parts(&v as *const V as *const u8, size_of::<V>()).to_vec();
        out.extend_from_slice(std::slice::from_raw_parts(&i as *const I as *const u8, size_of::<I>()));
        out
    }
}

/// MAXLOC/MINLOC on packed pairs equal the struct-layout results; in struct layout the
/// padding of neither operand is read or written.
fn check_loc_layouts<V: Copy + PartialEq + std::fmt::Debug, I: Copy + PartialEq + std::fmt::Debug>(e: Elem, v: impl Fn(i32) -> V, i: impl Fn(i32) -> I) {
    let l = |a, b| Loc { v: v(a), i: i(b) };
    let a = [l(5, 1), l(1, 7), l(3, 4), l(3, 9), l(-2, 0), l(7, 6), l(7, 5)];
    let b = [l(2, 0), l(4, 2), l(3, 8), l(3, 2), l(-2, 3), l(7, 5), l(7, 6)];
    assert_eq!(e.packed_size(), size_of::<V>() + size_of::<I>(), "{}", e.name());
    for op in [P::Maxloc, P::Minloc] {
        let want = run(op, e, &a, &b).unwrap();
        let pa: Vec<u8> = a.iter().flat_map(pack_pair).collect();
        let mut pb: Vec<u8> = b.iter().flat_map(pack_pair).collect();
        // SAFETY: both hold a.len() packed pairs.
        unsafe { reduce_packed(op, e, pa.as_ptr(), pb.as_mut_ptr(), a.len()) }.unwrap();
        let pw: Vec<u8> = want.iter().flat_map(pack_pair).collect();
        assert_eq!(pb, pw, "{} {} packed", op.name(), e.name());
        // Struct layout with the padding set to marks: the inout's marks survive and the
        // input's garbage does not reach the result.
        let n = a.len() * e.size();
        let (mut ma, mut mb) = (vec![0x55u8; n], vec![0xAAu8; n]);
        let ioff = size_of::<V>().next_multiple_of(std::mem::align_of::<I>());
        for k in 0..a.len() {
            let (x, y) = (pack_pair(&a[k]), pack_pair(&b[k]));
            let base = k * e.size();
            ma[base..base + size_of::<V>()].copy_from_slice(&x[..size_of::<V>()]);
            ma[base + ioff..base + ioff + size_of::<I>()].copy_from_slice(&x[size_of::<V>()..]);
            mb[base..base + size_of::<V>()].copy_from_slice(&y[..size_of::<V>()]);
            mb[base + ioff..base + ioff + size_of::<I>()].copy_from_slice(&y[size_of::<V>()..]);
        }
        let before = mb.clone();
        // SAFETY: both hold a.len() pairs in struct layout.
        unsafe { reduce(op, e, ma.as_ptr(), mb.as_mut_ptr(), a.len()) }.unwrap();
        for k in 0..a.len() {
            let base = k * e.size();
            for off in (size_of::<V>()..ioff).chain(ioff + size_of::<I>()..e.size()) {
                assert_eq!(mb[base + off], before[base + off], "{} {}: padding byte {off} of pair {k} written", op.name(), e.name());
            }
            let got = [&mb[base..base + size_of::<V>()], &mb[base + ioff..base + ioff + size_of::<I>()]].concat();
            assert_eq!(got, pack_pair(&want[k]), "{} {} pair {k}", op.name(), e.name());
        }
    }
}

/// F80 compared by value for `assert_eq!`.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
struct LdEq(F80);
impl PartialEq for LdEq {
    fn eq(&self, o: &Self) -> bool {
        self.0 == o.0
    }
}

#[test]
fn replace_and_no_op_on_every_type() {
    for &e in Elem::ALL {
        let a: Vec<u8> = (0..e.size() * 2).map(|i| i as u8 + 1).collect();
        let mut b = vec![0xeeu8; e.size() * 2];
        // SAFETY: two elements per buffer.
        unsafe { reduce(P::NoOp, e, a.as_ptr(), b.as_mut_ptr(), 2) }.unwrap();
        assert!(b.iter().all(|&x| x == 0xee));
        // SAFETY: as above.
        unsafe { reduce(P::Replace, e, a.as_ptr(), b.as_mut_ptr(), 2) }.unwrap();
        assert_eq!(a, b, "{}", e.name());
    }
}

#[test]
fn unaligned_buffers() {
    let a: Vec<f64> = (0..1000).map(|i| i as f64 * 0.5).collect();
    let b: Vec<f64> = (0..1000).map(|i| 1.0 - i as f64).collect();
    let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    for shift in 0..8 {
        assert_eq!(run_shifted(P::Sum, E::Double, &a, &b, shift), want, "shift {shift}");
    }
    let a: Vec<i32> = (0..600).collect();
    let b: Vec<i32> = (0..600).map(|i| 3 * i).collect();
    assert_eq!(run_shifted(P::Max, E::Int, &a, &b, 1), b);
    let a = [ld(1.0), ld(2.5)];
    let r = run_shifted(P::Sum, E::LongDouble, &a, &a, 5);
    assert_eq!((r[0].to_f64(), r[1].to_f64()), (2.0, 5.0));
    let a = [Cplx { re: 1.0f64, im: 2.0 }];
    assert_eq!(run_shifted(P::Prod, E::DoubleComplex, &a, &a, 4), [Cplx { re: -3.0, im: 4.0 }]);
}

#[test]
fn same_buffer_for_input_and_inout() {
    let mut v: Vec<i64> = (0..700).collect();
    let p = v.as_mut_ptr() as *mut u8;
    // SAFETY: one buffer of 700 elements used as both operands (allowed by `reduce`).
    unsafe { reduce(P::Sum, E::Int64, p, p, v.len()) }.unwrap();
    assert_eq!(v, (0..700).map(|i| 2 * i).collect::<Vec<i64>>());
}

#[test]
fn predefined_ops_are_commutative() {
    assert!(PredefOp::ALL.iter().all(|&op| is_commutative(op)));
}

proptest! {
    #[test]
    fn i32_matches_scalar(v in proptest::collection::vec((any::<i32>(), any::<i32>()), 0..300), shift in 0usize..4) {
        let (a, b): (Vec<i32>, Vec<i32>) = v.into_iter().unzip();
        let sum: Vec<i32> = a.iter().zip(&b).map(|(x, y)| x.wrapping_add(*y)).collect();
        let max: Vec<i32> = a.iter().zip(&b).map(|(x, y)| *x.max(y)).collect();
        let xor: Vec<i32> = a.iter().zip(&b).map(|(x, y)| x ^ y).collect();
        prop_assert_eq!(run(P::Sum, E::Int, &a, &b).unwrap(), sum.clone());
        prop_assert_eq!(run_shifted(P::Sum, E::Int32, &a, &b, shift), sum);
        prop_assert_eq!(run(P::Max, E::Int, &a, &b).unwrap(), max.clone());
        prop_assert_eq!(run_shifted(P::Max, E::Integer, &a, &b, shift), max);
        prop_assert_eq!(run(P::Bxor, E::Int, &a, &b).unwrap(), xor.clone());
        prop_assert_eq!(run_shifted(P::Bxor, E::Int, &a, &b, shift), xor);
    }

    #[test]
    fn i64_matches_scalar(v in proptest::collection::vec((any::<i64>(), any::<i64>()), 0..300), shift in 0usize..8) {
        let (a, b): (Vec<i64>, Vec<i64>) = v.into_iter().unzip();
        let sum: Vec<i64> = a.iter().zip(&b).map(|(x, y)| x.wrapping_add(*y)).collect();
        let max: Vec<i64> = a.iter().zip(&b).map(|(x, y)| *x.max(y)).collect();
        let xor: Vec<i64> = a.iter().zip(&b).map(|(x, y)| x ^ y).collect();
        prop_assert_eq!(run(P::Sum, E::Long, &a, &b).unwrap(), sum.clone());
        prop_assert_eq!(run_shifted(P::Sum, E::Int64, &a, &b, shift), sum);
        prop_assert_eq!(run(P::Max, E::LongLong, &a, &b).unwrap(), max.clone());
        prop_assert_eq!(run_shifted(P::Max, E::Aint, &a, &b, shift), max);
        prop_assert_eq!(run(P::Bxor, E::Long, &a, &b).unwrap(), xor.clone());
        prop_assert_eq!(run_shifted(P::Bxor, E::Count, &a, &b, shift), xor);
    }

    #[test]
    fn f64_matches_scalar(v in proptest::collection::vec((-1e300f64..1e300, -1e300f64..1e300), 0..300), shift in 0usize..8) {
        let (a, b): (Vec<f64>, Vec<f64>) = v.into_iter().unzip();
        let sum: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        let max: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x.max(*y)).collect();
        prop_assert_eq!(run(P::Sum, E::Double, &a, &b).unwrap(), sum.clone());
        prop_assert_eq!(run_shifted(P::Sum, E::Double, &a, &b, shift), sum);
        prop_assert_eq!(run(P::Max, E::Double, &a, &b).unwrap(), max.clone());
        prop_assert_eq!(run_shifted(P::Max, E::Real8, &a, &b, shift), max);
        prop_assert_eq!(run(P::Bxor, E::Double, &a, &b).unwrap_err().class, ErrorClass::Op);
    }
}

/// The AVX2 loop that long reductions take (where the CPU has it) gives bit-identical
/// results to element-by-element reduction, for every (op, type) pair of the standard's
/// table, at lengths around the switch-over and long ones, aligned and shifted by a byte
/// (the staged path): random bit patterns, so floats include NaNs, infinities and
/// denormals.
#[test]
fn long_reductions_match_element_by_element() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed as u8
    };
    for op in PredefOp::ALL {
        for e in allowed(op) {
            let size = e.size();
            for n in [31, 32, 33, 64, 257, 1000] {
                let a: Vec<u8> = (0..n * size).map(|_| next()).collect();
                let b: Vec<u8> = (0..n * size).map(|_| next()).collect();
                let mut one_by_one = b.clone();
                for k in 0..n {
                    let r = k * size..(k + 1) * size;
                    // SAFETY: one element of `size` bytes in each buffer.
                    unsafe { reduce(op, e, a[r.clone()].as_ptr(), one_by_one[r].as_mut_ptr(), 1) }.unwrap();
                }
                for shift in [0, 1] {
                    let mut ab = vec![0u8; n * size + shift];
                    let mut bb = vec![0u8; n * size + shift];
                    ab[shift..].copy_from_slice(&a);
                    bb[shift..].copy_from_slice(&b);
                    // SAFETY: n elements after `shift` in each buffer.
                    unsafe { reduce(op, e, ab[shift..].as_ptr(), bb[shift..].as_mut_ptr(), n) }.unwrap();
                    assert!(bb[shift..] == one_by_one[..], "{} on {} x {n} (shift {shift}) differs from element-by-element", op.name(), e.name());
                }
            }
        }
    }
}

#[test]
fn accumulate_elements_combine_by_representation() {
    // Derived types report C names: their MPI_INTEGER items come back as MPI_INT.
    assert!(Elem::Int.combines_with(Elem::Integer));
    assert!(Elem::Integer.combines_with(Elem::Int));
    assert!(Elem::Float.combines_with(Elem::Real));
    assert!(Elem::Int.combines_with(Elem::Int));
    assert!(!Elem::Int.combines_with(Elem::Float)); // same size, other group
    assert!(!Elem::Int.combines_with(Elem::Logical)); // logical is its own group
    assert!(!Elem::Int.combines_with(Elem::LongLong)); // other size
}
