//! Buffers for buffered sends (MPI 4.1 §3.6): the process's (`MPI_Buffer_attach`), a
//! session's (`MPI_Session_attach_buffer`: for communicators derived from the session) and
//! a communicator's (`MPI_Comm_attach_buffer`, which takes precedence over both), their
//! detach and flush calls, and `MPI_BUFFER_AUTOMATIC` (the engine copies each message into
//! memory of its own). The engine keeps the buffers (`mpi_core::bsend`).

use crate::abi::*;
use crate::errors::raise;
use crate::handles::{request_handle, session_index};
use crate::p2p_args::comm_of;
use mpi_core::bsend::Owner;
use mpi_core::runtime;
use std::os::raw::{c_int, c_void};

/// `MPI_BUFFER_AUTOMATIC` (mpi.h): MPICH 4.2's value (mpi4py's binary wheel, built against
/// MPICH, compares detached buffers with `(void *)-2`).
pub const BUFFER_AUTOMATIC: *mut c_void = usize::MAX.wrapping_sub(1) as *mut c_void;

/// Where a buffer call reports an error: a communicator's error handler or a session's.
#[derive(Clone, Copy)]
enum ErrTo {
    Comm(MPI_Comm),
    Session(MPI_Session),
}

impl ErrTo {
    fn raise(self, func: &str, class: c_int, msg: impl Into<String>) -> c_int {
        match self {
            ErrTo::Comm(c) => raise(c, func, class, msg),
            ErrTo::Session(s) => crate::session::raise_session(s, func, class, msg),
        }
    }
}

const WORLD: ErrTo = ErrTo::Comm(MPI_COMM_WORLD);

/// The buffer owner of `comm` (its context id), or the error raised.
fn comm_owner(func: &str, comm: MPI_Comm) -> Result<Owner, c_int> {
    runtime::with(|rt| comm_of(rt, comm).map(|c| Owner::Comm(c.ctx))).map_err(|(class, msg)| raise(MPI_COMM_WORLD, func, class, msg))
}

/// The buffer owner of `session`, or the error raised.
fn session_owner(func: &str, session: MPI_Session) -> Result<Owner, c_int> {
    crate::session::check(session, func)?;
    Ok(Owner::Session(session_index(session).unwrap_or(0) as u32))
}

fn attach(func: &str, owner: Owner, err: ErrTo, buffer: *mut c_void, size: MPI_Count) -> c_int {
    let automatic = buffer == BUFFER_AUTOMATIC;
    if !automatic && (size < 0 || (buffer.is_null() && size > 0) || size > isize::MAX as MPI_Count) {
        return err.raise(func, MPI_ERR_BUFFER, format!("invalid buffer (pointer {buffer:?}, size {size})"));
    }
    match runtime::with(|rt| rt.engine.buffer_attach(owner, buffer as *mut u8, size.max(0) as usize, automatic)) {
        Ok(()) => MPI_SUCCESS,
        Err(e) => err.raise(func, e.class as c_int, e.msg),
    }
}

/// Detaches `owner`'s buffer once its pending buffered sends are done and stores its
/// address in `*buffer_addr` (`MPI_BUFFER_AUTOMATIC` for an automatic one; NULL and size 0
/// when none is attached); returns its size, at most `max` bytes (a larger buffer stays
/// attached: MPI_ERR_VALUE_TOO_LARGE).
///
/// # Safety
/// `buffer_addr` is NULL or points to a `void *`.
unsafe fn detach(func: &str, owner: Owner, err: ErrTo, buffer_addr: *mut c_void, size_null: bool, max: usize) -> Result<usize, c_int> {
    if buffer_addr.is_null() || size_null {
        return Err(err.raise(func, MPI_ERR_ARG, "buffer_addr or size is NULL"));
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
    .map_err(|len| err.raise(func, MPI_ERR_VALUE_TOO_LARGE, format!("the attached buffer has {len} bytes, more than an int holds; use the _c form of this call")))?;
    // SAFETY: buffer_addr points to a `void *` per the standard.
    unsafe { *(buffer_addr as *mut *mut c_void) = base };
    Ok(len)
}

/// # Safety
/// `size` is NULL or points to an int.
unsafe fn detach_int(func: &str, owner: Owner, err: ErrTo, buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    // SAFETY: forwarded caller pointers.
    match unsafe { detach(func, owner, err, buffer_addr, size.is_null(), c_int::MAX as usize) } {
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
unsafe fn detach_count(func: &str, owner: Owner, err: ErrTo, buffer_addr: *mut c_void, size: *mut MPI_Count) -> c_int {
    // SAFETY: forwarded caller pointers.
    match unsafe { detach(func, owner, err, buffer_addr, size.is_null(), isize::MAX as usize) } {
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

fn iflush(func: &str, owner: Owner, err: ErrTo, request: *mut MPI_Request) -> c_int {
    if request.is_null() {
        return err.raise(func, MPI_ERR_ARG, "request is NULL");
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
    detach_owner(Owner::Comm(ctx));
}

/// Detaches `owner`'s buffer, if any, once its pending messages are gone (a freed
/// communicator's, a finalized session's).
pub fn detach_owner(owner: Owner) {
    runtime::wait_until(|rt| rt.engine.buffer_idle(owner));
    runtime::with(|rt| rt.engine.buffer_detach(owner));
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Buffer_attach(buffer: *mut c_void, size: c_int) -> c_int {
    require_init!("MPI_Buffer_attach");
    attach("MPI_Buffer_attach", Owner::Process, WORLD, buffer, size.into())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Buffer_attach_c(buffer: *mut c_void, size: MPI_Count) -> c_int {
    require_init!("MPI_Buffer_attach_c");
    attach("MPI_Buffer_attach_c", Owner::Process, WORLD, buffer, size)
}

/// `MPI_Buffer_detach`: the int form cannot report a buffer of more than `INT_MAX` bytes;
/// it then fails with MPI_ERR_VALUE_TOO_LARGE and leaves the buffer attached.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Buffer_detach(buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    require_init!("MPI_Buffer_detach");
    // SAFETY: forwarded caller pointers.
    unsafe { detach_int("MPI_Buffer_detach", Owner::Process, WORLD, buffer_addr, size) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Buffer_detach_c(buffer_addr: *mut c_void, size: *mut MPI_Count) -> c_int {
    require_init!("MPI_Buffer_detach_c");
    // SAFETY: forwarded caller pointers.
    unsafe { detach_count("MPI_Buffer_detach_c", Owner::Process, WORLD, buffer_addr, size) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Buffer_flush() -> c_int {
    require_init!("MPI_Buffer_flush");
    flush(Owner::Process)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Buffer_iflush(request: *mut MPI_Request) -> c_int {
    require_init!("MPI_Buffer_iflush");
    iflush("MPI_Buffer_iflush", Owner::Process, WORLD, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_attach_buffer(comm: MPI_Comm, buffer: *mut c_void, size: c_int) -> c_int {
    let func = "MPI_Comm_attach_buffer";
    require_init!(func);
    comm_owner(func, comm).map_or_else(|rc| rc, |owner| attach(func, owner, ErrTo::Comm(comm), buffer, size.into()))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_attach_buffer_c(comm: MPI_Comm, buffer: *mut c_void, size: MPI_Count) -> c_int {
    let func = "MPI_Comm_attach_buffer_c";
    require_init!(func);
    comm_owner(func, comm).map_or_else(|rc| rc, |owner| attach(func, owner, ErrTo::Comm(comm), buffer, size))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_detach_buffer(comm: MPI_Comm, buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    let func = "MPI_Comm_detach_buffer";
    require_init!(func);
    // SAFETY: forwarded caller pointers.
    comm_owner(func, comm).map_or_else(|rc| rc, |owner| unsafe { detach_int(func, owner, ErrTo::Comm(comm), buffer_addr, size) })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_detach_buffer_c(comm: MPI_Comm, buffer_addr: *mut c_void, size: *mut MPI_Count) -> c_int {
    let func = "MPI_Comm_detach_buffer_c";
    require_init!(func);
    // SAFETY: forwarded caller pointers.
    comm_owner(func, comm).map_or_else(|rc| rc, |owner| unsafe { detach_count(func, owner, ErrTo::Comm(comm), buffer_addr, size) })
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
    comm_owner(func, comm).map_or_else(|rc| rc, |owner| iflush(func, owner, ErrTo::Comm(comm), request))
}

// Sessions' buffers (MPI 4.1 §3.6.1): used by the communicators derived from the session
// that have no buffer of their own; detached by MPI_Session_finalize.

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_attach_buffer(session: MPI_Session, buffer: *mut c_void, size: c_int) -> c_int {
    let func = "MPI_Session_attach_buffer";
    session_owner(func, session).map_or_else(|rc| rc, |owner| attach(func, owner, ErrTo::Session(session), buffer, size.into()))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_attach_buffer_c(session: MPI_Session, buffer: *mut c_void, size: MPI_Count) -> c_int {
    let func = "MPI_Session_attach_buffer_c";
    session_owner(func, session).map_or_else(|rc| rc, |owner| attach(func, owner, ErrTo::Session(session), buffer, size))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_detach_buffer(session: MPI_Session, buffer_addr: *mut c_void, size: *mut c_int) -> c_int {
    let func = "MPI_Session_detach_buffer";
    // SAFETY: forwarded caller pointers.
    session_owner(func, session).map_or_else(|rc| rc, |owner| unsafe { detach_int(func, owner, ErrTo::Session(session), buffer_addr, size) })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_detach_buffer_c(session: MPI_Session, buffer_addr: *mut c_void, size: *mut MPI_Count) -> c_int {
    let func = "MPI_Session_detach_buffer_c";
    // SAFETY: forwarded caller pointers.
    session_owner(func, session).map_or_else(|rc| rc, |owner| unsafe { detach_count(func, owner, ErrTo::Session(session), buffer_addr, size) })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_flush_buffer(session: MPI_Session) -> c_int {
    session_owner("MPI_Session_flush_buffer", session).map_or_else(|rc| rc, flush)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_iflush_buffer(session: MPI_Session, request: *mut MPI_Request) -> c_int {
    let func = "MPI_Session_iflush_buffer";
    session_owner(func, session).map_or_else(|rc| rc, |owner| iflush(func, owner, ErrTo::Session(session), request))
}
