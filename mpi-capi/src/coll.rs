//! Collective entry points: validate arguments, build the schedule with an algorithm from
//! `mpi_core::coll::algorithms`, then run it (blocking) or hand out its request
//! (nonblocking). Both forms share the same code path.

use crate::abi::*;
use crate::errors::{not_initialized, raise};
use crate::handles::{comm_index, request_handle};
use crate::p2p_args::ArgError;
use crate::requests::{finish, wait_request};
use mpi_core::coll::{algorithms, Schedule};
use mpi_core::runtime::{self, Runtime};
use std::os::raw::c_int;

/// Builds a schedule on communicator `comm` with `build` (under the runtime lock) and runs
/// it: waits for it when `request` is None, else stores its request handle there.
pub fn run_collective(func: &str, comm: MPI_Comm, request: Option<*mut MPI_Request>, build: impl FnOnce(&mut Runtime, &mut Schedule) -> Result<(), ArgError>) -> c_int {
    if !runtime::is_initialized() || runtime::is_finalized() {
        return not_initialized(func);
    }
    if let Some(r) = request {
        if r.is_null() {
            return raise(comm, func, MPI_ERR_ARG, "request is NULL");
        }
    }
    let started = runtime::with(|rt| -> Result<u32, ArgError> {
        let idx = comm_index(comm).filter(|&i| rt.comms.get(i).is_some()).ok_or_else(|| {
            (MPI_ERR_COMM, if comm == MPI_COMM_NULL { "communicator is MPI_COMM_NULL".to_string() } else { format!("invalid communicator handle {comm:#x}") })
        })?;
        let (cc, tag) = rt.comms.get_mut(idx).unwrap().next_collective();
        let mut s = Schedule::new(cc, tag);
        build(rt, &mut s)?;
        let rid = rt.engine.start_schedule(s).map_err(|e| (e.class as c_int, e.msg))?;
        rt.engine.reqs.get_mut(rid).unwrap().owner = comm as i64;
        Ok(rid)
    });
    let rid = match started {
        Ok(rid) => rid,
        Err((class, msg)) => return raise(comm, func, class, msg),
    };
    match request {
        Some(r) => {
            // SAFETY: checked non-null above.
            unsafe { *r = request_handle(rid) };
            MPI_SUCCESS
        }
        None => {
            wait_request(rid);
            let st = runtime::with(|rt| finish(rt, rid));
            match st.error {
                Some(class) => raise(comm, func, class as c_int, "a transfer inside the collective failed"),
                None => MPI_SUCCESS,
            }
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Barrier(comm: MPI_Comm) -> c_int {
    run_collective("MPI_Barrier", comm, None, |_, s| {
        algorithms::barrier(s);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ibarrier(comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    run_collective("MPI_Ibarrier", comm, Some(request), |_, s| {
        algorithms::barrier(s);
        Ok(())
    })
}
