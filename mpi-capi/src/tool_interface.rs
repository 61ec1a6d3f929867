//! The MPI tool information interface (`MPI_T_*`) and `MPI_Pcontrol`.
//!
//! A real but empty implementation: OxMPI exposes no control variables, performance
//! variables, categories, events or event sources (MPI-4.0) yet. Initialisation is reference counted, counts are 0, every
//! index is invalid, and performance-variable sessions can be created and freed (tools do
//! that unconditionally). Every call returns an `MPI_T_ERR_*` class rather than crashing.
//! MPI_T functions return their error codes directly; they never invoke error handlers.
use crate::abi::*;
use std::collections::BTreeSet;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Mutex;

struct State {
    /// Number of `MPI_T_init_thread` calls not yet matched by `MPI_T_finalize`.
    init_count: u64,
    /// Live performance-variable sessions (addresses of leaked boxes).
    sessions: BTreeSet<usize>,
}

static STATE: Mutex<State> = Mutex::new(State { init_count: 0, sessions: BTreeSet::new() });

fn state() -> std::sync::MutexGuard<'static, State> {
    // A panic while holding the lock cannot leave State inconsistent; keep going.
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// `MPI_T_ERR_NOT_INITIALIZED` unless the interface is initialised.
fn check_init() -> Result<(), c_int> {
    if state().init_count == 0 {
        Err(MPI_T_ERR_NOT_INITIALIZED)
    } else {
        Ok(())
    }
}

fn check_session(session: MPI_T_pvar_session) -> Result<(), c_int> {
    let st = state();
    if st.init_count == 0 {
        return Err(MPI_T_ERR_NOT_INITIALIZED);
    }
    if session.is_null() || !st.sessions.contains(&(session as usize)) {
        return Err(MPI_T_ERR_INVALID_SESSION);
    }
    Ok(())
}

fn code(r: Result<(), c_int>) -> c_int {
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(e) => e,
    }
}

/// Store `value` through `out` (an `int *` argument), or report a bad argument.
fn put_int(out: *mut c_int, value: c_int) -> Result<(), c_int> {
    if out.is_null() {
        return Err(MPI_T_ERR_INVALID);
    }
    // SAFETY: `out` is a non-null `int *` output argument supplied by the caller.
    unsafe { *out = value };
    Ok(())
}

fn is_all_handles(handle: MPI_T_pvar_handle) -> bool {
    // SAFETY: reading the value of an exported static that nobody writes.
    handle == unsafe { crate::abi::statics::MPI_T_PVAR_ALL_HANDLES }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_init_thread(required: c_int, provided: *mut c_int) -> c_int {
    if !(MPI_THREAD_SINGLE..=MPI_THREAD_MULTIPLE).contains(&required) {
        return MPI_T_ERR_INVALID;
    }
    if let Err(e) = put_int(provided, MPI_THREAD_MULTIPLE) {
        return e;
    }
    state().init_count += 1;
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_finalize() -> c_int {
    let mut st = state();
    if st.init_count == 0 {
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    st.init_count -= 1;
    if st.init_count == 0 {
        for addr in std::mem::take(&mut st.sessions) {
            // SAFETY: every address in `sessions` came from Box::into_raw in
            // PMPI_T_pvar_session_create and is removed from the set before being freed.
            drop(unsafe { Box::from_raw(addr as *mut u8) });
        }
    }
    MPI_SUCCESS
}

// ---- Counts and lookups: there are no variables or categories ---------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_cvar_get_num(num_cvar: *mut c_int) -> c_int {
    code(check_init().and_then(|_| put_int(num_cvar, 0)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_get_num(num_pvar: *mut c_int) -> c_int {
    code(check_init().and_then(|_| put_int(num_pvar, 0)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_num(num_cat: *mut c_int) -> c_int {
    code(check_init().and_then(|_| put_int(num_cat, 0)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_changed(update_number: *mut c_int) -> c_int {
    code(check_init().and_then(|_| put_int(update_number, 0)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_cvar_get_info(
    cvar_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    datatype: *mut MPI_Datatype,
    enumtype: *mut MPI_T_enum,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
    scope: *mut c_int,
) -> c_int {
    let _ = (cvar_index, name, name_len, verbosity, datatype, enumtype, desc, desc_len, bind, scope);
    code(check_init().and(Err(MPI_T_ERR_INVALID_INDEX)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_get_info(
    pvar_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    var_class: *mut c_int,
    datatype: *mut MPI_Datatype,
    enumtype: *mut MPI_T_enum,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
    readonly: *mut c_int,
    continuous: *mut c_int,
    atomic: *mut c_int,
) -> c_int {
    let _ = (pvar_index, name, name_len, verbosity, var_class, datatype, enumtype, desc);
    let _ = (desc_len, bind, readonly, continuous, atomic);
    code(check_init().and(Err(MPI_T_ERR_INVALID_INDEX)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_info(
    cat_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    desc: *mut c_char,
    desc_len: *mut c_int,
    num_cvars: *mut c_int,
    num_pvars: *mut c_int,
    num_categories: *mut c_int,
) -> c_int {
    let _ = (cat_index, name, name_len, desc, desc_len, num_cvars, num_pvars, num_categories);
    code(check_init().and(Err(MPI_T_ERR_INVALID_INDEX)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_cvars(cat_index: c_int, len: c_int, indices: *mut c_int) -> c_int {
    let _ = (cat_index, len, indices);
    code(check_init().and(Err(MPI_T_ERR_INVALID_INDEX)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_pvars(cat_index: c_int, len: c_int, indices: *mut c_int) -> c_int {
    let _ = (cat_index, len, indices);
    code(check_init().and(Err(MPI_T_ERR_INVALID_INDEX)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_categories(
    cat_index: c_int,
    len: c_int,
    indices: *mut c_int,
) -> c_int {
    let _ = (cat_index, len, indices);
    code(check_init().and(Err(MPI_T_ERR_INVALID_INDEX)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_cvar_get_index(name: *const c_char, cvar_index: *mut c_int) -> c_int {
    let _ = cvar_index;
    if name.is_null() {
        return code(check_init().and(Err(MPI_T_ERR_INVALID)));
    }
    code(check_init().and(Err(MPI_T_ERR_INVALID_NAME)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_get_index(
    name: *const c_char,
    var_class: c_int,
    pvar_index: *mut c_int,
) -> c_int {
    let _ = (var_class, pvar_index);
    if name.is_null() {
        return code(check_init().and(Err(MPI_T_ERR_INVALID)));
    }
    code(check_init().and(Err(MPI_T_ERR_INVALID_NAME)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_index(name: *const c_char, cat_index: *mut c_int) -> c_int {
    let _ = cat_index;
    if name.is_null() {
        return code(check_init().and(Err(MPI_T_ERR_INVALID)));
    }
    code(check_init().and(Err(MPI_T_ERR_INVALID_NAME)))
}

// ---- Enumerations: none exist ------------------------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_enum_get_info(
    enumtype: MPI_T_enum,
    num: *mut c_int,
    name: *mut c_char,
    name_len: *mut c_int,
) -> c_int {
    let _ = (enumtype, num, name, name_len);
    code(check_init().and(Err(MPI_T_ERR_INVALID_HANDLE)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_enum_get_item(
    enumtype: MPI_T_enum,
    indx: c_int,
    value: *mut c_int,
    name: *mut c_char,
    name_len: *mut c_int,
) -> c_int {
    let _ = (enumtype, indx, value, name, name_len);
    code(check_init().and(Err(MPI_T_ERR_INVALID_HANDLE)))
}

// ---- Control variables: no handles can exist ---------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_cvar_handle_alloc(
    cvar_index: c_int,
    obj_handle: *mut c_void,
    handle: *mut MPI_T_cvar_handle,
    count: *mut c_int,
) -> c_int {
    let _ = (cvar_index, obj_handle, handle, count);
    code(check_init().and(Err(MPI_T_ERR_INVALID_INDEX)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_cvar_handle_free(handle: *mut MPI_T_cvar_handle) -> c_int {
    let _ = handle;
    code(check_init().and(Err(MPI_T_ERR_INVALID_HANDLE)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_cvar_read(handle: MPI_T_cvar_handle, buf: *mut c_void) -> c_int {
    let _ = (handle, buf);
    code(check_init().and(Err(MPI_T_ERR_INVALID_HANDLE)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_cvar_write(handle: MPI_T_cvar_handle, buf: *const c_void) -> c_int {
    let _ = (handle, buf);
    code(check_init().and(Err(MPI_T_ERR_INVALID_HANDLE)))
}

// ---- Performance variable sessions and handles --------------------------------------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_session_create(session: *mut MPI_T_pvar_session) -> c_int {
    if session.is_null() {
        return code(check_init().and(Err(MPI_T_ERR_INVALID)));
    }
    let mut st = state();
    if st.init_count == 0 {
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    let ptr = Box::into_raw(Box::new(0u8));
    st.sessions.insert(ptr as usize);
    // SAFETY: `session` is a non-null `MPI_T_pvar_session *` output argument.
    unsafe { *session = ptr as MPI_T_pvar_session };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_session_free(session: *mut MPI_T_pvar_session) -> c_int {
    if session.is_null() {
        return code(check_init().and(Err(MPI_T_ERR_INVALID)));
    }
    // SAFETY: `session` is a non-null `MPI_T_pvar_session *` in/out argument.
    let value = unsafe { *session };
    let mut st = state();
    if st.init_count == 0 {
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    if value.is_null() || !st.sessions.remove(&(value as usize)) {
        return MPI_T_ERR_INVALID_SESSION;
    }
    // SAFETY: the address was in `sessions`, so it came from Box::into_raw in
    // PMPI_T_pvar_session_create, and it was just removed so it is freed exactly once.
    drop(unsafe { Box::from_raw(value as *mut u8) });
    // SAFETY: as above, `session` is a valid output argument.
    unsafe { *session = std::ptr::null_mut() };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_handle_alloc(
    session: MPI_T_pvar_session,
    pvar_index: c_int,
    obj_handle: *mut c_void,
    handle: *mut MPI_T_pvar_handle,
    count: *mut c_int,
) -> c_int {
    let _ = (pvar_index, obj_handle, handle, count);
    code(check_session(session).and(Err(MPI_T_ERR_INVALID_INDEX)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_handle_free(session: MPI_T_pvar_session, handle: *mut MPI_T_pvar_handle) -> c_int {
    let _ = handle;
    code(check_session(session).and(Err(MPI_T_ERR_INVALID_HANDLE)))
}

/// Start/stop/reset accept `MPI_T_PVAR_ALL_HANDLES` (a no-op: a session has no handles).
fn all_handles_ok(session: MPI_T_pvar_session, handle: MPI_T_pvar_handle) -> c_int {
    code(check_session(session).and_then(|_| if is_all_handles(handle) { Ok(()) } else { Err(MPI_T_ERR_INVALID_HANDLE) }))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_start(session: MPI_T_pvar_session, handle: MPI_T_pvar_handle) -> c_int {
    all_handles_ok(session, handle)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_stop(session: MPI_T_pvar_session, handle: MPI_T_pvar_handle) -> c_int {
    all_handles_ok(session, handle)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_reset(session: MPI_T_pvar_session, handle: MPI_T_pvar_handle) -> c_int {
    all_handles_ok(session, handle)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_read(session: MPI_T_pvar_session, handle: MPI_T_pvar_handle, buf: *mut c_void) -> c_int {
    let _ = (handle, buf);
    code(check_session(session).and(Err(MPI_T_ERR_INVALID_HANDLE)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_readreset(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *mut c_void,
) -> c_int {
    let _ = (handle, buf);
    code(check_session(session).and(Err(MPI_T_ERR_INVALID_HANDLE)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_pvar_write(
    session: MPI_T_pvar_session,
    handle: MPI_T_pvar_handle,
    buf: *const c_void,
) -> c_int {
    let _ = (handle, buf);
    code(check_session(session).and(Err(MPI_T_ERR_INVALID_HANDLE)))
}

// ---- Events and event sources (MPI-4.0): none exist, so no registration can ---------------

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_get_num(num_events: *mut c_int) -> c_int {
    code(check_init().and_then(|_| put_int(num_events, 0)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_source_get_num(num_sources: *mut c_int) -> c_int {
    code(check_init().and_then(|_| put_int(num_sources, 0)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_get_info(
    event_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    verbosity: *mut c_int,
    array_of_datatypes: *mut MPI_Datatype,
    array_of_displacements: *mut MPI_Aint,
    num_elements: *mut c_int,
    enumtype: *mut MPI_T_enum,
    info: *mut MPI_Info,
    desc: *mut c_char,
    desc_len: *mut c_int,
    bind: *mut c_int,
) -> c_int {
    let _ = (event_index, name, name_len, verbosity, array_of_datatypes, array_of_displacements);
    let _ = (num_elements, enumtype, info, desc, desc_len, bind);
    code(check_init().and(Err(MPI_T_ERR_INVALID_INDEX)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_get_index(name: *const c_char, event_index: *mut c_int) -> c_int {
    let _ = event_index;
    if name.is_null() {
        return code(check_init().and(Err(MPI_T_ERR_INVALID)));
    }
    code(check_init().and(Err(MPI_T_ERR_INVALID_NAME)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_source_get_info(
    source_index: c_int,
    name: *mut c_char,
    name_len: *mut c_int,
    desc: *mut c_char,
    desc_len: *mut c_int,
    ordering: *mut MPI_T_source_order,
    ticks_per_second: *mut MPI_Count,
    max_ticks: *mut MPI_Count,
    info: *mut MPI_Info,
) -> c_int {
    let _ = (source_index, name, name_len, desc, desc_len, ordering, ticks_per_second, max_ticks, info);
    code(check_init().and(Err(MPI_T_ERR_INVALID_INDEX)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_source_get_timestamp(source_index: c_int, timestamp: *mut MPI_Count) -> c_int {
    let _ = (source_index, timestamp);
    code(check_init().and(Err(MPI_T_ERR_INVALID_INDEX)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_num_events(cat_index: c_int, num_events: *mut c_int) -> c_int {
    let _ = (cat_index, num_events);
    code(check_init().and(Err(MPI_T_ERR_INVALID_INDEX)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_category_get_events(cat_index: c_int, len: c_int, indices: *mut c_int) -> c_int {
    let _ = (cat_index, len, indices);
    code(check_init().and(Err(MPI_T_ERR_INVALID_INDEX)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_handle_alloc(
    event_index: c_int,
    obj_handle: *mut c_void,
    info: MPI_Info,
    event_registration: *mut MPI_T_event_registration,
) -> c_int {
    let _ = (event_index, obj_handle, info, event_registration);
    code(check_init().and(Err(MPI_T_ERR_INVALID_INDEX)))
}

/// The calls on a registration or an event instance: none can exist, so every handle is
/// invalid.
fn no_event_handle() -> c_int {
    code(check_init().and(Err(MPI_T_ERR_INVALID_HANDLE)))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_handle_free(
    event_registration: MPI_T_event_registration,
    user_data: *mut c_void,
    free_cb_function: MPI_T_event_free_cb_function,
) -> c_int {
    let _ = (event_registration, user_data, free_cb_function);
    no_event_handle()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_handle_get_info(event_registration: MPI_T_event_registration, info_used: *mut MPI_Info) -> c_int {
    let _ = (event_registration, info_used);
    no_event_handle()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_handle_set_info(event_registration: MPI_T_event_registration, info: MPI_Info) -> c_int {
    let _ = (event_registration, info);
    no_event_handle()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_register_callback(
    event_registration: MPI_T_event_registration,
    cb_safety: MPI_T_cb_safety,
    info: MPI_Info,
    user_data: *mut c_void,
    event_cb_function: MPI_T_event_cb_function,
) -> c_int {
    let _ = (event_registration, cb_safety, info, user_data, event_cb_function);
    no_event_handle()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_callback_get_info(
    event_registration: MPI_T_event_registration,
    cb_safety: MPI_T_cb_safety,
    info_used: *mut MPI_Info,
) -> c_int {
    let _ = (event_registration, cb_safety, info_used);
    no_event_handle()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_callback_set_info(
    event_registration: MPI_T_event_registration,
    cb_safety: MPI_T_cb_safety,
    info: MPI_Info,
) -> c_int {
    let _ = (event_registration, cb_safety, info);
    no_event_handle()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_set_dropped_handler(
    event_registration: MPI_T_event_registration,
    dropped_cb_function: MPI_T_event_dropped_cb_function,
) -> c_int {
    let _ = (event_registration, dropped_cb_function);
    no_event_handle()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_read(event_instance: MPI_T_event_instance, element_index: c_int, buffer: *mut c_void) -> c_int {
    let _ = (event_instance, element_index, buffer);
    no_event_handle()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_copy(event_instance: MPI_T_event_instance, buffer: *mut c_void) -> c_int {
    let _ = (event_instance, buffer);
    no_event_handle()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_get_timestamp(event_instance: MPI_T_event_instance, event_timestamp: *mut MPI_Count) -> c_int {
    let _ = (event_instance, event_timestamp);
    no_event_handle()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_T_event_get_source(event_instance: MPI_T_event_instance, source_index: *mut c_int) -> c_int {
    let _ = (event_instance, source_index);
    no_event_handle()
}

// ---- Profiling control ------------------------------------------------------------------

/// `MPI_Pcontrol(level, ...)`: no profiling levels to change; always succeeds. Declared
/// variadic in `mpi.h`; the extra arguments are ignored (on x86_64 a non-variadic callee
/// is call-compatible with variadic callers).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Pcontrol(level: c_int) -> c_int {
    let _ = level;
    MPI_SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_tool_interface() {
        let mut provided = -1;
        let mut n = -1;
        let mut session: MPI_T_pvar_session = std::ptr::null_mut();
        // SAFETY: every pointer passed is valid for the duration of the call.
        unsafe {
            assert_eq!(PMPI_T_cvar_get_num(&mut n), MPI_T_ERR_NOT_INITIALIZED);
            assert_eq!(PMPI_T_init_thread(MPI_THREAD_SINGLE, &mut provided), MPI_SUCCESS);
            assert_eq!(PMPI_T_init_thread(MPI_THREAD_MULTIPLE, &mut provided), MPI_SUCCESS);
            assert_eq!(provided, MPI_THREAD_MULTIPLE);
            assert_eq!(PMPI_T_cvar_get_num(&mut n), MPI_SUCCESS);
            assert_eq!(n, 0);
            assert_eq!(PMPI_T_pvar_get_num(&mut n), MPI_SUCCESS);
            assert_eq!(PMPI_T_category_get_num(&mut n), MPI_SUCCESS);
            assert_eq!(n, 0);
            assert_eq!(PMPI_T_cvar_get_num(std::ptr::null_mut()), MPI_T_ERR_INVALID);
            let none = std::ptr::null_mut();
            assert_eq!(
                PMPI_T_cvar_get_info(0, none as _, none, none, none as _, none as _, none as _, none, none, none),
                MPI_T_ERR_INVALID_INDEX
            );
            assert_eq!(PMPI_T_event_get_num(&mut n), MPI_SUCCESS);
            assert_eq!(n, 0);
            assert_eq!(PMPI_T_source_get_num(&mut n), MPI_SUCCESS);
            assert_eq!(n, 0);
            let mut reg: MPI_T_event_registration = std::ptr::null_mut();
            assert_eq!(PMPI_T_event_handle_alloc(0, none as _, MPI_INFO_NULL, &mut reg), MPI_T_ERR_INVALID_INDEX);
            assert_eq!(PMPI_T_event_handle_free(reg, none as _, None), MPI_T_ERR_INVALID_HANDLE);
            assert_eq!(PMPI_T_event_get_index(c"x".as_ptr(), &mut n), MPI_T_ERR_INVALID_NAME);
            assert_eq!(PMPI_T_pvar_session_create(&mut session), MPI_SUCCESS);
            assert!(!session.is_null());
            let all = crate::abi::statics::MPI_T_PVAR_ALL_HANDLES;
            assert_eq!(PMPI_T_pvar_start(session, all), MPI_SUCCESS);
            assert_eq!(PMPI_T_pvar_read(session, all, none as _), MPI_T_ERR_INVALID_HANDLE);
            assert_eq!(PMPI_T_pvar_session_free(&mut session), MPI_SUCCESS);
            assert!(session.is_null());
            assert_eq!(PMPI_T_pvar_session_free(&mut session), MPI_T_ERR_INVALID_SESSION);
            assert_eq!(PMPI_T_finalize(), MPI_SUCCESS);
            assert_eq!(PMPI_T_finalize(), MPI_SUCCESS);
            assert_eq!(PMPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
            assert_eq!(PMPI_Pcontrol(1), MPI_SUCCESS);
        }
    }
}
