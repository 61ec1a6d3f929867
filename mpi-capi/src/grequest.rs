//! Generalized requests (`MPI_Grequest_start`, `MPI_Grequest_complete`): operations the
//! program runs itself, then waits for and tests like any request. The engine holds such a
//! request (`Op::Generalized`), pending until `MPI_Grequest_complete`; this module holds
//! its three callbacks, which the request functions call:
//! - `query_fn` fills the status when a Wait/Test of any form completes the request, and
//!   for `MPI_Request_get_status`;
//! - `free_fn` right after that query, or for a request the program freed
//!   (`MPI_Request_free`): then, or at `MPI_Grequest_complete` if it was still pending;
//! - `cancel_fn` on `MPI_Cancel`, told whether the request is complete.
//!
//! `query_fn` and `free_fn` run inside the MPI call that completes or frees the request, so
//! they may use the status functions (`MPI_Status_set_elements`, `..._set_cancelled`) and
//! plain computation, but not MPI calls that communicate (those stop the job with a message
//! saying so: see `runtime`). `cancel_fn` runs outside and may call `MPI_Grequest_complete`.

use crate::abi::*;
use crate::errors::raise;
use crate::handles::{request_handle, request_id};
use crate::p2p_args::status_bytes;
use mpi_core::error::ErrorClass;
use mpi_core::request::{ReqId, Status};
use mpi_core::runtime;
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard};

/// What `MPI_Grequest_start` was given.
#[derive(Clone, Copy)]
struct Callbacks {
    query: MPI_Grequest_query_function,
    free: MPI_Grequest_free_function,
    cancel: MPI_Grequest_cancel_function,
    extra: *mut c_void,
}

// SAFETY: `extra` is the program's pointer, only ever handed back to its own callbacks.
unsafe impl Send for Callbacks {}

/// Callbacks of the live generalized requests, by request id. Entries are added and
/// removed inside the runtime's critical section (`runtime::with`), so an id is never
/// reused by the engine while its entry here is stale.
static TABLE: LazyLock<Mutex<HashMap<ReqId, Callbacks>>> = LazyLock::new(Default::default);

/// How many entries `TABLE` has: the request functions look no further while it is 0.
static LIVE: AtomicUsize = AtomicUsize::new(0);

fn table() -> MutexGuard<'static, HashMap<ReqId, Callbacks>> {
    TABLE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether any generalized request exists (one load on the paths that finish requests).
#[inline]
pub fn any() -> bool {
    LIVE.load(Ordering::Relaxed) != 0
}

fn take(rid: ReqId) -> Option<Callbacks> {
    let cb = table().remove(&rid)?;
    LIVE.fetch_sub(1, Ordering::Relaxed);
    Some(cb)
}

/// Request `rid` was just finished by a Wait/Test (inside `runtime::with`): if it is a
/// generalized request, `st` becomes what its `query_fn` says, then `free_fn` runs; an
/// error code of either lands in `st.error`.
pub fn finished(rid: ReqId, st: &mut Status) {
    let Some(cb) = take(rid) else { return };
    *st = query(&cb);
    let rc = call_free(&cb);
    if rc != MPI_SUCCESS && st.error.is_none() {
        st.error = Some(ErrorClass::from_code(rc));
    }
}

/// `MPI_Request_get_status` of complete request `rid`: its `query_fn`'s status if it is a
/// generalized request (which stays until waited for or freed).
pub fn peek(rid: ReqId) -> Option<Status> {
    let cb = *table().get(&rid)?;
    Some(query(&cb))
}

/// Generalized request `rid` is gone (freed by the program, and complete): runs `free_fn`.
pub fn released(rid: ReqId) {
    if let Some(cb) = take(rid) {
        call_free(&cb);
    }
}

/// `MPI_Cancel` of request `rid`: the cancel callback and its arguments if `rid` is a
/// generalized request, for the caller to run outside the critical section.
pub fn cancel_of(rid: ReqId) -> Option<(MPI_Grequest_cancel_function, *mut c_void)> {
    table().get(&rid).map(|cb| (cb.cancel, cb.extra))
}

/// Runs `cancel_fn(extra, complete)`; its error code.
pub fn call_cancel(f: MPI_Grequest_cancel_function, extra: *mut c_void, complete: bool) -> c_int {
    // SAFETY: the program's callback with its own extra state, as MPI_Grequest_start got them.
    f.map_or(MPI_SUCCESS, |f| unsafe { f(extra, complete as c_int) })
}

fn query(cb: &Callbacks) -> Status {
    let mut s = MPI_Status { count_lo: 0, count_hi_and_cancelled: 0, MPI_SOURCE: MPI_UNDEFINED, MPI_TAG: MPI_UNDEFINED, MPI_ERROR: MPI_SUCCESS };
    // SAFETY: the program's callback with its own extra state and a status to fill.
    let rc = cb.query.map_or(MPI_SUCCESS, |f| unsafe { f(cb.extra, &mut s) });
    Status {
        source: s.MPI_SOURCE,
        tag: s.MPI_TAG,
        bytes: status_bytes(&s) as usize,
        cancelled: s.count_hi_and_cancelled & 1 != 0,
        error: (rc != MPI_SUCCESS).then(|| ErrorClass::from_code(rc)),
        send: false,
    }
}

fn call_free(cb: &Callbacks) -> c_int {
    // SAFETY: the program's callback with its own extra state.
    cb.free.map_or(MPI_SUCCESS, |f| unsafe { f(cb.extra) })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Grequest_start(
    query_fn: MPI_Grequest_query_function,
    free_fn: MPI_Grequest_free_function,
    cancel_fn: MPI_Grequest_cancel_function,
    extra_state: *mut c_void,
    request: *mut MPI_Request,
) -> c_int {
    const F: &str = "MPI_Grequest_start";
    require_init!(F);
    if request.is_null() {
        return raise(MPI_COMM_WORLD, F, MPI_ERR_ARG, "request is NULL");
    }
    let cb = Callbacks { query: query_fn, free: free_fn, cancel: cancel_fn, extra: extra_state };
    let rid = runtime::with(|rt| {
        let rid = rt.engine.grequest_start();
        table().insert(rid, cb);
        LIVE.fetch_add(1, Ordering::Relaxed);
        rid
    });
    // SAFETY: checked non-null; the caller passes an MPI_Request.
    unsafe { *request = request_handle(rid) };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Grequest_complete(request: MPI_Request) -> c_int {
    const F: &str = "MPI_Grequest_complete";
    require_init!(F);
    let Some(rid) = request_id(request).filter(|_| request != MPI_REQUEST_NULL) else {
        return raise(MPI_COMM_WORLD, F, MPI_ERR_REQUEST, format!("invalid request handle {request:#x}"));
    };
    // A request the program freed while pending is gone now: its free callback is due.
    let r = runtime::with(|rt| rt.engine.grequest_complete(rid).map(|freed| freed.then(|| take(rid)).flatten()));
    match r {
        Ok(Some(cb)) => {
            call_free(&cb);
            MPI_SUCCESS
        }
        Ok(None) => MPI_SUCCESS,
        Err(e) => raise(MPI_COMM_WORLD, F, MPI_ERR_REQUEST, format!("request {request:#x}: {}", e.msg)),
    }
}
