//! Validation of point-to-point arguments, shared by every send, receive and probe entry
//! point: one place decides what is an invalid rank, tag, count, datatype or communicator.

use crate::abi::*;
use crate::handles::comm_index;
use mpi_core::comm::Comm;
use mpi_core::protocol::PROC_NULL_WORLD;
use mpi_core::request::{Layout, RawBuf, Status};
use mpi_core::runtime::Runtime;
use std::os::raw::{c_int, c_void};

/// Largest tag (the `MPI_TAG_UB` attribute): the wire header carries a non-negative i32.
pub(crate) const TAG_UB: c_int = i32::MAX;

/// An argument error: class and specific message, raised after the runtime lock is released.
pub type ArgError = (c_int, String);

#[inline]
pub fn comm_of<'a>(rt: &'a Runtime, comm: MPI_Comm) -> Result<&'a Comm, ArgError> {
    comm_index(comm)
        .and_then(|i| rt.comms.get(i))
        .ok_or_else(|| (MPI_ERR_COMM, if comm == MPI_COMM_NULL { "communicator is MPI_COMM_NULL".into() } else { format!("invalid communicator handle {comm:#x}") }))
}

/// Checks (buf, count, datatype) and returns the contiguous byte view of the buffer, or,
/// for a non-contiguous datatype, the layout the engine packs/unpacks through. `count` is
/// an int or an `MPI_Count` (the `_c` entry points): both widen to `MPI_Count` for free.
#[inline]
pub fn buffer(buf: *const c_void, count: impl Into<MPI_Count>, dt: MPI_Datatype) -> Result<(RawBuf, Option<Layout>), ArgError> {
    let count: MPI_Count = count.into();
    if count < 0 {
        return Err((MPI_ERR_COUNT, format!("negative count {count}")));
    }
    buffer_of(buf, count as usize, dt)
}

/// `buffer` for a count already known to be non-negative (and possibly above `c_int`).
#[inline]
pub fn buffer_of(buf: *const c_void, count: usize, dt: MPI_Datatype) -> Result<(RawBuf, Option<Layout>), ArgError> {
    // Builtin types carry their size in the handle and are contiguous (including the
    // MPI_2INT-style pairs of equal halves; MPI_LB/MPI_UB have size 0): no lookup on the
    // hot path.
    if is_builtin(dt) {
        let len = byte_len(count, (((dt as u32) >> 8) & 0xff) as usize)?;
        if buf.is_null() && len > 0 {
            return Err((MPI_ERR_BUFFER, format!("buffer is NULL but count is {count}")));
        }
        return Ok((RawBuf { ptr: buf as *mut u8, len }, None));
    }
    if dt == MPI_DATATYPE_NULL && count == 0 {
        // No data: accepted as MPICH does (its test suite sends 0 items of it).
        return Ok((RawBuf::EMPTY, None));
    }
    let t = crate::types::lookup(dt).ok_or_else(|| {
        (MPI_ERR_TYPE, if dt == MPI_DATATYPE_NULL { "datatype is MPI_DATATYPE_NULL".into() } else { format!("invalid datatype handle {dt:#x}") })
    })?;
    if !t.committed() {
        return Err((MPI_ERR_TYPE, "datatype is not committed; call MPI_Type_commit first".into()));
    }
    let len = byte_len(count, t.size())?;
    if t.is_contiguous() {
        let ptr = (buf as *mut u8).wrapping_offset(t.true_lb());
        if ptr.is_null() && len > 0 {
            return Err((MPI_ERR_BUFFER, format!("buffer is NULL but count is {count}")));
        }
        return Ok((RawBuf { ptr, len }, None));
    }
    Ok((RawBuf::EMPTY, Some(Layout { dt: t, base: buf as *mut u8, count })))
}

/// Bytes of `count` (non-negative) items of `size` bytes; an error when no buffer can be
/// that large (only large counts get there).
#[inline]
pub(crate) fn byte_len(count: usize, size: usize) -> Result<usize, ArgError> {
    count.checked_mul(size).filter(|&n| n <= isize::MAX as usize).ok_or_else(|| (MPI_ERR_COUNT, format!("count {count} of {size}-byte items exceeds the address space")))
}

#[inline]
fn is_builtin(dt: MPI_Datatype) -> bool {
    crate::types::is_builtin_handle(dt)
}

/// World rank of destination `dest` (or `PROC_NULL_WORLD`).
#[inline]
pub fn dest_world(c: &Comm, dest: c_int) -> Result<usize, ArgError> {
    if dest == MPI_PROC_NULL {
        return Ok(PROC_NULL_WORLD);
    }
    if dest < 0 || dest as usize >= c.size() {
        return Err((MPI_ERR_RANK, format!("invalid destination rank {dest} (communicator {} has {} ranks)", c.name, c.size())));
    }
    Ok(c.world_ranks[dest as usize])
}

#[inline]
pub fn send_tag(tag: c_int) -> Result<(), ArgError> {
    if !(0..=TAG_UB).contains(&tag) {
        return Err((MPI_ERR_TAG, format!("invalid tag {tag} (send tags go from 0 to {TAG_UB})")));
    }
    Ok(())
}

#[inline]
pub fn recv_source(c: &Comm, src: c_int) -> Result<(), ArgError> {
    if src == MPI_ANY_SOURCE || src == MPI_PROC_NULL || (src >= 0 && (src as usize) < c.size()) {
        return Ok(());
    }
    Err((MPI_ERR_RANK, format!("invalid source rank {src} (communicator {} has {} ranks)", c.name, c.size())))
}

#[inline]
pub fn recv_tag(tag: c_int) -> Result<(), ArgError> {
    if tag == MPI_ANY_TAG || (0..=TAG_UB).contains(&tag) {
        return Ok(());
    }
    Err((MPI_ERR_TAG, format!("invalid tag {tag} (receive tags go from 0 to {TAG_UB}, or MPI_ANY_TAG)")))
}

/// The status of an operation with `MPI_PROC_NULL`.
pub fn proc_null_status() -> Status {
    Status { source: MPI_PROC_NULL, tag: MPI_ANY_TAG, ..Status::default() }
}

/// The empty status of a null or inactive request.
pub fn empty_status() -> Status {
    Status { source: MPI_ANY_SOURCE, tag: MPI_ANY_TAG, ..Status::default() }
}

/// Writes `s` to a user status unless it is `MPI_STATUS_IGNORE`.
///
/// # Safety
/// `out` must be `MPI_STATUS_IGNORE`, NULL, or point to an `MPI_Status`.
#[inline]
pub unsafe fn write_status(out: *mut MPI_Status, s: &Status, with_error: Option<c_int>) {
    if out.is_null() || out as usize == 1 {
        return;
    }
    // SAFETY: per the function contract.
    let st = unsafe { &mut *out };
    if s.send {
        // Only the cancelled bit (see `Status::send`).
        st.count_hi_and_cancelled = (st.count_hi_and_cancelled & !1) | s.cancelled as c_int;
        if let Some(e) = with_error {
            st.MPI_ERROR = e;
        }
        return;
    }
    let bytes = s.bytes as u64;
    st.count_lo = bytes as u32 as c_int;
    st.count_hi_and_cancelled = (((bytes >> 32) as c_int) << 1) | s.cancelled as c_int;
    st.MPI_SOURCE = s.source;
    st.MPI_TAG = s.tag;
    if let Some(e) = with_error {
        st.MPI_ERROR = e;
    }
}

/// Byte count stored in a user status.
pub fn status_bytes(st: &MPI_Status) -> u64 {
    (st.count_lo as u32 as u64) | (((st.count_hi_and_cancelled as u32 >> 1) as u64) << 32)
}
