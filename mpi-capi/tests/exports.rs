//! Every function of the API spec is exported by libmpi.so as MPI_X and PMPI_X, together
//! with the data symbols of the MPICH ABI; the SONAME is libmpi.so.12; the generated files
//! are up to date with the spec.
mod common;
use common::*;
use std::collections::BTreeSet;
use std::process::Command;

fn dynamic_symbols() -> BTreeSet<String> {
    let out = run(Command::new("nm").args(["-D", "--defined-only"]).arg(libmpi()));
    out.lines().filter_map(|l| l.split_whitespace().nth(2)).map(str::to_string).collect()
}

#[test]
fn every_spec_function_is_exported_as_mpi_and_pmpi() {
    let syms = dynamic_symbols();
    let funcs = spec_functions();
    assert!(funcs.len() > 400, "spec has only {} functions", funcs.len());
    let missing: Vec<String> = funcs
        .iter()
        .flat_map(|f| [f.clone(), format!("P{f}")])
        .filter(|s| !syms.contains(s))
        .collect();
    assert!(missing.is_empty(), "not exported: {missing:?}");
}

#[test]
fn mpich_data_symbols_and_callbacks_are_exported() {
    let syms = dynamic_symbols();
    for s in [
        "MPI_UNWEIGHTED",
        "MPI_WEIGHTS_EMPTY",
        "MPIR_C_MPI_UNWEIGHTED",
        "MPIR_C_MPI_WEIGHTS_EMPTY",
        "MPI_F_STATUS_IGNORE",
        "MPI_F_STATUSES_IGNORE",
        "MPIR_F08_MPI_STATUS_IGNORE_OBJ",
        "MPIR_F08_MPI_STATUSES_IGNORE_OBJ",
        "MPIR_F08_MPI_IN_PLACE",
        "MPIR_F08_MPI_BOTTOM",
        "MPI_F08_STATUS_IGNORE",
        "MPI_F08_STATUSES_IGNORE",
        "MPI_T_PVAR_ALL_HANDLES",
        "MPIR_Dup_fn",
        "MPI_DUP_FN",
        "MPI_COMM_DUP_FN",
        "MPI_TYPE_DUP_FN",
        "MPI_WIN_DUP_FN",
    ] {
        assert!(syms.contains(s), "{s} is not exported");
    }
}

#[test]
fn no_mpi4_or_large_count_functions_in_spec() {
    for f in spec_functions() {
        assert!(!f.ends_with("_c"), "{f}: large-count variants are MPI-4");
        assert!(!f.starts_with("MPIX_") && !f.starts_with("MPI_Session_"), "{f} is not MPI-3.1");
    }
}

#[test]
fn soname_is_libmpi_so_12() {
    let out = run(Command::new("readelf").arg("-d").arg(libmpi()));
    assert!(out.contains("Library soname: [libmpi.so.12]"), "{out}");
}

#[test]
fn generated_files_are_up_to_date() {
    for gen in ["gen_abi.py", "gen_fortran.py", "gen_f08.py"] {
        run(Command::new("python3").arg(crate_dir().join("gen").join(gen)).arg("--check"));
    }
}
