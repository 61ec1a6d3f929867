//! Process life cycle: MPI_Init*, MPI_Finalize, MPI_Abort, and the environment queries.

use crate::abi::*;
use crate::errors::{not_initialized, raise, write_c_string};
use std::os::raw::{c_char, c_int};
use std::sync::OnceLock;

static MAIN_THREAD: OnceLock<std::thread::ThreadId> = OnceLock::new();

/// Version string of `MPI_Get_library_version`.
pub fn library_version() -> String {
    format!("OxMPI {} (MPICH ABI libmpi.so.12, MPI {MPI_VERSION}.{MPI_SUBVERSION})", env!("CARGO_PKG_VERSION"))
}

fn init(func: &str, required: c_int) -> c_int {
    // The engine sits behind one lock, so every thread level is provided.
    let level = required.clamp(MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE);
    match mpi_core::runtime::init(level, crate::errors::DEFAULT_ERRHANDLER) {
        Ok(()) => {
            let _ = MAIN_THREAD.set(std::thread::current().id());
            crate::dynamic::connect_to_parent();
            MPI_SUCCESS
        }
        Err(msg) => {
            mpi_core::say!("OxMPI: {func} failed: {msg}");
            std::process::exit(1)
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> c_int {
    init("MPI_Init", MPI_THREAD_SINGLE)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Init_thread(_argc: *mut c_int, _argv: *mut *mut *mut c_char, required: c_int, provided: *mut c_int) -> c_int {
    if !(MPI_THREAD_SINGLE..=MPI_THREAD_MULTIPLE).contains(&required) {
        mpi_core::say!("OxMPI: MPI_Init_thread: invalid thread level {required}; use MPI_THREAD_SINGLE..MPI_THREAD_MULTIPLE");
    }
    let rc = init("MPI_Init_thread", required);
    if !provided.is_null() {
        // SAFETY: checked non-null; the caller provides an int.
        unsafe { *provided = required.clamp(MPI_THREAD_SINGLE, MPI_THREAD_MULTIPLE) };
    }
    rc
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Finalize() -> c_int {
    require_init!("MPI_Finalize");
    crate::attributes::finalize_hook();
    // The jobs this process spawned end first (mpi_core::spawn).
    mpi_core::runtime::wait_until(|_| mpi_core::spawn::all_ended());
    crate::dynamic::unpublish_all();
    match mpi_core::runtime::finalize() {
        Ok(()) => MPI_SUCCESS,
        Err(msg) => {
            mpi_core::say!("OxMPI: MPI_Finalize: {msg}");
            MPI_ERR_OTHER
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Initialized(flag: *mut c_int) -> c_int {
    if flag.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Initialized", MPI_ERR_ARG, "flag is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *flag = mpi_core::runtime::is_initialized() as c_int };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Finalized(flag: *mut c_int) -> c_int {
    if flag.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Finalized", MPI_ERR_ARG, "flag is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *flag = mpi_core::runtime::is_finalized() as c_int };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Abort(_comm: MPI_Comm, errorcode: c_int) -> c_int {
    let rank = std::env::var("PMI_RANK").unwrap_or_else(|_| "0".into());
    mpi_core::say!("OxMPI: rank {rank} called MPI_Abort with error code {errorcode}");
    mpi_core::runtime::abort(errorcode, &format!("MPI_Abort({errorcode}) on rank {rank}"))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Query_thread(provided: *mut c_int) -> c_int {
    if !(mpi_core::runtime::is_initialized() || mpi_core::runtime::is_active()) {
        return not_initialized("MPI_Query_thread");
    }
    let level = mpi_core::runtime::thread_level();
    if provided.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Query_thread", MPI_ERR_ARG, "provided is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *provided = level };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Is_thread_main(flag: *mut c_int) -> c_int {
    if flag.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Is_thread_main", MPI_ERR_ARG, "flag is NULL");
    }
    let main = MAIN_THREAD.get().is_some_and(|t| *t == std::thread::current().id());
    // SAFETY: checked non-null.
    unsafe { *flag = main as c_int };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_processor_name(name: *mut c_char, resultlen: *mut c_int) -> c_int {
    if name.is_null() || resultlen.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Get_processor_name", MPI_ERR_ARG, "name or resultlen is NULL");
    }
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into our buffer.
    unsafe { libc::gethostname(buf.as_mut_ptr() as *mut c_char, buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let host = String::from_utf8_lossy(&buf[..end]).into_owned();
    // SAFETY: the standard requires MPI_MAX_PROCESSOR_NAME bytes at `name`.
    unsafe { *resultlen = write_c_string(name, MPI_MAX_PROCESSOR_NAME as usize, &host) };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_version(version: *mut c_int, subversion: *mut c_int) -> c_int {
    if version.is_null() || subversion.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Get_version", MPI_ERR_ARG, "version or subversion is NULL");
    }
    // SAFETY: checked non-null.
    unsafe {
        *version = MPI_VERSION;
        *subversion = MPI_SUBVERSION;
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_library_version(version: *mut c_char, resultlen: *mut c_int) -> c_int {
    if version.is_null() || resultlen.is_null() {
        return raise(MPI_COMM_WORLD, "MPI_Get_library_version", MPI_ERR_ARG, "version or resultlen is NULL");
    }
    // SAFETY: the standard requires MPI_MAX_LIBRARY_VERSION_STRING bytes at `version`.
    unsafe { *resultlen = write_c_string(version, MPI_MAX_LIBRARY_VERSION_STRING as usize, &library_version()) };
    MPI_SUCCESS
}
