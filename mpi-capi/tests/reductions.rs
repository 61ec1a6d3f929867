//! Reductions through the C ABI: a C program (tests/c/reductions.c) run as a singleton
//! calls MPI_Reduce_local on predefined ops and types (long double, complex, pair types),
//! a non-commutative user op, MPI_Op_create/free/commutative, and checks the errors.
mod common;
use common::*;
use std::process::Command;

#[test]
fn c_program_reduces_locally() {
    let dir = scratch("reductions");
    let exe = dir.join("reductions");
    // The library's soname is libmpi.so.12: present it under that name too.
    std::os::unix::fs::symlink(libmpi(), dir.join("libmpi.so.12")).unwrap();
    run(Command::new("cc")
        .arg("-std=c99")
        .arg("-Wall")
        .arg(crate_dir().join("tests/c/reductions.c"))
        .arg("-I")
        .arg(include_dir())
        .arg("-L")
        .arg(libmpi().parent().unwrap())
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .arg("-lmpi")
        .arg("-o")
        .arg(&exe));
    // A singleton: no launcher environment.
    let out = run(Command::new(&exe).env_remove("PMI_FD").env_remove("PMI_PORT").env_remove("PMI_RANK"));
    assert_eq!(out, "ok\n");
}
