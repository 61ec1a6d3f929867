//! MPI-IO data access: reads and writes at explicit offsets, through the individual file
//! pointer and through the shared one, in their blocking, collective, nonblocking, split
//! collective and ordered forms (MPI 3.1 §13.4).
//!
//! Most forms end in `transfer`: pack the user buffer (non-contiguous types), map the
//! view's stream range onto the file and `pwrite`/`pread` the pieces. Blocking and split
//! collective writes go through `collective_write` (collective buffering when the pieces
//! are small), which ends with a reduction, so data written by any process is in the file
//! for all when the call returns; collective reads are each process's own. Nonblocking
//! forms do the access at the call and return a
//! request that is already complete (MPI allows it). Ordered forms place each process's
//! data after that of the lower ranks with an exclusive scan, rank 0 advancing the shared
//! pointer by the total.
//!
//! The MPI-4.0 large-count forms (`MPI_File_read_c`, ...) take an `MPI_Count` count; the
//! code below counts in `MPI_Count`, each int form widening its count.

use crate::abi::*;
use crate::handles::request_handle;
use crate::io::{agree, allreduce_max, bcast, exscan_sum, file_of, raise_file, tryf, OpenFile};
use crate::datarep::UserRep;
use crate::io_view::not_sequential;
use crate::io::FileState;
use crate::p2p_args::{empty_status, write_status};
use mpi_core::datatype::Datatype;
use mpi_core::io::collective;
use mpi_core::request::{Layout, RawBuf, Status};
use std::borrow::Cow;
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
fn etypes_of(st: &crate::io::FileState, count: MPI_Count, dt: MPI_Datatype) -> Result<u64, Failure> {
    let (raw, layout) = crate::p2p_args::buffer(std::ptr::dangling::<u8>() as *const c_void, count, dt)?;
    let bytes = layout.map_or(raw.len, |l| l.bytes());
    let e = st.core.view.etype_size;
    if bytes % e != 0 {
        return Err((MPI_ERR_IO, format!("the data ({bytes} bytes) is not a whole number of etypes ({e} bytes each)")));
    }
    Ok((bytes / e) as u64)
}

/// The checks of an access of (`count`, `dt`) at `ptr`, and the etype offset where it
/// starts with the etypes it covers (a shared-pointer access advances the pointer here).
fn start_of(st: &FileState, dir: Dir, ptr: Ptr, count: MPI_Count, dt: MPI_Datatype) -> Result<(u64, u64), Failure> {
    match dir {
        Dir::Read => st.core.check_readable(),
        Dir::Write => st.core.check_writable(),
    }
    .map_err(core_err)?;
    if matches!(ptr, Ptr::At(_) | Ptr::Individual) {
        not_sequential(st)?;
    }
    let n = etypes_of(st, count, dt)?;
    let start = match ptr {
        Ptr::At(o) if o < 0 => return Err((MPI_ERR_ARG, format!("negative offset {o}"))),
        Ptr::At(o) => o as u64,
        Ptr::Ordered(o) => o,
        Ptr::Individual => st.core.pos,
        Ptr::Shared => st.core.shared.fetch_add(n).map_err(core_err)?,
    };
    Ok((start, n))
}

fn core_err(e: mpi_core::error::MpiError) -> Failure {
    (e.class as c_int, e.msg)
}

/// How the values of an access change between memory and the file.
enum Conversion {
    /// None: the bytes are the native ones.
    Native,
    /// An "external32" view: the engine type of the buffer, whose values are converted
    /// on the way (see `same_external32`).
    External32(Arc<Datatype>),
    /// A view in a registered representation with a conversion function for this
    /// direction: the buffer's type and its data items (see `crate::datarep`).
    User(Arc<UserRep>, MPI_Datatype, Arc<Datatype>),
}

/// The conversion an access of (`count`, `dt`) in direction `dir` makes under the view of `st`.
fn conversion(st: &FileState, dir: Dir, dt: MPI_Datatype, count: MPI_Count) -> Result<Conversion, Failure> {
    let user = st.user_rep.as_ref().filter(|u| u.converts(dir == Dir::Write));
    if st.datarep != "external32" && user.is_none() {
        return Ok(Conversion::Native);
    }
    let t = crate::types::lookup(dt).ok_or((MPI_ERR_TYPE, format!("invalid datatype {dt:#x}")))?;
    match user {
        Some(u) => {
            u.check(dt, "buffer's datatype")?;
            Ok(Conversion::User(u.clone(), dt, t))
        }
        None => {
            crate::io_view::same_external32(&t, count as usize, "buffer's datatype")?;
            Ok(Conversion::External32(t))
        }
    }
}

/// The bytes a write puts in the file, in stream order: the program's memory itself when
/// it is contiguous and native, else a packed (and converted) copy.
///
/// # Safety
/// (`buf`, `count`) with `raw`/`layout`/`conv` must be what `p2p_args::buffer` and
/// `conversion` made of the program's valid buffer, alive for `'a`.
unsafe fn file_bytes<'a>(raw: RawBuf, layout: &Option<Layout>, conv: &Conversion, buf: *mut c_void, count: MPI_Count) -> Result<Cow<'a, [u8]>, Failure> {
    let bytes = layout.as_ref().map_or(raw.len, |l| l.bytes());
    if bytes == 0 {
        return Ok(Cow::Borrowed(&[]));
    }
    // SAFETY (all arms): per the contract, the buffer holds `count` items of the type.
    if matches!(conv, Conversion::Native) && layout.is_none() {
        return Ok(Cow::Borrowed(unsafe { std::slice::from_raw_parts(raw.ptr, raw.len) }));
    }
    let mut data = vec![0u8; bytes];
    match (conv, layout) {
        (Conversion::External32(t), _) => unsafe { t.pack_external32(buf as *const u8, count as usize, &mut data) },
        (Conversion::User(u, dt, t), _) => {
            unsafe { u.to_file(buf, *dt, t.elements() * count as usize, &mut data) }?;
            bytes
        }
        (Conversion::Native, Some(l)) => unsafe { l.dt.pack(l.base, l.count, &mut data) },
        (Conversion::Native, None) => unreachable!("contiguous data is borrowed above"),
    };
    Ok(Cow::Owned(data))
}

/// Does one access of this process: checks, moves the data, updates the pointer. Returns
/// the status (bytes moved).
fn transfer(f: &OpenFile, dir: Dir, ptr: Ptr, buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype) -> Result<Status, Failure> {
    let (raw, layout) = crate::p2p_args::buffer(buf, count, dt)?;
    let mut st = f.lock();
    let (start, n) = start_of(&st, dir, ptr, count, dt)?;
    let pos = st.core.stream_pos(start);
    let bytes = layout.as_ref().map_or(raw.len, |l| l.bytes());
    let conv = conversion(&st, dir, dt, count)?;
    let done = match (dir, &layout) {
        (_, _) if bytes == 0 => 0,
        (Dir::Write, _) => {
            // SAFETY: made by `buffer` and `conversion` from the program's buffer.
            let data = unsafe { file_bytes(raw, &layout, &conv, buf, count) }?;
            st.core.write_stream(pos, &data).map_err(core_err)?;
            bytes
        }
        (Dir::Read, _) if !matches!(conv, Conversion::Native) => {
            let mut data = vec![0u8; bytes];
            let got = st.core.read_stream(pos, &mut data).map_err(core_err)?;
            match &conv {
                // SAFETY (both arms): `buffer` checked (buf, count, dt) describes the
                // program's buffer.
                Conversion::External32(t) => {
                    unsafe { t.unpack_external32(&data[..got], buf as *mut u8, count as usize) };
                }
                Conversion::User(u, dt, t) => {
                    // The data items wholly read: a short read at the end of the file may
                    // end inside one, at most one basic element's size before a boundary.
                    let whole = (0..=got).rev().find_map(|b| t.elements_for_bytes(b)).unwrap_or(0);
                    unsafe { u.from_file(buf, *dt, whole, &mut data) }?;
                }
                Conversion::Native => unreachable!("matched above"),
            }
            got
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
        // A read cut short by the end of file leaves the pointer after the last whole
        // etype it read, not after what it asked for (as ROMIO): reading on gets nothing
        // and does not move it, and a write there appends without a hole.
        let short = matches!(dir, Dir::Read) && done < bytes;
        st.core.pos = start + if short { (done / st.core.view.etype_size) as u64 } else { n };
    }
    Ok(Status { bytes: done, ..empty_status() })
}

/// Largest write of one process that collective buffering takes (`MPI_Alltoallv` counts
/// are C ints); larger ones write independently. Buffering starts when some process's
/// pieces average less than `CB_PIECE` bytes: larger pieces are written as fast directly.
const CB_MAX: usize = 1 << 30;
const CB_PIECE: usize = 4096;

/// A collective write (`write_all`, `write_at_all`, their split `_begin`): with
/// collective buffering (`mpi_core::io::collective`) when some process's data lies in
/// many small pieces of the file, else each process writes its own. Ends with every process's
/// data in the file and the same error everywhere.
fn collective_write(f: &OpenFile, ptr: Ptr, buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype) -> Result<Status, Failure> {
    let prep = (|| -> Result<_, Failure> {
        let (raw, layout) = crate::p2p_args::buffer(buf, count, dt)?;
        let st = f.lock();
        let (start, n) = start_of(&st, Dir::Write, ptr, count, dt)?;
        let conv = conversion(&st, Dir::Write, dt, count)?;
        // SAFETY: made by `buffer` and `conversion` from the program's buffer.
        let data = unsafe { file_bytes(raw, &layout, &conv, buf, count) }?;
        let pos = st.core.stream_pos(start);
        st.core.check_room(data.len()).map_err(core_err)?;
        let pieces = st.core.pieces(pos, data.len());
        let cb = crate::io::hint(&st, "romio_cb_write").unwrap_or("automatic").to_string();
        Ok((start, n, pos, data, pieces, st.core.atomic, cb))
    })();
    // One reduction: errors, whether anyone has many small pieces, the file range, whether
    // anyone's data is too large or buffering disabled, or the file is in atomic mode.
    // The "romio_cb_write" hint: "disable" anywhere turns buffering off, "enable"
    // turns it on for any number of pieces.
    let mut v = [0i64, 0, i64::MIN, 0, 0, 0];
    match &prep {
        Err(e) => v[0] = e.0 as i64,
        Ok((_, _, _, data, pieces, atomic, cb)) => {
            let small = data.len() / pieces.len().max(1) < CB_PIECE || cb == "enable";
            v[1] = (pieces.len() > 1 && small) as i64;
            v[4] = (cb == "disable") as i64;
            if let Some(lo) = pieces.iter().map(|p| p.0).min() {
                v[2] = -(lo as i64);
            }
            v[3] = pieces.iter().map(|p| (p.0 + p.1 as u64) as i64).max().unwrap_or(0);
            v[4] |= (data.len() > CB_MAX) as i64;
            v[5] = *atomic as i64;
        }
    }
    allreduce_max(f.comm, &mut v);
    if v[0] != 0 {
        return Err(match prep {
            Err(e) if e.0 as i64 == v[0] => e,
            _ => (v[0] as c_int, "the call failed on another process of the file's communicator".to_string()),
        });
    }
    let (start, n, pos, data, pieces, _, _) = prep.expect("agreed");
    let buffered = f.size > 1 && v[1] != 0 && v[4] == 0 && v[5] == 0 && v[2] != i64::MIN;
    let mine = if buffered {
        let (lo, hi) = ((-v[2]) as u64, v[3] as u64);
        let chunk = (hi - lo).div_ceil(f.size as u64).max(1);
        let (meta, bytes) = collective::route(&pieces, &data, lo, chunk, f.size);
        let (rmeta, rbytes) = exchange(f, &meta, &bytes);
        let st = f.lock();
        let m: Vec<&[u8]> = rmeta.iter().map(|x| x.as_slice()).collect();
        let b: Vec<&[u8]> = rbytes.iter().map(|x| x.as_slice()).collect();
        collective::write_domain(&st.core, &m, &b).err()
    } else {
        f.lock().core.write_stream(pos, &data).err()
    };
    if let Some(e) = agree(f.comm, mine.map(core_err)) {
        return Err(e);
    }
    if matches!(ptr, Ptr::Individual) {
        f.lock().core.pos = start + n;
    }
    Ok(Status { bytes: data.len(), ..empty_status() })
}

/// Sends `meta[d]` and `bytes[d]` to process `d` of the file's communicator; returns what
/// each process sent here.
fn exchange(f: &OpenFile, meta: &[Vec<u8>], bytes: &[Vec<u8>]) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let n = f.size;
    let counts: Vec<c_int> = (0..n).flat_map(|d| [meta[d].len() as c_int, bytes[d].len() as c_int]).collect();
    let mut rcounts = vec![0 as c_int; 2 * n];
    // SAFETY: 2 ints per process in both buffers.
    unsafe { crate::coll::PMPI_Alltoall(counts.as_ptr() as *const c_void, 2, MPI_INT, rcounts.as_mut_ptr() as *mut c_void, 2, MPI_INT, f.comm) };
    let one = |parts: &[Vec<u8>], k: usize| -> Vec<Vec<u8>> {
        let send: Vec<u8> = parts.concat();
        let scounts: Vec<c_int> = parts.iter().map(|p| p.len() as c_int).collect();
        let rc: Vec<c_int> = (0..n).map(|i| rcounts[2 * i + k]).collect();
        let displs = |c: &[c_int]| -> Vec<c_int> { c.iter().scan(0, |acc, &x| { let d = *acc; *acc += x; Some(d) }).collect() };
        let (sd, rd) = (displs(&scounts), displs(&rc));
        let mut recv = vec![0u8; rc.iter().map(|&c| c as usize).sum()];
        // SAFETY: counts and displacements describe the two buffers, in bytes.
        unsafe { crate::coll::PMPI_Alltoallv(send.as_ptr() as *const c_void, scounts.as_ptr(), sd.as_ptr(), MPI_BYTE, recv.as_mut_ptr() as *mut c_void, rc.as_ptr(), rd.as_ptr(), MPI_BYTE, f.comm) };
        (0..n).map(|i| recv[rd[i] as usize..(rd[i] + rc[i]) as usize].to_vec()).collect()
    };
    (one(meta, 0), one(bytes, 1))
}

/// A blocking access: status out, errors to the file's handler. `collective` write forms
/// end with a barrier (even after an error, so no process is left waiting).
fn blocking(func: &str, fh: MPI_File, dir: Dir, ptr: Ptr, buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, status: *mut MPI_Status, collective: bool) -> c_int {
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    let r = if collective && dir == Dir::Write { collective_write(&f, ptr, buf, count, dt) } else { transfer(&f, dir, ptr, buf, count, dt) };
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
fn nonblocking(func: &str, fh: MPI_File, dir: Dir, ptr: Ptr, buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, request: *mut MPI_Request) -> c_int {
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
fn ordered(f: &Arc<OpenFile>, dir: Dir, buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype) -> Result<Status, Failure> {
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
        let (class, base) = match st.core.shared.fetch_add(total[0] as u64) {
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

fn ordered_call(func: &str, fh: MPI_File, dir: Dir, buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    let r = ordered(&f, dir, buf, count, dt);
    finish(func, fh, r, status)
}

/// Begins a split collective: runs it now and keeps its status for the `_end` call. A
/// second begin before the end is `MPI_ERR_IO`, as in ROMIO (the standard makes it
/// erroneous).
fn split_begin(func: &str, fh: MPI_File, dir: Dir, ptr: Option<Ptr>, buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype) -> c_int {
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    let busy = f.lock().split.is_some();
    let mine = busy.then(|| (MPI_ERR_IO, "a split collective is already in progress on this file (call its _end first)".to_string()));
    if let Some((class, msg)) = agree(f.comm, mine) {
        return raise_file(fh, func, class, msg);
    }
    let r = match ptr {
        Some(p) if dir == Dir::Write => collective_write(&f, p, buf, count, dt),
        Some(p) => transfer(&f, dir, p, buf, count, dt),
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
    blocking("MPI_File_read", fh, Dir::Read, Ptr::Individual, buf, count.into(), datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_read_c", fh, Dir::Read, Ptr::Individual, buf, count, datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_write", fh, Dir::Write, Ptr::Individual, buf as *mut c_void, count.into(), datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_write_c", fh, Dir::Write, Ptr::Individual, buf as *mut c_void, count, datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_all(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_read_all", fh, Dir::Read, Ptr::Individual, buf, count.into(), datatype, status, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_all_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_read_all_c", fh, Dir::Read, Ptr::Individual, buf, count, datatype, status, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_all(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_write_all", fh, Dir::Write, Ptr::Individual, buf as *mut c_void, count.into(), datatype, status, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_all_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_write_all_c", fh, Dir::Write, Ptr::Individual, buf as *mut c_void, count, datatype, status, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_at(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_read_at", fh, Dir::Read, Ptr::At(offset), buf, count.into(), datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_at_c(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_read_at_c", fh, Dir::Read, Ptr::At(offset), buf, count, datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_at(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_write_at", fh, Dir::Write, Ptr::At(offset), buf as *mut c_void, count.into(), datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_at_c(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_write_at_c", fh, Dir::Write, Ptr::At(offset), buf as *mut c_void, count, datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_at_all(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_read_at_all", fh, Dir::Read, Ptr::At(offset), buf, count.into(), datatype, status, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_at_all_c(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_read_at_all_c", fh, Dir::Read, Ptr::At(offset), buf, count, datatype, status, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_at_all(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_write_at_all", fh, Dir::Write, Ptr::At(offset), buf as *mut c_void, count.into(), datatype, status, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_at_all_c(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_write_at_all_c", fh, Dir::Write, Ptr::At(offset), buf as *mut c_void, count, datatype, status, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_shared(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_read_shared", fh, Dir::Read, Ptr::Shared, buf, count.into(), datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_shared_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_read_shared_c", fh, Dir::Read, Ptr::Shared, buf, count, datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_shared(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_write_shared", fh, Dir::Write, Ptr::Shared, buf as *mut c_void, count.into(), datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_shared_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    blocking("MPI_File_write_shared_c", fh, Dir::Write, Ptr::Shared, buf as *mut c_void, count, datatype, status, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_ordered(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    ordered_call("MPI_File_read_ordered", fh, Dir::Read, buf, count.into(), datatype, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_ordered_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    ordered_call("MPI_File_read_ordered_c", fh, Dir::Read, buf, count, datatype, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_ordered(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    ordered_call("MPI_File_write_ordered", fh, Dir::Write, buf as *mut c_void, count.into(), datatype, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_ordered_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, status: *mut MPI_Status) -> c_int {
    ordered_call("MPI_File_write_ordered_c", fh, Dir::Write, buf as *mut c_void, count, datatype, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iread(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iread", fh, Dir::Read, Ptr::Individual, buf, count.into(), datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iread_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iread_c", fh, Dir::Read, Ptr::Individual, buf, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iwrite(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iwrite", fh, Dir::Write, Ptr::Individual, buf as *mut c_void, count.into(), datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iwrite_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iwrite_c", fh, Dir::Write, Ptr::Individual, buf as *mut c_void, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iread_all(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iread_all", fh, Dir::Read, Ptr::Individual, buf, count.into(), datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iread_all_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iread_all_c", fh, Dir::Read, Ptr::Individual, buf, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iwrite_all(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iwrite_all", fh, Dir::Write, Ptr::Individual, buf as *mut c_void, count.into(), datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iwrite_all_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iwrite_all_c", fh, Dir::Write, Ptr::Individual, buf as *mut c_void, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iread_at(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iread_at", fh, Dir::Read, Ptr::At(offset), buf, count.into(), datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iread_at_c(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iread_at_c", fh, Dir::Read, Ptr::At(offset), buf, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iwrite_at(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iwrite_at", fh, Dir::Write, Ptr::At(offset), buf as *mut c_void, count.into(), datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iwrite_at_c(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iwrite_at_c", fh, Dir::Write, Ptr::At(offset), buf as *mut c_void, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iread_at_all(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iread_at_all", fh, Dir::Read, Ptr::At(offset), buf, count.into(), datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iread_at_all_c(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iread_at_all_c", fh, Dir::Read, Ptr::At(offset), buf, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iwrite_at_all(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iwrite_at_all", fh, Dir::Write, Ptr::At(offset), buf as *mut c_void, count.into(), datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iwrite_at_all_c(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iwrite_at_all_c", fh, Dir::Write, Ptr::At(offset), buf as *mut c_void, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iread_shared(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iread_shared", fh, Dir::Read, Ptr::Shared, buf, count.into(), datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iread_shared_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iread_shared_c", fh, Dir::Read, Ptr::Shared, buf, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iwrite_shared(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iwrite_shared", fh, Dir::Write, Ptr::Shared, buf as *mut c_void, count.into(), datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_iwrite_shared_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, request: *mut MPI_Request) -> c_int {
    nonblocking("MPI_File_iwrite_shared_c", fh, Dir::Write, Ptr::Shared, buf as *mut c_void, count, datatype, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_all_begin(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_read_all_begin", fh, Dir::Read, Some(Ptr::Individual), buf, count.into(), datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_all_begin_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_read_all_begin_c", fh, Dir::Read, Some(Ptr::Individual), buf, count, datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_all_end(fh: MPI_File, buf: *mut c_void, status: *mut MPI_Status) -> c_int {
    let _ = buf;
    split_end("MPI_File_read_all_end", fh, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_all_begin(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_write_all_begin", fh, Dir::Write, Some(Ptr::Individual), buf as *mut c_void, count.into(), datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_all_begin_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_write_all_begin_c", fh, Dir::Write, Some(Ptr::Individual), buf as *mut c_void, count, datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_all_end(fh: MPI_File, buf: *const c_void, status: *mut MPI_Status) -> c_int {
    let _ = buf;
    split_end("MPI_File_write_all_end", fh, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_at_all_begin(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: c_int, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_read_at_all_begin", fh, Dir::Read, Some(Ptr::At(offset)), buf, count.into(), datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_at_all_begin_c(fh: MPI_File, offset: MPI_Offset, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_read_at_all_begin_c", fh, Dir::Read, Some(Ptr::At(offset)), buf, count, datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_at_all_end(fh: MPI_File, buf: *mut c_void, status: *mut MPI_Status) -> c_int {
    let _ = buf;
    split_end("MPI_File_read_at_all_end", fh, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_at_all_begin(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: c_int, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_write_at_all_begin", fh, Dir::Write, Some(Ptr::At(offset)), buf as *mut c_void, count.into(), datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_at_all_begin_c(fh: MPI_File, offset: MPI_Offset, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_write_at_all_begin_c", fh, Dir::Write, Some(Ptr::At(offset)), buf as *mut c_void, count, datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_at_all_end(fh: MPI_File, buf: *const c_void, status: *mut MPI_Status) -> c_int {
    let _ = buf;
    split_end("MPI_File_write_at_all_end", fh, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_ordered_begin(fh: MPI_File, buf: *mut c_void, count: c_int, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_read_ordered_begin", fh, Dir::Read, None, buf, count.into(), datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_ordered_begin_c(fh: MPI_File, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_read_ordered_begin_c", fh, Dir::Read, None, buf, count, datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_read_ordered_end(fh: MPI_File, buf: *mut c_void, status: *mut MPI_Status) -> c_int {
    let _ = buf;
    split_end("MPI_File_read_ordered_end", fh, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_ordered_begin(fh: MPI_File, buf: *const c_void, count: c_int, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_write_ordered_begin", fh, Dir::Write, None, buf as *mut c_void, count.into(), datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_ordered_begin_c(fh: MPI_File, buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype) -> c_int {
    split_begin("MPI_File_write_ordered_begin_c", fh, Dir::Write, None, buf as *mut c_void, count, datatype)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_write_ordered_end(fh: MPI_File, buf: *const c_void, status: *mut MPI_Status) -> c_int {
    let _ = buf;
    split_end("MPI_File_write_ordered_end", fh, status)
}
