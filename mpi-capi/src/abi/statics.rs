//! Data symbols and predefined callbacks of the MPICH ABI.
//!
//! A program compiled against MPICH's `mpi.h` refers to these objects by name (the
//! `MPI_UNWEIGHTED` sentinel, `MPI_F_STATUS_IGNORE`, the Fortran 2008 helper objects, and the
//! `MPIR_Dup_fn` behind `MPI_*_DUP_FN`), so `libmpi.so` exports identically named ones.
//! The pointer variables are `static mut` only because raw pointers are not `Sync`; they
//! are written by nobody and only ever compared against.
use super::types::*;
use std::os::raw::{c_int, c_void};

/// Storage behind the `MPI_UNWEIGHTED` sentinel (its address is the sentinel).
#[no_mangle]
pub static mut MPIR_C_MPI_UNWEIGHTED: c_int = 0;
/// Storage behind the `MPI_WEIGHTS_EMPTY` sentinel (its address is the sentinel).
#[no_mangle]
pub static mut MPIR_C_MPI_WEIGHTS_EMPTY: c_int = 0;
/// `MPI_UNWEIGHTED`: pass as the weights of `MPI_Dist_graph_create*` when there are none.
#[no_mangle]
pub static mut MPI_UNWEIGHTED: *mut c_int = &raw mut MPIR_C_MPI_UNWEIGHTED;
/// `MPI_WEIGHTS_EMPTY`: weights argument for a process with no edges.
#[no_mangle]
pub static mut MPI_WEIGHTS_EMPTY: *mut c_int = &raw mut MPIR_C_MPI_WEIGHTS_EMPTY;

/// Storage behind `MPI_F_STATUS_IGNORE` (Fortran status, 5 integers).
#[no_mangle]
pub static mut MPIR_F_MPI_STATUS_IGNORE_OBJ: [MPI_Fint; 5] = [0; 5];
/// Storage behind `MPI_F_STATUSES_IGNORE`.
#[no_mangle]
pub static mut MPIR_F_MPI_STATUSES_IGNORE_OBJ: [MPI_Fint; 5] = [0; 5];
/// `MPI_F_STATUS_IGNORE`: the C value of Fortran's `MPI_STATUS_IGNORE`.
#[no_mangle]
pub static mut MPI_F_STATUS_IGNORE: *mut MPI_Fint = &raw mut MPIR_F_MPI_STATUS_IGNORE_OBJ as *mut MPI_Fint;
/// `MPI_F_STATUSES_IGNORE`: the C value of Fortran's `MPI_STATUSES_IGNORE`.
#[no_mangle]
pub static mut MPI_F_STATUSES_IGNORE: *mut MPI_Fint =
    &raw mut MPIR_F_MPI_STATUSES_IGNORE_OBJ as *mut MPI_Fint;

/// Fortran 2008 binding helper objects (their addresses are the sentinels).
#[no_mangle]
pub static mut MPIR_F08_MPI_STATUS_IGNORE_OBJ: MPI_F08_status =
    MPI_F08_status { count_lo: 0, count_hi_and_cancelled: 0, MPI_SOURCE: 0, MPI_TAG: 0, MPI_ERROR: 0 };
#[no_mangle]
pub static mut MPIR_F08_MPI_STATUSES_IGNORE_OBJ: [MPI_F08_status; 1] =
    [MPI_F08_status { count_lo: 0, count_hi_and_cancelled: 0, MPI_SOURCE: 0, MPI_TAG: 0, MPI_ERROR: 0 }];
#[no_mangle]
pub static mut MPIR_F08_MPI_IN_PLACE: c_int = 0;
#[no_mangle]
pub static mut MPIR_F08_MPI_BOTTOM: c_int = 0;
#[no_mangle]
pub static mut MPI_F08_STATUS_IGNORE: *mut MPI_F08_status = &raw mut MPIR_F08_MPI_STATUS_IGNORE_OBJ;
#[no_mangle]
pub static mut MPI_F08_STATUSES_IGNORE: *mut MPI_F08_status =
    &raw mut MPIR_F08_MPI_STATUSES_IGNORE_OBJ as *mut MPI_F08_status;

/// `MPI_T_PVAR_ALL_HANDLES`: a sentinel handle that is never a real pvar handle.
#[no_mangle]
pub static mut MPI_T_PVAR_ALL_HANDLES: MPI_T_pvar_handle = 1usize as MPI_T_pvar_handle;

/// Whether `p` is the `MPI_UNWEIGHTED` sentinel.
pub fn is_unweighted(p: *const c_int) -> bool {
    std::ptr::eq(p, &raw const MPIR_C_MPI_UNWEIGHTED)
}

/// Whether `p` is the `MPI_WEIGHTS_EMPTY` sentinel.
pub fn is_weights_empty(p: *const c_int) -> bool {
    std::ptr::eq(p, &raw const MPIR_C_MPI_WEIGHTS_EMPTY)
}

/// Whether `p` is `MPI_F_STATUS_IGNORE` or `MPI_F_STATUSES_IGNORE`.
pub fn is_f_status_ignore(p: *const MPI_Fint) -> bool {
    std::ptr::eq(p, &raw const MPIR_F_MPI_STATUS_IGNORE_OBJ as *const MPI_Fint)
        || std::ptr::eq(p, &raw const MPIR_F_MPI_STATUSES_IGNORE_OBJ as *const MPI_Fint)
}

/// Whether `p` is `MPI_F08_STATUS_IGNORE` or `MPI_F08_STATUSES_IGNORE`.
pub fn is_f08_status_ignore(p: *const MPI_F08_status) -> bool {
    std::ptr::eq(p, &raw const MPIR_F08_MPI_STATUS_IGNORE_OBJ)
        || std::ptr::eq(p, &raw const MPIR_F08_MPI_STATUSES_IGNORE_OBJ as *const MPI_F08_status)
}

/// The attribute copy callback behind `MPI_DUP_FN` / `MPI_COMM_DUP_FN` / `MPI_TYPE_DUP_FN` /
/// `MPI_WIN_DUP_FN`: copies the attribute value and sets `*flag = 1`.
/// (`MPIR_Dup_fn` is the name programs built against MPICH's header refer to.)
#[no_mangle]
pub unsafe extern "C" fn MPIR_Dup_fn(
    _oldobj: c_int,
    _keyval: c_int,
    _extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    if attribute_val_out.is_null() || flag.is_null() {
        return super::consts::MPI_ERR_ARG;
    }
    // SAFETY: the MPI standard makes attribute_val_out a `void **` pointing at the new
    // attribute slot and flag a valid `int *`; both were checked non-null above.
    unsafe {
        *(attribute_val_out as *mut *mut c_void) = attribute_val_in;
        *flag = 1;
    }
    super::consts::MPI_SUCCESS
}

/// `MPI_DUP_FN` (MPI-1 name): see [`MPIR_Dup_fn`].
#[no_mangle]
pub unsafe extern "C" fn MPI_DUP_FN(
    oldcomm: MPI_Comm,
    keyval: c_int,
    extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: same contract as MPIR_Dup_fn, forwarded unchanged.
    unsafe { MPIR_Dup_fn(oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, flag) }
}

/// `MPI_COMM_DUP_FN`: see [`MPIR_Dup_fn`].
#[no_mangle]
pub unsafe extern "C" fn MPI_COMM_DUP_FN(
    oldcomm: MPI_Comm,
    comm_keyval: c_int,
    extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: same contract as MPIR_Dup_fn, forwarded unchanged.
    unsafe { MPIR_Dup_fn(oldcomm, comm_keyval, extra_state, attribute_val_in, attribute_val_out, flag) }
}

/// `MPI_TYPE_DUP_FN`: see [`MPIR_Dup_fn`].
#[no_mangle]
pub unsafe extern "C" fn MPI_TYPE_DUP_FN(
    oldtype: MPI_Datatype,
    type_keyval: c_int,
    extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: same contract as MPIR_Dup_fn, forwarded unchanged.
    unsafe { MPIR_Dup_fn(oldtype, type_keyval, extra_state, attribute_val_in, attribute_val_out, flag) }
}

/// `MPI_WIN_DUP_FN`: see [`MPIR_Dup_fn`].
#[no_mangle]
pub unsafe extern "C" fn MPI_WIN_DUP_FN(
    oldwin: MPI_Win,
    win_keyval: c_int,
    extra_state: *mut c_void,
    attribute_val_in: *mut c_void,
    attribute_val_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: same contract as MPIR_Dup_fn, forwarded unchanged.
    unsafe { MPIR_Dup_fn(oldwin, win_keyval, extra_state, attribute_val_in, attribute_val_out, flag) }
}
