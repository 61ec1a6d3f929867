//! Error classes of the engine. Values are MPICH's (and the standard's) error classes so the
//! C layer can pass them through unchanged.

use std::fmt;

/// An MPI error class (the subset the engine raises; the C layer knows the rest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum ErrorClass {
    Buffer = 1,
    Count = 2,
    Type = 3,
    Tag = 4,
    Comm = 5,
    Rank = 6,
    Root = 7,
    Group = 8,
    Op = 9,
    Arg = 12,
    Unknown = 13,
    Truncate = 14,
    Other = 15,
    Intern = 16,
    InStatus = 17,
    Pending = 18,
    Request = 19,
    Access = 20,
    Amode = 21,
    BadFile = 22,
    FileExists = 25,
    File = 27,
    Io = 32,
    NoMem = 34,
    NotSame = 35,
    NoSpace = 36,
    NoSuchFile = 37,
    Quota = 39,
    ReadOnly = 40,
    UnsupportedDatarep = 43,
    UnsupportedOperation = 44,
    Win = 45,
    Base = 46,
    LockType = 47,
    RmaConflict = 49,
    RmaSync = 50,
    Size = 51,
    Disp = 52,
    Assert = 53,
    RmaRange = 55,
    RmaAttach = 56,
    RmaShared = 57,
    RmaFlavor = 58,
    ProcAborted = 76,
}

impl ErrorClass {
    /// The class of an error code from user code (a generalized request's callback): the
    /// engine's class of that value, else `Other` (lists every variant: a new one goes there too).
    pub fn from_code(code: i32) -> ErrorClass {
        use ErrorClass::*;
        [Buffer, Count, Type, Tag, Comm, Rank, Root, Group, Op, Arg, Unknown, Truncate, Other, Intern, InStatus, Pending, Request, Access, Amode, BadFile, FileExists, File, Io, NoMem, NotSame, NoSpace, NoSuchFile, Quota, ReadOnly, UnsupportedDatarep, UnsupportedOperation, Win, Base, LockType, RmaConflict, RmaSync, Size, Disp, Assert, RmaRange, RmaAttach, RmaShared, RmaFlavor, ProcAborted]
            .into_iter()
            .find(|&c| c as i32 == code)
            .unwrap_or(Other)
    }
}

/// An engine error: a class plus a one-line cause for the error handler to print.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MpiError {
    pub class: ErrorClass,
    pub msg: String,
}

impl MpiError {
    pub fn new(class: ErrorClass, msg: impl Into<String>) -> Self {
        MpiError { class, msg: msg.into() }
    }
}

impl fmt::Display for MpiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for MpiError {}

pub type MpiResult<T> = Result<T, MpiError>;

/// A broken invariant or a lost peer the job cannot survive: one line naming it, then abort
/// (the launcher reports the signal and ends the job).
pub fn fatal(msg: &str) -> ! {
    crate::say!("OxMPI fatal error: {msg}");
    std::process::abort()
}

/// Writes `line` and a newline to stderr in one `write`. `eprintln!` writes each piece of
/// its format separately, and a rank the launcher kills between two (it ends the job as
/// soon as another rank aborts) leaves half a line in the job's output.
pub fn say_line(line: &str) {
    use std::io::Write;
    let mut b = String::with_capacity(line.len() + 1);
    b.push_str(line);
    b.push('\n');
    let _ = std::io::stderr().lock().write_all(b.as_bytes());
}

/// `eprintln!` in one write (see `say_line`): for every message of the library.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => { $crate::error::say_line(&format!($($arg)*)) };
}
