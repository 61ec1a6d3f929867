//! Errors and the fatal line.
//!
//! Calls that can fail report a reason string through the C ABI (`open`, `connect`);
//! failures the engine cannot handle (a work completion in error, a QP or port going
//! down) end the job through the engine's `fatal` with one line naming the peer's world
//! rank and the verbs status, so a user sees at once which link broke and how.

use std::fmt;

/// A reason `open`/`connect` return to the engine (which falls back to TCP or reports it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl Error {
    pub fn new(msg: impl Into<String>) -> Error {
        Error(msg.into())
    }

    /// `what` failed with the current `errno`.
    pub fn last_os(what: &str) -> Error {
        Error(format!("{what}: {}", std::io::Error::last_os_error()))
    }

    /// `what` failed with the error number `rc` (verbs calls that return errno values).
    pub fn os(what: &str, rc: i32) -> Error {
        Error(format!(
            "{what}: {}",
            std::io::Error::from_raw_os_error(rc.abs())
        ))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// Copies `msg` NUL-terminated into the engine's buffer (truncated to fit, cut at a
/// character boundary so the engine always sees valid UTF-8).
///
/// # Safety
/// `buf` must be null or writable for `cap` bytes.
pub unsafe fn write_c_string(msg: &str, buf: *mut u8, cap: usize) -> usize {
    if buf.is_null() || cap == 0 {
        return 0;
    }
    let mut n = msg.len().min(cap - 1);
    while !msg.is_char_boundary(n) {
        n -= 1;
    }
    // SAFETY: buf is writable for cap > n bytes (caller contract); msg has n readable bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(msg.as_ptr(), buf, n);
        *buf.add(n) = 0;
    }
    n
}

/// The enum name of a work completion status (`ibv_wc_status_str` gives the prose; the
/// name is what people search for).
pub fn wc_status_name(status: u32) -> &'static str {
    const NAMES: [&str; 24] = [
        "IBV_WC_SUCCESS",
        "IBV_WC_LOC_LEN_ERR",
        "IBV_WC_LOC_QP_OP_ERR",
        "IBV_WC_LOC_EEC_OP_ERR",
        "IBV_WC_LOC_PROT_ERR",
        "IBV_WC_WR_FLUSH_ERR",
        "IBV_WC_MW_BIND_ERR",
        "IBV_WC_BAD_RESP_ERR",
        "IBV_WC_LOC_ACCESS_ERR",
        "IBV_WC_REM_INV_REQ_ERR",
        "IBV_WC_REM_ACCESS_ERR",
        "IBV_WC_REM_OP_ERR",
        "IBV_WC_RETRY_EXC_ERR",
        "IBV_WC_RNR_RETRY_EXC_ERR",
        "IBV_WC_LOC_RDD_VIOL_ERR",
        "IBV_WC_REM_INV_RD_REQ_ERR",
        "IBV_WC_REM_ABORT_ERR",
        "IBV_WC_INV_EECN_ERR",
        "IBV_WC_INV_EEC_STATE_ERR",
        "IBV_WC_FATAL_ERR",
        "IBV_WC_RESP_TIMEOUT_ERR",
        "IBV_WC_GENERAL_ERR",
        "IBV_WC_TM_ERR",
        "IBV_WC_TM_RNDV_INCOMPLETE",
    ];
    NAMES
        .get(status as usize)
        .copied()
        .unwrap_or("IBV_WC_UNKNOWN")
}

/// The fatal line for a work completion in error: "RDMA transport error with rank 3 (RDMA
/// READ): remote access error (IBV_WC_REM_ACCESS_ERR)". The engine prefixes its own
/// "OxMPI fatal error: ".
pub fn wc_error_line(
    rank: Option<u32>,
    op: &str,
    status_str: &str,
    status: u32,
    vendor_err: u32,
) -> String {
    let who = match rank {
        Some(r) => format!("rank {r}"),
        None => String::from("an unknown peer"),
    };
    let mut s = format!(
        "RDMA transport error with {who} ({op}): {status_str} ({})",
        wc_status_name(status)
    );
    if vendor_err != 0 {
        s.push_str(&format!(", vendor error {vendor_err:#x}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names() {
        assert_eq!(wc_status_name(10), "IBV_WC_REM_ACCESS_ERR");
        assert_eq!(wc_status_name(12), "IBV_WC_RETRY_EXC_ERR");
        assert_eq!(wc_status_name(99), "IBV_WC_UNKNOWN");
    }

    #[test]
    fn error_line() {
        let l = wc_error_line(Some(3), "RDMA READ", "remote access error", 10, 0);
        assert_eq!(l, "RDMA transport error with rank 3 (RDMA READ): remote access error (IBV_WC_REM_ACCESS_ERR)");
        assert!(!l.contains('\n'));
    }

    #[test]
    fn c_string_truncates_at_char_boundary() {
        let mut buf = [0xffu8; 5];
        // SAFETY: buf is writable for its length.
        let n = unsafe { write_c_string("abé€x", buf.as_mut_ptr(), buf.len()) };
        assert_eq!(n, 4);
        assert_eq!(&buf[..5], b"ab\xc3\xa9\0");
        let mut one = [7u8; 1];
        // SAFETY: as above.
        assert_eq!(unsafe { write_c_string("xyz", one.as_mut_ptr(), 1) }, 0);
        assert_eq!(one[0], 0);
    }
}
