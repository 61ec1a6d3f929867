//! File views and file pointers in the C layer: `MPI_File_set_view`/`get_view`, the offset
//! conversions, and seeking the individual and shared file pointers. How a view maps data
//! onto the file is `mpi_core::io::view`.

use crate::abi::*;
use crate::io::{agree, agreed, allreduce_max, barrier, bcast, c_str, file_of, free_view_types, merge_info, raise_file, raise_file_core, tryf, FileState};
use mpi_core::error::MpiError;
use crate::datarep::UserRep;
use mpi_core::io::View;
use std::sync::Arc;
use std::os::raw::{c_char, c_int, c_void};

/// The data representations views may name: the predefined ones ("internal" is ours to
/// define: it is "native") and those the program registered (`crate::datarep`).
fn check_datarep(rep: &str) -> Result<Option<Arc<UserRep>>, (c_int, String)> {
    if crate::datarep::PREDEFINED.contains(&rep) {
        return Ok(None);
    }
    match crate::datarep::lookup(rep) {
        Some(r) => Ok(Some(r)),
        None => Err((MPI_ERR_UNSUPPORTED_DATAREP, format!("unknown data representation \"{rep}\" (OxMPI has \"native\", \"internal\", \"external32\" and those registered with MPI_Register_datarep)"))),
    }
}

/// "external32" is supported for types whose values have the same size in external32 as
/// in memory (all but C `long`, `long double`, `wchar_t` and their kin): the file layout is
/// then the native one and only the byte order changes.
pub fn same_external32(t: &mpi_core::datatype::Datatype, count: usize, what: &str) -> Result<(), (c_int, String)> {
    if t.external32_size(count) == Some(t.size() * count) {
        return Ok(());
    }
    Err((MPI_ERR_UNSUPPORTED_DATAREP, format!("the {what} has values whose \"external32\" size differs from their size in memory (C long, long double, wchar_t): OxMPI does not support such \"external32\" accesses yet")))
}

/// The committed engine type of `dt`, for a view.
fn view_type(dt: MPI_Datatype, what: &str) -> Result<std::sync::Arc<mpi_core::datatype::Datatype>, (c_int, String)> {
    let t = crate::types::lookup(dt).ok_or_else(|| (MPI_ERR_TYPE, format!("invalid {what} {dt:#x}")))?;
    if !t.committed() && !t.is_named() {
        return Err((MPI_ERR_TYPE, format!("the {what} is not committed; call MPI_Type_commit first")));
    }
    Ok(t)
}

/// The handle a file keeps for view type `dt`: itself if predefined, else a duplicate the
/// file owns (the program may free its own handle right after `MPI_File_set_view`).
fn keep_type(st: &mut FileState, dt: MPI_Datatype) -> MPI_Datatype {
    if crate::types::lookup(dt).is_some_and(|t| t.is_named()) {
        return dt;
    }
    let mut d = MPI_DATATYPE_NULL;
    // SAFETY: dt was checked to be a committed type; d is a valid out pointer.
    unsafe { crate::types::PMPI_Type_dup(dt, &mut d) };
    st.owned_types.push(d);
    d
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_set_view(fh: MPI_File, disp: MPI_Offset, etype: MPI_Datatype, filetype: MPI_Datatype, datarep: *const c_char, info: MPI_Info) -> c_int {
    let func = "MPI_File_set_view";
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    // SAFETY: NULL or a C string, per the standard.
    let rep = unsafe { c_str(datarep) };
    let (sequential, writable) = {
        let st = f.lock();
        (st.amode & MPI_MODE_SEQUENTIAL != 0, st.core.amode.write)
    };
    let checked = (|| {
        let rep = rep.clone().ok_or((MPI_ERR_ARG, "datarep is NULL".to_string()))?;
        let user = check_datarep(&rep)?;
        let e = view_type(etype, "etype")?;
        let t = view_type(filetype, "filetype")?;
        let p = crate::info::pairs(info).ok_or((MPI_ERR_INFO, format!("invalid info handle {info:#x}")))?;
        if disp == MPI_DISPLACEMENT_CURRENT {
            if !sequential {
                return Err((MPI_ERR_ARG, "MPI_DISPLACEMENT_CURRENT is only for files opened with MPI_MODE_SEQUENTIAL".to_string()));
            }
        } else if disp < 0 {
            return Err((MPI_ERR_ARG, format!("negative displacement {disp}")));
        }
        let view = View::new(disp.max(0) as u64, &e, &t, writable).map_err(|e| (e.class as c_int, e.msg))?;
        if rep == "external32" {
            same_external32(&e, 1, "etype")?;
            same_external32(&t, 1, "filetype")?;
        }
        if let Some(u) = &user {
            u.check(etype, "etype")?;
            u.check(filetype, "filetype")?;
        }
        Ok((view, p, user))
    })();
    let (mut view, pairs, user) = match agree(f.comm, checked.as_ref().err().cloned()) {
        Some((class, msg)) => return raise_file(fh, func, class, msg),
        None => checked.expect("agreed"),
    };
    // The shared pointer restarts at 0 once every process is done with the old view; in
    // sequential mode the new view starts where it was.
    barrier(f.comm);
    let mut b = [0u8; 16];
    if f.rank == 0 {
        let st = f.lock();
        let s = &st.core.shared;
        let r = s.get().and_then(|p| {
            let cur = st.core.view.byte_offset(st.core.stream_pos(p));
            s.set(0)?;
            Ok(cur)
        });
        let (class, cur) = match r {
            Ok(c) => (0i64, c as i64),
            Err(e) => (e.class as i64, 0),
        };
        b[..8].copy_from_slice(&class.to_le_bytes());
        b[8..].copy_from_slice(&cur.to_le_bytes());
    }
    bcast(f.comm, &mut b);
    let cur = i64::from_le_bytes(b[8..].try_into().unwrap());
    if disp == MPI_DISPLACEMENT_CURRENT {
        if i64::from_le_bytes(b[..8].try_into().unwrap()) != 0 {
            return raise_file(fh, func, MPI_ERR_IO, "MPI_DISPLACEMENT_CURRENT needs the shared file pointer, which is not available");
        }
        view.disp = cur as u64;
    }
    let mut st = f.lock();
    free_view_types(&mut st);
    st.etype = keep_type(&mut st, etype);
    st.filetype = keep_type(&mut st, filetype);
    st.datarep = rep.unwrap_or_default();
    st.user_rep = user;
    st.core.view = view;
    st.core.pos = 0;
    merge_info(&mut st, pairs);
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_view(fh: MPI_File, disp: *mut MPI_Offset, etype: *mut MPI_Datatype, filetype: *mut MPI_Datatype, datarep: *mut c_char) -> c_int {
    let func = "MPI_File_get_view";
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    if disp.is_null() || etype.is_null() || filetype.is_null() || datarep.is_null() {
        return raise_file(fh, func, MPI_ERR_ARG, "disp, etype, filetype or datarep is NULL");
    }
    let st = f.lock();
    let copy = |dt: MPI_Datatype| {
        if !st.owned_types.contains(&dt) {
            return dt;
        }
        let mut d = MPI_DATATYPE_NULL;
        // SAFETY: dt is a live type the file owns; d is a valid out pointer.
        unsafe { crate::types::PMPI_Type_dup(dt, &mut d) };
        d
    };
    // SAFETY: all checked non-null; datarep holds MPI_MAX_DATAREP_STRING bytes (standard).
    unsafe {
        *disp = st.core.view.disp as MPI_Offset;
        *etype = copy(st.etype);
        *filetype = copy(st.filetype);
        crate::errors::write_c_string(datarep, MPI_MAX_DATAREP_STRING as usize, &st.datarep);
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_byte_offset(fh: MPI_File, offset: MPI_Offset, disp: *mut MPI_Offset) -> c_int {
    let func = "MPI_File_get_byte_offset";
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    if disp.is_null() {
        return raise_file(fh, func, MPI_ERR_ARG, "disp is NULL");
    }
    if offset < 0 {
        return raise_file(fh, func, MPI_ERR_ARG, format!("negative offset {offset}"));
    }
    let st = f.lock();
    // SAFETY: checked non-null.
    unsafe { *disp = st.core.view.byte_offset(st.core.stream_pos(offset as u64)) as MPI_Offset };
    MPI_SUCCESS
}

/// `MPI_File_get_type_extent` and its `_c` form: the extent of `datatype` in the file, for
/// the caller to store in `extent` (checked non-null here).
fn type_extent(func: &str, fh: MPI_File, datatype: MPI_Datatype, extent: *const c_void) -> Result<isize, c_int> {
    if !mpi_core::runtime::is_active() {
        return Err(crate::errors::not_initialized(func));
    }
    let f = file_of(func, fh)?;
    let Some(t) = crate::types::lookup(datatype) else {
        return Err(raise_file(fh, func, MPI_ERR_TYPE, format!("invalid datatype {datatype:#x}")));
    };
    if extent.is_null() {
        return Err(raise_file(fh, func, MPI_ERR_ARG, "extent is NULL"));
    }
    // A registered representation's extent function has the say; "native" and "internal"
    // store data as in memory, and "external32" views hold only types of the same size.
    let user = f.lock().user_rep.clone();
    match user {
        Some(u) => u.file_extent(datatype, &t).map_err(|(class, msg)| raise_file(fh, func, class, msg)),
        None => Ok(t.extent()),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_type_extent(fh: MPI_File, datatype: MPI_Datatype, extent: *mut MPI_Aint) -> c_int {
    match type_extent("MPI_File_get_type_extent", fh, datatype, extent as *const c_void) {
        // SAFETY: checked non-null by `type_extent`.
        Ok(e) => unsafe { *extent = e as MPI_Aint },
        Err(rc) => return rc,
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_type_extent_c(fh: MPI_File, datatype: MPI_Datatype, extent: *mut MPI_Count) -> c_int {
    match type_extent("MPI_File_get_type_extent_c", fh, datatype, extent as *const c_void) {
        // SAFETY: checked non-null by `type_extent`.
        Ok(e) => unsafe { *extent = e as MPI_Count },
        Err(rc) => return rc,
    }
    MPI_SUCCESS
}

/// The new position of a pointer at `cur` moved by (`offset`, `whence`); `end` gives the
/// end-of-file offset.
fn seek_target(cur: u64, offset: MPI_Offset, whence: c_int, end: impl FnOnce() -> Result<u64, MpiError>) -> Result<u64, (c_int, String)> {
    let base = match whence {
        MPI_SEEK_SET => 0,
        MPI_SEEK_CUR => cur as i64,
        MPI_SEEK_END => end().map_err(|e| (e.class as c_int, e.msg))? as i64,
        _ => return Err((MPI_ERR_ARG, format!("invalid whence {whence} (use MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END)"))),
    };
    let to = base + offset;
    if to < 0 {
        return Err((MPI_ERR_ARG, format!("the seek would move the file pointer before the view's start (to {to})")));
    }
    Ok(to as u64)
}

/// `MPI_ERR_UNSUPPORTED_OPERATION` for individual-pointer and explicit-offset calls on a
/// file opened with `MPI_MODE_SEQUENTIAL`.
pub fn not_sequential(st: &FileState) -> Result<(), (c_int, String)> {
    if st.amode & MPI_MODE_SEQUENTIAL != 0 {
        return Err((MPI_ERR_UNSUPPORTED_OPERATION, format!("{} was opened with MPI_MODE_SEQUENTIAL: only the shared file pointer can be used", st.core.path)));
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_seek(fh: MPI_File, offset: MPI_Offset, whence: c_int) -> c_int {
    let func = "MPI_File_seek";
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    let mut st = f.lock();
    let r = not_sequential(&st).and_then(|_| seek_target(st.core.pos, offset, whence, || st.core.end_offset()));
    match r {
        Ok(p) => {
            st.core.pos = p;
            MPI_SUCCESS
        }
        Err((class, msg)) => {
            drop(st);
            raise_file(fh, func, class, msg)
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_position(fh: MPI_File, offset: *mut MPI_Offset) -> c_int {
    let func = "MPI_File_get_position";
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    if offset.is_null() {
        return raise_file(fh, func, MPI_ERR_ARG, "offset is NULL");
    }
    let st = f.lock();
    if let Err((class, msg)) = not_sequential(&st) {
        drop(st);
        return raise_file(fh, func, class, msg);
    }
    // SAFETY: checked non-null.
    unsafe { *offset = st.core.pos as MPI_Offset };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_seek_shared(fh: MPI_File, offset: MPI_Offset, whence: c_int) -> c_int {
    let func = "MPI_File_seek_shared";
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    let mut v = [offset, -offset, whence as i64, -(whence as i64)];
    allreduce_max(f.comm, &mut v);
    if v[0] != -v[1] || v[2] != -v[3] {
        return raise_file(fh, func, MPI_ERR_NOT_SAME, format!("the processes passed different offsets or whence (this one {offset}, {whence})"));
    }
    // Every process's earlier shared accesses are done before rank 0 moves the pointer,
    // and no process goes on before it has (the agreement is the second barrier).
    barrier(f.comm);
    let mine = if f.rank == 0 {
        let st = f.lock();
        let s = &st.core.shared;
        let r = s.get().map_err(|e| (e.class as c_int, e.msg)).and_then(|cur| {
            let to = seek_target(cur, offset, whence, || st.core.end_offset())?;
            s.set(to).map_err(|e| (e.class as c_int, e.msg))
        });
        r.err()
    } else {
        None
    };
    agreed(fh, func, f.comm, mine)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_File_get_position_shared(fh: MPI_File, offset: *mut MPI_Offset) -> c_int {
    let func = "MPI_File_get_position_shared";
    require_init!(func);
    let f = tryf!(file_of(func, fh));
    if offset.is_null() {
        return raise_file(fh, func, MPI_ERR_ARG, "offset is NULL");
    }
    let r = f.lock().core.shared.get();
    match r {
        // SAFETY: checked non-null.
        Ok(p) => unsafe { *offset = p as MPI_Offset },
        Err(e) => return raise_file_core(fh, func, e),
    }
    MPI_SUCCESS
}
