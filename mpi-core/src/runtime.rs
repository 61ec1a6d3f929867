//! Process-wide runtime: init/finalize, the engine behind one lock, and the wait policy
//! (spin, then yield, then sleep on the transport's doorbell; yield at once when local ranks
//! outnumber CPUs).

use crate::agreement::Agreement;
use crate::bootstrap::Bootstrap;
use crate::comm::CommTable;
use crate::config::config;
use crate::protocol::Engine;
use crate::request::ReqId;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// Everything an initialised MPI process holds.
pub struct Runtime {
    pub bootstrap: Bootstrap,
    pub engine: Engine,
    pub comms: CommTable,
    /// Communicators from `MPI_Comm_idup` whose context agreement is still running.
    pub pending_comms: Vec<PendingComm>,
    /// One-sided communication windows.
    pub wins: crate::rma::WinTable,
    /// Dynamic processes: ports, our job's identity, the parent (`dpm.rs`).
    pub dpm: crate::dpm::Dpm,
}

/// A nonblocking communicator construction: when `agreement` ends, communicator `target`
/// gets the agreed context and request `req` completes.
pub struct PendingComm {
    pub target: usize,
    pub agreement: Agreement,
    pub req: ReqId,
}

impl Runtime {
    /// One progress pass: the engine, then pending communicator constructions. Returns how
    /// many events happened (0 = idle).
    #[inline]
    pub fn progress(&mut self) -> usize {
        let mut n = self.engine.progress();
        if !self.pending_comms.is_empty() {
            n += self.advance_pending_comms();
        }
        if self.wins.live > 0 {
            n += crate::rma::am::serve_all(self);
        }
        n
    }

    /// Starts the nonblocking construction of communicator `target` (in the table with
    /// context `comm::PENDING_CTX`): returns the request that completes when it is usable.
    pub fn start_pending_comm(&mut self, target: usize, agreement: Agreement) -> ReqId {
        let req = self.engine.open_coll_request();
        self.pending_comms.push(PendingComm { target, agreement, req });
        // First round at once: the peers need not wait for this process's next MPI call.
        self.advance_pending_comms();
        req
    }

    #[cold]
    fn advance_pending_comms(&mut self) -> usize {
        let mut ended = 0;
        let mut i = 0;
        while i < self.pending_comms.len() {
            let mut p = self.pending_comms.swap_remove(i);
            let Some(outcome) = p.agreement.poll(self) else {
                self.pending_comms.push(p);
                let last = self.pending_comms.len() - 1;
                self.pending_comms.swap(i, last);
                i += 1;
                continue;
            };
            let error = match outcome {
                Ok(slot) => match self.comms.get_mut(p.target) {
                    Some(c) => {
                        c.ctx = crate::comm::slot_ctx(slot);
                        self.engine.buffer_session(c.ctx, c.session);
                        None
                    }
                    // Freed before completion (erroneous): give the slot back.
                    None => {
                        self.comms.contexts.release(crate::comm::slot_ctx(slot));
                        None
                    }
                },
                Err(e) => Some(e.class),
            };
            self.engine.close_coll_request(p.req, error);
            ended += 1;
        }
        ended
    }
}

/// `MPI_THREAD_MULTIPLE` (MPICH's value; the C layer passes levels through unchanged).
pub const THREAD_MULTIPLE: i32 = 3;

/// The thread level provided (readable by any thread at any time, as `MPI_Query_thread`
/// may be called from any thread).
static THREAD_LEVEL: AtomicI32 = AtomicI32::new(0);

pub fn thread_level() -> i32 {
    THREAD_LEVEL.load(Ordering::Relaxed)
}

const NOT_INITIALIZED: u8 = 0;
const INITIALIZED: u8 = 1;
const FINALIZED: u8 = 2;

static STATE: AtomicU8 = AtomicU8::new(NOT_INITIALIZED);

/// The runtime, entered one caller at a time. At `MPI_THREAD_MULTIPLE` a mutex serialises
/// threads; below it the MPI contract already does (one thread at a time calls MPI), so an
/// entry costs no atomic read-modify-write — two locked instructions per call were ~10 % of
/// an 8-byte message's receive cost. A plain busy flag still catches re-entry (an MPI call
/// from inside a user callback run by the engine) and most calls from two threads at once.
struct RuntimeCell {
    /// `MPI_THREAD_MULTIPLE` was provided: take `mutex` on entry.
    multiple: AtomicBool,
    mutex: Mutex<()>,
    /// Someone is inside (relaxed loads and stores: only the single-threaded check).
    busy: AtomicBool,
    rt: UnsafeCell<Option<Runtime>>,
}

// SAFETY: `rt` is only reached through `RuntimeGuard`, which holds `mutex` at
// MPI_THREAD_MULTIPLE and otherwise relies on the MPI thread-level contract (no two threads
// inside MPI at once), checked by `busy`.
unsafe impl Sync for RuntimeCell {}

static RUNTIME: RuntimeCell = RuntimeCell { multiple: AtomicBool::new(false), mutex: Mutex::new(()), busy: AtomicBool::new(false), rt: UnsafeCell::new(None) };

/// Exclusive access to the runtime slot (see `RuntimeCell`).
pub struct RuntimeGuard {
    mutex: Option<MutexGuard<'static, ()>>,
}

impl RuntimeGuard {
    #[inline(always)]
    fn enter(mutex: Option<MutexGuard<'static, ()>>) -> RuntimeGuard {
        if RUNTIME.busy.load(Ordering::Relaxed) {
            reentered();
        }
        RUNTIME.busy.store(true, Ordering::Relaxed);
        RuntimeGuard { mutex }
    }
}

#[cold]
fn reentered() -> ! {
    crate::say!(
        "OxMPI: MPI was entered while already inside an MPI call: either an MPI function called from a callback OxMPI runs (user reduction, attribute copy/delete), or two threads calling MPI at once without MPI_THREAD_MULTIPLE (use MPI_Init_thread with MPI_THREAD_MULTIPLE)"
    );
    std::process::abort()
}

impl Drop for RuntimeGuard {
    #[inline(always)]
    fn drop(&mut self) {
        RUNTIME.busy.store(false, Ordering::Relaxed);
        if let Some(g) = self.mutex.take() {
            unlock_mutex(g);
        }
    }
}

/// Releases the `MPI_THREAD_MULTIPLE` mutex, out of line like `lock_mutex`.
#[inline(never)]
fn unlock_mutex(g: MutexGuard<'static, ()>) {
    INSIDE.set(false);
    drop(g);
}

impl std::ops::Deref for RuntimeGuard {
    type Target = Option<Runtime>;
    #[inline]
    fn deref(&self) -> &Option<Runtime> {
        // SAFETY: the guard gives exclusive access (see `RuntimeCell`).
        unsafe { &*RUNTIME.rt.get() }
    }
}

impl std::ops::DerefMut for RuntimeGuard {
    #[inline]
    fn deref_mut(&mut self) -> &mut Option<Runtime> {
        // SAFETY: the guard gives exclusive access (see `RuntimeCell`).
        unsafe { &mut *RUNTIME.rt.get() }
    }
}

#[inline]
pub fn is_initialized() -> bool {
    STATE.load(Ordering::Acquire) != NOT_INITIALIZED
}

#[inline]
pub fn is_finalized() -> bool {
    STATE.load(Ordering::Acquire) == FINALIZED
}

/// The engine is up and held by the World model or a session: the state every MPI call but
/// a few requires (one load, on every call's path). `is_initialized`/`is_finalized`
/// answer for the World model only, as `MPI_Initialized`/`MPI_Finalized` must.
#[inline]
pub fn is_active() -> bool {
    ACTIVE.load(Ordering::Acquire)
}

/// Someone holds the engine (`Holders`).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// This host runs more ranks than it has CPUs (see `polled`).
static OVERSUBSCRIBED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// How many nonblocking tests and probes of this thread in a row found nothing, and
    /// since when (read every `MISSES_PER_CLOCK` misses); reset by one that finds
    /// something, and by a yield.
    static MISSES: std::cell::Cell<(u32, Option<std::time::Instant>)> = const { std::cell::Cell::new((0, None)) };
}

/// Missed polls between two reads of the clock: a poll costs 100-200 ns, and a clock
/// read on every one made HPCC's MPIRandomAccess (an `MPI_Test` per update) 25 % slower.
const MISSES_PER_CLOCK: u32 = 32;

/// A nonblocking test or probe (`MPI_Test`, `MPI_Iprobe`, ...) found something or not.
/// On an oversubscribed host, a thread whose polls have found nothing for
/// `OSUB_POLL_YIELD_US` gives the CPU away (the engine lock is not held here). A program
/// polling in a loop otherwise keeps its CPU for a whole time slice while the rank it
/// shares the CPU with waits for it: HPL on a 2x2 grid of 4 ranks on 2 CPUs, whose idle
/// ranks loop on `MPI_Iprobe`, spent milliseconds per message the other two exchanged.
/// Not on every missed poll, as Open MPI does, and not while polls keep succeeding:
/// HPCC's MPIRandomAccess tests its requests between updates of its own, and yields
/// there cost it a context switch per update (16 times slower with a yield per miss).
#[inline]
pub fn polled(found: bool) {
    if OVERSUBSCRIBED.load(Ordering::Relaxed) {
        polled_oversubscribed(found);
    }
}

#[inline(never)]
fn polled_oversubscribed(found: bool) {
    static EVERY: OnceLock<std::time::Duration> = OnceLock::new();
    let every = *EVERY.get_or_init(|| std::time::Duration::from_micros(config().get("OSUB_POLL_YIELD_US") as u64));
    MISSES.with(|m| {
        let (n, since) = m.get();
        if found {
            m.set((0, None));
            return;
        }
        if !every.is_zero() && !(n + 1).is_multiple_of(MISSES_PER_CLOCK) {
            m.set((n + 1, since));
            return;
        }
        let now = std::time::Instant::now();
        match since {
            None if !every.is_zero() => m.set((n + 1, Some(now))),
            Some(t) if now.duration_since(t) < every => m.set((n + 1, since)),
            _ => {
                std::thread::yield_now();
                m.set((0, None));
            }
        }
    })
}

/// Who holds the engine up: the World model (between `MPI_Init` and `MPI_Finalize`) and
/// each live session (MPI-4.0 §11.3). The first holder starts the engine, which is reference
/// counted from then on. `MPI_Finalize` with no session left tears it down at once, as it
/// always did; when the last holder is a session, the engine is parked instead (idle but
/// kept), so that `MPI_Session_init` or `MPI_Init` can take it again — PMI cannot be
/// started twice in a process — and is torn down when the process exits.
struct Holders {
    world: bool,
    sessions: usize,
    /// The engine exists (held or parked).
    started: bool,
    /// `MPI_Finalize` tore it down: nothing can start it again.
    torn_down: bool,
    exit_hook: bool,
}

static HOLDERS: Mutex<Holders> = Mutex::new(Holders { world: false, sessions: 0, started: false, torn_down: false, exit_hook: false });

fn holders() -> MutexGuard<'static, Holders> {
    HOLDERS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Raises the provided thread level to at least `level` (the engine provides every level:
/// `MPI_THREAD_MULTIPLE` only makes it take its mutex on entry). Returns the level now
/// provided.
fn raise_thread_level(level: i32) -> i32 {
    if level >= THREAD_MULTIPLE {
        RUNTIME.multiple.store(true, Ordering::Relaxed);
    }
    THREAD_LEVEL.fetch_max(level, Ordering::Relaxed).max(level)
}

/// Enters the runtime. Callers that need the runtime itself check `is_initialized` first
/// (the C layer raises a proper MPI error); the slot is None before init and after finalize.
/// Inlined everywhere (a few loads and a store at `MPI_THREAD_SINGLE`..`SERIALIZED`); the
/// mutex of `MPI_THREAD_MULTIPLE` is taken out of line.
#[inline(always)]
pub fn lock() -> RuntimeGuard {
    let mutex = if RUNTIME.multiple.load(Ordering::Relaxed) { Some(lock_mutex()) } else { None };
    RuntimeGuard::enter(mutex)
}

#[inline(never)]
fn lock_mutex() -> MutexGuard<'static, ()> {
    // Re-entry on the thread that holds the mutex would deadlock on it: say so instead.
    if INSIDE.get() {
        reentered();
    }
    let g = RUNTIME.mutex.lock().unwrap_or_else(|p| p.into_inner());
    INSIDE.set(true);
    g
}

thread_local! {
    /// This thread holds the runtime mutex (`MPI_THREAD_MULTIPLE` only).
    static INSIDE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// `lock` unless the runtime is in use (for `abort`, which may run from anywhere).
fn try_lock() -> Option<RuntimeGuard> {
    let mutex = if RUNTIME.multiple.load(Ordering::Relaxed) {
        if INSIDE.get() {
            return None;
        }
        let g = RUNTIME.mutex.try_lock().ok()?;
        INSIDE.set(true);
        Some(g)
    } else {
        None
    };
    if RUNTIME.busy.load(Ordering::Relaxed) {
        return None;
    }
    Some(RuntimeGuard::enter(mutex))
}

/// Runs `f` on the runtime under the lock.
#[inline]
pub fn with<R>(f: impl FnOnce(&mut Runtime) -> R) -> R {
    let mut g = lock();
    f(g.as_mut().expect("MPI used before MPI_Init or after MPI_Finalize"))
}

/// The wait policy's tunables, read once (a lookup by name per wait is measurable on the
/// small-message paths).
struct WaitPolicy {
    spin: usize,
    yields: usize,
    /// While spinning, yield once every this many polls (0 = never).
    spin_yield: usize,
    sleep_max_us: u64,
}

fn wait_policy() -> &'static WaitPolicy {
    static P: OnceLock<WaitPolicy> = OnceLock::new();
    P.get_or_init(|| WaitPolicy {
        spin: config().get("SPIN_COUNT"),
        yields: config().get("YIELD_COUNT"),
        spin_yield: config().get("SPIN_YIELD_EVERY"),
        sleep_max_us: config().get("SLEEP_MAX_US").max(1) as u64,
    })
}

/// Drives progress until `done` holds. `done` runs after each progress pass, under the lock.
///
/// Policy: spin (polling) for `SPIN_COUNT` polls, then yield after each poll for
/// `YIELD_COUNT` polls, then sleep on the transport's doorbell. While spinning, one poll in
/// `SPIN_YIELD_EVERY` yields: when the peer we wait for was put on our CPU (another job
/// keeps the other CPUs busy), it then runs within a microsecond or two instead of after
/// our whole spin budget; on a CPU of our own the yield returns at once. With more local
/// ranks than CPUs every poll yields.
pub fn wait_until(mut done: impl FnMut(&mut Runtime) -> bool) {
    let mut polls: usize = 0;
    let policy = wait_policy();
    let mut slept = false;
    let mut just_slept = false;
    loop {
        let (token, spin) = {
            let mut g = lock();
            let rt = g.as_mut().expect("MPI used before MPI_Init or after MPI_Finalize");
            if just_slept {
                rt.engine.after_sleep();
                just_slept = false;
            }
            if rt.progress() > 0 {
                polls = 0;
            }
            if done(rt) {
                if slept {
                    rt.engine.end_sleep();
                }
                return;
            }
            polls += 1;
            let spin = if rt.engine.oversubscribed { 0 } else { policy.spin };
            let token = if polls > spin + policy.yields { rt.engine.prepare_sleep() } else { None };
            (token, spin)
        };
        match token {
            Some(t) => {
                slept = true;
                just_slept = true;
                t.sleep(policy.sleep_max_us)
            }
            None if polls > spin => std::thread::yield_now(),
            None if policy.spin_yield > 0 && polls.is_multiple_of(policy.spin_yield) => std::thread::yield_now(),
            None => std::hint::spin_loop(),
        }
    }
}

/// Initialises the World model (`MPI_Init`): starts the engine unless a session already
/// did. Returns a one-line error naming the fix on failure.
pub fn init(thread_level: i32, default_errhandler: i32) -> Result<(), String> {
    let mut h = holders();
    if STATE.compare_exchange(NOT_INITIALIZED, INITIALIZED, Ordering::AcqRel, Ordering::Acquire).is_err() {
        return Err("MPI_Init called twice (or after MPI_Finalize)".into());
    }
    if h.started {
        raise_thread_level(thread_level);
    } else {
        start(thread_level, default_errhandler)?;
        h.started = true;
    }
    h.world = true;
    ACTIVE.store(true, Ordering::Release);
    Ok(())
}

/// Takes the engine for a new session (`MPI_Session_init`), starting it if nobody holds it
/// yet. Returns the thread level provided to the session: `thread_level` or more.
pub fn session_init(thread_level: i32, default_errhandler: i32) -> Result<i32, String> {
    let mut h = holders();
    if h.torn_down {
        return Err("MPI_Finalize ended MPI in this process while no session was alive; a session cannot start MPI again after that".into());
    }
    let provided = if h.started {
        raise_thread_level(thread_level)
    } else {
        start(thread_level, default_errhandler)?;
        h.started = true;
        thread_level
    };
    h.sessions += 1;
    ACTIVE.store(true, Ordering::Release);
    Ok(provided)
}

/// Gives back a session's hold on the engine (`MPI_Session_finalize`): the last holder
/// parks it (see `Holders`).
pub fn session_finalize() {
    let mut h = holders();
    h.sessions = h.sessions.saturating_sub(1);
    if h.sessions > 0 || h.world {
        return;
    }
    ACTIVE.store(false, Ordering::Release);
    if !h.exit_hook {
        h.exit_hook = true;
        // SAFETY: registers a plain `extern "C" fn()`; glibc runs it from `exit`.
        unsafe { libc::atexit(teardown_at_exit) };
    }
}

/// Tears down an engine the last session parked (run by `exit`). An engine still held
/// (a session or the World model never finalized) is left alone, as an exit before
/// `MPI_Finalize` always was: the launcher reports it.
extern "C" fn teardown_at_exit() {
    let mut h = holders();
    if !h.started || h.world || h.sessions > 0 {
        return;
    }
    h.started = false;
    h.torn_down = true;
    if let Err(e) = teardown() {
        crate::say!("OxMPI: ending MPI at exit: {e}");
    }
}

/// Starts the engine: bootstrap, shared-memory wire-up, communicators.
fn start(thread_level: i32, default_errhandler: i32) -> Result<(), String> {
    let mut bs = Bootstrap::init().map_err(|e| e.0)?;
    let rank = bs.rank();
    let size = bs.size();
    let wiring = crate::transport::wireup::wire_up(&mut bs)?;
    let locals = wiring.host_ranks;
    let me = locals.iter().position(|&r| r == rank).unwrap();
    // Oversubscription is judged on the CPUs this host's ranks may use between them,
    // before binding narrows them (a launcher may have given each rank a CPU of its own).
    let allowed = crate::affinity::allowed_cpus();
    let node_cpus = wiring.transports.shm.as_ref().map_or(0, |s| s.node_cpus());
    let cpus = node_cpus.max(allowed.len()).max(1);
    let oversubscribed = locals.len() > cpus;
    OVERSUBSCRIBED.store(oversubscribed, Ordering::Relaxed);
    // Oversubscribed ranks that asked for threads are left unbound: bound, each rank's
    // threads would share one CPU (MPICH's threads/pt2pt/multisend4, 5 ranks of 5 threads
    // on 2 CPUs: 0.31 s per round bound, 0.23 unbound).
    let bind = config().get("BIND") != 0 && !(oversubscribed && thread_level > 0);
    let bound = bind && crate::affinity::bind_local_rank(me, locals.len(), &allowed).is_some();
    let mut engine = Engine::new(rank, size, wiring.routes, wiring.transports, oversubscribed);
    engine.set_host_mates(&locals);
    if bound && oversubscribed {
        let mates: Vec<usize> = crate::affinity::cpu_mates(me, locals.len(), cpus).into_iter().map(|i| locals[i]).collect();
        engine.set_cpu_mates(&mates);
    }
    let comms = CommTable::new(rank, size, default_errhandler);
    let async_progress = config().get("ASYNC_PROGRESS") != 0;
    RUNTIME.multiple.store(thread_level >= THREAD_MULTIPLE || async_progress, Ordering::Relaxed);
    THREAD_LEVEL.store(thread_level, Ordering::Relaxed);
    *lock() = Some(Runtime { bootstrap: bs, engine, comms, pending_comms: Vec::new(), wins: Default::default(), dpm: Default::default() });
    if async_progress {
        start_progress_thread();
    }
    Ok(())
}

/// `OXMPI_ASYNC_PROGRESS=1`: a thread that runs a progress pass every
/// `OXMPI_ASYNC_PROGRESS_US`, so active messages (one-sided operations from ranks on other
/// nodes, lock requests) are served while the application computes without MPI calls.
/// The runtime then takes its mutex on every entry, as at `MPI_THREAD_MULTIPLE`. The
/// thread ends when it finds the runtime finalized.
fn start_progress_thread() {
    let every = std::time::Duration::from_micros(config().get("ASYNC_PROGRESS_US").max(1) as u64);
    let spawned = std::thread::Builder::new().name("oxmpi-progress".into()).spawn(move || loop {
        std::thread::sleep(every);
        let mut g = lock();
        let Some(rt) = g.as_mut() else { return };
        if rt.progress() > 0 {
            // A wait of the application's thread may sleep on the doorbell while this pass
            // completed what it waits for.
            rt.engine.wake_self();
        }
    });
    if let Err(e) = spawned {
        crate::say!("OxMPI: OXMPI_ASYNC_PROGRESS=1 but the progress thread could not start: {e}");
    }
}


/// Finalizes the World model (`MPI_Finalize`). With no session alive it ends MPI: drains
/// queued sends, synchronises with the other ranks, tells the PMI server, and unmaps
/// shared memory. Live sessions keep the engine up (see `Holders`).
pub fn finalize() -> Result<(), String> {
    let mut h = holders();
    if STATE.load(Ordering::Acquire) != INITIALIZED {
        return Err("MPI_Finalize called without MPI_Init or twice".into());
    }
    h.world = false;
    if h.sessions > 0 {
        STATE.store(FINALIZED, Ordering::Release);
        return Ok(());
    }
    h.started = false;
    h.torn_down = true;
    let r = teardown();
    STATE.store(FINALIZED, Ordering::Release);
    r
}

/// Ends the engine (see `finalize`).
fn teardown() -> Result<(), String> {
    wait_until(|rt| !rt.engine.has_outgoing());
    ACTIVE.store(false, Ordering::Release);
    let mut rt = lock().take().expect("runtime present");
    rt.bootstrap.fence().map_err(|e| e.0)?;
    let r = rt.bootstrap.finalize().map_err(|e| e.0);
    drop(rt);
    r
}

/// `MPI_Abort`: tells the launcher (which kills the job) and exits with `code`. The
/// program's buffered output goes out first: the launcher's SIGTERM may come before
/// `exit` would flush it, and the last lines before an abort are usually why.
pub fn abort(code: i32, msg: &str) -> ! {
    flush_program_output();
    if let Some(mut g) = try_lock() {
        if let Some(rt) = g.as_mut() {
            rt.bootstrap.abort(code, msg);
        }
    }
    std::process::exit(code)
}

/// Flushes C stdio's buffers and, when the program is Fortran, gfortran's units (its
/// runtime's `_gfortran_flush_i4(NULL)` flushes them all, as `FLUSH` does).
fn flush_program_output() {
    // SAFETY: fflush(NULL) flushes every open output stream; dlsym only looks a symbol
    // up, and _gfortran_flush_i4 takes a nullable pointer to a unit number.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        let f = libc::dlsym(libc::RTLD_DEFAULT, c"_gfortran_flush_i4".as_ptr());
        if !f.is_null() {
            let flush: unsafe extern "C" fn(*const i32) = std::mem::transmute(f);
            flush(std::ptr::null());
        }
    }
}
