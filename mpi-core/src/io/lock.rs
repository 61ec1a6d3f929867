//! POSIX byte-range locks (`fcntl` `F_SETLKW`), held for the length of one access: atomic
//! mode and the shared file pointer use them. They work across hosts on file systems that
//! implement them (NFS through lockd, Lustre, GPFS). Such locks belong to the process, so
//! callers serialise their own threads with a mutex first.

use crate::error::MpiResult;
use std::os::fd::{AsRawFd, BorrowedFd};

/// A held lock on `len` bytes from `start` (0: to the end of the file); released on drop.
pub struct RangeLock<'a> {
    fd: BorrowedFd<'a>,
    start: u64,
    len: u64,
}

fn fcntl_lock(fd: BorrowedFd<'_>, kind: i32, start: u64, len: u64, wait: bool) -> std::io::Result<()> {
    // SAFETY: an all-zero flock is a valid value; the fields used are set below.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = start as libc::off_t;
    fl.l_len = len as libc::off_t;
    let cmd = if wait { libc::F_SETLKW } else { libc::F_SETLK };
    loop {
        // SAFETY: fd is open for the borrow; fl is a valid flock.
        if unsafe { libc::fcntl(fd.as_raw_fd(), cmd, &fl) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

impl<'a> RangeLock<'a> {
    /// Waits for a write (`exclusive`) or read lock on the range of file `fd`, at `path`
    /// for error messages.
    pub fn acquire(fd: BorrowedFd<'a>, start: u64, len: u64, exclusive: bool, path: &str) -> MpiResult<RangeLock<'a>> {
        let kind = if exclusive { libc::F_WRLCK } else { libc::F_RDLCK };
        fcntl_lock(fd, kind, start, len, true).map_err(|e| super::os_error::error(&e, "cannot lock a byte range of", path))?;
        Ok(RangeLock { fd, start, len })
    }
}

impl Drop for RangeLock<'_> {
    fn drop(&mut self) {
        let _ = fcntl_lock(self.fd, libc::F_UNLCK, self.start, self.len, false);
    }
}
