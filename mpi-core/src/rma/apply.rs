//! The read-modify-write operations on target memory, shared by every path that applies
//! them (a local origin through the mapping or CMA, the target for an active message): the
//! target's accumulate mutex is held around read, combine and write, so accumulates from
//! all origins are atomic per element and see each other in order.

use super::access::{self, Runs};
use super::window::Access;
use super::words::TargetWords;
use crate::error::MpiResult;
use crate::op::{self, Elem, PredefOp};

/// Target data up to this size is staged on the stack.
const SMALL: usize = 64;

/// `target = origin op target` over the target runs; `origin` is packed; `result`, when
/// given (get-accumulate), receives the old target contents packed.
///
/// # Safety
/// The runs must be valid target memory for `access` (checked against the window).
pub unsafe fn accumulate(access: Access, words: &TargetWords, runs: &Runs, origin: &[u8], op: PredefOp, elem: Elem, result: Option<&mut [u8]>) -> MpiResult<()> {
    let total = access::total(runs);
    if total == 0 {
        // Nothing to combine, so no op/type pair to refuse either (as MPICH, which
        // returns before looking at them).
        return Ok(());
    }
    if let (Access::Mapped { base }, [(off, _)], true) = (access, &runs[..], elem.size() == elem.packed_size()) {
        // One run of mapped memory, elements without padding: combine in place (one pass
        // over the target instead of read, combine, write back).
        let target = (base + off) as *mut u8;
        return words.with_acc(|| {
            if let Some(r) = result {
                // SAFETY: caller's contract; `r` holds `total` bytes.
                unsafe { crate::copy::move_bytes(target, r.as_mut_ptr(), total) };
            }
            // SAFETY: `origin` and the target hold `total` bytes of `elem` (packed = in
            // memory for unpadded elements).
            unsafe { op::reduce(op, elem, origin.as_ptr(), target, total / elem.size()) }
        });
    }
    let mut small = [0u8; SMALL];
    let mut big = Vec::new();
    let tmp: &mut [u8] = if total <= SMALL {
        &mut small[..total]
    } else {
        big.resize(total, 0);
        &mut big
    };
    let whole = [(tmp.as_mut_ptr() as u64, total)];
    words.with_acc(|| {
        let need_old = result.is_some() || !matches!(op, PredefOp::Replace);
        if need_old {
            // SAFETY: caller's contract; `tmp` holds `total` bytes.
            unsafe { access::read(access, runs, &whole)? };
        }
        if let Some(r) = result {
            r.copy_from_slice(tmp);
        }
        if op == PredefOp::NoOp {
            return Ok(());
        }
        // SAFETY: both buffers hold `total` packed bytes of `elem`.
        unsafe { op::reduce_packed(op, elem, origin.as_ptr(), tmp.as_mut_ptr(), total / elem.packed_size())? };
        // SAFETY: caller's contract.
        unsafe { access::write(access, runs, &whole) }
    })
}

/// Compare-and-swap of one element: the old value goes to `result`; `new` replaces it when
/// it equals `compare` (bitwise: the types allowed are integers, logicals and bytes).
///
/// # Safety
/// As `accumulate`.
pub unsafe fn compare_and_swap(access: Access, words: &TargetWords, runs: &Runs, new: &[u8], compare: &[u8], result: &mut [u8]) -> MpiResult<()> {
    let whole = [(result.as_mut_ptr() as u64, result.len())];
    words.with_acc(|| {
        // SAFETY: caller's contract; `result` holds the element.
        unsafe { access::read(access, runs, &whole)? };
        if result == compare {
            // SAFETY: caller's contract.
            unsafe { access::write(access, runs, &[(new.as_ptr() as u64, new.len())])? };
        }
        Ok(())
    })
}
