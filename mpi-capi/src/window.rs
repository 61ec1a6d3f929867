//! The window object in the C layer: its group, name, info hints, error handler, attributes
//! (user keyvals and the predefined `MPI_WIN_BASE`, `MPI_WIN_SIZE`, ...), and the hook
//! `MPI_Win_free` runs. Creating and freeing windows, RMA operations and synchronisation
//! are in `rma.rs`; the window itself is `mpi_core::rma::Win` in the runtime's window table.
//!
//! Errors on a window go to the window's error handler (`errors::raise_win`). A window does
//! not inherit the handler of the communicator it was made from (MPI 4.1 §9.3.2): until the
//! user sets one, it has none and errors run `MPI_COMM_WORLD`'s, as in MPICH
//! (`errors::DEFAULT_ERRHANDLER`; `MPI_Win_get_errhandler` says `MPI_ERRORS_ARE_FATAL`).

use crate::abi::*;
use crate::attributes::{self, ErrOn, Kind};
use crate::errhandlers::{self, HandlerKind};
use crate::errors::{invoke_win_handler, raise, raise_win, write_c_string};
use crate::handles::win_index;
use mpi_core::rma::{Flavor, Win};
use mpi_core::runtime;
use std::collections::HashMap;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Mutex;

/// The error handler a new window starts with (the rma module sets it at creation).
pub const DEFAULT_WIN_ERRHANDLER: MPI_Errhandler = crate::errors::DEFAULT_ERRHANDLER;

// ------------------------------------------------------------------ per-window state

/// Values the predefined window attributes point at. The standard hands out pointers
/// (`MPI_WIN_SIZE` gives an `MPI_Aint *`, `MPI_WIN_DISP_UNIT` an `int *`, ...) that the
/// program may keep and read while the window lives, so each window gets one boxed cell
/// (its address never moves), made on the first query and dropped by `on_win_free`.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Cells {
    size: MPI_Aint,
    disp_unit: c_int,
    flavor: c_int,
    model: c_int,
}

static CELLS: Mutex<Option<HashMap<MPI_Win, Box<Cells>>>> = Mutex::new(None);

fn flavor_value(f: Flavor) -> c_int {
    match f {
        Flavor::Create => MPI_WIN_FLAVOR_CREATE,
        Flavor::Allocate => MPI_WIN_FLAVOR_ALLOCATE,
        Flavor::Dynamic => MPI_WIN_FLAVOR_DYNAMIC,
        Flavor::Shared => MPI_WIN_FLAVOR_SHARED,
    }
}

/// The address of window `win`'s value of predefined attribute `keyval` (`MPI_WIN_SIZE`,
/// `MPI_WIN_DISP_UNIT`, `MPI_WIN_CREATE_FLAVOR`, `MPI_WIN_MODEL`), from the window's
/// current fields `w`.
fn cell_of(win: MPI_Win, w: Cells, keyval: c_int) -> *mut c_void {
    let mut g = CELLS.lock().unwrap_or_else(|p| p.into_inner());
    let cell = g.get_or_insert_with(HashMap::new).entry(win).or_insert_with(|| Box::new(w));
    // A cell left by an earlier window of the same handle (freed without `on_win_free`)
    // holds that window's values: refresh it. A live window's values never change, so a
    // pointer the program already holds never sees a write.
    if **cell != w {
        **cell = w;
    }
    let c: &mut Cells = cell;
    match keyval {
        MPI_WIN_SIZE => &mut c.size as *mut MPI_Aint as *mut c_void,
        MPI_WIN_DISP_UNIT => &mut c.disp_unit as *mut c_int as *mut c_void,
        MPI_WIN_CREATE_FLAVOR => &mut c.flavor as *mut c_int as *mut c_void,
        _ => &mut c.model as *mut c_int as *mut c_void,
    }
}

/// What `MPI_Win_free` must do in the C layer before the window goes: delete the window's
/// attributes (running their delete callbacks, newest first, as the standard requires of
/// `MPI_Win_free`) and drop the window's C-layer state. Call it first in `MPI_Win_free`,
/// while the window is still in the table.
///
/// On `Err(rc)` a delete callback failed: the error has already been raised on the
/// window's handler and `rc` is what `MPI_Win_free` returns; the window must stay (as
/// `MPI_Comm_free` does here).
pub fn on_win_free(win: MPI_Win) -> Result<(), c_int> {
    if let Err(rc) = attributes::delete_all(Kind::Win, win) {
        return Err(ErrOn::Win(win).callback_failed("MPI_Win_free", "an attribute delete callback", rc));
    }
    if let Some(m) = CELLS.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        m.remove(&win);
    }
    Ok(())
}

// ------------------------------------------------------------------ argument checks

/// Runs `f` on window `win` under the runtime lock; None when `win` is not a live window.
fn with_win<R>(win: MPI_Win, f: impl FnOnce(&mut Win) -> R) -> Option<R> {
    let idx = win_index(win)?;
    runtime::with(|rt| rt.wins.get_mut(idx).map(f))
}

/// The `MPI_ERR_WIN` error for an invalid window handle, raised on `MPI_COMM_WORLD` (an
/// invalid window has no handler of its own).
fn bad_win(func: &str, win: MPI_Win) -> c_int {
    let msg = if win == MPI_WIN_NULL { "the window is MPI_WIN_NULL".to_string() } else { format!("invalid window {win:#x} (not a window, or freed)") };
    raise(MPI_COMM_WORLD, func, MPI_ERR_WIN, msg)
}

/// Checks that `win` is a live window: its index in the window table, or the raised
/// `MPI_ERR_WIN`. MPI must be up.
pub fn check_win(func: &str, win: MPI_Win) -> Result<usize, c_int> {
    match win_index(win) {
        Some(i) if runtime::with(|rt| rt.wins.get(i).is_some()) => Ok(i),
        _ => Err(bad_win(func, win)),
    }
}

macro_rules! tryw {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(rc) => return rc,
        }
    };
}

/// `s` cut to at most `max` bytes on a character boundary.
fn truncated(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

// ------------------------------------------------------------------ group, name, info

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_get_group(win: MPI_Win, group: *mut MPI_Group) -> c_int {
    let func = "MPI_Win_get_group";
    require_init!(func);
    let Some(members) = with_win(win, |w| w.world_ranks.clone()) else {
        return bad_win(func, win);
    };
    if group.is_null() {
        return raise_win(win, func, MPI_ERR_ARG, "group is NULL");
    }
    // SAFETY: checked non-null; the caller passes a pointer to an MPI_Group.
    unsafe { *group = crate::group::new_group(members) };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_set_name(win: MPI_Win, win_name: *const c_char) -> c_int {
    let func = "MPI_Win_set_name";
    require_init!(func);
    tryw!(check_win(func, win));
    if win_name.is_null() {
        return raise_win(win, func, MPI_ERR_ARG, "win_name is NULL");
    }
    // SAFETY: checked non-null; the caller passes a NUL-terminated string.
    let name = unsafe { CStr::from_ptr(win_name) }.to_string_lossy().into_owned();
    // Longer names are cut, as for communicators: MPI_Win_get_name must fit them in
    // MPI_MAX_OBJECT_NAME bytes with the NUL.
    let name = truncated(name, MPI_MAX_OBJECT_NAME as usize - 1);
    match with_win(win, |w| w.name = name) {
        Some(()) => MPI_SUCCESS,
        None => bad_win(func, win),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_get_name(win: MPI_Win, win_name: *mut c_char, resultlen: *mut c_int) -> c_int {
    let func = "MPI_Win_get_name";
    require_init!(func);
    let Some(name) = with_win(win, |w| w.name.clone()) else {
        return bad_win(func, win);
    };
    if win_name.is_null() || resultlen.is_null() {
        return raise_win(win, func, MPI_ERR_ARG, "win_name or resultlen is NULL");
    }
    // SAFETY: the standard requires MPI_MAX_OBJECT_NAME bytes at win_name; resultlen was
    // checked non-null.
    unsafe { *resultlen = write_c_string(win_name, MPI_MAX_OBJECT_NAME as usize, &name) };
    MPI_SUCCESS
}

/// Keeps the values of the window hints `info` sets (other keys are ignored); they are
/// returned by `MPI_Win_get_info`, none changes how the window works.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_set_info(win: MPI_Win, info: MPI_Info) -> c_int {
    let func = "MPI_Win_set_info";
    require_init!(func);
    tryw!(check_win(func, win));
    let Some(p) = crate::info::pairs(info) else {
        return raise_win(win, func, MPI_ERR_INFO, format!("invalid info handle {info:#x}"));
    };
    let done = with_win(win, |w| crate::info::keep_hints(crate::info::WIN_HINTS, &mut w.info, p));
    match done {
        Some(()) => MPI_SUCCESS,
        None => bad_win(func, win),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_get_info(win: MPI_Win, info_used: *mut MPI_Info) -> c_int {
    let func = "MPI_Win_get_info";
    require_init!(func);
    let Some(p) = with_win(win, |w| crate::info::hints_used(crate::info::WIN_HINTS, &w.info)) else {
        return bad_win(func, win);
    };
    if info_used.is_null() {
        return raise_win(win, func, MPI_ERR_ARG, "info_used is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *info_used = crate::info::new_info(p) };
    MPI_SUCCESS
}

// ------------------------------------------------------------------ error handlers

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_create_errhandler(win_errhandler_fn: MPI_Win_errhandler_function, errhandler: *mut MPI_Errhandler) -> c_int {
    // MPI_Win_errhandler_function is the communicator callback type (both handles are
    // `int` in the MPICH ABI); the handler is marked for windows only.
    errhandlers::create("MPI_Win_create_errhandler", HandlerKind::Win, win_errhandler_fn, errhandler)
}

/// Accepts the predefined handlers and handlers from `MPI_Win_create_errhandler`; a
/// communicator handler is `MPI_ERR_ARG`, as in MPICH.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_set_errhandler(win: MPI_Win, errhandler: MPI_Errhandler) -> c_int {
    let func = "MPI_Win_set_errhandler";
    require_init!(func);
    tryw!(check_win(func, win));
    if !matches!(errhandler, MPI_ERRORS_ARE_FATAL | MPI_ERRORS_RETURN | MPI_ERRORS_ABORT) && !errhandlers::is_win_handler(errhandler) {
        let msg = if errhandlers::is_handler(errhandler) {
            format!("error handler {errhandler:#x} was not created for windows (use MPI_Win_create_errhandler)")
        } else {
            format!("invalid error handler {errhandler:#x}")
        };
        return raise_win(win, func, MPI_ERR_ARG, msg);
    }
    match with_win(win, |w| w.errhandler = errhandler) {
        Some(()) => MPI_SUCCESS,
        None => bad_win(func, win),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_get_errhandler(win: MPI_Win, errhandler: *mut MPI_Errhandler) -> c_int {
    let func = "MPI_Win_get_errhandler";
    require_init!(func);
    let Some(h) = with_win(win, |w| w.errhandler) else {
        return bad_win(func, win);
    };
    if errhandler.is_null() {
        return raise_win(win, func, MPI_ERR_ARG, "errhandler is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *errhandler = crate::errors::reported_handler(h) };
    MPI_SUCCESS
}

/// Runs the window's handler on `errorcode`; returns `MPI_SUCCESS` once it returned (the
/// standard's rule, whatever the code).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_call_errhandler(win: MPI_Win, errorcode: c_int) -> c_int {
    let func = "MPI_Win_call_errhandler";
    require_init!(func);
    tryw!(check_win(func, win));
    let msg = crate::errors::error_text(errorcode);
    invoke_win_handler(win, errorcode, func, &msg);
    MPI_SUCCESS
}

// ------------------------------------------------------------------ attributes

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_create_keyval(win_copy_attr_fn: MPI_Win_copy_attr_function, win_delete_attr_fn: MPI_Win_delete_attr_function, win_keyval: *mut c_int, extra_state: *mut c_void) -> c_int {
    // The window callback types are the communicator ones (MPI_Win and MPI_Comm are both
    // `int` in the MPICH ABI). The copy callback never runs: windows cannot be duplicated.
    attributes::create_keyval("MPI_Win_create_keyval", Kind::Win, win_copy_attr_fn, win_delete_attr_fn, win_keyval, extra_state)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_free_keyval(win_keyval: *mut c_int) -> c_int {
    attributes::free_keyval("MPI_Win_free_keyval", Kind::Win, win_keyval)
}

/// The predefined attributes cannot be set (their keys are no user keyvals: `MPI_ERR_KEYVAL`).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_set_attr(win: MPI_Win, win_keyval: c_int, attribute_val: *mut c_void) -> c_int {
    let func = "MPI_Win_set_attr";
    require_init!(func);
    tryw!(check_win(func, win));
    attributes::set_attr(func, Kind::Win, ErrOn::Win(win), win, win_keyval, attribute_val)
}

/// User attributes, and the predefined ones: `MPI_WIN_BASE` gives the base address itself
/// (`*(void **)attribute_val = base`), the others a pointer to the value (`MPI_Aint` for
/// `MPI_WIN_SIZE`, `int` for `MPI_WIN_DISP_UNIT`, `MPI_WIN_CREATE_FLAVOR` and
/// `MPI_WIN_MODEL`, always `MPI_WIN_UNIFIED`: every window's public and private copies are
/// the same memory). A displacement unit above `INT_MAX` (from `MPI_Win_create_c` and the
/// other `_c` constructors) does not fit `MPI_WIN_DISP_UNIT`'s int: `MPI_ERR_VALUE_TOO_LARGE`,
/// as `MPI_Win_shared_query` does.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_get_attr(win: MPI_Win, win_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
    let func = "MPI_Win_get_attr";
    require_init!(func);
    if !matches!(win_keyval, MPI_WIN_BASE | MPI_WIN_SIZE | MPI_WIN_DISP_UNIT | MPI_WIN_CREATE_FLAVOR | MPI_WIN_MODEL) {
        tryw!(check_win(func, win));
        return attributes::get_attr(func, Kind::Win, ErrOn::Win(win), win, win_keyval, attribute_val, flag);
    }
    let fields = with_win(win, |w| {
        let c = Cells { size: w.size as MPI_Aint, disp_unit: c_int::try_from(w.disp_unit).unwrap_or(MPI_UNDEFINED), flavor: flavor_value(w.flavor), model: MPI_WIN_UNIFIED };
        (w.base as *mut c_void, c)
    });
    let Some((base, cells)) = fields else {
        return bad_win(func, win);
    };
    if win_keyval == MPI_WIN_DISP_UNIT && cells.disp_unit == MPI_UNDEFINED {
        return raise_win(win, func, MPI_ERR_VALUE_TOO_LARGE, "the window's displacement unit does not fit in the attribute's int");
    }
    if attribute_val.is_null() || flag.is_null() {
        return raise_win(win, func, MPI_ERR_ARG, "attribute_val or flag is NULL");
    }
    let v = if win_keyval == MPI_WIN_BASE { base } else { cell_of(win, cells, win_keyval) };
    // SAFETY: checked non-null; `attribute_val` points to a `void *` (the standard's
    // attribute_val), `flag` to an int.
    unsafe {
        *(attribute_val as *mut *mut c_void) = v;
        *flag = 1;
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_delete_attr(win: MPI_Win, win_keyval: c_int) -> c_int {
    let func = "MPI_Win_delete_attr";
    require_init!(func);
    tryw!(check_win(func, win));
    attributes::delete_attr(func, Kind::Win, ErrOn::Win(win), win, win_keyval)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cut_on_char_boundaries() {
        assert_eq!(truncated("abc".into(), 2), "ab");
        assert_eq!(truncated("aé".into(), 2), "a");
        assert_eq!(truncated("short".into(), 63), "short");
    }

    #[test]
    fn cells_keep_their_address_and_refresh_stale_values() {
        let win = crate::handles::win_handle(12345);
        let a = Cells { size: 64, disp_unit: 8, flavor: MPI_WIN_FLAVOR_CREATE, model: MPI_WIN_UNIFIED };
        let p = cell_of(win, a, MPI_WIN_SIZE);
        let q = cell_of(win, a, MPI_WIN_SIZE);
        assert_eq!(p, q);
        // SAFETY: the cell lives until on_win_free / removal below.
        assert_eq!(unsafe { *(p as *const MPI_Aint) }, 64);
        let d = cell_of(win, a, MPI_WIN_DISP_UNIT);
        // SAFETY: as above.
        assert_eq!(unsafe { *(d as *const c_int) }, 8);
        let b = Cells { size: 16, ..a };
        let r = cell_of(win, b, MPI_WIN_SIZE);
        assert_eq!(p, r);
        // SAFETY: as above.
        assert_eq!(unsafe { *(r as *const MPI_Aint) }, 16);
        CELLS.lock().unwrap().as_mut().unwrap().remove(&win);
    }
}
