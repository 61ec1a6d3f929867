//! User error handlers (`MPI_Comm_create_errhandler`, `MPI_Comm_call_errhandler`; the
//! window ones are in `window.rs`) and user error classes, codes and strings
//! (`MPI_Add_error_*`).
//!
//! Handlers live in a process-wide table and are never destroyed: `MPI_Errhandler_free`
//! only nulls the user's handle, while objects that still use the handler keep working
//! (the standard frees it "when no longer referenced"). Each handler remembers the kind of
//! object it was created for: one made for windows may not be set on a communicator, nor
//! the reverse (`MPI_ERR_ARG`, as MPICH does). The predefined handlers fit every kind.
//!
//! User classes and codes carry `DYN_BIT` (MPICH's encoding of dynamic codes), so they
//! lie above `MPI_ERR_LASTCODE` as the standard and programs expect. Each new class or code
//! takes the next value of one counter, so `MPI_LASTUSEDCODE` (the largest value in use) is
//! also the last one handed out; a table maps each to its class. A user class or code has
//! the empty string until `MPI_Add_error_string` gives it one.

use crate::abi::*;
use crate::errors::{invoke_handler, raise};
use crate::handles::{comm_index, errhandler_handle, errhandler_index};
use std::collections::BTreeMap;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

/// Bit of every user error class and code.
pub(crate) const DYN_BIT: c_int = 0x4000_0000;
/// Predefined classes are below this (the class field of our codes is 7 bits).
pub(crate) const PREDEFINED_CLASS_END: c_int = 80;

/// The kind of object a user error handler was created for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandlerKind {
    Comm,
    Win,
    File,
    Session,
}

/// The handler callbacks of every kind share one C type: the handle argument is an `int *`
/// in the MPICH ABI whatever the object (`MPI_Win_errhandler_function` is the same type).
static HANDLERS: Mutex<Vec<(HandlerKind, MPI_Comm_errhandler_function)>> = Mutex::new(Vec::new());

struct UserErrors {
    /// Low bits of the next user class or code.
    next: c_int,
    /// Every user class and code -> its class (a class maps to itself).
    class_of: BTreeMap<c_int, c_int>,
    strings: BTreeMap<c_int, String>,
}

static USER_ERRORS: Mutex<UserErrors> = Mutex::new(UserErrors { next: 1, class_of: BTreeMap::new(), strings: BTreeMap::new() });

fn user_errors() -> std::sync::MutexGuard<'static, UserErrors> {
    USER_ERRORS.lock().unwrap_or_else(|p| p.into_inner())
}

impl UserErrors {
    /// A new value mapped to `class` (itself when None); None when the values ran out.
    fn add(&mut self, class: Option<c_int>) -> Option<c_int> {
        if self.next >= DYN_BIT {
            return None;
        }
        let v = DYN_BIT | self.next;
        self.next += 1;
        self.class_of.insert(v, class.unwrap_or(v));
        LAST_USED_CODE.fetch_max(v, Ordering::Relaxed);
        Some(v)
    }
}

/// The class of user code or class `code` (`DYN_BIT` set), if it exists.
pub fn user_class_of(code: c_int) -> Option<c_int> {
    user_errors().class_of.get(&code).copied()
}

/// Value of the `MPI_LASTUSEDCODE` attribute: `MPI_ERR_LASTCODE` until a user class or
/// code exists.
pub static LAST_USED_CODE: AtomicI32 = AtomicI32::new(MPI_ERR_LASTCODE);

/// Whether `h` is a user error handler handle.
pub fn is_handler(h: MPI_Errhandler) -> bool {
    errhandler_index(h).is_some_and(|i| i < HANDLERS.lock().unwrap_or_else(|p| p.into_inner()).len())
}

/// The kind of user error handler `h`, if it is one.
pub fn handler_kind(h: MPI_Errhandler) -> Option<HandlerKind> {
    errhandler_index(h).and_then(|i| HANDLERS.lock().unwrap_or_else(|p| p.into_inner()).get(i).map(|e| e.0))
}

/// Whether `h` is a user handler that may be attached to a communicator (one created by
/// `MPI_Comm_create_errhandler` or `MPI_Errhandler_create`).
pub fn is_comm_handler(h: MPI_Errhandler) -> bool {
    handler_kind(h) == Some(HandlerKind::Comm)
}

/// Whether `h` is a user handler that may be attached to a window (`MPI_Win_create_errhandler`).
pub fn is_win_handler(h: MPI_Errhandler) -> bool {
    handler_kind(h) == Some(HandlerKind::Win)
}

/// Whether `h` is a user handler that may be attached to a file (`MPI_File_create_errhandler`).
pub fn is_file_handler(h: MPI_Errhandler) -> bool {
    handler_kind(h) == Some(HandlerKind::File)
}

/// Calls user file handler `h` as `f(&file, &code)` (files are pointers in the MPICH ABI).
pub fn call_file_handler(h: MPI_Errhandler, file: &mut MPI_File, code: &mut c_int) {
    let f = errhandler_index(h).and_then(|i| HANDLERS.lock().unwrap_or_else(|p| p.into_inner()).get(i).copied()).and_then(|e| e.1);
    if let Some(f) = f {
        // SAFETY: `MPI_File_create_errhandler` stored a `MPI_File_errhandler_function` in the
        // table's common type: same calling convention, the first argument is a pointer
        // either way. Both pointers are valid for the call.
        unsafe {
            let f: unsafe extern "C" fn(*mut MPI_File, *mut c_int, ...) = std::mem::transmute(f);
            f(file, code)
        };
    }
}

/// Calls user handler `h` as the standard says: `f(&handle, &code)`, where `handle` is the
/// communicator or window the error happened on.
pub fn call_user_handler(h: MPI_Errhandler, handle: &mut c_int, code: &mut c_int) {
    let f = errhandler_index(h).and_then(|i| HANDLERS.lock().unwrap_or_else(|p| p.into_inner()).get(i).copied()).and_then(|e| e.1);
    if let Some(f) = f {
        // SAFETY: a C function the user registered with this signature; both pointers are
        // valid for the call.
        unsafe { f(handle, code) };
    }
}

/// The string of user class or code `code` (empty until `MPI_Add_error_string`).
pub fn user_error_string(code: c_int) -> String {
    user_errors().strings.get(&code).cloned().unwrap_or_default()
}

/// Registers `f` as a new user handler for objects of `kind` and stores its handle.
pub fn create(func: &str, kind: HandlerKind, f: MPI_Comm_errhandler_function, errhandler: *mut MPI_Errhandler) -> c_int {
    if f.is_none() || errhandler.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "the handler function or the output handle is NULL");
    }
    let mut t = HANDLERS.lock().unwrap_or_else(|p| p.into_inner());
    t.push((kind, f));
    // SAFETY: checked non-null.
    unsafe { *errhandler = errhandler_handle(t.len() - 1) };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_create_errhandler(comm_errhandler_fn: MPI_Comm_errhandler_function, errhandler: *mut MPI_Errhandler) -> c_int {
    create("MPI_Comm_create_errhandler", HandlerKind::Comm, comm_errhandler_fn, errhandler)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_create_errhandler(session_errhandler_fn: MPI_Session_errhandler_function, errhandler: *mut MPI_Errhandler) -> c_int {
    // A session handler has the communicator one's C type (`MPI_Session` is an int too).
    create("MPI_Session_create_errhandler", HandlerKind::Session, session_errhandler_fn, errhandler)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Errhandler_create(comm_errhandler_fn: MPI_Comm_errhandler_function, errhandler: *mut MPI_Errhandler) -> c_int {
    create("MPI_Errhandler_create", HandlerKind::Comm, comm_errhandler_fn, errhandler)
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
    let Some(class) = user_errors().add(None) else {
        return raise(MPI_COMM_WORLD, "MPI_Add_error_class", MPI_ERR_OTHER, "no more user error classes and codes");
    };
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
    // A code may belong to a user class or to a predefined one (MPI 4.1 §9.5).
    let code = {
        let mut u = user_errors();
        let predefined = (1..PREDEFINED_CLASS_END).contains(&errorclass);
        if predefined || u.class_of.get(&errorclass) == Some(&errorclass) {
            u.add(Some(errorclass)).ok_or("no more user error classes and codes".to_string())
        } else {
            Err(format!("{errorclass} is not an error class (predefined, other than MPI_SUCCESS, or from MPI_Add_error_class)"))
        }
    };
    match code {
        Ok(code) => {
            // SAFETY: checked non-null.
            unsafe { *errorcode = code };
            MPI_SUCCESS
        }
        Err(m) => raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, m),
    }
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
    let known = {
        let mut u = user_errors();
        let known = u.class_of.contains_key(&errorcode);
        if known {
            u.strings.insert(errorcode, s);
        }
        known
    };
    if !known {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, format!("{errorcode} is not a user error class or code (predefined ones keep their strings)"));
    }
    MPI_SUCCESS
}

// ---- MPICH 4.0's MPIX_Delete_error_* (MPI 4.1's MPI_Remove_error_*) ---------------------
// Programs built against MPICH 4 call them (MPICH's own errhan/adderr does under
// MPI_VERSION >= 4). Values are never handed out again: `MPI_LASTUSEDCODE` only grows.

/// Runs `edit` on user class or code `code` (with its class) under the table's lock; a
/// value that is not a user class or code, or `edit`'s refusal, is `MPI_ERR_ARG`.
fn edit_user_error(func: &str, code: c_int, edit: impl FnOnce(&mut UserErrors, c_int) -> Result<(), String>) -> c_int {
    let r = {
        let mut u = user_errors();
        match u.class_of.get(&code).copied() {
            None => Err(format!("{code} is not a user error class or code")),
            Some(class) => edit(&mut u, class),
        }
    };
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(m) => raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, m),
    }
}

/// Forgets user class or code `code`, which must have no string left (MPI 4.1 §9.5: the
/// string is removed first, with `MPI_Remove_error_string`; MPICH and mpi4py's tests do so).
fn forget(u: &mut UserErrors, code: c_int) -> Result<(), String> {
    if u.strings.get(&code).is_some_and(|s| !s.is_empty()) {
        return Err(format!("{code} still has an error string; remove it first with MPI_Remove_error_string"));
    }
    u.class_of.remove(&code);
    u.strings.remove(&code);
    Ok(())
}

/// `MPI_Remove_error_class` (MPIX_Delete_error_class): a user class without codes left.
fn remove_class(func: &str, errorclass: c_int) -> c_int {
    edit_user_error(func, errorclass, |u, class| {
        if class != errorclass {
            return Err(format!("{errorclass} is an error code, not a class"));
        }
        match u.class_of.iter().filter(|&(&c, &k)| k == class && c != class).count() {
            0 => forget(u, errorclass),
            n => Err(format!("error class {errorclass} still has {n} error codes")),
        }
    })
}

/// `MPI_Remove_error_code` (MPIX_Delete_error_code): a user code (not a class).
fn remove_code(func: &str, errorcode: c_int) -> c_int {
    edit_user_error(func, errorcode, |u, class| {
        if class == errorcode {
            return Err(format!("{errorcode} is an error class, not a code"));
        }
        forget(u, errorcode)
    })
}

/// `MPI_Remove_error_string` (MPIX_Delete_error_string): the string of a user class or
/// code (it becomes empty again).
fn remove_string(func: &str, errorcode: c_int) -> c_int {
    edit_user_error(func, errorcode, |u, _| {
        u.strings.remove(&errorcode);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Remove_error_class(errorclass: c_int) -> c_int {
    remove_class("MPI_Remove_error_class", errorclass)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Remove_error_code(errorcode: c_int) -> c_int {
    remove_code("MPI_Remove_error_code", errorcode)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Remove_error_string(errorcode: c_int) -> c_int {
    remove_string("MPI_Remove_error_string", errorcode)
}

#[no_mangle]
pub unsafe extern "C" fn PMPIX_Delete_error_class(errorclass: c_int) -> c_int {
    remove_class("MPIX_Delete_error_class", errorclass)
}

#[no_mangle]
pub unsafe extern "C" fn PMPIX_Delete_error_code(errorcode: c_int) -> c_int {
    remove_code("MPIX_Delete_error_code", errorcode)
}

#[no_mangle]
pub unsafe extern "C" fn PMPIX_Delete_error_string(errorcode: c_int) -> c_int {
    remove_string("MPIX_Delete_error_string", errorcode)
}

#[no_mangle]
pub unsafe extern "C" fn MPIX_Delete_error_class(errorclass: c_int) -> c_int {
    // SAFETY: forwarded.
    unsafe { PMPIX_Delete_error_class(errorclass) }
}

#[no_mangle]
pub unsafe extern "C" fn MPIX_Delete_error_code(errorcode: c_int) -> c_int {
    // SAFETY: forwarded.
    unsafe { PMPIX_Delete_error_code(errorcode) }
}

#[no_mangle]
pub unsafe extern "C" fn MPIX_Delete_error_string(errorcode: c_int) -> c_int {
    // SAFETY: forwarded.
    unsafe { PMPIX_Delete_error_string(errorcode) }
}
