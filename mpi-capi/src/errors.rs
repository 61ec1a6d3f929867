//! MPI error codes, messages and error handlers.
//!
//! An error code carries its class in the low 7 bits (as MPICH's do) and, above them, the
//! slot of a specific message ("invalid rank 9 (the communicator has 4 ranks)") kept in a
//! small ring, so `MPI_Error_string` can return the specific cause.

use crate::abi::*;
use crate::handles::{comm_index, win_index};
use mpi_core::error::MpiError;
use std::os::raw::{c_char, c_int};
use std::sync::Mutex;

const CLASS_MASK: c_int = 0x7f;
const SLOTS: usize = 256;

struct Messages {
    next: usize,
    text: Vec<String>,
}

static MESSAGES: Mutex<Messages> = Mutex::new(Messages { next: 0, text: Vec::new() });

/// Standard name, one-line meaning and what to do about it, for every error class.
fn class_text(class: c_int) -> (&'static str, &'static str, &'static str) {
    match class {
        MPI_SUCCESS => ("MPI_SUCCESS", "No error", ""),
        MPI_ERR_BUFFER => ("MPI_ERR_BUFFER", "Invalid buffer pointer", "pass a valid buffer (NULL only with count 0)"),
        MPI_ERR_COUNT => ("MPI_ERR_COUNT", "Invalid count argument", "counts must be non-negative"),
        MPI_ERR_TYPE => ("MPI_ERR_TYPE", "Invalid datatype argument", "use a predefined or committed datatype"),
        MPI_ERR_TAG => ("MPI_ERR_TAG", "Invalid tag argument", "tags must be between 0 and the MPI_TAG_UB attribute (MPI_ANY_TAG only for receives)"),
        MPI_ERR_COMM => ("MPI_ERR_COMM", "Invalid communicator", "pass a communicator that exists (not MPI_COMM_NULL or a freed one)"),
        MPI_ERR_RANK => ("MPI_ERR_RANK", "Invalid rank", "ranks go from 0 to size-1 of the communicator (or MPI_PROC_NULL / MPI_ANY_SOURCE where allowed)"),
        MPI_ERR_ROOT => ("MPI_ERR_ROOT", "Invalid root", "the root must be a rank of the communicator"),
        MPI_ERR_GROUP => ("MPI_ERR_GROUP", "Invalid group", "pass a group from MPI_Comm_group or a group constructor (not MPI_GROUP_NULL or a freed one)"),
        MPI_ERR_OP => ("MPI_ERR_OP", "Invalid reduce operation", "use a predefined operation valid for the datatype, or one from MPI_Op_create"),
        MPI_ERR_TOPOLOGY => ("MPI_ERR_TOPOLOGY", "Invalid topology", "call this function on a communicator with the matching topology (MPI_Topo_test tells which)"),
        MPI_ERR_DIMS => ("MPI_ERR_DIMS", "Invalid dimension argument", "dimensions must be positive and their product must fit the communicator"),
        MPI_ERR_ARG => ("MPI_ERR_ARG", "Invalid argument", "check the arguments against the MPI standard"),
        MPI_ERR_UNKNOWN => ("MPI_ERR_UNKNOWN", "Unknown error", "please report this as an OxMPI bug"),
        MPI_ERR_TRUNCATE => ("MPI_ERR_TRUNCATE", "Message truncated on receive", "post a receive buffer at least as large as the message (MPI_Probe tells its size)"),
        MPI_ERR_OTHER => ("MPI_ERR_OTHER", "Other error", "see the message for the cause"),
        MPI_ERR_INTERN => ("MPI_ERR_INTERN", "Internal error", "please report this as an OxMPI bug"),
        MPI_ERR_IN_STATUS => ("MPI_ERR_IN_STATUS", "Error code is in status", "look at the MPI_ERROR field of each status"),
        MPI_ERR_PENDING => ("MPI_ERR_PENDING", "Pending request", "the request has not completed; wait for it again"),
        MPI_ERR_REQUEST => ("MPI_ERR_REQUEST", "Invalid request", "pass a request returned by a nonblocking or persistent call (or MPI_REQUEST_NULL)"),
        MPI_ERR_ACCESS => ("MPI_ERR_ACCESS", "Permission denied", "check the file's permissions"),
        MPI_ERR_AMODE => ("MPI_ERR_AMODE", "Invalid file access mode", "combine exactly one of MPI_MODE_RDONLY/WRONLY/RDWR with compatible flags"),
        MPI_ERR_BAD_FILE => ("MPI_ERR_BAD_FILE", "Invalid file name", "check the path"),
        MPI_ERR_CONVERSION => ("MPI_ERR_CONVERSION", "Data conversion failed", "check the data representation"),
        MPI_ERR_DUP_DATAREP => ("MPI_ERR_DUP_DATAREP", "Data representation already defined", "register each data representation name once"),
        MPI_ERR_FILE_EXISTS => ("MPI_ERR_FILE_EXISTS", "File exists", "remove the file or drop MPI_MODE_EXCL"),
        MPI_ERR_FILE_IN_USE => ("MPI_ERR_FILE_IN_USE", "File in use", "close the file everywhere first"),
        MPI_ERR_FILE => ("MPI_ERR_FILE", "Invalid file handle", "pass a file opened with MPI_File_open"),
        MPI_ERR_INFO => ("MPI_ERR_INFO", "Invalid info object", "pass an info object from MPI_Info_create (or MPI_INFO_NULL where allowed)"),
        MPI_ERR_INFO_KEY => ("MPI_ERR_INFO_KEY", "Invalid info key", "keys must be non-empty and shorter than MPI_MAX_INFO_KEY"),
        MPI_ERR_INFO_VALUE => ("MPI_ERR_INFO_VALUE", "Invalid info value", "values must be shorter than MPI_MAX_INFO_VAL"),
        MPI_ERR_INFO_NOKEY => ("MPI_ERR_INFO_NOKEY", "Info key not found", "check the key with MPI_Info_get first"),
        MPI_ERR_IO => ("MPI_ERR_IO", "I/O error", "see the message for the cause"),
        MPI_ERR_NAME => ("MPI_ERR_NAME", "Service name not found", "publish the name before looking it up"),
        MPI_ERR_NO_MEM => ("MPI_ERR_NO_MEM", "Out of memory", "free memory or lower the request"),
        MPI_ERR_NOT_SAME => ("MPI_ERR_NOT_SAME", "Arguments differ between processes", "collective calls need the same arguments on every process"),
        MPI_ERR_NO_SPACE => ("MPI_ERR_NO_SPACE", "No space left", "free disk space"),
        MPI_ERR_NO_SUCH_FILE => ("MPI_ERR_NO_SUCH_FILE", "No such file", "check the path"),
        MPI_ERR_PORT => ("MPI_ERR_PORT", "Invalid port name", "pass a name from MPI_Open_port"),
        MPI_ERR_QUOTA => ("MPI_ERR_QUOTA", "Quota exceeded", "free space within your quota"),
        MPI_ERR_READ_ONLY => ("MPI_ERR_READ_ONLY", "Read-only file or file system", "open the file read-only or write elsewhere"),
        MPI_ERR_SERVICE => ("MPI_ERR_SERVICE", "Invalid service name", "unpublish only published names"),
        MPI_ERR_SPAWN => ("MPI_ERR_SPAWN", "Spawn failed", "check the command and the resources"),
        MPI_ERR_UNSUPPORTED_DATAREP => ("MPI_ERR_UNSUPPORTED_DATAREP", "Unsupported data representation", "use \"native\""),
        MPI_ERR_UNSUPPORTED_OPERATION => ("MPI_ERR_UNSUPPORTED_OPERATION", "Unsupported operation", "see docs/unsupported.md"),
        MPI_ERR_WIN => ("MPI_ERR_WIN", "Invalid window", "pass a window from a window constructor"),
        MPI_ERR_BASE => ("MPI_ERR_BASE", "Invalid base address", "pass memory from MPI_Alloc_mem"),
        MPI_ERR_LOCKTYPE => ("MPI_ERR_LOCKTYPE", "Invalid lock type", "use MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED"),
        MPI_ERR_KEYVAL => ("MPI_ERR_KEYVAL", "Invalid keyval", "pass a keyval created for this kind of object and not freed"),
        MPI_ERR_RMA_CONFLICT => ("MPI_ERR_RMA_CONFLICT", "Conflicting RMA accesses", "separate conflicting accesses with synchronisation"),
        MPI_ERR_RMA_SYNC => ("MPI_ERR_RMA_SYNC", "Wrong RMA synchronisation", "issue RMA calls inside an access epoch"),
        MPI_ERR_SIZE => ("MPI_ERR_SIZE", "Invalid size", "sizes must be non-negative"),
        MPI_ERR_DISP => ("MPI_ERR_DISP", "Invalid displacement", "displacements must be non-negative and inside the window"),
        MPI_ERR_ASSERT => ("MPI_ERR_ASSERT", "Invalid assert", "pass 0 or valid MPI_MODE_* asserts"),
        MPI_ERR_RMA_RANGE => ("MPI_ERR_RMA_RANGE", "RMA target out of range", "stay inside the target window"),
        MPI_ERR_RMA_ATTACH => ("MPI_ERR_RMA_ATTACH", "Memory cannot be attached", "attach non-overlapping memory to dynamic windows only"),
        MPI_ERR_RMA_SHARED => ("MPI_ERR_RMA_SHARED", "Memory cannot be shared", "use MPI_Win_allocate_shared on a shared-memory communicator"),
        MPI_ERR_RMA_FLAVOR => ("MPI_ERR_RMA_FLAVOR", "Wrong window flavor", "use a window of the flavor this call needs"),
        MPI_T_ERR_MEMORY => ("MPI_T_ERR_MEMORY", "Out of memory in the tool interface", "free memory"),
        MPI_T_ERR_NOT_INITIALIZED => ("MPI_T_ERR_NOT_INITIALIZED", "The tool interface is not initialized", "call MPI_T_init_thread first"),
        MPI_T_ERR_CANNOT_INIT => ("MPI_T_ERR_CANNOT_INIT", "The tool interface cannot be initialized", "see the message for the cause"),
        MPI_T_ERR_INVALID_INDEX => ("MPI_T_ERR_INVALID_INDEX", "Invalid index of a tool interface variable, category or event", "indices go from 0 to the count the MPI_T_*_get_num call gives, minus one"),
        MPI_T_ERR_INVALID_ITEM => ("MPI_T_ERR_INVALID_ITEM", "Invalid item of an enumeration", "items go from 0 to the enumeration's count, minus one"),
        MPI_T_ERR_INVALID_HANDLE => ("MPI_T_ERR_INVALID_HANDLE", "Invalid tool interface handle", "pass a handle allocated by the tool interface and not freed"),
        MPI_T_ERR_OUT_OF_HANDLES => ("MPI_T_ERR_OUT_OF_HANDLES", "No more tool interface handles", "free handles you no longer use"),
        MPI_T_ERR_OUT_OF_SESSIONS => ("MPI_T_ERR_OUT_OF_SESSIONS", "No more performance variable sessions", "free sessions you no longer use"),
        MPI_T_ERR_INVALID_SESSION => ("MPI_T_ERR_INVALID_SESSION", "Invalid performance variable session", "pass a session from MPI_T_pvar_session_create"),
        MPI_T_ERR_CVAR_SET_NOT_NOW => ("MPI_T_ERR_CVAR_SET_NOT_NOW", "The control variable cannot be set now", "set it at another time (before MPI_Init, say)"),
        MPI_T_ERR_CVAR_SET_NEVER => ("MPI_T_ERR_CVAR_SET_NEVER", "The control variable cannot be set", "it is read-only"),
        MPI_T_ERR_PVAR_NO_STARTSTOP => ("MPI_T_ERR_PVAR_NO_STARTSTOP", "The performance variable cannot be started or stopped", "it is continuous"),
        MPI_T_ERR_PVAR_NO_WRITE => ("MPI_T_ERR_PVAR_NO_WRITE", "The performance variable cannot be written or reset", "it is read-only"),
        MPI_T_ERR_PVAR_NO_ATOMIC => ("MPI_T_ERR_PVAR_NO_ATOMIC", "The performance variable cannot be read and reset atomically", "read and reset it in two calls"),
        MPI_T_ERR_INVALID_NAME => ("MPI_T_ERR_INVALID_NAME", "Invalid name of a tool interface variable, category or event", "names come from the MPI_T_*_get_info calls"),
        MPI_T_ERR_INVALID => ("MPI_T_ERR_INVALID", "Invalid use of the tool interface", "check the MPI_T call's arguments"),
        MPI_ERR_SESSION => ("MPI_ERR_SESSION", "Invalid session", "pass a session from MPI_Session_init"),
        MPI_ERR_PROC_ABORTED => ("MPI_ERR_PROC_ABORTED", "Peer process aborted", "look at the other ranks' output for the cause"),
        MPI_ERR_VALUE_TOO_LARGE => ("MPI_ERR_VALUE_TOO_LARGE", "Value too large", "use the large-count (_c / _x) variant"),
        MPI_T_ERR_NOT_SUPPORTED => ("MPI_T_ERR_NOT_SUPPORTED", "Not supported by the tool interface", "see docs/unsupported.md"),
        _ => ("MPI_ERR_UNKNOWN", "Unknown error class", "pass an error code returned by MPI"),
    }
}

/// An error code for `class` whose `MPI_Error_string` is `msg`.
pub fn make_code(class: c_int, msg: String) -> c_int {
    let mut m = MESSAGES.lock().unwrap_or_else(|p| p.into_inner());
    let slot = m.next % SLOTS;
    m.next += 1;
    if m.text.len() < SLOTS {
        m.text.push(msg);
    } else {
        m.text[slot] = msg;
    }
    class | (((slot + 1) as c_int) << 7)
}

/// Whether `code` is an MPI error code: a predefined class, a code this library made (its
/// message slot is in use), or a user class or code.
pub fn is_error_code(code: c_int) -> bool {
    if code <= 0 {
        return false;
    }
    if code & crate::errhandlers::DYN_BIT != 0 {
        return crate::errhandlers::user_class_of(code).is_some();
    }
    let slot = (code >> 7) as usize;
    (1..crate::errhandlers::PREDEFINED_CLASS_END).contains(&(code & CLASS_MASK)) && slot <= MESSAGES.lock().unwrap_or_else(|p| p.into_inner()).text.len()
}

pub fn error_class(code: c_int) -> c_int {
    if code > 0 && code & crate::errhandlers::DYN_BIT != 0 {
        return crate::errhandlers::user_class_of(code).unwrap_or(MPI_ERR_UNKNOWN);
    }
    code & CLASS_MASK
}

/// The text of `code`: its specific message if still remembered, else the class's.
pub fn error_text(code: c_int) -> String {
    if code >= 0 && code & crate::errhandlers::DYN_BIT != 0 {
        return crate::errhandlers::user_error_string(code);
    }
    let slot = (code >> 7) as usize;
    let (name, generic, _) = class_text(error_class(code));
    if slot > 0 {
        let m = MESSAGES.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = m.text.get(slot - 1) {
            return format!("{t} ({name})");
        }
    }
    format!("{generic} ({name})")
}

/// Raises an error in `func` on `comm`: runs the communicator's error handler (see
/// `DEFAULT_ERRHANDLER`) and returns the code for `MPI_ERRORS_RETURN` and user handlers. Must be called
/// without the runtime lock held.
pub fn raise(comm: MPI_Comm, func: &str, class: c_int, msg: impl Into<String>) -> c_int {
    let msg = msg.into();
    // MPI_ERR_IN_STATUS is returned as itself (MPI 4.1 §3.7.5: the multiple-completion calls
    // "return the error code MPI_ERR_IN_STATUS"): programs compare with it, so it carries
    // no message slot; the handler still gets the message.
    let code = if class == MPI_ERR_IN_STATUS { class } else { make_code(class, format!("{func}: {msg}")) };
    invoke_handler(comm, code, func, &msg)
}

/// The handler of a communicator or window whose handler was never set (all of them start
/// so, and copies inherit it). As in MPICH, where such an object has no handler, an error
/// on it runs `MPI_COMM_WORLD`'s handler of the moment: `MPI_Comm_set_errhandler(
/// MPI_COMM_WORLD, MPI_ERRORS_RETURN)` also governs communicators duplicated or split from
/// it earlier, and windows (MPICH's errors/comm/*_nullarg and errors/attr/keyvalmis rely on
/// it; MPI 4.1 §9.3 would have a copy keep `MPI_ERRORS_ARE_FATAL`). `MPI_Comm_get_errhandler`
/// reports it as `MPI_ERRORS_ARE_FATAL`, as MPICH does. Users cannot set it: it is
/// `MPI_ERRHANDLER_NULL`, which `MPI_Comm_set_errhandler` refuses.
pub(crate) const DEFAULT_ERRHANDLER: MPI_Errhandler = MPI_ERRHANDLER_NULL;

/// What `MPI_Comm_get_errhandler` / `MPI_Win_get_errhandler` report for stored handler `h`.
pub fn reported_handler(h: MPI_Errhandler) -> MPI_Errhandler {
    if h == DEFAULT_ERRHANDLER {
        MPI_ERRORS_ARE_FATAL
    } else {
        h
    }
}

/// The error handler that runs for an error on `comm` (`MPI_COMM_WORLD`'s for an invalid
/// handle or an unset handler) and the communicator a user handler is called with, if MPI
/// is up.
pub fn handler_of(comm: MPI_Comm) -> Option<(MPI_Errhandler, MPI_Comm)> {
    if !mpi_core::runtime::is_active() {
        return None;
    }
    let g = mpi_core::runtime::lock();
    let rt = g.as_ref()?;
    let world = rt.comms.get(mpi_core::comm::WORLD).map_or(DEFAULT_ERRHANDLER, |c| c.errhandler);
    let own = comm_index(comm).and_then(|i| rt.comms.get(i)).map(|c| c.errhandler);
    Some(match own {
        Some(h) if h != DEFAULT_ERRHANDLER => (h, comm),
        _ => (reported_handler(world), MPI_COMM_WORLD),
    })
}

/// Runs `comm`'s error handler for `code`: returns `code` unless the handler is fatal.
pub fn invoke_handler(comm: MPI_Comm, code: c_int, func: &str, msg: &str) -> c_int {
    match handler_of(comm) {
        Some((MPI_ERRORS_RETURN, _)) => code,
        Some((h, mut c)) if crate::handles::errhandler_index(h).is_some() => {
            let mut e = code;
            crate::errhandlers::call_user_handler(h, &mut c, &mut e);
            code
        }
        _ => fatal(func, error_class(code), msg),
    }
}

/// Raises an engine error (class and message) in `func` on `comm`.
pub fn raise_core(comm: MPI_Comm, func: &str, e: MpiError) -> c_int {
    raise(comm, func, e.class as c_int, e.msg)
}

/// The error handler of window `win`, or None when `win` is not a live window (or MPI is
/// not up).
pub fn win_handler_of(win: MPI_Win) -> Option<MPI_Errhandler> {
    if !mpi_core::runtime::is_active() {
        return None;
    }
    let idx = win_index(win)?;
    let g = mpi_core::runtime::lock();
    g.as_ref().and_then(|rt| rt.wins.get(idx)).map(|w| w.errhandler)
}

/// Raises an error in `func` on window `win`: runs the window's error handler (that of
/// `MPI_COMM_WORLD` until the user sets one, see `DEFAULT_ERRHANDLER`) and returns the code for
/// `MPI_ERRORS_RETURN` and user handlers. An invalid window handle is an `MPI_ERR_WIN`
/// raised on `MPI_COMM_WORLD`'s handler, the only one left to run. Must be called without
/// the runtime lock held.
pub fn raise_win(win: MPI_Win, func: &str, class: c_int, msg: impl Into<String>) -> c_int {
    let msg = msg.into();
    if win_handler_of(win).is_none() {
        let msg = match (class, win) {
            (MPI_ERR_WIN, _) => msg,
            (_, MPI_WIN_NULL) => "the window is MPI_WIN_NULL".to_string(),
            _ => format!("invalid window {win:#x} (not a window, or freed)"),
        };
        return raise(MPI_COMM_WORLD, func, MPI_ERR_WIN, msg);
    }
    let code = make_code(class, format!("{func}: {msg}"));
    invoke_win_handler(win, code, func, &msg)
}

/// Raises an engine error (class and message) in `func` on window `win`.
pub fn raise_win_core(win: MPI_Win, func: &str, e: MpiError) -> c_int {
    raise_win(win, func, e.class as c_int, e.msg)
}

/// Runs window `win`'s error handler for `code`: returns `code` unless the handler is fatal.
/// A user handler is called as `f(&win, &code)`; a window whose handler was never set runs
/// `MPI_COMM_WORLD`'s (`DEFAULT_ERRHANDLER`). `win` must be a live window (else the fatal
/// handler runs).
pub fn invoke_win_handler(win: MPI_Win, code: c_int, func: &str, msg: &str) -> c_int {
    match win_handler_of(win) {
        Some(DEFAULT_ERRHANDLER) => invoke_handler(MPI_COMM_WORLD, code, func, msg),
        Some(MPI_ERRORS_RETURN) => code,
        Some(h) if crate::handles::errhandler_index(h).is_some() => {
            let mut w = win;
            let mut e = code;
            crate::errhandlers::call_user_handler(h, &mut w, &mut e);
            code
        }
        _ => fatal(func, error_class(code), msg),
    }
}

/// `MPI_ERRORS_ARE_FATAL`: one line of cause, one line of what to do, then abort the job.
pub(crate) fn fatal(func: &str, class: c_int, msg: &str) -> ! {
    let (name, _, fix) = class_text(class);
    let rank = rank_for_messages();
    mpi_core::say!("OxMPI: fatal error in {func} on rank {rank}: {msg} [{name}]");
    if !fix.is_empty() {
        mpi_core::say!("OxMPI: fix: {fix}; or install MPI_ERRORS_RETURN to handle errors yourself");
    }
    mpi_core::runtime::abort(1, &format!("fatal error in {func}: {msg}"))
}

fn rank_for_messages() -> String {
    std::env::var("PMI_RANK").unwrap_or_else(|_| "0".into())
}

/// Report that `name` (e.g. "MPI_Comm_spawn") is declared but not implemented: returns
/// `MPI_ERR_OTHER` with the message "MPI_Xxx is not supported by OxMPI yet" through the
/// error handler of `comm` (`MPI_COMM_WORLD`'s when the function has no communicator).
pub fn not_supported(comm: MPI_Comm, name: &'static str) -> c_int {
    raise(comm, name, MPI_ERR_OTHER, format!("{name} is not supported by OxMPI yet"))
}

/// Fails a call made before `MPI_Init` or after `MPI_Finalize` (no error handler exists).
pub fn not_initialized(func: &str) -> c_int {
    let when = if mpi_core::runtime::is_finalized() { "after MPI_Finalize" } else { "before MPI_Init" };
    mpi_core::say!("OxMPI: {func} called {when}; call MPI_Init first and make all MPI calls before MPI_Finalize");
    std::process::exit(1)
}

/// Copies `s` into a C buffer of `cap` bytes (NUL-terminated), returning the length written.
///
/// # Safety
/// `out` must be valid for writes of `cap` bytes.
pub unsafe fn write_c_string(out: *mut c_char, cap: usize, s: &str) -> c_int {
    let n = s.len().min(cap.saturating_sub(1));
    // SAFETY: n + 1 ≤ cap bytes are written to `out`.
    unsafe {
        std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, out, n);
        *out.add(n) = 0;
    }
    n as c_int
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Error_class(errorcode: c_int, errorclass: *mut c_int) -> c_int {
    if errorclass.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Error_class", MPI_ERR_ARG, "errorclass is NULL");
    }
    if !valid_code(errorcode) {
        return raise(MPI_COMM_WORLD, "MPI_Error_class", MPI_ERR_ARG, format!("invalid error code {errorcode} (not returned by MPI nor added with MPI_Add_error_code or MPI_Add_error_class)"));
    }
    // SAFETY: checked non-null; the caller provides an int.
    unsafe { *errorclass = error_class(errorcode) };
    MPI_SUCCESS
}

/// Codes `MPI_Error_class` and `MPI_Error_string` accept: `MPI_SUCCESS`, `MPI_ERR_LASTCODE`,
/// user classes and codes, and any code of this library's form (a predefined class and a
/// message slot of the ring), also one made by another process and passed along (an
/// allreduce of return codes): its slot may hold nothing here, and the class's text is
/// used. Anything else was decoded into an arbitrary class before (999999 read as a
/// tool-interface error); MPICH does the same, Open MPI reports `MPI_ERR_ARG`, as we do now.
fn valid_code(code: c_int) -> bool {
    // A bare class value (no message slot) reads as itself, as before: mpi4py's PyPI wheel
    // passes its own ABI's class numbers (80 and up) and expects them back.
    if code == MPI_SUCCESS || code == MPI_ERR_LASTCODE || (1..=CLASS_MASK).contains(&code) {
        return true;
    }
    if code > 0 && code & crate::errhandlers::DYN_BIT == 0 {
        return (1..crate::errhandlers::PREDEFINED_CLASS_END).contains(&(code & CLASS_MASK)) && (code >> 7) as usize <= SLOTS;
    }
    is_error_code(code)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Error_string(errorcode: c_int, string: *mut c_char, resultlen: *mut c_int) -> c_int {
    if string.is_null() || resultlen.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Error_string", MPI_ERR_ARG, "string or resultlen is NULL");
    }
    if !valid_code(errorcode) {
        return raise(MPI_COMM_WORLD, "MPI_Error_string", MPI_ERR_ARG, format!("invalid error code {errorcode} (not returned by MPI nor added with MPI_Add_error_code or MPI_Add_error_class)"));
    }
    let text = if errorcode == MPI_SUCCESS { "No error (MPI_SUCCESS)".to_string() } else { error_text(errorcode) };
    // SAFETY: the standard requires a buffer of MPI_MAX_ERROR_STRING bytes.
    unsafe { *resultlen = write_c_string(string, MPI_MAX_ERROR_STRING as usize, &text) };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_set_errhandler(comm: MPI_Comm, errhandler: MPI_Errhandler) -> c_int {
    if !(mpi_core::runtime::is_initialized() || mpi_core::runtime::is_active()) {
        return not_initialized("MPI_Comm_set_errhandler");
    }
    if !matches!(errhandler, MPI_ERRORS_ARE_FATAL | MPI_ERRORS_RETURN | MPI_ERRORS_ABORT) && !crate::errhandlers::is_comm_handler(errhandler) {
        let msg = if crate::errhandlers::is_handler(errhandler) {
            format!("error handler {errhandler:#x} was not created for communicators (use MPI_Comm_create_errhandler)")
        } else {
            format!("invalid error handler {errhandler:#x}")
        };
        return raise(comm, "MPI_Comm_set_errhandler", MPI_ERR_ARG, msg);
    }
    let ok = {
        let mut g = mpi_core::runtime::lock();
        match (g.as_mut(), comm_index(comm)) {
            (Some(rt), Some(i)) => rt.comms.get_mut(i).map(|c| c.errhandler = errhandler).is_some(),
            _ => false,
        }
    };
    if ok {
        MPI_SUCCESS
    } else {
        raise(MPI_COMM_WORLD, "MPI_Comm_set_errhandler", MPI_ERR_COMM, format!("invalid communicator {comm:#x}"))
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_get_errhandler(comm: MPI_Comm, errhandler: *mut MPI_Errhandler) -> c_int {
    if !(mpi_core::runtime::is_initialized() || mpi_core::runtime::is_active()) {
        return not_initialized("MPI_Comm_get_errhandler");
    }
    let h = {
        let g = mpi_core::runtime::lock();
        g.as_ref().and_then(|rt| comm_index(comm).and_then(|i| rt.comms.get(i)).map(|c| reported_handler(c.errhandler)))
    };
    match h {
        Some(h) if !errhandler.is_null() => {
            // SAFETY: checked non-null.
            unsafe { *errhandler = h };
            MPI_SUCCESS
        }
        Some(_) => raise(comm, "MPI_Comm_get_errhandler", MPI_ERR_ARG, "errhandler is NULL"),
        None => raise(MPI_COMM_WORLD, "MPI_Comm_get_errhandler", MPI_ERR_COMM, format!("invalid communicator {comm:#x}")),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Errhandler_free(errhandler: *mut MPI_Errhandler) -> c_int {
    if errhandler.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Errhandler_free", MPI_ERR_ARG, "errhandler is NULL");
    }
    // Handlers are never destroyed (a communicator may still use a freed one, which the
    // standard allows); the handle is set to null as the standard says.
    // SAFETY: checked non-null.
    let h = unsafe { *errhandler };
    if !matches!(h, MPI_ERRORS_ARE_FATAL | MPI_ERRORS_RETURN | MPI_ERRORS_ABORT) && !crate::errhandlers::is_handler(h) {
        return raise(MPI_COMM_WORLD, "MPI_Errhandler_free", MPI_ERR_ARG, format!("invalid error handler {h:#x}"));
    }
    // SAFETY: checked non-null.
    unsafe { *errhandler = MPI_ERRHANDLER_NULL };
    MPI_SUCCESS
}
