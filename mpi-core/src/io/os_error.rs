//! The MPI error class of an operating-system error on a file, with a message naming the
//! file and the OS's own words.

use crate::error::{ErrorClass, MpiError};
use std::io;

/// The class MPI programs expect for `errno` (as ROMIO maps them).
pub fn class_of(errno: i32) -> ErrorClass {
    match errno {
        libc::ENOENT | libc::ENOTDIR => ErrorClass::NoSuchFile,
        libc::EEXIST => ErrorClass::FileExists,
        libc::EACCES | libc::EPERM => ErrorClass::Access,
        libc::EROFS => ErrorClass::ReadOnly,
        libc::ENOSPC | libc::EFBIG => ErrorClass::NoSpace,
        libc::EDQUOT => ErrorClass::Quota,
        libc::ENAMETOOLONG | libc::EISDIR | libc::ELOOP => ErrorClass::BadFile,
        _ => ErrorClass::Io,
    }
}

/// `what` (e.g. "cannot open") failed on `path` with OS error `e`.
pub fn error(e: &io::Error, what: &str, path: &str) -> MpiError {
    let class = e.raw_os_error().map_or(ErrorClass::Io, class_of);
    MpiError::new(class, format!("{what} {path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(class_of(libc::ENOENT), ErrorClass::NoSuchFile);
        assert_eq!(class_of(libc::EEXIST), ErrorClass::FileExists);
        assert_eq!(class_of(libc::EIO), ErrorClass::Io);
        let e = error(&io::Error::from_raw_os_error(libc::EACCES), "cannot open", "/x");
        assert_eq!(e.class, ErrorClass::Access);
        assert!(e.msg.starts_with("cannot open /x: "), "{}", e.msg);
    }
}
