//! Communicators: queries, construction (dup, split, create, intercommunicators), free,
//! compare, names and info hints.
//!
//! Every constructor ends in a context-id agreement (`agree_slot`): the members AND their
//! free-slot masks (see `mpi_core::comm::ContextAlloc`) over the parent's collective
//! context and take the lowest common slot. On an intercommunicator the local groups
//! agree separately and their leaders combine the results. The small internal exchanges
//! are collective schedules (`mpi_core::coll`) run to completion here.

use crate::abi::*;
use crate::attributes::{self, ErrOn, Kind};
use crate::errors::{raise, write_c_string};
use crate::handles::{comm_handle, comm_index};
use crate::p2p_args::{comm_of, ArgError};
use crate::requests::{finish, wait_request};
use mpi_core::coll::{algorithms, CollComm, Schedule, Slice};
use mpi_core::agreement::{Agreement, LeaderLink};
use mpi_core::coll::schedule::REMOTE_TAG;
use mpi_core::comm::{slot_ctx, Comm, PENDING_CTX};
use mpi_core::runtime;
use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::Arc;

/// Tag of leader-to-leader messages of an intercommunicator's agreements. They travel on
/// the collective context, whose schedule tags stay below 2^30, so they never match those.
const LEADER_TAG: i32 = 0x5fff_0001;
/// Offset of the tags of `MPI_Intercomm_create` and `MPI_Comm_create_group` exchanges
/// (the user's tag modulo `USER_TAG_MASK + 1` is added), also above every schedule tag and
/// below the partitioned communication's (`mpi_core::partitioned::SETUP_TAG`).
const USER_TAG_BASE: i32 = 0x4000_0000;
const USER_TAG_MASK: i32 = 0x1fff_ffff;
const _: () = assert!(USER_TAG_BASE | USER_TAG_MASK < mpi_core::partitioned::SETUP_TAG);

// ------------------------------------------------------------------ internal exchanges

/// Runs schedule `s` to completion.
pub(crate) fn run(s: Schedule) -> Result<(), ArgError> {
    let rid = runtime::with(|rt| rt.engine.start_schedule(s)).map_err(|e| (e.class as c_int, e.msg))?;
    wait_request(rid);
    let st = runtime::with(|rt| finish(rt, rid));
    match st.error {
        Some(class) => Err((class as c_int, "an internal exchange of the communicator constructor failed".into())),
        None => Ok(()),
    }
}

fn bytes_of(v: &mut [u64]) -> Slice {
    Slice::user(v.as_mut_ptr() as *const u8, v.len() * 8)
}

/// Broadcast of `v` from `root` over the members of `cc`.
pub(crate) fn bcast(cc: CollComm, tag: i32, v: &mut [u64], root: usize) -> Result<(), ArgError> {
    let mut s = Schedule::new(cc, tag);
    algorithms::bcast(&mut s, bytes_of(v), root);
    run(s)
}

/// Every member's `mine` (same length everywhere), concatenated in rank order.
pub(crate) fn allgather(cc: CollComm, tag: i32, mine: &[u64]) -> Result<Vec<u64>, ArgError> {
    let n = cc.size();
    let me = cc.rank;
    let mut all = vec![0u64; n * mine.len()];
    all[me * mine.len()..(me + 1) * mine.len()].copy_from_slice(mine);
    let mut s = Schedule::new(cc, tag);
    let blk = mine.len() * 8;
    // Ring: n - 1 steps, forwarding the block received last (any rank count).
    for step in 0..n.saturating_sub(1) {
        s.next_round();
        let out = (me + n - step) % n;
        let inn = (me + n - step - 1) % n;
        let b = bytes_of(&mut all);
        s.send((me + 1) % n, b.sub(out * blk, blk));
        s.recv((me + n - 1) % n, b.sub(inn * blk, blk));
    }
    run(s)?;
    Ok(all)
}

/// Exchange with one peer: sends `out`, receives into `inn`.
pub(crate) fn sendrecv(cc: CollComm, tag: i32, peer: usize, out: &mut [u64], inn: &mut [u64]) -> Result<(), ArgError> {
    let mut s = Schedule::new(cc, tag);
    s.send(peer, bytes_of(out));
    s.recv(peer, bytes_of(inn));
    run(s)
}

/// The next schedule view of the local group of communicator `idx`.
pub(crate) fn local_view(idx: usize) -> Result<(CollComm, i32), ArgError> {
    runtime::with(|rt| rt.comms.get_mut(idx).map(|c| c.next_local_collective(false))).ok_or((MPI_ERR_COMM, "communicator freed during construction".into()))
}

/// Runs context agreement `ag` to completion: the slot agreed on.
pub(crate) fn agree(mut ag: Agreement) -> Result<usize, ArgError> {
    let mut out = None;
    runtime::wait_until(|rt| {
        out = ag.poll(rt);
        out.is_some()
    });
    out.expect("wait_until returns once done").map_err(|e| (e.class as c_int, e.msg))
}

/// The leader-to-leader view of intercommunicator `c`: this process as rank 0 talking to
/// the remote leader on the local-group context.
fn leader_view(c: &Comm) -> CollComm {
    CollComm::new(c.ctx + 1, 0, Arc::new([c.world_ranks[0]]))
}

/// The context agreement among all members of communicator `idx` (both groups of an
/// intercommunicator), as the next collective on it. Its traffic between the groups'
/// leaders is tagged with the schedule tag plus `REMOTE_TAG`, like an intercommunicator
/// collective's, so concurrent agreements on one intercommunicator never cross.
/// `nonblocking`: it is `MPI_Comm_idup`'s, a nonblocking collective.
fn agreement_on(idx: usize, nonblocking: bool) -> Result<Agreement, ArgError> {
    runtime::with(|rt| {
        let c = rt.comms.get_mut(idx).ok_or((MPI_ERR_COMM, "invalid communicator".to_string()))?;
        let (ctx, inter) = (c.ctx, c.is_inter());
        let leader = inter.then(|| leader_view(c));
        let (cc, tag) = c.next_local_collective(nonblocking);
        let leader = leader.filter(|_| cc.rank == 0).map(|view| LeaderLink { view, peer: 0, tag: tag | REMOTE_TAG });
        Ok(Agreement::new(Agreement::key_of(ctx, tag), cc, tag, leader, inter))
    })
}

/// A context slot agreed by all members of communicator `idx` (both groups of an
/// intercommunicator).
pub fn agree_on(idx: usize) -> Result<usize, ArgError> {
    agree(agreement_on(idx, false)?)
}

/// Registers `c` (its slot already taken) and returns its handle.
fn install(c: Comm) -> MPI_Comm {
    comm_handle(runtime::with(|rt| {
        // Always, so that a context id used before by a session's communicator starts clean
        // (an `MPI_Comm_idup` result registers when its context is agreed).
        if c.ctx != PENDING_CTX {
            rt.engine.buffer_session(c.ctx, c.session);
        }
        rt.comms.insert(c)
    }))
}

/// `install` for a communicator made from the one at `parent`: it derives from the same
/// session, if any.
pub(crate) fn install_derived(mut c: Comm, parent: usize) -> MPI_Comm {
    c.session = runtime::with(|rt| rt.comms.get(parent).and_then(|p| p.session));
    install(c)
}

/// Returns a slot that ended up unused (this process is not in the new communicator).
fn release_slot(slot: usize) {
    runtime::with(|rt| rt.comms.contexts.release(slot_ctx(slot)));
}

pub(crate) fn index_of(comm: MPI_Comm) -> Result<usize, ArgError> {
    runtime::with(|rt| comm_of(rt, comm).map(|_| comm_index(comm).unwrap()))
}

/// A communicator constructor's C entry: checks `comm` and the output argument `out` before
/// `make` does any work (MPICH's order: a NULL `out` is `MPI_ERR_ARG` whatever the other
/// arguments, and no communicator is made for nothing), then stores the new handle, or
/// `MPI_COMM_NULL` when anything failed (MPICH does, and its tests check it).
pub(crate) fn new_comm(func: &str, comm: MPI_Comm, out: *mut MPI_Comm, make: impl FnOnce() -> Result<MPI_Comm, c_int>) -> c_int {
    let r = match index_of(comm) {
        Err((c, m)) => Err(raise(comm, func, c, m)),
        Ok(_) if out.is_null() => return raise(comm, func, MPI_ERR_ARG, "the output communicator argument is NULL"),
        Ok(_) => make(),
    };
    if !out.is_null() {
        // SAFETY: checked non-null; the caller passes a pointer to an MPI_Comm.
        unsafe { *out = r.unwrap_or(MPI_COMM_NULL) };
    }
    r.err().unwrap_or(MPI_SUCCESS)
}

// ------------------------------------------------------------------ constructors (crate API)

/// `MPI_Comm_dup` without the C argument checks: the new communicator's handle.
pub fn dup(func: &str, comm: MPI_Comm, info: Option<Vec<(String, String)>>) -> Result<MPI_Comm, c_int> {
    let idx = index_of(comm).map_err(|(c, m)| raise(comm, func, c, m))?;
    let slot = agree_on(idx).map_err(|(c, m)| raise(comm, func, c, m))?;
    let mut new = runtime::with(|rt| rt.comms.get(idx).cloned()).ok_or_else(|| raise(comm, func, MPI_ERR_COMM, "communicator freed during MPI_Comm_dup"))?;
    new.ctx = slot_ctx(slot);
    new.reset_sequences();
    new.name = String::new();
    if let Some(i) = info {
        new.info.clear();
        crate::info::keep_hints(crate::info::COMM_HINTS, &mut new.info, i);
    }
    let h = install(new);
    if let Err(rc) = attributes::copy_attrs(Kind::Comm, comm, h) {
        discard(h);
        return Err(ErrOn::Comm(comm).callback_failed(func, "an attribute copy callback", rc));
    }
    Ok(h)
}

/// Undoes a duplicate whose attribute copy failed (`copy_attrs` deleted the attributes it
/// had copied): removes it from the table and frees its context.
fn discard(h: MPI_Comm) {
    if let Some(i) = comm_index(h) {
        runtime::with(|rt| {
            if let Some(c) = rt.comms.remove(i).filter(|c| c.ctx != PENDING_CTX) {
                rt.engine.forget_context(c.coll_ctx());
            }
        });
    }
}

/// Splits `comm` by `color` (`MPI_UNDEFINED`: no communicator) and `key` (ties broken by
/// rank). Returns the new handle or `MPI_COMM_NULL`. On an intercommunicator (MPI 4.1
/// §7.4.2) each color's new communicator joins that color's processes of both groups,
/// and is `MPI_COMM_NULL` when either group has none.
pub fn split(func: &str, comm: MPI_Comm, color: c_int, key: c_int) -> Result<MPI_Comm, c_int> {
    let err = |(c, m): ArgError| raise(comm, func, c, m);
    let idx = index_of(comm).map_err(err)?;
    if color < 0 && color != MPI_UNDEFINED {
        return Err(raise(comm, func, MPI_ERR_ARG, format!("invalid color {color} (must be non-negative or MPI_UNDEFINED)")));
    }
    let (cc, tag) = local_view(idx).map_err(err)?;
    let (local_world, me) = (cc.world_ranks.clone(), cc.rank);
    let all = allgather(cc, tag, &[color as i64 as u64, key as i64 as u64]).map_err(err)?;
    let remote = runtime::with(|rt| rt.comms.get(idx).filter(|c| c.is_inter()).map(|c| (c.world_ranks.clone(), leader_view(c))));
    let remote = match remote {
        Some((world, lv)) => Some((remote_pairs(idx, me, lv, &all, world.len()).map_err(err)?, world)),
        None => None,
    };
    let slot = agree_on(idx).map_err(err)?;
    let remote = remote.map(|(pairs, world)| members(&pairs, color, &world));
    if color == MPI_UNDEFINED || remote.as_ref().is_some_and(|r| r.is_empty()) {
        release_slot(slot);
        return Ok(MPI_COMM_NULL);
    }
    let local = members(&all, color, &local_world);
    let rank = local.iter().position(|&w| w == local_world[me]).unwrap();
    let eh = runtime::with(|rt| rt.comms.get(idx).map_or(crate::errors::DEFAULT_ERRHANDLER, |c| c.errhandler));
    let mut c = Comm::intra(slot_ctx(slot), rank, local.into(), eh);
    if let Some(r) = remote {
        c.local_ranks = Some(std::mem::replace(&mut c.world_ranks, r.into()));
    }
    Ok(install_derived(c, idx))
}

/// World ranks of the processes `world` whose (color, key) pair in `pairs` has `color`,
/// in (key, rank) order.
fn members(pairs: &[u64], color: c_int, world: &[usize]) -> Vec<usize> {
    let mut m: Vec<(i64, usize)> = (0..world.len()).filter(|&r| pairs[2 * r] as i64 == color as i64).map(|r| (pairs[2 * r + 1] as i64, r)).collect();
    m.sort();
    m.iter().map(|&(_, r)| world[r]).collect()
}

/// The (color, key) pairs of the remote group of intercommunicator `idx`: the leaders
/// (rank `me` 0) swap their groups' pairs `mine` through `lv`, then broadcast them locally.
fn remote_pairs(idx: usize, me: usize, lv: CollComm, mine: &[u64], remote_n: usize) -> Result<Vec<u64>, ArgError> {
    let mut theirs = vec![0u64; 2 * remote_n];
    if me == 0 {
        sendrecv(lv, LEADER_TAG, 0, &mut mine.to_vec(), &mut theirs)?;
    }
    let (cc, tag) = local_view(idx)?;
    bcast(cc, tag, &mut theirs, 0)?;
    Ok(theirs)
}

/// Installs a copy of `c`'s attached topology on `new` (topology constructors).
pub fn set_topology(new: MPI_Comm, topo: mpi_core::topology::Topology) {
    if let Some(i) = comm_index(new) {
        runtime::with(|rt| {
            if let Some(c) = rt.comms.get_mut(i) {
                c.topo = Some(Arc::new(topo));
            }
        });
    }
}

// ------------------------------------------------------------------ queries

fn query(func: &str, comm: MPI_Comm, out: *mut c_int, f: impl FnOnce(&Comm) -> Result<usize, ArgError>) -> c_int {
    require_init!(func);
    if out.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "output argument is NULL");
    }
    match runtime::with(|rt| comm_of(rt, comm).and_then(f)) {
        Ok(v) => {
            // SAFETY: checked non-null.
            unsafe { *out = v as c_int };
            MPI_SUCCESS
        }
        Err((class, msg)) => raise(if class == MPI_ERR_COMM { MPI_COMM_WORLD } else { comm }, func, class, msg),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_rank(comm: MPI_Comm, rank: *mut c_int) -> c_int {
    query("MPI_Comm_rank", comm, rank, |c| Ok(c.rank))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_size(comm: MPI_Comm, size: *mut c_int) -> c_int {
    query("MPI_Comm_size", comm, size, |c| Ok(c.local_size()))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_remote_size(comm: MPI_Comm, size: *mut c_int) -> c_int {
    query("MPI_Comm_remote_size", comm, size, |c| if c.is_inter() { Ok(c.size()) } else { Err((MPI_ERR_COMM, "not an intercommunicator".into())) })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_test_inter(comm: MPI_Comm, flag: *mut c_int) -> c_int {
    query("MPI_Comm_test_inter", comm, flag, |c| Ok(c.is_inter() as usize))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_compare(comm1: MPI_Comm, comm2: MPI_Comm, result: *mut c_int) -> c_int {
    let func = "MPI_Comm_compare";
    require_init!(func);
    if result.is_null() {
        return raise(comm1, func, MPI_ERR_ARG, "result is NULL");
    }
    let r = runtime::with(|rt| {
        let a = comm_of(rt, comm1)?;
        let b = comm_of(rt, comm2)?;
        if comm1 == comm2 {
            return Ok(MPI_IDENT);
        }
        if a.is_inter() != b.is_inter() {
            return Ok(MPI_UNEQUAL);
        }
        let cmp = |x: &[usize], y: &[usize]| mpi_core::group::compare(x, y);
        use mpi_core::group::Cmp;
        let l = cmp(&a.local_group(), &b.local_group());
        let r = if a.is_inter() { cmp(&a.world_ranks, &b.world_ranks) } else { Cmp::Ident };
        Ok(match (l, r) {
            (Cmp::Ident, Cmp::Ident) => MPI_CONGRUENT,
            (Cmp::Unequal, _) | (_, Cmp::Unequal) => MPI_UNEQUAL,
            _ => MPI_SIMILAR,
        })
    });
    match r {
        Ok(v) => {
            // SAFETY: checked non-null.
            unsafe { *result = v };
            MPI_SUCCESS
        }
        Err((class, msg)) => raise(MPI_COMM_WORLD, func, class, msg),
    }
}

// ------------------------------------------------------------------ constructors (C API)

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_dup(comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
    require_init!("MPI_Comm_dup");
    new_comm("MPI_Comm_dup", comm, newcomm, || dup("MPI_Comm_dup", comm, None))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_dup_with_info(comm: MPI_Comm, info: MPI_Info, newcomm: *mut MPI_Comm) -> c_int {
    let func = "MPI_Comm_dup_with_info";
    require_init!(func);
    new_comm(func, comm, newcomm, || {
        let Some(p) = crate::info::pairs(info) else {
            return Err(raise(comm, func, MPI_ERR_INFO, format!("invalid info handle {info:#x}")));
        };
        dup(func, comm, Some(p))
    })
}

/// `MPI_Comm_idup`: the duplicate enters the table at once (attributes copied now, as
/// MPICH does) with a context no message matches; its context agreement runs as the next
/// collective on `comm`, moved on by every progress pass (`Runtime::pending_comms`), and
/// the request completes when the duplicate is usable.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_idup(comm: MPI_Comm, newcomm: *mut MPI_Comm, request: *mut MPI_Request) -> c_int {
    // SAFETY: same contract.
    unsafe { idup("MPI_Comm_idup", comm, None, newcomm, request) }
}

/// `MPI_Comm_idup_with_info` (MPI-4.0): `MPI_Comm_idup` whose duplicate gets the hints of
/// `info` (as `MPI_Comm_dup_with_info`) instead of `comm`'s.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_idup_with_info(comm: MPI_Comm, info: MPI_Info, newcomm: *mut MPI_Comm, request: *mut MPI_Request) -> c_int {
    let func = "MPI_Comm_idup_with_info";
    require_init!(func);
    let Some(p) = crate::info::pairs(info) else {
        return raise(comm, func, MPI_ERR_INFO, format!("invalid info handle {info:#x}"));
    };
    // SAFETY: same contract.
    unsafe { idup(func, comm, Some(p), newcomm, request) }
}

/// # Safety
/// `newcomm` and `request` are null or valid for writes.
unsafe fn idup(func: &str, comm: MPI_Comm, info: Option<crate::info::Pairs>, newcomm: *mut MPI_Comm, request: *mut MPI_Request) -> c_int {
    require_init!(func);
    if request.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "request is NULL");
    }
    if newcomm.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "newcomm is NULL");
    }
    let idx = match index_of(comm) {
        Ok(i) => i,
        Err((c, m)) => return raise(comm, func, c, m),
    };
    let mut new = runtime::with(|rt| rt.comms.get(idx).cloned()).expect("checked by index_of");
    new.ctx = PENDING_CTX;
    new.reset_sequences();
    new.name = String::new();
    if let Some(i) = info {
        new.info.clear();
        crate::info::keep_hints(crate::info::COMM_HINTS, &mut new.info, i);
    }
    let h = install(new);
    if let Err(rc) = attributes::copy_attrs(Kind::Comm, comm, h) {
        discard(h);
        // SAFETY: checked non-null.
        unsafe { *newcomm = MPI_COMM_NULL };
        return ErrOn::Comm(comm).callback_failed(func, "an attribute copy callback", rc);
    }
    let ag = match agreement_on(idx, true) {
        Ok(a) => a,
        Err((c, m)) => return raise(comm, func, c, m),
    };
    let rid = runtime::with(|rt| rt.start_pending_comm(comm_index(h).unwrap(), ag));
    // SAFETY: both checked non-null.
    unsafe {
        *newcomm = h;
        *request = crate::handles::request_handle(rid);
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_split(comm: MPI_Comm, color: c_int, key: c_int, newcomm: *mut MPI_Comm) -> c_int {
    require_init!("MPI_Comm_split");
    new_comm("MPI_Comm_split", comm, newcomm, || split("MPI_Comm_split", comm, color, key))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_split_type(comm: MPI_Comm, split_type: c_int, key: c_int, info: MPI_Info, newcomm: *mut MPI_Comm) -> c_int {
    let func = "MPI_Comm_split_type";
    require_init!(func);
    new_comm(func, comm, newcomm, || split_type_of(func, comm, split_type, key, info))
}

/// `MPI_Comm_split_type`. The only hardware level OxMPI knows is the node (the processes
/// that share memory), so: `MPI_COMM_TYPE_SHARED` splits by node; `MPI_COMM_TYPE_HW_GUIDED`
/// does too for the info hint `mpi_hw_resource_type=mpi_shared_memory` (MPI 4.1 §7.4.2
/// reserves that value for exactly this) or `machine` (hwloc's name for the node, which
/// MPICH accepts), and gives `MPI_COMM_NULL` for any other or no value, as the standard says
/// for an unknown resource; `MPI_COMM_TYPE_HW_UNGUIDED` splits by node when that gives
/// strict subsets of `comm`'s group (it spans several nodes), else `MPI_COMM_NULL` (no
/// finer level to offer). Both hardware types put the hint on the new communicator's info,
/// as the standard asks; the unguided one also into the caller's info object, as MPICH
/// does (its comm/cmsplit_type reads it there). The type values are MPICH's.
fn split_type_of(func: &str, comm: MPI_Comm, split_type: c_int, key: c_int, info: MPI_Info) -> Result<MPI_Comm, c_int> {
    const HW_KEY: &str = "mpi_hw_resource_type";
    const SHARED_MEMORY: &str = "mpi_shared_memory";
    let Some(hints) = crate::info::pairs(info) else {
        return Err(raise(comm, func, MPI_ERR_INFO, format!("invalid info handle {info:#x}")));
    };
    // This process's node, and whether `comm`'s (local) group spans more than that node.
    let (node, spans_nodes) = runtime::with(|rt| {
        let nodes = rt.bootstrap.node_of_ranks();
        let node_of = |w: usize| nodes.get(w).copied().unwrap_or(0);
        let me = rt.comms.get(mpi_core::comm::WORLD).map_or(0, |c| c.rank);
        let group = comm_index(comm).and_then(|i| rt.comms.get(i)).map(|c| c.local_group());
        (node_of(me), group.is_some_and(|g| g.iter().any(|&w| node_of(w) != node_of(me))))
    });
    let node = node as c_int;
    let (color, resource) = match split_type {
        MPI_UNDEFINED => (MPI_UNDEFINED, None),
        MPI_COMM_TYPE_SHARED => (node, None),
        MPI_COMM_TYPE_HW_GUIDED => match hints.iter().find(|(k, _)| k == HW_KEY) {
            Some((_, v)) if v == SHARED_MEMORY || v.eq_ignore_ascii_case("machine") => (node, Some(v.as_str())),
            _ => (MPI_UNDEFINED, None),
        },
        MPI_COMM_TYPE_HW_UNGUIDED if spans_nodes => (node, Some(SHARED_MEMORY)),
        MPI_COMM_TYPE_HW_UNGUIDED => (MPI_UNDEFINED, None),
        t => return Err(raise(comm, func, MPI_ERR_ARG, format!("invalid split type {t} (use MPI_COMM_TYPE_SHARED, MPI_COMM_TYPE_HW_GUIDED, MPI_COMM_TYPE_HW_UNGUIDED or MPI_UNDEFINED)"))),
    };
    let h = split(func, comm, color, key)?;
    if let (Some(r), Some(i)) = (resource, comm_index(h)) {
        if split_type == MPI_COMM_TYPE_HW_UNGUIDED {
            crate::info::set_pair(info, HW_KEY, r);
        }
        runtime::with(|rt| {
            if let Some(c) = rt.comms.get_mut(i) {
                c.info.retain(|(k, _)| k != HW_KEY);
                c.info.push((HW_KEY.to_string(), r.to_string()));
            }
        });
    }
    Ok(h)
}

/// Members of `group` as ranks of the local group of `comm`, in group order; None if some
/// member is not in the communicator.
fn group_in_comm(comm_world: &[usize], group: &[usize]) -> Option<Vec<usize>> {
    group.iter().map(|w| comm_world.iter().position(|x| x == w)).collect()
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_create(comm: MPI_Comm, group: MPI_Group, newcomm: *mut MPI_Comm) -> c_int {
    let func = "MPI_Comm_create";
    require_init!(func);
    new_comm(func, comm, newcomm, || create(func, comm, group))
}

fn create(func: &str, comm: MPI_Comm, group: MPI_Group) -> Result<MPI_Comm, c_int> {
    let Some(g) = crate::group::lookup(group) else {
        return Err(raise(comm, func, MPI_ERR_GROUP, format!("invalid group handle {group:#x}")));
    };
    let r = runtime::with(|rt| comm_of(rt, comm).map(|c| (c.is_inter(), c.local_group(), c.rank)));
    let (inter, world, me) = match r {
        Ok(x) => x,
        Err((c, m)) => return Err(raise(comm, func, c, m)),
    };
    if group_in_comm(&world, &g).is_none() {
        return Err(raise(comm, func, MPI_ERR_GROUP, "the group has processes outside the communicator's (local) group"));
    }
    // Every member of `comm` takes part; the group decides membership and order.
    let color = if g.contains(&world[me]) { 0 } else { MPI_UNDEFINED };
    let key = g.iter().position(|&w| w == world[me]).unwrap_or(0) as c_int;
    if inter {
        // Each group names its own members; the remote side is the other group's choice
        // (MPI 4.1 §7.4.2): a split by membership, ordered by position in the group.
        return split(func, comm, color, key);
    }
    let idx = comm_index(comm).unwrap();
    let slot = match agree_on(idx) {
        Ok(s) => s,
        Err((c, m)) => return Err(raise(comm, func, c, m)),
    };
    let h = if color == MPI_UNDEFINED {
        release_slot(slot);
        MPI_COMM_NULL
    } else {
        let eh = runtime::with(|rt| rt.comms.get(idx).map_or(crate::errors::DEFAULT_ERRHANDLER, |c| c.errhandler));
        install_derived(Comm::intra(slot_ctx(slot), key as usize, g.clone(), eh), idx)
    };
    Ok(h)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_create_group(comm: MPI_Comm, group: MPI_Group, tag: c_int, newcomm: *mut MPI_Comm) -> c_int {
    let func = "MPI_Comm_create_group";
    require_init!(func);
    new_comm(func, comm, newcomm, || create_group(func, comm, group, tag))
}

fn create_group(func: &str, comm: MPI_Comm, group: MPI_Group, tag: c_int) -> Result<MPI_Comm, c_int> {
    let Some(g) = crate::group::lookup(group) else {
        return Err(raise(comm, func, MPI_ERR_GROUP, format!("invalid group handle {group:#x}")));
    };
    if tag < 0 {
        return Err(raise(comm, func, MPI_ERR_TAG, format!("invalid tag {tag}")));
    }
    let r = runtime::with(|rt| comm_of(rt, comm).map(|c| (c.is_inter(), c.world_ranks.clone(), c.rank, c.coll_ctx(), c.errhandler, c.session)));
    let (inter, world, me, cctx, eh, session) = match r {
        Ok(x) => x,
        Err((c, m)) => return Err(raise(comm, func, c, m)),
    };
    if inter {
        return Err(raise(comm, func, MPI_ERR_COMM, "MPI_Comm_create_group takes an intracommunicator (MPI 4.1 §7.4.2); use MPI_Comm_create on intercommunicators"));
    }
    if group_in_comm(&world, &g).is_none() {
        return Err(raise(comm, func, MPI_ERR_GROUP, "the group has processes outside the communicator"));
    }
    let Some(my) = g.iter().position(|&w| w == world[me]) else {
        return Ok(MPI_COMM_NULL);
    };
    // Only the group's members take part: they agree among themselves on the parent's
    // collective context, under the user's tag (above every schedule tag).
    let cc = CollComm::new(cctx, my, g.clone());
    let t = USER_TAG_BASE | (tag & USER_TAG_MASK);
    // The thread-priority key: the same on every member, distinct from the parent's own
    // agreements (those are keyed by its point-to-point context, this by the collective
    // one) and from other parents' create_group with the same tag.
    let key = Agreement::key_of(cctx, t);
    match agree(Agreement::new(key, cc, t, None, false)) {
        Ok(slot) => {
            let mut c = Comm::intra(slot_ctx(slot), my, g, eh);
            c.session = session;
            Ok(install(c))
        }
        Err((c, m)) => Err(raise(comm, func, c, m)),
    }
}

// ------------------------------------------------------------------ constructors from groups

/// The checked arguments of `MPI_Comm_create_from_group` and
/// `MPI_Intercomm_create_from_groups`.
struct FromGroups {
    errhandler: MPI_Errhandler,
    stringtag: String,
    hints: Vec<(String, String)>,
}

/// Raises an error of a constructor from groups through the error handler it was given
/// (there is no parent communicator); an unusable handler leaves `MPI_COMM_WORLD`'s.
fn raise_given(h: MPI_Errhandler, func: &str, class: c_int, msg: impl Into<String>) -> c_int {
    let msg = msg.into();
    match h {
        MPI_ERRORS_RETURN => crate::errors::make_code(class, format!("{func}: {msg}")),
        _ if crate::errhandlers::is_comm_handler(h) => {
            let code = crate::errors::make_code(class, format!("{func}: {msg}"));
            let (mut c, mut e) = (MPI_COMM_NULL, code);
            crate::errhandlers::call_user_handler(h, &mut c, &mut e);
            code
        }
        MPI_ERRORS_ARE_FATAL | MPI_ERRORS_ABORT => crate::errors::fatal(func, class, &msg),
        _ => raise(MPI_COMM_WORLD, func, class, msg),
    }
}

/// Checks the arguments shared by the constructors from groups.
///
/// # Safety
/// `stringtag` must be NULL or a NUL-terminated string.
unsafe fn from_groups_args(func: &str, stringtag: *const c_char, info: MPI_Info, errhandler: MPI_Errhandler, out: *mut MPI_Comm) -> Result<FromGroups, c_int> {
    if !matches!(errhandler, MPI_ERRORS_ARE_FATAL | MPI_ERRORS_RETURN | MPI_ERRORS_ABORT) && !crate::errhandlers::is_comm_handler(errhandler) {
        return Err(raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, format!("invalid error handler {errhandler:#x} (use a predefined one or one from MPI_Comm_create_errhandler)")));
    }
    let fail = |class, msg: &str| Err(raise_given(errhandler, func, class, msg));
    if out.is_null() {
        return fail(MPI_ERR_ARG, "the output communicator argument is NULL");
    }
    if stringtag.is_null() {
        return fail(MPI_ERR_ARG, "stringtag is NULL");
    }
    // SAFETY: checked non-null; the caller passes a NUL-terminated string.
    let stringtag = unsafe { CStr::from_ptr(stringtag) }.to_string_lossy().into_owned();
    let Some(hints) = crate::info::pairs(info) else {
        return fail(MPI_ERR_INFO, &format!("invalid info handle {info:#x}"));
    };
    Ok(FromGroups { errhandler, stringtag, hints })
}

/// The tag of a constructor from groups: a hash of its string tag and its groups, below
/// `REMOTE_TAG` (the leaders' link adds it). Concurrent constructions over overlapping
/// groups must have different string tags (MPI 4.0 §7.4.2); with the groups in the hash,
/// one string tag used again over other groups gets another tag too. Two different
/// constructions share a tag only by a hash collision (one chance in 2^29).
fn tag_of(stringtag: &str, groups: &[&[usize]]) -> i32 {
    // FNV-1a over the string and the members.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: u8| h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    stringtag.bytes().for_each(&mut eat);
    for g in groups {
        eat(0xff);
        g.iter().flat_map(|w| (*w as u64).to_le_bytes()).for_each(&mut eat);
    }
    ((h ^ (h >> 29) ^ (h >> 58)) as u32 & (REMOTE_TAG as u32 - 1)) as i32
}

/// The collective context of the sessions' slot, where constructors from groups agree.
fn session_coll_ctx() -> u32 {
    slot_ctx(mpi_core::comm::SESSION_SLOT) + 1
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_create_from_group(group: MPI_Group, stringtag: *const c_char, info: MPI_Info, errhandler: MPI_Errhandler, newcomm: *mut MPI_Comm) -> c_int {
    let func = "MPI_Comm_create_from_group";
    require_init!(func);
    // SAFETY: the caller passes a NUL-terminated string (checked for NULL).
    let r = unsafe { from_groups_args(func, stringtag, info, errhandler, newcomm) }.and_then(|a| create_from_group(func, group, a));
    if !newcomm.is_null() {
        // SAFETY: checked non-null; the caller passes a pointer to an MPI_Comm.
        unsafe { *newcomm = r.unwrap_or(MPI_COMM_NULL) };
    }
    r.err().unwrap_or(MPI_SUCCESS)
}

/// `MPI_Comm_create_from_group`: the group's members agree on a context among themselves,
/// on the sessions' context under a tag from the string tag (see `tag_of`).
fn create_from_group(func: &str, group: MPI_Group, a: FromGroups) -> Result<MPI_Comm, c_int> {
    let fail = |class, msg: &str| Err(raise_given(a.errhandler, func, class, msg));
    let Some(g) = crate::group::lookup(group).filter(|g| !g.is_empty()) else {
        return fail(MPI_ERR_GROUP, &format!("invalid or empty group {group:#x}"));
    };
    let Some(my) = g.iter().position(|&w| w == crate::group::my_world_rank()) else {
        return fail(MPI_ERR_GROUP, "this process is not in the group (only its members call MPI_Comm_create_from_group)");
    };
    let t = tag_of(&a.stringtag, &[&g]);
    let cc = CollComm::new(session_coll_ctx(), my, g.clone());
    let key = Agreement::key_of(slot_ctx(mpi_core::comm::SESSION_SLOT), t);
    match agree(Agreement::new(key, cc, t, None, false)) {
        Ok(slot) => {
            let mut c = Comm::intra(slot_ctx(slot), my, g, a.errhandler);
            crate::info::keep_hints(crate::info::COMM_HINTS, &mut c.info, a.hints);
            c.session = crate::group::session_of(group);
            Ok(install(c))
        }
        Err((c, m)) => fail(c, &m),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Intercomm_create_from_groups(local_group: MPI_Group, local_leader: c_int, remote_group: MPI_Group, remote_leader: c_int, stringtag: *const c_char, info: MPI_Info, errhandler: MPI_Errhandler, newintercomm: *mut MPI_Comm) -> c_int {
    let func = "MPI_Intercomm_create_from_groups";
    require_init!(func);
    // SAFETY: the caller passes a NUL-terminated string (checked for NULL).
    let r = unsafe { from_groups_args(func, stringtag, info, errhandler, newintercomm) }.and_then(|a| intercomm_from_groups(func, (local_group, local_leader), (remote_group, remote_leader), a));
    if !newintercomm.is_null() {
        // SAFETY: checked non-null; the caller passes a pointer to an MPI_Comm.
        unsafe { *newintercomm = r.unwrap_or(MPI_COMM_NULL) };
    }
    r.err().unwrap_or(MPI_SUCCESS)
}

/// `MPI_Intercomm_create_from_groups`: every member knows both groups, so only the context
/// agreement runs: each group ANDs locally (its leader as rank 0), the leaders swap on the
/// sessions' context, each broadcasts the result to its group.
fn intercomm_from_groups(func: &str, local: (MPI_Group, c_int), remote: (MPI_Group, c_int), a: FromGroups) -> Result<MPI_Comm, c_int> {
    let fail = |class, msg: &str| Err(raise_given(a.errhandler, func, class, msg));
    let mut groups = Vec::new();
    for (which, (h, leader)) in [("local", local), ("remote", remote)] {
        let Some(g) = crate::group::lookup(h).filter(|g| !g.is_empty()) else {
            return fail(MPI_ERR_GROUP, &format!("invalid or empty {which} group {h:#x}"));
        };
        if leader < 0 || leader as usize >= g.len() {
            return fail(MPI_ERR_RANK, &format!("invalid {which}_leader {leader} (the {which} group has {} processes)", g.len()));
        }
        groups.push((g, leader as usize));
    }
    let (remote_g, remote_leader) = groups.pop().unwrap();
    let (local_g, leader) = groups.pop().unwrap();
    if local_g.iter().any(|w| remote_g.contains(w)) {
        return fail(MPI_ERR_GROUP, "the local and remote groups overlap");
    }
    let Some(me) = local_g.iter().position(|&w| w == crate::group::my_world_rank()) else {
        return fail(MPI_ERR_GROUP, "this process is not in the local group");
    };
    // The same tag in both groups: the groups in the order of their leaders' world ranks.
    let (lw, rw) = (local_g[leader], remote_g[remote_leader]);
    let t = if lw < rw { tag_of(&a.stringtag, &[&local_g, &remote_g]) } else { tag_of(&a.stringtag, &[&remote_g, &local_g]) };
    let ctx = session_coll_ctx();
    let n = local_g.len();
    let rotated: Arc<[usize]> = (0..n).map(|i| local_g[(i + leader) % n]).collect();
    let cc = CollComm::new(ctx, (me + n - leader) % n, rotated);
    let link = (me == leader).then(|| LeaderLink { view: CollComm::new(ctx, 0, Arc::new([rw])), peer: 0, tag: t | REMOTE_TAG });
    let key = Agreement::key_of(slot_ctx(mpi_core::comm::SESSION_SLOT), t);
    match agree(Agreement::new(key, cc, t, link, true)) {
        Ok(slot) => {
            let mut c = Comm::intra(slot_ctx(slot), me, remote_g, a.errhandler);
            c.local_ranks = Some(local_g);
            crate::info::keep_hints(crate::info::COMM_HINTS, &mut c.info, a.hints);
            c.session = crate::group::session_of(local.0);
            Ok(install(c))
        }
        Err((c, m)) => fail(c, &m),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_free(comm: *mut MPI_Comm) -> c_int {
    require_init!("MPI_Comm_free");
    // SAFETY: same contract.
    unsafe { free_comm("MPI_Comm_free", comm, false) }
}

/// `MPI_Comm_free`, and `MPI_Comm_disconnect` when `disconnect`: the standard's one
/// difference is that disconnect first lets pending communication on the communicator
/// complete (its requests stay the user's to wait for or free).
///
/// # Safety
/// `comm` is null or points to a communicator handle.
unsafe fn free_comm(func: &str, comm: *mut MPI_Comm, disconnect: bool) -> c_int {
    if comm.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "comm is NULL");
    }
    // SAFETY: checked non-null.
    let h = unsafe { *comm };
    let idx = match index_of(h) {
        Ok(i) => i,
        Err((c, m)) => return raise(MPI_COMM_WORLD, func, c, m),
    };
    if idx <= mpi_core::comm::SELF {
        return raise(h, func, MPI_ERR_COMM, "MPI_COMM_WORLD and MPI_COMM_SELF cannot be freed or disconnected");
    }
    if disconnect {
        runtime::wait_until(|rt| !rt.engine.reqs.any_pending(h as i64));
    }
    if let Err(rc) = attributes::delete_all(Kind::Comm, h) {
        return ErrOn::Comm(h).callback_failed(func, "an attribute delete callback", rc);
    }
    runtime::with(|rt| {
        if let Some(c) = rt.comms.remove(idx) {
            rt.engine.forget_context(c.coll_ctx());
            rt.engine.buffer_session(c.ctx, None);
            Some(c.ctx)
        } else {
            None
        }
    })
    .map(crate::bsend::detach_on_free);
    // SAFETY: checked non-null.
    unsafe { *comm = MPI_COMM_NULL };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_disconnect(comm: *mut MPI_Comm) -> c_int {
    require_init!("MPI_Comm_disconnect");
    // SAFETY: same contract.
    unsafe { free_comm("MPI_Comm_disconnect", comm, true) }
}

// ------------------------------------------------------------------ intercommunicators

/// Process `w` as (job, rank) in two words, as groups travel between processes.
fn ident_words(rt: &mut runtime::Runtime, w: usize) -> [u64; 2] {
    let (job, rank) = mpi_core::dpm::ident(rt, w);
    [job, rank as u64]
}

/// Builds an intercommunicator from two disjoint groups (see the module comment).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Intercomm_create(local_comm: MPI_Comm, local_leader: c_int, peer_comm: MPI_Comm, remote_leader: c_int, tag: c_int, newintercomm: *mut MPI_Comm) -> c_int {
    let func = "MPI_Intercomm_create";
    require_init!(func);
    new_comm(func, local_comm, newintercomm, || intercomm_create(func, local_comm, local_leader, peer_comm, remote_leader, tag))
}

fn intercomm_create(func: &str, local_comm: MPI_Comm, local_leader: c_int, peer_comm: MPI_Comm, remote_leader: c_int, tag: c_int) -> Result<MPI_Comm, c_int> {
    let err = |(c, m): ArgError| raise(local_comm, func, c, m);
    let r = runtime::with(|rt| comm_of(rt, local_comm).map(|c| (c.is_inter(), c.world_ranks.clone(), c.rank, c.errhandler, c.ctx)));
    let (inter, local, me, eh, lctx) = match r {
        Ok(x) => x,
        Err(e) => return Err(err(e)),
    };
    if inter {
        return Err(raise(local_comm, func, MPI_ERR_COMM, "local_comm must be an intracommunicator"));
    }
    if local_leader < 0 || local_leader as usize >= local.len() {
        return Err(raise(local_comm, func, MPI_ERR_RANK, format!("invalid local_leader {local_leader} (local_comm has {} ranks)", local.len())));
    }
    let leader = local_leader as usize;
    let lidx = comm_index(local_comm).unwrap();
    // The leader's view of the peer communicator.
    let peer_view = if me == leader {
        let r = runtime::with(|rt| comm_of(rt, peer_comm).map(|c| CollComm::new(c.coll_ctx(), c.rank, c.world_ranks.clone())));
        match r {
            Ok(v) if remote_leader >= 0 && (remote_leader as usize) < v.size() => Some(v),
            Ok(_) => return Err(raise(local_comm, func, MPI_ERR_RANK, format!("invalid remote_leader {remote_leader}"))),
            Err(e) => return Err(err(e)),
        }
    } else {
        None
    };
    let t = USER_TAG_BASE | (tag & USER_TAG_MASK);
    // 1. Leaders swap their groups; 2. each leader broadcasts the remote group locally. The
    // groups travel as (job, rank) pairs: peer numbers are private to each process once
    // processes of other jobs are involved (`mpi_core::dpm`). When the groups span jobs
    // ([len, spans]), every member then swaps cards as `MPI_Comm_connect` does, so members
    // that never met (a spawning rank's neighbours and the children) can reach each other.
    let mut remote_len = [0u64; 2];
    let mut remote: Vec<u64> = Vec::new();
    if let Some(pv) = &peer_view {
        let mut mine = [local.len() as u64];
        if let Err(e) = sendrecv(pv.clone(), t, remote_leader as usize, &mut mine, &mut remote_len[..1]) {
            return Err(err(e));
        }
        let mut mine: Vec<u64> = runtime::with(|rt| local.iter().flat_map(|&w| ident_words(rt, w)).collect());
        remote = vec![0; 2 * remote_len[0] as usize];
        if let Err(e) = sendrecv(pv.clone(), t, remote_leader as usize, &mut mine, &mut remote) {
            return Err(err(e));
        }
        // The same answer on both leaders: whether all the processes are of one job.
        let job = mine[0];
        remote_len[1] = mine.chunks(2).chain(remote.chunks(2)).any(|w| w[0] != job) as u64;
    }
    let step = (|| {
        let (cc, tg) = local_view(lidx)?;
        bcast(cc, tg, &mut remote_len, leader)?;
        remote.resize(2 * remote_len[0] as usize, 0);
        let (cc, tg) = local_view(lidx)?;
        bcast(cc, tg, &mut remote, leader)?;
        Ok::<(), ArgError>(())
    })();
    if let Err(e) = step {
        return Err(err(e));
    }
    let remote: Arc<[usize]> = if remote_len[1] != 0 {
        let link = peer_view.clone().map(|view| Ok(crate::dynamic::RootLink { view, peer: remote_leader as usize, tag: t }));
        crate::dynamic::swap_cards(func, local_comm, lidx, leader, link)?.into()
    } else {
        match runtime::with(|rt| remote.chunks(2).map(|w| mpi_core::dpm::peer_of(rt, (w[0], w[1] as u32))).collect::<Option<Vec<usize>>>()) {
            Some(r) => r.into(),
            None => return Err(raise(local_comm, func, MPI_ERR_COMM, "a process of the remote group is unknown here")),
        }
    };
    if remote.iter().any(|w| local.contains(w)) {
        return Err(raise(local_comm, func, MPI_ERR_COMM, "the local and remote groups overlap"));
    }
    // 3. Context agreement: local AND, leaders combine over the peer communicator, local
    // broadcast. The local views are rank-rotated so the leader is rank 0 of the exchange.
    // Non-leaders never talk to the other group.
    let link = peer_view.map(|view| LeaderLink { view, peer: remote_leader as usize, tag: t });
    let rotated = |cc: CollComm| -> CollComm {
        let n = cc.size();
        let ranks: Arc<[usize]> = (0..n).map(|i| cc.world_ranks[(i + leader) % n]).collect();
        CollComm::new(cc.ctx, (cc.rank + n - leader) % n, ranks)
    };
    let ag = local_view(lidx).map(|(cc, tg)| Agreement::new(Agreement::key_of(lctx, tg), rotated(cc), tg, link, true));
    let slot = match ag.and_then(agree) {
        Ok(s) => s,
        Err(e) => return Err(err(e)),
    };
    let mut c = Comm::intra(slot_ctx(slot), me, remote, eh);
    c.local_ranks = Some(local);
    Ok(install_derived(c, lidx))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Intercomm_merge(intercomm: MPI_Comm, high: c_int, newintracomm: *mut MPI_Comm) -> c_int {
    let func = "MPI_Intercomm_merge";
    require_init!(func);
    new_comm(func, intercomm, newintracomm, || intercomm_merge(func, intercomm, high))
}

fn intercomm_merge(func: &str, intercomm: MPI_Comm, high: c_int) -> Result<MPI_Comm, c_int> {
    let err = |(c, m): ArgError| raise(intercomm, func, c, m);
    let r = runtime::with(|rt| comm_of(rt, intercomm).map(|c| (c.local_ranks.clone(), c.world_ranks.clone(), c.rank, c.errhandler, leader_view(c))));
    let (local, remote, me, eh, lv) = match r {
        Ok((Some(l), rem, me, eh, lv)) => (l, rem, me, eh, lv),
        Ok(_) => return Err(raise(intercomm, func, MPI_ERR_COMM, "not an intercommunicator")),
        Err(e) => return Err(err(e)),
    };
    let idx = comm_index(intercomm).unwrap();
    // The leaders swap their `high` flags, then broadcast the remote one locally.
    let mut flags = [0u64; 1];
    let step = (|| {
        if me == 0 {
            let mut mine = [(high != 0) as u64];
            sendrecv(lv.clone(), LEADER_TAG, 0, &mut mine, &mut flags)?;
        }
        let (cc, tg) = local_view(idx)?;
        bcast(cc, tg, &mut flags, 0)?;
        agree_on(idx)
    })();
    let slot = match step {
        Ok(s) => s,
        Err(e) => return Err(err(e)),
    };
    let (mine_high, theirs_high) = (high != 0, flags[0] != 0);
    // Equal flags: the group whose first process comes first by (job, rank), a order both
    // groups see alike (peer numbers are private to each process).
    let local_first = if mine_high != theirs_high { !mine_high } else { runtime::with(|rt| mpi_core::dpm::ident(rt, local[0]) < mpi_core::dpm::ident(rt, remote[0])) };
    let world: Arc<[usize]> = if local_first { local.iter().chain(remote.iter()).copied().collect() } else { remote.iter().chain(local.iter()).copied().collect() };
    let rank = if local_first { me } else { remote.len() + me };
    Ok(install_derived(Comm::intra(slot_ctx(slot), rank, world, eh), idx))
}

// ------------------------------------------------------------------ names and info

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_set_name(comm: MPI_Comm, comm_name: *const c_char) -> c_int {
    let func = "MPI_Comm_set_name";
    require_init!(func);
    if comm_name.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "comm_name is NULL");
    }
    // SAFETY: the caller passes a NUL-terminated string.
    let mut name = unsafe { CStr::from_ptr(comm_name) }.to_string_lossy().into_owned();
    name.truncate(MPI_MAX_OBJECT_NAME as usize - 1);
    let ok = comm_index(comm).is_some_and(|i| runtime::with(|rt| rt.comms.get_mut(i).map(|c| c.name = name).is_some()));
    if ok {
        MPI_SUCCESS
    } else {
        raise(MPI_COMM_WORLD, func, MPI_ERR_COMM, format!("invalid communicator {comm:#x}"))
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_get_name(comm: MPI_Comm, comm_name: *mut c_char, resultlen: *mut c_int) -> c_int {
    let func = "MPI_Comm_get_name";
    require_init!(func);
    if comm_name.is_null() || resultlen.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "comm_name or resultlen is NULL");
    }
    match runtime::with(|rt| comm_of(rt, comm).map(|c| c.name.clone())) {
        Ok(n) => {
            // SAFETY: the standard requires MPI_MAX_OBJECT_NAME bytes at comm_name.
            unsafe { *resultlen = write_c_string(comm_name, MPI_MAX_OBJECT_NAME as usize, &n) };
            MPI_SUCCESS
        }
        Err((c, m)) => raise(MPI_COMM_WORLD, func, c, m),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_set_info(comm: MPI_Comm, info: MPI_Info) -> c_int {
    let func = "MPI_Comm_set_info";
    require_init!(func);
    let Some(p) = crate::info::pairs(info) else {
        return raise(comm, func, MPI_ERR_INFO, format!("invalid info handle {info:#x}"));
    };
    let ok = comm_index(comm).is_some_and(|i| {
        runtime::with(|rt| {
            rt.comms
                .get_mut(i)
                .map(|c| crate::info::keep_hints(crate::info::COMM_HINTS, &mut c.info, p))
                .is_some()
        })
    });
    if ok {
        MPI_SUCCESS
    } else {
        raise(MPI_COMM_WORLD, func, MPI_ERR_COMM, format!("invalid communicator {comm:#x}"))
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_get_info(comm: MPI_Comm, info_used: *mut MPI_Info) -> c_int {
    let func = "MPI_Comm_get_info";
    require_init!(func);
    if info_used.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "info_used is NULL");
    }
    match runtime::with(|rt| comm_of(rt, comm).map(|c| crate::info::hints_used(crate::info::COMM_HINTS, &c.info))) {
        Ok(mut p) => {
            if comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF {
                p.push((crate::info::MEMORY_ALLOC_KINDS_KEY.to_string(), crate::info::memory_alloc_kinds(None)));
            }
            // SAFETY: checked non-null.
            unsafe { *info_used = crate::info::new_info(p) };
            MPI_SUCCESS
        }
        Err((c, m)) => raise(MPI_COMM_WORLD, func, c, m),
    }
}
