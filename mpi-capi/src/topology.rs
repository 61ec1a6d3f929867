//! Process topologies (Cartesian, graph, distributed graph) and the neighbourhood
//! collectives. Constructors are communicator splits or dups with the topology attached;
//! the neighbourhood collectives are one-round schedules on the collective context, run by
//! `coll::run_collective` (blocking and nonblocking alike). Reordering is never done
//! (`reorder` is accepted and ignored, which the standard allows).

use crate::abi::*;
use crate::coll::{self, keep_array, persistent_init, run_staged, Dir, Int, PerRank, Pins, Req, Staging};
use crate::comm::{dup, new_comm, set_topology, split};
use crate::errors::{raise};
use crate::group::ints;
use crate::p2p_args::{comm_of, ArgError};
use mpi_core::coll::Slice;
use mpi_core::runtime::{self, Runtime};
use mpi_core::topology::{self as topo, Topology};
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

/// (topology, rank, local size, is intercommunicator) of a communicator.
type TopoInfo = (Option<Arc<Topology>>, usize, usize, bool);

fn topo_of(comm: MPI_Comm) -> Result<TopoInfo, ArgError> {
    runtime::with(|rt| comm_of(rt, comm).map(|c| (c.topo.clone(), c.rank, c.local_size(), c.is_inter())))
}

fn err_at(comm: MPI_Comm, func: &str) -> impl Fn(ArgError) -> c_int + '_ {
    move |(c, m)| raise(if c == MPI_ERR_COMM { MPI_COMM_WORLD } else { comm }, func, c, m)
}

/// The Cartesian topology of `comm`, or an MPI_ERR_TOPOLOGY error.
fn cart_of(func: &str, comm: MPI_Comm) -> Result<(Vec<usize>, Vec<bool>, usize), c_int> {
    let (t, rank, _, _) = topo_of(comm).map_err(err_at(comm, func))?;
    match t.as_deref() {
        Some(Topology::Cart { dims, periods }) => Ok((dims.clone(), periods.clone(), rank)),
        _ => Err(raise(comm, func, MPI_ERR_TOPOLOGY, "the communicator has no Cartesian topology")),
    }
}

fn graph_of(func: &str, comm: MPI_Comm) -> Result<(Vec<usize>, Vec<usize>, usize), c_int> {
    let (t, rank, _, _) = topo_of(comm).map_err(err_at(comm, func))?;
    match t.as_deref() {
        Some(Topology::Graph { index, edges }) => Ok((index.clone(), edges.clone(), rank)),
        _ => Err(raise(comm, func, MPI_ERR_TOPOLOGY, "the communicator has no graph topology")),
    }
}

macro_rules! tryc {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(rc) => return rc,
        }
    };
}

/// `n` ints of the caller's array `p`, or `MPI_ERR_ARG` raised on `comm` naming `what` when
/// `p` is NULL with `n > 0` (read as an empty list, that built a wrong topology or indexed
/// past it).
///
/// # Safety
/// `p` must point to `n` ints when it is not NULL.
unsafe fn arr<'a>(comm: MPI_Comm, func: &str, p: *const c_int, n: usize, what: &str) -> Result<&'a [c_int], c_int> {
    if n > 0 && p.is_null() {
        return Err(raise(comm, func, MPI_ERR_ARG, format!("{what} is NULL but {n} entries are needed")));
    }
    // SAFETY: per the function contract.
    Ok(unsafe { ints(p, n as c_int) })
}

/// Writes `v` to `out[i]` for each i.
///
/// # Safety
/// `out` must hold `v.len()` ints (or be NULL when `v` is empty).
unsafe fn write_ints(out: *mut c_int, v: impl IntoIterator<Item = c_int>) {
    for (i, x) in v.into_iter().enumerate() {
        // SAFETY: per the function contract.
        unsafe { *out.add(i) = x };
    }
}

fn store(func: &str, comm: MPI_Comm, out: *mut c_int, v: c_int) -> c_int {
    if out.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "output argument is NULL");
    }
    // SAFETY: checked non-null.
    unsafe { *out = v };
    MPI_SUCCESS
}

// ------------------------------------------------------------------ Cartesian

/// Validated (dims, periods) arguments.
///
/// # Safety
/// `dims` and `periods` must hold `ndims` ints.
unsafe fn cart_args(func: &str, comm: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, size: usize) -> Result<(Vec<usize>, Vec<bool>), c_int> {
    if ndims < 0 {
        return Err(raise(comm, func, MPI_ERR_DIMS, format!("negative ndims {ndims}")));
    }
    if ndims > 0 && (dims.is_null() || periods.is_null()) {
        return Err(raise(comm, func, MPI_ERR_ARG, "dims or periods is NULL"));
    }
    // SAFETY: per the function contract.
    let (d, p) = unsafe { (ints(dims, ndims), ints(periods, ndims)) };
    // A dimension of 0 makes a grid of no process: every process is left out (MPI_COMM_NULL,
    // MPI_UNDEFINED), as in MPICH.
    if d.iter().any(|&x| x < 0) {
        return Err(raise(comm, func, MPI_ERR_DIMS, format!("dimensions {d:?} must not be negative")));
    }
    let prod: usize = d.iter().map(|&x| x as usize).product();
    if prod > size {
        return Err(raise(comm, func, MPI_ERR_DIMS, format!("the grid has {prod} processes but the communicator only {size}")));
    }
    Ok((d.iter().map(|&x| x as usize).collect(), p.iter().map(|&x| x != 0).collect()))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_create(comm_old: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, _reorder: c_int, comm_cart: *mut MPI_Comm) -> c_int {
    let func = "MPI_Cart_create";
    require_init!(func);
    new_comm(func, comm_old, comm_cart, || {
        let (_, rank, size, inter) = topo_of(comm_old).map_err(err_at(comm_old, func))?;
        if inter {
            return Err(raise(comm_old, func, MPI_ERR_COMM, "topologies need an intracommunicator"));
        }
        // SAFETY: the caller passes ndims dims and periods.
        let (d, p) = unsafe { cart_args(func, comm_old, ndims, dims, periods, size) }?;
        let prod: usize = d.iter().product();
        let color = if rank < prod { 0 } else { MPI_UNDEFINED };
        let h = split(func, comm_old, color, rank as c_int)?;
        if h != MPI_COMM_NULL {
            set_topology(h, Topology::Cart { dims: d, periods: p });
        }
        Ok(h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_map(comm: MPI_Comm, ndims: c_int, dims: *const c_int, periods: *const c_int, newrank: *mut c_int) -> c_int {
    let func = "MPI_Cart_map";
    require_init!(func);
    let (_, rank, size, _) = tryc!(topo_of(comm).map_err(err_at(comm, func)));
    if newrank.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "newrank is NULL");
    }
    // SAFETY: the caller passes ndims dims and periods.
    let (d, _) = tryc!(unsafe { cart_args(func, comm, ndims, dims, periods, size) });
    let prod: usize = d.iter().product();
    store(func, comm, newrank, if rank < prod { rank as c_int } else { MPI_UNDEFINED })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cartdim_get(comm: MPI_Comm, ndims: *mut c_int) -> c_int {
    require_init!("MPI_Cartdim_get");
    let (d, _, _) = tryc!(cart_of("MPI_Cartdim_get", comm));
    store("MPI_Cartdim_get", comm, ndims, d.len() as c_int)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_get(comm: MPI_Comm, maxdims: c_int, dims: *mut c_int, periods: *mut c_int, coords: *mut c_int) -> c_int {
    let func = "MPI_Cart_get";
    require_init!(func);
    let (d, p, rank) = tryc!(cart_of(func, comm));
    if (maxdims as usize) < d.len() || (!d.is_empty() && (dims.is_null() || periods.is_null() || coords.is_null())) {
        return raise(comm, func, MPI_ERR_ARG, format!("maxdims {maxdims} is below the {} dimensions, or an array is NULL", d.len()));
    }
    // SAFETY: each array holds at least d.len() ints (checked above).
    unsafe {
        write_ints(dims, d.iter().map(|&x| x as c_int));
        write_ints(periods, p.iter().map(|&x| x as c_int));
        write_ints(coords, topo::cart_coords(&d, rank).into_iter().map(|x| x as c_int));
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_rank(comm: MPI_Comm, coords: *const c_int, rank: *mut c_int) -> c_int {
    let func = "MPI_Cart_rank";
    require_init!(func);
    let (d, p, _) = tryc!(cart_of(func, comm));
    // SAFETY: the caller passes one coordinate per dimension.
    let c: Vec<i64> = tryc!(unsafe { arr(comm, func, coords, d.len(), "coords") }).iter().map(|&x| x as i64).collect();
    match topo::cart_rank(&d, &p, &c) {
        Some(r) => store(func, comm, rank, r as c_int),
        None => raise(comm, func, MPI_ERR_ARG, format!("coordinates {c:?} are outside the non-periodic grid {d:?}")),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_coords(comm: MPI_Comm, rank: c_int, maxdims: c_int, coords: *mut c_int) -> c_int {
    let func = "MPI_Cart_coords";
    require_init!(func);
    let (d, _, _) = tryc!(cart_of(func, comm));
    let n: usize = d.iter().product();
    if rank < 0 || rank as usize >= n {
        return raise(comm, func, MPI_ERR_RANK, format!("rank {rank} is not in the grid of {n}"));
    }
    if (maxdims as usize) < d.len() || (coords.is_null() && !d.is_empty()) {
        return raise(comm, func, MPI_ERR_ARG, format!("maxdims {maxdims} is below the {} dimensions", d.len()));
    }
    // SAFETY: coords holds at least d.len() ints.
    unsafe { write_ints(coords, topo::cart_coords(&d, rank as usize).into_iter().map(|x| x as c_int)) };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_shift(comm: MPI_Comm, direction: c_int, disp: c_int, rank_source: *mut c_int, rank_dest: *mut c_int) -> c_int {
    let func = "MPI_Cart_shift";
    require_init!(func);
    let (d, p, rank) = tryc!(cart_of(func, comm));
    if direction < 0 || direction as usize >= d.len() {
        return raise(comm, func, MPI_ERR_ARG, format!("direction {direction} (the grid has {} dimensions)", d.len()));
    }
    let (s, t) = topo::cart_shift(&d, &p, rank, direction as usize, disp as i64);
    let as_int = |x: Option<usize>| x.map_or(MPI_PROC_NULL, |r| r as c_int);
    tryc!(Ok::<_, c_int>(store(func, comm, rank_source, as_int(s))).and_then(|rc| if rc == MPI_SUCCESS { Ok(()) } else { Err(rc) }));
    store(func, comm, rank_dest, as_int(t))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Cart_sub(comm: MPI_Comm, remain_dims: *const c_int, newcomm: *mut MPI_Comm) -> c_int {
    let func = "MPI_Cart_sub";
    require_init!(func);
    new_comm(func, comm, newcomm, || {
        let (d, p, rank) = cart_of(func, comm)?;
        if !d.is_empty() && remain_dims.is_null() {
            return Err(raise(comm, func, MPI_ERR_ARG, "remain_dims is NULL"));
        }
        // SAFETY: the caller passes one flag per dimension.
        let keep: Vec<bool> = unsafe { ints(remain_dims, d.len() as c_int) }.iter().map(|&x| x != 0).collect();
        let c = topo::cart_coords(&d, rank);
        // Colour: the coordinates of the dropped dimensions; key: the rank (row-major order of
        // the kept coordinates follows). Keeping no dimension gives a zero-dimensional grid,
        // which MPICH makes on rank 0 only (a copy of MPI_COMM_SELF): MPI_COMM_NULL elsewhere,
        // not one single-process grid per process (MPICH's topo/cartsuball checks this).
        let color = if keep.iter().any(|&k| k) {
            (0..d.len()).filter(|&i| !keep[i]).fold(0usize, |acc, i| acc * d[i] + c[i]) as c_int
        } else if rank == 0 {
            0
        } else {
            MPI_UNDEFINED
        };
        let h = split(func, comm, color, rank as c_int)?;
        let nd: Vec<usize> = (0..d.len()).filter(|&i| keep[i]).map(|i| d[i]).collect();
        let np: Vec<bool> = (0..d.len()).filter(|&i| keep[i]).map(|i| p[i]).collect();
        set_topology(h, Topology::Cart { dims: nd, periods: np });
        Ok(h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> c_int {
    let func = "MPI_Dims_create";
    if nnodes < 1 || ndims < 0 || (dims.is_null() && ndims > 0) {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, format!("nnodes {nnodes} must be positive and ndims {ndims} non-negative"));
    }
    // SAFETY: the caller passes ndims ints.
    let d = unsafe { ints(dims, ndims) };
    if d.iter().any(|&x| x < 0) {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_DIMS, format!("negative entry in dims {d:?}"));
    }
    let given: Vec<usize> = d.iter().map(|&x| x as usize).collect();
    match topo::dims_create(nnodes as usize, &given) {
        Some(out) => {
            // SAFETY: dims holds ndims ints.
            unsafe { write_ints(dims, out.into_iter().map(|x| x as c_int)) };
            MPI_SUCCESS
        }
        None => raise(MPI_COMM_WORLD, func, MPI_ERR_DIMS, format!("{nnodes} processes cannot fill dims {d:?}")),
    }
}

// ------------------------------------------------------------------ graphs

#[no_mangle]
pub unsafe extern "C" fn PMPI_Graph_create(comm_old: MPI_Comm, nnodes: c_int, index: *const c_int, edges: *const c_int, _reorder: c_int, comm_graph: *mut MPI_Comm) -> c_int {
    let func = "MPI_Graph_create";
    require_init!(func);
    new_comm(func, comm_old, comm_graph, || {
        let (_, rank, size, inter) = topo_of(comm_old).map_err(err_at(comm_old, func))?;
        if inter {
            return Err(raise(comm_old, func, MPI_ERR_COMM, "topologies need an intracommunicator"));
        }
        if nnodes < 0 || nnodes as usize > size {
            return Err(raise(comm_old, func, MPI_ERR_ARG, format!("nnodes {nnodes} (the communicator has {size} ranks)")));
        }
        if nnodes > 0 && (index.is_null() || edges.is_null()) {
            return Err(raise(comm_old, func, MPI_ERR_ARG, "index or edges is NULL"));
        }
        // SAFETY: the caller passes nnodes index entries and index[nnodes-1] edges.
        let idx: Vec<usize> = unsafe { ints(index, nnodes) }.iter().map(|&x| x.max(0) as usize).collect();
        let ne = idx.last().copied().unwrap_or(0);
        // SAFETY: as above.
        let e = unsafe { ints(edges, ne as c_int) };
        if idx.windows(2).any(|w| w[1] < w[0]) || e.iter().any(|&x| x < 0 || x >= nnodes) {
            return Err(raise(comm_old, func, MPI_ERR_ARG, "index must be non-decreasing and edges must name nodes 0..nnodes-1"));
        }
        let color = if rank < nnodes as usize { 0 } else { MPI_UNDEFINED };
        let h = split(func, comm_old, color, rank as c_int)?;
        if h != MPI_COMM_NULL {
            set_topology(h, Topology::Graph { index: idx, edges: e.iter().map(|&x| x as usize).collect() });
        }
        Ok(h)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Graph_map(comm: MPI_Comm, nnodes: c_int, index: *const c_int, edges: *const c_int, newrank: *mut c_int) -> c_int {
    let func = "MPI_Graph_map";
    require_init!(func);
    let (_, rank, size, _) = tryc!(topo_of(comm).map_err(err_at(comm, func)));
    if nnodes < 0 || nnodes as usize > size {
        return raise(comm, func, MPI_ERR_ARG, format!("nnodes {nnodes} (the communicator has {size} ranks)"));
    }
    if nnodes > 0 && (index.is_null() || edges.is_null()) {
        return raise(comm, func, MPI_ERR_ARG, "index or edges is NULL");
    }
    store(func, comm, newrank, if (rank as c_int) < nnodes { rank as c_int } else { MPI_UNDEFINED })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Graphdims_get(comm: MPI_Comm, nnodes: *mut c_int, nedges: *mut c_int) -> c_int {
    let func = "MPI_Graphdims_get";
    require_init!(func);
    let (idx, e, _) = tryc!(graph_of(func, comm));
    let rc = store(func, comm, nnodes, idx.len() as c_int);
    if rc != MPI_SUCCESS {
        return rc;
    }
    store(func, comm, nedges, e.len() as c_int)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Graph_get(comm: MPI_Comm, maxindex: c_int, maxedges: c_int, index: *mut c_int, edges: *mut c_int) -> c_int {
    let func = "MPI_Graph_get";
    require_init!(func);
    let (idx, e, _) = tryc!(graph_of(func, comm));
    if (maxindex as usize) < idx.len() || (maxedges as usize) < e.len() || (index.is_null() && !idx.is_empty()) || (edges.is_null() && !e.is_empty()) {
        return raise(comm, func, MPI_ERR_ARG, "maxindex or maxedges too small, or an array is NULL");
    }
    // SAFETY: sizes checked above.
    unsafe {
        write_ints(index, idx.iter().map(|&x| x as c_int));
        write_ints(edges, e.iter().map(|&x| x as c_int));
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Graph_neighbors_count(comm: MPI_Comm, rank: c_int, nneighbors: *mut c_int) -> c_int {
    let func = "MPI_Graph_neighbors_count";
    require_init!(func);
    let (idx, e, _) = tryc!(graph_of(func, comm));
    if rank < 0 || rank as usize >= idx.len() {
        return raise(comm, func, MPI_ERR_RANK, format!("rank {rank} is not a graph node"));
    }
    store(func, comm, nneighbors, topo::graph_neighbors(&idx, &e, rank as usize).len() as c_int)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Graph_neighbors(comm: MPI_Comm, rank: c_int, maxneighbors: c_int, neighbors: *mut c_int) -> c_int {
    let func = "MPI_Graph_neighbors";
    require_init!(func);
    let (idx, e, _) = tryc!(graph_of(func, comm));
    if rank < 0 || rank as usize >= idx.len() {
        return raise(comm, func, MPI_ERR_RANK, format!("rank {rank} is not a graph node"));
    }
    let n = topo::graph_neighbors(&idx, &e, rank as usize);
    if (maxneighbors as usize) < n.len() || (neighbors.is_null() && !n.is_empty()) {
        return raise(comm, func, MPI_ERR_ARG, format!("maxneighbors {maxneighbors} is below {}", n.len()));
    }
    // SAFETY: size checked above.
    unsafe { write_ints(neighbors, n.into_iter().map(|x| x as c_int)) };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Topo_test(comm: MPI_Comm, status: *mut c_int) -> c_int {
    let func = "MPI_Topo_test";
    require_init!(func);
    let (t, _, _, _) = tryc!(topo_of(comm).map_err(err_at(comm, func)));
    let v = match t.as_deref() {
        None => MPI_UNDEFINED,
        Some(Topology::Cart { .. }) => MPI_CART,
        Some(Topology::Graph { .. }) => MPI_GRAPH,
        Some(Topology::DistGraph { .. }) => MPI_DIST_GRAPH,
    };
    store(func, comm, status, v)
}

// ------------------------------------------------------------------ distributed graphs

/// Weights argument of `n` edges: `None` for `MPI_UNWEIGHTED` (an unweighted graph);
/// otherwise the weights, where `MPI_WEIGHTS_EMPTY` (or any pointer) stands for none when
/// `n` is 0 — the graph is still weighted (MPI 4.1 §8.5.4; MPICH likewise).
///
/// # Safety
/// `w` must hold `n` ints unless it is one of the sentinels or `n` is 0.
unsafe fn weights(w: *const c_int, n: usize) -> Result<Option<Vec<i32>>, ArgError> {
    if crate::abi::statics::is_unweighted(w) {
        Ok(None)
    } else if n == 0 {
        Ok(Some(Vec::new()))
    } else if w.is_null() || crate::abi::statics::is_weights_empty(w) {
        Err((MPI_ERR_ARG, format!("the weights are {} but there are {n} edges", if w.is_null() { "NULL" } else { "MPI_WEIGHTS_EMPTY" })))
    } else {
        // SAFETY: per the function contract.
        Ok(Some(unsafe { ints(w, n as c_int) }.to_vec()))
    }
}

fn dist_graph_comm(func: &str, comm_old: MPI_Comm, info: MPI_Info, t: Topology) -> Result<MPI_Comm, c_int> {
    let p = crate::info::pairs(info);
    let h = dup(func, comm_old, p)?;
    set_topology(h, t);
    Ok(h)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Dist_graph_create_adjacent(comm_old: MPI_Comm, indegree: c_int, sources: *const c_int, sourceweights: *const c_int, outdegree: c_int, destinations: *const c_int, destweights: *const c_int, info: MPI_Info, _reorder: c_int, comm_dist_graph: *mut MPI_Comm) -> c_int {
    let func = "MPI_Dist_graph_create_adjacent";
    require_init!(func);
    // SAFETY: the caller's arrays, as in the standard.
    new_comm(func, comm_old, comm_dist_graph, || unsafe { dist_graph_create_adjacent(func, comm_old, indegree, sources, sourceweights, outdegree, destinations, destweights, info) })
}

/// # Safety
/// The arrays hold what the standard says for `MPI_Dist_graph_create_adjacent`.
unsafe fn dist_graph_create_adjacent(func: &str, comm_old: MPI_Comm, indegree: c_int, sources: *const c_int, sourceweights: *const c_int, outdegree: c_int, destinations: *const c_int, destweights: *const c_int, info: MPI_Info) -> Result<MPI_Comm, c_int> {
    let (_, _, size, _) = topo_of(comm_old).map_err(err_at(comm_old, func))?;
    if indegree < 0 || outdegree < 0 {
        return Err(raise(comm_old, func, MPI_ERR_ARG, "negative degree"));
    }
    // SAFETY: the caller passes indegree sources and outdegree destinations (and weights).
    let (s, d) = unsafe { (arr(comm_old, func, sources, indegree as usize, "sources")?, arr(comm_old, func, destinations, outdegree as usize, "destinations")?) };
    if s.iter().chain(d.iter()).any(|&r| r < 0 || r as usize >= size) {
        return Err(raise(comm_old, func, MPI_ERR_RANK, format!("a neighbour is outside 0..{size}")));
    }
    // SAFETY: as above.
    let (sw, dw) = unsafe { (weights(sourceweights, s.len()), weights(destweights, d.len())) };
    let (sw, dw) = (sw.map_err(err_at(comm_old, func))?, dw.map_err(err_at(comm_old, func))?);
    if sw.is_some() != dw.is_some() {
        return Err(raise(comm_old, func, MPI_ERR_ARG, "MPI_UNWEIGHTED must be given for both sourceweights and destweights, or for neither"));
    }
    let t = Topology::DistGraph { sources: s.iter().map(|&x| x as usize).collect(), source_weights: sw, dests: d.iter().map(|&x| x as usize).collect(), dest_weights: dw };
    dist_graph_comm(func, comm_old, info, t)
}

/// `MPI_Dist_graph_create`: every process contributes some edges; all edges are
/// gathered everywhere (two allgathers) and each process keeps its own in- and out-edges,
/// ordered by (contributing rank, position).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Dist_graph_create(comm_old: MPI_Comm, n: c_int, sources: *const c_int, degrees: *const c_int, destinations: *const c_int, weights_: *const c_int, info: MPI_Info, _reorder: c_int, comm_dist_graph: *mut MPI_Comm) -> c_int {
    let func = "MPI_Dist_graph_create";
    require_init!(func);
    // SAFETY: the caller's arrays, as in the standard.
    new_comm(func, comm_old, comm_dist_graph, || unsafe { dist_graph_create(func, comm_old, n, sources, degrees, destinations, weights_, info) })
}

/// # Safety
/// The arrays hold what the standard says for `MPI_Dist_graph_create`.
unsafe fn dist_graph_create(func: &str, comm_old: MPI_Comm, n: c_int, sources: *const c_int, degrees: *const c_int, destinations: *const c_int, weights_: *const c_int, info: MPI_Info) -> Result<MPI_Comm, c_int> {
    let (_, rank, size, _) = topo_of(comm_old).map_err(err_at(comm_old, func))?;
    if n < 0 {
        return Err(raise(comm_old, func, MPI_ERR_ARG, "negative n"));
    }
    // SAFETY: the caller passes n sources and degrees, sum(degrees) destinations/weights.
    let (src, deg) = unsafe { (arr(comm_old, func, sources, n as usize, "sources")?, arr(comm_old, func, degrees, n as usize, "degrees")?) };
    if deg.iter().any(|&x| x < 0) {
        return Err(raise(comm_old, func, MPI_ERR_ARG, format!("negative degree in {deg:?}")));
    }
    let total: usize = deg.iter().map(|&x| x as usize).sum();
    // SAFETY: as above.
    let dst = unsafe { arr(comm_old, func, destinations, total, "destinations")? };
    // SAFETY: as above.
    let w = unsafe { weights(weights_, total) }.map_err(err_at(comm_old, func))?;
    let mut mine: Vec<i64> = Vec::with_capacity(3 * total);
    let mut k = 0;
    for (i, &s) in src.iter().enumerate() {
        for _ in 0..deg[i].max(0) {
            if s < 0 || s as usize >= size || dst[k] < 0 || dst[k] as usize >= size {
                return Err(raise(comm_old, func, MPI_ERR_RANK, format!("edge {s} -> {} is outside 0..{size}", dst[k])));
            }
            mine.extend([s as i64, dst[k] as i64, w.as_ref().map_or(1, |w| w[k]) as i64]);
            k += 1;
        }
    }
    let all = gather_edges(comm_old, &mine).map_err(err_at(comm_old, func))?;
    let mut t = Topology::DistGraph { sources: vec![], source_weights: w.as_ref().map(|_| vec![]), dests: vec![], dest_weights: w.as_ref().map(|_| vec![]) };
    if let Topology::DistGraph { sources, source_weights, dests, dest_weights } = &mut t {
        for e in all.chunks(3) {
            let (s, d, wt) = (e[0] as usize, e[1] as usize, e[2] as i32);
            if d == rank {
                sources.push(s);
                if let Some(v) = source_weights.as_mut() {
                    v.push(wt);
                }
            }
            if s == rank {
                dests.push(d);
                if let Some(v) = dest_weights.as_mut() {
                    v.push(wt);
                }
            }
        }
    }
    dist_graph_comm(func, comm_old, info, t)
}

/// All processes' edge lists, concatenated in rank order (via MPI_Allgather(v)).
fn gather_edges(comm: MPI_Comm, mine: &[i64]) -> Result<Vec<i64>, ArgError> {
    let n = runtime::with(|rt| comm_of(rt, comm).map(|c| c.size()))?;
    let mut counts = vec![0 as c_int; n];
    let my = mine.len() as c_int;
    // SAFETY: buffers sized for n ints.
    let rc = unsafe { crate::coll::PMPI_Allgather(&my as *const c_int as *const c_void, 1, MPI_INT, counts.as_mut_ptr() as *mut c_void, 1, MPI_INT, comm) };
    if rc != MPI_SUCCESS {
        return Err((MPI_ERR_OTHER, "gathering the edge counts failed".into()));
    }
    let mut displs = vec![0 as c_int; n];
    for i in 1..n {
        displs[i] = displs[i - 1] + counts[i - 1];
    }
    let total = (displs[n - 1] + counts[n - 1]) as usize;
    let mut all = vec![0i64; total.max(1)];
    // SAFETY: `all` holds the sum of counts; `mine` holds my count.
    let rc = unsafe { crate::coll::PMPI_Allgatherv(mine.as_ptr() as *const c_void, my, MPI_INT64_T, all.as_mut_ptr() as *mut c_void, counts.as_ptr(), displs.as_ptr(), MPI_INT64_T, comm) };
    if rc != MPI_SUCCESS {
        return Err((MPI_ERR_OTHER, "gathering the edges failed".into()));
    }
    all.truncate(total);
    Ok(all)
}

fn dist_of(func: &str, comm: MPI_Comm) -> Result<Topology, c_int> {
    let (t, _, _, _) = topo_of(comm).map_err(err_at(comm, func))?;
    match t.as_deref() {
        Some(d @ Topology::DistGraph { .. }) => Ok(d.clone()),
        _ => Err(raise(comm, func, MPI_ERR_TOPOLOGY, "the communicator has no distributed graph topology")),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Dist_graph_neighbors_count(comm: MPI_Comm, indegree: *mut c_int, outdegree: *mut c_int, weighted: *mut c_int) -> c_int {
    let func = "MPI_Dist_graph_neighbors_count";
    require_init!(func);
    let Topology::DistGraph { sources, source_weights, dests, .. } = tryc!(dist_of(func, comm)) else { unreachable!("dist_of returns a distributed graph") };
    if indegree.is_null() || outdegree.is_null() || weighted.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "an output argument is NULL");
    }
    // SAFETY: checked non-null.
    unsafe {
        *indegree = sources.len() as c_int;
        *outdegree = dests.len() as c_int;
        *weighted = source_weights.is_some() as c_int;
    }
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Dist_graph_neighbors(comm: MPI_Comm, maxindegree: c_int, sources: *mut c_int, sourceweights: *mut c_int, maxoutdegree: c_int, destinations: *mut c_int, destweights: *mut c_int) -> c_int {
    let func = "MPI_Dist_graph_neighbors";
    require_init!(func);
    let Topology::DistGraph { sources: s, source_weights: sw, dests: d, dest_weights: dw } = tryc!(dist_of(func, comm)) else { unreachable!("dist_of returns a distributed graph") };
    if (maxindegree as usize) < s.len() || (maxoutdegree as usize) < d.len() {
        return raise(comm, func, MPI_ERR_ARG, "maxindegree or maxoutdegree is too small");
    }
    // SAFETY: sizes checked; weight arrays are written only when given and weighted.
    unsafe {
        write_ints(sources, s.iter().map(|&x| x as c_int));
        write_ints(destinations, d.iter().map(|&x| x as c_int));
        if let Some(w) = sw.filter(|_| !sourceweights.is_null() && !crate::abi::statics::is_unweighted(sourceweights)) {
            write_ints(sourceweights, w);
        }
        if let Some(w) = dw.filter(|_| !destweights.is_null() && !crate::abi::statics::is_unweighted(destweights)) {
            write_ints(destweights, w);
        }
    }
    MPI_SUCCESS
}

// ------------------------------------------------------------------ neighbourhood collectives

/// A byte view of (buf, count, datatype): the user's memory for a contiguous type, else a
/// staging buffer packed before the exchange (`Dir::In`) or unpacked after it (`Dir::Out`).
fn view<C: Int>(st: &mut Staging, buf: *const c_void, count: C, dt: MPI_Datatype, dir: Dir) -> Result<Slice, ArgError> {
    st.view(buf, coll::count(count, "count")?, &coll::datatype(dt)?, dir)
}

/// One block per neighbour: where it is and how long.
struct Blocks {
    send: PerRank<Slice>,
    recv: PerRank<Slice>,
}

/// Builds and runs a neighbourhood exchange: block `recv[i]` from source i, `send[j]` to
/// destination j. `blocks` computes the blocks from (indegree, outdegree), staging those of
/// non-contiguous datatypes.
fn neighbor(func: &str, comm: MPI_Comm, request: Req, blocks: impl FnOnce(usize, usize, &mut Staging) -> Result<Blocks, ArgError>) -> c_int {
    require_init!(func);
    let r = runtime::with(|rt: &mut Runtime| {
        let c = comm_of(rt, comm)?;
        let t = c.topo.clone().ok_or((MPI_ERR_TOPOLOGY, "the communicator has no topology".to_string()))?;
        Ok::<_, ArgError>(t.neighbors(c.rank))
    });
    let (srcs, dsts, order) = match r {
        Ok(x) => x,
        Err((c, m)) => return raise(comm, func, c, m),
    };
    run_staged(func, comm, request, move |s, st| {
        let b = blocks(srcs.len(), dsts.len(), st)?;
        for &i in &order {
            if let Some(src) = srcs[i] {
                s.recv(src, b.recv[i]);
            }
        }
        for (j, d) in dsts.iter().enumerate() {
            if let Some(d) = *d {
                s.send(d, b.send[j]);
            }
        }
        Ok(())
    })
}

/// `n` equal blocks of `count` elements of `dt` starting at `buf`.
fn equal_blocks<C: Int>(st: &mut Staging, buf: *const c_void, count: C, dt: MPI_Datatype, n: usize, dir: Dir) -> Result<PerRank<Slice>, ArgError> {
    let (items, ty) = (coll::count(count, "count")?, coll::datatype(dt)?);
    let ext = ty.extent() * items as isize;
    (0..n).map(|i| st.view((buf as *const u8).wrapping_offset(ext * i as isize) as *const c_void, items, &ty, dir)).collect()
}

/// Blocks at `displs[i]` (elements of `dt`) with `counts[i]` elements.
///
/// # Safety
/// `counts` and `displs` must hold `n` entries.
unsafe fn var_blocks<C: Int, D: Int>(st: &mut Staging, buf: *const c_void, counts: *const C, displs: *const D, dt: MPI_Datatype, n: usize, dir: Dir) -> Result<PerRank<Slice>, ArgError> {
    // SAFETY: per the function contract.
    let (c, d) = unsafe { (coll::ints(counts, n, "counts")?, coll::ints(displs, n, "displs")?) };
    if n == 0 {
        return Ok(PerRank::new());
    }
    let ty = coll::datatype(dt)?;
    (0..n).map(|i| st.view((buf as *const u8).wrapping_offset(ty.extent() * d[i].get() as isize) as *const c_void, coll::count(c[i], "count")?, &ty, dir)).collect()
}

/// Blocks at byte displacements with per-block datatypes (the "w" variants).
///
/// # Safety
/// The three arrays must hold `n` entries.
unsafe fn w_blocks<C: Int>(st: &mut Staging, buf: *const c_void, counts: *const C, displs: *const MPI_Aint, types: *const MPI_Datatype, n: usize, dir: Dir) -> Result<PerRank<Slice>, ArgError> {
    // SAFETY: per the function contract.
    let (c, d, t) = unsafe { (coll::ints(counts, n, "counts")?, coll::ints(displs, n, "displs")?, coll::ints(types, n, "datatypes")?) };
    (0..n).map(|i| view(st, (buf as *const u8).wrapping_offset(d[i] as isize) as *const c_void, c[i], t[i], dir)).collect()
}

#[allow(clippy::too_many_arguments)]
fn allgather_impl<C: Int>(func: &str, sendbuf: *const c_void, sendcount: C, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: C, recvtype: MPI_Datatype, comm: MPI_Comm, request: Req) -> c_int {
    neighbor(func, comm, request, |indeg, outdeg, st| {
        let one = view(st, sendbuf, sendcount, sendtype, Dir::In)?;
        Ok(Blocks { send: PerRank::from_elem(one, outdeg), recv: equal_blocks(st, recvbuf, recvcount, recvtype, indeg, Dir::Out)? })
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    allgather_impl("MPI_Neighbor_allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_allgather(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    allgather_impl("MPI_Ineighbor_allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Nonblocking(request))
}

#[allow(clippy::too_many_arguments)]
fn allgatherv_impl<C: Int, D: Int>(func: &str, sendbuf: *const c_void, sendcount: C, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, displs: *const D, recvtype: MPI_Datatype, comm: MPI_Comm, request: Req) -> c_int {
    neighbor(func, comm, request, |indeg, outdeg, st| {
        let one = view(st, sendbuf, sendcount, sendtype, Dir::In)?;
        // SAFETY: the caller passes indegree counts and displacements.
        Ok(Blocks { send: PerRank::from_elem(one, outdeg), recv: unsafe { var_blocks(st, recvbuf, recvcounts, displs, recvtype, indeg, Dir::Out) }? })
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    allgatherv_impl("MPI_Neighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_allgatherv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    allgatherv_impl("MPI_Ineighbor_allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, Req::Nonblocking(request))
}

#[allow(clippy::too_many_arguments)]
fn alltoall_impl<C: Int>(func: &str, sendbuf: *const c_void, sendcount: C, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: C, recvtype: MPI_Datatype, comm: MPI_Comm, request: Req) -> c_int {
    neighbor(func, comm, request, |indeg, outdeg, st| Ok(Blocks { send: equal_blocks(st, sendbuf, sendcount, sendtype, outdeg, Dir::In)?, recv: equal_blocks(st, recvbuf, recvcount, recvtype, indeg, Dir::Out)? }))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    alltoall_impl("MPI_Neighbor_alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_alltoall(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    alltoall_impl("MPI_Ineighbor_alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Nonblocking(request))
}

#[allow(clippy::too_many_arguments)]
fn alltoallv_impl<C: Int, D: Int>(func: &str, sendbuf: *const c_void, sendcounts: *const C, sdispls: *const D, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, rdispls: *const D, recvtype: MPI_Datatype, comm: MPI_Comm, request: Req) -> c_int {
    neighbor(func, comm, request, |indeg, outdeg, st| {
        // SAFETY: the caller passes outdegree/indegree counts and displacements.
        unsafe { Ok(Blocks { send: var_blocks(st, sendbuf, sendcounts, sdispls, sendtype, outdeg, Dir::In)?, recv: var_blocks(st, recvbuf, recvcounts, rdispls, recvtype, indeg, Dir::Out)? }) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    alltoallv_impl("MPI_Neighbor_alltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_alltoallv(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    alltoallv_impl("MPI_Ineighbor_alltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, Req::Nonblocking(request))
}

#[allow(clippy::too_many_arguments)]
fn alltoallw_impl<C: Int>(func: &str, sendbuf: *const c_void, sendcounts: *const C, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, request: Req) -> c_int {
    neighbor(func, comm, request, |indeg, outdeg, st| {
        // SAFETY: the caller passes outdegree/indegree counts, displacements and types.
        unsafe { Ok(Blocks { send: w_blocks(st, sendbuf, sendcounts, sdispls, sendtypes, outdeg, Dir::In)?, recv: w_blocks(st, recvbuf, recvcounts, rdispls, recvtypes, indeg, Dir::Out)? }) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm) -> c_int {
    alltoallw_impl("MPI_Neighbor_alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_alltoallw(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    alltoallw_impl("MPI_Ineighbor_alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, Req::Nonblocking(request))
}

// ------------------------------------------------------------------ persistent neighbourhood collectives (MPI-4.0)

/// (indegree, outdegree) of `comm`'s topology; (0, 0) without one (the `_init` call then
/// reports that).
fn degrees(comm: MPI_Comm) -> (usize, usize) {
    runtime::with(|rt: &mut Runtime| comm_of(rt, comm).ok().and_then(|c| c.topo.clone().map(|t| t.neighbors(c.rank))).map_or((0, 0), |(s, d, _)| (s.len(), d.len())))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_allgather_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Neighbor_allgather_init", comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| allgather_impl(f, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r))
}

/// `MPI_Neighbor_allgatherv_init` and its `_c` form: the arrays are copied (see `Kept`).
#[allow(clippy::too_many_arguments)]
unsafe fn allgatherv_init<C: Int, D: Int>(func: &str, sendbuf: *const c_void, sendcount: C, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, displs: *const D, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    let (indeg, _) = degrees(comm);
    // SAFETY: indegree counts and displacements (MPI rule); copied, see `Kept`.
    let (rc, d) = unsafe { (keep_array(recvcounts, indeg, true), keep_array(displs, indeg, true)) };
    persistent_init(func, comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| allgatherv_impl(f, sendbuf, sendcount, sendtype, recvbuf, rc.ptr(), d.ptr(), recvtype, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_allgatherv_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, displs: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    allgatherv_init("MPI_Neighbor_allgatherv_init", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoall_init(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Neighbor_alltoall_init", comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| alltoall_impl(f, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r))
}

/// `MPI_Neighbor_alltoallv_init` and its `_c` form: the arrays are copied (see `Kept`).
#[allow(clippy::too_many_arguments)]
unsafe fn alltoallv_init<C: Int, D: Int>(func: &str, sendbuf: *const c_void, sendcounts: *const C, sdispls: *const D, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, rdispls: *const D, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    let (indeg, outdeg) = degrees(comm);
    // SAFETY: outdegree send and indegree receive counts and displacements (MPI rule).
    let (sc, sd, rc, rd) = unsafe { (keep_array(sendcounts, outdeg, true), keep_array(sdispls, outdeg, true), keep_array(recvcounts, indeg, true), keep_array(rdispls, indeg, true)) };
    persistent_init(func, comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| alltoallv_impl(f, sendbuf, sc.ptr(), sd.ptr(), sendtype, recvbuf, rc.ptr(), rd.ptr(), recvtype, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoallv_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const c_int, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const c_int, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    alltoallv_init("MPI_Neighbor_alltoallv_init", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, info, request)
}

/// `MPI_Neighbor_alltoallw_init` and its `_c` form: the arrays are copied (see `Kept`).
#[allow(clippy::too_many_arguments)]
unsafe fn alltoallw_init<C: Int>(func: &str, sendbuf: *const c_void, sendcounts: *const C, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const C, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    let (indeg, outdeg) = degrees(comm);
    // SAFETY: outdegree send and indegree receive counts, displacements and datatypes.
    let (sc, sd, st, rc, rd, rt) = unsafe { (keep_array(sendcounts, outdeg, true), keep_array(sdispls, outdeg, true), keep_array(sendtypes, outdeg, true), keep_array(recvcounts, indeg, true), keep_array(rdispls, indeg, true), keep_array(recvtypes, indeg, true)) };
    persistent_init(func, comm, info, request, Pins::new(&[st.copied(), rt.copied()].concat(), &[]), move |f, r| alltoallw_impl(f, sendbuf, sc.ptr(), sd.ptr(), st.ptr(), recvbuf, rc.ptr(), rd.ptr(), rt.ptr(), comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoallw_init(sendbuf: *const c_void, sendcounts: *const c_int, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const c_int, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    alltoallw_init("MPI_Neighbor_alltoallw_init", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, info, request)
}

// ------------------------------------------------------------------ large counts (MPI-4.0 `_c` forms)

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_allgather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    allgather_impl("MPI_Neighbor_allgather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_allgather_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    allgather_impl("MPI_Ineighbor_allgather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_allgather_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Neighbor_allgather_init_c", comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| allgather_impl(f, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_allgatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    allgatherv_impl("MPI_Neighbor_allgatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_allgatherv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    allgatherv_impl("MPI_Ineighbor_allgatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_allgatherv_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, displs: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    allgatherv_init("MPI_Neighbor_allgatherv_init_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoall_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    alltoall_impl("MPI_Neighbor_alltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_alltoall_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    alltoall_impl("MPI_Ineighbor_alltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoall_init_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    persistent_init("MPI_Neighbor_alltoall_init_c", comm, info, request, Pins::new(&[sendtype, recvtype], &[]), move |f, r| alltoall_impl(f, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, r))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoallv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm) -> c_int {
    alltoallv_impl("MPI_Neighbor_alltoallv_c", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_alltoallv_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    alltoallv_impl("MPI_Ineighbor_alltoallv_c", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoallv_init_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtype: MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtype: MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    alltoallv_init("MPI_Neighbor_alltoallv_init_c", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, info, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoallw_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm) -> c_int {
    alltoallw_impl("MPI_Neighbor_alltoallw_c", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, Req::Blocking)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ineighbor_alltoallw_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    alltoallw_impl("MPI_Ineighbor_alltoallw_c", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, Req::Nonblocking(request))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Neighbor_alltoallw_init_c(sendbuf: *const c_void, sendcounts: *const MPI_Count, sdispls: *const MPI_Aint, sendtypes: *const MPI_Datatype, recvbuf: *mut c_void, recvcounts: *const MPI_Count, rdispls: *const MPI_Aint, recvtypes: *const MPI_Datatype, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    alltoallw_init("MPI_Neighbor_alltoallw_init_c", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, info, request)
}
