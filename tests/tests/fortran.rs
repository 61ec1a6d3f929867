//! Self-checking Fortran MPI programs (tests/f/), compiled with the mpifort under test and
//! run with its mpirun at -n 1, 2, 3 and 4. Each `.F90` program is built twice: with
//! `-DUSE_MPIF_H` (`include 'mpif.h'`) and without (`use mpi`); `hello77.f` is fixed-form
//! FORTRAN 77; the `f08_*.F90` programs use `mpi_f08` only. Every program prints
//! "<name>: OK" from rank 0 when all its checks passed.
//!
//! mpifort under test: `OXMPI_TEST_MPIFORT` (e.g. `mpifort.mpich`, together with
//! `OXMPI_TEST_MPIRUN=mpiexec.mpich`, to validate the programs against MPICH), else
//! `$OXMPI_PREFIX/bin/mpifort`, else `<workspace>/install/bin/mpifort`.
mod common;
use common::fortran::*;
use common::*;

use std::process::{Command, Stdio};

/// Rank counts every Fortran program runs at.
const FRANKS: &[usize] = &[1, 2, 3, 4];


/// Build `tests/f/<name>.F90` in both forms and run each at every rank count.
fn run_both(name: &str) {
    for (suffix, flags) in [("mpif_h", &["-DUSE_MPIF_H"][..]), ("use_mpi", &[][..])] {
        let exe = compile_f(&format!("{name}.F90"), &format!("{name}_{suffix}"), flags);
        for &np in FRANKS {
            run_ok(name, &exe, np, &[]);
        }
    }
}

/// Build `tests/f/<name>.F90` (a `use mpi_f08` program) and run it at every rank count.
fn run_f08(name: &str) {
    let exe = compile_f(&format!("{name}.F90"), name, &[]);
    for &np in FRANKS {
        run_ok(name, &exe, np, &[]);
    }
}

/// MPI_Comm_spawn from Fortran (argv list, MPI_ARGV_NULL, errcodes and
/// MPI_ERRCODES_IGNORE), in both `mpif.h` and `use mpi` forms.
#[test]
fn comm_spawn() {
    if !mpi().is_oxmpi {
        return;
    }
    run_both("spawn");
}

/// `use mpi_f08`: point-to-point with TYPE(MPI_Status) fields, MPI_Get_count, the status
/// sentinels, nonblocking requests and MPI_Waitall.
#[test]
fn f08_point_to_point() {
    run_f08("f08_pt2pt");
}

/// `use mpi_f08`: collectives with MPI_IN_PLACE, split/dup handles compared with ==, a
/// vector datatype, MPI_Op_create with an f08 MPI_User_function.
#[test]
fn f08_collectives_communicators_user_op() {
    run_f08("f08_coll");
}

/// `use mpi_f08`: attribute callbacks (MPI_COMM_DUP_FN, user copy/delete), error classes
/// through ierror, an f08 error handler, MPI_Sizeof, status conversions.
#[test]
fn f08_attributes_errors_sizeof() {
    run_f08("f08_attr_err");
}

/// `use mpi_f08` profiling: a program's own MPI_Send_f08ts (the specific of the generic
/// MPI_Send) sees the module's MPI_Send calls and forwards them through PMPI_Send.
#[test]
fn f08_profiling_specific_names() {
    run_f08("f08_profile");
}

/// `use mpi_f08` with array sections as buffers (MPI_SUBARRAYS_SUPPORTED): nonblocking,
/// persistent, one-sided and file I/O calls use non-contiguous sections in place (strided,
/// reversed, 3-D prefixes, COMPLEX as REAL pairs, derived-type components), blocking calls
/// through a copy, and the sections OxMPI refuses give MPI_ERR_BUFFER.
#[test]
fn f08_array_sections() {
    run_f08("f08_sections");
}

/// `use mpi_f08` large counts: MPI_X with INTEGER(KIND=MPI_COUNT_KIND) counts resolves to
/// MPI_X_c (point-to-point, collectives with count/displacement arrays, a datatype of more
/// than 2**31 bytes, PMPI_ names, MPI_Type_get_extent_c, MPI_ERR_COUNT).
#[test]
fn f08_large_count() {
    run_f08("f08_large_count");
}

/// `use mpi_f08`, MPI-4.0 sessions without MPI_Init: TYPE(MPI_Session), process sets, a
/// communicator from a group, a session's error class.
#[test]
fn f08_sessions() {
    run_f08("f08_session");
}

/// The MPI-4.0 routines: Isendrecv(_replace), persistent collectives, Comm_idup_with_info,
/// Info_create_env.
#[test]
fn mpi4_routines() {
    run_both("mpi4");
}

/// The MPI-4.1 routines: status accessors, MPI_Request_get_status_any/all/some,
/// MPI_Type_get_value_index, a communicator's buffered-send buffer.
#[test]
fn mpi41_routines() {
    run_both("mpi41");
}

/// MPI-4.0 partitioned communication: MPI_Psend_init/MPI_Precv_init (an MPI_COUNT_KIND
/// count), MPI_Pready, MPI_Pready_range, MPI_Pready_list, MPI_Parrived (a LOGICAL flag).
#[test]
fn partitioned() {
    run_both("partitioned");
}

/// The same through `use mpi_f08` (TYPE(MPI_Request), MPI_Startall, MPI_Waitall).
#[test]
fn f08_partitioned() {
    run_f08("f08_partitioned");
}

#[test]
fn hello_processor_name() {
    run_both("hello");
}

#[test]
fn hello_fortran77_fixed_form() {
    let exe = compile_f("hello77.f", "hello77", &[]);
    for &np in FRANKS {
        let r = run_ok("hello77", &exe, np, &[]);
        assert_eq!(
            r.stdout.matches("F77 hello from rank").count(),
            np,
            "one greeting per rank expected\n{}",
            r.report()
        );
    }
}

#[test]
fn ring_status_fields() {
    run_both("ring");
}

#[test]
fn nonblocking_waitall_statuses_ignore() {
    run_both("nonblocking");
}

#[test]
fn allreduce_types_and_in_place() {
    run_both("allreduce");
}

#[test]
fn derived_type_vector() {
    run_both("vector");
}

#[test]
fn comm_split() {
    run_both("split");
}

#[test]
fn error_class_and_string() {
    run_both("errors");
}

#[test]
fn alloc_mem_c_f_pointer() {
    run_both("alloc_mem");
}

#[test]
fn kind_types_match_size_and_f90() {
    run_both("kind_types");
}

#[test]
fn mpi1_types_integer_addresses() {
    run_both("mpi1_types");
}

#[test]
fn info_strings_blanks_and_absent_keys() {
    run_both("info_strings");
}

#[test]
fn grequest_fortran_callbacks() {
    run_both("grequest");
}

#[test]
fn module_accepts_what_mpich_accepts() {
    run_both("module_compat");
}

/// `mpifort -show` prints the real command line: our include dir (mpif.h, mpi.mod), the
/// library with an rpath; mpif77 and mpif90 are the same wrapper.
#[test]
fn mpifort_show() {
    if std::env::var("OXMPI_TEST_MPIFORT").map(|v| !v.is_empty()).unwrap_or(false) {
        eprintln!("mpifort_show: skipped (not OxMPI's mpifort)");
        return;
    }
    let bin = prefix().join("bin");
    for w in ["mpifort", "mpif77", "mpif90"] {
        let out = Command::new(bin.join(w))
            .args(["-show", "-o", "x", "x.f90"])
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {w}: {e}"));
        assert!(out.status.success(), "{w} -show failed");
        let text = String::from_utf8_lossy(&out.stdout);
        let inc = format!("-I{}", prefix().join("include").display());
        let rpath = format!("-Wl,-rpath,{}", prefix().join("lib").display());
        for needle in [inc.as_str(), rpath.as_str(), "-lmpi_fortran", "-lmpi", "x.f90"] {
            assert!(text.contains(needle), "{w} -show: no {needle:?} in {text:?}");
        }
    }
    let inc = prefix().join("include");
    assert!(inc.join("mpif.h").is_file() && inc.join("mpi.mod").is_file() && inc.join("mpi_f08.mod").is_file());
    assert!(prefix().join("lib/libmpi_fortran.so").is_file());
}

/// The Fortran programs over TCP (`OXMPI_TRANSPORT=tcp`): point-to-point, nonblocking,
/// collectives, derived types and communicators through the network transport.
#[test]
fn fortran_over_tcp() {
    for name in ["ring", "nonblocking", "allreduce", "vector", "split"] {
        let exe = compile_f(&format!("{name}.F90"), &format!("{name}_use_mpi"), &[]);
        for np in [2, 3, 4] {
            run_ok_env(name, &exe, np, &[], &[("OXMPI_TRANSPORT", "tcp")]);
        }
    }
    for name in ["f08_pt2pt", "f08_coll"] {
        let exe = compile_f(&format!("{name}.F90"), name, &[]);
        for np in [2, 3, 4] {
            run_ok_env(name, &exe, np, &[], &[("OXMPI_TRANSPORT", "tcp")]);
        }
    }
}
