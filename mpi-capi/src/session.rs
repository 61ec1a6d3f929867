//! MPI-4.0 sessions (§11.3): `MPI_Session_init`/`finalize`, the process-set queries, groups
//! from process sets, and session error handlers. The communicator constructors that take
//! a group instead of a parent (`MPI_Comm_create_from_group`, ...) are in `comm.rs`.
//!
//! A session holds the engine up (`mpi_core::runtime::session_init`), as the World model
//! does between `MPI_Init` and `MPI_Finalize`. The process sets are the two the standard
//! requires, "mpi://WORLD" and "mpi://SELF", matched without regard to case (as MPICH
//! does: its tests ask for "mpi://self").

use crate::abi::*;
use crate::errhandlers::{call_user_handler, handler_kind, HandlerKind};
use crate::errors::{fatal, make_code, raise, write_c_string};
use crate::handles::{errhandler_index, session_handle, session_index};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::{Arc, Mutex, MutexGuard};

struct Session {
    errhandler: MPI_Errhandler,
    /// The thread level provided to the session (its `thread_level` info key).
    thread_level: c_int,
    /// Its `mpi_memory_alloc_kinds` info value: the kinds asked for that OxMPI supports.
    alloc_kinds: String,
}

static SESSIONS: Mutex<Vec<Option<Session>>> = Mutex::new(Vec::new());

fn table() -> MutexGuard<'static, Vec<Option<Session>>> {
    SESSIONS.lock().unwrap_or_else(|p| p.into_inner())
}

const PSETS: [&str; 2] = ["mpi://WORLD", "mpi://SELF"];
const THREAD_LEVELS: [&str; 4] = ["MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"];

/// The error handler of session `s`, if it is live.
fn handler_of(s: MPI_Session) -> Option<MPI_Errhandler> {
    session_index(s).and_then(|i| table().get(i).and_then(|e| e.as_ref()).map(|e| e.errhandler))
}

/// Runs error handler `h` for `code` raised on session `s`: returns `code` unless `h` is
/// fatal. A user handler is called as `f(&session, &code)`.
fn invoke(h: MPI_Errhandler, mut s: MPI_Session, code: c_int, func: &str, msg: &str) -> c_int {
    match h {
        MPI_ERRORS_RETURN => code,
        _ if errhandler_index(h).is_some() => {
            let mut e = code;
            call_user_handler(h, &mut s, &mut e);
            code
        }
        _ => fatal(func, crate::errors::error_class(code), msg),
    }
}

/// Raises an error in `func` on session `s`: its handler runs. An invalid session is an
/// `MPI_ERR_SESSION` raised on `MPI_COMM_WORLD`'s handler, the only one left.
pub(crate) fn raise_session(s: MPI_Session, func: &str, class: c_int, msg: impl Into<String>) -> c_int {
    let msg = msg.into();
    match handler_of(s) {
        Some(h) => invoke(h, s, make_code(class, format!("{func}: {msg}")), func, &msg),
        None => raise(MPI_COMM_WORLD, func, MPI_ERR_SESSION, invalid(s)),
    }
}

fn invalid(s: MPI_Session) -> String {
    if s == MPI_SESSION_NULL {
        "the session is MPI_SESSION_NULL".into()
    } else {
        format!("invalid session {s:#x} (not from MPI_Session_init, or finalized)")
    }
}

/// Checks that `s` is a live session: Err(the error code raised) otherwise.
pub(crate) fn check(s: MPI_Session, func: &str) -> Result<(), c_int> {
    match handler_of(s) {
        Some(_) => Ok(()),
        None => Err(raise(MPI_COMM_WORLD, func, MPI_ERR_SESSION, invalid(s))),
    }
}

/// Whether `h` may be attached to a session: a predefined handler or one from
/// `MPI_Session_create_errhandler`.
fn session_handler_ok(h: MPI_Errhandler) -> bool {
    matches!(h, MPI_ERRORS_ARE_FATAL | MPI_ERRORS_RETURN | MPI_ERRORS_ABORT) || handler_kind(h) == Some(HandlerKind::Session)
}

/// A C string argument; None for NULL.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
unsafe fn c_str(p: *const c_char) -> Option<String> {
    // SAFETY: per the function contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// The world ranks of process set `name` (case-insensitive), if it exists.
fn pset_members(name: &str) -> Option<Arc<[usize]>> {
    let (rank, size) = mpi_core::runtime::with(|rt| rt.comms.get(mpi_core::comm::WORLD).map(|c| (c.rank, c.size())))?;
    if name.eq_ignore_ascii_case(PSETS[0]) {
        Some((0..size).collect())
    } else if name.eq_ignore_ascii_case(PSETS[1]) {
        Some(Arc::new([rank]))
    } else {
        None
    }
}

/// The members of process set `name` on session `s`, or the error raised.
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string.
unsafe fn pset_arg(s: MPI_Session, func: &str, name: *const c_char) -> Result<Arc<[usize]>, c_int> {
    check(s, func)?;
    // SAFETY: per the function contract.
    let Some(name) = (unsafe { c_str(name) }) else {
        return Err(raise_session(s, func, MPI_ERR_ARG, "pset_name is NULL"));
    };
    pset_members(&name).ok_or_else(|| raise_session(s, func, MPI_ERR_ARG, format!("unknown process set \"{name}\" (OxMPI has \"mpi://WORLD\" and \"mpi://SELF\")")))
}

/// Checks the info argument of the process-set queries (it is not used).
fn info_arg(s: MPI_Session, func: &str, info: MPI_Info) -> Result<(), c_int> {
    match crate::info::pairs(info) {
        Some(_) => Ok(()),
        None => Err(raise_session(s, func, MPI_ERR_INFO, format!("invalid info handle {info:#x}"))),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_init(info: MPI_Info, errhandler: MPI_Errhandler, session: *mut MPI_Session) -> c_int {
    let func = "MPI_Session_init";
    // Before a session exists only the given handler can report (a bad one: the fatal one).
    let fail = |class: c_int, msg: String| {
        let h = if session_handler_ok(errhandler) { errhandler } else { MPI_ERRORS_ARE_FATAL };
        invoke(h, MPI_SESSION_NULL, make_code(class, format!("{func}: {msg}")), func, &msg)
    };
    if session.is_null() {
        return fail(MPI_ERR_ARG, "session is NULL".into());
    }
    if !session_handler_ok(errhandler) {
        return fail(MPI_ERR_ARG, format!("invalid error handler {errhandler:#x} (use a predefined one or one from MPI_Session_create_errhandler)"));
    }
    let Some(pairs) = crate::info::pairs(info) else {
        return fail(MPI_ERR_INFO, format!("invalid info handle {info:#x}"));
    };
    // The "thread_level" key asks for a level (MPI 4.0 §11.3.1); an unknown value is ignored.
    let wanted = pairs.iter().find(|(k, _)| k == "thread_level").and_then(|(_, v)| THREAD_LEVELS.iter().position(|l| l.eq_ignore_ascii_case(v.trim()))).unwrap_or(0) as c_int;
    let provided = match mpi_core::runtime::session_init(wanted, crate::errors::DEFAULT_ERRHANDLER) {
        Ok(l) => l,
        Err(msg) => return fail(MPI_ERR_OTHER, msg),
    };
    let requested_kinds = pairs.iter().find(|(k, _)| k == crate::info::MEMORY_ALLOC_KINDS_KEY).map(|(_, v)| v.as_str());
    let alloc_kinds = crate::info::memory_alloc_kinds(requested_kinds);
    let s = Session { errhandler, thread_level: provided.clamp(MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE), alloc_kinds };
    let idx = crate::handles::store_in_free_slot(&mut table(), s);
    // SAFETY: checked non-null.
    unsafe { *session = session_handle(idx) };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_finalize(session: *mut MPI_Session) -> c_int {
    let func = "MPI_Session_finalize";
    if session.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "session is NULL");
    }
    // SAFETY: checked non-null.
    let s = unsafe { *session };
    if let Err(rc) = check(s, func) {
        return rc;
    }
    // Objects derived from the session are the user's to free (MPI 4.0 §11.3.1): they are
    // left as they are. Its buffer for buffered sends is detached once its messages left.
    if let Some(i) = session_index(s) {
        crate::bsend::detach_owner(mpi_core::bsend::Owner::Session(i as u32));
    }
    let removed = session_index(s).and_then(|i| table().get_mut(i).and_then(|e| e.take()));
    if removed.is_some() {
        mpi_core::runtime::session_finalize();
    }
    // SAFETY: checked non-null.
    unsafe { *session = MPI_SESSION_NULL };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_get_num_psets(session: MPI_Session, info: MPI_Info, npset_names: *mut c_int) -> c_int {
    let func = "MPI_Session_get_num_psets";
    if let Err(rc) = check(session, func).and_then(|_| info_arg(session, func, info)) {
        return rc;
    }
    if npset_names.is_null() {
        return raise_session(session, func, MPI_ERR_ARG, "npset_names is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *npset_names = PSETS.len() as c_int };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_get_nth_pset(session: MPI_Session, info: MPI_Info, n: c_int, pset_len: *mut c_int, pset_name: *mut c_char) -> c_int {
    let func = "MPI_Session_get_nth_pset";
    if let Err(rc) = check(session, func).and_then(|_| info_arg(session, func, info)) {
        return rc;
    }
    let Some(name) = usize::try_from(n).ok().and_then(|i| PSETS.get(i)) else {
        return raise_session(session, func, MPI_ERR_ARG, format!("invalid process set number {n} (there are {})", PSETS.len()));
    };
    if pset_len.is_null() {
        return raise_session(session, func, MPI_ERR_ARG, "pset_len is NULL");
    }
    // SAFETY: checked non-null.
    let cap = unsafe { *pset_len };
    // With a length of 0 only the length is returned (MPI 4.0 §11.3.2); else the name, cut
    // to `cap - 1` characters.
    if cap > 0 && !pset_name.is_null() {
        // SAFETY: the caller provides `cap` bytes at `pset_name`.
        unsafe { write_c_string(pset_name, cap as usize, name) };
    }
    // SAFETY: checked non-null.
    unsafe { *pset_len = name.len() as c_int + 1 };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_get_info(session: MPI_Session, info_used: *mut MPI_Info) -> c_int {
    let func = "MPI_Session_get_info";
    if let Err(rc) = check(session, func) {
        return rc;
    }
    if info_used.is_null() {
        return raise_session(session, func, MPI_ERR_ARG, "info_used is NULL");
    }
    let (level, kinds) = session_index(session).and_then(|i| table().get(i).and_then(|e| e.as_ref()).map(|e| (e.thread_level, e.alloc_kinds.clone()))).unwrap_or((MPI_THREAD_SINGLE, crate::info::memory_alloc_kinds(None)));
    let pairs = vec![("thread_level".to_string(), THREAD_LEVELS[level as usize].to_string()), (crate::info::MEMORY_ALLOC_KINDS_KEY.to_string(), kinds)];
    // SAFETY: checked non-null.
    unsafe { *info_used = crate::info::new_info(pairs) };
    MPI_SUCCESS
}

/// The body of the process-set lookups: `make` turns the set's members into the handle
/// stored through `out`.
///
/// # Safety
/// `pset_name` must be NULL or a NUL-terminated string, `out` NULL or valid for a write.
unsafe fn from_pset<T>(func: &str, session: MPI_Session, pset_name: *const c_char, out: *mut T, make: impl FnOnce(Arc<[usize]>) -> T) -> c_int {
    // SAFETY: per the function contract.
    let members = match unsafe { pset_arg(session, func, pset_name) } {
        Ok(m) => m,
        Err(rc) => return rc,
    };
    if out.is_null() {
        return raise_session(session, func, MPI_ERR_ARG, "the output argument is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *out = make(members) };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_get_pset_info(session: MPI_Session, pset_name: *const c_char, info: *mut MPI_Info) -> c_int {
    // SAFETY: same contract.
    unsafe { from_pset("MPI_Session_get_pset_info", session, pset_name, info, |m| crate::info::new_info(vec![("mpi_size".to_string(), m.len().to_string())])) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_from_session_pset(session: MPI_Session, pset_name: *const c_char, newgroup: *mut MPI_Group) -> c_int {
    let id = session_index(session).map(|i| i as u32);
    // SAFETY: same contract.
    unsafe { from_pset("MPI_Group_from_session_pset", session, pset_name, newgroup, |m| crate::group::new_group_in(m, id)) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_set_errhandler(session: MPI_Session, errhandler: MPI_Errhandler) -> c_int {
    let func = "MPI_Session_set_errhandler";
    if let Err(rc) = check(session, func) {
        return rc;
    }
    if !session_handler_ok(errhandler) {
        return raise_session(session, func, MPI_ERR_ARG, format!("error handler {errhandler:#x} cannot be set on a session (use a predefined one or one from MPI_Session_create_errhandler)"));
    }
    let mut t = table();
    if let Some(e) = session_index(session).and_then(|i| t.get_mut(i)).and_then(|e| e.as_mut()) {
        e.errhandler = errhandler;
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_get_errhandler(session: MPI_Session, errhandler: *mut MPI_Errhandler) -> c_int {
    let func = "MPI_Session_get_errhandler";
    let Some(h) = handler_of(session) else {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_SESSION, invalid(session));
    };
    if errhandler.is_null() {
        return raise_session(session, func, MPI_ERR_ARG, "errhandler is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *errhandler = h };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Session_call_errhandler(session: MPI_Session, errorcode: c_int) -> c_int {
    let func = "MPI_Session_call_errhandler";
    let Some(h) = handler_of(session) else {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_SESSION, invalid(session));
    };
    invoke(h, session, errorcode, func, &crate::errors::error_text(errorcode));
    MPI_SUCCESS
}
