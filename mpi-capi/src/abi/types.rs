//! C types of the MPICH ABI (integer handles, `long` addresses, 20-byte status).
//!
//! cbindgen turns these into the typedefs of `mpi.h`. Callback types are Rust function
//! pointers (`Option<unsafe extern "C" fn ..>`, null allowed); `build.rs` rewrites their C
//! typedefs into the function types the MPI standard specifies (`typedef int
//! MPI_Copy_function(...)`), so C code writes `MPI_Copy_function *fn` as usual.
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
/// MPI-4.0 session handle (an int, as MPICH).
pub type MPI_Session = c_int;
pub type MPI_Aint = c_long;
pub type MPI_Fint = c_int;
/// `long` as in MPICH's x86_64 build (64 bits, same Rust type as `i64`).
pub type MPI_Count = c_long;
/// `long` as in MPICH's x86_64 build (64 bits, same Rust type as `i64`).
pub type MPI_Offset = c_long;

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

/// The C view of a Fortran 2008 `TYPE(MPI_Status)` (same five fields as `MPI_Status`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MPI_F08_status {
    pub count_lo: MPI_Fint,
    pub count_hi_and_cancelled: MPI_Fint,
    pub MPI_SOURCE: MPI_Fint,
    pub MPI_TAG: MPI_Fint,
    pub MPI_ERROR: MPI_Fint,
}

/// Opaque target of `MPI_File` (a pointer type in the MPICH ABI, as in ROMIO).
pub struct ADIOI_FileD {
    _opaque: u8,
}
pub type MPI_File = *mut ADIOI_FileD;

/// Opaque targets of the MPI_T handle types (pointers in the MPICH ABI).
pub struct MPIR_T_enum_s {
    _opaque: u8,
}
pub struct MPIR_T_cvar_handle_s {
    _opaque: u8,
}
pub struct MPIR_T_pvar_handle_s {
    _opaque: u8,
}
pub struct MPIR_T_pvar_session_s {
    _opaque: u8,
}
pub type MPI_T_enum = *mut MPIR_T_enum_s;
pub type MPI_T_cvar_handle = *mut MPIR_T_cvar_handle_s;
pub type MPI_T_pvar_handle = *mut MPIR_T_pvar_handle_s;
pub type MPI_T_pvar_session = *mut MPIR_T_pvar_session_s;
pub struct MPIR_T_event_registration_s {
    _opaque: u8,
}
pub struct MPIR_T_event_instance_s {
    _opaque: u8,
}
pub type MPI_T_event_registration = *mut MPIR_T_event_registration_s;
pub type MPI_T_event_instance = *mut MPIR_T_event_instance_s;
/// `enum MPI_T_cb_safety` in MPICH (int-sized; the values are `MPI_T_CB_REQUIRE_*`).
pub type MPI_T_cb_safety = c_int;
/// `enum MPI_T_source_order` in MPICH (`MPI_T_SOURCE_ORDERED`, `MPI_T_SOURCE_UNORDERED`).
pub type MPI_T_source_order = c_int;

// ---- Callback types -------------------------------------------------------------------

/// `MPI_User_function`: the reduction callback of `MPI_Op_create`.
pub type MPI_User_function =
    Option<unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype)>;
/// `MPI_User_function_c`: the large-count reduction callback of `MPI_Op_create_c`.
pub type MPI_User_function_c =
    Option<unsafe extern "C" fn(*mut c_void, *mut c_void, *mut MPI_Count, *mut MPI_Datatype)>;

pub type MPI_Comm_copy_attr_function = Option<
    unsafe extern "C" fn(MPI_Comm, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int,
>;
pub type MPI_Comm_delete_attr_function =
    Option<unsafe extern "C" fn(MPI_Comm, c_int, *mut c_void, *mut c_void) -> c_int>;
pub type MPI_Type_copy_attr_function = Option<
    unsafe extern "C" fn(MPI_Datatype, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int,
>;
pub type MPI_Type_delete_attr_function =
    Option<unsafe extern "C" fn(MPI_Datatype, c_int, *mut c_void, *mut c_void) -> c_int>;
pub type MPI_Win_copy_attr_function = Option<
    unsafe extern "C" fn(MPI_Win, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int,
>;
pub type MPI_Win_delete_attr_function =
    Option<unsafe extern "C" fn(MPI_Win, c_int, *mut c_void, *mut c_void) -> c_int>;

/// MPI-1 attribute callbacks (`MPI_Keyval_create`).
pub type MPI_Copy_function = Option<
    unsafe extern "C" fn(MPI_Comm, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int,
>;
pub type MPI_Delete_function =
    Option<unsafe extern "C" fn(MPI_Comm, c_int, *mut c_void, *mut c_void) -> c_int>;

/// Error handler callbacks: `(handle *, error code *, ...)`.
pub type MPI_Comm_errhandler_function = Option<unsafe extern "C" fn(*mut MPI_Comm, *mut c_int, ...)>;
pub type MPI_File_errhandler_function = Option<unsafe extern "C" fn(*mut MPI_File, *mut c_int, ...)>;
pub type MPI_Win_errhandler_function = Option<unsafe extern "C" fn(*mut MPI_Win, *mut c_int, ...)>;
pub type MPI_Session_errhandler_function = Option<unsafe extern "C" fn(*mut MPI_Session, *mut c_int, ...)>;
/// MPI-1 name of the communicator error handler callback.
pub type MPI_Handler_function = Option<unsafe extern "C" fn(*mut MPI_Comm, *mut c_int, ...)>;
/// MPI-2.0 names, deprecated in MPI-2.2.
pub type MPI_Comm_errhandler_fn = MPI_Comm_errhandler_function;
pub type MPI_File_errhandler_fn = MPI_File_errhandler_function;
pub type MPI_Win_errhandler_fn = MPI_Win_errhandler_function;
pub type MPI_Session_errhandler_fn = MPI_Session_errhandler_function;

/// Generalized request callbacks.
pub type MPI_Grequest_query_function =
    Option<unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int>;
pub type MPI_Grequest_free_function = Option<unsafe extern "C" fn(*mut c_void) -> c_int>;
pub type MPI_Grequest_cancel_function = Option<unsafe extern "C" fn(*mut c_void, c_int) -> c_int>;

/// Data representation callbacks (`MPI_Register_datarep`).
pub type MPI_Datarep_conversion_function = Option<
    unsafe extern "C" fn(*mut c_void, MPI_Datatype, c_int, *mut c_void, MPI_Offset, *mut c_void) -> c_int,
>;
/// The large-count conversion callback (`MPI_Register_datarep_c`).
pub type MPI_Datarep_conversion_function_c = Option<
    unsafe extern "C" fn(*mut c_void, MPI_Datatype, MPI_Count, *mut c_void, MPI_Offset, *mut c_void) -> c_int,
>;
pub type MPI_Datarep_extent_function =
    Option<unsafe extern "C" fn(MPI_Datatype, *mut MPI_Aint, *mut c_void) -> c_int>;

/// MPI_T event callbacks (MPI-4.0).
pub type MPI_T_event_cb_function =
    Option<unsafe extern "C" fn(MPI_T_event_instance, MPI_T_event_registration, MPI_T_cb_safety, *mut c_void)>;
pub type MPI_T_event_free_cb_function =
    Option<unsafe extern "C" fn(MPI_T_event_registration, MPI_T_cb_safety, *mut c_void)>;
pub type MPI_T_event_dropped_cb_function =
    Option<unsafe extern "C" fn(MPI_Count, MPI_T_event_registration, c_int, MPI_T_cb_safety, *mut c_void)>;
