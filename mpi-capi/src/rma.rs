//! One-sided communication entry points: window construction and `MPI_Win_free`, the
//! communication calls (put, get, the accumulates, compare-and-swap, request forms) and
//! synchronisation (fence, PSCW, locks, flushes). Arguments are checked here; the engine's
//! `mpi_core::rma` does the work. The window object's other calls are in `window.rs`.
//!
//! The MPI-4.0 large-count forms (`MPI_Put_c`, `MPI_Win_create_c`, ...) take `MPI_Count`
//! counts and `MPI_Aint` displacement units; each is a one-line call into the code of its
//! int form, which widens its arguments to those types (the engine counts in `usize`).

use crate::abi::*;
use crate::errors::{not_initialized, raise, raise_win, raise_win_core};
use crate::handles::{request_handle, win_handle, win_index};
use crate::p2p_args::{buffer, ArgError};
use mpi_core::request::RawBuf;
use mpi_core::error::MpiError;
use mpi_core::op::{Elem, PredefOp};
use mpi_core::request::ReqId;
use mpi_core::rma::ops::{Buf, TargetSpec, What};
use mpi_core::rma::setup::{self, Card, Spec, CARD_LEN};
use mpi_core::rma::fast::{Word, WordOp};
use mpi_core::rma::{sync, Flavor};
use mpi_core::runtime;
use std::os::raw::{c_int, c_void};

// ------------------------------------------------------------------ construction

/// Reads the info hints of `info` (`MPI_INFO_NULL`: none).
fn info_pairs(info: MPI_Info) -> Result<Vec<(String, String)>, ArgError> {
    if info == MPI_INFO_NULL {
        return Ok(Vec::new());
    }
    crate::info::pairs(info).ok_or_else(|| (MPI_ERR_INFO, format!("invalid info handle {info:#x}")))
}

/// The collective construction shared by every flavor. Returns (window, base address).
unsafe fn construct(func: &str, flavor: Flavor, base: *mut u8, size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, comm: MPI_Comm) -> Result<(MPI_Win, *mut u8), c_int> {
    if !runtime::is_active() {
        return Err(not_initialized(func));
    }
    let fail = |(class, msg): ArgError| raise(comm, func, class, msg);
    let checked = runtime::with(|rt| -> Result<(), ArgError> {
        let c = crate::p2p_args::comm_of(rt, comm)?;
        if c.is_inter() {
            return Err((MPI_ERR_COMM, "windows need an intracommunicator".into()));
        }
        Ok(())
    });
    checked.map_err(fail)?;
    if size < 0 {
        return Err(fail((MPI_ERR_SIZE, format!("negative window size {size}"))));
    }
    if disp_unit <= 0 {
        return Err(fail((MPI_ERR_DISP, format!("displacement unit {disp_unit} is not positive"))));
    }
    if flavor == Flavor::Create && base.is_null() && size > 0 {
        return Err(fail((MPI_ERR_BASE, format!("base is NULL but size is {size}"))));
    }
    let hints = info_pairs(info).map_err(fail)?;
    let noncontig = hints.iter().any(|(k, v)| k == "alloc_shared_noncontig" && v == "true");
    let mut kept = Vec::new();
    crate::info::keep_hints(crate::info::WIN_HINTS, &mut kept, hints);
    let mut wcomm: MPI_Comm = MPI_COMM_NULL;
    // SAFETY: valid out-pointer.
    let rc = unsafe { crate::comm::PMPI_Comm_dup(comm, &mut wcomm) };
    if rc != MPI_SUCCESS {
        return Err(rc);
    }
    let (widx, ctx, rank, world_ranks, mine) = runtime::with(|rt| {
        let idx = crate::handles::comm_index(wcomm).expect("fresh communicator");
        let c = rt.comms.get(idx).expect("fresh communicator");
        let card = setup::card(rt, base, size as usize, disp_unit as usize);
        (idx, c.ctx, c.rank, c.world_ranks.clone(), card)
    });
    let n = world_ranks.len();
    let mut all = vec![0u8; n * CARD_LEN];
    let enc = mine.encode();
    // SAFETY: buffers of the sizes given.
    let rc = unsafe { crate::coll::PMPI_Allgather(enc.as_ptr() as *const c_void, CARD_LEN as c_int, MPI_BYTE, all.as_mut_ptr() as *mut c_void, CARD_LEN as c_int, MPI_BYTE, wcomm) };
    let cleanup = |mut wc: MPI_Comm| {
        // SAFETY: our own communicator.
        unsafe { crate::comm::PMPI_Comm_free(&mut wc) };
    };
    if rc != MPI_SUCCESS {
        cleanup(wcomm);
        return Err(rc);
    }
    let cards: Vec<Card> = all.chunks_exact(CARD_LEN).map(Card::decode).collect();
    if flavor == Flavor::Shared && cards.iter().any(|c| c.node != cards[0].node) {
        cleanup(wcomm);
        return Err(fail((MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared needs every process of the communicator on one node (split it with MPI_Comm_split_type(MPI_COMM_TYPE_SHARED))".into())));
    }
    let created = runtime::with(|rt| setup::create_segment(rt, ctx, &world_ranks, rank, flavor, &cards, noncontig));
    let barrier = || {
        // SAFETY: our own communicator.
        unsafe { crate::coll::PMPI_Barrier(wcomm) }
    };
    // Everyone passes the barrier even when creation failed, so the others see the
    // failure (their attach fails) instead of hanging.
    barrier();
    let segment = match created {
        Ok(Some(s)) => Ok(s),
        Ok(None) => runtime::with(|rt| setup::attach_segment(rt, ctx, &world_ranks, flavor, &cards, noncontig)),
        Err(e) => Err(e),
    };
    barrier();
    let segment = match segment {
        Ok(s) => s,
        Err(e) => {
            cleanup(wcomm);
            return Err(raise(comm, func, e.class as c_int, e.msg));
        }
    };
    let spec = Spec { comm: widx, ctx, rank, world_ranks, flavor, noncontig, errhandler: crate::window::DEFAULT_WIN_ERRHANDLER, info: kept };
    let (idx, base) = runtime::with(|rt| setup::build(rt, spec, &cards, segment));
    Ok((win_handle(idx), base))
}

/// `MPI_Win_create` and `MPI_Win_create_c`.
unsafe fn create(func: &str, base: *mut c_void, size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) -> c_int {
    if win.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "win is NULL");
    }
    // SAFETY: forwarded arguments; `win` checked above.
    match unsafe { construct(func, Flavor::Create, base as *mut u8, size, disp_unit, info, comm) } {
        Ok((w, _)) => {
            unsafe { *win = w };
            MPI_SUCCESS
        }
        Err(rc) => rc,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_create(base: *mut c_void, size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) -> c_int {
    // SAFETY: forwarded.
    unsafe { create("MPI_Win_create", base, size, disp_unit.into(), info, comm, win) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_create_c(base: *mut c_void, size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) -> c_int {
    // SAFETY: forwarded.
    unsafe { create("MPI_Win_create_c", base, size, disp_unit, info, comm, win) }
}

/// `MPI_Win_allocate` and `MPI_Win_allocate_shared`, and their `_c` forms.
unsafe fn allocate(func: &str, flavor: Flavor, size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
    if win.is_null() || baseptr.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "baseptr or win is NULL");
    }
    // SAFETY: forwarded arguments; out-pointers checked above.
    match unsafe { construct(func, flavor, std::ptr::null_mut(), size, disp_unit, info, comm) } {
        Ok((w, base)) => {
            unsafe {
                *win = w;
                *(baseptr as *mut *mut c_void) = base as *mut c_void;
            }
            MPI_SUCCESS
        }
        Err(rc) => rc,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_allocate(size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
    // SAFETY: forwarded.
    unsafe { allocate("MPI_Win_allocate", Flavor::Allocate, size, disp_unit.into(), info, comm, baseptr, win) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_allocate_c(size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
    // SAFETY: forwarded.
    unsafe { allocate("MPI_Win_allocate_c", Flavor::Allocate, size, disp_unit, info, comm, baseptr, win) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_allocate_shared(size: MPI_Aint, disp_unit: c_int, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
    // SAFETY: forwarded.
    unsafe { allocate("MPI_Win_allocate_shared", Flavor::Shared, size, disp_unit.into(), info, comm, baseptr, win) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_allocate_shared_c(size: MPI_Aint, disp_unit: MPI_Aint, info: MPI_Info, comm: MPI_Comm, baseptr: *mut c_void, win: *mut MPI_Win) -> c_int {
    // SAFETY: forwarded.
    unsafe { allocate("MPI_Win_allocate_shared_c", Flavor::Shared, size, disp_unit, info, comm, baseptr, win) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_create_dynamic(info: MPI_Info, comm: MPI_Comm, win: *mut MPI_Win) -> c_int {
    if win.is_null() {
        return raise(comm, "MPI_Win_create_dynamic", MPI_ERR_ARG, "win is NULL");
    }
    // SAFETY: forwarded arguments; `win` checked above.
    match unsafe { construct("MPI_Win_create_dynamic", Flavor::Dynamic, std::ptr::null_mut(), 0, 1, info, comm) } {
        Ok((w, _)) => {
            unsafe { *win = w };
            MPI_SUCCESS
        }
        Err(rc) => rc,
    }
}

/// The window index of a live window handle.
fn live(win: MPI_Win) -> Option<usize> {
    let idx = win_index(win)?;
    runtime::with(|rt| rt.wins.get(idx).is_some()).then_some(idx)
}

/// Common prologue: MPI is up and `win` is a live window.
fn window(func: &str, win: MPI_Win) -> Result<usize, c_int> {
    if !runtime::is_active() {
        return Err(not_initialized(func));
    }
    live(win).ok_or_else(|| raise_win(win, func, MPI_ERR_WIN, "invalid window"))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_free(win: *mut MPI_Win) -> c_int {
    const F: &str = "MPI_Win_free";
    if win.is_null() {
        return raise(MPI_COMM_WORLD, F, MPI_ERR_ARG, "win is NULL");
    }
    // SAFETY: checked non-null.
    let h = unsafe { *win };
    let idx = match window(F, h) {
        Ok(i) => i,
        Err(rc) => return rc,
    };
    // Delete callbacks first, as MPICH: one that fails leaves the window untouched.
    if let Err(rc) = crate::window::on_win_free(h) {
        return rc;
    }
    if let Err(e) = setup::free_begin(idx) {
        return raise_win_core(h, F, e);
    }
    let wcomm = runtime::with(|rt| rt.wins.get(idx).map(|w| w.comm)).expect("live window");
    let wc = crate::handles::comm_handle(wcomm);
    // SAFETY: the window's own communicator.
    unsafe { crate::coll::PMPI_Barrier(wc) };
    setup::free_end(idx);
    let mut wc = wc;
    // SAFETY: the window's own communicator, not used after this.
    unsafe { crate::comm::PMPI_Comm_free(&mut wc) };
    // SAFETY: checked non-null.
    unsafe { *win = MPI_WIN_NULL };
    MPI_SUCCESS
}

/// `MPI_Win_shared_query` and its `_c` form: writes the size and base address of `rank`'s
/// memory and returns its displacement unit, for the caller to store.
fn shared_query(func: &str, win: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut c_void, baseptr: *mut c_void) -> Result<usize, c_int> {
    let idx = window(func, win)?;
    if size.is_null() || disp_unit.is_null() || baseptr.is_null() {
        return Err(raise_win(win, func, MPI_ERR_ARG, "an output argument is NULL"));
    }
    let r = runtime::with(|rt| {
        let w = rt.wins.get(idx).unwrap();
        // MPI 4.1 allows windows of MPI_Win_create and MPI_Win_allocate too: memory this
        // process cannot load and store gives size 0 and NULL.
        if w.flavor == Flavor::Dynamic {
            return Err((MPI_ERR_RMA_FLAVOR, format!("{func} needs a window from MPI_Win_allocate_shared, MPI_Win_allocate or MPI_Win_create, not MPI_Win_create_dynamic")));
        }
        let r = match rank {
            MPI_PROC_NULL => None,
            r if r >= 0 && (r as usize) < w.targets.len() => Some(r as usize),
            r => return Err((MPI_ERR_RANK, format!("rank {r} is not in the window's group of {}", w.targets.len()))),
        };
        Ok(setup::shared_query(w, r))
    });
    match r {
        Ok((s, d, p)) => {
            // SAFETY: out-pointers checked non-null.
            unsafe {
                *size = s as MPI_Aint;
                *(baseptr as *mut *mut c_void) = p as *mut c_void;
            }
            Ok(d)
        }
        Err((c, m)) => Err(raise_win(win, func, c, m)),
    }
}

/// A displacement unit above `INT_MAX` (from `MPI_Win_allocate_shared_c`) does not fit the
/// int form's output: `MPI_ERR_VALUE_TOO_LARGE`, the MPI-4.0 class for an output value its
/// int argument cannot hold (`MPI_Win_shared_query_c` returns it).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_shared_query(win: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut c_int, baseptr: *mut c_void) -> c_int {
    const F: &str = "MPI_Win_shared_query";
    match shared_query(F, win, rank, size, disp_unit as *mut c_void, baseptr).map(c_int::try_from) {
        Ok(Ok(d)) => {
            // SAFETY: checked non-null by `shared_query`.
            unsafe { *disp_unit = d };
            MPI_SUCCESS
        }
        Ok(Err(_)) => raise_win(win, F, MPI_ERR_VALUE_TOO_LARGE, "the displacement unit does not fit in an int; use MPI_Win_shared_query_c"),
        Err(rc) => rc,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_shared_query_c(win: MPI_Win, rank: c_int, size: *mut MPI_Aint, disp_unit: *mut MPI_Aint, baseptr: *mut c_void) -> c_int {
    match shared_query("MPI_Win_shared_query_c", win, rank, size, disp_unit as *mut c_void, baseptr) {
        Ok(d) => {
            // SAFETY: checked non-null by `shared_query`.
            unsafe { *disp_unit = d as MPI_Aint };
            MPI_SUCCESS
        }
        Err(rc) => rc,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_attach(win: MPI_Win, base: *mut c_void, size: MPI_Aint) -> c_int {
    const F: &str = "MPI_Win_attach";
    let idx = match window(F, win) {
        Ok(i) => i,
        Err(rc) => return rc,
    };
    if size < 0 {
        return raise_win(win, F, MPI_ERR_SIZE, format!("negative size {size}"));
    }
    if base.is_null() && size > 0 {
        return raise_win(win, F, MPI_ERR_BASE, "base is NULL");
    }
    match runtime::with(|rt| setup::attach(rt.wins.get_mut(idx).unwrap(), base as u64, size as usize)) {
        Ok(()) => MPI_SUCCESS,
        Err(e) => raise_win_core(win, F, e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_detach(win: MPI_Win, base: *const c_void) -> c_int {
    const F: &str = "MPI_Win_detach";
    let idx = match window(F, win) {
        Ok(i) => i,
        Err(rc) => return rc,
    };
    match runtime::with(|rt| setup::detach(rt.wins.get_mut(idx).unwrap(), base as u64)) {
        Ok(()) => MPI_SUCCESS,
        Err(e) => raise_win_core(win, F, e),
    }
}


// ------------------------------------------------------------------ fast paths

/// Bytes of a predefined, builtin-encoded datatype (MPICH keeps the size in the handle).
#[inline(always)]
fn builtin_size(dt: MPI_Datatype) -> Option<usize> {
    crate::types::is_builtin_handle(dt).then_some((((dt as u32) >> 8) & 0xff) as usize)
}

/// Runs an engine fast path (`mpi_core::rma::fast`) on window `win`:
/// `fast!(win, |rt, idx| body)` evaluates `body`, a bool (true: done), with the runtime and
/// the window's index; false sends the call down the general path. A macro, not a function
/// taking a closure: the helpers below are inlined into several MPI functions, so such a
/// closure had several callers, was not inlined, and took every argument through memory
/// (callgrind: a third of a `MPI_Fetch_and_op`).
macro_rules! fast {
    ($win:expr, |$rt:ident, $idx:ident| $body:expr) => {
        match win_index($win) {
            Some($idx) if runtime::is_active() => {
                let mut guard = runtime::lock();
                match guard.as_mut() {
                    Some($rt) => $body,
                    None => false,
                }
            }
            _ => false,
        }
    };
}

/// Put or get of `count` elements of one builtin type on both sides.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn fast_copy(buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, rank: c_int, disp: MPI_Aint, tcount: MPI_Count, tdt: MPI_Datatype, win: MPI_Win, get: bool) -> bool {
    let Some(size) = builtin_size(dt) else { return false };
    if dt != tdt || count != tcount || count < 0 || (buf.is_null() && count > 0) {
        return false;
    }
    let Some(len) = (count as usize).checked_mul(size) else { return false };
    // SAFETY: the caller's buffer of `count` elements of `dt`.
    fast!(win, |rt, idx| unsafe { mpi_core::rma::fast::copy(rt, idx, rank, disp as isize, buf as *mut u8, len, get) })
}

/// Accumulate-family call of `count` elements of one basic type on every side.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn fast_acc(origin: *const c_void, result: *mut c_void, count: MPI_Count, dt: MPI_Datatype, rank: c_int, disp: MPI_Aint, op: MPI_Op, win: MPI_Win) -> bool {
    let (Some(elem), Some(p)) = (crate::ops::elem_of(dt), crate::ops::predef_op(op)) else { return false };
    if let (Some(word), Some(wop)) = (Word::of(elem), WordOp::of(p)) {
        if count == 1 {
            if origin.is_null() && wop != WordOp::NoOp {
                return false;
            }
            // SAFETY: the caller's one-element buffers.
            return fast!(win, |rt, idx| unsafe { mpi_core::rma::fast::word(rt, idx, rank, disp as isize, origin as *const u8, result as *mut u8, word, wop) });
        }
        if count > 1 && fast_acc_words(origin, result, count as usize, rank, disp, word, wop, win) {
            return true;
        }
    }
    fast_acc_many(origin, result, count, rank, disp, p, elem, win)
}

/// `fast_acc` of more than one element of a `Word` type: out of line (see
/// `fast_acc_many`), and apart from the general case, whose checks cost as much as this
/// whole path.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn fast_acc_words(origin: *const c_void, result: *mut c_void, count: usize, rank: c_int, disp: MPI_Aint, word: Word, wop: WordOp, win: MPI_Win) -> bool {
    if origin.is_null() && wop != WordOp::NoOp {
        return false;
    }
    // SAFETY: the caller's buffers of `count` elements of `word`.
    fast!(win, |rt, idx| unsafe { mpi_core::rma::fast::words(rt, idx, rank, disp as isize, origin as *const u8, result as *mut u8, count, word, wop) })
}

/// `fast_acc` for any count and the other ops: out of line, so that the one-element path
/// inlined into each MPI function stays short (no registers to save for this one).
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn fast_acc_many(origin: *const c_void, result: *mut c_void, count: MPI_Count, rank: c_int, disp: MPI_Aint, p: PredefOp, elem: Elem, win: MPI_Win) -> bool {
    if count <= 0 || (origin.is_null() && p != PredefOp::NoOp) {
        return false;
    }
    // SAFETY: the caller's buffers of `count` elements of `elem`.
    fast!(win, |rt, idx| unsafe { mpi_core::rma::fast::accumulate(rt, idx, rank, disp as isize, origin as *const u8, result as *mut u8, count as usize, p, elem) })
}

// ------------------------------------------------------------------ communication

/// The target rank: Some(rank), or None for `MPI_PROC_NULL`.
fn target_of(idx: usize, rank: c_int) -> Result<Option<usize>, ArgError> {
    if rank == MPI_PROC_NULL {
        return Ok(None);
    }
    let n = runtime::with(|rt| rt.wins.get(idx).map_or(0, |w| w.targets.len()));
    if rank < 0 || rank as usize >= n {
        return Err((MPI_ERR_RANK, format!("target rank {rank} is not in the window's group of {n}")));
    }
    Ok(Some(rank as usize))
}

/// A committed datatype (predefined or derived).
fn datatype(dt: MPI_Datatype, what: &str) -> Result<std::sync::Arc<mpi_core::datatype::Datatype>, ArgError> {
    let t = crate::types::lookup(dt).ok_or_else(|| (MPI_ERR_TYPE, if dt == MPI_DATATYPE_NULL { format!("{what} datatype is MPI_DATATYPE_NULL") } else { format!("invalid {what} datatype {dt:#x}") }))?;
    if !t.committed() {
        return Err((MPI_ERR_TYPE, format!("{what} datatype is not committed; call MPI_Type_commit first")));
    }
    Ok(t)
}

/// The predefined op of an accumulate (user ops are not allowed there).
fn acc_op(op: MPI_Op) -> Result<PredefOp, ArgError> {
    crate::ops::predef_op(op).ok_or_else(|| (MPI_ERR_OP, "one-sided accumulates take only predefined operations (not user-defined ones or MPI_OP_NULL)".to_string()))
}

/// The element an accumulate combines in `dt`, checked against `op` unless the call moves
/// nothing (`empty`): a zero-size accumulate combines no elements, and MPICH returns
/// before checking the pair (mpi4py probes Get_accumulate with 0 `MPI_BYTE`s and `MPI_SUM`).
fn acc_elem(op: PredefOp, dt: MPI_Datatype, empty: bool) -> Result<Elem, ArgError> {
    let t = datatype(dt, "accumulate")?;
    let e = match crate::ops::elem_of(dt) {
        Some(e) => e,
        None => crate::ops::elem_of_derived(op, &t)?,
    };
    if !empty && !op.applies_to(e.group()) {
        let err = mpi_core::op::undefined(op, e);
        return Err((err.class as c_int, err.msg));
    }
    Ok(e)
}

/// Arguments of one communication call, as the C caller gave them.
struct Call {
    func: &'static str,
    win: MPI_Win,
    origin: (*const c_void, MPI_Count, MPI_Datatype),
    result: Option<(*mut c_void, MPI_Count, MPI_Datatype)>,
    target: (c_int, MPI_Aint, MPI_Count, MPI_Datatype),
    op: Option<MPI_Op>,
    get: bool,
    request: *mut MPI_Request,
}

/// Checks a communication call and hands it to the engine. Out of line: inlined, it made
/// every MPI function that falls back to it save registers on its fast path too.
#[inline(never)]
fn communicate(c: Call) -> c_int {
    let idx = match window(c.func, c.win) {
        Ok(i) => i,
        Err(rc) => return rc,
    };
    if !c.request.is_null() {
        // SAFETY: the caller's request out-pointer.
        unsafe { *c.request = MPI_REQUEST_NULL };
    }
    let prepared = (|| -> Result<Option<(What, Buf, Option<Buf>, TargetSpec)>, ArgError> {
        let (trank, tdisp, tcount, tdt) = c.target;
        if tcount < 0 {
            return Err((MPI_ERR_COUNT, format!("negative target count {tcount}")));
        }
        let no_op = c.op.is_some_and(|o| o == MPI_NO_OP);
        let (obuf, ocount, odt) = c.origin;
        let (oraw, olayout) = if no_op { (RawBuf::EMPTY, None) } else { buffer(obuf, ocount, odt)? };
        let tdt_t = datatype(tdt, "target")?;
        let what = match c.op {
            None if c.get => What::Get,
            None => What::Put,
            Some(op) => {
                let p = acc_op(op)?;
                let empty = tcount == 0 || tdt_t.size() == 0;
                let te = acc_elem(p, tdt, empty)?;
                // Nothing moves when either side is empty: any types go (MPICH's rma/badrma).
                // (MPI_NO_OP ignores the origin arguments: MPI_DATATYPE_NULL is fine there.)
                if !no_op && !empty && !(ocount == 0 || datatype(odt, "origin")?.size() == 0) {
                    let oe = acc_elem(p, odt, empty)?;
                    if !oe.combines_with(te) {
                        return Err((MPI_ERR_TYPE, format!("origin elements are {} but target elements are {}", oe.name(), te.name())));
                    }
                }
                if c.result.is_some() {
                    What::GetAcc(p, te)
                } else {
                    What::Acc(p, te)
                }
            }
        };
        let result = match c.result {
            Some((rbuf, rcount, rdt)) => {
                let (raw, layout) = buffer(rbuf, rcount, rdt)?;
                Some(Buf { raw, layout })
            }
            None => None,
        };
        let Some(rank) = target_of(idx, trank)? else { return Ok(None) };
        Ok(Some((what, Buf { raw: oraw, layout: olayout }, result, TargetSpec { rank, disp: tdisp as isize, count: tcount as usize, dt: tdt_t })))
    })();
    let want = !c.request.is_null();
    let outcome = match prepared {
        Err((class, msg)) => return raise_win(c.win, c.func, class, msg),
        Ok(None) => runtime::with(|rt| {
            // MPI_PROC_NULL: nothing to do; a request form gets a completed request.
            Ok(want.then(|| {
                let r = rt.engine.open_coll_request();
                rt.engine.close_coll_request(r, None);
                r
            }))
        }),
        Ok(Some((what, origin, result, spec))) => {
            mpi_core::rma::sync::before_operation(idx, spec.rank);
            runtime::with(|rt| mpi_core::rma::ops::communicate(rt, idx, what, c.func, origin, result, spec, want))
        }
    };
    match outcome {
        Ok(r) => {
            if let Some(r) = r {
                // SAFETY: non-null (want).
                unsafe { *c.request = request_handle(r as ReqId) };
            }
            MPI_SUCCESS
        }
        Err(e) => raise_win_core(c.win, c.func, e),
    }
}

/// `MPI_Put` and `MPI_Get` (`get`), and their `_c` forms.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn put_get(func: &'static str, origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, win: MPI_Win, get: bool) -> c_int {
    if fast_copy(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, get) {
        return MPI_SUCCESS;
    }
    communicate(Call { func, win, origin: (origin_addr, origin_count, origin_datatype), result: None, target: (target_rank, target_disp, target_count, target_datatype), op: None, get, request: std::ptr::null_mut() })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Put(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win) -> c_int {
    put_get("MPI_Put", origin_addr, origin_count.into(), origin_datatype, target_rank, target_disp, target_count.into(), target_datatype, win, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Put_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, win: MPI_Win) -> c_int {
    put_get("MPI_Put_c", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, false)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Get(origin_addr: *mut c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win) -> c_int {
    put_get("MPI_Get", origin_addr, origin_count.into(), origin_datatype, target_rank, target_disp, target_count.into(), target_datatype, win, true)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_c(origin_addr: *mut c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, win: MPI_Win) -> c_int {
    put_get("MPI_Get_c", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, win, true)
}

/// `MPI_Accumulate` and `MPI_Accumulate_c`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn accumulate(func: &'static str, origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
    if origin_datatype == target_datatype && origin_count == target_count && fast_acc(origin_addr, std::ptr::null_mut(), origin_count, origin_datatype, target_rank, target_disp, op, win) {
        return MPI_SUCCESS;
    }
    communicate(Call { func, win, origin: (origin_addr, origin_count, origin_datatype), result: None, target: (target_rank, target_disp, target_count, target_datatype), op: Some(op), get: false, request: std::ptr::null_mut() })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Accumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
    accumulate("MPI_Accumulate", origin_addr, origin_count.into(), origin_datatype, target_rank, target_disp, target_count.into(), target_datatype, op, win)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Accumulate_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
    accumulate("MPI_Accumulate_c", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count, target_datatype, op, win)
}

/// `MPI_Get_accumulate` and `MPI_Get_accumulate_c`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn get_accumulate(func: &'static str, origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: MPI_Count, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
    if origin_datatype == target_datatype && result_datatype == target_datatype && origin_count == target_count && result_count == target_count && !result_addr.is_null() && fast_acc(origin_addr, result_addr, target_count, target_datatype, target_rank, target_disp, op, win) {
        return MPI_SUCCESS;
    }
    communicate(Call {
        func,
        win,
        origin: (origin_addr, origin_count, origin_datatype),
        result: Some((result_addr, result_count, result_datatype)),
        target: (target_rank, target_disp, target_count, target_datatype),
        op: Some(op),
        get: false,
        request: std::ptr::null_mut(),
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_accumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: c_int, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
    get_accumulate("MPI_Get_accumulate", origin_addr, origin_count.into(), origin_datatype, result_addr, result_count.into(), result_datatype, target_rank, target_disp, target_count.into(), target_datatype, op, win)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Get_accumulate_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: MPI_Count, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win) -> c_int {
    get_accumulate("MPI_Get_accumulate_c", origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype, target_rank, target_disp, target_count, target_datatype, op, win)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Fetch_and_op(origin_addr: *const c_void, result_addr: *mut c_void, datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, op: MPI_Op, win: MPI_Win) -> c_int {
    if !result_addr.is_null() && fast_acc(origin_addr, result_addr, 1, datatype, target_rank, target_disp, op, win) {
        return MPI_SUCCESS;
    }
    fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op, win)
}

/// `MPI_Fetch_and_op` off the fast path (out of line: see `fast_acc_many`).
#[inline(never)]
fn fetch_and_op(origin_addr: *const c_void, result_addr: *mut c_void, datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, op: MPI_Op, win: MPI_Win) -> c_int {
    if crate::ops::elem_of(datatype).is_none() && live(win).is_some() {
        return raise_win(win, "MPI_Fetch_and_op", MPI_ERR_TYPE, "MPI_Fetch_and_op takes one predefined datatype");
    }
    communicate(Call { func: "MPI_Fetch_and_op", win, origin: (origin_addr, 1, datatype), result: Some((result_addr, 1, datatype)), target: (target_rank, target_disp, 1, datatype), op: Some(op), get: false, request: std::ptr::null_mut() })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Compare_and_swap(origin_addr: *const c_void, compare_addr: *const c_void, result_addr: *mut c_void, datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, win: MPI_Win) -> c_int {
    if let Some(size) = builtin_size(datatype).filter(|_| !origin_addr.is_null() && !compare_addr.is_null() && !result_addr.is_null() && crate::ops::elem_of(datatype).is_some_and(|e| matches!(e.group(), mpi_core::op::Group::CInteger | mpi_core::op::Group::FortranInteger | mpi_core::op::Group::Logical | mpi_core::op::Group::MultiLanguage | mpi_core::op::Group::Byte))) {
        // SAFETY: the caller's three one-element buffers (checked non-null).
        if fast!(win, |rt, idx| unsafe { mpi_core::rma::fast::compare_and_swap(rt, idx, target_rank, target_disp as isize, origin_addr as *const u8, compare_addr as *const u8, result_addr as *mut u8, size) }) {
            return MPI_SUCCESS;
        }
    }
    const F: &str = "MPI_Compare_and_swap";
    let idx = match window(F, win) {
        Ok(i) => i,
        Err(rc) => return rc,
    };
    use mpi_core::op::Group;
    let size = match crate::ops::elem_of(datatype) {
        Some(e) if matches!(e.group(), Group::CInteger | Group::FortranInteger | Group::Logical | Group::MultiLanguage | Group::Byte) => e.size(),
        _ => return raise_win(win, F, MPI_ERR_TYPE, "MPI_Compare_and_swap takes one predefined integer, logical or byte type"),
    };
    if origin_addr.is_null() || compare_addr.is_null() || result_addr.is_null() {
        return raise_win(win, F, MPI_ERR_BUFFER, "a buffer is NULL");
    }
    let rank = match target_of(idx, target_rank) {
        Ok(Some(r)) => r,
        Ok(None) => return MPI_SUCCESS,
        Err((c, m)) => return raise_win(win, F, c, m),
    };
    let byte = crate::types::lookup(MPI_BYTE).expect("MPI_BYTE");
    mpi_core::rma::sync::before_operation(idx, rank);
    // SAFETY: the caller's three one-element buffers (checked non-null).
    match runtime::with(|rt| unsafe { mpi_core::rma::ops::compare_and_swap(rt, idx, origin_addr as *const u8, compare_addr as *const u8, result_addr as *mut u8, size, rank, target_disp as isize, byte) }) {
        Ok(()) => MPI_SUCCESS,
        Err(e) => raise_win_core(win, F, e),
    }
}

/// The request forms (`MPI_Rput`, ..., and their `_c` forms): the same call with a request
/// out-pointer. `result` is the result buffer of `MPI_Rget_accumulate`.
#[allow(clippy::too_many_arguments)]
fn with_request(func: &'static str, origin: (*const c_void, MPI_Count, MPI_Datatype), result: Option<(*mut c_void, MPI_Count, MPI_Datatype)>, target: (c_int, MPI_Aint, MPI_Count, MPI_Datatype), op: Option<MPI_Op>, get: bool, win: MPI_Win, request: *mut MPI_Request) -> c_int {
    if request.is_null() {
        return raise_win(win, func, MPI_ERR_ARG, "request is NULL");
    }
    communicate(Call { func, win, origin, result, target, op, get, request })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Rput(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win, request: *mut MPI_Request) -> c_int {
    with_request("MPI_Rput", (origin_addr, origin_count.into(), origin_datatype), None, (target_rank, target_disp, target_count.into(), target_datatype), None, false, win, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Rput_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, win: MPI_Win, request: *mut MPI_Request) -> c_int {
    with_request("MPI_Rput_c", (origin_addr, origin_count, origin_datatype), None, (target_rank, target_disp, target_count, target_datatype), None, false, win, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Rget(origin_addr: *mut c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, win: MPI_Win, request: *mut MPI_Request) -> c_int {
    with_request("MPI_Rget", (origin_addr, origin_count.into(), origin_datatype), None, (target_rank, target_disp, target_count.into(), target_datatype), None, true, win, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Rget_c(origin_addr: *mut c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, win: MPI_Win, request: *mut MPI_Request) -> c_int {
    with_request("MPI_Rget_c", (origin_addr, origin_count, origin_datatype), None, (target_rank, target_disp, target_count, target_datatype), None, true, win, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Raccumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: *mut MPI_Request) -> c_int {
    with_request("MPI_Raccumulate", (origin_addr, origin_count.into(), origin_datatype), None, (target_rank, target_disp, target_count.into(), target_datatype), Some(op), false, win, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Raccumulate_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: *mut MPI_Request) -> c_int {
    with_request("MPI_Raccumulate_c", (origin_addr, origin_count, origin_datatype), None, (target_rank, target_disp, target_count, target_datatype), Some(op), false, win, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Rget_accumulate(origin_addr: *const c_void, origin_count: c_int, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: c_int, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: c_int, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: *mut MPI_Request) -> c_int {
    let result = Some((result_addr, result_count.into(), result_datatype));
    with_request("MPI_Rget_accumulate", (origin_addr, origin_count.into(), origin_datatype), result, (target_rank, target_disp, target_count.into(), target_datatype), Some(op), false, win, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Rget_accumulate_c(origin_addr: *const c_void, origin_count: MPI_Count, origin_datatype: MPI_Datatype, result_addr: *mut c_void, result_count: MPI_Count, result_datatype: MPI_Datatype, target_rank: c_int, target_disp: MPI_Aint, target_count: MPI_Count, target_datatype: MPI_Datatype, op: MPI_Op, win: MPI_Win, request: *mut MPI_Request) -> c_int {
    let result = Some((result_addr, result_count, result_datatype));
    with_request("MPI_Rget_accumulate_c", (origin_addr, origin_count, origin_datatype), result, (target_rank, target_disp, target_count, target_datatype), Some(op), false, win, request)
}

// ------------------------------------------------------------------ synchronisation

const KNOWN_ASSERTS: c_int = MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED;

/// Common prologue of the synchronisation calls: the window and a known assertion.
fn sync_call(func: &str, win: MPI_Win, assert: c_int) -> Result<usize, c_int> {
    let idx = window(func, win)?;
    if assert & !KNOWN_ASSERTS != 0 {
        return Err(raise_win(win, func, MPI_ERR_ASSERT, format!("unknown assertion bits {:#x}", assert & !KNOWN_ASSERTS)));
    }
    Ok(idx)
}

fn done(win: MPI_Win, func: &str, r: Result<(), MpiError>) -> c_int {
    match r {
        Ok(()) => MPI_SUCCESS,
        Err(e) => raise_win_core(win, func, e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_fence(assert: c_int, win: MPI_Win) -> c_int {
    const F: &str = "MPI_Win_fence";
    if assert & !KNOWN_ASSERTS == 0 {
        use mpi_core::rma::fast::{self, FenceSync};
        let mut sync = None;
        if fast!(win, |rt, idx| {
            sync = fast::fence(rt, idx, assert & MPI_MODE_NOSUCCEED == 0);
            sync.is_some()
        }) {
            match sync.unwrap() {
                FenceSync::Node(b, round) => {
                    // SAFETY: the barrier of this live window, just arrived at.
                    unsafe { fast::fence_wait(b, round) };
                    return MPI_SUCCESS;
                }
                // SAFETY: the window's own communicator.
                FenceSync::Comm(c) => return unsafe { crate::coll::PMPI_Barrier(crate::handles::comm_handle(c)) },
            }
        }
    }
    let idx = match sync_call(F, win, assert) {
        Ok(i) => i,
        Err(rc) => return rc,
    };
    if let Err(e) = sync::fence_begin(idx) {
        return raise_win_core(win, F, e);
    }
    let how = runtime::with(|rt| rt.wins.get_mut(idx).map(|w| mpi_core::rma::fast::fence_arrive(w))).expect("live window");
    let rc = match how {
        mpi_core::rma::fast::FenceSync::Node(b, round) => {
            // SAFETY: the barrier of this live window, just arrived at.
            unsafe { mpi_core::rma::fast::fence_wait(b, round) };
            MPI_SUCCESS
        }
        // SAFETY: the window's own communicator.
        mpi_core::rma::fast::FenceSync::Comm(c) => unsafe { crate::coll::PMPI_Barrier(crate::handles::comm_handle(c)) },
    };
    if rc != MPI_SUCCESS {
        return rc;
    }
    sync::fence_end(idx, assert & MPI_MODE_NOSUCCEED == 0);
    MPI_SUCCESS
}

/// Window ranks of the members of `group` (world ranks).
fn group_ranks(idx: usize, group: MPI_Group) -> Result<Vec<usize>, ArgError> {
    let members = crate::group::lookup(group).ok_or_else(|| (MPI_ERR_GROUP, format!("invalid group {group:#x}")))?;
    runtime::with(|rt| {
        let w = rt.wins.get(idx).unwrap();
        members
            .iter()
            .map(|&m| w.world_ranks.iter().position(|&x| x == m).ok_or_else(|| (MPI_ERR_RANK, format!("a member of the group (world rank {m}) is not in the window's group"))))
            .collect()
    })
}

/// `MPI_Win_post` and `MPI_Win_start`: open an epoch toward `group` with `open`.
fn pscw_open(func: &str, group: MPI_Group, assert: c_int, win: MPI_Win, open: fn(usize, Vec<usize>, bool) -> Result<(), MpiError>) -> c_int {
    let idx = match sync_call(func, win, assert) {
        Ok(i) => i,
        Err(rc) => return rc,
    };
    match group_ranks(idx, group) {
        Ok(g) => done(win, func, open(idx, g, assert & MPI_MODE_NOCHECK != 0)),
        Err((c, m)) => raise_win(win, func, c, m),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_post(group: MPI_Group, assert: c_int, win: MPI_Win) -> c_int {
    pscw_open("MPI_Win_post", group, assert, win, sync::post)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_start(group: MPI_Group, assert: c_int, win: MPI_Win) -> c_int {
    pscw_open("MPI_Win_start", group, assert, win, sync::start)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_complete(win: MPI_Win) -> c_int {
    const F: &str = "MPI_Win_complete";
    match window(F, win) {
        Ok(idx) => done(win, F, sync::complete(idx)),
        Err(rc) => rc,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_wait(win: MPI_Win) -> c_int {
    const F: &str = "MPI_Win_wait";
    match window(F, win) {
        Ok(idx) => done(win, F, sync::wait(idx, true).map(|_| ())),
        Err(rc) => rc,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_test(win: MPI_Win, flag: *mut c_int) -> c_int {
    const F: &str = "MPI_Win_test";
    let idx = match window(F, win) {
        Ok(i) => i,
        Err(rc) => return rc,
    };
    if flag.is_null() {
        return raise_win(win, F, MPI_ERR_ARG, "flag is NULL");
    }
    match sync::wait(idx, false) {
        Ok(f) => {
            // SAFETY: checked non-null.
            unsafe { *flag = f as c_int };
            MPI_SUCCESS
        }
        Err(e) => raise_win_core(win, F, e),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_lock(lock_type: c_int, rank: c_int, assert: c_int, win: MPI_Win) -> c_int {
    const F: &str = "MPI_Win_lock";
    let idx = match sync_call(F, win, assert) {
        Ok(i) => i,
        Err(rc) => return rc,
    };
    let exclusive = match lock_type {
        MPI_LOCK_EXCLUSIVE => true,
        MPI_LOCK_SHARED => false,
        t => return raise_win(win, F, MPI_ERR_LOCKTYPE, format!("lock type {t} is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE")),
    };
    match target_of(idx, rank) {
        Ok(Some(r)) => done(win, F, sync::lock(idx, r, exclusive, assert & MPI_MODE_NOCHECK != 0)),
        Ok(None) => MPI_SUCCESS,
        Err((c, m)) => raise_win(win, F, c, m),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_unlock(rank: c_int, win: MPI_Win) -> c_int {
    const F: &str = "MPI_Win_unlock";
    let idx = match window(F, win) {
        Ok(i) => i,
        Err(rc) => return rc,
    };
    match target_of(idx, rank) {
        Ok(Some(r)) => done(win, F, sync::unlock(idx, r)),
        Ok(None) => MPI_SUCCESS,
        Err((c, m)) => raise_win(win, F, c, m),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_lock_all(assert: c_int, win: MPI_Win) -> c_int {
    const F: &str = "MPI_Win_lock_all";
    match sync_call(F, win, assert) {
        Ok(idx) => done(win, F, sync::lock_all(idx, assert & MPI_MODE_NOCHECK != 0)),
        Err(rc) => rc,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_unlock_all(win: MPI_Win) -> c_int {
    const F: &str = "MPI_Win_unlock_all";
    match window(F, win) {
        Ok(idx) => done(win, F, sync::unlock_all(idx)),
        Err(rc) => rc,
    }
}

/// `MPI_Win_flush` and `MPI_Win_flush_local` (local completion is not cheaper here: the
/// operation's reply is what frees the origin buffer of an active message too).
#[inline(always)]
fn flush_one(func: &'static str, rank: c_int, win: MPI_Win) -> c_int {
    if fast!(win, |rt, idx| mpi_core::rma::fast::flush(rt, idx, Some(rank)) == Some(true)) {
        return MPI_SUCCESS;
    }
    flush_one_general(func, rank, win)
}

/// `flush_one` off the fast path (out of line: see `fast_acc_many`).
#[inline(never)]
fn flush_one_general(func: &'static str, rank: c_int, win: MPI_Win) -> c_int {
    let idx = match window(func, win) {
        Ok(i) => i,
        Err(rc) => return rc,
    };
    match target_of(idx, rank) {
        Ok(Some(r)) => done(win, func, sync::flush(idx, Some(r), func)),
        Ok(None) => MPI_SUCCESS,
        Err((c, m)) => raise_win(win, func, c, m),
    }
}

fn flush_every(func: &str, win: MPI_Win) -> c_int {
    if fast!(win, |rt, idx| mpi_core::rma::fast::flush(rt, idx, None) == Some(true)) {
        return MPI_SUCCESS;
    }
    match window(func, win) {
        Ok(idx) => done(win, func, sync::flush(idx, None, func)),
        Err(rc) => rc,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_flush(rank: c_int, win: MPI_Win) -> c_int {
    flush_one("MPI_Win_flush", rank, win)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_flush_local(rank: c_int, win: MPI_Win) -> c_int {
    flush_one("MPI_Win_flush_local", rank, win)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_flush_all(win: MPI_Win) -> c_int {
    flush_every("MPI_Win_flush_all", win)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_flush_local_all(win: MPI_Win) -> c_int {
    flush_every("MPI_Win_flush_local_all", win)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Win_sync(win: MPI_Win) -> c_int {
    match window("MPI_Win_sync", win) {
        Ok(_) => {
            // The unified model: a full fence orders this process's loads and stores with
            // the window's public copy (the same memory).
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            MPI_SUCCESS
        }
        Err(rc) => rc,
    }
}
