//! Groups: a process-local table of world-rank lists behind the `MPI_Group` handles, and the
//! group entry points (the algebra itself is `mpi_core::group`).

use crate::abi::*;
use crate::errors::{raise, raise_core};
use crate::handles::{group_handle, group_index};
use crate::p2p_args::comm_of;
use mpi_core::group as g;
use mpi_core::runtime;
use std::os::raw::c_int;
use std::sync::{Arc, Mutex};

/// One group: its members (world ranks) and the session it derives from (None: the World
/// Model), which communicators made from it inherit (their buffered sends fall back to
/// the session's buffer).
#[derive(Clone)]
struct Group {
    members: Arc<[usize]>,
    session: Option<u32>,
}

static GROUPS: Mutex<Vec<Option<Group>>> = Mutex::new(Vec::new());

fn entry(h: MPI_Group) -> Option<Group> {
    let i = group_index(h)?;
    GROUPS.lock().unwrap_or_else(|p| p.into_inner()).get(i).cloned().flatten()
}

/// The members of group `h` (world ranks), or None for an invalid handle.
pub fn lookup(h: MPI_Group) -> Option<Arc<[usize]>> {
    if h == MPI_GROUP_EMPTY {
        return Some(Arc::new([]));
    }
    entry(h).map(|g| g.members)
}

/// The session group `h` derives from (None: the World Model's, or an invalid handle).
pub fn session_of(h: MPI_Group) -> Option<u32> {
    entry(h).and_then(|g| g.session)
}

/// A new group handle for `members` (`MPI_GROUP_EMPTY` when empty, as MPICH does).
pub fn new_group(members: Arc<[usize]>) -> MPI_Group {
    new_group_in(members, None)
}

/// `new_group` for a group derived from session `session`.
pub fn new_group_in(members: Arc<[usize]>, session: Option<u32>) -> MPI_Group {
    if members.is_empty() {
        return MPI_GROUP_EMPTY;
    }
    group_handle(crate::handles::store_in_free_slot(&mut GROUPS.lock().unwrap_or_else(|p| p.into_inner()), Group { members, session }))
}

/// This process's world rank.
pub fn my_world_rank() -> usize {
    runtime::with(|rt| rt.comms.get(mpi_core::comm::WORLD).map_or(0, |c| c.rank))
}

fn group_arg(func: &str, h: MPI_Group) -> Result<Arc<[usize]>, c_int> {
    lookup(h).ok_or_else(|| {
        let what = if h == MPI_GROUP_NULL { "group is MPI_GROUP_NULL".to_string() } else { format!("invalid group handle {h:#x}") };
        raise(MPI_COMM_WORLD, func, MPI_ERR_GROUP, what)
    })
}

/// Stores `v` through `out` after a NULL check.
fn store<T>(func: &str, out: *mut T, v: T) -> c_int {
    if out.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "output argument is NULL");
    }
    // SAFETY: checked non-null; the caller provides the object.
    unsafe { *out = v };
    MPI_SUCCESS
}

/// `n` ints at `p` (empty for n ≤ 0).
///
/// # Safety
/// `p` must point to `n` ints when `n > 0`.
pub unsafe fn ints<'a>(p: *const c_int, n: c_int) -> &'a [c_int] {
    if n <= 0 || p.is_null() {
        &[]
    } else {
        // SAFETY: per the function contract.
        unsafe { std::slice::from_raw_parts(p, n as usize) }
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_group(comm: MPI_Comm, group: *mut MPI_Group) -> c_int {
    require_init!("MPI_Comm_group");
    match runtime::with(|rt| comm_of(rt, comm).map(|c| (c.local_group(), c.session))) {
        Ok(_) if group.is_null() => raise(comm, "MPI_Comm_group", MPI_ERR_ARG, "group is NULL"),
        Ok((m, s)) => store("MPI_Comm_group", group, new_group_in(m, s)),
        Err((class, msg)) => raise(comm, "MPI_Comm_group", class, msg),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_remote_group(comm: MPI_Comm, group: *mut MPI_Group) -> c_int {
    require_init!("MPI_Comm_remote_group");
    match runtime::with(|rt| comm_of(rt, comm).map(|c| c.is_inter().then(|| (c.world_ranks.clone(), c.session)))) {
        Ok(_) if group.is_null() => raise(comm, "MPI_Comm_remote_group", MPI_ERR_ARG, "group is NULL"),
        Ok(Some((m, s))) => store("MPI_Comm_remote_group", group, new_group_in(m, s)),
        Ok(None) => raise(comm, "MPI_Comm_remote_group", MPI_ERR_COMM, "not an intercommunicator"),
        Err((class, msg)) => raise(comm, "MPI_Comm_remote_group", class, msg),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_size(group: MPI_Group, size: *mut c_int) -> c_int {
    match group_arg("MPI_Group_size", group) {
        Ok(m) => store("MPI_Group_size", size, m.len() as c_int),
        Err(rc) => rc,
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_rank(group: MPI_Group, rank: *mut c_int) -> c_int {
    require_init!("MPI_Group_rank");
    match group_arg("MPI_Group_rank", group) {
        Ok(m) => store("MPI_Group_rank", rank, g::rank_of(&m, my_world_rank()).map_or(MPI_UNDEFINED, |r| r as c_int)),
        Err(rc) => rc,
    }
}

/// A group built from one existing group. The output argument is checked before the
/// others' values, as MPICH does (a NULL one is `MPI_ERR_ARG` even with bad ranks).
fn derive(func: &str, group: MPI_Group, out: *mut MPI_Group, f: impl FnOnce(&[usize]) -> mpi_core::error::MpiResult<Vec<usize>>) -> c_int {
    let m = match group_arg(func, group) {
        Ok(m) => m,
        Err(rc) => return rc,
    };
    if out.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "newgroup is NULL");
    }
    match f(&m) {
        Ok(v) => store(func, out, new_group_in(v.into(), session_of(group))),
        Err(e) => raise_core(MPI_COMM_WORLD, func, e),
    }
}

/// A group built from two existing groups.
fn combine(func: &str, a: MPI_Group, b: MPI_Group, out: *mut MPI_Group, f: fn(&[usize], &[usize]) -> Vec<usize>) -> c_int {
    let (ga, gb) = match (group_arg(func, a), group_arg(func, b)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(rc), _) | (_, Err(rc)) => return rc,
    };
    if out.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "newgroup is NULL");
    }
    store(func, out, new_group_in(f(&ga, &gb).into(), session_of(a).or(session_of(b))))
}

/// The list argument of `n` entries of an incl/excl call: `n` must be non-negative and the
/// list non-NULL when `n` > 0 (`MPI_ERR_ARG`, as in MPICH).
fn list_arg<T>(func: &str, n: c_int, p: *const T, what: &str) -> Result<(), c_int> {
    if n < 0 {
        return Err(raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, format!("negative n {n}")));
    }
    if n > 0 && p.is_null() {
        return Err(raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, format!("{what} is NULL with n = {n}")));
    }
    Ok(())
}

/// The (first, last, stride) triplets of a range call.
///
/// # Safety
/// `ranges` must point to `n` triplets when `n > 0`.
unsafe fn triplets<'a>(ranges: *const [c_int; 3], n: c_int) -> &'a [[c_int; 3]] {
    if n <= 0 || ranges.is_null() {
        &[]
    } else {
        // SAFETY: per the function contract.
        unsafe { std::slice::from_raw_parts(ranges, n as usize) }
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_incl(group: MPI_Group, n: c_int, ranks: *const c_int, newgroup: *mut MPI_Group) -> c_int {
    if let Err(rc) = list_arg("MPI_Group_incl", n, ranks, "ranks") {
        return rc;
    }
    // SAFETY: the caller passes n ranks.
    let r = unsafe { ints(ranks, n) };
    derive("MPI_Group_incl", group, newgroup, |m| g::incl(m, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_excl(group: MPI_Group, n: c_int, ranks: *const c_int, newgroup: *mut MPI_Group) -> c_int {
    if let Err(rc) = list_arg("MPI_Group_excl", n, ranks, "ranks") {
        return rc;
    }
    // SAFETY: the caller passes n ranks.
    let r = unsafe { ints(ranks, n) };
    derive("MPI_Group_excl", group, newgroup, |m| g::excl(m, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_range_incl(group: MPI_Group, n: c_int, ranges: *mut [c_int; 3], newgroup: *mut MPI_Group) -> c_int {
    if let Err(rc) = list_arg("MPI_Group_range_incl", n, ranges, "ranges") {
        return rc;
    }
    // SAFETY: the caller passes n triplets.
    let t = unsafe { triplets(ranges, n) };
    derive("MPI_Group_range_incl", group, newgroup, |m| g::incl(m, &g::expand_ranges(m.len(), t)?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_range_excl(group: MPI_Group, n: c_int, ranges: *mut [c_int; 3], newgroup: *mut MPI_Group) -> c_int {
    if let Err(rc) = list_arg("MPI_Group_range_excl", n, ranges, "ranges") {
        return rc;
    }
    // SAFETY: the caller passes n triplets.
    let t = unsafe { triplets(ranges, n) };
    derive("MPI_Group_range_excl", group, newgroup, |m| g::excl(m, &g::expand_ranges(m.len(), t)?))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_union(group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group) -> c_int {
    combine("MPI_Group_union", group1, group2, newgroup, g::union)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_intersection(group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group) -> c_int {
    combine("MPI_Group_intersection", group1, group2, newgroup, g::intersection)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_difference(group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group) -> c_int {
    combine("MPI_Group_difference", group1, group2, newgroup, g::difference)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_translate_ranks(group1: MPI_Group, n: c_int, ranks1: *const c_int, group2: MPI_Group, ranks2: *mut c_int) -> c_int {
    let func = "MPI_Group_translate_ranks";
    let (a, b) = match (group_arg(func, group1), group_arg(func, group2)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(rc), _) | (_, Err(rc)) => return rc,
    };
    if let Err(rc) = list_arg(func, n, ranks1, "ranks1") {
        return rc;
    }
    if n > 0 && ranks2.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "ranks2 is NULL");
    }
    // SAFETY: the caller passes n ranks.
    let r = unsafe { ints(ranks1, n) };
    for (i, &x) in r.iter().enumerate() {
        let t = if x == MPI_PROC_NULL {
            MPI_PROC_NULL
        } else if x < 0 || x as usize >= a.len() {
            return raise(MPI_COMM_WORLD, func, MPI_ERR_RANK, format!("rank {x} is not in group1 (size {})", a.len()));
        } else {
            g::rank_of(&b, a[x as usize]).map_or(MPI_UNDEFINED, |y| y as c_int)
        };
        // SAFETY: ranks2 holds n ints.
        unsafe { *ranks2.add(i) = t };
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_compare(group1: MPI_Group, group2: MPI_Group, result: *mut c_int) -> c_int {
    let func = "MPI_Group_compare";
    let (a, b) = match (group_arg(func, group1), group_arg(func, group2)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(rc), _) | (_, Err(rc)) => return rc,
    };
    let r = match g::compare(&a, &b) {
        g::Cmp::Ident => MPI_IDENT,
        g::Cmp::Similar => MPI_SIMILAR,
        g::Cmp::Unequal => MPI_UNEQUAL,
    };
    store(func, result, r)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Group_free(group: *mut MPI_Group) -> c_int {
    let func = "MPI_Group_free";
    if group.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "group is NULL");
    }
    // SAFETY: checked non-null.
    let h = unsafe { *group };
    if h != MPI_GROUP_EMPTY {
        let freed = group_index(h).is_some_and(|i| GROUPS.lock().unwrap_or_else(|p| p.into_inner()).get_mut(i).and_then(|s| s.take()).is_some());
        if !freed {
            return raise(MPI_COMM_WORLD, func, MPI_ERR_GROUP, format!("invalid group handle {h:#x}"));
        }
    }
    // SAFETY: checked non-null.
    unsafe { *group = MPI_GROUP_NULL };
    MPI_SUCCESS
}
