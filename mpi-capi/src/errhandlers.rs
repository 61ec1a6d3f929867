//! User error handlers (`MPI_Comm_create_errhandler`, `MPI_Comm_call_errhandler`) and user
//! error classes, codes and strings (`MPI_Add_error_*`).
//!
//! Handlers live in a process-wide table and are never destroyed: `MPI_Errhandler_free`
//! only nulls the user's handle, while communicators that still use the handler keep
//! working (the standard frees it "when no longer referenced").
//!
//! User classes are numbered from `FIRST_USER_CLASS` up to the 7-bit class field of our
//! error codes; a user code is its class plus a serial number above the bits that
//! `errors::make_code` uses for its message ring, so the two never collide.

use crate::abi::*;
use crate::errors::{error_class, invoke_handler, raise};
use crate::handles::{comm_index, errhandler_handle, errhandler_index};
use std::collections::BTreeMap;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

const FIRST_USER_CLASS: c_int = 80;
const LAST_USER_CLASS: c_int = 127;
/// Serial numbers of user codes start here (above the 256 message-ring slots).
const FIRST_USER_SERIAL: c_int = 0x1000;

static HANDLERS: Mutex<Vec<MPI_Comm_errhandler_function>> = Mutex::new(Vec::new());

struct UserErrors {
    next_class: c_int,
    next_serial: c_int,
    strings: BTreeMap<c_int, String>,
}

static USER_ERRORS: Mutex<UserErrors> = Mutex::new(UserErrors { next_class: FIRST_USER_CLASS, next_serial: FIRST_USER_SERIAL, strings: BTreeMap::new() });

/// Value of the `MPI_LASTUSEDCODE` attribute.
pub static LAST_USED_CODE: AtomicI32 = AtomicI32::new(FIRST_USER_CLASS - 1);

/// Whether `h` is a user error handler handle.
pub fn is_handler(h: MPI_Errhandler) -> bool {
    errhandler_index(h).is_some_and(|i| i < HANDLERS.lock().unwrap_or_else(|p| p.into_inner()).len())
}

/// Whether `h` may be attached to a communicator (all our user handlers are comm-kind;
/// windows and files do not exist yet).
pub fn is_comm_handler(h: MPI_Errhandler) -> bool {
    is_handler(h)
}

/// Calls user handler `h` as the standard says: `f(&comm, &code)`.
pub fn call_user_handler(h: MPI_Errhandler, comm: &mut MPI_Comm, code: &mut c_int) {
    let f = errhandler_index(h).and_then(|i| HANDLERS.lock().unwrap_or_else(|p| p.into_inner()).get(i).copied()).flatten();
    if let Some(f) = f {
        // SAFETY: a C function the user registered with this signature; both pointers are
        // valid for the call.
        unsafe { f(comm, code) };
    }
}

/// The string the user set for `code` (a user code or class, or a predefined class).
pub fn user_error_string(code: c_int) -> Option<String> {
    USER_ERRORS.lock().unwrap_or_else(|p| p.into_inner()).strings.get(&code).cloned()
}

fn create(func: &str, f: MPI_Comm_errhandler_function, errhandler: *mut MPI_Errhandler) -> c_int {
    if f.is_none() || errhandler.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "the handler function or the output handle is NULL");
    }
    let mut t = HANDLERS.lock().unwrap_or_else(|p| p.into_inner());
    t.push(f);
    // SAFETY: checked non-null.
    unsafe { *errhandler = errhandler_handle(t.len() - 1) };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_create_errhandler(comm_errhandler_fn: MPI_Comm_errhandler_function, errhandler: *mut MPI_Errhandler) -> c_int {
    create("MPI_Comm_create_errhandler", comm_errhandler_fn, errhandler)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Errhandler_create(comm_errhandler_fn: MPI_Comm_errhandler_function, errhandler: *mut MPI_Errhandler) -> c_int {
    create("MPI_Errhandler_create", comm_errhandler_fn, errhandler)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Errhandler_set(comm: MPI_Comm, errhandler: MPI_Errhandler) -> c_int {
    // SAFETY: same contract.
    unsafe { crate::errors::PMPI_Comm_set_errhandler(comm, errhandler) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Errhandler_get(comm: MPI_Comm, errhandler: *mut MPI_Errhandler) -> c_int {
    // SAFETY: same contract.
    unsafe { crate::errors::PMPI_Comm_get_errhandler(comm, errhandler) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_call_errhandler(comm: MPI_Comm, errorcode: c_int) -> c_int {
    let func = "MPI_Comm_call_errhandler";
    require_init!(func);
    let exists = comm_index(comm).is_some_and(|i| mpi_core::runtime::with(|rt| rt.comms.get(i).is_some()));
    if !exists {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_COMM, format!("invalid communicator {comm:#x}"));
    }
    let msg = crate::errors::error_text(errorcode);
    invoke_handler(comm, errorcode, func, &msg);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Add_error_class(errorclass: *mut c_int) -> c_int {
    if errorclass.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Add_error_class", MPI_ERR_ARG, "errorclass is NULL");
    }
    let class = {
        let mut u = USER_ERRORS.lock().unwrap_or_else(|p| p.into_inner());
        if u.next_class > LAST_USER_CLASS {
            None
        } else {
            u.next_class += 1;
            Some(u.next_class - 1)
        }
    };
    let Some(class) = class else {
        return raise(MPI_COMM_WORLD, "MPI_Add_error_class", MPI_ERR_OTHER, format!("no more user error classes (OxMPI has {})", LAST_USER_CLASS - FIRST_USER_CLASS + 1));
    };
    LAST_USED_CODE.fetch_max(class, Ordering::Relaxed);
    // SAFETY: checked non-null.
    unsafe { *errorclass = class };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Add_error_code(errorclass: c_int, errorcode: *mut c_int) -> c_int {
    let func = "MPI_Add_error_code";
    if errorcode.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "errorcode is NULL");
    }
    let code = {
        let mut u = USER_ERRORS.lock().unwrap_or_else(|p| p.into_inner());
        if !(FIRST_USER_CLASS..u.next_class).contains(&errorclass) {
            None
        } else {
            u.next_serial += 1;
            Some(errorclass | ((u.next_serial - 1) << 7))
        }
    };
    let Some(code) = code else {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, format!("{errorclass} is not a class from MPI_Add_error_class"));
    };
    LAST_USED_CODE.fetch_max(code, Ordering::Relaxed);
    // SAFETY: checked non-null.
    unsafe { *errorcode = code };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Add_error_string(errorcode: c_int, string: *const c_char) -> c_int {
    let func = "MPI_Add_error_string";
    if string.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "string is NULL");
    }
    // SAFETY: the caller passes a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(string) }.to_string_lossy().into_owned();
    if s.len() >= MPI_MAX_ERROR_STRING as usize {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, format!("string is longer than MPI_MAX_ERROR_STRING-1 ({})", MPI_MAX_ERROR_STRING - 1));
    }
    let mut u = USER_ERRORS.lock().unwrap_or_else(|p| p.into_inner());
    let class = error_class(errorcode);
    let user = (FIRST_USER_CLASS..u.next_class).contains(&class) && (errorcode == class || (errorcode >> 7) < u.next_serial);
    if !user {
        drop(u);
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, format!("{errorcode} is not a user error class or code (predefined ones keep their strings)"));
    }
    u.strings.insert(errorcode, s);
    MPI_SUCCESS
}
