//! `munmap`, `mremap`, `madvise` and `mmap` of this library, which the dynamic linker
//! binds in place of the C library's for the program and every library loaded with it.
//! Each reports the range it unmaps or replaces to `mpi_core::memhooks` (so the RDMA
//! registration cache never serves pages that are gone), then does the system call
//! itself, so it cannot recurse into another hook. Without a registration cache the report
//! is one atomic load. Not declared in `mpi.h`.

use libc::{c_int, c_long, c_void, off_t, size_t};
use mpi_core::memhooks::unmapped;

/// `syscall(2)`'s result as a pointer (MAP_FAILED with errno set on failure).
fn as_ptr(r: c_long) -> *mut c_void {
    if r == -1 {
        libc::MAP_FAILED
    } else {
        r as *mut c_void
    }
}

/// # Safety
/// As mmap(2).
#[no_mangle]
pub unsafe extern "C" fn mmap(addr: *mut c_void, len: size_t, prot: c_int, flags: c_int, fd: c_int, off: off_t) -> *mut c_void {
    if flags & libc::MAP_FIXED != 0 {
        unmapped(addr as usize, len);
    }
    // SAFETY: the caller's mmap arguments, passed through unchanged.
    let p = as_ptr(unsafe { libc::syscall(libc::SYS_mmap, addr, len, prot, flags, fd, off) });
    if p != libc::MAP_FAILED {
        // A new mapping may sit where memory was unmapped without passing a hook.
        unmapped(p as usize, len);
    }
    p
}

/// # Safety
/// As mmap(2) (`off_t` is 64 bits here).
#[no_mangle]
pub unsafe extern "C" fn mmap64(addr: *mut c_void, len: size_t, prot: c_int, flags: c_int, fd: c_int, off: off_t) -> *mut c_void {
    // SAFETY: forwarded.
    unsafe { mmap(addr, len, prot, flags, fd, off) }
}

/// # Safety
/// As munmap(2).
#[no_mangle]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: size_t) -> c_int {
    unmapped(addr as usize, len);
    // SAFETY: the caller's arguments, passed through unchanged.
    unsafe { libc::syscall(libc::SYS_munmap, addr, len) as c_int }
}

/// # Safety
/// As mremap(2); `new_addr` is read only with `MREMAP_FIXED`, as the C library does.
#[no_mangle]
pub unsafe extern "C" fn mremap(old: *mut c_void, old_len: size_t, new_len: size_t, flags: c_int, new_addr: *mut c_void) -> *mut c_void {
    unmapped(old as usize, old_len);
    if flags & libc::MREMAP_FIXED != 0 {
        unmapped(new_addr as usize, new_len);
    }
    // SAFETY: the caller's arguments, passed through unchanged.
    as_ptr(unsafe { libc::syscall(libc::SYS_mremap, old, old_len, new_len, flags, new_addr) })
}

/// # Safety
/// As madvise(2).
#[no_mangle]
pub unsafe extern "C" fn madvise(addr: *mut c_void, len: size_t, advice: c_int) -> c_int {
    // Advice that gives the pages back (later reads see new zero pages).
    if matches!(advice, libc::MADV_DONTNEED | libc::MADV_FREE | libc::MADV_REMOVE) {
        unmapped(addr as usize, len);
    }
    // SAFETY: the caller's arguments, passed through unchanged.
    unsafe { libc::syscall(libc::SYS_madvise, addr, len, advice) as c_int }
}
