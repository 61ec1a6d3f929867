//! Handle conversions between C and Fortran, and address arithmetic.
//!
//! On the MPICH ABI a Fortran handle *is* the C handle, so `MPI_X_c2f`/`MPI_X_f2c` are the
//! identity; `MPI_File` is a pointer in C and an integer in Fortran (null <-> 0).
use crate::abi::statics::{is_f08_status_ignore, is_f_status_ignore};
use crate::abi::*;
use std::os::raw::c_int;

/// `MPI_Comm_c2f`: the Fortran handle equals the C handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_c2f(comm: MPI_Comm) -> MPI_Fint {
    comm
}

/// `MPI_Comm_f2c`: the C handle equals the Fortran handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_f2c(comm: MPI_Fint) -> MPI_Comm {
    comm
}

/// `MPI_Session_c2f` (MPI-4.0; a macro in MPICH's mpi.h): the Fortran handle equals the C
/// handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_c2f(session: MPI_Session) -> MPI_Fint {
    session
}

/// `MPI_Session_f2c`: the C handle equals the Fortran handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_f2c(session: MPI_Fint) -> MPI_Session {
    session
}

/// `MPI_Type_c2f`: the Fortran handle equals the C handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_c2f(datatype: MPI_Datatype) -> MPI_Fint {
    datatype
}

/// `MPI_Type_f2c`: the C handle equals the Fortran handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_f2c(datatype: MPI_Fint) -> MPI_Datatype {
    datatype
}

/// `MPI_Group_c2f`: the Fortran handle equals the C handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_c2f(group: MPI_Group) -> MPI_Fint {
    group
}

/// `MPI_Group_f2c`: the C handle equals the Fortran handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_f2c(group: MPI_Fint) -> MPI_Group {
    group
}

/// `MPI_Info_c2f`: the Fortran handle equals the C handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_c2f(info: MPI_Info) -> MPI_Fint {
    info
}

/// `MPI_Info_f2c`: the C handle equals the Fortran handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_f2c(info: MPI_Fint) -> MPI_Info {
    info
}

/// `MPI_Request_c2f`: the Fortran handle equals the C handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_c2f(request: MPI_Request) -> MPI_Fint {
    request
}

/// `MPI_Request_f2c`: the C handle equals the Fortran handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Request_f2c(request: MPI_Fint) -> MPI_Request {
    request
}

/// `MPI_Op_c2f`: the Fortran handle equals the C handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_c2f(op: MPI_Op) -> MPI_Fint {
    op
}

/// `MPI_Op_f2c`: the C handle equals the Fortran handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Op_f2c(op: MPI_Fint) -> MPI_Op {
    op
}

/// `MPI_Errhandler_c2f`: the Fortran handle equals the C handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Errhandler_c2f(errhandler: MPI_Errhandler) -> MPI_Fint {
    errhandler
}

/// `MPI_Errhandler_f2c`: the C handle equals the Fortran handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Errhandler_f2c(errhandler: MPI_Fint) -> MPI_Errhandler {
    errhandler
}

/// `MPI_Win_c2f`: the Fortran handle equals the C handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_c2f(win: MPI_Win) -> MPI_Fint {
    win
}

/// `MPI_Win_f2c`: the C handle equals the Fortran handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_f2c(win: MPI_Fint) -> MPI_Win {
    win
}

/// `MPI_Message_c2f`: the Fortran handle equals the C handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Message_c2f(message: MPI_Message) -> MPI_Fint {
    message
}

/// `MPI_Message_f2c`: the C handle equals the Fortran handle.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Message_f2c(message: MPI_Fint) -> MPI_Message {
    message
}

/// `MPI_File_c2f`: the handle value a file pointer holds (see `handles::file_index`);
/// `MPI_FILE_NULL` is 0. A pointer that is no file handle maps to 0 too.
#[no_mangle]
pub unsafe extern "C" fn PMPI_File_c2f(file: MPI_File) -> MPI_Fint {
    match crate::handles::file_index(file) {
        Some(i) => crate::handles::file_handle(i) as usize as u32 as MPI_Fint,
        None => 0,
    }
}

/// `MPI_File_f2c`: Fortran 0 is `MPI_FILE_NULL`; other values are file handle values.
#[no_mangle]
pub unsafe extern "C" fn PMPI_File_f2c(file: MPI_Fint) -> MPI_File {
    match crate::handles::file_index(file as u32 as usize as MPI_File) {
        Some(i) => crate::handles::file_handle(i),
        None => std::ptr::null_mut(),
    }
}

/// `MPI_Status_c2f`: copy the 5 status fields into a Fortran `INTEGER(MPI_STATUS_SIZE)`.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_c2f(c_status: *const MPI_Status, f_status: *mut MPI_Fint) -> c_int {
    if c_status.is_null() || f_status.is_null() || c_status as usize == 1 {
        return MPI_ERR_ARG;
    }
    // SAFETY: c_status points at an MPI_Status (checked non-null, not MPI_STATUS_IGNORE) and
    // f_status at MPI_F_STATUS_SIZE (5) integers, as the MPI standard requires of callers.
    unsafe {
        let s = &*c_status;
        let f = std::slice::from_raw_parts_mut(f_status, 5);
        f.copy_from_slice(&[s.count_lo, s.count_hi_and_cancelled, s.MPI_SOURCE, s.MPI_TAG, s.MPI_ERROR]);
    }
    MPI_SUCCESS
}

/// `MPI_Status_f2c`: copy a Fortran status (5 integers) into an `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_f2c(f_status: *const MPI_Fint, c_status: *mut MPI_Status) -> c_int {
    if f_status.is_null() || c_status.is_null() || c_status as usize == 1 {
        return MPI_ERR_ARG;
    }
    if is_f_status_ignore(f_status) {
        return MPI_ERR_ARG;
    }
    // SAFETY: f_status points at 5 integers and c_status at an MPI_Status (both checked
    // non-null and not an IGNORE sentinel), as the MPI standard requires of callers.
    unsafe {
        let f = std::slice::from_raw_parts(f_status, 5);
        *c_status = MPI_Status {
            count_lo: f[0],
            count_hi_and_cancelled: f[1],
            MPI_SOURCE: f[2],
            MPI_TAG: f[3],
            MPI_ERROR: f[4],
        };
    }
    MPI_SUCCESS
}

// ---- The C view of mpi_f08's TYPE(MPI_Status) (MPI-4.0) ----------------------------------
// MPI_F08_status has the five fields of MPI_Status in the same order, and a Fortran
// INTEGER status array holds them too: every conversion copies five integers.

/// Copies five integers from `from` to `to` when neither is null nor an IGNORE sentinel
/// (the caller says which are); MPI_ERR_ARG otherwise.
fn copy_status_fields(from: *const c_int, to: *mut c_int, ignored: bool) -> c_int {
    if from.is_null() || to.is_null() || ignored {
        return MPI_ERR_ARG;
    }
    // SAFETY: both point at a status (five integers: MPI_Status, MPI_F08_status and a
    // Fortran status array have the same layout), as the MPI standard requires of callers.
    unsafe { std::ptr::copy(from, to, 5) };
    MPI_SUCCESS
}

/// `MPI_Status_c2f08`: an `MPI_Status` into an `MPI_F08_status`.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_c2f08(c_status: *const MPI_Status, f08_status: *mut MPI_F08_status) -> c_int {
    let ignored = c_status as usize == 1 || is_f08_status_ignore(f08_status);
    copy_status_fields(c_status as *const c_int, f08_status as *mut c_int, ignored)
}

/// `MPI_Status_f082c`: an `MPI_F08_status` into an `MPI_Status`.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_f082c(f08_status: *const MPI_F08_status, c_status: *mut MPI_Status) -> c_int {
    let ignored = is_f08_status_ignore(f08_status) || c_status as usize == 1;
    copy_status_fields(f08_status as *const c_int, c_status as *mut c_int, ignored)
}

/// `MPI_Status_f082f`: an `MPI_F08_status` into a Fortran `INTEGER(MPI_STATUS_SIZE)`.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_f082f(f08_status: *const MPI_F08_status, f_status: *mut MPI_Fint) -> c_int {
    let ignored = is_f08_status_ignore(f08_status) || is_f_status_ignore(f_status);
    copy_status_fields(f08_status as *const c_int, f_status, ignored)
}

/// `MPI_Status_f2f08`: a Fortran `INTEGER(MPI_STATUS_SIZE)` into an `MPI_F08_status`.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Status_f2f08(f_status: *const MPI_Fint, f08_status: *mut MPI_F08_status) -> c_int {
    let ignored = is_f_status_ignore(f_status) || is_f08_status_ignore(f08_status);
    copy_status_fields(f_status, f08_status as *mut c_int, ignored)
}

/// `MPI_Aint_add`: `base + disp` as an address (wrapping, like C pointer arithmetic on
/// addresses).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
    base.wrapping_add(disp)
}

/// `MPI_Aint_diff`: `addr1 - addr2`.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Aint_diff(addr1: MPI_Aint, addr2: MPI_Aint) -> MPI_Aint {
    addr1.wrapping_sub(addr2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_identity() {
        // SAFETY: the conversion functions only move integers.
        unsafe {
            assert_eq!(PMPI_Comm_c2f(MPI_COMM_WORLD), MPI_COMM_WORLD);
            assert_eq!(PMPI_Type_f2c(MPI_INT), MPI_INT);
            assert_eq!(PMPI_File_c2f(std::ptr::null_mut()), 0);
            assert!(PMPI_File_f2c(0).is_null());
            assert_eq!(PMPI_Aint_add(100, -4), 96);
            let s = MPI_Status { count_lo: 7, count_hi_and_cancelled: 2, MPI_SOURCE: 3, MPI_TAG: 4, MPI_ERROR: 5 };
            let mut f08 = MPI_F08_status::default();
            let mut f = [0 as MPI_Fint; 5];
            let mut f08b = MPI_F08_status::default();
            let mut back = MPI_Status::default();
            assert_eq!(PMPI_Status_c2f08(&s, &mut f08), MPI_SUCCESS);
            assert_eq!(PMPI_Status_f082f(&f08, f.as_mut_ptr()), MPI_SUCCESS);
            assert_eq!(f, [7, 2, 3, 4, 5]);
            assert_eq!(PMPI_Status_f2f08(f.as_ptr(), &mut f08b), MPI_SUCCESS);
            assert_eq!(PMPI_Status_f082c(&f08b, &mut back), MPI_SUCCESS);
            assert_eq!((back.count_lo, back.count_hi_and_cancelled, back.MPI_SOURCE, back.MPI_TAG, back.MPI_ERROR), (7, 2, 3, 4, 5));
            assert_eq!(PMPI_Status_c2f08(std::ptr::null(), &mut f08), MPI_ERR_ARG);
            assert_eq!(PMPI_Status_f082c(crate::abi::statics::MPI_F08_STATUS_IGNORE, &mut back), MPI_ERR_ARG);
            assert_eq!(PMPI_Aint_diff(100, 4), 96);
        }
    }

    #[test]
    fn status_round_trip() {
        let s = MPI_Status { count_lo: 1, count_hi_and_cancelled: 2, MPI_SOURCE: 3, MPI_TAG: 4, MPI_ERROR: 5 };
        let mut f = [0 as MPI_Fint; 5];
        let mut back = MPI_Status::default();
        // SAFETY: valid pointers to a status and to 5 integers.
        unsafe {
            assert_eq!(PMPI_Status_c2f(&s, f.as_mut_ptr()), MPI_SUCCESS);
            assert_eq!(f, [1, 2, 3, 4, 5]);
            assert_eq!(PMPI_Status_f2c(f.as_ptr(), &mut back), MPI_SUCCESS);
        }
        assert_eq!((back.count_lo, back.MPI_ERROR), (1, 5));
    }
}
