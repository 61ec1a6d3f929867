//! Communicators, groups, topologies, attributes, error handlers, info, threads and the
//! profiling interface: self-checking C programs (tests/c/{comm,group,topo,attr,errh,
//! info,threads,pmpi}_*.c) run through mpirun at several rank counts. Set
//! OXMPI_TEST_MPICC/OXMPI_TEST_MPIRUN to validate the programs against another MPI.
mod common;
use common::*;
use std::process::Command;

#[test]
fn comm_split() {
    run_program_all("comm_split", &[]);
}

/// Split, create and idup of an intercommunicator of two unequal groups, at 2 to 5 ranks.
#[test]
fn inter_comm() {
    let exe = compile("inter_comm");
    for np in [1, 2, 3, 4, 5] {
        run_ok("inter_comm", &exe, np, &[]);
    }
}

/// Nonblocking MPI_Comm_idup: progresses during other traffic (a blocking one deadlocks
/// in case 1), several outstanding beside other collectives, intercommunicators, cycles.
#[test]
fn comm_idup() {
    let exe = compile("comm_idup");
    for np in [1, 2, 3, 4, 5] {
        run_ok("comm_idup", &exe, np, &[]);
    }
}

/// 10 000 dup/free cycles at 2 ranks (the context-id pool has 3072 slots for agreements, so a leak
/// would exhaust it), fewer at 4 (oversubscribed on small machines).
#[test]
fn comm_dup_cycles() {
    let exe = compile("comm_dup_cycles");
    run_ok("comm_dup_cycles", &exe, 2, &["10000"]);
    run_ok("comm_dup_cycles", &exe, 4, &["3000"]);
}

#[test]
fn group_algebra() {
    run_program_all("group_algebra", &[]);
}

#[test]
fn topo_cart() {
    let exe = compile("topo_cart");
    for np in [1, 2, 3, 4, 6, 9] {
        run_ok("topo_cart", &exe, np, &[]);
    }
}

/// Neighbourhood collectives (all five, blocking, nonblocking, persistent) with vector and
/// resized datatypes on a periodic ring: every element and every gap checked.
#[test]
fn neighbor_noncontiguous_types() {
    run_program_all("neighbor_types", &[]);
}

#[test]
fn attr_callbacks() {
    run_program_all("attr_callbacks", &[]);
}

/// Failing attribute copy and delete callbacks on communicators, datatypes and windows:
/// dup fails with MPI_ERR_OTHER and a null handle (copies made are deleted again), a failed
/// delete keeps the attribute, a failed free keeps the object, and nothing leaks.
#[test]
fn attr_errors() {
    run_program_all("attr_errors", &[]);
}

#[test]
fn errh_user() {
    run_program_all("errh_user", &[]);
}

#[test]
fn info_basic() {
    let exe = compile("info_basic");
    for np in [1, 2] {
        run_ok("info_basic", &exe, np, &[]);
    }
}

/// 4 threads × 2 ranks for 10 s; a shorter run at 4 ranks (two pairs).
#[test]
fn threads_hammer() {
    let exe = compile("threads_hammer");
    let r = run_ok("threads_hammer", &exe, 2, &["10"]);
    eprintln!("{}", r.stdout.lines().find(|l| l.contains("messages")).unwrap_or(""));
    run_ok("threads_hammer", &exe, 4, &["2"]);
}

/// Communicator constructors from 4 threads per rank, each thread on its own parent, with
/// a lock-held MPI_Comm_dup(MPI_COMM_SELF) beside agreements still waiting for peers
/// (MPICH's threads/comm/comm_dup_deadlock and comm_create_group_threads hung here).
#[test]
fn comm_threads() {
    let exe = compile("comm_threads");
    for np in [1, 2, 3, 4] {
        run_ok("comm_threads", &exe, np, &[]);
    }
}

/// Builds the tool library and two programs: one linked with the tool, one without.
fn build_pmpi() -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let m = mpi();
    let src = workspace_root().join("tests/c");
    // One directory per compiler under test (the tool must match the library).
    let tag: String = m.mpicc.display().to_string().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("oxmpi-pmpi").join(tag);
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("libpmpitool.so");
    let linked = dir.join("pmpi_linked");
    let plain = dir.join("pmpi_plain");
    let cc = |args: &[&std::ffi::OsStr]| {
        let out = Command::new(&m.mpicc).args(args).output().expect("run mpicc");
        assert!(out.status.success(), "mpicc {args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    };
    cc(&["-shared".as_ref(), "-fPIC".as_ref(), "-o".as_ref(), lib.as_os_str(), src.join("pmpi_tool.c").as_os_str()]);
    let rpath = format!("-Wl,-rpath,{}", dir.display());
    let ldir = format!("-L{}", dir.display());
    let prog = src.join("pmpi_interpose.c");
    cc(&["-O2".as_ref(), "-o".as_ref(), linked.as_os_str(), prog.as_os_str(), ldir.as_ref(), "-lpmpitool".as_ref(), rpath.as_ref(), "-ldl".as_ref()]);
    cc(&["-O2".as_ref(), "-o".as_ref(), plain.as_os_str(), prog.as_os_str(), "-ldl".as_ref()]);
    (lib, linked, plain)
}

/// A tool defining MPI_Send/MPI_Isend/MPI_Barrier and calling PMPI_* sees exactly the
/// program's calls: linked before libmpi, and through LD_PRELOAD.
#[test]
fn pmpi_interpose() {
    let (lib, linked, plain) = build_pmpi();
    let name = "pmpi_interpose";
    for np in [1, 2, 3] {
        run_ok(name, &linked, np, &["linked"]);
        run_ok(name, &plain, np, &["none"]);
        let preload = format!("preload={}", lib.display());
        run_ok(name, &plain, np, &[&preload]);
    }
}
