//! Info objects: ordered (key, value) string lists behind `MPI_Info` handles, plus the
//! read-only `MPI_INFO_ENV` describing how the process was started.

use crate::abi::*;
use crate::errors::{raise, write_c_string};
use crate::handles::{info_handle, info_index};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::Mutex;

pub type Pairs = Vec<(String, String)>;

static INFOS: Mutex<Vec<Option<Pairs>>> = Mutex::new(Vec::new());

fn table() -> std::sync::MutexGuard<'static, Vec<Option<Pairs>>> {
    INFOS.lock().unwrap_or_else(|p| p.into_inner())
}

/// `MPI_INFO_ENV`: the keys the standard reserves that we know.
fn env_pairs() -> Pairs {
    let mut v = Vec::new();
    let args: Vec<String> = std::env::args().collect();
    if let Some(cmd) = args.first() {
        v.push(("command".into(), cmd.clone()));
    }
    if args.len() > 1 {
        v.push(("argv".into(), args[1..].join(" ")));
    }
    if let Ok(n) = std::env::var("PMI_SIZE") {
        v.push(("maxprocs".into(), n));
    } else {
        v.push(("maxprocs".into(), "1".into()));
    }
    if let Ok(d) = std::env::current_dir() {
        v.push(("wdir".into(), d.display().to_string()));
    }
    v.push(("arch".into(), std::env::consts::ARCH.into()));
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into our buffer.
    unsafe { libc::gethostname(buf.as_mut_ptr() as *mut c_char, buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    v.push(("host".into(), String::from_utf8_lossy(&buf[..end]).into_owned()));
    let level = if mpi_core::runtime::is_initialized() && !mpi_core::runtime::is_finalized() {
        mpi_core::runtime::thread_level()
    } else {
        MPI_THREAD_SINGLE
    };
    let name = ["MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"];
    v.push(("thread_level".into(), name[level.clamp(0, 3) as usize].into()));
    v
}

/// The pairs of info `h` (`MPI_INFO_NULL`: empty), or None for an invalid handle.
pub fn pairs(h: MPI_Info) -> Option<Pairs> {
    match h {
        MPI_INFO_NULL => Some(Vec::new()),
        MPI_INFO_ENV => Some(env_pairs()),
        _ => table().get(info_index(h)?).cloned().flatten(),
    }
}

/// Sets `key` to `value` in user info object `h`; false for `MPI_INFO_NULL`, `MPI_INFO_ENV`
/// and invalid handles.
pub fn set_pair(h: MPI_Info, key: &str, value: &str) -> bool {
    let mut t = table();
    let Some(p) = info_index(h).and_then(|i| t.get_mut(i)).and_then(|s| s.as_mut()) else {
        return false;
    };
    match p.iter_mut().find(|(k, _)| k == key) {
        Some(e) => e.1 = value.to_string(),
        None => p.push((key.to_string(), value.to_string())),
    }
    true
}

/// A new info object holding `p`.
pub fn new_info(p: Pairs) -> MPI_Info {
    info_handle(crate::handles::store_in_free_slot(&mut table(), p))
}

/// Runs `f` on the pairs of user info `h` (writable; `MPI_INFO_ENV` is not).
fn with_mut<R>(func: &str, h: MPI_Info, f: impl FnOnce(&mut Pairs) -> R) -> Result<R, c_int> {
    let mut t = table();
    match info_index(h).and_then(|i| t.get_mut(i)).and_then(|s| s.as_mut()) {
        Some(p) => Ok(f(p)),
        None => {
            drop(t);
            Err(raise(MPI_COMM_WORLD, func, MPI_ERR_INFO, format!("invalid or read-only info handle {h:#x}")))
        }
    }
}

fn read(func: &str, h: MPI_Info) -> Result<Pairs, c_int> {
    if h == MPI_INFO_NULL {
        return Err(raise(MPI_COMM_WORLD, func, MPI_ERR_INFO, "info is MPI_INFO_NULL"));
    }
    pairs(h).ok_or_else(|| raise(MPI_COMM_WORLD, func, MPI_ERR_INFO, format!("invalid info handle {h:#x}")))
}

/// A key argument: non-NULL, non-empty, shorter than MPI_MAX_INFO_KEY.
fn key_arg(func: &str, key: *const c_char) -> Result<String, c_int> {
    if key.is_null() {
        return Err(raise(MPI_COMM_WORLD, func, MPI_ERR_INFO_KEY, "key is NULL"));
    }
    // SAFETY: non-NULL, and the caller passes a NUL-terminated string.
    let k = unsafe { CStr::from_ptr(key) }.to_string_lossy().into_owned();
    if k.is_empty() || k.len() >= MPI_MAX_INFO_KEY as usize {
        return Err(raise(MPI_COMM_WORLD, func, MPI_ERR_INFO_KEY, format!("key of length {} (must be 1..{})", k.len(), MPI_MAX_INFO_KEY - 1)));
    }
    Ok(k)
}

macro_rules! tryc {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(rc) => return rc,
        }
    };
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_create(info: *mut MPI_Info) -> c_int {
    if info.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Info_create", MPI_ERR_ARG, "info is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *info = new_info(Vec::new()) };
    MPI_SUCCESS
}

/// `MPI_Get_hw_resource_info` (MPI 4.1 §11.4.4): a new info object describing the hardware
/// the process runs on. OxMPI knows no hardware detail beyond the node (which
/// `MPI_Comm_split_type` reaches), so the object is empty, as Open MPI's is.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_hw_resource_info(hw_info: *mut MPI_Info) -> c_int {
    require_init!("MPI_Get_hw_resource_info");
    if hw_info.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Get_hw_resource_info", MPI_ERR_ARG, "hw_info is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *hw_info = new_info(Vec::new()) };
    MPI_SUCCESS
}

/// `MPI_Info_create_env` (MPI 4.1 §11.4): a new info object with the keys of
/// `MPI_INFO_ENV`. Callable before `MPI_Init` and after `MPI_Finalize`. The command line
/// comes from the process itself, so `argc`/`argv` (which may be 0/NULL) are not read.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_create_env(_argc: c_int, _argv: *mut *mut c_char, info: *mut MPI_Info) -> c_int {
    if info.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Info_create_env", MPI_ERR_ARG, "info is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *info = new_info(env_pairs()) };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_set(info: MPI_Info, key: *const c_char, value: *const c_char) -> c_int {
    let func = "MPI_Info_set";
    let k = tryc!(key_arg(func, key));
    if value.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_INFO_VALUE, "value is NULL");
    }
    // SAFETY: non-NULL, and the caller passes a NUL-terminated string.
    let v = unsafe { CStr::from_ptr(value) }.to_string_lossy().into_owned();
    if v.len() >= MPI_MAX_INFO_VAL as usize {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_INFO_VALUE, format!("value of length {} (at most {})", v.len(), MPI_MAX_INFO_VAL - 1));
    }
    tryc!(with_mut(func, info, |p| match p.iter_mut().find(|(pk, _)| *pk == k) {
        Some(e) => e.1 = v,
        None => p.push((k, v)),
    }));
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_delete(info: MPI_Info, key: *const c_char) -> c_int {
    let func = "MPI_Info_delete";
    let k = tryc!(key_arg(func, key));
    let found = tryc!(with_mut(func, info, |p| {
        let n = p.len();
        p.retain(|(pk, _)| *pk != k);
        p.len() != n
    }));
    if found {
        MPI_SUCCESS
    } else {
        raise(MPI_COMM_WORLD, func, MPI_ERR_INFO_NOKEY, format!("key \"{k}\" is not set"))
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_get(info: MPI_Info, key: *const c_char, valuelen: c_int, value: *mut c_char, flag: *mut c_int) -> c_int {
    let func = "MPI_Info_get";
    let k = tryc!(key_arg(func, key));
    let p = tryc!(read(func, info));
    if flag.is_null() || (value.is_null() && valuelen > 0) || valuelen < 0 {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "flag or value is NULL, or valuelen is negative");
    }
    match p.iter().find(|(pk, _)| *pk == k) {
        Some((_, v)) => {
            // valuelen excludes the terminating NUL, as the standard says.
            // SAFETY: value holds valuelen + 1 bytes.
            unsafe {
                write_c_string(value, valuelen as usize + 1, v);
                *flag = 1;
            }
        }
        // SAFETY: checked non-null.
        None => unsafe { *flag = 0 },
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_get_string(info: MPI_Info, key: *const c_char, buflen: *mut c_int, value: *mut c_char, flag: *mut c_int) -> c_int {
    let func = "MPI_Info_get_string";
    let k = tryc!(key_arg(func, key));
    let p = tryc!(read(func, info));
    if flag.is_null() || buflen.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "flag or buflen is NULL");
    }
    match p.iter().find(|(pk, _)| *pk == k) {
        Some((_, v)) => {
            // SAFETY: buflen checked non-null; value holds *buflen bytes when non-zero.
            unsafe {
                let cap = *buflen;
                if cap > 0 && !value.is_null() {
                    write_c_string(value, cap as usize, v);
                }
                *buflen = v.len() as c_int + 1;
                *flag = 1;
            }
        }
        // SAFETY: checked non-null.
        None => unsafe { *flag = 0 },
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_get_valuelen(info: MPI_Info, key: *const c_char, valuelen: *mut c_int, flag: *mut c_int) -> c_int {
    let func = "MPI_Info_get_valuelen";
    let k = tryc!(key_arg(func, key));
    let p = tryc!(read(func, info));
    if flag.is_null() || valuelen.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "flag or valuelen is NULL");
    }
    let v = p.iter().find(|(pk, _)| *pk == k);
    // SAFETY: checked non-null.
    unsafe {
        *flag = v.is_some() as c_int;
        if let Some((_, v)) = v {
            *valuelen = v.len() as c_int;
        }
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_get_nkeys(info: MPI_Info, nkeys: *mut c_int) -> c_int {
    let p = tryc!(read("MPI_Info_get_nkeys", info));
    if nkeys.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Info_get_nkeys", MPI_ERR_ARG, "nkeys is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *nkeys = p.len() as c_int };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_get_nthkey(info: MPI_Info, n: c_int, key: *mut c_char) -> c_int {
    let func = "MPI_Info_get_nthkey";
    let p = tryc!(read(func, info));
    if key.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "key is NULL");
    }
    match usize::try_from(n).ok().and_then(|i| p.get(i)) {
        // SAFETY: the standard requires MPI_MAX_INFO_KEY bytes at `key`.
        Some((k, _)) => unsafe {
            write_c_string(key, MPI_MAX_INFO_KEY as usize, k);
            MPI_SUCCESS
        },
        None => raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, format!("n = {n} but the info has {} keys", p.len())),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_dup(info: MPI_Info, newinfo: *mut MPI_Info) -> c_int {
    let p = tryc!(read("MPI_Info_dup", info));
    if newinfo.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Info_dup", MPI_ERR_ARG, "newinfo is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *newinfo = new_info(p) };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Info_free(info: *mut MPI_Info) -> c_int {
    let func = "MPI_Info_free";
    if info.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "info is NULL");
    }
    // SAFETY: checked non-null.
    let h = unsafe { *info };
    let freed = info_index(h).is_some_and(|i| table().get_mut(i).and_then(|s| s.take()).is_some());
    if !freed {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_INFO, format!("invalid or predefined info handle {h:#x}"));
    }
    // SAFETY: checked non-null.
    unsafe { *info = MPI_INFO_NULL };
    MPI_SUCCESS
}

/// The key through which MPI 4.1 (§11.4.3) reports the memory allocation kinds an MPI
/// supports, on the World Model's communicators and on sessions (which may request kinds).
pub const MEMORY_ALLOC_KINDS_KEY: &str = "mpi_memory_alloc_kinds";

/// The value of `mpi_memory_alloc_kinds` for `requested` (a session's `mpi_memory_alloc_kinds`
/// info value, if any): "mpi,system" (always supported, and requested by default), then each
/// requested kind OxMPI supports, as written: `system`, and `mpi` with any of the restrictors
/// `alloc_mem`, `win_allocate`, `win_allocate_shared` (the memory-kinds side document's).
/// Kinds of devices (`cuda:device`, ...) are not supported and left out, as the standard
/// says an unsupported requested kind is.
pub fn memory_alloc_kinds(requested: Option<&str>) -> String {
    const MPI_RESTRICTORS: &[&str] = &["alloc_mem", "win_allocate", "win_allocate_shared"];
    let mut kinds: Vec<String> = vec!["mpi".into(), "system".into()];
    for kind in requested.unwrap_or("").split(',').map(str::trim).filter(|k| !k.is_empty()) {
        let mut parts = kind.split(':');
        let supported = match parts.next() {
            Some("system") => parts.next().is_none(),
            Some("mpi") => parts.all(|r| MPI_RESTRICTORS.contains(&r)),
            _ => false,
        };
        if supported && !kinds.iter().any(|k| k == kind) {
            kinds.push(kind.to_string());
        }
    }
    kinds.join(",")
}

/// The hints a communicator keeps and reports, with their defaults: MPI 4.1's
/// assertions (§7.4.4). OxMPI does not act on them yet; reporting them with the value set
/// tells the application that it may rely on what it asserted being accepted.
/// A default of "" means the key is reported only once set: `mpi_hw_resource_type`, which
/// `MPI_Comm_split_type` puts on its hardware-split communicators (MPI 4.1 §7.4.2).
pub const COMM_HINTS: &[(&str, &str)] = &[("mpi_assert_no_any_tag", "false"), ("mpi_assert_no_any_source", "false"), ("mpi_assert_exact_length", "false"), ("mpi_assert_allow_overtaking", "false"), ("mpi_hw_resource_type", "")];

/// The hints a window keeps and reports, with their defaults (MPI 4.1 §12.2.1;
/// `alloc_shared_noncontig` is read at creation).
pub const WIN_HINTS: &[(&str, &str)] = &[("no_locks", "false"), ("accumulate_ordering", "rar,raw,war,waw"), ("accumulate_ops", "same_op_no_op"), ("same_size", "false"), ("same_disp_unit", "false"), ("alloc_shared_noncontig", "false")];

/// Applies the pairs of `set` to the hints `kept`. Keys outside `known` are ignored, as
/// MPICH does (MPI 4.1 §10 lets an implementation ignore hints it does not use, and
/// `MPI_Comm_get_info`/`MPI_Win_get_info` then must not return them).
pub fn keep_hints(known: &[(&str, &str)], kept: &mut Pairs, set: Pairs) {
    for (k, v) in set {
        if !known.iter().any(|(name, _)| *name == k) {
            continue;
        }
        match kept.iter_mut().find(|(kk, _)| *kk == k) {
            Some(e) => e.1 = v,
            None => kept.push((k, v)),
        }
    }
}

/// The hints to report: every key of `known`, with the value kept or its default (keys
/// whose default is "" only when kept).
pub fn hints_used(known: &[(&str, &str)], kept: &Pairs) -> Pairs {
    known
        .iter()
        .filter_map(|(k, d)| match kept.iter().find(|(kk, _)| kk == k) {
            Some((_, v)) => Some((k.to_string(), v.clone())),
            None => (!d.is_empty()).then(|| (k.to_string(), d.to_string())),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::memory_alloc_kinds;

    #[test]
    fn memory_alloc_kinds_keeps_supported_requests_only() {
        assert_eq!(memory_alloc_kinds(None), "mpi,system");
        assert_eq!(memory_alloc_kinds(Some("")), "mpi,system");
        assert_eq!(memory_alloc_kinds(Some("mpi:win_allocate:alloc_mem")), "mpi,system,mpi:win_allocate:alloc_mem");
        assert_eq!(memory_alloc_kinds(Some(" system , mpi, cuda:device,mpi:alloc_mem,mpi:nope,system:x")), "mpi,system,mpi:alloc_mem");
        assert_eq!(memory_alloc_kinds(Some("rocm:host,level_zero:device")), "mpi,system");
    }
}
