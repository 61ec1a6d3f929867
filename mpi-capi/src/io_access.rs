//! MPI-IO data access: reads and writes at explicit offsets, through the individual file
//! pointer and through the shared one, in their blocking, collective, nonblocking, split
//! collective and ordered forms (MPI 3.1 §13.4).
//!
//! Every form ends in `transfer`: pack the user buffer (non-contiguous types), map the
//! view's stream range onto the file and `pwrite`/`pread` the pieces. The collective forms
//! do each process's part independently (no collective buffering), and the blocking
//! collective writes end with a barrier, so data written by any process is in the file for
//! all when the call returns. Nonblocking forms do the access at the call and return a
//! request that is already complete (MPI allows it). Ordered forms place each process's
//! data after that of the lower ranks with an exclusive scan, rank 0 advancing the shared
//! pointer by the total.

use crate::abi::*;
use crate::handles::request_handle;
use crate::io::{agree, allreduce_max, bcast, exscan_sum, file_of, raise_file, tryf, OpenFile};
use crate::io_view::not_sequential;
use crate::p2p_args::{empty_status, write_status};
use mpi_core::request::Status;
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Read,
    Write,
}

/// Where an access starts.
#[derive(Clone, Copy)]
enum Ptr {
    /// An explicit offset (etypes).
    At(MPI_Offset),
    /// The individual file pointer, advanced past the access.
    Individual,
    /// The shared file pointer, advanced past the access.
    Shared,
    /// The offset an ordered access computed (allowed in sequential mode).
    Ordered(u64),
}

type Failure = (c_int, String);

/// Etypes the access of (`count`, `dt`) covers under the view of `st`.
fn etypes_of(st: &crate::io::FileState, count: c_int, dt: MPI_Datatype) -> Result<u64, Failure> {
    let (raw, layout) = crate::p2p_args::buffer(std::ptr::dangling::<u8>() as *const c_void, count, dt)?;
    let bytes = layout.map_or(raw.len, |l| l.bytes());
    let e = st.core.view.etype_size;
    if bytes % e != 0 {
        return Err((MPI_ERR_IO, format!("the data ({bytes} bytes) is not a whole number of etypes ({e} bytes each)")));
    }
    Ok((bytes / e) as u64)
}

/// Does one access of this process: checks, moves the data, updates the pointer. Returns
/// the status (bytes moved).
fn transfer(f: &OpenFile, dir: Dir, ptr: Ptr, buf: *mut c_void, count: c_int, dt: MPI_Datatype) -> Result<Status, Failure> {
    let (raw, layout) = crate::p2p_args::buffer(buf, count, dt)?;
    let mut st = f.lock();
    match dir {
        Dir::Read => st.core.check_readable(),
        Dir::Write => st.core.check_writable(),
    }
    .map_err(|e| (e.class as c_int, e.msg))?;
    if matches!(ptr, Ptr::At(_) | Ptr::Individual) {
        not_sequential(&st)?;
    }
    let n = etypes_of(&st, count, dt)?;
    let core_err = |e: mpi_core::error::MpiError| (e.class as c_int, e.msg);
    let start = match ptr {
        Ptr::At(o) if o < 0 => return Err((MPI_ERR_ARG, format!("negative offset {o}"))),
        Ptr::At(o) => o as u64,
        Ptr::Ordered(o) => o,
        Ptr::Individual => st.core.pos,
        Ptr::Shared => st.core.shared().and_then(|s| s.fetch_add(n)).map_err(core_err)?,
    };
    let pos = st.core.stream_pos(start);
    let bytes = layout.as_ref().map_or(raw.len, |l| l.bytes());
    // "external32" views: values are converted on the way (see `same_external32`).
    let ext32 = if st.datarep == "external32" {
        let t = crate::types::lookup(dt).ok_or((MPI_ERR_TYPE, format!("invalid datatype {dt:#x}")))?;
        crate::io_view::same_external32(&t, count as usize, "buffer's datatype")?;
        Some(t)
    } else {
        None
    };
    let done = match (dir, &layout) {
        (_, _) if bytes == 0 => 0,
        (Dir::Write, _) if ext32.is_some() => {
            let mut data = vec![0u8; bytes];
            // SAFETY: `buffer` checked (buf, count, dt) describes the program's data.
            unsafe { ext32.as_ref().expect("checked").pack_external32(buf as *const u8, count as usize, &mut data) };
            st.core.write_stream(pos, &data).map_err(core_err)?;
            bytes
        }
        (Dir::Read, _) if ext32.is_some() => {
            let mut data = vec![0u8; bytes];
            let got = st.core.read_stream(pos, &mut data).map_err(core_err)?;
            // SAFETY: `buffer` checked (buf, count, dt) describes the program's buffer.
            unsafe { ext32.as_ref().expect("checked").unpack_external32(&data[..got], buf as *mut u8, count as usize) };
            got
        }
        (Dir::Write, None) => {
            // SAFETY: `buffer` checked the pointer covers `raw.len` bytes of the program's data.
            let data = unsafe { std::slice::from_raw_parts(raw.ptr, raw.len) };
            st.core.write_stream(pos, data).map_err(core_err)?;
            bytes
        }
        (Dir::Write, Some(l)) => {
            let mut data = vec![0u8; bytes];
            // SAFETY: the layout describes the program's buffer of `count` items.
            unsafe { l.dt.pack(l.base, l.count, &mut data) };
            st.core.write_stream(pos, &data).map_err(core_err)?;
            bytes
        }
        (Dir::Read, None) => {
            // SAFETY: `buffer` checked the pointer covers `raw.len` writable bytes.
            let out = unsafe { std::slice::from_raw_parts_mut(raw.ptr, raw.len) };
            st.core.read_stream(pos, out).map_err(core_err)?
        }
        (Dir::Read, Some(l)) => {
            let mut data = vec![0u8; bytes];
            let got = st.core.read_stream(pos, &mut data).map_err(core_err)?;
            // SAFETY: the layout describes the program's buffer of `count` items.
            unsafe { l.dt.unpack(&data[..got], l.base, l.count) };
            got
        }
    };
    if matches!(ptr, Ptr::Individual) {
        st.core.pos = start + n;
    }
    Ok(Status { bytes: done, ..empty_status() })
}

/// A blocking access: status out, errors to the file's handler. `collective` write forms
/// end with a barrier (even after an error, so no process is left waiting).
fn blocking(func: &str, fh: MPI_File, dir: Dir, ptr: Ptr, buf: *mut c_void, count: c_int, dt: MPI_Datatype, status: *mut MPI_Status, collective: bool) -> c_int {
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    let r = transfer(&f, dir, ptr, buf, count, dt);
    if collective && dir == Dir::Write {
        crate::io::barrier(f.comm);
    }
    finish(func, fh, r, status)
}

fn finish(func: &str, fh: MPI_File, r: Result<Status, Failure>, status: *mut MPI_Status) -> c_int {
    match r {
        Ok(s) => {
            // SAFETY: the program passes a status or MPI_STATUS_IGNORE.
            unsafe { write_status(status, &s, None) };
            MPI_SUCCESS
        }
        Err((class, msg)) => raise_file(fh, func, class, msg),
    }
}

/// A nonblocking access: done now, returned as a complete request.
fn nonblocking(func: &str, fh: MPI_File, dir: Dir, ptr: Ptr, buf: *mut c_void, count: c_int, dt: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    if request.is_null() {
        return raise_file(fh, func, MPI_ERR_ARG, "request is NULL");
    }
    match transfer(&f, dir, ptr, buf, count, dt) {
        Ok(s) => {
            let rid = mpi_core::runtime::with(|rt| rt.engine.completed_request(s));
            // SAFETY: checked non-null.
            unsafe { *request = request_handle(rid) };
            MPI_SUCCESS
        }
        Err((class, msg)) => raise_file(fh, func, class, msg),
    }
}

/// An ordered access (collective): each process's data follows that of the lower ranks,
/// from the shared file pointer, which ends past all of it.
fn ordered(f: &Arc<OpenFile>, dir: Dir, buf: *mut c_void, count: c_int, dt: MPI_Datatype) -> Result<Status, Failure> {
    let mine = {
        let st = f.lock();
        etypes_of(&st, count, dt)
    };
    let n = mine.as_ref().map_or(0, |&n| n as i64);
    let prefix = exscan_sum(f.comm, f.rank, n);
    let mut total = [prefix + n];
    // The last rank's prefix plus its own count is the total: a max gives it to all.
    allreduce_max(f.comm, &mut total);
    let mut b = [0u8; 16];
    if f.rank == 0 {
        let st = f.lock();
        let (class, base) = match st.core.shared().and_then(|s| s.fetch_add(total[0] as u64)) {
            Ok(v) => (0i64, v as i64),
            Err(e) => (e.class as i64, 0),
        };
        b[..8].copy_from_slice(&class.to_le_bytes());
        b[8..].copy_from_slice(&base.to_le_bytes());
    }
    bcast(f.comm, &mut b);
    if i64::from_le_bytes(b[..8].try_into().unwrap()) != 0 {
        return Err((MPI_ERR_IO, "the shared file pointer is not available".into()));
    }
    mine?;
    let base = i64::from_le_bytes(b[8..].try_into().unwrap()) as u64;
    let r = transfer(f, dir, Ptr::Ordered(base + prefix as u64), buf, count, dt);
    if dir == Dir::Write {
        crate::io::barrier(f.comm);
    }
    r
}

fn ordered_call(func: &str, fh: MPI_File, dir: Dir, buf: *mut c_void, count: c_int, dt: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    let r = ordered(&f, dir, buf, count, dt);
    finish(func, fh, r, status)
}

/// Begins a split collective: runs it now and keeps its status for the `_end` call. A
/// second begin before the end is `MPI_ERR_IO`, as in ROMIO (the standard makes it
/// erroneous).
fn split_begin(func: &str, fh: MPI_File, dir: Dir, ptr: Option<Ptr>, buf: *mut c_void, count: c_int, dt: MPI_Datatype) -> c_int {
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    let busy = f.lock().split.is_some();
    let mine = busy.then(|| (MPI_ERR_IO, "a split collective is already in progress on this file (call its _end first)".to_string()));
    if let Some((class, msg)) = agree(f.comm, mine) {
        return raise_file(fh, func, class, msg);
    }
    let r = match ptr {
        Some(p) => {
            let r = transfer(&f, dir, p, buf, count, dt);
            if dir == Dir::Write {
                crate::io::barrier(f.comm);
            }
            r
        }
        None => ordered(&f, dir, buf, count, dt),
    };
    match r {
        Ok(s) => {
            f.lock().split = Some(s);
            MPI_SUCCESS
        }
        Err((class, msg)) => raise_file(fh, func, class, msg),
    }
}

fn split_end(func: &str, fh: MPI_File, status: *mut MPI_Status) -> c_int {
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    let s = f.lock().split.take();
    match s {
        Some(s) => finish(func, fh, Ok(s), status),
        None => raise_file(fh, func, MPI_ERR_IO, "no split collective is in progress on this file (call the _begin first)"),
    }
}

// ------------------------------------------------------------------ entry points

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_read", fh, Dir::Read, Ptr::Individual, buf, count, datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_write", fh, Dir::Write, Ptr::Individual, buf as *mut c_void, count, datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_all(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_read_all", fh, Dir::Read, Ptr::Individual, buf, count, datatype, status, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_all(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_write_all", fh, Dir::Write, Ptr::Individual, buf as *mut c_void, count, datatype, status, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_at(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_read_at", fh, Dir::Read, Ptr::At(offset), buf, count, datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_at(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_write_at", fh, Dir::Write, Ptr::At(offset), buf as *mut c_void, count, datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_at_all(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_read_at_all", fh, Dir::Read, Ptr::At(offset), buf, count, datatype, status, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_at_all(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_write_at_all", fh, Dir::Write, Ptr::At(offset), buf as *mut c_void, count, datatype, status, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_shared(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_read_shared", fh, Dir::Read, Ptr::Shared, buf, count, datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_shared(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_write_shared", fh, Dir::Write, Ptr::Shared, buf as *mut c_void, count, datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_ordered(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    ordered_call("MPI_File_read_ordered", fh, Dir::Read, buf, count, datatype, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_ordered(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    ordered_call("MPI_File_write_ordered", fh, Dir::Write, buf as *mut c_void, count, datatype, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iread(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iread", fh, Dir::Read, Ptr::Individual, buf, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iwrite(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iwrite", fh, Dir::Write, Ptr::Individual, buf as *mut c_void, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iread_all(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iread_all", fh, Dir::Read, Ptr::Individual, buf, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iwrite_all(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iwrite_all", fh, Dir::Write, Ptr::Individual, buf as *mut c_void, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iread_at(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iread_at", fh, Dir::Read, Ptr::At(offset), buf, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iwrite_at(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iwrite_at", fh, Dir::Write, Ptr::At(offset), buf as *mut c_void, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iread_at_all(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iread_at_all", fh, Dir::Read, Ptr::At(offset), buf, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iwrite_at_all(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iwrite_at_all", fh, Dir::Write, Ptr::At(offset), buf as *mut c_void, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iread_shared(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iread_shared", fh, Dir::Read, Ptr::Shared, buf, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iwrite_shared(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iwrite_shared", fh, Dir::Write, Ptr::Shared, buf as *mut c_void, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_all_begin(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_read_all_begin", fh, Dir::Read, Some(Ptr::Individual), buf, count, datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_all_end(fh: MPI_File, buf: *mut c_void, status: *mut MPI_Status) -> c_int {
    let _ = buf;
    split_end("MPI_File_read_all_end", fh, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_all_begin(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_write_all_begin", fh, Dir::Write, Some(Ptr::Individual), buf as *mut c_void, count, datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_all_end(fh: MPI_File, buf: *const c_void, status: *mut MPI_Status) -> c_int {
    let _ = buf;
    split_end("MPI_File_write_all_end", fh, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_at_all_begin(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: c_int, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_read_at_all_begin", fh, Dir::Read, Some(Ptr::At(offset)), buf, count, datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_at_all_end(fh: MPI_File, buf: *mut c_void, status: *mut MPI_Status) -> c_int {
    let _ = buf;
    split_end("MPI_File_read_at_all_end", fh, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_at_all_begin(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: c_int, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_write_at_all_begin", fh, Dir::Write, Some(Ptr::At(offset)), buf as *mut c_void, count, datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_at_all_end(fh: MPI_File, buf: *const c_void, status: *mut MPI_Status) -> c_int {
    let _ = buf;
    split_end("MPI_File_write_at_all_end", fh, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_ordered_begin(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_read_ordered_begin", fh, Dir::Read, None, buf, count, datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_ordered_end(fh: MPI_File, buf: *mut c_void, status: *mut MPI_Status) -> c_int {
    let _ = buf;
    split_end("MPI_File_read_ordered_end", fh, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_ordered_begin(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_write_ordered_begin", fh, Dir::Write, None, buf as *mut c_void, count, datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_ordered_end(fh: MPI_File, buf: *const c_void, status: *mut MPI_Status) -> c_int {
    let _ = buf;
    split_end("MPI_File_write_ordered_end", fh, status)
}
