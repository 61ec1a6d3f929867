//! The external32 representation (MPI-3.1 §13.5.2): big-endian, IEEE formats, fixed sizes.
//! On LP64 every size already matches the standard's table, so conversion is a native pack
//! followed by an in-place byte swap per value (and x87 long double <-> IEEE binary128).

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

/// Converts the first `buf.len()` bytes of a packed stream of items of `t` between native
/// and external32 (whole values only; a trailing partial value is left as is).
fn convert(t: &Datatype, buf: &mut [u8], to_external: bool) {
    if t.size() == 0 {
        return;
    }
    let mut pos = 0;
    'items: while pos < buf.len() {
        for s in t.segments() {
            for _ in 0..s.n {
                let size = s.basic.size();
                if pos + size > buf.len() {
                    break 'items;
                }
                let v = &mut buf[pos..pos + size];
                convert_value(s.basic, v, to_external);
                pos += size;
            }
        }
    }
}

fn convert_value(b: Basic, v: &mut [u8], to_external: bool) {
    if b.is_x87() {
        for half in v.chunks_mut(16) {
            if to_external {
                x87_to_binary128(half)
            } else {
                binary128_to_x87(half)
            }
        }
    } else {
        for unit in v.chunks_mut(b.swap_unit()) {
            unit.reverse();
        }
    }
}

impl Datatype {
    /// Packs `count` items at `src` into `dst` in external32; returns the bytes written.
    ///
    /// # Safety
    /// As for [`Datatype::pack`].
    pub unsafe fn pack_external32(&self, src: *const u8, count: usize, dst: &mut [u8]) -> usize {
        // SAFETY: forwarded from the caller.
        let n = unsafe { self.pack(src, count, dst) };
        convert(self, &mut dst[..n], true);
        n
    }

    /// Unpacks external32 data `src` into `count` items at `dst`; returns the bytes consumed.
    ///
    /// # Safety
    /// As for [`Datatype::unpack`].
    pub unsafe fn unpack_external32(&self, src: &[u8], dst: *mut u8, count: usize) -> usize {
        let n = src.len().min(self.size().saturating_mul(count));
        let mut native = src[..n].to_vec();
        convert(self, &mut native, false);
        // SAFETY: forwarded from the caller.
        unsafe { self.unpack(&native, dst, count) }
    }

    /// Bytes of `count` items in external32.
    pub fn external32_size(&self, count: usize) -> Option<usize> {
        self.size().checked_mul(count)
    }
}
