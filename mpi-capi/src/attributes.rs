//! Attribute caching: keyvals with copy/delete callbacks, attributes on communicators,
//! datatypes and windows, and the predefined communicator attributes (`MPI_TAG_UB`, ...).
//! The window entry points and predefined window attributes are in `window.rs`, over the
//! generic operations here.
//!
//! Attributes are kept by (object kind, handle) in a process-wide table. Callbacks run with
//! no lock held (they may call MPI, even attribute functions). Deletions run newest first,
//! as MPICH does, which also gives the LIFO order the standard asks for on `MPI_COMM_SELF`
//! at `MPI_Finalize`.
//!
//! Attributes set from Fortran hold an integer, not a pointer: C reading one gets a pointer
//! to that integer (as the standard's and MPICH's language interoperability rules say), C
//! callbacks get such a pointer too, while Fortran readers and the Fortran callbacks of
//! keyvals created from Fortran get the integer itself (and a C-set attribute's pointer
//! as an integer). The Fortran bindings mark their calls with `fortran_call`.

use crate::abi::*;
use crate::errors::{invoke_handler, invoke_win_handler, not_initialized, raise};
use crate::handles::{keyval_handle, keyval_index};
use std::cell::Cell;
use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;

/// Objects that carry attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Comm,
    Type,
    Win,
}

/// Whose error handler an attribute call's errors run: a communicator's (communicator and
/// datatype calls) or a window's (window calls).
#[derive(Clone, Copy, Debug)]
pub(crate) enum ErrOn {
    Comm(MPI_Comm),
    Win(MPI_Win),
}

impl ErrOn {
    fn raise(self, func: &str, class: c_int, msg: impl Into<String>) -> c_int {
        match self {
            ErrOn::Comm(c) => raise(c, func, class, msg),
            ErrOn::Win(w) => crate::errors::raise_win(w, func, class, msg),
        }
    }

    /// Raises the failure of attribute callback `what`, which returned `rc`. The call returns
    /// `rc` itself when it is an error code (a user class or code above all), as MPICH does:
    /// programs expect their own class back from `MPI_Comm_dup` or `MPI_Comm_free` (MPICH's
    /// errors/comm/userdup). Any other value becomes an `MPI_ERR_OTHER` naming it.
    pub(crate) fn callback_failed(self, func: &str, what: &str, rc: c_int) -> c_int {
        if !crate::errors::is_error_code(rc) {
            return self.raise(func, MPI_ERR_OTHER, format!("{what} returned {rc}"));
        }
        let msg = format!("{what} returned error code {rc}");
        match self {
            ErrOn::Comm(c) => invoke_handler(c, rc, func, &msg),
            ErrOn::Win(w) => invoke_win_handler(w, rc, func, &msg),
        }
    }
}

/// Callbacks of every kind share the communicator signature: the handle is a C `int` in
/// the MPICH ABI, whatever the object.
type CopyFn = MPI_Comm_copy_attr_function;
type DeleteFn = MPI_Comm_delete_attr_function;

#[derive(Clone, Copy)]
struct Keyval {
    kind: Kind,
    copy: CopyFn,
    delete: DeleteFn,
    extra: *mut c_void,
    freed: bool,
    /// Created from Fortran: the callbacks are the Fortran trampolines, which take values.
    fortran: bool,
}

/// One attribute. `fortran` holds the value when Fortran set it (`value` is then that
/// integer too): boxed, so that the pointer C readers get stays valid while it is set.
#[derive(Clone)]
struct Attr {
    key: c_int,
    value: *mut c_void,
    fortran: Option<Box<MPI_Aint>>,
}

impl Attr {
    /// The attribute value as C (a C reader or C callback) sees it.
    fn for_c(&self) -> *mut c_void {
        match &self.fortran {
            Some(b) => &**b as *const MPI_Aint as *mut c_void,
            None => self.value,
        }
    }

    /// The value passed to the callbacks of `kv`.
    fn for_callback(&self, kv: &Keyval) -> *mut c_void {
        if kv.fortran { self.value } else { self.for_c() }
    }
}

thread_local! {
    /// Set by a Fortran binding around the C call it makes (see `fortran_call`).
    static FORTRAN_CALL: Cell<bool> = const { Cell::new(false) };
}

/// The Fortran bindings of the attribute and keyval calls set this before the C call
/// (and clear it after): the call then stores or returns integer values.
pub(crate) fn fortran_call(on: bool) {
    FORTRAN_CALL.with(|c| c.set(on));
}

/// Whether the current call came from Fortran (reading clears it, so that callbacks the
/// call runs see their own calls' origin).
fn take_fortran_call() -> bool {
    FORTRAN_CALL.with(|c| c.replace(false))
}

struct Table {
    keyvals: Vec<Keyval>,
    /// (kind, handle) → (keyval, value) in the order set.
    attrs: HashMap<(Kind, c_int), Vec<Attr>>,
}

// SAFETY: the raw pointers are user values handed back to the user; never dereferenced here.
unsafe impl Send for Table {}

static TABLE: Mutex<Option<Table>> = Mutex::new(None);

fn with_table<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    let mut g = TABLE.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(|| Table { keyvals: Vec::new(), attrs: HashMap::new() }))
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Comm => "communicator",
        Kind::Type => "datatype",
        Kind::Win => "window",
    }
}

fn keyval_of(t: &Table, kind: Kind, keyval: c_int) -> Result<Keyval, String> {
    let kv = keyval_index(keyval).and_then(|i| t.keyvals.get(i)).copied().ok_or_else(|| format!("invalid keyval {keyval:#x}"))?;
    if kv.kind != kind {
        return Err(format!("keyval {keyval:#x} was created for {} attributes, not {}", kind_name(kv.kind), kind_name(kind)));
    }
    Ok(kv)
}

// ------------------------------------------------------------------ predefined attributes

static TAG_UB_V: AtomicI32 = AtomicI32::new(crate::p2p_args::TAG_UB);
static HOST_V: AtomicI32 = AtomicI32::new(MPI_PROC_NULL);
static IO_V: AtomicI32 = AtomicI32::new(MPI_ANY_SOURCE);
static WTIME_IS_GLOBAL_V: AtomicI32 = AtomicI32::new(0);
static UNIVERSE_SIZE_V: AtomicI32 = AtomicI32::new(1);
static APPNUM_V: AtomicI32 = AtomicI32::new(0);

/// The address of a predefined attribute's value, if `keyval` is one: Some(None) when it
/// is one that is not set (`MPI_UNIVERSE_SIZE` when the launcher does not know it).
fn predefined(keyval: c_int) -> Option<Option<*mut c_int>> {
    let v = match keyval {
        MPI_TAG_UB => &TAG_UB_V,
        MPI_HOST => &HOST_V,
        MPI_IO => &IO_V,
        MPI_WTIME_IS_GLOBAL => &WTIME_IS_GLOBAL_V,
        MPI_UNIVERSE_SIZE => match mpi_core::runtime::with(|rt| rt.bootstrap.universe_size()) {
            // At least the job itself (a launcher's figure below it would be wrong).
            Some(n) => {
                let world = mpi_core::runtime::with(|rt| rt.comms.get(mpi_core::comm::WORLD).map_or(1, |c| c.size()));
                UNIVERSE_SIZE_V.store(n.max(world) as c_int, Ordering::Relaxed);
                &UNIVERSE_SIZE_V
            }
            None => return Some(None),
        },
        MPI_APPNUM => {
            // The part of an MPMD command line this process runs (PMI's appnum).
            APPNUM_V.store(mpi_core::runtime::with(|rt| rt.bootstrap.appnum()), Ordering::Relaxed);
            &APPNUM_V
        }
        MPI_LASTUSEDCODE => &crate::errhandlers::LAST_USED_CODE,
        _ => return None,
    };
    Some(Some(v.as_ptr()))
}

// ------------------------------------------------------------------ hooks for constructors

/// Copies the attributes of `old` onto `new` through the keyvals' copy callbacks (on
/// `MPI_Comm_dup`, `MPI_Type_dup`). When a callback fails, the copies already made are
/// deleted again (their delete callbacks run, as when the new object is freed) and the
/// failing callback's code is returned: the caller then destroys `new` and fails.
pub fn copy_attrs(kind: Kind, old: c_int, new: c_int) -> Result<(), c_int> {
    let list: Vec<(Attr, Keyval)> = with_table(|t| {
        let l = t.attrs.get(&(kind, old)).cloned().unwrap_or_default();
        l.into_iter().filter_map(|a| keyval_of(t, kind, a.key).ok().map(|kv| (a, kv))).collect()
    });
    for (a, kv) in list {
        let Some(copy) = kv.copy else { continue };
        let k = a.key;
        let mut out: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        // SAFETY: a user callback with the standard's signature; `out` and `flag` are valid.
        let rc = unsafe { copy(old, k, kv.extra, a.for_callback(&kv), &mut out as *mut *mut c_void as *mut c_void, &mut flag) };
        if rc != MPI_SUCCESS {
            let _ = delete_all(kind, new);
            return Err(rc);
        }
        if flag != 0 {
            // The copy keeps the language of the original (as MPICH).
            let fortran = a.fortran.as_ref().map(|_| Box::new(out as MPI_Aint));
            with_table(|t| t.attrs.entry((kind, new)).or_default().push(Attr { key: k, value: out, fortran }));
        }
    }
    Ok(())
}

/// Deletes every attribute of `h`, newest first, running delete callbacks (on
/// `MPI_Comm_free`, `MPI_Type_free`, `MPI_Win_free`, and for `MPI_COMM_SELF` at finalize).
/// A failing callback does not stop the others and its attribute goes too (as MPICH does);
/// the first failing code is returned, and the caller then keeps the object and fails, so
/// that a second free succeeds.
pub fn delete_all(kind: Kind, h: c_int) -> Result<(), c_int> {
    let mut res = Ok(());
    loop {
        let last = with_table(|t| {
            let l = t.attrs.get_mut(&(kind, h))?;
            let a = l.pop()?;
            let kv = keyval_of(t, kind, a.key).ok();
            Some((a, kv))
        });
        let Some((a, kv)) = last else {
            with_table(|t| t.attrs.remove(&(kind, h)));
            return res;
        };
        if let Some(kv @ Keyval { delete: Some(del), extra, .. }) = kv {
            // SAFETY: a user callback with the standard's signature.
            let rc = unsafe { del(h, a.key, a.for_callback(&kv), extra) };
            if rc != MPI_SUCCESS && res.is_ok() {
                res = Err(rc);
            }
        }
    }
}

/// `MPI_Finalize` calls this first: deletes the attributes of `MPI_COMM_SELF` (then those
/// of `MPI_COMM_WORLD`) so their delete callbacks run while MPI is still usable.
pub fn finalize_hook() {
    let _ = delete_all(Kind::Comm, MPI_COMM_SELF);
    let _ = delete_all(Kind::Comm, MPI_COMM_WORLD);
}

/// Type attribute hooks for the datatype module: call after `MPI_Type_dup` created `new`.
/// A failing callback's error runs `MPI_COMM_WORLD`'s handler (datatypes have none).
pub fn type_attrs_on_dup(old: MPI_Datatype, new: MPI_Datatype) -> Result<(), c_int> {
    copy_attrs(Kind::Type, old, new).map_err(|rc| ErrOn::Comm(MPI_COMM_WORLD).callback_failed("MPI_Type_dup", "an attribute copy callback", rc))
}

/// Call before `MPI_Type_free` releases `t`.
pub fn type_attrs_on_free(t: MPI_Datatype) -> Result<(), c_int> {
    delete_all(Kind::Type, t).map_err(|rc| ErrOn::Comm(MPI_COMM_WORLD).callback_failed("MPI_Type_free", "an attribute delete callback", rc))
}

// ------------------------------------------------------------------ generic operations

pub(crate) fn create_keyval(func: &str, kind: Kind, copy: CopyFn, delete: DeleteFn, keyval: *mut c_int, extra: *mut c_void) -> c_int {
    let fortran = take_fortran_call();
    if keyval.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "keyval is NULL");
    }
    let k = with_table(|t| {
        t.keyvals.push(Keyval { kind, copy, delete, extra, freed: false, fortran });
        keyval_handle(t.keyvals.len() - 1)
    });
    // SAFETY: checked non-null.
    unsafe { *keyval = k };
    MPI_SUCCESS
}

pub(crate) fn free_keyval(func: &str, kind: Kind, keyval: *mut c_int) -> c_int {
    if keyval.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "keyval is NULL");
    }
    // SAFETY: checked non-null.
    let k = unsafe { *keyval };
    // The keyval stays usable by attributes still attached (the standard's rule); it can
    // no longer be set.
    let r = with_table(|t| {
        keyval_of(t, kind, k)?;
        t.keyvals[keyval_index(k).unwrap()].freed = true;
        Ok::<(), String>(())
    });
    match r {
        Ok(()) => {
            // SAFETY: checked non-null.
            unsafe { *keyval = MPI_KEYVAL_INVALID };
            MPI_SUCCESS
        }
        Err(m) => raise(MPI_COMM_WORLD, func, MPI_ERR_KEYVAL, m),
    }
}

pub(crate) fn set_attr(func: &str, kind: Kind, on: ErrOn, h: c_int, keyval: c_int, value: *mut c_void) -> c_int {
    let fortran = take_fortran_call();
    let kv = match with_table(|t| keyval_of(t, kind, keyval).and_then(|kv| if kv.freed { Err(format!("keyval {keyval:#x} was freed")) } else { Ok(kv) })) {
        Ok(kv) => kv,
        Err(m) => return on.raise(func, MPI_ERR_KEYVAL, m),
    };
    // Replacing a value deletes the old one first.
    let old = with_table(|t| t.attrs.get(&(kind, h)).and_then(|l| l.iter().find(|a| a.key == keyval).cloned()));
    if let (Some(old), Some(del)) = (old, kv.delete) {
        // SAFETY: a user callback with the standard's signature.
        let rc = unsafe { del(h, keyval, old.for_callback(&kv), kv.extra) };
        if rc != MPI_SUCCESS {
            return on.callback_failed(func, &format!("the delete callback of keyval {keyval:#x}"), rc);
        }
    }
    with_table(|t| {
        let l = t.attrs.entry((kind, h)).or_default();
        let a = Attr { key: keyval, value, fortran: fortran.then(|| Box::new(value as MPI_Aint)) };
        match l.iter_mut().find(|a| a.key == keyval) {
            Some(e) => *e = a,
            None => l.push(a),
        }
    });
    MPI_SUCCESS
}

pub(crate) fn get_attr(func: &str, kind: Kind, on: ErrOn, h: c_int, keyval: c_int, value: *mut c_void, flag: *mut c_int) -> c_int {
    let fortran = take_fortran_call();
    if value.is_null() || flag.is_null() {
        return on.raise(func, MPI_ERR_ARG, "attribute_val or flag is NULL");
    }
    let found = if kind == Kind::Comm && keyval_index(keyval).is_none() {
        match predefined(keyval) {
            Some(p) => p.map(|p| p as *mut c_void),
            None => return on.raise(func, MPI_ERR_KEYVAL, format!("invalid keyval {keyval:#x}")),
        }
    } else {
        // Fortran gets the integer (a C-set pointer as an integer), C a pointer.
        let pick = |a: &Attr| if fortran { a.value } else { a.for_c() };
        match with_table(|t| keyval_of(t, kind, keyval).map(|_| t.attrs.get(&(kind, h)).and_then(|l| l.iter().find(|a| a.key == keyval).map(pick)))) {
            Ok(v) => v,
            Err(m) => return on.raise(func, MPI_ERR_KEYVAL, m),
        }
    };
    // SAFETY: `value` points to a `void *` (the standard's attribute_val), `flag` to an int.
    unsafe {
        *flag = found.is_some() as c_int;
        if let Some(v) = found {
            *(value as *mut *mut c_void) = v;
        }
    }
    MPI_SUCCESS
}

/// Deletes one attribute. Its delete callback runs first, and when it fails the attribute
/// stays (the standard makes the call erroneous; MPICH keeps the value, and its attrerr
/// tests then expect the copy callback to still run on a dup).
pub(crate) fn delete_attr(func: &str, kind: Kind, on: ErrOn, h: c_int, keyval: c_int) -> c_int {
    let r = with_table(|t| {
        let kv = keyval_of(t, kind, keyval)?;
        let l = t.attrs.get(&(kind, h)).ok_or("no such attribute")?;
        let a = l.iter().find(|a| a.key == keyval).ok_or("no such attribute")?.clone();
        Ok::<_, String>((a, kv))
    });
    let (a, kv) = match r {
        Ok(x) => x,
        Err(m) => return on.raise(func, MPI_ERR_KEYVAL, m),
    };
    if let Some(del) = kv.delete {
        // SAFETY: a user callback with the standard's signature.
        let rc = unsafe { del(h, keyval, a.for_callback(&kv), kv.extra) };
        if rc != MPI_SUCCESS {
            return on.callback_failed(func, &format!("the delete callback of keyval {keyval:#x}"), rc);
        }
    }
    // The callback ran without the lock: drop the entry it was given, if still there.
    with_table(|t| {
        if let Some(l) = t.attrs.get_mut(&(kind, h)) {
            l.retain(|x| !(x.key == keyval && x.value == a.value));
        }
    });
    MPI_SUCCESS
}

/// Checks that MPI is up and `comm` exists.
fn comm_ok(func: &str, comm: MPI_Comm) -> Result<(), c_int> {
    if !mpi_core::runtime::is_active() {
        return Err(not_initialized(func));
    }
    let ok = crate::handles::comm_index(comm).is_some_and(|i| mpi_core::runtime::with(|rt| rt.comms.get(i).is_some()));
    if ok {
        Ok(())
    } else {
        Err(raise(MPI_COMM_WORLD, func, MPI_ERR_COMM, format!("invalid communicator {comm:#x}")))
    }
}

/// Checks that `t` is a datatype (predefined or a live user type).
fn type_ok(func: &str, t: MPI_Datatype) -> Result<(), c_int> {
    if crate::types::lookup(t).is_some() {
        Ok(())
    } else {
        Err(raise(MPI_COMM_WORLD, func, MPI_ERR_TYPE, format!("invalid datatype {t:#x}")))
    }
}

macro_rules! tryc {
    ($e:expr) => {
        if let Err(rc) = $e {
            return rc;
        }
    };
}

// ------------------------------------------------------------------ communicator entry points

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_create_keyval(comm_copy_attr_fn: MPI_Comm_copy_attr_function, comm_delete_attr_fn: MPI_Comm_delete_attr_function, comm_keyval: *mut c_int, extra_state: *mut c_void) -> c_int {
    create_keyval("MPI_Comm_create_keyval", Kind::Comm, comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Keyval_create(copy_fn: MPI_Copy_function, delete_fn: MPI_Delete_function, keyval: *mut c_int, extra_state: *mut c_void) -> c_int {
    create_keyval("MPI_Keyval_create", Kind::Comm, copy_fn, delete_fn, keyval, extra_state)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_free_keyval(comm_keyval: *mut c_int) -> c_int {
    free_keyval("MPI_Comm_free_keyval", Kind::Comm, comm_keyval)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Keyval_free(keyval: *mut c_int) -> c_int {
    free_keyval("MPI_Keyval_free", Kind::Comm, keyval)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_set_attr(comm: MPI_Comm, comm_keyval: c_int, attribute_val: *mut c_void) -> c_int {
    tryc!(comm_ok("MPI_Comm_set_attr", comm));
    set_attr("MPI_Comm_set_attr", Kind::Comm, ErrOn::Comm(comm), comm, comm_keyval, attribute_val)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Attr_put(comm: MPI_Comm, keyval: c_int, attribute_val: *mut c_void) -> c_int {
    tryc!(comm_ok("MPI_Attr_put", comm));
    set_attr("MPI_Attr_put", Kind::Comm, ErrOn::Comm(comm), comm, keyval, attribute_val)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_get_attr(comm: MPI_Comm, comm_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
    tryc!(comm_ok("MPI_Comm_get_attr", comm));
    get_attr("MPI_Comm_get_attr", Kind::Comm, ErrOn::Comm(comm), comm, comm_keyval, attribute_val, flag)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Attr_get(comm: MPI_Comm, keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
    tryc!(comm_ok("MPI_Attr_get", comm));
    get_attr("MPI_Attr_get", Kind::Comm, ErrOn::Comm(comm), comm, keyval, attribute_val, flag)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_delete_attr(comm: MPI_Comm, comm_keyval: c_int) -> c_int {
    tryc!(comm_ok("MPI_Comm_delete_attr", comm));
    delete_attr("MPI_Comm_delete_attr", Kind::Comm, ErrOn::Comm(comm), comm, comm_keyval)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Attr_delete(comm: MPI_Comm, keyval: c_int) -> c_int {
    tryc!(comm_ok("MPI_Attr_delete", comm));
    delete_attr("MPI_Attr_delete", Kind::Comm, ErrOn::Comm(comm), comm, keyval)
}

// ------------------------------------------------------------------ datatype entry points

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_create_keyval(type_copy_attr_fn: MPI_Type_copy_attr_function, type_delete_attr_fn: MPI_Type_delete_attr_function, type_keyval: *mut c_int, extra_state: *mut c_void) -> c_int {
    // The type callback types are the communicator ones (MPI_Datatype and MPI_Comm are both
    // `int` in the MPICH ABI).
    create_keyval("MPI_Type_create_keyval", Kind::Type, type_copy_attr_fn, type_delete_attr_fn, type_keyval, extra_state)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_free_keyval(type_keyval: *mut c_int) -> c_int {
    free_keyval("MPI_Type_free_keyval", Kind::Type, type_keyval)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_set_attr(datatype: MPI_Datatype, type_keyval: c_int, attribute_val: *mut c_void) -> c_int {
    tryc!(type_ok("MPI_Type_set_attr", datatype));
    set_attr("MPI_Type_set_attr", Kind::Type, ErrOn::Comm(MPI_COMM_WORLD), datatype, type_keyval, attribute_val)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_get_attr(datatype: MPI_Datatype, type_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
    tryc!(type_ok("MPI_Type_get_attr", datatype));
    get_attr("MPI_Type_get_attr", Kind::Type, ErrOn::Comm(MPI_COMM_WORLD), datatype, type_keyval, attribute_val, flag)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Type_delete_attr(datatype: MPI_Datatype, type_keyval: c_int) -> c_int {
    tryc!(type_ok("MPI_Type_delete_attr", datatype));
    delete_attr("MPI_Type_delete_attr", Kind::Type, ErrOn::Comm(MPI_COMM_WORLD), datatype, type_keyval)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ptr::null_mut;

    fn get(fortran: bool, h: c_int, k: c_int) -> *mut c_void {
        let mut v: *mut c_void = null_mut();
        let mut flag: c_int = 0;
        fortran_call(fortran);
        let rc = get_attr("t", Kind::Type, ErrOn::Comm(MPI_COMM_WORLD), h, k, &mut v as *mut *mut c_void as *mut c_void, &mut flag);
        assert_eq!((rc, flag), (MPI_SUCCESS, 1));
        v
    }

    /// An attribute Fortran set is an integer: C reads a pointer to it (MPICH's
    /// fandcattrf90, attrlangf90), Fortran the integer; a C-set pointer reads in Fortran as
    /// the address.
    #[test]
    fn fortran_and_c_attribute_values() {
        let mut k: c_int = 0;
        assert_eq!(create_keyval("t", Kind::Type, None, None, &mut k, null_mut()), MPI_SUCCESS);
        let h = 0x4c00_7777;
        fortran_call(true);
        assert_eq!(set_attr("t", Kind::Type, ErrOn::Comm(MPI_COMM_WORLD), h, k, 5555 as *mut c_void), MPI_SUCCESS);
        let p = get(false, h, k);
        // SAFETY: C gets a pointer to the stored integer, valid while the attribute is set.
        assert_eq!(unsafe { *(p as *const MPI_Aint) }, 5555);
        assert_eq!(get(true, h, k) as MPI_Aint, 5555);

        let mut x: c_int = 3;
        let px = &mut x as *mut c_int as *mut c_void;
        fortran_call(false);
        assert_eq!(set_attr("t", Kind::Type, ErrOn::Comm(MPI_COMM_WORLD), h, k, px), MPI_SUCCESS);
        assert_eq!(get(false, h, k), px);
        assert_eq!(get(true, h, k), px);
        assert!(!take_fortran_call());
        let _ = delete_all(Kind::Type, h);
    }
}
