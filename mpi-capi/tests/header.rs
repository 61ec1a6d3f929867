//! The generated mpi.h compiles cleanly as C99 (-Wall -Wextra -pedantic -Werror) and as C++,
//! its constants work in switch labels and static initialisers, and a program using it links
//! against libmpi.so.
mod common;
use common::*;
use std::process::Command;

fn source() -> std::path::PathBuf {
    crate_dir().join("tests/c/header_check.c")
}

#[test]
fn header_compiles_as_pedantic_c99() {
    let out = scratch("header-c").join("header_check.o");
    run(Command::new("gcc")
        .args(["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-c"])
        .arg("-I")
        .arg(include_dir())
        .arg(source())
        .arg("-o")
        .arg(out));
}

#[test]
fn header_compiles_as_cxx() {
    let out = scratch("header-cxx").join("header_check.o");
    run(Command::new("g++")
        .args(["-std=c++11", "-Wall", "-Wextra", "-pedantic", "-Werror", "-x", "c++", "-c"])
        .arg("-I")
        .arg(include_dir())
        .arg(source())
        .arg("-o")
        .arg(out));
}

#[test]
fn program_using_header_links_against_libmpi() {
    let dir = scratch("header-link");
    let main = dir.join("main.c");
    std::fs::write(&main, "int header_check(int, char **);\nint main(int c, char **v) { return header_check(c, v); }\n")
        .unwrap();
    let lib_dir = libmpi().parent().unwrap().to_path_buf();
    run(Command::new("gcc")
        .arg("-I")
        .arg(include_dir())
        .arg(source())
        .arg(&main)
        .arg("-o")
        .arg(dir.join("prog"))
        .arg("-L")
        .arg(&lib_dir)
        .arg("-lmpi"));
}

#[test]
fn handle_constants_are_typed_hex_casts() {
    let h = std::fs::read_to_string(include_dir().join("mpi.h")).unwrap();
    for line in [
        "#define MPI_INT ((MPI_Datatype)0x4c000405)",
        "#define MPI_COMM_WORLD ((MPI_Comm)0x44000000)",
        "#define MPI_FLOAT_INT ((MPI_Datatype)0x8c000000)",
        "#define MPI_SUM ((MPI_Op)0x58000003)",
        "#define MPI_UNDEFINED (-32766)",
        "#define MPI_VERSION 4",
        "#define MPI_SUBVERSION 0",
        "typedef int MPI_Comm_copy_attr_function(MPI_Comm, int, void*, void*, void*, int*);",
        "int MPI_Pcontrol(const int level, ...);",
    ] {
        assert!(h.contains(line), "mpi.h lacks `{line}`");
    }
    assert!(!h.contains("#define MPICH"), "mpi.h must not pretend to be MPICH");
}
