//! Partitioned point-to-point communication (MPI-4.0 chapter 4): self-checking C programs
//! (tests/c/partitioned*.c) at 1 to 4 ranks, over shared memory, over TCP and with the
//! ranks on two "nodes". Set OXMPI_TEST_MPICC/OXMPI_TEST_MPIRUN to validate the programs
//! against another MPI.
mod common;
use common::*;

const TCP: (&str, &str) = ("OXMPI_TRANSPORT", "tcp");
const TWO_NODES: (&str, &str) = ("OXMPI_PROCESS_MAPPING", "(vector,(0,2,2))");

/// Different partition counts, Parrived handshakes (eager and rendezvous), non-contiguous
/// types, Pready_range/list, init-order matching, polling completion, MPI_PROC_NULL.
#[test]
fn partitioned() {
    let exe = compile("partitioned");
    for np in [1, 2, 3, 4] {
        run_ok("partitioned", &exe, np, &[]);
    }
    run_ok_env("partitioned", &exe, 2, &[], &[TCP]);
    run_ok_env("partitioned", &exe, 4, &[], &[TCP]);
    run_ok_env("partitioned", &exe, 4, &[], &[TWO_NODES]);
}

/// Empty and small partitions: none is reported arrived before its send partition is ready.
#[test]
fn partitioned_empty() {
    let exe = compile("partitioned_empty");
    for np in [1, 2, 3] {
        run_ok("partitioned_empty", &exe, np, &[]);
    }
    run_ok_env("partitioned_empty", &exe, 2, &[], &[TCP]);
    run_ok_env("partitioned_empty", &exe, 4, &[], &[TWO_NODES]);
}

/// MPI_Pready from 4 threads, MPI_Parrived from 2 threads while the main thread waits.
#[test]
fn partitioned_threads() {
    let exe = compile("partitioned_threads");
    for np in [2, 3, 4] {
        run_ok("partitioned_threads", &exe, np, &[]);
    }
    run_ok_env("partitioned_threads", &exe, 2, &[], &[TCP]);
    run_ok_env("partitioned_threads", &exe, 4, &[], &[TWO_NODES]);
}

/// Erroneous calls report their error classes; mismatched sizes fail the receive.
#[test]
fn partitioned_errors() {
    let exe = compile("partitioned_errors");
    run_ok("partitioned_errors", &exe, 2, &[]);
    run_ok_env("partitioned_errors", &exe, 2, &[], &[TCP]);
}
