//! MPI-4.0 sessions: self-checking C programs (tests/c/session_*.c) at 1 to 4 ranks, then
//! over TCP and on two "nodes" (shared memory inside each, TCP between them). Set
//! OXMPI_TEST_MPICC/OXMPI_TEST_MPIRUN to validate the programs against another MPI.
mod common;
use common::*;

const TCP: (&str, &str) = ("OXMPI_TRANSPORT", "tcp");
/// Ranks 0-1 on "node 0", 2-3 on "node 1" (see over_tcp.rs).
const TWO_NODES: (&str, &str) = ("OXMPI_PROCESS_MAPPING", "(vector,(0,2,2))");

/// Runs `name` at 1 to 4 ranks, then (OxMPI's variables) over TCP at 2 and 4 ranks and at
/// 4 ranks on two nodes.
fn session_program(name: &str) {
    let exe = compile(name);
    for np in 1..=4 {
        run_ok(name, &exe, np, &[]);
    }
    if !mpi().is_oxmpi {
        return;
    }
    for np in [2, 4] {
        run_ok_env(name, &exe, np, &[], &[TCP]);
    }
    run_ok_env(name, &exe, 4, &[], &[TWO_NODES]);
}

/// Without MPI_Init: two sessions, process sets, communicators from mpi://WORLD and
/// mpi://SELF with checked traffic, a session again after the last one ended.
#[test]
fn session_basic() {
    session_program("session_basic");
}

/// Beside the World model: a session before MPI_Init, session error handlers, error
/// classes of bad input, a session outliving MPI_Finalize.
#[test]
fn session_world() {
    session_program("session_world");
}

/// Concurrent MPI_Comm_create_from_group over overlapping groups from two threads,
/// MPI_Intercomm_create_from_groups.
#[test]
fn session_comms() {
    session_program("session_comms");
}

/// MPI_Intercomm_create_from_groups (with MPI_Init too, see the program).
#[test]
fn session_inter() {
    session_program("session_inter");
}

/// Sessions started again after the last one ended (not under MPICH 4.0.2, which crashes
/// there).
#[test]
fn session_reinit() {
    session_program("session_reinit");
}

/// MPI 4.1 sessions' buffers: buffered sends on communicators made from a session (and
/// duplicated or split from one) use the session's buffer, the World Model's do not, a
/// communicator's own buffer comes first; detach, flush, iflush, finalize.
#[test]
fn session_bsend() {
    session_program("session_bsend");
}
