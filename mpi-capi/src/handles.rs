//! Encoding of user-object handles (the one place that knows it). Predefined handles carry
//! MPICH's values; objects created at run time use MPICH's "direct" kind bits with a table
//! index in the low 26 bits, so they never collide with a predefined value.

use crate::abi::*;
use std::os::raw::c_int;

const INDEX_MASK: u32 = 0x03ff_ffff;
const KIND_MASK: u32 = 0xfc00_0000;
const COMM_DIRECT: u32 = 0x8400_0000;
const REQUEST_DIRECT: u32 = 0xac00_0000;
const GROUP_DIRECT: u32 = 0x8800_0000;
const ERRHANDLER_DIRECT: u32 = 0x9400_0000;
const INFO_DIRECT: u32 = 0x9c00_0000;
const KEYVAL_DIRECT: u32 = 0xa400_0000;
const WIN_DIRECT: u32 = 0xa000_0000;
const FILE_DIRECT: u32 = 0xb800_0000;
/// MPICH's session kind (`MPI_SESSION_NULL` is 0x3800_0000); the same bits as `FILE_DIRECT`,
/// which is harmless: `MPI_File` is a pointer type, never confused with an `MPI_Session`.
const SESSION_DIRECT: u32 = 0xb800_0000;

/// Decodes a user handle of kind `kind` into its table index.
#[inline]
fn direct_index(h: c_int, kind: u32) -> Option<usize> {
    ((h as u32) & KIND_MASK == kind).then_some(((h as u32) & INDEX_MASK) as usize)
}

#[inline]
fn direct_handle(idx: usize, kind: u32) -> c_int {
    debug_assert!(idx as u32 <= INDEX_MASK);
    (kind | idx as u32) as c_int
}

/// Stores `v` in the first free slot of handle table `t` (a freed object's), else at its
/// end: the table index of the new object.
pub fn store_in_free_slot<T>(t: &mut Vec<Option<T>>, v: T) -> usize {
    match t.iter().position(|s| s.is_none()) {
        Some(i) => {
            t[i] = Some(v);
            i
        }
        None => {
            t.push(Some(v));
            t.len() - 1
        }
    }
}

/// User group handle → index in the group table (`MPI_GROUP_EMPTY` and null: None).
pub fn group_index(g: MPI_Group) -> Option<usize> {
    direct_index(g, GROUP_DIRECT)
}

pub fn group_handle(idx: usize) -> MPI_Group {
    direct_handle(idx, GROUP_DIRECT)
}

/// User error handler handle → index (predefined handlers: None).
pub fn errhandler_index(e: MPI_Errhandler) -> Option<usize> {
    direct_index(e, ERRHANDLER_DIRECT)
}

pub fn errhandler_handle(idx: usize) -> MPI_Errhandler {
    direct_handle(idx, ERRHANDLER_DIRECT)
}

/// User info handle → index (`MPI_INFO_ENV` and null: None).
pub fn info_index(i: MPI_Info) -> Option<usize> {
    direct_index(i, INFO_DIRECT)
}

pub fn info_handle(idx: usize) -> MPI_Info {
    direct_handle(idx, INFO_DIRECT)
}

/// User keyval → index (predefined attribute keys: None).
pub fn keyval_index(k: c_int) -> Option<usize> {
    direct_index(k, KEYVAL_DIRECT)
}

pub fn keyval_handle(idx: usize) -> c_int {
    direct_handle(idx, KEYVAL_DIRECT)
}

/// Window handle → index in the runtime's window table (`MPI_WIN_NULL`: None).
#[inline]
pub fn win_index(w: MPI_Win) -> Option<usize> {
    direct_index(w, WIN_DIRECT)
}

pub fn win_handle(idx: usize) -> MPI_Win {
    direct_handle(idx, WIN_DIRECT)
}

/// File handle → index in the file table (`MPI_FILE_NULL`: None). `MPI_File` is a pointer
/// in the MPICH ABI; ours hold a "direct" handle value like the integer handles, so
/// `MPI_File_c2f` is the value itself and the Fortran `MPI_FILE_NULL` (0) is the null
/// pointer.
#[inline]
pub fn file_index(f: MPI_File) -> Option<usize> {
    let v = f as usize;
    (v >> 32 == 0).then_some(())?;
    direct_index(v as u32 as c_int, FILE_DIRECT)
}

pub fn file_handle(idx: usize) -> MPI_File {
    direct_handle(idx, FILE_DIRECT) as u32 as usize as MPI_File
}

/// Session handle → index in the session table (`MPI_SESSION_NULL`: None).
pub fn session_index(s: MPI_Session) -> Option<usize> {
    direct_index(s, SESSION_DIRECT)
}

pub fn session_handle(idx: usize) -> MPI_Session {
    direct_handle(idx, SESSION_DIRECT)
}

/// Communicator handle → index in the runtime's communicator table.
#[inline]
pub fn comm_index(c: MPI_Comm) -> Option<usize> {
    match c {
        MPI_COMM_WORLD => Some(mpi_core::comm::WORLD),
        MPI_COMM_SELF => Some(mpi_core::comm::SELF),
        _ if (c as u32) & KIND_MASK == COMM_DIRECT => Some(((c as u32) & INDEX_MASK) as usize),
        _ => None,
    }
}

/// Index in the communicator table → handle.
pub fn comm_handle(idx: usize) -> MPI_Comm {
    match idx {
        mpi_core::comm::WORLD => MPI_COMM_WORLD,
        mpi_core::comm::SELF => MPI_COMM_SELF,
        _ => (COMM_DIRECT | idx as u32) as MPI_Comm,
    }
}

/// Request (or message) handle → request id; None for null or foreign handles.
#[inline]
pub fn request_id(r: MPI_Request) -> Option<u32> {
    ((r as u32) & KIND_MASK == REQUEST_DIRECT).then_some((r as u32) & INDEX_MASK)
}

#[inline]
pub fn request_handle(id: u32) -> MPI_Request {
    debug_assert!(id <= INDEX_MASK);
    (REQUEST_DIRECT | id) as MPI_Request
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_nulls() {
        assert_eq!(comm_index(comm_handle(7)), Some(7));
        assert_eq!(comm_index(MPI_COMM_WORLD), Some(0));
        assert_eq!(comm_index(MPI_COMM_NULL), None);
        assert_eq!(request_id(request_handle(123)), Some(123));
        assert_eq!(request_id(MPI_REQUEST_NULL), None);
        assert_eq!(request_id(MPI_MESSAGE_NO_PROC), None);
        assert_eq!(group_index(group_handle(3)), Some(3));
        assert_eq!(group_index(MPI_GROUP_EMPTY), None);
        assert_eq!(info_index(MPI_INFO_ENV), None);
        assert_eq!(info_index(info_handle(0)), Some(0));
        assert_eq!(errhandler_index(MPI_ERRORS_RETURN), None);
        assert_eq!(keyval_index(MPI_TAG_UB), None);
        assert_eq!(keyval_index(keyval_handle(5)), Some(5));
        assert_eq!(file_index(file_handle(9)), Some(9));
        assert_eq!(file_index(std::ptr::null_mut()), None);
        assert_eq!(session_index(session_handle(2)), Some(2));
        assert_eq!(session_index(MPI_SESSION_NULL), None);
    }
}
