//! Collective entry points: validate arguments, build the schedule with an algorithm from
//! `mpi_core::coll::algorithms`, then run it (blocking) or hand out its request
//! (nonblocking). Both forms share the same code path: each `MPI_X`/`MPI_IX` pair calls one
//! `x(…, request: Req)` function. That function is generic over the integer type of its
//! counts and displacements (`Int`), so the MPI-4.0 large-count `MPI_X_c` forms
//! (`MPI_Count` counts, `MPI_Aint` displacements) call the same body as the `int` ones.
//!
//! Buffers become byte `Slice`s through `Staging::view`: contiguous datatypes map straight
//! onto user memory; non-contiguous ones are packed into staging buffers before the
//! schedule runs and unpacked after it completed (blocking calls only for now).

use crate::abi::*;
use crate::errors::raise;
use crate::handles::{comm_index, request_handle};
use crate::p2p_args::ArgError;
use crate::ops::{self, OpKind};
use crate::types::lookup;
use mpi_core::coll::direct::{self, Direct, DirectOp, DIRECT_TMP};
use mpi_core::coll::inter::{self, Role};
use mpi_core::comm::Comm;
use mpi_core::coll::{algorithms, ReduceFn, Reducer, Schedule, Slice, UnpackTarget};
use mpi_core::datatype::Datatype;
use mpi_core::protocol::Engine;
use mpi_core::runtime::{self, Runtime};
use std::os::raw::{c_int, c_void};
use mpi_core::request::ReqId;
use smallvec::SmallVec;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// A count or displacement argument: `int` in the classic bindings, `MPI_Count` or
/// `MPI_Aint` (both `long` in the MPICH ABI) in the large-count `_c` ones. Entry points are
/// generic over it and monomorphised, so the `int` forms pay nothing for the `_c` ones.
pub(crate) trait Int: Copy + std::fmt::Display + 'static {
    fn get(self) -> i64;

    /// The value as a count: None when negative or above `MAX_COUNT`.
    fn count(self) -> Option<usize>;
}

impl Int for c_int {
    #[inline(always)]
    fn get(self) -> i64 {
        self as i64
    }

    /// Every non-negative `int` is below `MAX_COUNT`: no bound check on the int paths.
    #[inline(always)]
    fn count(self) -> Option<usize> {
        usize::try_from(self).ok()
    }
}

impl Int for std::os::raw::c_long {
    #[inline(always)]
    fn get(self) -> i64 {
        self
    }

    #[inline(always)]
    fn count(self) -> Option<usize> {
        usize::try_from(self).ok().filter(|&n| n <= MAX_COUNT)
    }
}

/// Largest count a collective takes (2^40 items): far beyond any buffer a process can
/// hold, and small enough that counts times the number of processes never overflow.
const MAX_COUNT: usize = 1 << 40;

/// How `run_collective` left a collective it started.
enum Started {
    /// Nonblocking: the request to hand out.
    Request(u32),
    /// Blocking and already complete.
    Done,
    /// Blocking and still running: the caller advances it until it completes.
    Running(Box<Schedule>),
}

/// How a collective call runs (`run_collective`).
#[derive(Clone, Copy)]
pub enum Req {
    /// Blocking: the call waits for the schedule.
    Blocking,
    /// Nonblocking: the request handle is stored there.
    Nonblocking(*mut MPI_Request),
    /// A persistent collective's `_init`: the arguments are checked by building a schedule
    /// that is then dropped; the inactive persistent request and the tag it keeps for all
    /// its starts (taken now, so starts may come in any order) are stored there.
    Init(*mut (ReqId, i32)),
    /// `MPI_Start` of persistent request `.0`, whose schedules use tag `.1`.
    Start(ReqId, i32),
}

impl Req {
    pub fn is_blocking(self) -> bool {
        matches!(self, Req::Blocking)
    }
}

/// Builds a schedule on communicator `comm` with `build` (under the runtime lock) and runs
/// it: waits for it when blocking, else stores its request handle (see `Req` for
/// persistent collectives). A blocking collective needs no request: the caller's wait
/// advances the schedule directly, and the schedule goes back to the engine's pool for the
/// next call.
pub fn run_collective(func: &str, comm: MPI_Comm, request: Req, build: impl FnOnce(&mut Runtime, &mut Schedule) -> Result<(), ArgError>) -> c_int {
    require_init!(func);
    if let Req::Nonblocking(r) = request {
        if r.is_null() {
            return raise(comm, func, MPI_ERR_ARG, "request is NULL");
        }
    }
    let nonblocking = !request.is_blocking();
    let started = runtime::with(|rt| -> Result<Started, ArgError> {
        let c = comm_index(comm).and_then(|i| rt.comms.get_mut(i)).ok_or_else(|| {
            (MPI_ERR_COMM, if comm == MPI_COMM_NULL { "communicator is MPI_COMM_NULL".to_string() } else { format!("invalid communicator handle {comm:#x}") })
        })?;
        let (cc, tag) = match request {
            Req::Start(_, tag) => (c.coll_view(), tag),
            _ => c.next_collective(nonblocking),
        };
        let mut s = rt.engine.new_schedule(cc, tag);
        if let Err(e) = build(rt, &mut s) {
            rt.engine.recycle_schedule(s);
            if let (Some(c), false) = (comm_index(comm).and_then(|i| rt.comms.get_mut(i)), matches!(request, Req::Start(..))) {
                c.unwind_collective(nonblocking);
            }
            return Err(e);
        }
        match request {
            Req::Blocking => {}
            Req::Nonblocking(_) => {
                let rid = rt.engine.start_boxed(s).map_err(|e| (e.class as c_int, e.msg))?;
                rt.engine.reqs.get_mut(rid).unwrap().owner = comm as i64;
                return Ok(Started::Request(rid));
            }
            Req::Init(out) => {
                rt.engine.recycle_schedule(s);
                let rid = rt.engine.create(mpi_core::request::Op::Coll, true);
                rt.engine.reqs.get_mut(rid).unwrap().owner = comm as i64;
                // SAFETY: `persistent_init` passes its own local.
                unsafe { *out = (rid, tag) };
                return Ok(Started::Done);
            }
            Req::Start(rid, _) => {
                rt.engine.run_schedule(rid, s).map_err(|e| (e.class as c_int, e.msg))?;
                return Ok(Started::Done);
            }
        }
        match rt.engine.advance_schedule(&mut s) {
            Ok(true) => {
                rt.engine.recycle_schedule(s);
                Ok(Started::Done)
            }
            Ok(false) => Ok(Started::Running(s)),
            Err(e) => Err((e.class as c_int, e.msg)),
        }
    });
    match started {
        Err((class, msg)) => raise(comm, func, class, msg),
        Ok(Started::Request(rid)) => {
            if let Req::Nonblocking(r) = request {
                // SAFETY: checked non-null above.
                unsafe { *r = request_handle(rid) };
            }
            MPI_SUCCESS
        }
        Ok(Started::Done) => MPI_SUCCESS,
        Ok(Started::Running(s)) => {
            let mut slot = Some(s);
            let mut failed = None;
            runtime::wait_until(|rt| {
                let s = slot.as_mut().expect("advanced after completion");
                match rt.engine.advance_schedule(s) {
                    Ok(false) => false,
                    Ok(true) => {
                        rt.engine.recycle_schedule(slot.take().unwrap());
                        true
                    }
                    Err(e) => {
                        failed = Some(e);
                        true
                    }
                }
            });
            match failed {
                Some(e) => raise(comm, func, e.class as c_int, e.msg),
                None => MPI_SUCCESS,
            }
        }
    }
}

// ------------------------------------------------------------------ persistent collectives

/// What `MPI_Start` does for a persistent collective: the same call as its nonblocking
/// twin, with `Req::Start` (the schedule is built anew each time, so the buffers' current
/// contents are sent and non-contiguous ones packed again).
type StartFn = Arc<dyn Fn(&str, Req) -> c_int>;

struct Persistent {
    tag: i32,
    start: StartFn,
    _pins: Pins,
}

/// The datatype and op handles a persistent collective uses, kept valid until its request
/// is freed: the program may free them right after `_init` (MPI 4.1 §6.13), and every
/// start looks them up again.
pub(crate) struct Pins {
    types: Vec<MPI_Datatype>,
    ops: Vec<MPI_Op>,
}

impl Pins {
    pub(crate) fn new(types: &[MPI_Datatype], ops: &[MPI_Op]) -> Pins {
        types.iter().for_each(|&t| crate::types::pin(t));
        ops.iter().for_each(|&o| crate::ops::pin_op(o));
        Pins { types: types.to_vec(), ops: ops.to_vec() }
    }
}

impl Drop for Pins {
    fn drop(&mut self) {
        self.types.iter().for_each(|&t| crate::types::unpin(t));
        self.ops.iter().for_each(|&o| crate::ops::unpin_op(o));
    }
}

/// The persistent collective requests alive, by request id.
struct Registry(HashMap<ReqId, Persistent>);
// SAFETY: the start functions hold the user's buffer pointers and argument arrays, which
// the standard keeps valid until the request is freed; they only run under MPI calls.
unsafe impl Send for Registry {}

fn registry() -> MutexGuard<'static, Registry> {
    static R: OnceLock<Mutex<Registry>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(Registry(HashMap::new()))).lock().unwrap_or_else(|e| e.into_inner())
}

/// A persistent collective's `_init` (MPI 4.1 §6.13): checks the arguments as the
/// nonblocking call would (errors are raised now), takes the collective's tag, and hands
/// out an inactive persistent request that `MPI_Start` runs with `start`.
pub(crate) fn persistent_init(func: &str, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request, pins: Pins, start: impl Fn(&str, Req) -> c_int + 'static) -> c_int {
    require_init!(func);
    if request.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "request is NULL");
    }
    if crate::info::pairs(info).is_none() {
        return raise(comm, func, MPI_ERR_INFO, format!("invalid info handle {info:#x}"));
    }
    let mut out: (ReqId, i32) = (0, 0);
    let rc = start(func, Req::Init(&mut out));
    if rc != MPI_SUCCESS {
        return rc;
    }
    registry().0.insert(out.0, Persistent { tag: out.1, start: Arc::new(start), _pins: pins });
    // SAFETY: checked non-null.
    unsafe { *request = request_handle(out.0) };
    MPI_SUCCESS
}

/// A copy of an argument array of a persistent collective, taken at `_init`: each start
/// reads the copy, so the program may reuse or free its array after `_init` (mpi4py passes
/// temporaries). NULL, or an array not significant on this process (`keep` false), stays
/// the caller's pointer and is never read.
pub(crate) struct Kept<T: Copy>(*const T, Option<Box<[T]>>);

impl<T: Copy> Kept<T> {
    pub(crate) fn ptr(&self) -> *const T {
        self.1.as_ref().map_or(self.0, |b| b.as_ptr())
    }

    /// The copy (empty when none was taken).
    pub(crate) fn copied(&self) -> &[T] {
        self.1.as_deref().unwrap_or(&[])
    }
}

/// # Safety
/// `p`, when non-null and `keep`, is valid for `n` reads.
pub(crate) unsafe fn keep_array<T: Copy>(p: *const T, n: usize, keep: bool) -> Kept<T> {
    if p.is_null() || !keep {
        return Kept(p, None);
    }
    // SAFETY: per the function contract.
    Kept(p, Some(unsafe { std::slice::from_raw_parts(p, n) }.into()))
}

/// The length of a collective's per-process argument arrays on `comm`, and whether this
/// process is the root `root` (None: not a rooted collective): the remote group's size on
/// an intercommunicator (`local`: the local group's, for Reduce_scatter), else the size.
fn array_len(comm: MPI_Comm, local: bool, root: Option<c_int>) -> (usize, bool) {
    runtime::with(|rt| {
        crate::p2p_args::comm_of(rt, comm).map_or((0, false), |c| {
            let n = if local { c.local_size() } else { c.world_ranks.len() };
            let at_root = match root {
                None => true,
                Some(r) if c.is_inter() => r == MPI_ROOT,
                Some(r) => r >= 0 && r as usize == c.rank,
            };
            (n, at_root)
        })
    })
}

/// `MPI_Start` of persistent collective request `rid` (inactive: checked by the caller).
pub fn start_persistent(func: &str, comm: MPI_Comm, rid: ReqId) -> c_int {
    if crate::fortran_sections::any() {
        crate::fortran_sections::starting(rid);
    }
    let found = registry().0.get(&rid).map(|p| (p.tag, p.start.clone()));
    match found {
        Some((tag, start)) => start(func, Req::Start(rid, tag)),
        None => raise(comm, func, MPI_ERR_REQUEST, "not a persistent collective request"),
    }
}

/// A persistent collective request was freed.
pub fn forget_persistent(rid: ReqId) {
    registry().0.remove(&rid);
}

/// Runs a small blocking collective without a schedule (`mpi_core::coll::direct`). `make`
/// sees the communicator and the temporary (`DIRECT_TMP` bytes, valid for the whole call)
/// and returns the operation, its buffer and length, or None when
/// the call does not qualify (or has an argument error, which the schedule path then
/// reports); run_direct then returns None and the caller takes the schedule path.
fn run_direct(func: &str, comm: MPI_Comm, make: impl FnOnce(&Comm, *mut u8, bool, &Engine) -> Option<(DirectOp, *mut u8, usize)>) -> Option<c_int> {
    if !runtime::is_active() {
        return None;
    }
    let max = direct_max();
    if max == 0 {
        return None;
    }
    // The temporary lives here for the whole call: a posted receive may point into it.
    let mut tmp = std::mem::MaybeUninit::<[u128; DIRECT_TMP / 16]>::uninit();
    let tmp = tmp.as_mut_ptr() as *mut u8;
    let mut slot: Option<Direct> = None;
    let first = runtime::with(|rt| {
        let c = comm_index(comm).and_then(|i| rt.comms.get_mut(i)).filter(|c| !c.is_inter())?;
        let flat = algorithms::flat(rt.engine.oversubscribed, c.size(), || rt.engine.on_my_host(&c.world_ranks));
        let (op, buf, len) = make(c, tmp, flat, &rt.engine).filter(|x| x.2 <= max)?;
        let (cc, tag) = c.next_collective(false);
        let d = slot.insert(Direct::new(cc, tag, op, buf, len, tmp));
        Some(rt.engine.advance_direct(d))
    })?;
    let outcome = match first {
        Ok(false) => {
            let d = slot.as_mut().expect("set when started");
            let mut outcome = Ok(());
            runtime::wait_until(|rt| match rt.engine.advance_direct(d) {
                Ok(done) => done,
                Err(e) => {
                    outcome = Err(e);
                    true
                }
            });
            outcome
        }
        Ok(true) => Ok(()),
        Err(e) => Err(e),
    };
    Some(match outcome {
        Ok(()) => MPI_SUCCESS,
        Err(e) => raise(comm, func, e.class as c_int, e.msg),
    })
}

/// `COLL_DIRECT_MAX`, read once.
fn direct_max() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(|| mpi_core::config::config().get("COLL_DIRECT_MAX").min(DIRECT_TMP))
}

/// Byte length of `cnt` items of a contiguous datatype, or None (negative count, invalid
/// or non-contiguous type: the schedule path handles or reports those).
fn contiguous_len<C: Int>(cnt: C, dt: MPI_Datatype) -> Option<usize> {
    let n = cnt.count()?;
    // Builtin handles carry their size in bits 8..16 and are contiguous from offset 0 (as
    // in `p2p_args::buffer`): no type lookup on the small-collective path.
    if crate::types::is_builtin_handle(dt) {
        return Some(n * ((dt as u32 >> 8) & 0xff) as usize);
    }
    let ty = datatype(dt).ok()?;
    (ty.is_contiguous() && ty.true_lb() == 0).then(|| n * ty.size())
}

/// The engine type of a builtin-encoded predefined handle, from a table indexed by the
/// handle's low byte (the general lookup hashes the handle, a visible cost in a small
/// collective); None for other handles.
fn builtin_type(dt: MPI_Datatype) -> Option<&'static Arc<Datatype>> {
    if !crate::types::is_builtin_handle(dt) {
        return None;
    }
    // A builtin handle is determined by its low byte, so each entry caches one type.
    static BUILTIN: [OnceLock<Option<Arc<Datatype>>>; 256] = [const { OnceLock::new() }; 256];
    BUILTIN[(dt as u32 & 0xff) as usize].get_or_init(|| lookup(dt)).as_ref()
}

// ------------------------------------------------------------------ argument helpers

/// Whether a buffer argument is `MPI_IN_PLACE` (`(void *)-1` in the MPICH ABI).
fn in_place(p: *const c_void) -> bool {
    p as usize == usize::MAX
}

/// How a buffer is used by the collective: read, written, or both.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dir {
    In,
    Out,
    InOut,
}

/// Byte views of the typed buffers of one collective call (see the module doc).
pub(crate) struct Staging {
    bufs: Vec<Box<[u8]>>,
    /// (staging buffer index, user buffer, count, type) to unpack after completion.
    unpack: Vec<(usize, *mut u8, usize, Arc<Datatype>)>,
}

impl Staging {
    fn new() -> Staging {
        Staging { bufs: Vec::new(), unpack: Vec::new() }
    }

    /// `count` items of type `ty` at `ptr` as one packed byte range.
    pub(crate) fn view(&mut self, ptr: *const c_void, count: usize, ty: &Arc<Datatype>, dir: Dir) -> Result<Slice, ArgError> {
        let len = count.checked_mul(ty.size()).filter(|&l| l <= isize::MAX as usize).ok_or_else(|| (MPI_ERR_COUNT, format!("{count} items of {} bytes exceed the address space", ty.size())))?;
        if len == 0 {
            return Ok(Slice::user(std::ptr::null(), 0));
        }
        if ptr.is_null() && ty.is_named() {
            return Err((MPI_ERR_BUFFER, format!("buffer is NULL but it holds {count} items")));
        }
        if in_place(ptr) {
            return Err((MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed for this buffer".into()));
        }
        if ty.is_contiguous() {
            return Ok(Slice::user((ptr as *const u8).wrapping_offset(ty.true_lb()), len));
        }
        let mut b = vec![0u8; len].into_boxed_slice();
        if dir != Dir::Out {
            // SAFETY: the caller passed a buffer holding `count` items of `ty` (MPI rule).
            unsafe { ty.pack(ptr as *const u8, count, &mut b) };
        }
        let slice = Slice::user(b.as_ptr(), len);
        if dir != Dir::In {
            self.unpack.push((self.bufs.len(), ptr as *mut u8, count, ty.clone()));
        }
        self.bufs.push(b);
        Ok(slice)
    }

    /// Hands the staged buffers to the schedule and appends a last round that unpacks the
    /// outputs into user memory, so blocking and nonblocking calls finish the same way.
    fn attach(self, s: &mut Schedule) {
        if !self.unpack.is_empty() {
            s.next_round();
            for (i, dst, count, ty) in self.unpack {
                let b = &self.bufs[i];
                s.unpack(Slice::user(b.as_ptr(), b.len()), UnpackTarget { ty, dst, count });
            }
        }
        for b in self.bufs {
            s.keep(b);
        }
    }
}

/// The engine type of `dt`, which must be valid and committed.
pub(crate) fn datatype(dt: MPI_Datatype) -> Result<Arc<Datatype>, ArgError> {
    if let Some(t) = builtin_type(dt) {
        return Ok(t.clone());
    }
    if dt == MPI_DATATYPE_NULL {
        return Err((MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL".into()));
    }
    let ty = lookup(dt).ok_or_else(|| (MPI_ERR_TYPE, format!("invalid datatype handle {dt:#x}")))?;
    if !ty.is_named() && !ty.committed() {
        return Err((MPI_ERR_TYPE, "the datatype is not committed (call MPI_Type_commit first)".into()));
    }
    Ok(ty)
}

pub(crate) fn count<C: Int>(c: C, what: &str) -> Result<usize, ArgError> {
    match c.count() {
        Some(n) => Ok(n),
        None if c.get() < 0 => Err((MPI_ERR_COUNT, format!("{what} is negative ({c})"))),
        None => Err((MPI_ERR_COUNT, format!("{what} {c} is too large (OxMPI takes at most 2^40 items)"))),
    }
}

fn root_rank(root: c_int, n: usize) -> Result<usize, ArgError> {
    usize::try_from(root).ok().filter(|&r| r < n).ok_or_else(|| (MPI_ERR_ROOT, format!("invalid root {root} (the communicator has {n} ranks)")))
}

/// Whether schedule `s` runs on an intercommunicator (its builder then takes the
/// `mpi_core::coll::inter` algorithms).
fn is_inter(s: &Schedule) -> bool {
    s.comm.remote.is_some()
}

/// Number of processes a collective sends to or receives from: the remote group on an
/// intercommunicator (the length of per-peer arrays, and of the root's buffers).
fn peers(s: &Schedule) -> usize {
    if is_inter(s) {
        s.comm.remote_size()
    } else {
        s.comm.size()
    }
}

/// This process's part in a rooted collective on an intercommunicator, from `root`:
/// `MPI_ROOT`, `MPI_PROC_NULL` (the root's group), or a rank of the remote group.
fn inter_role(root: c_int, remote: usize) -> Result<Role, ArgError> {
    match root {
        MPI_ROOT => Ok(Role::Root),
        MPI_PROC_NULL => Ok(Role::Idle),
        r => usize::try_from(r).ok().filter(|&r| r < remote).map(|root| Role::Leaf { root }).ok_or_else(|| {
            (MPI_ERR_ROOT, format!("invalid root {r} on an intercommunicator (give MPI_ROOT, MPI_PROC_NULL or a rank of the remote group of {remote})"))
        }),
    }
}

/// An empty byte range (a buffer this process does not use).
fn unused() -> Slice {
    Slice::user(std::ptr::null(), 0)
}

/// The `n` entries of a C array argument (counts, displacements or datatypes); NULL is
/// allowed for an empty array.
///
/// # Safety
/// `p` must point to `n` entries when non-null.
pub(crate) unsafe fn ints<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T], ArgError> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err((MPI_ERR_ARG, format!("{what} is NULL")));
    }
    // SAFETY: per the function contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// One entry per rank of a v-collective's arguments, inline for up to 8 ranks: a small
/// job's call then allocates nothing for them (six to eight `Vec`s per `MPI_Alltoallv`
/// were a third of its time at 2 ranks).
pub(crate) type PerRank<T> = SmallVec<[T; 8]>;

/// Counts from a C array, each non-negative.
///
/// # Safety
/// As for `ints`.
unsafe fn counts<C: Int>(p: *const C, n: usize, what: &str) -> Result<PerRank<usize>, ArgError> {
    // SAFETY: forwarded.
    unsafe { ints(p, n, what) }?.iter().map(|&c| count(c, what)).collect()
}

/// `ptr` advanced by `displ` items of `ty` (a displacement in units of the extent).
fn displaced(ptr: *const c_void, displ: i64, ty: &Datatype) -> *const c_void {
    (ptr as *const u8).wrapping_offset(displ as isize * ty.extent()) as *const c_void
}

/// MPICH's aliasing check: a send buffer (not `MPI_IN_PLACE`) that is this process's own
/// block of the receive buffer, with data to move, is `MPI_ERR_BUFFER`. Raised before
/// any communication starts, so a root that errs leaves its peers nothing half done.
fn not_aliased(sendbuf: *const c_void, own_block: *const c_void, has_data: bool) -> Result<(), ArgError> {
    if has_data && !sendbuf.is_null() && !in_place(sendbuf) && sendbuf == own_block {
        return Err((MPI_ERR_BUFFER, "sendbuf and recvbuf are the same memory (aliased arguments); use MPI_IN_PLACE instead".into()));
    }
    Ok(())
}

/// The `n` blocks of a v-collective's buffer: block i is `cnts[i]` items of `dt` at
/// `buf + displs[i]` extents, used in direction `dir` (`InOut` for block `in_place`).
///
/// # Safety
/// `cnts` and `displs` hold `n` entries when non-null.
#[allow(clippy::too_many_arguments)]
unsafe fn blocks<C: Int, D: Int>(st: &mut Staging, buf: *const c_void, cnts: *const C, displs: *const D, dt: MPI_Datatype, n: usize, dir: Dir, in_place: Option<usize>) -> Result<PerRank<Slice>, ArgError> {
    let ty = datatype(dt)?;
    let what = if dir == Dir::In { "sendcounts" } else { "recvcounts" };
    // SAFETY: per the function contract.
    let c = unsafe { counts(cnts, n, what) }?;
    // SAFETY: as above.
    let dis = unsafe { ints(displs, n, "displs") }?;
    let mut views = PerRank::new();
    for i in 0..n {
        views.push(st.view(displaced(buf, dis[i].get(), &ty), c[i], &ty, if in_place == Some(i) { Dir::InOut } else { dir })?);
    }
    Ok(views)
}

// ------------------------------------------------------------------ reductions

/// The reduction kernel for (op, datatype) and whether the op is commutative. The op is
/// looked up once here, so a user may free it while a nonblocking collective still runs.
///
/// Schedules reduce packed data (staged or contiguous user memory). Predefined ops run the
/// engine's packed kernel on the type's one basic or pair element, with no allocation
/// (`Reducer::Predef`); user ops get the items in the type's own layout, as the standard
/// hands them: contiguous data as it is, other data unpacked into a scratch copy first.
fn reduction(op: MPI_Op, dt: MPI_Datatype, ty: &Arc<Datatype>) -> Result<(Reducer, bool), ArgError> {
    ops::reduction_op(op)?;
    let kind = match ops::lookup_op(op) {
        Some(k) => k,
        None if op == MPI_OP_NULL => return Err((MPI_ERR_OP, "the operation is MPI_OP_NULL".into())),
        None => return Err((MPI_ERR_OP, format!("invalid operation handle {op:#x} (freed, or never created)"))),
    };
    let (f, commute) = match kind {
        OpKind::Predef(p) => {
            let elem = match ops::elem_of(dt) {
                Some(e) => e,
                None if ty.is_named() => {
                    // MPI_PACKED, MPI_REAL16, ...: `apply` words the error.
                    // SAFETY: a count of 0 touches no memory.
                    unsafe { ops::apply(op, dt, std::ptr::null(), std::ptr::null_mut(), 0) }?;
                    return Err((MPI_ERR_OP, format!("{} is not defined for this datatype", p.name())));
                }
                None => ops::elem_of_derived(p, ty)?,
            };
            if !p.applies_to(elem.group()) {
                let e = mpi_core::op::undefined(p, elem);
                return Err((e.class as c_int, e.msg));
            }
            return Ok((Reducer::Predef { op: p, elem }, true));
        }
        OpKind::User { f, commute } => (f, commute),
    };
    let (size, extent) = (ty.size().max(1), ty.extent());
    let f: ReduceFn = if ty.is_contiguous() {
        // Packed bytes are the items themselves; the function indexes from the buffer
        // pointer, which lies true_lb before the first data byte.
        let lb = ty.true_lb();
        Arc::new(move |input: *const u8, inout: *mut u8, bytes: usize| {
            let len = bytes / size;
            if len > 0 {
                // SAFETY: the schedule passes `len` whole items inside its buffers.
                unsafe { f.call(input.wrapping_offset(-lb) as *mut c_void, inout.wrapping_offset(-lb) as *mut c_void, len, dt, extent) };
            }
        })
    } else {
        let ty = ty.clone();
        Arc::new(move |input: *const u8, inout: *mut u8, bytes: usize| {
            let n = bytes / size;
            if n == 0 {
                return;
            }
            let (lo, span) = ty.data_span(n);
            let (mut a, mut b) = (vec![0u128; span.div_ceil(16)], vec![0u128; span.div_ceil(16)]);
            let (pa, pb) = ((a.as_mut_ptr() as *mut u8).wrapping_offset(-lo), (b.as_mut_ptr() as *mut u8).wrapping_offset(-lo));
            // SAFETY: the schedule passes `n` whole packed items in each buffer; a and b
            // hold `n` items of `ty` in its layout from pa/pb (data_span).
            unsafe {
                ty.unpack(std::slice::from_raw_parts(input, n * size), pa, n);
                ty.unpack(std::slice::from_raw_parts(inout, n * size), pb, n);
                f.call(pa as *mut c_void, pb as *mut c_void, n, dt, extent);
                ty.pack(pb, n, std::slice::from_raw_parts_mut(inout, n * size));
            }
        })
    };
    Ok((Reducer::Custom(f), commute))
}

/// Runs a collective whose buffers go through a `Staging`; unpacks staged output after a
/// successful blocking run.
pub(crate) fn run_staged(func: &str, comm: MPI_Comm, request: Req, build: impl FnOnce(&mut Schedule, &mut Staging) -> Result<(), ArgError>) -> c_int {
    run_collective(func, comm, request, |_, s| {
        let mut st = Staging::new();
        build(s, &mut st)?;
        st.attach(s);
        Ok(())
    })
}

// ------------------------------------------------------------------ barrier

#[no_mangle]
pub unsafe extern "C" fn PMPI_Barrier(comm: MPI_Comm) -> c_int {
    let barrier = |c: &Comm, _, flat, engine: &Engine| {
        let op = if flat {
            DirectOp::BarrierFlat
        } else if engine.flag_barrier_fits(&c.world_ranks) {
            DirectOp::BarrierShm
        } else {
            DirectOp::Barrier
        };
        Some((op, std::ptr::null_mut(), 0))
    };
    if let Some(rc) = run_direct("MPI_Barrier", comm, barrier) {
        return rc;
    }
    run_collective("MPI_Barrier", comm, Req::Blocking, barrier_schedule)
}

/// The barrier schedule (intra- or intercommunicator).
fn barrier_schedule(_: &mut Runtime, s: &mut Schedule) -> Result<(), ArgError> {
    if is_inter(s) {
        inter::barrier(s);
    } else {
        algorithms::barrier(s);
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ibarrier(comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    run_collective("MPI_Ibarrier", comm, Req::Nonblocking(request), barrier_schedule)
}

// ------------------------------------------------------------------ bcast

fn bcast<C: Int>(func: &str, buffer: *mut c_void, cnt: C, dt: MPI_Datatype, root: c_int, comm: MPI_Comm, req: Req) -> c_int {
    if req.is_blocking() {
        let direct = run_direct(func, comm, |c, _, flat, _| {
            let len = contiguous_len(cnt, dt)?;
            let root = usize::try_from(root).ok().filter(|&r| r < c.size())?;
            let op = if flat { DirectOp::BcastFlat { root } } else { DirectOp::Bcast { root } };
            (len == 0 || !buffer.is_null()).then_some((op, buffer as *mut u8, len))
        });
        if let Some(rc) = direct {
            return rc;
        }
    }
    run_staged(func, comm, req, |s, st| {
        if is_inter(s) {
            let role = inter_role(root, s.comm.remote_size())?;
            if role != Role::Idle {
                let dir = if role == Role::Root { Dir::In } else { Dir::Out };
                let buf = st.view(buffer, count(cnt, "count")?, &datatype(dt)?, dir)?;
                inter::bcast(s, buf, role);
            }
            return Ok(());
        }
        let root = root_rank(root, s.comm.size())?;
        let ty = datatype(dt)?;
        let dir = if s.comm.rank == root { Dir::In } else { Dir::Out };
        let buf = st.view(buffer, count(cnt, "count")?, &ty, dir)?;
        algorithms::bcast(s, buf, root);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Bcast(buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
    bcast("MPI_Bcast", buffer, count, datatype, root, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ibcast(buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    bcast("MPI_Ibcast", buffer, count, datatype, root, comm, Req::Nonblocking(request))
}

// ------------------------------------------------------------------ reduce, allreduce

/// What a reduction reads and writes: (input, output) views; `input == output` for
/// MPI_IN_PLACE (allowed where `in_place_ok`).
fn reduction_bufs(st: &mut Staging, sendbuf: *const c_void, recvbuf: *mut c_void, n: usize, ty: &Arc<Datatype>, in_place_ok: bool, write_out: bool) -> Result<(Slice, Slice), ArgError> {
    if in_place(sendbuf) {
        if !in_place_ok {
            return Err((MPI_ERR_BUFFER, "MPI_IN_PLACE as sendbuf is only allowed at the root".into()));
        }
        let both = st.view(recvbuf, n, ty, Dir::InOut)?;
        return Ok((both, both));
    }
    if write_out {
        not_aliased(sendbuf, recvbuf, n > 0 && ty.size() > 0)?;
    }
    let input = st.view(sendbuf, n, ty, Dir::In)?;
    let output = if write_out { st.view(recvbuf, n, ty, Dir::Out)? } else { Slice::user(std::ptr::null(), 0) };
    Ok((input, output))
}

#[allow(clippy::too_many_arguments)]
fn reduce<C: Int>(func: &str, sendbuf: *const c_void, recvbuf: *mut c_void, cnt: C, dt: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, req: Req) -> c_int {
    if req.is_blocking() {
        let direct = run_direct(func, comm, |c, tmp, flat, _| {
            let len = contiguous_len(cnt, dt)?;
            let elem = ops::elem_of(dt).filter(|e| len == 0 || e.size() * cnt.get() as usize == len)?;
            // Predefined ops are commutative, as the binomial tree needs.
            let p = ops::predef_op(op).filter(|p| p.applies_to(elem.group()) && p.reduces())?;
            let root = usize::try_from(root).ok().filter(|&r| r < c.size())?;
            let at_root = c.rank == root;
            // Aliased buffers at the root take the general path, which reports them.
            if !direct::reduce_fits(len, direct_max()) || (len > 0 && (sendbuf.is_null() || (at_root && (recvbuf.is_null() || sendbuf == recvbuf as *const c_void)))) || (in_place(sendbuf) && !at_root) {
                return None;
            }
            // The accumulator: the result buffer at the root, the temporary's upper half
            // elsewhere (the lower half takes the children's data).
            let acc = if at_root { recvbuf as *mut u8 } else { tmp.wrapping_add(DIRECT_TMP / 2) };
            if !in_place(sendbuf) && len > 0 {
                // SAFETY: sendbuf holds `cnt` items of the contiguous `dt` (MPI rule); `acc`
                // has room for them; `move_bytes` tolerates the (erroneous) overlap.
                unsafe { mpi_core::copy::move_bytes(sendbuf as *const u8, acc, len) };
            }
            let op = if flat { DirectOp::ReduceFlat { op: p, elem, root } } else { DirectOp::Reduce { op: p, elem, root } };
            Some((op, acc, len))
        });
        if let Some(rc) = direct {
            return rc;
        }
    }
    run_staged(func, comm, req, |s, st| {
        let role = if is_inter(s) { Some(inter_role(root, s.comm.remote_size())?) } else { None };
        if role == Some(Role::Idle) {
            return Ok(());
        }
        let n = count(cnt, "count")?;
        let ty = datatype(dt)?;
        let (f, commutative) = reduction(op, dt, &ty)?;
        s.set_reducer(f);
        if let Some(role) = role {
            let (input, output) = if role == Role::Root { (unused(), st.view(recvbuf, n, &ty, Dir::Out)?) } else { (st.view(sendbuf, n, &ty, Dir::In)?, unused()) };
            inter::reduce(s, input, output, role, commutative);
            return Ok(());
        }
        let root = root_rank(root, s.comm.size())?;
        let at_root = s.comm.rank == root;
        let (input, output) = reduction_bufs(st, sendbuf, recvbuf, n, &ty, at_root, at_root)?;
        algorithms::reduce(s, input, output, root, commutative);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm) -> c_int {
    reduce("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ireduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    reduce("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root, comm, Req::Nonblocking(request))
}

/// Allreduce (`kind` = Allreduce), Scan or Exscan: same arguments, MPI_IN_PLACE allowed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AllKind {
    Allreduce,
    Scan,
    Exscan,
}

#[allow(clippy::too_many_arguments)]
fn allreduce_like<C: Int>(kind: AllKind, func: &str, sendbuf: *const c_void, recvbuf: *mut c_void, cnt: C, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, req: Req) -> c_int {
    run_staged(func, comm, req, |s, st| {
        if is_inter(s) && kind != AllKind::Allreduce {
            return Err((MPI_ERR_COMM, format!("{func} is not defined on intercommunicators (MPI 4.1 §6.11)")));
        }
        let n = count(cnt, "count")?;
        let ty = datatype(dt)?;
        let (f, commutative) = reduction(op, dt, &ty)?;
        s.set_reducer(f);
        if is_inter(s) {
            let (input, output) = (st.view(sendbuf, n, &ty, Dir::In)?, st.view(recvbuf, n, &ty, Dir::Out)?);
            inter::allreduce(s, input, output, commutative);
            return Ok(());
        }
        let (input, output) = reduction_bufs(st, sendbuf, recvbuf, n, &ty, true, true)?;
        match kind {
            AllKind::Allreduce => algorithms::allreduce(s, input, output, ty.size(), commutative),
            AllKind::Scan => algorithms::scan(s, input, output, false),
            AllKind::Exscan => algorithms::scan(s, input, output, true),
        }
        Ok(())
    })
}

/// Blocking Allreduce: a small one on contiguous data runs without a schedule. Called only
/// by `MPI_Allreduce` and `MPI_Allreduce_c`, so each instance is inlined into its entry
/// point (small-message latency).
fn allreduce<C: Int>(func: &str, sendbuf: *const c_void, recvbuf: *mut c_void, count: C, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
    let direct = run_direct(func, comm, |c, _, _, _| {
        let len = contiguous_len(count, datatype)?;
        let elem = ops::elem_of(datatype).filter(|e| len == 0 || e.size() * count.get() as usize == len)?;
        let p = ops::predef_op(op).filter(|p| p.applies_to(elem.group()) && p.reduces())?;
        if !direct::allreduce_fits(c.size(), len, direct_max()) || (len > 0 && (recvbuf.is_null() || sendbuf.is_null() || sendbuf == recvbuf as *const c_void)) {
            return None;
        }
        if !in_place(sendbuf) && len > 0 {
            // SAFETY: both buffers hold `count` items of the contiguous `datatype` (MPI rule);
            // `move_bytes` tolerates the (erroneous) overlap.
            unsafe { mpi_core::copy::move_bytes(sendbuf as *const u8, recvbuf as *mut u8, len) };
        }
        Some((DirectOp::Allreduce { op: p, elem }, recvbuf as *mut u8, len))
    });
    if let Some(rc) = direct {
        return rc;
    }
    allreduce_like(AllKind::Allreduce, func, sendbuf, recvbuf, count, datatype, op, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
    allreduce("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, comm)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iallreduce(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    allreduce_like(AllKind::Allreduce, "MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
    allreduce_like(AllKind::Scan, "MPI_Scan", sendbuf, recvbuf, count, datatype, op, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    allreduce_like(AllKind::Scan, "MPI_Iscan", sendbuf, recvbuf, count, datatype, op, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Exscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
    allreduce_like(AllKind::Exscan, "MPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iexscan(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    allreduce_like(AllKind::Exscan, "MPI_Iexscan", sendbuf, recvbuf, count, datatype, op, comm, Req::Nonblocking(request))
}

// ------------------------------------------------------------------ reduce_scatter

/// Reduce_scatter with per-rank counts (`recvcounts`), shared by Reduce_scatter_block.
#[allow(clippy::too_many_arguments)]
fn reduce_scatter_counts(st: &mut Staging, s: &mut Schedule, sendbuf: *const c_void, recvbuf: *mut c_void, lens: &[usize], dt: MPI_Datatype, op: MPI_Op) -> Result<(), ArgError> {
    let me = s.comm.rank;
    let ty = datatype(dt)?;
    let (f, commutative) = reduction(op, dt, &ty)?;
    s.set_reducer(f);
    let total: usize = lens.iter().sum();
    let byte_lens: Vec<usize> = lens.iter().map(|&c| c * ty.size()).collect();
    if is_inter(s) {
        let (input, output) = (st.view(sendbuf, total, &ty, Dir::In)?, st.view(recvbuf, lens[me], &ty, Dir::Out)?);
        inter::reduce_scatter(s, input, output, &byte_lens, commutative);
        return Ok(());
    }
    let (input, output) = if in_place(sendbuf) {
        let all = st.view(recvbuf, total, &ty, Dir::InOut)?;
        (all, all.sub(0, lens[me] * ty.size()))
    } else {
        not_aliased(sendbuf, recvbuf, total > 0 && ty.size() > 0)?;
        (st.view(sendbuf, total, &ty, Dir::In)?, st.view(recvbuf, lens[me], &ty, Dir::Out)?)
    };
    algorithms::reduce_scatter(s, input, output, &byte_lens, commutative);
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn reduce_scatter<C: Int>(func: &str, sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const C, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, req: Req) -> c_int {
    run_staged(func, comm, req, |s, st| {
        // SAFETY: recvcounts holds one count per rank (MPI rule).
        let lens = unsafe { counts(recvcounts, s.comm.size(), "recvcounts") }?;
        reduce_scatter_counts(st, s, sendbuf, recvbuf, &lens, dt, op)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
    reduce_scatter("MPI_Reduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ireduce_scatter(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    reduce_scatter("MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op, comm, Req::Nonblocking(request))
}

#[allow(clippy::too_many_arguments)]
fn reduce_scatter_block<C: Int>(func: &str, sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: C, dt: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, req: Req) -> c_int {
    run_staged(func, comm, req, |s, st| {
        let lens = vec![count(recvcount, "recvcount")?; s.comm.size()];
        reduce_scatter_counts(st, s, sendbuf, recvbuf, &lens, dt, op)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
    reduce_scatter_block("MPI_Reduce_scatter_block", sendbuf, recvbuf, recvcount, datatype, op, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ireduce_scatter_block(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    reduce_scatter_block("MPI_Ireduce_scatter_block", sendbuf, recvbuf, recvcount, datatype, op, comm, Req::Nonblocking(request))
}

// ------------------------------------------------------------------ gather, scatter

#[allow(clippy::too_many_arguments)]
fn gather<C: Int>(func: &str, sendbuf: *const c_void, sendcount: C, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: C, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: Req) -> c_int {
    run_staged(func, comm, req, |s, st| {
        if is_inter(s) {
            let role = inter_role(root, s.comm.remote_size())?;
            match role {
                Role::Root => {
                    let (rty, rc) = (datatype(recvtype)?, count(recvcount, "recvcount")?);
                    let blk = rc * rty.size();
                    let recv = st.view(recvbuf, s.comm.remote_size() * rc, &rty, Dir::Out)?;
                    let parts: Vec<Slice> = (0..s.comm.remote_size()).map(|j| recv.sub(j * blk, blk)).collect();
                    inter::gatherv(s, unused(), &parts, role);
                }
                Role::Leaf { .. } => inter::gatherv(s, st.view(sendbuf, count(sendcount, "sendcount")?, &datatype(sendtype)?, Dir::In)?, &[], role),
                Role::Idle => {}
            }
            return Ok(());
        }
        let (n, me) = (s.comm.size(), s.comm.rank);
        let root = root_rank(root, n)?;
        if me == root {
            let rty = datatype(recvtype)?;
            let rc = count(recvcount, "recvcount")?;
            let blk = rc * rty.size();
            let place = in_place(sendbuf);
            let recv = st.view(recvbuf, n * rc, &rty, if place { Dir::InOut } else { Dir::Out })?;
            let send = if place {
                recv.sub(me * blk, blk)
            } else {
                not_aliased(sendbuf, displaced(recvbuf, (me * rc) as i64, &rty), blk > 0)?;
                let sty = datatype(sendtype)?;
                let send = st.view(sendbuf, count(sendcount, "sendcount")?, &sty, Dir::In)?;
                if send.len != blk {
                    return Err((MPI_ERR_TRUNCATE, format!("the root sends {} bytes to itself but receives {blk} per rank", send.len)));
                }
                send
            };
            algorithms::gather(s, send, recv, blk, root);
        } else {
            let sty = datatype(sendtype)?;
            let send = st.view(sendbuf, count(sendcount, "sendcount")?, &sty, Dir::In)?;
            algorithms::gather(s, send, Slice::user(std::ptr::null(), 0), send.len, root);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Gather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
    gather("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Igather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    gather("MPI_Igather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, Req::Nonblocking(request))
}

#[allow(clippy::too_many_arguments)]
fn gatherv<C: Int, D: Int>(func: &str, sendbuf: *const c_void, sendcount: C, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, displs: *const D, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: Req) -> c_int {
    run_staged(func, comm, req, |s, st| {
        if is_inter(s) {
            let n = s.comm.remote_size();
            match inter_role(root, n)? {
                // SAFETY: the root passes one count and displacement per remote rank (MPI rule).
                Role::Root => inter::gatherv(s, unused(), &unsafe { blocks(st, recvbuf, recvcounts, displs, recvtype, n, Dir::Out, None) }?, Role::Root),
                role @ Role::Leaf { .. } => inter::gatherv(s, st.view(sendbuf, count(sendcount, "sendcount")?, &datatype(sendtype)?, Dir::In)?, &[], role),
                Role::Idle => {}
            }
            return Ok(());
        }
        let (n, me) = (s.comm.size(), s.comm.rank);
        let root = root_rank(root, n)?;
        let place = me == root && in_place(sendbuf);
        let parts = if me == root {
            // SAFETY: the root passes one count and displacement per rank (MPI rule).
            unsafe { blocks(st, recvbuf, recvcounts, displs, recvtype, n, Dir::Out, place.then_some(me)) }?
        } else {
            PerRank::new()
        };
        let send = if place {
            parts[me]
        } else {
            if me == root {
                // SAFETY: the root passes one displacement per rank (MPI rule).
                let d = unsafe { ints(displs, n, "displs") }?[me].get();
                not_aliased(sendbuf, displaced(recvbuf, d, &*datatype(recvtype)?), parts[me].len > 0)?;
            }
            let sty = datatype(sendtype)?;
            st.view(sendbuf, count(sendcount, "sendcount")?, &sty, Dir::In)?
        };
        algorithms::gatherv_linear(s, send, &parts, root);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Gatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
    gatherv("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Igatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    gatherv("MPI_Igatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, Req::Nonblocking(request))
}

#[allow(clippy::too_many_arguments)]
fn scatter<C: Int>(func: &str, sendbuf: *const c_void, sendcount: C, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: C, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: Req) -> c_int {
    if req.is_blocking() {
        // Oversubscribed and small: flat, without a schedule (`DirectOp::ScatterFlat`).
        let direct = run_direct(func, comm, |c, _, flat, _| {
            let root = usize::try_from(root).ok().filter(|&r| r < c.size() && flat)?;
            if c.rank != root {
                let len = contiguous_len(recvcount, recvtype)?;
                return (len == 0 || !recvbuf.is_null()).then_some((DirectOp::ScatterFlat { root, blk: len }, recvbuf as *mut u8, len));
            }
            let blk = contiguous_len(sendcount, sendtype)?;
            let total = c.size() * blk;
            if total > direct_max() || (blk > 0 && sendbuf.is_null()) {
                return None;
            }
            if !in_place(recvbuf) {
                // Anything but an exact contiguous fit takes the general path (and its errors).
                if contiguous_len(recvcount, recvtype)? != blk || (blk > 0 && (recvbuf.is_null() || (sendbuf as *const u8).wrapping_add(root * blk) == recvbuf as *const u8)) {
                    return None;
                }
                // SAFETY: the root's send buffer holds n blocks and its receive buffer one
                // (MPI rule); `move_bytes` in case a caller aliases them.
                unsafe { mpi_core::copy::move_bytes((sendbuf as *const u8).add(root * blk), recvbuf as *mut u8, blk) };
            }
            Some((DirectOp::ScatterFlat { root, blk }, sendbuf as *mut u8, total))
        });
        if let Some(rc) = direct {
            return rc;
        }
    }
    run_staged(func, comm, req, |s, st| {
        if is_inter(s) {
            let n = s.comm.remote_size();
            match inter_role(root, n)? {
                Role::Root => {
                    let (sty, sc) = (datatype(sendtype)?, count(sendcount, "sendcount")?);
                    let blk = sc * sty.size();
                    let send = st.view(sendbuf, n * sc, &sty, Dir::In)?;
                    let parts: Vec<Slice> = (0..n).map(|j| send.sub(j * blk, blk)).collect();
                    inter::scatterv(s, &parts, unused(), Role::Root);
                }
                role @ Role::Leaf { .. } => inter::scatterv(s, &[], st.view(recvbuf, count(recvcount, "recvcount")?, &datatype(recvtype)?, Dir::Out)?, role),
                Role::Idle => {}
            }
            return Ok(());
        }
        let (n, me) = (s.comm.size(), s.comm.rank);
        let root = root_rank(root, n)?;
        if me == root {
            let sty = datatype(sendtype)?;
            let sc = count(sendcount, "sendcount")?;
            let blk = sc * sty.size();
            let send = st.view(sendbuf, n * sc, &sty, Dir::In)?;
            let recv = if in_place(recvbuf) {
                send.sub(me * blk, blk)
            } else {
                not_aliased(displaced(sendbuf, (me * sc) as i64, &sty), recvbuf, blk > 0)?;
                let rty = datatype(recvtype)?;
                let recv = st.view(recvbuf, count(recvcount, "recvcount")?, &rty, Dir::Out)?;
                if recv.len != blk {
                    return Err((MPI_ERR_TRUNCATE, format!("the root sends {blk} bytes per rank but receives {} itself", recv.len)));
                }
                recv
            };
            algorithms::scatter(s, send, recv, blk, root);
        } else {
            let rty = datatype(recvtype)?;
            let recv = st.view(recvbuf, count(recvcount, "recvcount")?, &rty, Dir::Out)?;
            algorithms::scatter(s, Slice::user(std::ptr::null(), 0), recv, recv.len, root);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scatter(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
    scatter("MPI_Scatter", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iscatter(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    scatter("MPI_Iscatter", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, Req::Nonblocking(request))
}

#[allow(clippy::too_many_arguments)]
fn scatterv<C: Int, D: Int>(func: &str, sendbuf: *const c_void, sendcounts: *const C, displs: *const D, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: C, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, req: Req) -> c_int {
    run_staged(func, comm, req, |s, st| {
        if is_inter(s) {
            let n = s.comm.remote_size();
            match inter_role(root, n)? {
                // SAFETY: the root passes one count and displacement per remote rank (MPI rule).
                Role::Root => inter::scatterv(s, &unsafe { blocks(st, sendbuf, sendcounts, displs, sendtype, n, Dir::In, None) }?, unused(), Role::Root),
                role @ Role::Leaf { .. } => inter::scatterv(s, &[], st.view(recvbuf, count(recvcount, "recvcount")?, &datatype(recvtype)?, Dir::Out)?, role),
                Role::Idle => {}
            }
            return Ok(());
        }
        let (n, me) = (s.comm.size(), s.comm.rank);
        let root = root_rank(root, n)?;
        let place = me == root && in_place(recvbuf);
        let parts = if me == root {
            // SAFETY: the root passes one count and displacement per rank (MPI rule).
            unsafe { blocks(st, sendbuf, sendcounts, displs, sendtype, n, Dir::In, None) }?
        } else {
            PerRank::new()
        };
        let recv = if place {
            parts[me]
        } else {
            if me == root {
                // SAFETY: the root passes one displacement per rank (MPI rule).
                let d = unsafe { ints(displs, n, "displs") }?[me].get();
                not_aliased(displaced(sendbuf, d, &*datatype(sendtype)?), recvbuf, parts[me].len > 0)?;
            }
            let rty = datatype(recvtype)?;
            st.view(recvbuf, count(recvcount, "recvcount")?, &rty, Dir::Out)?
        };
        algorithms::scatterv_linear(s, &parts, recv, root);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scatterv(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
    scatterv("MPI_Scatterv", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iscatterv(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    scatterv("MPI_Iscatterv", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, Req::Nonblocking(request))
}

// ------------------------------------------------------------------ allgather

#[allow(clippy::too_many_arguments)]
fn allgather<C: Int>(func: &str, sendbuf: *const c_void, sendcount: C, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: C, recvtype: MPI_Datatype, comm: MPI_Comm, req: Req) -> c_int {
    if req.is_blocking() {
        let direct = run_direct(func, comm, |c, _, _, _| {
            let (n, me) = (c.size(), c.rank);
            let blk = contiguous_len(recvcount, recvtype)?;
            if !n.is_power_of_two() || n * blk > direct_max() || (blk > 0 && recvbuf.is_null()) {
                return None;
            }
            if !in_place(sendbuf) {
                if contiguous_len(sendcount, sendtype)? != blk || (blk > 0 && (sendbuf.is_null() || sendbuf as *const u8 == (recvbuf as *const u8).wrapping_add(me * blk))) {
                    return None;
                }
                // SAFETY: sendbuf holds `blk` bytes and recvbuf n blocks of `blk` (MPI rule).
                unsafe { mpi_core::copy::move_bytes(sendbuf as *const u8, (recvbuf as *mut u8).add(me * blk), blk) };
            }
            Some((DirectOp::Allgather { blk }, recvbuf as *mut u8, n * blk))
        });
        if let Some(rc) = direct {
            return rc;
        }
    }
    run_staged(func, comm, req, |s, st| {
        let n = peers(s);
        let rty = datatype(recvtype)?;
        let rc = count(recvcount, "recvcount")?;
        let blk = rc * rty.size();
        let place = in_place(sendbuf);
        let recv = st.view(recvbuf, n * rc, &rty, if place { Dir::InOut } else { Dir::Out })?;
        if is_inter(s) {
            // The other group's blocks: this group's send size may differ from `blk`.
            inter::allgather(s, st.view(sendbuf, count(sendcount, "sendcount")?, &datatype(sendtype)?, Dir::In)?, recv, blk);
            return Ok(());
        }
        let send = if place {
            None
        } else {
            not_aliased(sendbuf, displaced(recvbuf, (s.comm.rank * rc) as i64, &rty), blk > 0)?;
            let sty = datatype(sendtype)?;
            let send = st.view(sendbuf, count(sendcount, "sendcount")?, &sty, Dir::In)?;
            if send.len != blk {
                return Err((MPI_ERR_TRUNCATE, format!("each rank sends {} bytes but receives {blk} per rank", send.len)));
            }
            Some(send)
        };
        algorithms::allgather(s, send, recv, blk);
        Ok(())
    })
}

/// The common count and the rank count of an allgatherv on an intracommunicator whose
/// counts are all equal (OSU's `osu_allgatherv`, many programs' "v" calls): it runs an
/// allgather's algorithms. Equal counts mean equal blocks in bytes, the same on every rank
/// whatever its datatype, so all ranks decide alike (displacements are each rank's own
/// layout, so they may not decide the algorithm).
///
/// # Safety
/// `cnts` holds one entry per rank when non-null.
unsafe fn equal_counts<C: Int>(cnts: *const C, comm: MPI_Comm) -> Option<(C, usize)> {
    if cnts.is_null() || !runtime::is_active() {
        return None;
    }
    let n = runtime::with(|rt| comm_index(comm).and_then(|i| rt.comms.get(i)).filter(|c| !c.is_inter()).map(|c| c.size()))?;
    if n == 0 {
        return None;
    }
    // SAFETY: per the function contract.
    let c = unsafe { std::slice::from_raw_parts(cnts, n) };
    let items = c[0].count()?;
    c.iter().all(|&x| x.count() == Some(items)).then_some((c[0], n))
}

/// Whether `n` blocks of `items` lie end to end from displacement 0 (an allgather's layout).
///
/// # Safety
/// `displs` holds `n` entries when non-null.
unsafe fn end_to_end<D: Int>(displs: *const D, items: usize, n: usize) -> bool {
    // SAFETY: per the function contract.
    !displs.is_null() && unsafe { std::slice::from_raw_parts(displs, n) }.iter().enumerate().all(|(i, x)| x.get() == (i * items) as i64)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    allgather("MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iallgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    allgather("MPI_Iallgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Nonblocking(request))
}

#[allow(clippy::too_many_arguments)]
fn allgatherv<C: Int, D: Int>(func: &str, sendbuf: *const c_void, sendcount: C, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, displs: *const D, recvtype: MPI_Datatype, comm: MPI_Comm, req: Req) -> c_int {
    // SAFETY: one count and displacement per rank (MPI rule).
    let equal = unsafe { equal_counts(recvcounts, comm) };
    if let Some((items, n)) = equal {
        // SAFETY: as above.
        if unsafe { end_to_end(displs, items.count().unwrap_or(0), n) } {
            return allgather(func, sendbuf, sendcount, sendtype, recvbuf, items, recvtype, comm, req);
        }
    }
    run_staged(func, comm, req, |s, st| {
        let (n, me) = (peers(s), s.comm.rank);
        let place = in_place(sendbuf) && !is_inter(s);
        // One view per rank's block of the receive buffer.
        // SAFETY: one count and displacement per rank (per remote rank on an intercommunicator).
        let views = unsafe { blocks(st, recvbuf, recvcounts, displs, recvtype, n, Dir::Out, place.then_some(me)) }?;
        if is_inter(s) {
            inter::allgatherv(s, st.view(sendbuf, count(sendcount, "sendcount")?, &datatype(sendtype)?, Dir::In)?, &views);
            return Ok(());
        }
        let send = if place {
            None
        } else {
            // SAFETY: one displacement per rank (MPI rule).
            let d = unsafe { ints(displs, n, "displs") }?[me].get();
            not_aliased(sendbuf, displaced(recvbuf, d, &*datatype(recvtype)?), views[me].len > 0)?;
            let sty = datatype(sendtype)?;
            Some(st.view(sendbuf, count(sendcount, "sendcount")?, &sty, Dir::In)?)
        };
        match equal {
            Some(_) => algorithms::allgather_equal_parts(s, send, &views),
            None => algorithms::allgatherv(s, send, &views),
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    allgatherv("MPI_Allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iallgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    allgatherv("MPI_Iallgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, Req::Nonblocking(request))
}

// ------------------------------------------------------------------ alltoall

#[allow(clippy::too_many_arguments)]
fn alltoall<C: Int>(func: &str, sendbuf: *const c_void, sendcount: C, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: C, recvtype: MPI_Datatype, comm: MPI_Comm, req: Req) -> c_int {
    run_staged(func, comm, req, |s, st| {
        let n = peers(s);
        let rty = datatype(recvtype)?;
        let rc = count(recvcount, "recvcount")?;
        let blk = rc * rty.size();
        let place = in_place(sendbuf);
        let recv = st.view(recvbuf, n * rc, &rty, if place { Dir::InOut } else { Dir::Out })?;
        if is_inter(s) {
            let (sty, sc) = (datatype(sendtype)?, count(sendcount, "sendcount")?);
            let (send, sblk) = (st.view(sendbuf, n * sc, &sty, Dir::In)?, sc * sty.size());
            let sends: Vec<Slice> = (0..n).map(|j| send.sub(j * sblk, sblk)).collect();
            let recvs: Vec<Slice> = (0..n).map(|j| recv.sub(j * blk, blk)).collect();
            inter::alltoallv(s, &sends, &recvs);
            return Ok(());
        }
        let send = if place {
            None
        } else {
            not_aliased(sendbuf, recvbuf, blk > 0)?;
            let sty = datatype(sendtype)?;
            let send = st.view(sendbuf, n * count(sendcount, "sendcount")?, &sty, Dir::In)?;
            if send.len != n * blk {
                return Err((MPI_ERR_TRUNCATE, format!("each rank sends {} bytes per rank but receives {blk}", send.len / n.max(1))));
            }
            Some(send)
        };
        algorithms::alltoall(s, send, recv, blk);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    alltoall("MPI_Alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ialltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    alltoall("MPI_Ialltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Nonblocking(request))
}

/// Per-peer (counts, displacements, type) of one side of Alltoallv/Alltoallw, read from
/// the caller's arrays where they lie (counts checked once by `side`); `bytes_displ` for
/// Alltoallw (displacements in bytes rather than extents).
struct Side<'a, C, D> {
    counts: &'a [C],
    displs: &'a [D],
    types: SideTypes,
    bytes_displ: bool,
}

/// Alltoallv's one type for every peer, or Alltoallw's one per peer.
enum SideTypes {
    One(Arc<Datatype>),
    Each(PerRank<Arc<Datatype>>),
}

impl<C: Int, D: Int> Side<'_, C, D> {
    /// Peer i's count (checked non-negative by `side`).
    fn count(&self, i: usize) -> usize {
        self.counts[i].count().unwrap_or(0)
    }

    /// Peer i's type.
    fn ty(&self, i: usize) -> &Arc<Datatype> {
        match &self.types {
            SideTypes::One(t) => t,
            SideTypes::Each(ts) => &ts[i],
        }
    }

    /// Some peer's piece holds data.
    fn moves_data(&self) -> bool {
        (0..self.counts.len()).any(|i| self.count(i) > 0 && self.ty(i).size() > 0)
    }

    /// Peer i's piece of `buf`.
    fn view(&self, st: &mut Staging, buf: *const c_void, i: usize, dir: Dir) -> Result<Slice, ArgError> {
        let ty = self.ty(i);
        let d = self.displs[i].get();
        let p = if self.bytes_displ { (buf as *const u8).wrapping_offset(d as isize) as *const c_void } else { displaced(buf, d, ty) };
        st.view(p, self.count(i), ty, dir)
    }
}

/// Alltoallv/Alltoallw once both sides are described.
fn alltoallv_sides<C: Int, D: Int>(s: &mut Schedule, st: &mut Staging, sendbuf: *const c_void, send: Option<Side<C, D>>, recvbuf: *mut c_void, recv: Side<C, D>) -> Result<(), ArgError> {
    let n = peers(s);
    match send {
        None if is_inter(s) => return Err((MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed on an intercommunicator".into())),
        None => {
            let mut recvs = PerRank::new();
            for i in 0..n {
                recvs.push(recv.view(st, recvbuf, i, Dir::InOut)?);
            }
            algorithms::alltoallv_in_place(s, &recvs);
        }
        Some(send) => {
            // Filled in place: collecting into a Result moves the inline arrays twice.
            let (mut sends, mut recvs) = (PerRank::new(), PerRank::new());
            for i in 0..n {
                sends.push(send.view(st, sendbuf, i, Dir::In)?);
                recvs.push(recv.view(st, recvbuf, i, Dir::Out)?);
            }
            if is_inter(s) {
                inter::alltoallv(s, &sends, &recvs);
            } else {
                algorithms::alltoallv(s, &sends, &recvs);
            }
        }
    }
    Ok(())
}

/// Reads one side (`what`: "send" or "recv") of Alltoallv (`types` None: one type for
/// all) or Alltoallw.
///
/// # Safety
/// The arrays hold one entry per rank.
unsafe fn side<'a, C: Int, D: Int>(n: usize, cnts: *const C, displs: *const D, ty: MPI_Datatype, types: Option<*const MPI_Datatype>, what: &str) -> Result<Side<'a, C, D>, ArgError> {
    // The argument names of error messages, without formatting them on every call.
    let (cname, dname) = if what == "send" { ("sendcounts", "send displacements") } else { ("recvcounts", "recv displacements") };
    // SAFETY: per the function contract.
    let counts = unsafe { ints(cnts, n, cname) }?;
    for &c in counts {
        count(c, cname)?;
    }
    // SAFETY: as above.
    let displs = unsafe { ints(displs, n, dname) }?;
    let types = match types {
        None => SideTypes::One(datatype(ty)?),
        Some(p) => {
            if p.is_null() {
                return Err((MPI_ERR_ARG, format!("{what}types is NULL")));
            }
            // SAFETY: per the function contract.
            SideTypes::Each(unsafe { std::slice::from_raw_parts(p, n) }.iter().map(|&t| datatype(t)).collect::<Result<_, _>>()?)
        }
    };
    Ok(Side { counts, displs, types, bytes_displ: false })
}

#[allow(clippy::too_many_arguments)]
fn alltoallv<C: Int, D: Int>(func: &str, sendbuf: *const c_void, sendcounts: *const C, sdispls: *const D, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, rdispls: *const D, recvtype: MPI_Datatype, comm: MPI_Comm, req: Req) -> c_int {
    run_staged(func, comm, req, |s, st| {
        let n = peers(s);
        // SAFETY: one entry per rank in each array (MPI rule).
        let recv = unsafe { side(n, recvcounts, rdispls, recvtype, None, "recv") }?;
        let send = if in_place(sendbuf) {
            None
        } else {
            // SAFETY: as above.
            let send = unsafe { side(n, sendcounts, sdispls, sendtype, None, "send") }?;
            // Empty buffers may share an address (mpi4py's zero-length arrays do).
            not_aliased(sendbuf, recvbuf, send.moves_data())?;
            Some(send)
        };
        alltoallv_sides(s, st, sendbuf, send, recvbuf, recv)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    alltoallv("MPI_Alltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ialltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    alltoallv("MPI_Ialltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, Req::Nonblocking(request))
}

#[allow(clippy::too_many_arguments)]
fn alltoallw<C: Int, D: Int>(func: &str, sendbuf: *const c_void, sendcounts: *const C, sdispls: *const D, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, rdispls: *const D, recvtypes: *const MPI_Datatype, comm: MPI_Comm, req: Req) -> c_int {
    run_staged(func, comm, req, |s, st| {
        let n = peers(s);
        // SAFETY: one entry per rank in each array (MPI rule).
        let mut recv = unsafe { side(n, recvcounts, rdispls, MPI_DATATYPE_NULL, Some(recvtypes), "recv") }?;
        recv.bytes_displ = true;
        let send = if in_place(sendbuf) {
            None
        } else {
            // SAFETY: as above.
            let mut send = unsafe { side(n, sendcounts, sdispls, MPI_DATATYPE_NULL, Some(sendtypes), "send") }?;
            send.bytes_displ = true;
            not_aliased(sendbuf, recvbuf, send.moves_data())?;
            Some(send)
        };
        alltoallv_sides(s, st, sendbuf, send, recvbuf, recv)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm) -> c_int {
    alltoallw("MPI_Alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ialltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    alltoallw("MPI_Ialltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, Req::Nonblocking(request))
}

// ------------------------------------------------------------------ persistent (MPI-4.0)

#[no_mangle]
pub unsafe extern "C" fn PMPI_Barrier_init(comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Barrier_init", comm, info, request, Pins::new(&[], &[]), move |f, r| run_collective(f, comm, r, barrier_schedule))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Bcast_init(buffer: *mut c_void, count: c_int, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Bcast_init", comm, info, request, Pins::new(&[datatype], &[]), move |f, r| bcast(f, buffer, count, datatype, root, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Gather_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Gather_init", comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| gather(f, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, r))
}

/// `MPI_Gatherv_init` and its `_c` form: the arrays are copied (see `Kept`).
#[allow(clippy::too_many_arguments)]
unsafe fn gatherv_init<C: Int, D: Int>(func: &str, sendbuf: *const c_void, sendcount: C, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, displs: *const D, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    let (n, at_root) = array_len(comm, false, Some(root));
    // SAFETY: at the root, one count and displacement per process (MPI rule).
    let (rc, d) = unsafe { (keep_array(recvcounts, n, at_root), keep_array(displs, n, at_root)) };
    persistent_init(func, comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| gatherv(f, sendbuf, sendcount, sendtype, recvbuf, rc.ptr(), d.ptr(), recvtype, root, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Gatherv_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    gatherv_init("MPI_Gatherv_init", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, info, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scatter_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Scatter_init", comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| scatter(f, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, r))
}

/// `MPI_Scatterv_init` and its `_c` form: the arrays are copied (see `Kept`).
#[allow(clippy::too_many_arguments)]
unsafe fn scatterv_init<C: Int, D: Int>(func: &str, sendbuf: *const c_void, sendcounts: *const C, displs: *const D, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: C, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    let (n, at_root) = array_len(comm, false, Some(root));
    // SAFETY: at the root, one count and displacement per process (MPI rule).
    let (sc, d) = unsafe { (keep_array(sendcounts, n, at_root), keep_array(displs, n, at_root)) };
    persistent_init(func, comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| scatterv(f, sendbuf, sc.ptr(), d.ptr(), sendtype, recvbuf, recvcount, recvtype, root, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scatterv_init(sendbuf: *const c_void, sendcounts: *const c_int, displs: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    scatterv_init("MPI_Scatterv_init", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allgather_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Allgather_init", comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| allgather(f, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r))
}

/// `MPI_Allgatherv_init` and its `_c` form: the arrays are copied (see `Kept`).
#[allow(clippy::too_many_arguments)]
unsafe fn allgatherv_init<C: Int, D: Int>(func: &str, sendbuf: *const c_void, sendcount: C, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, displs: *const D, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    let (n, _) = array_len(comm, false, None);
    // SAFETY: one count and displacement per process (MPI rule).
    let (rc, d) = unsafe { (keep_array(recvcounts, n, true), keep_array(displs, n, true)) };
    persistent_init(func, comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| allgatherv(f, sendbuf, sendcount, sendtype, recvbuf, rc.ptr(), d.ptr(), recvtype, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allgatherv_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    allgatherv_init("MPI_Allgatherv_init", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoall_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Alltoall_init", comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| alltoall(f, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r))
}

/// `MPI_Alltoallv_init` and its `_c` form: the arrays are copied (see `Kept`).
#[allow(clippy::too_many_arguments)]
unsafe fn alltoallv_init<C: Int, D: Int>(func: &str, sendbuf: *const c_void, sendcounts: *const C, sdispls: *const D, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, rdispls: *const D, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    let (n, _) = array_len(comm, false, None);
    let send = !in_place(sendbuf);
    // SAFETY: one count and displacement per process in each array (MPI rule).
    let (sc, sd, rc, rd) = unsafe { (keep_array(sendcounts, n, send), keep_array(sdispls, n, send), keep_array(recvcounts, n, true), keep_array(rdispls, n, true)) };
    persistent_init(func, comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| alltoallv(f, sendbuf, sc.ptr(), sd.ptr(), sendtype, recvbuf, rc.ptr(), rd.ptr(), recvtype, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoallv_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    alltoallv_init("MPI_Alltoallv_init", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, info, request)
}

/// `MPI_Alltoallw_init` and its `_c` form: the arrays are copied (see `Kept`).
#[allow(clippy::too_many_arguments)]
unsafe fn alltoallw_init<C: Int, D: Int>(func: &str, sendbuf: *const c_void, sendcounts: *const C, sdispls: *const D, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, rdispls: *const D, recvtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    let (n, _) = array_len(comm, false, None);
    let send = !in_place(sendbuf);
    // SAFETY: one count, displacement and datatype per process in each array (MPI rule).
    let (sc, sd, st, rc, rd, rt) = unsafe { (keep_array(sendcounts, n, send), keep_array(sdispls, n, send), keep_array(sendtypes, n, send), keep_array(recvcounts, n, true), keep_array(rdispls, n, true), keep_array(recvtypes, n, true)) };
    persistent_init(func, comm, info, request, Pins::new(&[st.copied(), rt.copied()].concat(), &[]), move |f, r| alltoallw(f, sendbuf, sc.ptr(), sd.ptr(), st.ptr(), recvbuf, rc.ptr(), rd.ptr(), rt.ptr(), comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoallw_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    alltoallw_init("MPI_Alltoallw_init", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, info, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Reduce_init", comm, info, request, Pins::new(&[datatype], &[op]), move |f, r| reduce(f, sendbuf, recvbuf, count, datatype, op, root, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allreduce_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Allreduce_init", comm, info, request, Pins::new(&[datatype], &[op]), move |f, r| allreduce_like(AllKind::Allreduce, f, sendbuf, recvbuf, count, datatype, op, comm, r))
}

/// `MPI_Reduce_scatter_init` and its `_c` form: the arrays are copied (see `Kept`).
#[allow(clippy::too_many_arguments)]
unsafe fn reduce_scatter_init<C: Int>(func: &str, sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const C, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    let (n, _) = array_len(comm, true, None);
    // SAFETY: one count per process of the local group (MPI rule).
    let rc = unsafe { keep_array(recvcounts, n, true) };
    persistent_init(func, comm, info, request, Pins::new(&[datatype], &[op]), move |f, r| reduce_scatter(f, sendbuf, recvbuf, rc.ptr(), datatype, op, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_scatter_init(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    reduce_scatter_init("MPI_Reduce_scatter_init", sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_scatter_block_init(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Reduce_scatter_block_init", comm, info, request, Pins::new(&[datatype], &[op]), move |f, r| reduce_scatter_block(f, sendbuf, recvbuf, recvcount, datatype, op, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scan_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Scan_init", comm, info, request, Pins::new(&[datatype], &[op]), move |f, r| allreduce_like(AllKind::Scan, f, sendbuf, recvbuf, count, datatype, op, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Exscan_init(sendbuf: *const c_void, recvbuf: *mut c_void, count: c_int, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Exscan_init", comm, info, request, Pins::new(&[datatype], &[op]), move |f, r| allreduce_like(AllKind::Exscan, f, sendbuf, recvbuf, count, datatype, op, comm, r))
}

// ------------------------------------------------------------------ large counts (MPI-4.0 `_c` forms)

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allgather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    allgather("MPI_Allgather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iallgather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    allgather("MPI_Iallgather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allgather_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Allgather_init_c", comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| allgather(f, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allgatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    allgatherv("MPI_Allgatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iallgatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    allgatherv("MPI_Iallgatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allgatherv_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    allgatherv_init("MPI_Allgatherv_init_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allreduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
    allreduce("MPI_Allreduce_c", sendbuf, recvbuf, count, datatype, op, comm)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iallreduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    allreduce_like(AllKind::Allreduce, "MPI_Iallreduce_c", sendbuf, recvbuf, count, datatype, op, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Allreduce_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Allreduce_init_c", comm, info, request, Pins::new(&[datatype], &[op]), move |f, r| allreduce_like(AllKind::Allreduce, f, sendbuf, recvbuf, count, datatype, op, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoall_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    alltoall("MPI_Alltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ialltoall_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    alltoall("MPI_Ialltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoall_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Alltoall_init_c", comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| alltoall(f, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoallv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    alltoallv("MPI_Alltoallv_c", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ialltoallv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    alltoallv("MPI_Ialltoallv_c", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoallv_init_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    alltoallv_init("MPI_Alltoallv_init_c", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, info, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoallw_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm) -> c_int {
    alltoallw("MPI_Alltoallw_c", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ialltoallw_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    alltoallw("MPI_Ialltoallw_c", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Alltoallw_init_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    alltoallw_init("MPI_Alltoallw_init_c", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, info, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Bcast_c(buffer: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
    bcast("MPI_Bcast_c", buffer, count, datatype, root, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ibcast_c(buffer: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    bcast("MPI_Ibcast_c", buffer, count, datatype, root, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Bcast_init_c(buffer: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Bcast_init_c", comm, info, request, Pins::new(&[datatype], &[]), move |f, r| bcast(f, buffer, count, datatype, root, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Exscan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
    allreduce_like(AllKind::Exscan, "MPI_Exscan_c", sendbuf, recvbuf, count, datatype, op, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iexscan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    allreduce_like(AllKind::Exscan, "MPI_Iexscan_c", sendbuf, recvbuf, count, datatype, op, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Exscan_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Exscan_init_c", comm, info, request, Pins::new(&[datatype], &[op]), move |f, r| allreduce_like(AllKind::Exscan, f, sendbuf, recvbuf, count, datatype, op, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Gather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
    gather("MPI_Gather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Igather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    gather("MPI_Igather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Gather_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Gather_init_c", comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| gather(f, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Gatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
    gatherv("MPI_Gatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Igatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    gatherv("MPI_Igatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Gatherv_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    gatherv_init("MPI_Gatherv_init_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, info, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm) -> c_int {
    reduce("MPI_Reduce_c", sendbuf, recvbuf, count, datatype, op, root, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ireduce_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    reduce("MPI_Ireduce_c", sendbuf, recvbuf, count, datatype, op, root, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Reduce_init_c", comm, info, request, Pins::new(&[datatype], &[op]), move |f, r| reduce(f, sendbuf, recvbuf, count, datatype, op, root, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_scatter_block_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
    reduce_scatter_block("MPI_Reduce_scatter_block_c", sendbuf, recvbuf, recvcount, datatype, op, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ireduce_scatter_block_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    reduce_scatter_block("MPI_Ireduce_scatter_block_c", sendbuf, recvbuf, recvcount, datatype, op, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_scatter_block_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcount: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Reduce_scatter_block_init_c", comm, info, request, Pins::new(&[datatype], &[op]), move |f, r| reduce_scatter_block(f, sendbuf, recvbuf, recvcount, datatype, op, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_scatter_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
    reduce_scatter("MPI_Reduce_scatter_c", sendbuf, recvbuf, recvcounts, datatype, op, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ireduce_scatter_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    reduce_scatter("MPI_Ireduce_scatter_c", sendbuf, recvbuf, recvcounts, datatype, op, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Reduce_scatter_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, recvcounts: *const MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    reduce_scatter_init("MPI_Reduce_scatter_init_c", sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm) -> c_int {
    allreduce_like(AllKind::Scan, "MPI_Scan_c", sendbuf, recvbuf, count, datatype, op, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iscan_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    allreduce_like(AllKind::Scan, "MPI_Iscan_c", sendbuf, recvbuf, count, datatype, op, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scan_init_c(sendbuf: *const c_void, recvbuf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, op: MPI_Op, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Scan_init_c", comm, info, request, Pins::new(&[datatype], &[op]), move |f, r| allreduce_like(AllKind::Scan, f, sendbuf, recvbuf, count, datatype, op, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scatter_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
    scatter("MPI_Scatter_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iscatter_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    scatter("MPI_Iscatter_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scatter_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Scatter_init_c", comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| scatter(f, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scatterv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, displs: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm) -> c_int {
    scatterv("MPI_Scatterv_c", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iscatterv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, displs: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    scatterv("MPI_Iscatterv_c", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Scatterv_init_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, displs: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, root: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    scatterv_init("MPI_Scatterv_init_c", sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request)
}
