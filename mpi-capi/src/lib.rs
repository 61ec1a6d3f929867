//! C ABI of OxMPI: `libmpi.so.12`, binary compatible with MPICH's ABI.
//!
//! Hand-written `PMPI_*` entry points live in the topic modules; `generated.rs` (written by
//! `gen/gen_abi.py`) holds every `MPI_*` -> `PMPI_*` forwarder and the "not supported yet"
//! entry points of functions not implemented yet.
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, clippy::missing_safety_doc)]

/// Returns the "called before MPI_Init / after MPI_Finalize" error from the calling entry
/// point (one definition for every module).
macro_rules! require_init {
    ($func:expr) => {
        if !mpi_core::runtime::is_active() {
            return $crate::errors::not_initialized($func);
        }
    };
}

/// A NULL status argument is erroneous (the MPICH ABI's `MPI_STATUS_IGNORE` and
/// `MPI_STATUSES_IGNORE` are not NULL): MPI_ERR_ARG, as MPICH reports it. `$count`: for an
/// array of statuses, the number of entries (none needed when 0).
macro_rules! require_status {
    ($func:expr, $comm:expr, $status:expr) => {
        if $status.is_null() {
            return $crate::errors::raise($comm, $func, $crate::abi::MPI_ERR_ARG, "status is NULL (pass MPI_STATUS_IGNORE to ignore it)");
        }
    };
    ($func:expr, $comm:expr, $status:expr, $count:expr) => {
        if $count > 0 && $status.is_null() {
            return $crate::errors::raise($comm, $func, $crate::abi::MPI_ERR_ARG, "array_of_statuses is NULL (pass MPI_STATUSES_IGNORE to ignore them)");
        }
    };
}

pub mod abi;
pub mod errors;
pub mod conversions;
pub mod generated;
pub mod fortran;
/// Helpers of the Fortran wrappers only: not in mpi.h.
/// cbindgen:ignore
pub mod fortran_sections;
pub mod time;
pub mod tool_interface;
pub mod coll;
pub mod comm;
pub mod attributes;
pub mod errhandlers;
pub mod group;
pub mod info;
pub mod memory;
pub mod topology;
pub mod handles;
pub mod init;
pub mod session;
pub mod p2p_args;
pub mod pt2pt;
pub mod bsend;
pub mod requests;
pub mod grequest;
pub mod partitioned;
pub mod types;
pub mod ops;
pub mod memhooks;
pub mod window;
pub mod rma;
pub mod io;
pub mod io_view;
pub mod datarep;
pub mod dynamic;
pub mod io_access;
