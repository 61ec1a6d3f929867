//! MPI-IO in the C layer: the file table behind `MPI_File` handles, the files' error
//! handlers, and the calls that open, close and manage files. Views and file pointers are
//! in `io_view.rs`, data access in `io_access.rs`; the engine parts in `mpi_core::io`.
//!
//! Each open file has a private duplicate of the communicator it was opened on: the
//! collective steps (agreeing on the access mode, rank 0 creating the file and the shared
//! file pointer, the barriers of close and set_view) run over it with the ordinary
//! collectives, so they never mix with the program's messages.
//!
//! Errors on a file run the file's error handler; errors with no file (`MPI_File_open`,
//! `MPI_File_delete`, an invalid handle) run the handler of `MPI_FILE_NULL`. Both start as
//! `MPI_ERRORS_RETURN`, as the standard says (MPI 3.1 §13.7).

use crate::abi::*;
use crate::errhandlers::{self, HandlerKind};
use crate::errors::{error_class, fatal, make_code};
use crate::handles::{errhandler_index, file_handle, file_index};
use crate::info::Pairs;
use mpi_core::error::MpiError;
use mpi_core::io::{file, shared_pointer, Amode, File};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The state of one open file that calls change, under the file's mutex (the I/O of one
/// file's calls is serialised in this process; other processes run in parallel).
pub struct FileState {
    pub core: File,
    pub amode: c_int,
    /// The view's etype and filetype as set (derived ones duplicated, freed at the next
    /// `MPI_File_set_view` and at close), and its data representation.
    pub etype: MPI_Datatype,
    pub filetype: MPI_Datatype,
    pub datarep: String,
    /// The registered representation `datarep` names, if it is not a predefined one.
    pub user_rep: Option<Arc<crate::datarep::UserRep>>,
    /// The duplicates of derived view types this file owns.
    pub owned_types: Vec<MPI_Datatype>,
    pub info: Pairs,
    /// The status of the split collective begun and not yet ended, if any.
    pub split: Option<mpi_core::request::Status>,
}

pub struct OpenFile {
    /// The file's private duplicate of the communicator it was opened on.
    pub comm: MPI_Comm,
    pub rank: usize,
    pub size: usize,
    pub errhandler: AtomicI32,
    pub state: Mutex<FileState>,
}

impl OpenFile {
    pub fn lock(&self) -> MutexGuard<'_, FileState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

static FILES: Mutex<Vec<Option<Arc<OpenFile>>>> = Mutex::new(Vec::new());

/// The handler of `MPI_FILE_NULL`: runs for errors with no file, and new files start with it.
static DEFAULT_FILE_ERRHANDLER: AtomicI32 = AtomicI32::new(MPI_ERRORS_RETURN);

fn files() -> MutexGuard<'static, Vec<Option<Arc<OpenFile>>>> {
    FILES.lock().unwrap_or_else(|p| p.into_inner())
}

/// The open file of handle `fh`.
pub fn lookup(fh: MPI_File) -> Option<Arc<OpenFile>> {
    files().get(file_index(fh)?)?.clone()
}

// ------------------------------------------------------------------ errors

/// Runs the error handler of `fh` (that of `MPI_FILE_NULL` when `fh` is no open file) for
/// `code`: returns `code` unless the handler is fatal.
pub fn invoke_file_handler(fh: MPI_File, code: c_int, func: &str, msg: &str) -> c_int {
    let h = lookup(fh).map_or_else(|| DEFAULT_FILE_ERRHANDLER.load(Ordering::Relaxed), |f| f.errhandler.load(Ordering::Relaxed));
    match h {
        MPI_ERRORS_RETURN => code,
        h if errhandler_index(h).is_some() => {
            // The call returns the code as the handler leaves it (MPICH's
            // errors/io/fileerrret: a handler that sets MPI_SUCCESS makes the call succeed).
            let (mut f, mut e) = (fh, code);
            errhandlers::call_file_handler(h, &mut f, &mut e);
            e
        }
        _ => fatal(func, error_class(code), msg),
    }
}

/// Raises an error in `func` on file `fh` (see `invoke_file_handler`).
pub fn raise_file(fh: MPI_File, func: &str, class: c_int, msg: impl Into<String>) -> c_int {
    let msg = msg.into();
    let code = make_code(class, format!("{func}: {msg}"));
    invoke_file_handler(fh, code, func, &msg)
}

/// Raises an engine error in `func` on file `fh`.
pub fn raise_file_core(fh: MPI_File, func: &str, e: MpiError) -> c_int {
    raise_file(fh, func, e.class as c_int, e.msg)
}

/// The open file of `fh`, or the raised `MPI_ERR_FILE`.
pub fn file_of(func: &str, fh: MPI_File) -> Result<Arc<OpenFile>, c_int> {
    lookup(fh).ok_or_else(|| {
        let msg = if fh.is_null() { "the file is MPI_FILE_NULL".to_string() } else { format!("invalid file handle {fh:p} (not an open file)") };
        raise_file(std::ptr::null_mut(), func, MPI_ERR_FILE, msg)
    })
}

macro_rules! tryf {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(rc) => return rc,
        }
    };
}
pub(crate) use tryf;

// ------------------------------------------------------------------ collective helpers

/// Element-wise maximum of `v` over `comm` (every process passes as many values).
pub fn allreduce_max(comm: MPI_Comm, v: &mut [i64]) {
    let inp = v.to_vec();
    // SAFETY: both buffers hold v.len() i64 values.
    unsafe { crate::coll::PMPI_Allreduce(inp.as_ptr() as *const c_void, v.as_mut_ptr() as *mut c_void, v.len() as c_int, MPI_INT64_T, MPI_MAX, comm) };
}

/// Rank 0's `buf` on every process of `comm`.
pub fn bcast(comm: MPI_Comm, buf: &mut [u8]) {
    // SAFETY: buf holds buf.len() bytes on every process (same length everywhere).
    unsafe { crate::coll::PMPI_Bcast(buf.as_mut_ptr() as *mut c_void, buf.len() as c_int, MPI_BYTE, 0, comm) };
}

pub fn barrier(comm: MPI_Comm) {
    // SAFETY: a plain collective on a live communicator.
    unsafe { crate::coll::PMPI_Barrier(comm) };
}

/// Sum of `v` over the lower ranks of `comm` (0 on rank 0).
pub fn exscan_sum(comm: MPI_Comm, rank: usize, v: i64) -> i64 {
    let mut out = 0i64;
    // SAFETY: one i64 in each buffer.
    unsafe { crate::coll::PMPI_Exscan(&v as *const i64 as *const c_void, &mut out as *mut i64 as *mut c_void, 1, MPI_INT64_T, MPI_SUM, comm) };
    if rank == 0 {
        0
    } else {
        out
    }
}

/// Makes the processes of `comm` agree on an error: each passes its own (class 0: none);
/// all get the largest class, with their own message if they had that error.
pub fn agree(comm: MPI_Comm, mine: Option<(c_int, String)>) -> Option<(c_int, String)> {
    let mut v = [mine.as_ref().map_or(0, |e| e.0 as i64)];
    allreduce_max(comm, &mut v);
    let class = v[0] as c_int;
    if class == 0 {
        return None;
    }
    Some(match mine {
        Some((c, m)) if c == class => (c, m),
        _ => (class, "the call failed on another process of the file's communicator".to_string()),
    })
}

/// `agree`, then the agreed error raised on file `fh`, or `MPI_SUCCESS`.
pub fn agreed(fh: MPI_File, func: &str, comm: MPI_Comm, mine: Option<(c_int, String)>) -> c_int {
    match agree(comm, mine) {
        Some((class, msg)) => raise_file(fh, func, class, msg),
        None => MPI_SUCCESS,
    }
}

/// A C string argument, or None for NULL.
///
/// # Safety
/// `s` must be NULL or NUL-terminated.
pub unsafe fn c_str(s: *const c_char) -> Option<String> {
    // SAFETY: per the contract.
    (!s.is_null()).then(|| unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
}

/// The path of a file name, without the file-system prefix ROMIO accepts ("ufs:", "nfs:").
pub fn os_path(name: &str) -> &str {
    const PREFIXES: &[&str] = &["ufs:", "nfs:", "lustre:", "gpfs:", "xfs:", "panfs:", "testfs:"];
    PREFIXES.iter().find_map(|p| name.strip_prefix(p)).unwrap_or(name)
}

// ------------------------------------------------------------------ open, close, delete

const MODE_BITS: c_int = MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;

/// The local check of an access mode (MPI 3.1 §13.2.1).
fn check_amode(amode: c_int) -> Result<(), String> {
    let rw = [MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR].iter().filter(|&&m| amode & m != 0).count();
    if amode & !MODE_BITS != 0 {
        return Err(format!("amode {amode:#x} has bits that are no MPI_MODE_* flag"));
    }
    if rw != 1 {
        return Err(format!("amode {amode:#x} must have exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and MPI_MODE_RDWR"));
    }
    if amode & MPI_MODE_RDONLY != 0 && amode & (MPI_MODE_CREATE | MPI_MODE_EXCL) != 0 {
        return Err("MPI_MODE_RDONLY cannot go with MPI_MODE_CREATE or MPI_MODE_EXCL".into());
    }
    if amode & MPI_MODE_RDWR != 0 && amode & MPI_MODE_SEQUENTIAL != 0 {
        return Err("MPI_MODE_RDWR cannot go with MPI_MODE_SEQUENTIAL".into());
    }
    Ok(())
}

fn core_amode(amode: c_int) -> Amode {
    Amode {
        read: amode & (MPI_MODE_RDONLY | MPI_MODE_RDWR) != 0,
        write: amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR) != 0,
        create: amode & MPI_MODE_CREATE != 0,
        excl: amode & MPI_MODE_EXCL != 0,
    }
}

/// A number that differs between opens, naming the open's shared-pointer file: the time,
/// the process and a count of this process's opens.
fn open_tag() -> u64 {
    static OPENS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    t ^ ((std::process::id() as u64) << 40) ^ (OPENS.fetch_add(1, Ordering::Relaxed) << 56)
}

/// What rank 0 tells the others after opening: its error class (0: none), where the
/// shared pointer starts, the open's tag, and its error message.
const OPEN_MSG: usize = 24 + 256;

fn encode_open(class: c_int, start: u64, tag: u64, msg: &str) -> Vec<u8> {
    let mut b = vec![0u8; OPEN_MSG];
    b[0..8].copy_from_slice(&(class as i64).to_le_bytes());
    b[8..16].copy_from_slice(&start.to_le_bytes());
    b[16..24].copy_from_slice(&tag.to_le_bytes());
    let m = msg.as_bytes();
    let n = m.len().min(256);
    b[24..24 + n].copy_from_slice(&m[..n]);
    b
}

fn decode_open(b: &[u8]) -> (c_int, u64, u64, String) {
    let f = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
    let end = b[24..].iter().position(|&c| c == 0).map_or(b.len(), |p| 24 + p);
    (f(0) as c_int, f(8), f(16), String::from_utf8_lossy(&b[24..end]).into_owned())
}

/// Rank 0's part of opening: the file (created if asked) and where the shared pointer
/// starts (at the end with `MPI_MODE_APPEND`).
fn open_first(path: &str, amode: c_int) -> Result<(std::fs::File, u64), MpiError> {
    let os = file::open_os(path, core_amode(amode))?;
    let start = if amode & MPI_MODE_APPEND != 0 { os.metadata().map_or(0, |m| m.len()) } else { 0 };
    Ok((os, start))
}

/// Drops the file's communicator (on a failed open or at close).
fn free_comm(mut c: MPI_Comm) {
    // SAFETY: c is the file's own duplicate.
    unsafe { crate::comm::PMPI_Comm_free(&mut c) };
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_open(comm: MPI_Comm, filename: *const c_char, amode: c_int, info: MPI_Info, fh: *mut MPI_File) -> c_int {
    let func = "MPI_File_open";
    require_init!(func);
    let null = std::ptr::null_mut();
    let intra = mpi_core::runtime::with(|rt| crate::p2p_args::comm_of(rt, comm).map(|c| (!c.is_inter(), c.rank)));
    match intra {
        Ok((true, _)) => {}
        Ok((false, _)) => return raise_file(null, func, MPI_ERR_COMM, "MPI_File_open needs an intracommunicator"),
        Err((class, msg)) => return raise_file(null, func, class, msg),
    }
    if fh.is_null() {
        return raise_file(null, func, MPI_ERR_ARG, "fh is NULL");
    }
    // A failed open leaves MPI_FILE_NULL (as ROMIO does).
    // SAFETY: checked non-null.
    unsafe { *fh = null };
    // SAFETY: NULL or a C string, per the standard.
    let name = unsafe { c_str(filename) };
    let pairs = crate::info::pairs(info);
    let mine = match (&name, &pairs, check_amode(amode)) {
        (None, _, _) => Some((MPI_ERR_ARG, "filename is NULL".to_string())),
        (_, None, _) => Some((MPI_ERR_INFO, format!("invalid info handle {info:#x}"))),
        (_, _, Err(m)) => Some((MPI_ERR_AMODE, m)),
        _ => None,
    };
    // One reduction checks the arguments everywhere and that all passed the same amode.
    let mut v = [mine.as_ref().map_or(0, |e| e.0 as i64), amode as i64, -(amode as i64)];
    allreduce_max(comm, &mut v);
    if v[0] != 0 {
        let (class, msg) = match mine {
            Some(e) if e.0 as i64 == v[0] => e,
            _ => (v[0] as c_int, "the arguments are invalid on another process of the communicator".to_string()),
        };
        return raise_file(null, func, class, msg);
    }
    if v[1] != -v[2] {
        return raise_file(null, func, MPI_ERR_NOT_SAME, format!("the processes passed different amodes (this one {amode:#x})"));
    }
    let (name, pairs) = (name.unwrap_or_default(), pairs.unwrap_or_default());
    let path = os_path(&name).to_string();
    let mut fcomm = MPI_COMM_NULL;
    // SAFETY: comm was checked; fcomm is a valid out pointer.
    let rc = unsafe { crate::comm::PMPI_Comm_dup(comm, &mut fcomm) };
    if rc != MPI_SUCCESS {
        return rc;
    }
    let (rank, size) = mpi_core::runtime::with(|rt| crate::p2p_args::comm_of(rt, fcomm).map_or((0, 1), |c| (c.rank, c.size())));
    // Rank 0 creates (MPI_MODE_EXCL: only it may succeed) and tells the others.
    let mut os = None;
    let mut msg = if rank == 0 {
        let o = open_first(&path, amode);
        let m = match &o {
            Ok((_, start)) => encode_open(0, *start, open_tag(), ""),
            Err(e) => encode_open(e.class as c_int, 0, 0, &e.msg),
        };
        os = Some(o.map(|(f, _)| f));
        m
    } else {
        vec![0u8; OPEN_MSG]
    };
    bcast(fcomm, &mut msg);
    let (class0, start, tag, msg0) = decode_open(&msg);
    if class0 != 0 {
        free_comm(fcomm);
        let m = if rank == 0 { msg0 } else { format!("{msg0} (on process 0)") };
        return raise_file(null, func, class0, m);
    }
    if rank != 0 {
        os = Some(file::open_os(&path, Amode { create: false, excl: false, ..core_amode(amode) }));
    }
    let os = os.expect("set above");
    if let Some((class, m)) = agree(fcomm, os.as_ref().err().map(|e| (e.class as c_int, e.msg.clone()))) {
        free_comm(fcomm);
        return raise_file(null, func, class, m);
    }
    let sp = shared_pointer::SharedPointer::new(shared_pointer::path_for(std::path::Path::new(&path), tag), start);
    let mut core = File::new(os.expect("agreed"), path, core_amode(amode), sp);
    if amode & MPI_MODE_APPEND != 0 {
        core.pos = match core.end_offset() {
            Ok(p) => p,
            Err(e) => return raise_file_core(null, func, e),
        };
    }
    let state = FileState { core, amode, etype: MPI_BYTE, filetype: MPI_BYTE, datarep: "native".into(), user_rep: None, owned_types: Vec::new(), info: pairs, split: None };
    let of = Arc::new(OpenFile { comm: fcomm, rank, size, errhandler: AtomicI32::new(DEFAULT_FILE_ERRHANDLER.load(Ordering::Relaxed)), state: Mutex::new(state) });
    let idx = crate::handles::store_in_free_slot(&mut files(), of);
    // SAFETY: checked non-null.
    unsafe { *fh = file_handle(idx) };
    MPI_SUCCESS
}

/// Frees the view's duplicated datatypes (named ones were not duplicated).
pub fn free_view_types(st: &mut FileState) {
    for mut t in st.owned_types.drain(..) {
        // SAFETY: a handle this module made with MPI_Type_dup.
        unsafe { crate::types::PMPI_Type_free(&mut t) };
    }
    (st.etype, st.filetype) = (MPI_BYTE, MPI_BYTE);
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_close(fh: *mut MPI_File) -> c_int {
    let func = "MPI_File_close";
    require_init!(func);
    if fh.is_null() {
        return raise_file(std::ptr::null_mut(), func, MPI_ERR_ARG, "fh is NULL");
    }
    // SAFETY: checked non-null.
    let h = unsafe { *fh };
    let f = tryf!(file_of(func, h));
    // Everyone is done with the shared pointer and the file before either goes.
    barrier(f.comm);
    let (delete, path, shared) = {
        let mut st = f.lock();
        free_view_types(&mut st);
        let shared = st.core.shared.path.clone();
        (st.amode & MPI_MODE_DELETE_ON_CLOSE != 0, st.core.path.clone(), shared)
    };
    if let Some(i) = file_index(h) {
        files()[i] = None;
    }
    let comm = f.comm;
    let rank = f.rank;
    drop(f);
    barrier(comm);
    let mut err = None;
    if rank == 0 {
        // The shared pointer's hidden file exists if the pointer ever moved.
        let _ = std::fs::remove_file(shared);
        if delete {
            if let Err(e) = std::fs::remove_file(&path) {
                err = Some(mpi_core::io::os_error::error(&e, "cannot delete (MPI_MODE_DELETE_ON_CLOSE)", &path));
            }
        }
    }
    free_comm(comm);
    // SAFETY: checked non-null.
    unsafe { *fh = std::ptr::null_mut() };
    match err {
        Some(e) => raise_file_core(std::ptr::null_mut(), func, e),
        None => MPI_SUCCESS,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_delete(filename: *const c_char, info: MPI_Info) -> c_int {
    let func = "MPI_File_delete";
    require_init!(func);
    let null = std::ptr::null_mut();
    // SAFETY: NULL or a C string, per the standard.
    let Some(name) = (unsafe { c_str(filename) }) else {
        return raise_file(null, func, MPI_ERR_ARG, "filename is NULL");
    };
    if crate::info::pairs(info).is_none() {
        return raise_file(null, func, MPI_ERR_INFO, format!("invalid info handle {info:#x}"));
    }
    let path = os_path(&name);
    match std::fs::remove_file(path) {
        Ok(()) => MPI_SUCCESS,
        Err(e) => raise_file_core(null, func, mpi_core::io::os_error::error(&e, "cannot delete", path)),
    }
}

// ------------------------------------------------------------------ size, mode, group, info

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_size(fh: MPI_File, size: *mut MPI_Offset) -> c_int {
    let func = "MPI_File_get_size";
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    if size.is_null() {
        return raise_file(fh, func, MPI_ERR_ARG, "size is NULL");
    }
    let r = f.lock().core.size();
    match r {
        // SAFETY: checked non-null.
        Ok(s) => unsafe { *size = s as MPI_Offset },
        Err(e) => return raise_file_core(fh, func, e),
    }
    MPI_SUCCESS
}

/// The collective resize calls: all pass the same size; rank 0 runs `op`, then all wait.
fn resize(func: &str, fh: MPI_File, size: MPI_Offset, op: fn(&File, u64) -> mpi_core::error::MpiResult<()>) -> c_int {
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    let mut v = [size, -size];
    allreduce_max(f.comm, &mut v);
    if v[0] != -v[1] {
        return raise_file(fh, func, MPI_ERR_NOT_SAME, format!("the processes passed different sizes (this one {size})"));
    }
    if size < 0 {
        return raise_file(fh, func, MPI_ERR_ARG, format!("negative size {size}"));
    }
    let mine = {
        let st = f.lock();
        if let Err(e) = st.core.check_writable() {
            Some((e.class as c_int, e.msg))
        } else if f.rank == 0 {
            op(&st.core, size as u64).err().map(|e| (e.class as c_int, e.msg))
        } else {
            None
        }
    };
    agreed(fh, func, f.comm, mine)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_set_size(fh: MPI_File, size: MPI_Offset) -> c_int {
    resize("MPI_File_set_size", fh, size, File::set_size)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_preallocate(fh: MPI_File, size: MPI_Offset) -> c_int {
    resize("MPI_File_preallocate", fh, size, File::preallocate)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_amode(fh: MPI_File, amode: *mut c_int) -> c_int {
    let func = "MPI_File_get_amode";
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    if amode.is_null() {
        return raise_file(fh, func, MPI_ERR_ARG, "amode is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *amode = f.lock().amode };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_group(fh: MPI_File, group: *mut MPI_Group) -> c_int {
    let func = "MPI_File_get_group";
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    if group.is_null() {
        return raise_file(fh, func, MPI_ERR_ARG, "group is NULL");
    }
    let members = mpi_core::runtime::with(|rt| crate::p2p_args::comm_of(rt, f.comm).map(|c| c.world_ranks.clone()));
    match members {
        // SAFETY: checked non-null.
        Ok(m) => unsafe { *group = crate::group::new_group(m) },
        Err((class, msg)) => return raise_file(fh, func, class, msg),
    }
    MPI_SUCCESS
}

/// Keys MPICH's ROMIO reports for every file, with the values that describe what OxMPI
/// does (collective buffering for writes and data sieving for reads when they pay,
/// neither for the other direction); the program's own pairs follow. `romio_cb_write`
/// is obeyed: "disable" turns collective buffering off, "enable" on for every
/// non-contiguous collective write.
const FILE_HINTS: &[(&str, &str)] = &[("romio_cb_read", "disable"), ("romio_cb_write", "automatic"), ("romio_ds_read", "automatic"), ("romio_ds_write", "disable")];

/// The file's value of hint `key`, if the program set one.
pub fn hint<'a>(st: &'a FileState, key: &str) -> Option<&'a str> {
    st.info.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_info(fh: MPI_File, info_used: *mut MPI_Info) -> c_int {
    let func = "MPI_File_get_info";
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    if info_used.is_null() {
        return raise_file(fh, func, MPI_ERR_ARG, "info_used is NULL");
    }
    let mut p: Pairs = FILE_HINTS.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    for (k, v) in f.lock().info.iter() {
        match p.iter_mut().find(|(kk, _)| kk == k) {
            Some(e) => e.1 = v.clone(),
            None => p.push((k.clone(), v.clone())),
        }
    }
    // SAFETY: checked non-null.
    unsafe { *info_used = crate::info::new_info(p) };
    MPI_SUCCESS
}

/// Adds the pairs of `info` to the file's (later values win).
pub fn merge_info(st: &mut FileState, set: Pairs) {
    for (k, v) in set {
        match st.info.iter_mut().find(|(kk, _)| *kk == k) {
            Some(e) => e.1 = v,
            None => st.info.push((k, v)),
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_set_info(fh: MPI_File, info: MPI_Info) -> c_int {
    let func = "MPI_File_set_info";
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    let Some(p) = crate::info::pairs(info) else {
        return raise_file(fh, func, MPI_ERR_INFO, format!("invalid info handle {info:#x}"));
    };
    merge_info(&mut f.lock(), p);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_sync(fh: MPI_File) -> c_int {
    let func = "MPI_File_sync";
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    let r = {
        let st = f.lock();
        if st.split.is_some() {
            return raise_file(fh, func, MPI_ERR_IO, "a split collective is in progress on the file");
        }
        st.core.sync()
    };
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(e) => raise_file_core(fh, func, e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_set_atomicity(fh: MPI_File, flag: c_int) -> c_int {
    let func = "MPI_File_set_atomicity";
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    let on = (flag != 0) as i64;
    let mut v = [on, -on];
    allreduce_max(f.comm, &mut v);
    if v[0] != -v[1] {
        return raise_file(fh, func, MPI_ERR_NOT_SAME, "the processes passed different flags");
    }
    f.lock().core.atomic = on != 0;
    // Accesses made after the call on any process see the new mode.
    barrier(f.comm);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_atomicity(fh: MPI_File, flag: *mut c_int) -> c_int {
    let func = "MPI_File_get_atomicity";
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    if flag.is_null() {
        return raise_file(fh, func, MPI_ERR_ARG, "flag is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *flag = f.lock().core.atomic as c_int };
    MPI_SUCCESS
}

// ------------------------------------------------------------------ error handlers

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_create_errhandler(file_errhandler_fn: MPI_File_errhandler_function, errhandler: *mut MPI_Errhandler) -> c_int {
    // SAFETY: the table keeps every handler in the communicator callback type (same ABI:
    // a pointer and an int pointer, variadic); `call_file_handler` turns it back.
    let f: MPI_Comm_errhandler_function = unsafe { std::mem::transmute(file_errhandler_fn) };
    errhandlers::create("MPI_File_create_errhandler", HandlerKind::File, f, errhandler)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_set_errhandler(file: MPI_File, errhandler: MPI_Errhandler) -> c_int {
    let func = "MPI_File_set_errhandler";
    require_init!(func);
    if !matches!(errhandler, MPI_ERRORS_ARE_FATAL | MPI_ERRORS_RETURN | MPI_ERRORS_ABORT) && !errhandlers::is_file_handler(errhandler) {
        let msg = if errhandlers::is_handler(errhandler) {
            format!("error handler {errhandler:#x} was not created for files (use MPI_File_create_errhandler)")
        } else {
            format!("invalid error handler {errhandler:#x}")
        };
        return raise_file(file, func, MPI_ERR_ARG, msg);
    }
    if file.is_null() {
        DEFAULT_FILE_ERRHANDLER.store(errhandler, Ordering::Relaxed);
        return MPI_SUCCESS;
    }
    let f = tryf!(file_of(func, file));
    f.errhandler.store(errhandler, Ordering::Relaxed);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_errhandler(file: MPI_File, errhandler: *mut MPI_Errhandler) -> c_int {
    let func = "MPI_File_get_errhandler";
    require_init!(func);
    let h = if file.is_null() { DEFAULT_FILE_ERRHANDLER.load(Ordering::Relaxed) } else { tryf!(file_of(func, file)).errhandler.load(Ordering::Relaxed) };
    if errhandler.is_null() {
        return raise_file(file, func, MPI_ERR_ARG, "errhandler is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *errhandler = h };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_call_errhandler(fh: MPI_File, errorcode: c_int) -> c_int {
    let func = "MPI_File_call_errhandler";
    require_init!(func);
    if !fh.is_null() {
        tryf!(file_of(func, fh));
    }
    let msg = crate::errors::error_text(errorcode);
    invoke_file_handler(fh, errorcode, func, &msg);
    MPI_SUCCESS
}
