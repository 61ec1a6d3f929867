//! MPICH ABI constant values (facts read from MPICH's installed mpi.h).
#![allow(clippy::unreadable_literal)]
use super::types::*;
use std::os::raw::c_int;

pub const MPI_VERSION: c_int = 3;
pub const MPI_SUBVERSION: c_int = 1;

pub const MPI_COMM_NULL: MPI_Comm = 0x04000000;
pub const MPI_COMM_WORLD: MPI_Comm = 0x44000000;
pub const MPI_COMM_SELF: MPI_Comm = 0x44000001;
pub const MPI_REQUEST_NULL: MPI_Request = 0x2c000000;
pub const MPI_MESSAGE_NULL: MPI_Message = 0x2c000000;
pub const MPI_MESSAGE_NO_PROC: MPI_Message = 0x6c000000;
pub const MPI_ERRHANDLER_NULL: MPI_Errhandler = 0x14000000;
pub const MPI_ERRORS_ARE_FATAL: MPI_Errhandler = 0x54000000;
pub const MPI_ERRORS_RETURN: MPI_Errhandler = 0x54000001;
pub const MPI_ERRORS_ABORT: MPI_Errhandler = 0x54000003;
pub const MPI_DATATYPE_NULL: MPI_Datatype = 0x0c000000;

pub const MPI_PROC_NULL: c_int = -1;
pub const MPI_ANY_SOURCE: c_int = -2;
pub const MPI_ROOT: c_int = -3;
pub const MPI_ANY_TAG: c_int = -1;
pub const MPI_UNDEFINED: c_int = -32766;
pub const MPI_BSEND_OVERHEAD: c_int = 96;
pub const MPI_MAX_PROCESSOR_NAME: c_int = 128;
pub const MPI_MAX_LIBRARY_VERSION_STRING: c_int = 8192;
pub const MPI_MAX_ERROR_STRING: c_int = 512;

pub const MPI_THREAD_SINGLE: c_int = 0;
pub const MPI_THREAD_FUNNELED: c_int = 1;
pub const MPI_THREAD_SERIALIZED: c_int = 2;
pub const MPI_THREAD_MULTIPLE: c_int = 3;
