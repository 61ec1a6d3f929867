//! C types of the MPICH ABI (integer handles, `long` addresses, 20-byte status).
use std::os::raw::{c_int, c_long, c_void};

pub type MPI_Comm = c_int;
pub type MPI_Datatype = c_int;
pub type MPI_Group = c_int;
pub type MPI_Win = c_int;
pub type MPI_Op = c_int;
pub type MPI_Errhandler = c_int;
pub type MPI_Request = c_int;
pub type MPI_Message = c_int;
pub type MPI_Info = c_int;
pub type MPI_Aint = c_long;
pub type MPI_Fint = c_int;
pub type MPI_Count = i64;
pub type MPI_Offset = i64;

/// MPICH's status layout: the byte count is split in two ints; bit 0 of the second holds
/// the cancelled flag, the remaining bits the high part of the count.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MPI_Status {
    pub count_lo: c_int,
    pub count_hi_and_cancelled: c_int,
    pub MPI_SOURCE: c_int,
    pub MPI_TAG: c_int,
    pub MPI_ERROR: c_int,
}

/// `MPI_User_function`: the reduction callback of `MPI_Op_create`.
pub type MPI_User_function =
    Option<unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype)>;
