//! The external32 representation (MPI-3.1 §13.5.2): big-endian, IEEE formats, fixed sizes.
//! Conversion is a native pack followed by a value-by-value conversion of the packed stream:
//! a byte swap for most values, x87 long double <-> IEEE binary128, and a narrowing or
//! widening for the types whose external32 size differs on LP64 (C `long`: 8 -> 4 bytes,
//! `wchar_t`: 4 -> 2).

use super::basic::Basic;
use super::tree::Datatype;

/// Converts one x87 extended value (16 bytes, little-endian, 6 padding bytes) to binary128
/// big-endian in place. Both have a 15-bit exponent with the same bias; x87 stores the
/// leading mantissa bit explicitly, binary128 does not.
fn x87_to_binary128(v: &mut [u8]) {
    let mant = u64::from_le_bytes(v[0..8].try_into().unwrap());
    let sign_exp = u16::from_le_bytes(v[8..10].try_into().unwrap());
    let frac = ((mant & !(1u64 << 63)) as u128) << 49;
    let q = ((sign_exp as u128) << 112) | frac;
    v.copy_from_slice(&q.to_be_bytes());
}

fn binary128_to_x87(v: &mut [u8]) {
    let q = u128::from_be_bytes(v[0..16].try_into().unwrap());
    let sign_exp = (q >> 112) as u16;
    let integer_bit = if sign_exp & 0x7fff != 0 { 1u64 << 63 } else { 0 };
    let mant = ((q >> 49) as u64 & !(1u64 << 63)) | integer_bit;
    v[0..8].copy_from_slice(&mant.to_le_bytes());
    v[8..10].copy_from_slice(&sign_exp.to_le_bytes());
    v[10..16].fill(0);
}

/// Converts one value from its native bytes `n` to its external32 bytes `e`.
fn to_external(b: Basic, n: &[u8], e: &mut [u8]) {
    match b {
        // C long and wchar_t are narrower in external32: keep the low bits (a value that
        // does not fit is the user's error, as in MPICH).
        Basic::Long | Basic::ULong => e.copy_from_slice(&(u64::from_le_bytes(n.try_into().unwrap()) as u32).to_be_bytes()),
        Basic::Wchar => e.copy_from_slice(&(u32::from_le_bytes(n.try_into().unwrap()) as u16).to_be_bytes()),
        _ if b.is_x87() => {
            e.copy_from_slice(n);
            e.chunks_mut(16).for_each(x87_to_binary128);
        }
        _ => {
            for (eu, nu) in e.chunks_mut(b.swap_unit()).zip(n.chunks(b.swap_unit())) {
                eu.iter_mut().zip(nu.iter().rev()).for_each(|(d, s)| *d = *s);
            }
        }
    }
}

/// Converts one value from its external32 bytes `e` to its native bytes `n`.
fn to_native(b: Basic, e: &[u8], n: &mut [u8]) {
    match b {
        Basic::Long => n.copy_from_slice(&(i32::from_be_bytes(e.try_into().unwrap()) as i64).to_le_bytes()),
        Basic::ULong => n.copy_from_slice(&(u32::from_be_bytes(e.try_into().unwrap()) as u64).to_le_bytes()),
        // Zero-extended: external32 wchar is a 16-bit code unit, and the ones above 0x7fff
        // (Hangul, CJK, private use) are characters, not negative numbers.
        Basic::Wchar => n.copy_from_slice(&(u16::from_be_bytes(e.try_into().unwrap()) as u32).to_le_bytes()),
        _ if b.is_x87() => {
            n.copy_from_slice(e);
            n.chunks_mut(16).for_each(binary128_to_x87);
        }
        _ => {
            for (nu, eu) in n.chunks_mut(b.swap_unit()).zip(e.chunks(b.swap_unit())) {
                nu.iter_mut().zip(eu.iter().rev()).for_each(|(d, s)| *d = *s);
            }
        }
    }
}

/// Walks a packed stream of items of `t` value by value in type-map order, calling
/// `f(basic, native offset, external offset)` for each value that fits whole in both
/// `native_len` native bytes and `ext_len` external32 bytes (the two sizes of a value may
/// differ). Returns (native bytes, external bytes) walked.
fn walk_values(t: &Datatype, native_len: usize, ext_len: usize, mut f: impl FnMut(Basic, usize, usize)) -> (usize, usize) {
    let (mut np, mut ep) = (0, 0);
    if t.size() == 0 {
        return (0, 0);
    }
    let (segs, reps) = t.segments();
    'items: loop {
        for s in std::iter::repeat_n(segs, reps).flatten() {
            let (ns, es) = (s.basic.size(), s.basic.external32_size());
            for _ in 0..s.n {
                if np + ns > native_len || ep + es > ext_len {
                    break 'items;
                }
                f(s.basic, np, ep);
                np += ns;
                ep += es;
            }
        }
    }
    (np, ep)
}

impl Datatype {
    /// Packs `count` items at `src` into `dst` in external32; returns the bytes written
    /// (whole values only, up to `min(dst.len(), external32_size(count))`).
    ///
    /// # Safety
    /// As for [`Datatype::pack`].
    pub unsafe fn pack_external32(&self, src: *const u8, count: usize, dst: &mut [u8]) -> usize {
        let mut native = vec![0u8; self.size().saturating_mul(count)];
        // SAFETY: forwarded from the caller.
        let n = unsafe { self.pack(src, count, &mut native) };
        walk_values(self, n, dst.len(), |b, np, ep| {
            to_external(b, &native[np..np + b.size()], &mut dst[ep..ep + b.external32_size()])
        })
        .1
    }

    /// Unpacks external32 data `src` into `count` items at `dst`; returns the external32
    /// bytes consumed (whole values only).
    ///
    /// # Safety
    /// As for [`Datatype::unpack`].
    pub unsafe fn unpack_external32(&self, src: &[u8], dst: *mut u8, count: usize) -> usize {
        let mut native = vec![0u8; self.size().saturating_mul(count)];
        let (n, e) = walk_values(self, native.len(), src.len(), |b, np, ep| {
            to_native(b, &src[ep..ep + b.external32_size()], &mut native[np..np + b.size()])
        });
        // SAFETY: forwarded from the caller.
        unsafe { self.unpack(&native[..n], dst, count) };
        e
    }

    /// Bytes of `count` items in external32.
    pub fn external32_size(&self, count: usize) -> Option<usize> {
        self.flat().ext_size.checked_mul(count)
    }
}
