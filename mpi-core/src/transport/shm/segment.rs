//! A POSIX shared-memory segment: created 0600 by one local rank, attached by the others,
//! and unlinked as soon as everyone has attached, so a crash can never leak `/dev/shm` files.

use std::ffi::CString;
use std::io;

/// A mapped segment. Touched only through raw pointers and atomics (other processes write it).
pub struct Segment {
    base: *mut u8,
    len: usize,
    name: CString,
    unlinked: bool,
}

impl Segment {
    /// Creates (exclusively) and maps a segment of `len` bytes; its pages read as zero.
    pub fn create(name: &str, len: usize) -> io::Result<Segment> {
        let cname = shm_name(name)?;
        // SAFETY: FFI call with a valid NUL-terminated name.
        let fd = unsafe { libc::shm_open(cname.as_ptr(), libc::O_CREAT | libc::O_EXCL | libc::O_RDWR, 0o600) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is the descriptor just opened.
        let r = unsafe { libc::ftruncate(fd, len as libc::off_t) };
        let res = if r < 0 { Err(io::Error::last_os_error()) } else { map(fd, len) };
        // SAFETY: closing our own descriptor; the mapping keeps the segment alive.
        unsafe { libc::close(fd) };
        match res {
            Ok(base) => Ok(Segment { base, len, name: cname, unlinked: false }),
            Err(e) => {
                // SAFETY: removing the name we created.
                unsafe { libc::shm_unlink(cname.as_ptr()) };
                Err(e)
            }
        }
    }

    /// Attaches to a segment another local rank created.
    pub fn attach(name: &str, len: usize) -> io::Result<Segment> {
        let cname = shm_name(name)?;
        // SAFETY: FFI call with a valid NUL-terminated name.
        let fd = unsafe { libc::shm_open(cname.as_ptr(), libc::O_RDWR, 0) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fd is valid and st is a properly sized out-parameter.
        let r = unsafe { libc::fstat(fd, &mut st) };
        let res = if r < 0 {
            Err(io::Error::last_os_error())
        } else if (st.st_size as usize) < len {
            Err(io::Error::new(io::ErrorKind::InvalidData, "shared-memory segment smaller than expected"))
        } else {
            map(fd, len)
        };
        // SAFETY: closing our own descriptor.
        unsafe { libc::close(fd) };
        res.map(|base| Segment { base, len, name: cname, unlinked: true })
    }

    /// Removes the name; the mapping stays valid. Idempotent.
    pub fn unlink(&mut self) {
        if !self.unlinked {
            // SAFETY: FFI call with the segment's own name.
            unsafe { libc::shm_unlink(self.name.as_ptr()) };
            self.unlinked = true;
        }
    }

    pub fn base(&self) -> *mut u8 {
        self.base
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        self.unlink();
        // SAFETY: unmapping exactly the region mapped in `map`.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

fn shm_name(name: &str) -> io::Result<CString> {
    CString::new(format!("/{name}")).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in shm name"))
}

fn map(fd: libc::c_int, len: usize) -> io::Result<*mut u8> {
    // SAFETY: mapping a shared, read-write view of an fd we hold; result checked below.
    let p = unsafe {
        libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0)
    };
    if p == libc::MAP_FAILED {
        Err(io::Error::last_os_error())
    } else {
        Ok(p as *mut u8)
    }
}
