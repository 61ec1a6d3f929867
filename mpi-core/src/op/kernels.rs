//! Elementwise reduction loops. Every op is a small `fn(x, y) -> y'` on one element; `each`
//! runs it over slices (`zip` + assignment, no branches for the arithmetic/bitwise ops) so
//! LLVM vectorises the aligned path; unaligned or aliased buffers are staged through aligned
//! stack chunks and then use the same loop.

use super::{PredefOp, Repr, F80};
use std::mem::{align_of, size_of, MaybeUninit};
use std::ops::{BitAnd, BitOr, BitXor};
use std::{ptr, slice};

/// Types for which every bit pattern is a valid value (so bytes from a user buffer can be
/// viewed as them).
///
/// # Safety
/// Implement only for plain data without invalid bit patterns.
pub(super) unsafe trait Plain: Copy {}

/// Arithmetic as MPI means it: integers wrap (C's unsigned semantics; signed overflow is
/// undefined in C, wrapping is the natural choice), floats follow IEEE.
pub(super) trait Num: Plain + PartialOrd {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
}

/// Integer kinds: arithmetic, bitwise and logical (nonzero = true) ops.
pub(super) trait Int: Num + Eq + Default + From<bool> + BitAnd<Output = Self> + BitOr<Output = Self> + BitXor<Output = Self> {}

macro_rules! ints {
    ($($t:ty),*) => {$(
        // SAFETY: primitive integer, every bit pattern valid.
        unsafe impl Plain for $t {}
        impl Num for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline(always)]
            fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            #[inline(always)]
            fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
        }
        impl Int for $t {}
    )*};
}
ints!(i8, u8, i16, u16, i32, u32, i64, u64);

macro_rules! floats {
    ($($t:ty),*) => {$(
        // SAFETY: primitive float, every bit pattern valid (some are NaNs).
        unsafe impl Plain for $t {}
        impl Num for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self { self + o }
            #[inline(always)]
            fn sub(self, o: Self) -> Self { self - o }
            #[inline(always)]
            fn mul(self, o: Self) -> Self { self * o }
        }
    )*};
}
floats!(f32, f64, half::f16);

/// Floating-point kinds under the logical ops, which MPICH also defines on them (nonzero
/// is true; the result is 1.0 or 0.0). The standard lists only integers and logicals.
pub(super) trait Truth: Num {
    fn truth(self) -> bool;
    fn of(b: bool) -> Self;
}

macro_rules! truths {
    ($($t:ty),*) => {$(
        impl Truth for $t {
            #[inline(always)]
            fn truth(self) -> bool { self != 0.0 }
            #[inline(always)]
            fn of(b: bool) -> Self { b as u8 as $t }
        }
    )*};
}
truths!(f32, f64);

impl Truth for half::f16 {
    #[inline(always)]
    fn truth(self) -> bool {
        self != half::f16::ZERO
    }
    #[inline(always)]
    fn of(b: bool) -> Self {
        if b {
            half::f16::ONE
        } else {
            half::f16::ZERO
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Truth for F80 {
    fn truth(self) -> bool {
        self != F80::from_f64(0.0)
    }
    fn of(b: bool) -> Self {
        F80::from_f64(b as u8 as f64)
    }
}

// SAFETY: 16 plain bytes.
unsafe impl Plain for F80 {}

#[cfg(target_arch = "x86_64")]
impl Num for F80 {
    fn add(self, o: Self) -> Self {
        self + o
    }
    fn sub(self, o: Self) -> Self {
        self - o
    }
    fn mul(self, o: Self) -> Self {
        self * o
    }
}

/// C `_Complex` / Fortran COMPLEX layout.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(super) struct Cplx<T> {
    pub re: T,
    pub im: T,
}

// SAFETY: two Plain fields, no padding beyond what T has.
unsafe impl<T: Plain> Plain for Cplx<T> {}

/// A MINLOC/MAXLOC pair with C struct layout (`struct { V v; I i; }`, padding included).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(super) struct Loc<V, I> {
    pub v: V,
    pub i: I,
}

// SAFETY: Plain fields; padding bytes may hold anything.
unsafe impl<V: Plain, I: Plain> Plain for Loc<V, I> {}

/// The loop every kernel is: `b[i] = f(a[i], b[i])`. Out of line: one copy per (type, op)
/// serves the aligned and the staged path, and its slice arguments are `noalias`, so LLVM
/// vectorises it without runtime overlap checks (SSE2 `addpd`/`paddd`/... on x86-64).
///
/// Where the CPU has AVX2, slices of `WIDE_MIN` elements and more take the same loop
/// compiled for it (4 doubles or 8 ints per instruction instead of 2 or 4): the build
/// targets baseline x86-64 so that `libmpi.so` runs on any of them, and Open MPI's
/// reductions pick AVX at run time the same way (an accumulate of 1 KiB–1 MiB of doubles
/// was 1.1–1.4 × Open MPI's time with SSE2 alone). Same element-wise operations in the
/// same order, so results are bit-identical.
#[inline(never)]
fn zip_apply<T: Copy, F: Fn(T, T) -> T>(a: &[T], b: &mut [T], f: &F) {
    #[cfg(target_arch = "x86_64")]
    if a.len() >= WIDE_MIN && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        return unsafe { zip_apply_avx2(a, b, f) };
    }
    for (y, &x) in b.iter_mut().zip(a) {
        *y = f(x, *y);
    }
}

/// Elements from which a reduction takes the AVX2 loop (below, the check costs more).
#[cfg(target_arch = "x86_64")]
const WIDE_MIN: usize = 32;

/// `zip_apply`'s loop compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn zip_apply_avx2<T: Copy, F: Fn(T, T) -> T>(a: &[T], b: &mut [T], f: &F) {
    for (y, &x) in b.iter_mut().zip(a) {
        *y = f(x, *y);
    }
}

/// Elements per staging chunk on the unaligned path (at most 8 KiB per buffer).
const CHUNK: usize = 256;

/// `inout[i] = f(input[i], inout[i])` for `n` elements of `T` at possibly unaligned or
/// identical addresses.
///
/// # Safety
/// `input` readable and `inout` readable and writable for `n * size_of::<T>()` bytes.
#[inline(always)]
unsafe fn each<T: Plain, F: Fn(T, T) -> T>(input: *const u8, inout: *mut u8, n: usize, f: F) {
    let size = size_of::<T>();
    let bytes = n * size;
    let (a, b) = (input as usize, inout as usize);
    let aligned = (a | b) % align_of::<T>() == 0;
    let disjoint = a + bytes <= b || b + bytes <= a;
    if aligned && disjoint {
        // SAFETY: aligned, in bounds (caller's contract), T is Plain, and the two slices do
        // not overlap, so the shared and the mutable borrow are sound.
        let (x, y) = unsafe { (slice::from_raw_parts(input as *const T, n), slice::from_raw_parts_mut(inout as *mut T, n)) };
        zip_apply(x, y, &f);
        return;
    }
    let mut xs = [MaybeUninit::<T>::uninit(); CHUNK];
    let mut ys = [MaybeUninit::<T>::uninit(); CHUNK];
    let mut done = 0;
    while done < n {
        let k = (n - done).min(CHUNK);
        let off = done * size;
        // SAFETY: k ≤ CHUNK elements are copied bytewise from the caller's buffers (in
        // bounds by contract; `copy` tolerates overlap) into the local arrays, which are
        // then fully initialised for k elements of a Plain type; the result is copied back.
        unsafe {
            ptr::copy(input.add(off), xs.as_mut_ptr() as *mut u8, k * size);
            ptr::copy(inout.add(off), ys.as_mut_ptr() as *mut u8, k * size);
            let x = slice::from_raw_parts(xs.as_ptr() as *const T, k);
            let y = slice::from_raw_parts_mut(ys.as_mut_ptr() as *mut T, k);
            zip_apply(x, y, &f);
            ptr::copy(ys.as_ptr() as *const u8, inout.add(off), k * size);
        }
        done += k;
    }
}

#[inline(always)]
fn max<T: PartialOrd>(x: T, y: T) -> T {
    if x > y {
        x
    } else {
        y
    }
}

#[inline(always)]
fn min<T: PartialOrd>(x: T, y: T) -> T {
    if x < y {
        x
    } else {
        y
    }
}

/// MAX, MIN, SUM, PROD on a real number type; false if `op` is not one of them.
///
/// # Safety
/// As `each`.
unsafe fn real<T: Num>(op: PredefOp, input: *const u8, inout: *mut u8, n: usize) -> bool {
    // SAFETY (all arms): forwarded caller's contract.
    unsafe {
        match op {
            PredefOp::Max => each::<T, _>(input, inout, n, max),
            PredefOp::Min => each::<T, _>(input, inout, n, min),
            PredefOp::Sum => each::<T, _>(input, inout, n, |x, y| x.add(y)),
            PredefOp::Prod => each::<T, _>(input, inout, n, |x, y| x.mul(y)),
            _ => return false,
        }
    }
    true
}

/// MAX, MIN, SUM, PROD and the logical ops on a floating-point type.
///
/// # Safety
/// As `each`.
unsafe fn float<T: Truth>(op: PredefOp, input: *const u8, inout: *mut u8, n: usize) -> bool {
    // SAFETY (all arms): forwarded caller's contract.
    unsafe {
        match op {
            PredefOp::Land => each::<T, _>(input, inout, n, |x, y| T::of(x.truth() & y.truth())),
            PredefOp::Lor => each::<T, _>(input, inout, n, |x, y| T::of(x.truth() | y.truth())),
            PredefOp::Lxor => each::<T, _>(input, inout, n, |x, y| T::of(x.truth() ^ y.truth())),
            _ => return real::<T>(op, input, inout, n),
        }
    }
    true
}

/// Every integer op (arithmetic, bitwise, logical); false for MINLOC/MAXLOC.
///
/// # Safety
/// As `each`.
unsafe fn int<T: Int>(op: PredefOp, input: *const u8, inout: *mut u8, n: usize) -> bool {
    let zero = T::default();
    // SAFETY (all arms): forwarded caller's contract.
    unsafe {
        match op {
            PredefOp::Land => each::<T, _>(input, inout, n, |x, y| T::from((x != zero) & (y != zero))),
            PredefOp::Lor => each::<T, _>(input, inout, n, |x, y| T::from((x != zero) | (y != zero))),
            PredefOp::Lxor => each::<T, _>(input, inout, n, |x, y| T::from((x != zero) ^ (y != zero))),
            PredefOp::Band => each::<T, _>(input, inout, n, |x, y| x & y),
            PredefOp::Bor => each::<T, _>(input, inout, n, |x, y| x | y),
            PredefOp::Bxor => each::<T, _>(input, inout, n, |x, y| x ^ y),
            _ => return real::<T>(op, input, inout, n),
        }
    }
    true
}

/// SUM and PROD on complex numbers ((a+bi)(c+di) = (ac-bd) + (ad+bc)i, as C computes it
/// without the Annex G infinity recovery).
///
/// # Safety
/// As `each`.
unsafe fn complex<T: Num>(op: PredefOp, input: *const u8, inout: *mut u8, n: usize) -> bool {
    // SAFETY (all arms): forwarded caller's contract.
    unsafe {
        match op {
            PredefOp::Sum => each::<Cplx<T>, _>(input, inout, n, |x, y| Cplx { re: x.re.add(y.re), im: x.im.add(y.im) }),
            PredefOp::Prod => each::<Cplx<T>, _>(input, inout, n, |x, y| Cplx {
                re: x.re.mul(y.re).sub(x.im.mul(y.im)),
                im: x.re.mul(y.im).add(x.im.mul(y.re)),
            }),
            _ => return false,
        }
    }
    true
}

/// MAXLOC/MINLOC: the larger (smaller) value wins; on equal values the lower index.
///
/// Pairs lie `stride` bytes apart, the index `ioff` bytes after the value: the C struct
/// layout in user memory (`packed` false: padding between and after), or the packed form
/// of staged data (`packed` true: value and index adjacent). Only the value and index bytes
/// are read and written, never the padding.
///
/// # Safety
/// `input` readable and `inout` readable and writable for `n` pairs in that layout.
unsafe fn loc<V: Plain + PartialOrd, I: Plain + PartialOrd>(op: PredefOp, input: *const u8, inout: *mut u8, n: usize, packed: bool) -> bool {
    let max = match op {
        PredefOp::Maxloc => true,
        PredefOp::Minloc => false,
        _ => return false,
    };
    let (stride, ioff) = if packed {
        (size_of::<V>() + size_of::<I>(), size_of::<V>())
    } else {
        (size_of::<Loc<V, I>>(), size_of::<V>().next_multiple_of(align_of::<I>()))
    };
    for k in 0..n {
        // SAFETY: pair k lies within both buffers (caller's contract); unaligned reads and
        // writes of Plain values; each pair is read whole before it is written, so
        // `input == inout` is fine.
        unsafe {
            let (x, y) = (input.add(k * stride), inout.add(k * stride));
            let (xv, yv) = (ptr::read_unaligned(x as *const V), ptr::read_unaligned(y as *const V));
            let xi = ptr::read_unaligned(x.add(ioff) as *const I);
            let yi = ptr::read_unaligned(y.add(ioff) as *const I);
            if if max { xv > yv } else { xv < yv } {
                ptr::write_unaligned(y as *mut V, xv);
                ptr::write_unaligned(y.add(ioff) as *mut I, xi);
            } else if xv == yv && xi < yi {
                ptr::write_unaligned(y.add(ioff) as *mut I, xi);
            }
        }
    }
    true
}

/// Runs `op` on `n` elements of representation `repr`; false if no kernel exists for the
/// pair (the caller has already checked the standard's table, so this only happens for
/// `long double` kinds off x86-64). `packed`: pair elements in their packed form (see
/// `loc`); other kinds have one layout.
///
/// # Safety
/// `input` readable and `inout` readable and writable for `n` elements of `repr` in that
/// layout (`repr.size()` or `repr.packed_size()` bytes each).
pub(super) unsafe fn dispatch(op: PredefOp, repr: Repr, input: *const u8, inout: *mut u8, n: usize, packed: bool) -> bool {
    // SAFETY (all arms): forwarded caller's contract; each arm's element type has size
    // `repr.size()` (checked by the `layouts` test).
    unsafe {
        match repr {
            Repr::I8 => int::<i8>(op, input, inout, n),
            Repr::U8 => int::<u8>(op, input, inout, n),
            Repr::I16 => int::<i16>(op, input, inout, n),
            Repr::U16 => int::<u16>(op, input, inout, n),
            Repr::I32 => int::<i32>(op, input, inout, n),
            Repr::U32 => int::<u32>(op, input, inout, n),
            Repr::I64 => int::<i64>(op, input, inout, n),
            Repr::U64 => int::<u64>(op, input, inout, n),
            Repr::F16 => float::<half::f16>(op, input, inout, n),
            Repr::F32 => float::<f32>(op, input, inout, n),
            Repr::F64 => float::<f64>(op, input, inout, n),
            Repr::C32 => complex::<f32>(op, input, inout, n),
            Repr::C64 => complex::<f64>(op, input, inout, n),
            Repr::FloatInt => loc::<f32, i32>(op, input, inout, n, packed),
            Repr::DoubleInt => loc::<f64, i32>(op, input, inout, n, packed),
            Repr::LongInt => loc::<i64, i32>(op, input, inout, n, packed),
            Repr::ShortInt => loc::<i16, i32>(op, input, inout, n, packed),
            Repr::IntInt => loc::<i32, i32>(op, input, inout, n, packed),
            Repr::RealReal => loc::<f32, f32>(op, input, inout, n, packed),
            Repr::DoubleDouble => loc::<f64, f64>(op, input, inout, n, packed),
            #[cfg(target_arch = "x86_64")]
            Repr::F80 => float::<F80>(op, input, inout, n),
            #[cfg(target_arch = "x86_64")]
            Repr::C80 => complex::<F80>(op, input, inout, n),
            #[cfg(target_arch = "x86_64")]
            Repr::LongDoubleInt => loc::<F80, i32>(op, input, inout, n, packed),
            #[cfg(target_arch = "x86_64")]
            Repr::F128 => quad::reduce(op, input, inout, n, false),
            #[cfg(target_arch = "x86_64")]
            Repr::C128 => quad::reduce(op, input, inout, n, true),
            #[cfg(not(target_arch = "x86_64"))]
            Repr::F80 | Repr::C80 | Repr::LongDoubleInt | Repr::F128 | Repr::C128 => false,
        }
    }
}

/// Size of the element type each `Repr` dispatches to, for the layout test.
#[cfg(test)]
pub(super) fn kernel_size(repr: Repr) -> usize {
    match repr {
        Repr::I8 | Repr::U8 => size_of::<i8>(),
        Repr::I16 | Repr::U16 => size_of::<i16>(),
        Repr::I32 | Repr::U32 => size_of::<i32>(),
        Repr::I64 | Repr::U64 => size_of::<i64>(),
        Repr::F16 => size_of::<half::f16>(),
        Repr::F32 => size_of::<f32>(),
        Repr::F64 => size_of::<f64>(),
        Repr::F80 => size_of::<F80>(),
        Repr::C32 => size_of::<Cplx<f32>>(),
        Repr::C64 => size_of::<Cplx<f64>>(),
        Repr::C80 => size_of::<Cplx<F80>>(),
        Repr::F128 => 16,
        Repr::C128 => 32,
        Repr::FloatInt => size_of::<Loc<f32, i32>>(),
        Repr::DoubleInt => size_of::<Loc<f64, i32>>(),
        Repr::LongInt => size_of::<Loc<i64, i32>>(),
        Repr::ShortInt => size_of::<Loc<i16, i32>>(),
        Repr::IntInt => size_of::<Loc<i32, i32>>(),
        Repr::LongDoubleInt => size_of::<Loc<F80, i32>>(),
        Repr::RealReal => size_of::<Loc<f32, f32>>(),
        Repr::DoubleDouble => size_of::<Loc<f64, f64>>(),
    }
}

/// Quad precision (`MPI_REAL16`, `MPI_COMPLEX32`): the loops of `quad.c`.
#[cfg(target_arch = "x86_64")]
mod quad {
    use super::PredefOp;
    use std::ffi::{c_int, c_void};

    extern "C" {
        fn oxmpi_quad_reduce(op: c_int, input: *const c_void, inout: *mut c_void, n: usize) -> c_int;
        fn oxmpi_quad_complex_reduce(op: c_int, input: *const c_void, inout: *mut c_void, n: usize) -> c_int;
    }

    /// # Safety
    /// `input` readable, `inout` readable and writable for `n` elements (16 bytes each,
    /// 32 when `complex`), any alignment.
    pub(super) unsafe fn reduce(op: PredefOp, input: *const u8, inout: *mut u8, n: usize, complex: bool) -> bool {
        let code = match op {
            PredefOp::Max => 0,
            PredefOp::Min => 1,
            PredefOp::Sum => 2,
            PredefOp::Prod => 3,
            PredefOp::Land if !complex => 4,
            PredefOp::Lor if !complex => 5,
            PredefOp::Lxor if !complex => 6,
            _ => return false,
        };
        // SAFETY: FFI to the C loops, which read and write exactly those ranges (memcpy per
        // element, so alignment does not matter).
        let done = unsafe {
            if complex {
                oxmpi_quad_complex_reduce(code, input as *const c_void, inout as *mut c_void, n)
            } else {
                oxmpi_quad_reduce(code, input as *const c_void, inout as *mut c_void, n)
            }
        };
        done != 0
    }
}
