//! Communicator queries. (Creation, groups and attributes come with communicator support.)

use crate::abi::*;
use crate::errors::{not_initialized, raise};
use crate::p2p_args::comm_of;
use mpi_core::runtime;
use std::os::raw::c_int;

fn query(func: &str, comm: MPI_Comm, out: *mut c_int, f: impl FnOnce(&mpi_core::comm::Comm) -> usize) -> c_int {
    if !runtime::is_initialized() || runtime::is_finalized() {
        return not_initialized(func);
    }
    if out.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "output argument is NULL");
    }
    match runtime::with(|rt| comm_of(rt, comm).map(f)) {
        Ok(v) => {
            // SAFETY: checked non-null.
            unsafe { *out = v as c_int };
            MPI_SUCCESS
        }
        Err((class, msg)) => raise(MPI_COMM_WORLD, func, class, msg),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_rank(comm: MPI_Comm, rank: *mut c_int) -> c_int {
    query("MPI_Comm_rank", comm, rank, |c| c.rank)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_size(comm: MPI_Comm, size: *mut c_int) -> c_int {
    query("MPI_Comm_size", comm, size, |c| c.size())
}
