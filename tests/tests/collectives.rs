//! Collective operations: self-checking C programs (tests/c/coll_*.c) run through mpirun at
//! -n 1, 2, 3, 4, 5 and 8. Each rank checks its results against values it computes locally.
//!
//! - `coll_all`: every collective, blocking and nonblocking, in place and not, at 0, 1,
//!   small, above-eager and >= 1 MiB sizes; run again with OxMPI tunables that force the
//!   alternative algorithms (`alt`, `alt2`), so every algorithm runs at every rank count.
//! - `coll_noncomm`: a non-commutative user op (2x2 matrix product) proves rank order.
//! - `reduce_scatter_shapes`: every block shape the reduce-scatter algorithms split on.
//! - `inter_coll`: every collective on an intercommunicator of two unequal groups (2–5
//!   ranks), blocking and nonblocking, each group as the root's, plus the errors.
//! - `coll_large_count`: the MPI-4.0 large-count (`_c`) forms, also over TCP and two nodes.
//! - `coll_overlap`: nonblocking collectives overlapped with wildcard point-to-point traffic
//!   on the same communicator, and 1200 back-to-back mixed collectives.
//!
//! To validate the programs against another MPI: OXMPI_TEST_MPICC=mpicc.mpich
//! OXMPI_TEST_MPIRUN=mpiexec.mpich (the "mpich-bugs" argument then skips the cases MPICH
//! 4.0.2 itself gets wrong).
mod common;
use common::*;

/// Rank counts for the collectives: powers of two and not, odd, and oversubscribed.
const COLL_RANKS: &[usize] = &[1, 2, 3, 4, 5, 8];

fn run_coll(name: &str, args: &[&str]) {
    // Tests of one binary run one at a time: the leftover-process check after each run
    // looks for processes of the same executable and would catch a concurrent run's ranks.
    let _x = exclusive();
    let exe = compile(name);
    let mut args: Vec<&str> = args.to_vec();
    if !mpi().is_oxmpi {
        args.push("mpich-bugs");
    }
    for &np in COLL_RANKS {
        run_ok(name, &exe, np, &args);
    }
}

/// MPI-4.0 persistent collectives (MPI_X_init, MPI_Start/Startall, Request_free).
#[test]
fn coll_persistent() {
    run_coll("coll_persistent", &[]);
}

#[test]
fn coll_all_default_algorithms() {
    run_coll("coll_all", &[]);
}

#[test]
fn coll_all_alternative_algorithms() {
    run_coll("coll_all", &["alt"]);
    run_coll("coll_all", &["alt2"]);
}

/// Reduce_scatter(_block) over every block shape (equal, growing, zero-length blocks
/// between others, all on one rank) at short and long lengths, in place or not (bytes
/// after the result untouched), blocking, nonblocking and persistent, with MPI_SUM, a
/// commutative and a non-commutative user op.
#[test]
fn reduce_scatter_block_shapes() {
    run_coll("reduce_scatter_shapes", &[]);
}

#[test]
fn coll_noncommutative_rank_order() {
    run_coll("coll_noncomm", &[]);
}

#[test]
fn coll_overlap_and_back_to_back() {
    run_coll("coll_overlap", &[]);
}

/// Allgatherv with equal counts, each rank laying out its receive buffer its own way
/// (blocks end to end, reversed with gaps, a block type, a strided type, in place): OxMPI
/// runs it with the allgather's algorithms, so the ranks' choices must agree on the wire;
/// 1-8 ranks and over TCP.
#[test]
fn allgatherv_equal_counts_mixed_layouts() {
    let _x = exclusive();
    let exe = compile("allgatherv_layouts");
    for np in 1..=8 {
        run_ok("allgatherv_layouts", &exe, np, &[]);
    }
    run_ok_env("allgatherv_layouts", &exe, 5, &[], &[("OXMPI_TRANSPORT", "tcp")]);
}

/// Aliased send and receive buffers (not MPI_IN_PLACE) are MPI_ERR_BUFFER before any
/// traffic, so the erring rank's correct retry still matches its peers' call (MPICH's
/// errors/coll/noalias* hung or passed the aliasing through).
#[test]
fn coll_aliased_buffers() {
    run_coll("coll_alias", &[]);
}

/// Collectives with derived datatypes (vector, column of a 2-D array, resized struct, and
/// mixed type maps with the same signature): data and holes checked byte for byte.
#[test]
fn coll_derived_datatypes() {
    run_coll("coll_dtypes", &[]);
}

/// MINLOC/MAXLOC on every predefined pair type (padded ones included) in every reduction
/// entry point at counts 0, 1, odd and >= 1 MiB, a predefined op on a vector of pairs, and
/// a non-commutative user op on a vector type in every reducing collective: values, owner
/// indices (ties to the lowest), padding and holes checked.
#[test]
fn reductions_on_pair_and_derived_types() {
    let _x = exclusive();
    let exe = compile("reduce_pairs");
    for np in 1..=5 {
        run_ok("reduce_pairs", &exe, np, &[]);
    }
}

/// MPI_REAL16 / MPI_COMPLEX32 reductions in quad precision, 1-5 ranks, up to 1.1 MB.
#[test]
fn reductions_in_quad_precision() {
    let exe = compile("reduce_quad");
    for np in [1, 2, 3, 4, 5] {
        run_ok("reduce_quad", &exe, np, &[]);
    }
}

/// A Jacobi stencil exchanging halo columns with `MPI_Type_vector` (Sendrecv, Isend/Irecv +
/// Waitall, and vector-to-contiguous), checked exactly against a serial run on every rank.
#[test]
fn stencil_halo_columns() {
    let exe = compile("stencil");
    for np in [1, 2, 3, 4, 8] {
        run_ok("stencil", &exe, np, &[]);
    }
}

/// Collectives on an intercommunicator (tests/c/inter_coll.c), at 2 to 5 ranks.
#[test]
fn inter_collectives() {
    let _x = exclusive();
    let exe = compile("inter_coll");
    for np in [1, 2, 3, 4, 5] {
        run_ok("inter_coll", &exe, np, &[]);
    }
}

/// The MPI-4.0 large-count collectives (`MPI_X_c`, `MPI_IX_c`, `MPI_X_init_c`, neighbourhood
/// ones included; tests/c/coll_large_count.c) on shared memory, over TCP and on two
/// "nodes"; at 2 ranks also a broadcast and an in-place allreduce of more than INT_MAX
/// bytes (2 GiB buffers; about 3 GB resident per rank).
#[test]
fn coll_large_count() {
    let _x = exclusive();
    let name = "coll_large_count";
    let exe = compile(name);
    let mut args = vec![];
    if !mpi().is_oxmpi {
        args.push("mpich-bugs");
    }
    for np in [1, 2, 3, 4, 8] {
        run_ok(name, &exe, np, &args);
    }
    for np in [2, 3, 4] {
        run_ok_env(name, &exe, np, &args, &[("OXMPI_TRANSPORT", "tcp")]);
    }
    run_ok_env(name, &exe, 4, &args, &[("OXMPI_PROCESS_MAPPING", "(vector,(0,2,2))")]);
    args.push("big");
    run_ok(name, &exe, 2, &args);
}
