//! Completion of requests: the Wait/Test families, Start, Cancel, Request_free and
//! Request_get_status, and the status queries (Get_count, Get_elements, Test_cancelled).

use crate::abi::*;
use crate::errors::{raise};
use crate::handles::request_id;
use crate::p2p_args::{empty_status, status_bytes, write_status};
use mpi_core::request::{Op, ReqId, State, Status};
use mpi_core::runtime::{self, Runtime};
use std::os::raw::c_int;

/// Blocks until request `rid` is complete.
pub fn wait_request(rid: ReqId) {
    runtime::wait_until(|rt| rt.engine.reqs.get(rid).is_none_or(|r| r.is_complete()));
}

/// Blocks until request `rid` is complete and finishes it in the same critical section
/// (see `finish`), returning its status.
pub fn wait_finish(rid: ReqId) -> Status {
    let mut st = None;
    runtime::wait_until(|rt| {
        if is_complete(rt, rid) {
            st = Some(finish(rt, rid));
            true
        } else {
            false
        }
    });
    st.expect("wait_until returns once done")
}

/// Takes the status of completed request `rid`; a non-persistent request is released, a
/// persistent one becomes inactive.
pub fn finish(rt: &mut Runtime, rid: ReqId) -> Status {
    release(rt, rid).0
}

/// `finish`, also returning the communicator the request reports errors on and whether
/// it was released (one table lookup for all three).
#[inline]
fn release(rt: &mut Runtime, rid: ReqId) -> (Status, MPI_Comm, bool) {
    let (st, owner, persistent) = finish_entry(rt, rid).expect("finished request exists");
    (st, owner as MPI_Comm, !persistent)
}

/// The engine's `finish` of request `rid`, plus a generalized request's callbacks (its
/// status is what its query callback says).
#[inline]
fn finish_entry(rt: &mut Runtime, rid: ReqId) -> Option<(Status, i64, bool)> {
    let (mut st, owner, persistent) = rt.engine.reqs.finish(rid)?;
    if crate::grequest::any() {
        crate::grequest::finished(rid, &mut st);
    }
    if crate::fortran_sections::any() {
        crate::fortran_sections::finished(rid, persistent);
    }
    Some((st, owner, persistent))
}

/// Raises the error recorded in a completed operation's status. The engine completes
/// requests with MPI_ERR_OTHER only for short messages (`partitioned.rs`, `coll/stepping.rs`).
pub fn complete_error(comm: MPI_Comm, func: &str, class: c_int, st: &Status) -> c_int {
    let msg = match class {
        MPI_ERR_TRUNCATE => format!(
            "message from rank {} with tag {} does not fit the receive ({} bytes taken): larger than the buffer, or ending inside a basic element of the receive datatype (the send's type signature differs)",
            st.source, st.tag, st.bytes
        ),
        MPI_ERR_OTHER => format!(
            "fewer bytes arrived than the receive expected ({} bytes): a partitioned send smaller than its receive, or ranks of a collective that disagree on counts or datatypes",
            st.bytes
        ),
        _ => "operation failed".to_string(),
    };
    raise(comm, func, class, msg)
}

/// What a request handle refers to right now.
enum Slot {
    /// MPI_REQUEST_NULL or an inactive persistent request: counts as complete, empty status.
    Null,
    Active(ReqId),
}

/// Why a handle is not a usable request (kept small: `slot` sits on the hot path of every
/// wait and test; the message is only formatted when an error is raised).
enum BadHandle {
    Foreign(MPI_Request),
    Gone(MPI_Request),
    Message(MPI_Request),
}

impl From<BadHandle> for String {
    #[cold]
    fn from(b: BadHandle) -> String {
        match b {
            BadHandle::Foreign(h) => format!("invalid request handle {h:#x}"),
            BadHandle::Gone(h) => format!("request {h:#x} was already freed or completed"),
            BadHandle::Message(h) => format!("{h:#x} is a message handle, not a request"),
        }
    }
}

#[inline]
fn slot(rt: &Runtime, h: MPI_Request) -> Result<Slot, BadHandle> {
    if h == MPI_REQUEST_NULL {
        return Ok(Slot::Null);
    }
    let Some(rid) = request_id(h) else { return Err(BadHandle::Foreign(h)) };
    match rt.engine.reqs.get(rid) {
        None => Err(BadHandle::Gone(h)),
        Some(r) if r.state == State::Inactive => Ok(Slot::Null),
        Some(r) if r.state == State::Message => Err(BadHandle::Message(h)),
        Some(_) => Ok(Slot::Active(rid)),
    }
}

pub fn is_complete(rt: &Runtime, rid: ReqId) -> bool {
    rt.engine.reqs.get(rid).is_none_or(|r| r.is_complete())
}

/// Finishes `reqs[i]`: status out, handle nulled unless persistent. Returns (status, comm).
#[inline]
fn finish_handle(rt: &mut Runtime, h: &mut MPI_Request, rid: ReqId) -> (Status, MPI_Comm) {
    let (st, comm, released) = release(rt, rid);
    if released {
        *h = MPI_REQUEST_NULL;
    }
    (st, comm)
}

/// The `n` requests at `p` of a multiple-completion call (`MPI_Waitall`, ..., `MPI_Startall`),
/// or the error it raises: a negative count is `MPI_ERR_COUNT` and a NULL array with a
/// positive count `MPI_ERR_ARG` (as MPICH), not an empty list.
///
/// # Safety
/// `p` must point to `n` elements (or n == 0).
unsafe fn requests_arg<'a>(func: &str, p: *mut MPI_Request, n: c_int) -> Result<&'a mut [MPI_Request], c_int> {
    if n < 0 {
        return Err(raise(MPI_COMM_WORLD, func, MPI_ERR_COUNT, format!("negative count {n} of requests")));
    }
    if n == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, format!("array_of_requests is NULL with a count of {n}")));
    }
    // SAFETY: per the function contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n as usize) })
}

/// # Safety
/// `statuses` is MPI_STATUSES_IGNORE or points to at least i+1 statuses.
unsafe fn status_at(statuses: *mut MPI_Status, i: usize) -> *mut MPI_Status {
    if statuses.is_null() || statuses as usize == 1 {
        return statuses;
    }
    // SAFETY: per the function contract.
    unsafe { statuses.add(i) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> c_int {
    require_init!("MPI_Wait");
    require_status!("MPI_Wait", MPI_COMM_WORLD, status);
    if request.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Wait", MPI_ERR_REQUEST, "request is NULL");
    }
    // SAFETY: checked non-null.
    let h = unsafe { &mut *request };
    let rid = match runtime::with(|rt| slot(rt, *h)) {
        Err(bad) => return raise(MPI_COMM_WORLD, "MPI_Wait", MPI_ERR_REQUEST, String::from(bad)),
        Ok(Slot::Null) => {
            // SAFETY: caller's status.
            unsafe { write_status(status, &empty_status(), None) };
            return MPI_SUCCESS;
        }
        Ok(Slot::Active(rid)) => rid,
    };
    wait_request(rid);
    let (st, comm) = runtime::with(|rt| finish_handle(rt, h, rid));
    // SAFETY: caller's status.
    unsafe { write_status(status, &st, None) };
    match st.error {
        Some(class) => complete_error(comm, "MPI_Wait", class as c_int, &st),
        None => MPI_SUCCESS,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Test(request: *mut MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
    require_init!("MPI_Test");
    require_status!("MPI_Test", MPI_COMM_WORLD, status);
    if request.is_null() || flag.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Test", MPI_ERR_ARG, "request or flag is NULL");
    }
    // SAFETY: checked non-null.
    let h = unsafe { &mut *request };
    let r = runtime::with(|rt| -> Result<Option<(Status, MPI_Comm)>, String> {
        match slot(rt, *h)? {
            Slot::Null => Ok(Some((empty_status(), MPI_COMM_WORLD))),
            Slot::Active(rid) => {
                if !is_complete(rt, rid) {
                    rt.progress();
                }
                Ok(is_complete(rt, rid).then(|| finish_handle(rt, h, rid)))
            }
        }
    });
    match r {
        Err(msg) => raise(MPI_COMM_WORLD, "MPI_Test", MPI_ERR_REQUEST, msg),
        Ok(None) => {
            // SAFETY: checked non-null.
            unsafe { *flag = 0 };
            runtime::polled(false);
            MPI_SUCCESS
        }
        Ok(Some((st, comm))) => {
            runtime::polled(true);
            // SAFETY: checked non-null; caller's status.
            unsafe {
                *flag = 1;
                write_status(status, &st, None);
            }
            match st.error {
                Some(class) => complete_error(comm, "MPI_Test", class as c_int, &st),
                None => MPI_SUCCESS,
            }
        }
    }
}

/// Validates an array of handles: Ok(per-entry request id or None for null/inactive).
fn slots(rt: &Runtime, hs: &[MPI_Request]) -> Result<Vec<Option<ReqId>>, String> {
    hs.iter()
        .map(|&h| {
            slot(rt, h).map_err(String::from).map(|s| match s {
                Slot::Null => None,
                Slot::Active(rid) => Some(rid),
            })
        })
        .collect()
}

/// Validates every handle of an array without collecting anything (Waitall/Testall decode
/// the handles again as they go).
fn check_slots(rt: &Runtime, hs: &[MPI_Request]) -> Result<(), String> {
    Ok(hs.iter().try_for_each(|&h| slot(rt, h).map(|_| ()))?)
}

/// Whether every entry from `*next` on is null, inactive or complete; `*next` advances
/// past the complete prefix.
#[inline]
fn all_complete(rt: &Runtime, hs: &[MPI_Request], next: &mut usize) -> bool {
    while let Some(&h) = hs.get(*next) {
        // One lookup: a valid handle (`check_slots` ran) names a request that is either
        // still pending or complete/inactive (both finish at once).
        let pending = request_id(h).filter(|_| h != MPI_REQUEST_NULL).and_then(|rid| rt.engine.reqs.get(rid)).is_some_and(|r| !r.is_complete() && r.state != State::Inactive);
        if pending {
            return false;
        }
        *next += 1;
    }
    true
}

/// Finishes every entry of an array that `all_complete` found complete: statuses at their
/// own index, empty ones for null and inactive entries. Returns the first error as
/// (comm, class).
fn finish_all(rt: &mut Runtime, hs: &mut [MPI_Request], statuses: *mut MPI_Status) -> Option<(MPI_Comm, c_int)> {
    let mut err = None;
    let ignored = statuses.is_null() || statuses as usize == 1;
    for (i, h) in hs.iter_mut().enumerate() {
        // `check_slots` validated the handles: decode and finish in one table lookup.
        let done = request_id(*h).filter(|_| *h != MPI_REQUEST_NULL).and_then(|rid| finish_entry(rt, rid));
        let (st, code) = match done {
            Some((st, owner, persistent)) => {
                if !persistent {
                    *h = MPI_REQUEST_NULL;
                }
                let code = st.error.map_or(MPI_SUCCESS, |c| c as c_int);
                if code != MPI_SUCCESS && err.is_none() {
                    err = Some((owner as MPI_Comm, code));
                }
                (st, code)
            }
            None => (empty_status(), MPI_SUCCESS),
        };
        if !ignored {
            // SAFETY: statuses has `count` entries.
            unsafe { write_status(statuses.add(i), &st, Some(code)) };
        }
    }
    err
}

/// Finishes every completed, active entry of `hs` (Waitsome/Testsome): statuses packed in
/// the order of `indices`, which gets their positions. Returns the first error as
/// (comm, class).
fn finish_completed(rt: &mut Runtime, hs: &mut [MPI_Request], ids: &[Option<ReqId>], statuses: *mut MPI_Status, indices: &mut Vec<usize>) -> Option<(MPI_Comm, c_int)> {
    let mut err = None;
    for (i, id) in ids.iter().enumerate() {
        let Some(rid) = *id else { continue };
        if !is_complete(rt, rid) {
            continue;
        }
        let (st, comm) = finish_handle(rt, &mut hs[i], rid);
        indices.push(i);
        let code = st.error.map_or(MPI_SUCCESS, |c| c as c_int);
        if code != MPI_SUCCESS && err.is_none() {
            err = Some((comm, code));
        }
        // SAFETY: statuses has room for every index (array functions' contract).
        unsafe { write_status(status_at(statuses, indices.len() - 1), &st, Some(code)) };
    }
    err
}

fn in_status_error(func: &str, err: Option<(MPI_Comm, c_int)>) -> c_int {
    match err {
        None => MPI_SUCCESS,
        Some((comm, class)) => raise(comm, func, MPI_ERR_IN_STATUS, format!("a request completed with error class {class}; see the MPI_ERROR field of each status")),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Waitall(count: c_int, array_of_requests: *mut MPI_Request, array_of_statuses: *mut MPI_Status) -> c_int {
    require_init!("MPI_Waitall");
    require_status!("MPI_Waitall", MPI_COMM_WORLD, array_of_statuses, count);
    // SAFETY: the caller passes `count` requests.
    let hs = match unsafe { requests_arg("MPI_Waitall", array_of_requests, count) } {
        Ok(hs) => hs,
        Err(rc) => return rc,
    };
    // One critical section validates and, when everything is already complete (often, as
    // the caller polled before), finishes; otherwise wait. Requests only ever become
    // complete, so the scan resumes at the first one still pending: amortised O(count)
    // over the whole wait, not per poll. No allocation: handles are decoded as we go.
    let mut next = 0;
    let mut err = None;
    let mut invalid = None;
    let mut checked = false;
    let mut step = |rt: &mut Runtime| {
        if !checked {
            checked = true;
            if let Err(msg) = check_slots(rt, hs) {
                invalid = Some(msg);
                return true;
            }
        }
        if all_complete(rt, hs, &mut next) {
            err = finish_all(rt, hs, array_of_statuses);
            true
        } else {
            false
        }
    };
    if !runtime::with(&mut step) {
        runtime::wait_until(step);
    }
    if let Some(msg) = invalid {
        return raise(MPI_COMM_WORLD, "MPI_Waitall", MPI_ERR_REQUEST, msg);
    }
    in_status_error("MPI_Waitall", err)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Testall(count: c_int, array_of_requests: *mut MPI_Request, flag: *mut c_int, array_of_statuses: *mut MPI_Status) -> c_int {
    require_init!("MPI_Testall");
    require_status!("MPI_Testall", MPI_COMM_WORLD, array_of_statuses, count);
    if flag.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Testall", MPI_ERR_ARG, "flag is NULL");
    }
    // SAFETY: the caller passes `count` requests.
    let hs = match unsafe { requests_arg("MPI_Testall", array_of_requests, count) } {
        Ok(hs) => hs,
        Err(rc) => return rc,
    };
    let r = runtime::with(|rt| -> Result<Option<Option<(MPI_Comm, c_int)>>, String> {
        check_slots(rt, hs)?;
        rt.progress();
        if !all_complete(rt, hs, &mut 0) {
            return Ok(None);
        }
        Ok(Some(finish_all(rt, hs, array_of_statuses)))
    });
    match r {
        Err(msg) => raise(MPI_COMM_WORLD, "MPI_Testall", MPI_ERR_REQUEST, msg),
        Ok(None) => {
            // SAFETY: checked non-null.
            unsafe { *flag = 0 };
            runtime::polled(false);
            MPI_SUCCESS
        }
        Ok(Some(err)) => {
            runtime::polled(true);
            // SAFETY: checked non-null.
            unsafe { *flag = 1 };
            in_status_error("MPI_Testall", err)
        }
    }
}

/// Shared by Waitany/Testany: finishes the first complete entry, if any.
fn any_complete(rt: &mut Runtime, hs: &mut [MPI_Request], ids: &[Option<ReqId>]) -> Option<(usize, Status, MPI_Comm)> {
    let i = ids.iter().position(|id| id.is_some_and(|rid| is_complete(rt, rid)))?;
    let (st, comm) = finish_handle(rt, &mut hs[i], ids[i].unwrap());
    Some((i, st, comm))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Waitany(count: c_int, array_of_requests: *mut MPI_Request, index: *mut c_int, status: *mut MPI_Status) -> c_int {
    require_init!("MPI_Waitany");
    require_status!("MPI_Waitany", MPI_COMM_WORLD, status);
    if index.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Waitany", MPI_ERR_ARG, "index is NULL");
    }
    // SAFETY: the caller passes `count` requests.
    let hs = match unsafe { requests_arg("MPI_Waitany", array_of_requests, count) } {
        Ok(hs) => hs,
        Err(rc) => return rc,
    };
    let ids = match runtime::with(|rt| slots(rt, hs)) {
        Ok(ids) => ids,
        Err(msg) => return raise(MPI_COMM_WORLD, "MPI_Waitany", MPI_ERR_REQUEST, msg),
    };
    if ids.iter().all(|id| id.is_none()) {
        // SAFETY: checked non-null; caller's status.
        unsafe {
            *index = MPI_UNDEFINED;
            write_status(status, &empty_status(), None);
        }
        return MPI_SUCCESS;
    }
    let mut found = None;
    runtime::wait_until(|rt| {
        found = any_complete(rt, hs, &ids);
        found.is_some()
    });
    let (i, st, comm) = found.unwrap();
    // SAFETY: checked non-null; caller's status.
    unsafe {
        *index = i as c_int;
        write_status(status, &st, None);
    }
    match st.error {
        Some(class) => complete_error(comm, "MPI_Waitany", class as c_int, &st),
        None => MPI_SUCCESS,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Testany(count: c_int, array_of_requests: *mut MPI_Request, index: *mut c_int, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
    require_init!("MPI_Testany");
    require_status!("MPI_Testany", MPI_COMM_WORLD, status);
    if index.is_null() || flag.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Testany", MPI_ERR_ARG, "index or flag is NULL");
    }
    // SAFETY: the caller passes `count` requests.
    let hs = match unsafe { requests_arg("MPI_Testany", array_of_requests, count) } {
        Ok(hs) => hs,
        Err(rc) => return rc,
    };
    let r = runtime::with(|rt| -> Result<(bool, Option<(usize, Status, MPI_Comm)>), String> {
        let ids = slots(rt, hs)?;
        if ids.iter().all(|id| id.is_none()) {
            return Ok((true, None));
        }
        rt.progress();
        Ok((false, any_complete(rt, hs, &ids)))
    });
    match r {
        Err(msg) => raise(MPI_COMM_WORLD, "MPI_Testany", MPI_ERR_REQUEST, msg),
        Ok((all_null, found)) => {
            // SAFETY: checked non-null pointers; caller's status.
            unsafe {
                *flag = (all_null || found.is_some()) as c_int;
                *index = MPI_UNDEFINED;
                if all_null {
                    write_status(status, &empty_status(), None);
                }
            }
            match found {
                Some((i, st, comm)) => {
                    runtime::polled(true);
                    // SAFETY: as above.
                    unsafe {
                        *index = i as c_int;
                        write_status(status, &st, None);
                    }
                    match st.error {
                        Some(class) => complete_error(comm, "MPI_Testany", class as c_int, &st),
                        None => MPI_SUCCESS,
                    }
                }
                None => {
                    runtime::polled(all_null);
                    MPI_SUCCESS
                }
            }
        }
    }
}

fn some_impl(func: &str, incount: c_int, array_of_requests: *mut MPI_Request, outcount: *mut c_int, indices: *mut c_int, statuses: *mut MPI_Status, block: bool) -> c_int {
    if outcount.is_null() || (incount > 0 && indices.is_null()) {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "outcount or array_of_indices is NULL");
    }
    // SAFETY: the caller passes `incount` requests.
    let hs = match unsafe { requests_arg(func, array_of_requests, incount) } {
        Ok(hs) => hs,
        Err(rc) => return rc,
    };
    let ids = match runtime::with(|rt| slots(rt, hs)) {
        Ok(ids) => ids,
        Err(msg) => return raise(MPI_COMM_WORLD, func, MPI_ERR_REQUEST, msg),
    };
    if ids.iter().all(|id| id.is_none()) {
        // SAFETY: checked non-null.
        unsafe { *outcount = MPI_UNDEFINED };
        return MPI_SUCCESS;
    }
    let mut done = Vec::new();
    let mut err = None;
    let mut step = |rt: &mut Runtime| {
        if ids.iter().flatten().any(|&rid| is_complete(rt, rid)) {
            err = finish_completed(rt, hs, &ids, statuses, &mut done);
            true
        } else {
            false
        }
    };
    if block {
        runtime::wait_until(&mut step);
    } else {
        runtime::polled(runtime::with(|rt| {
            rt.progress();
            step(rt)
        }));
    }
    // SAFETY: checked non-null; indices has room for incount entries.
    unsafe {
        *outcount = done.len() as c_int;
        for (k, &i) in done.iter().enumerate() {
            *indices.add(k) = i as c_int;
        }
    }
    in_status_error(func, err)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Waitsome(incount: c_int, array_of_requests: *mut MPI_Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut MPI_Status) -> c_int {
    require_init!("MPI_Waitsome");
    require_status!("MPI_Waitsome", MPI_COMM_WORLD, array_of_statuses, incount);
    some_impl("MPI_Waitsome", incount, array_of_requests, outcount, array_of_indices, array_of_statuses, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Testsome(incount: c_int, array_of_requests: *mut MPI_Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut MPI_Status) -> c_int {
    require_init!("MPI_Testsome");
    require_status!("MPI_Testsome", MPI_COMM_WORLD, array_of_statuses, incount);
    some_impl("MPI_Testsome", incount, array_of_requests, outcount, array_of_indices, array_of_statuses, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_free(request: *mut MPI_Request) -> c_int {
    require_init!("MPI_Request_free");
    if request.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Request_free", MPI_ERR_ARG, "request is NULL");
    }
    // SAFETY: checked non-null.
    let h = unsafe { &mut *request };
    let r = runtime::with(|rt| -> Result<(), String> {
        let rid = request_id(*h).ok_or_else(|| format!("invalid request handle {:#x}", *h))?;
        if let Some(msg) = crate::partitioned::busy(rt, rid, "free") {
            return Err(msg);
        }
        rt.engine.part_free(rid);
        let r = rt.engine.reqs.get_mut(rid).ok_or_else(|| format!("request {:#x} does not exist", *h))?;
        if r.persistent && matches!(r.op, Op::Coll) {
            crate::coll::forget_persistent(rid);
        }
        let active = !matches!(r.state, State::Complete | State::Inactive | State::Message);
        let complete = r.state == State::Complete;
        if !active {
            rt.engine.reqs.discard(rid);
            if crate::grequest::any() {
                crate::grequest::released(rid);
            }
        } else {
            // Pending: released by the engine when it completes.
            r.freed = true;
        }
        if crate::fortran_sections::any() {
            if active {
                rt.engine.freed_hook = Some(crate::fortran_sections::freed_completed);
            }
            crate::fortran_sections::released(rid, active, complete);
        }
        Ok(())
    });
    match r {
        Ok(()) => {
            *h = MPI_REQUEST_NULL;
            MPI_SUCCESS
        }
        Err(msg) => raise(MPI_COMM_WORLD, "MPI_Request_free", MPI_ERR_REQUEST, msg),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_get_status(request: MPI_Request, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
    require_init!("MPI_Request_get_status");
    require_status!("MPI_Request_get_status", MPI_COMM_WORLD, status);
    if flag.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Request_get_status", MPI_ERR_ARG, "flag is NULL");
    }
    let r = runtime::with(|rt| -> Result<Option<Status>, String> {
        if let Slot::Active(_) = slot(rt, request)? {
            rt.progress();
        }
        peek_status(rt, request)
    });
    match r {
        Err(msg) => raise(MPI_COMM_WORLD, "MPI_Request_get_status", MPI_ERR_REQUEST, msg),
        Ok(found) => {
            // SAFETY: checked non-null; caller's status.
            unsafe {
                *flag = found.is_some() as c_int;
                if let Some(st) = found {
                    write_status(status, &st, None);
                }
            }
            runtime::polled(found.is_some());
            MPI_SUCCESS
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cancel(request: *mut MPI_Request) -> c_int {
    require_init!("MPI_Cancel");
    if request.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Cancel", MPI_ERR_ARG, "request is NULL");
    }
    // SAFETY: checked non-null.
    let h = unsafe { *request };
    let r = runtime::with(|rt| match slot(rt, h)? {
        Slot::Active(rid) => {
            if let Some(msg) = crate::partitioned::busy(rt, rid, "cancel") {
                return Err(msg);
            }
            rt.engine.cancel(rid);
            // A generalized request: its cancel callback runs below, outside, as it may
            // call MPI_Grequest_complete.
            let generalized = crate::grequest::any().then(|| crate::grequest::cancel_of(rid)).flatten();
            Ok(generalized.map(|(f, extra)| (f, extra, is_complete(rt, rid))))
        }
        Slot::Null => Err(format!("cannot cancel {h:#x}: null or inactive request")),
    });
    match r {
        Ok(None) => MPI_SUCCESS,
        Ok(Some((f, extra, complete))) => match crate::grequest::call_cancel(f, extra, complete) {
            MPI_SUCCESS => MPI_SUCCESS,
            rc => raise(MPI_COMM_WORLD, "MPI_Cancel", rc, format!("the cancel callback of generalized request {h:#x} returned error {rc}")),
        },
        Err(msg) => raise(MPI_COMM_WORLD, "MPI_Cancel", MPI_ERR_REQUEST, msg),
    }
}

/// Starts persistent request `h`. A persistent collective is only checked here: its
/// schedule is built by `coll::start_persistent` outside the runtime lock (Ok(Some)).
fn start_one(rt: &mut Runtime, h: MPI_Request) -> Result<Option<(ReqId, MPI_Comm)>, (MPI_Comm, c_int, String)> {
    let rid = request_id(h).ok_or_else(|| (MPI_COMM_WORLD, MPI_ERR_REQUEST, format!("invalid request handle {h:#x}")))?;
    let Some(r) = rt.engine.reqs.get(rid).filter(|r| r.persistent) else {
        return Err((MPI_COMM_WORLD, MPI_ERR_REQUEST, format!("{h:#x} is not a persistent request")));
    };
    let comm = r.owner as MPI_Comm;
    if matches!(r.op, Op::Coll) {
        // Active until a wait or test completed it (complete but not waited for counts).
        if r.state != State::Inactive {
            return Err((comm, MPI_ERR_REQUEST, "MPI_Start on a persistent collective request that is still active (not completed by a wait or test)".into()));
        }
        return Ok(Some((rid, comm)));
    }
    if matches!(r.op, Op::Partitioned) {
        return rt.engine.part_start(rid).map(|()| None).map_err(|e| (comm, e.class as c_int, e.msg));
    }
    rt.engine.start(rid).map(|()| None).map_err(|e| (comm, e.class as c_int, e.msg))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Start(request: *mut MPI_Request) -> c_int {
    require_init!("MPI_Start");
    if request.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Start", MPI_ERR_ARG, "request is NULL");
    }
    // SAFETY: checked non-null.
    let h = unsafe { *request };
    match runtime::with(|rt| start_one(rt, h)) {
        Ok(None) => MPI_SUCCESS,
        Ok(Some((rid, comm))) => crate::coll::start_persistent("MPI_Start", comm, rid),
        Err((comm, class, msg)) => raise(comm, "MPI_Start", class, msg),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Startall(count: c_int, array_of_requests: *mut MPI_Request) -> c_int {
    require_init!("MPI_Startall");
    // SAFETY: the caller passes `count` requests.
    let hs = match unsafe { requests_arg("MPI_Startall", array_of_requests, count) } {
        Ok(hs) => hs,
        Err(rc) => return rc,
    };
    // In array order; point-to-point requests are started in one critical section up to
    // the next persistent collective.
    let mut next = 0;
    while next < hs.len() {
        let r = runtime::with(|rt| {
            while next < hs.len() {
                next += 1;
                if let Some(coll) = start_one(rt, hs[next - 1])? {
                    return Ok(Some(coll));
                }
            }
            Ok(None)
        });
        match r {
            Ok(None) => {}
            Ok(Some((rid, comm))) => {
                let rc = crate::coll::start_persistent("MPI_Startall", comm, rid);
                if rc != MPI_SUCCESS {
                    return rc;
                }
            }
            Err((comm, class, msg)) => return raise(comm, "MPI_Startall", class, msg),
        }
    }
    MPI_SUCCESS
}

// ------------------------------------------------------------ status queries

/// # Safety
/// `status` must be NULL or point to an MPI_Status.
unsafe fn status_ref<'a>(func: &str, status: *const MPI_Status) -> Result<&'a MPI_Status, c_int> {
    if status.is_null() || status as usize == 1 {
        return Err(raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "status is NULL or MPI_STATUS_IGNORE"));
    }
    // SAFETY: per the function contract.
    Ok(unsafe { &*status })
}

/// `MPI_Get_count` (items of `dt`) or `MPI_Get_elements` (basic elements) for `bytes`
/// received; `MPI_UNDEFINED` when the bytes end inside an item (or element).
fn count_in_units(func: &str, bytes: u64, dt: MPI_Datatype, elements: bool) -> Result<i64, c_int> {
    let t = crate::types::lookup(dt).ok_or_else(|| raise(MPI_COMM_WORLD, func, MPI_ERR_TYPE, format!("invalid datatype handle {dt:#x}")))?;
    let size = t.size() as u64;
    if size == 0 {
        return Ok(0);
    }
    if elements {
        return Ok(t.elements_for_bytes(bytes as usize).map_or(MPI_UNDEFINED as i64, |n| n as i64));
    }
    if bytes % size != 0 {
        return Ok(MPI_UNDEFINED as i64);
    }
    Ok((bytes / size) as i64)
}

/// `MPI_Get_count`/`MPI_Get_elements` in every form: the count for `*status`, written to
/// `*out` by `store` (the int forms store `MPI_UNDEFINED` for a count beyond an int, as the
/// standard says).
///
/// # Safety
/// `status` and `out` as the MPI functions take them.
unsafe fn query_count<T>(func: &str, status: *const MPI_Status, datatype: MPI_Datatype, out: *mut T, elements: bool, store: fn(i64) -> T) -> c_int {
    // SAFETY: caller's status.
    let st = match unsafe { status_ref(func, status) } {
        Ok(s) => s,
        Err(rc) => return rc,
    };
    if out.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "count is NULL");
    }
    match count_in_units(func, status_bytes(st), datatype, elements) {
        Ok(v) => {
            // SAFETY: checked non-null; the caller provides the count.
            unsafe { out.write(store(v)) };
            MPI_SUCCESS
        }
        Err(rc) => rc,
    }
}

fn int_count(v: i64) -> c_int {
    c_int::try_from(v).unwrap_or(MPI_UNDEFINED)
}

fn large_count(v: i64) -> MPI_Count {
    v
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_count(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut c_int) -> c_int {
    // SAFETY: forwarded caller pointers.
    unsafe { query_count("MPI_Get_count", status, datatype, count, false, int_count) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_count_c(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut MPI_Count) -> c_int {
    // SAFETY: forwarded caller pointers.
    unsafe { query_count("MPI_Get_count_c", status, datatype, count, false, large_count) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_elements(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut c_int) -> c_int {
    // SAFETY: forwarded caller pointers.
    unsafe { query_count("MPI_Get_elements", status, datatype, count, true, int_count) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_elements_x(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut MPI_Count) -> c_int {
    // SAFETY: forwarded caller pointers.
    unsafe { query_count("MPI_Get_elements_x", status, datatype, count, true, large_count) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_elements_c(status: *const MPI_Status, datatype: MPI_Datatype, count: *mut MPI_Count) -> c_int {
    // SAFETY: forwarded caller pointers.
    unsafe { query_count("MPI_Get_elements_c", status, datatype, count, true, large_count) }
}

fn set_elements(func: &str, status: *mut MPI_Status, datatype: MPI_Datatype, count: i64) -> c_int {
    if status.is_null() || status as usize == 1 {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "status is NULL or MPI_STATUS_IGNORE");
    }
    let Some(t) = crate::types::lookup(datatype) else {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_TYPE, format!("invalid datatype handle {datatype:#x}"));
    };
    if count < 0 {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_COUNT, format!("negative count {count}"));
    }
    // `count` basic elements of a type whose items hold `elements()` of them.
    let per_item = t.elements().max(1) as u64;
    // Checked: the status holds a 63-bit byte count, and a wrapped product would read back
    // as a small count.
    let bytes = (count as u64 / per_item)
        .checked_mul(t.size() as u64)
        .and_then(|b| b.checked_add((count as u64 % per_item) * (t.size() as u64 / per_item)))
        .filter(|&b| b <= i64::MAX as u64);
    let Some(bytes) = bytes else {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_COUNT, format!("{count} elements of a {}-byte datatype do not fit a status (the byte count overflows MPI_Count)", t.size()));
    };
    // SAFETY: checked to be a real status.
    let st = unsafe { &mut *status };
    let cancelled = st.count_hi_and_cancelled & 1;
    st.count_lo = bytes as u32 as c_int;
    st.count_hi_and_cancelled = (((bytes >> 32) as c_int) << 1) | cancelled;
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_elements(status: *mut MPI_Status, datatype: MPI_Datatype, count: c_int) -> c_int {
    set_elements("MPI_Status_set_elements", status, datatype, count as i64)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_elements_x(status: *mut MPI_Status, datatype: MPI_Datatype, count: MPI_Count) -> c_int {
    set_elements("MPI_Status_set_elements_x", status, datatype, count)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_cancelled(status: *mut MPI_Status, flag: c_int) -> c_int {
    if status.is_null() || status as usize == 1 {
        return raise(MPI_COMM_WORLD, "MPI_Status_set_cancelled", MPI_ERR_ARG, "status is NULL or MPI_STATUS_IGNORE");
    }
    // SAFETY: checked to be a real status.
    let st = unsafe { &mut *status };
    st.count_hi_and_cancelled = (st.count_hi_and_cancelled & !1) | (flag != 0) as c_int;
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Test_cancelled(status: *const MPI_Status, flag: *mut c_int) -> c_int {
    // SAFETY: caller's status.
    let st = match unsafe { status_ref("MPI_Test_cancelled", status) } {
        Ok(s) => s,
        Err(rc) => return rc,
    };
    if flag.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Test_cancelled", MPI_ERR_ARG, "flag is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *flag = st.count_hi_and_cancelled & 1 };
    MPI_SUCCESS
}

// ------------------------------------------- MPI-4.1: status fields, non-destructive tests

/// `MPI_Status_get_source`/`_tag`/`_error` (MPI 4.1 §3.2.5): a status field, for languages
/// that cannot read the struct.
///
/// # Safety
/// `status` and `out` are the caller's pointers (checked against NULL here).
unsafe fn status_field(func: &str, status: *const MPI_Status, out: *mut c_int, field: fn(&MPI_Status) -> c_int) -> c_int {
    require_init!(func);
    // SAFETY: the caller's status.
    let st = match unsafe { status_ref(func, status) } {
        Ok(s) => s,
        Err(rc) => return rc,
    };
    if out.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "the output argument is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *out = field(st) };
    MPI_SUCCESS
}

/// `MPI_Status_set_source`/`_tag`/`_error`: sets one field (generalized requests' query
/// callbacks and tools fill statuses with them).
fn set_status_field(func: &str, status: *mut MPI_Status, set: impl FnOnce(&mut MPI_Status)) -> c_int {
    require_init!(func);
    if status.is_null() || status as usize == 1 {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "status is NULL or MPI_STATUS_IGNORE");
    }
    // SAFETY: checked to be a real status.
    set(unsafe { &mut *status });
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_get_source(status: *const MPI_Status, source: *mut c_int) -> c_int {
    // SAFETY: forwarded caller pointers.
    unsafe { status_field("MPI_Status_get_source", status, source, |s| s.MPI_SOURCE) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_get_tag(status: *const MPI_Status, tag: *mut c_int) -> c_int {
    // SAFETY: forwarded caller pointers.
    unsafe { status_field("MPI_Status_get_tag", status, tag, |s| s.MPI_TAG) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_get_error(status: *const MPI_Status, err: *mut c_int) -> c_int {
    // SAFETY: forwarded caller pointers.
    unsafe { status_field("MPI_Status_get_error", status, err, |s| s.MPI_ERROR) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_source(status: *mut MPI_Status, source: c_int) -> c_int {
    set_status_field("MPI_Status_set_source", status, |s| s.MPI_SOURCE = source)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_tag(status: *mut MPI_Status, tag: c_int) -> c_int {
    set_status_field("MPI_Status_set_tag", status, |s| s.MPI_TAG = tag)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_set_error(status: *mut MPI_Status, err: c_int) -> c_int {
    set_status_field("MPI_Status_set_error", status, |s| s.MPI_ERROR = err)
}

/// The status of request `h` if it is complete (`MPI_Request_get_status`'s test: the
/// request stays as it is): `Some(empty)` for a null or inactive one, `None` while pending.
/// The caller has run progress.
fn peek_status(rt: &Runtime, h: MPI_Request) -> Result<Option<Status>, String> {
    Ok(match slot(rt, h)? {
        Slot::Null => Some(empty_status()),
        Slot::Active(rid) => {
            let st = rt.engine.reqs.get(rid).filter(|r| r.is_complete()).map(|r| r.status);
            if st.is_some() && crate::fortran_sections::any() {
                crate::fortran_sections::peeked(rid);
            }
            // A generalized request's status is its query callback's.
            st.map(|st| if crate::grequest::any() { crate::grequest::peek(rid).unwrap_or(st) } else { st })
        }
    })
}

/// The requests of an `MPI_Request_get_status_*` call with, per request, whether it is
/// active and its status if complete; progress runs once first.
///
/// # Safety
/// `p` points to `n` requests (or n == 0).
unsafe fn peek_all(func: &str, p: *const MPI_Request, n: c_int) -> Result<Vec<(bool, Option<Status>)>, c_int> {
    // SAFETY: per the function contract; the requests are only read.
    let hs = unsafe { requests_arg(func, p as *mut MPI_Request, n)? };
    let peeked = runtime::with(|rt| -> Result<Vec<(bool, Option<Status>)>, String> {
        rt.progress();
        hs.iter().map(|&h| Ok((matches!(slot(rt, h)?, Slot::Active(_)), peek_status(rt, h)?))).collect()
    })
    .map_err(|msg| raise(MPI_COMM_WORLD, func, MPI_ERR_REQUEST, msg))?;
    runtime::polled(peeked.iter().any(|(active, st)| *active && st.is_some()));
    Ok(peeked)
}

/// Writes status `i` of an array with its MPI_ERROR field (MPI_SUCCESS unless the request
/// failed: MPICH sets it in these calls, and mpi4py's tests check it); the return code for
/// the array (MPI_ERR_IN_STATUS when a request failed).
///
/// # Safety
/// `statuses` is MPI_STATUSES_IGNORE or points to at least i+1 statuses.
unsafe fn write_peeked(func: &str, statuses: *mut MPI_Status, done: &[(usize, Status)]) -> c_int {
    let failed = done.iter().any(|(_, st)| st.error.is_some());
    for (i, st) in done {
        // SAFETY: per the function contract.
        unsafe { write_status(status_at(statuses, *i), st, Some(st.error.map_or(MPI_SUCCESS, |c| c as c_int))) };
    }
    if failed {
        raise(MPI_COMM_WORLD, func, MPI_ERR_IN_STATUS, "a request completed with an error; see the MPI_ERROR field of each status")
    } else {
        MPI_SUCCESS
    }
}

/// `MPI_Request_get_status_any` (MPI 4.1 §3.7.5): like `MPI_Testany`, but the complete
/// request is neither freed nor made inactive.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_get_status_any(count: c_int, array_of_requests: *const MPI_Request, index: *mut c_int, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
    let func = "MPI_Request_get_status_any";
    require_init!(func);
    if index.is_null() || flag.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "index or flag is NULL");
    }
    // SAFETY: the caller passes `count` requests.
    let peeked = match unsafe { peek_all(func, array_of_requests, count) } {
        Ok(p) => p,
        Err(rc) => return rc,
    };
    let found = peeked.iter().enumerate().find_map(|(i, (active, st))| if *active { st.map(|st| (i, st)) } else { None });
    // SAFETY: checked non-null; caller's status.
    unsafe {
        match found {
            Some((i, st)) => {
                *flag = 1;
                *index = i as c_int;
                write_status(status, &st, None);
                if let Some(class) = st.error {
                    return raise(MPI_COMM_WORLD, func, class as c_int, format!("request {i} completed with error class {}", class as c_int));
                }
            }
            None if peeked.iter().all(|(active, _)| !active) => {
                *flag = 1;
                *index = MPI_UNDEFINED;
                write_status(status, &empty_status(), Some(MPI_SUCCESS));
            }
            None => {
                *flag = 0;
                *index = MPI_UNDEFINED;
            }
        }
    }
    MPI_SUCCESS
}

/// `MPI_Request_get_status_all`: flag is true when every request is complete (null and
/// inactive ones count as complete), and then every status is written; no request changes.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_get_status_all(count: c_int, array_of_requests: *const MPI_Request, flag: *mut c_int, array_of_statuses: *mut MPI_Status) -> c_int {
    let func = "MPI_Request_get_status_all";
    require_init!(func);
    if flag.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "flag is NULL");
    }
    // SAFETY: the caller passes `count` requests.
    let peeked = match unsafe { peek_all(func, array_of_requests, count) } {
        Ok(p) => p,
        Err(rc) => return rc,
    };
    if peeked.iter().any(|(_, st)| st.is_none()) {
        // SAFETY: checked non-null.
        unsafe { *flag = 0 };
        return MPI_SUCCESS;
    }
    // SAFETY: checked non-null.
    unsafe { *flag = 1 };
    let done: Vec<(usize, Status)> = peeked.iter().enumerate().map(|(i, (_, st))| (i, st.unwrap())).collect();
    // SAFETY: the caller passes `count` statuses or MPI_STATUSES_IGNORE.
    unsafe { write_peeked(func, array_of_statuses, &done) }
}

/// `MPI_Request_get_status_some`: the indices of the complete active requests (their
/// statuses in the first `outcount` entries), or MPI_UNDEFINED when none is active.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_get_status_some(incount: c_int, array_of_requests: *const MPI_Request, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut MPI_Status) -> c_int {
    let func = "MPI_Request_get_status_some";
    require_init!(func);
    if outcount.is_null() || (incount > 0 && array_of_indices.is_null()) {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "outcount or array_of_indices is NULL");
    }
    // SAFETY: the caller passes `incount` requests.
    let peeked = match unsafe { peek_all(func, array_of_requests, incount) } {
        Ok(p) => p,
        Err(rc) => return rc,
    };
    if peeked.iter().all(|(active, _)| !active) {
        // SAFETY: checked non-null.
        unsafe { *outcount = MPI_UNDEFINED };
        return MPI_SUCCESS;
    }
    let done: Vec<(usize, Status)> = peeked.iter().enumerate().filter(|(_, (active, _))| *active).filter_map(|(i, (_, st))| st.map(|st| (i, st))).collect();
    // SAFETY: checked non-null; the caller passes `incount` indices.
    unsafe {
        *outcount = done.len() as c_int;
        for (k, (i, _)) in done.iter().enumerate() {
            *array_of_indices.add(k) = *i as c_int;
        }
    }
    // Statuses go to the first `outcount` entries, in the order of the indices.
    let packed: Vec<(usize, Status)> = done.iter().enumerate().map(|(k, (_, st))| (k, *st)).collect();
    // SAFETY: the caller passes `incount` statuses or MPI_STATUSES_IGNORE.
    unsafe { write_peeked(func, array_of_statuses, &packed) }
}
