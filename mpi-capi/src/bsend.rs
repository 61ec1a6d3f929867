//! Buffers for buffered sends (MPI 4.1 §3.6): the process's (`MPI_Buffer_attach`) and a
//! communicator's (`MPI_Comm_attach_buffer`, which takes precedence), their detach and
//! flush calls, and `MPI_BUFFER_AUTOMATIC` (the engine copies each message into memory of
//! its own). The engine keeps the buffers (`mpi_core::bsend`).
//!
//! Sessions' buffers (`MPI_Session_attach_buffer`) are not there yet (not declared): a
//! communicator does not record the session it was derived from.

use crate::abi::*;
use crate::errors::{raise, raise_core};
use crate::handles::request_handle;
use crate::p2p_args::comm_of;
use mpi_core::bsend::Owner;
use mpi_core::runtime;
use std::os::raw::{c_int, c_void};

/// `MPI_BUFFER_AUTOMATIC` (mpi.h): MPICH 4.2's value (mpi4py's binary wheel, built against
/// MPICH, compares detached buffers with `(void *)-2`).
pub const BUFFER_AUTOMATIC: *mut c_void = usize::MAX.wrapping_sub(1) as *mut c_void;

/// The buffer owner of `comm` (its context id), or the error raised.
fn comm_owner(func: &str, comm: MPI_Comm) -> Result<Owner, c_int> {
    runtime::with(|rt| comm_of(rt, comm).map(|c| Some(c.ctx))).map_err(|(class, msg)| raise(MPI_COMM_WORLD, func, class, msg))
}

fn attach(func: &str, owner: Owner, err_comm: MPI_Comm, buffer: *mut c_void, size: MPI_Count) -> c_int {
    let automatic = buffer == BUFFER_AUTOMATIC;
    if !automatic && (size < 0 || (buffer.is_null() && size > 0) || size > isize::MAX as MPI_Count) {
        return raise(err_comm, func, MPI_ERR_BUFFER, format!("invalid buffer (pointer {buffer:?}, size {size})"));
    }
    match runtime::with(|rt| rt.engine.buffer_attach(owner, buffer as *mut u8, size.max(0) as usize, automatic)) {
        Ok(()) => MPI_SUCCESS,
        Err(e) => raise_core(err_comm, func, e),
    }
}

/// Detaches `owner`'s buffer once its pending buffered sends are done and stores its
/// address in `*buffer_addr` (`MPI_BUFFER_AUTOMATIC` for an automatic one; NULL and size 0
/// when none is attached); returns its size, at most `max` bytes (a larger buffer stays
/// attached: MPI_ERR_VALUE_TOO_LARGE).
///
/// # Safety
/// `buffer_addr` is NULL or points to a `void *`.
unsafe fn detach(func: &str, owner: Owner, err_comm: MPI_Comm, buffer_addr: *mut c_void, size_null: bool, max: usize) -> Result<usize, c_int> {
    if buffer_addr.is_null() || size_null {
        return Err(raise(err_comm, func, MPI_ERR_ARG, "buffer_addr or size is NULL"));
    }
    runtime::wait_until(|rt| rt.engine.buffer_idle(owner));
    let (base, len) = runtime::with(|rt| match rt.engine.buffer_detach(owner) {
        None => Ok((std::ptr::null_mut(), 0)),
        Some((_, _, true)) => Ok((BUFFER_AUTOMATIC, 0)),
        Some((base, len, false)) if len > max => {
            // Attaching the buffer just emptied again cannot fail.
            let _ = rt.engine.buffer_attach(owner, base, len, false);
            Err(len)
        }
        Some((base, len, false)) => Ok((base as *mut c_void, len)),
    })
    .map_err(|len| raise(err_comm, func, MPI_ERR_VALUE_TOO_LARGE, format!("the attached buffer has {len} bytes, more than an int holds; use the _c form of this call")))?;
    // SAFETY: buffer_addr points to a `void *` per the standard.
    unsafe { *(buffer_addr as *mut *mut c_void) = base };
    Ok(len)
}

/// # Safety
/// `size` is NULL or points to an int.
unsafe fn detach_int(func: &str, owner: Owner, err_comm: MPI_Comm, buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    // SAFETY: forwarded caller pointers.
    match unsafe { detach(func, owner, err_comm, buffer_addr, size.is_null(), c_int::MAX as usize) } {
        // SAFETY: checked non-null by detach; the length fits (max above).
        Ok(len) => unsafe {
            *size = len as c_int;
            MPI_SUCCESS
        },
        Err(rc) => rc,
    }
}

/// # Safety
/// `size` is NULL or points to an MPI_Count.
unsafe fn detach_count(func: &str, owner: Owner, err_comm: MPI_Comm, buffer_addr: *mut c_void, size: *mut MPI_Count) -> c_int {
    // SAFETY: forwarded caller pointers.
    match unsafe { detach(func, owner, err_comm, buffer_addr, size.is_null(), isize::MAX as usize) } {
        // SAFETY: checked non-null by detach.
        Ok(len) => unsafe {
            *size = len as MPI_Count;
            MPI_SUCCESS
        },
        Err(rc) => rc,
    }
}

/// Blocks until `owner`'s buffer holds no pending message (`MPI_Buffer_flush`).
fn flush(owner: Owner) -> c_int {
    runtime::wait_until(|rt| rt.engine.buffer_idle(owner));
    MPI_SUCCESS
}

fn iflush(func: &str, owner: Owner, err_comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    if request.is_null() {
        return raise(err_comm, func, MPI_ERR_ARG, "request is NULL");
    }
    let rid = runtime::with(|rt| rt.engine.buffer_iflush(owner));
    // SAFETY: checked non-null.
    unsafe { *request = request_handle(rid) };
    MPI_SUCCESS
}

/// Detaches `comm`'s buffer, if any, when the communicator is freed (MPI 4.1 §3.6.1:
/// waiting for its pending messages first), so a later communicator that gets the same
/// context id starts without one.
pub fn detach_on_free(ctx: u32) {
    runtime::wait_until(|rt| rt.engine.buffer_idle(Some(ctx)));
    runtime::with(|rt| rt.engine.buffer_detach(Some(ctx)));
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Buffer_attach(buffer: *mut c_void, size: c_int) -> c_int {
    require_init!("MPI_Buffer_attach");
    attach("MPI_Buffer_attach", None, MPI_COMM_WORLD, buffer, size.into())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Buffer_attach_c(buffer: *mut c_void, size: MPI_Count) -> c_int {
    require_init!("MPI_Buffer_attach_c");
    attach("MPI_Buffer_attach_c", None, MPI_COMM_WORLD, buffer, size)
}

/// `MPI_Buffer_detach`: the int form cannot report a buffer of more than `INT_MAX` bytes;
/// it then fails with MPI_ERR_VALUE_TOO_LARGE and leaves the buffer attached.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    require_init!("MPI_Buffer_detach");
    // SAFETY: forwarded caller pointers.
    unsafe { detach_int("MPI_Buffer_detach", None, MPI_COMM_WORLD, buffer_addr, size) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Buffer_detach_c(buffer_addr: *mut c_void, size: *mut MPI_Count) -> c_int {
    require_init!("MPI_Buffer_detach_c");
    // SAFETY: forwarded caller pointers.
    unsafe { detach_count("MPI_Buffer_detach_c", None, MPI_COMM_WORLD, buffer_addr, size) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Buffer_flush() -> c_int {
    require_init!("MPI_Buffer_flush");
    flush(None)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Buffer_iflush(request: *mut MPI_Request) -> c_int {
    require_init!("MPI_Buffer_iflush");
    iflush("MPI_Buffer_iflush", None, MPI_COMM_WORLD, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_attach_buffer(comm: MPI_Comm, buffer: *mut c_void, size: c_int) -> c_int {
    let func = "MPI_Comm_attach_buffer";
    require_init!(func);
    comm_owner(func, comm).map_or_else(|rc| rc, |owner| attach(func, owner, comm, buffer, size.into()))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_attach_buffer_c(comm: MPI_Comm, buffer: *mut c_void, size: MPI_Count) -> c_int {
    let func = "MPI_Comm_attach_buffer_c";
    require_init!(func);
    comm_owner(func, comm).map_or_else(|rc| rc, |owner| attach(func, owner, comm, buffer, size))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_detach_buffer(comm: MPI_Comm, buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    let func = "MPI_Comm_detach_buffer";
    require_init!(func);
    // SAFETY: forwarded caller pointers.
    comm_owner(func, comm).map_or_else(|rc| rc, |owner| unsafe { detach_int(func, owner, comm, buffer_addr, size) })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_detach_buffer_c(comm: MPI_Comm, buffer_addr: *mut c_void, size: *mut MPI_Count) -> c_int {
    let func = "MPI_Comm_detach_buffer_c";
    require_init!(func);
    // SAFETY: forwarded caller pointers.
    comm_owner(func, comm).map_or_else(|rc| rc, |owner| unsafe { detach_count(func, owner, comm, buffer_addr, size) })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_flush_buffer(comm: MPI_Comm) -> c_int {
    let func = "MPI_Comm_flush_buffer";
    require_init!(func);
    comm_owner(func, comm).map_or_else(|rc| rc, flush)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_iflush_buffer(comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    let func = "MPI_Comm_iflush_buffer";
    require_init!(func);
    comm_owner(func, comm).map_or_else(|rc| rc, |owner| iflush(func, owner, comm, request))
}
