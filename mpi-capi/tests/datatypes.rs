//! Derived datatypes through the C ABI: a C program (tests/c/datatypes.c) builds struct,
//! vector, subarray and absolute-address types, packs and unpacks them, and checks the
//! queries; it needs no MPI_Init for these calls.
mod common;
use common::*;
use std::process::Command;

#[test]
fn c_program_uses_derived_datatypes() {
    let dir = scratch("datatypes");
    let exe = dir.join("datatypes");
    // The library's soname is libmpi.so.12: present it under that name too.
    std::os::unix::fs::symlink(libmpi(), dir.join("libmpi.so.12")).unwrap();
    let lib = dir.clone();
    run(Command::new("cc")
        .arg("-std=c99")
        .arg("-Wall")
        .arg(crate_dir().join("tests/c/datatypes.c"))
        .arg("-I")
        .arg(include_dir())
        .arg("-L")
        .arg(libmpi().parent().unwrap())
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lmpi")
        .arg("-o")
        .arg(&exe));
    assert_eq!(run(&mut Command::new(&exe)), "ok\n");
}
