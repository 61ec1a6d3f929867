//! Moving bytes between this process and a target's window memory when no target
//! involvement is needed: plain copies for mapped memory, the kernel's cross-memory calls
//! (CMA) for another local process. Both sides are lists of runs (address, length) in
//! type-map order, so derived datatypes on either side need no packing.

use super::window::Access;
use crate::error::{ErrorClass, MpiError, MpiResult};

/// (address, length) runs of data, in order.
pub type Runs = Vec<(u64, usize)>;

/// Most iovecs handed to one cross-memory call (the kernel allows 1024).
const IOVS: usize = 64;

/// Calls `f(local, remote, len)` for the pieces where the two run lists line up: the
/// `n`-th byte of `a` pairs with the `n`-th byte of `b`. Both must hold the same total.
fn zip_runs(a: &[(u64, usize)], b: &[(u64, usize)], mut f: impl FnMut(u64, u64, usize)) {
    let (mut i, mut j, mut oa, mut ob) = (0, 0, 0usize, 0usize);
    while i < a.len() && j < b.len() {
        let n = (a[i].1 - oa).min(b[j].1 - ob);
        if n > 0 {
            f(a[i].0 + oa as u64, b[j].0 + ob as u64, n);
        }
        oa += n;
        ob += n;
        if oa == a[i].1 {
            i += 1;
            oa = 0;
        }
        if j < b.len() && ob == b[j].1 {
            j += 1;
            ob = 0;
        }
    }
}

/// Total bytes of a run list.
pub fn total(runs: &[(u64, usize)]) -> usize {
    runs.iter().map(|r| r.1).sum()
}

/// Copies the bytes of local runs `src` into the target's runs `dst` (window offsets as
/// addresses, see `Access`).
///
/// # Safety
/// `src` must be readable; for `Mapped` access the target runs must lie in mapped window
/// memory (the caller checked them against the window).
pub unsafe fn write(access: Access, dst: &[(u64, usize)], src: &[(u64, usize)]) -> MpiResult<()> {
    match access {
        Access::Mapped { base } => {
            zip_runs(src, dst, |s, d, n| {
                // SAFETY: caller's contract; `move_bytes` allows overlap (a put to oneself).
                unsafe { crate::copy::move_bytes(s as *const u8, (base + d) as *mut u8, n) }
            });
            Ok(())
        }
        Access::Cma { pid, base } => cma(pid, base, dst, src, true),
        Access::Am => unreachable!("active-message targets are not written directly"),
    }
}

/// Copies the target's runs `src` into local runs `dst`.
///
/// # Safety
/// `dst` must be writable; for `Mapped` access as in `write`.
pub unsafe fn read(access: Access, src: &[(u64, usize)], dst: &[(u64, usize)]) -> MpiResult<()> {
    match access {
        Access::Mapped { base } => {
            zip_runs(dst, src, |d, s, n| {
                // SAFETY: caller's contract.
                unsafe { crate::copy::move_bytes((base + s) as *const u8, d as *mut u8, n) }
            });
            Ok(())
        }
        Access::Cma { pid, base } => cma(pid, base, src, dst, false),
        Access::Am => unreachable!("active-message targets are not read directly"),
    }
}

/// One cross-memory transfer between `remote` runs (offsets from `base` in process `pid`)
/// and `local` runs, batched `IOVS` pieces per call.
fn cma(pid: i32, base: u64, remote: &[(u64, usize)], local: &[(u64, usize)], write: bool) -> MpiResult<()> {
    let mut l: Vec<libc::iovec> = Vec::with_capacity(IOVS);
    let mut r: Vec<libc::iovec> = Vec::with_capacity(IOVS);
    let mut result = Ok(());
    let mut flush = |l: &mut Vec<libc::iovec>, r: &mut Vec<libc::iovec>| {
        if l.is_empty() || result.is_err() {
            return;
        }
        let want: usize = l.iter().map(|v| v.iov_len).sum();
        // SAFETY: the iovecs describe local memory the caller vouched for and remote
        // memory the kernel checks; counts match the vectors.
        let got = unsafe {
            if write {
                libc::process_vm_writev(pid, l.as_ptr(), l.len() as _, r.as_ptr(), r.len() as _, 0)
            } else {
                libc::process_vm_readv(pid, l.as_ptr(), l.len() as _, r.as_ptr(), r.len() as _, 0)
            }
        };
        if got != want as isize {
            let err = std::io::Error::last_os_error();
            let first = r[0].iov_base as u64;
            result = Err(if got < 0 && err.raw_os_error() != Some(libc::EFAULT) {
                MpiError::new(ErrorClass::Intern, format!("cross-memory access to the target (pid {pid}) failed: {err}"))
            } else {
                MpiError::new(ErrorClass::RmaRange, format!("target memory at {first:#x} is not accessible (not attached to the window?)"))
            });
        }
        l.clear();
        r.clear();
    };
    zip_runs(local, remote, |lo, ro, n| {
        l.push(libc::iovec { iov_base: lo as *mut libc::c_void, iov_len: n });
        r.push(libc::iovec { iov_base: (base + ro) as *mut libc::c_void, iov_len: n });
        if l.len() == IOVS {
            flush(&mut l, &mut r);
        }
    });
    flush(&mut l, &mut r);
    result
}

/// Whether cross-memory reads of process `pid` work (the kernel's ptrace rules may forbid
/// them): one real read of `addr`, a byte the peer published for this probe.
pub fn cma_works(pid: i32, addr: u64) -> bool {
    let mut b = 0u8;
    let l = libc::iovec { iov_base: &mut b as *mut u8 as *mut libc::c_void, iov_len: 1 };
    let r = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: 1 };
    // SAFETY: one local byte we own; the remote address is checked by the kernel.
    unsafe { libc::process_vm_readv(pid, &l, 1, &r, 1, 0) == 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zip_lines_up_runs_of_different_shapes() {
        let a = [(100, 3), (200, 5)];
        let b = [(10, 2), (20, 6)];
        let mut got = Vec::new();
        zip_runs(&a, &b, |x, y, n| got.push((x, y, n)));
        assert_eq!(got, vec![(100, 10, 2), (102, 20, 1), (200, 21, 5)]);
    }

    #[test]
    fn mapped_copy_through_runs() {
        let src = [1u8, 2, 3, 4, 5, 6];
        let mut dst = [0u8; 10];
        let s = [(src.as_ptr() as u64, 6)];
        let d = [(0, 2), (4, 4)];
        // SAFETY: runs inside the two arrays.
        unsafe { write(Access::Mapped { base: dst.as_mut_ptr() as u64 }, &d, &s).unwrap() };
        assert_eq!(dst, [1, 2, 0, 0, 3, 4, 5, 6, 0, 0]);
    }

    #[test]
    fn cma_on_self() {
        let pid = std::process::id() as i32;
        let src = [9u8; 16];
        let mut dst = [0u8; 16];
        if !cma_works(pid, src.as_ptr() as u64) {
            return; // ptrace rules forbid it here; the engine then uses active messages
        }
        let s = [(src.as_ptr() as u64, 16)];
        let d = [(0, 16)];
        // SAFETY: both arrays are ours.
        unsafe { write(Access::Cma { pid, base: dst.as_mut_ptr() as u64 }, &d, &s).unwrap() };
        assert_eq!(dst, [9u8; 16]);
    }
}
