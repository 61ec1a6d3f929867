//! Self-checking Fortran MPI programs (tests/f/), compiled with the mpifort under test and
//! run with its mpirun at -n 1, 2, 3 and 4. Each `.F90` program is built twice: with
//! `-DUSE_MPIF_H` (`include 'mpif.h'`) and without (`use mpi`); `hello77.f` is fixed-form
//! FORTRAN 77. Every program prints "<name>: OK" from rank 0 when all its checks passed.
//!
//! mpifort under test: `OXMPI_TEST_MPIFORT` (e.g. `mpifort.mpich`, together with
//! `OXMPI_TEST_MPIRUN=mpiexec.mpich`, to validate the programs against MPICH), else
//! `$OXMPI_PREFIX/bin/mpifort`, else `<workspace>/install/bin/mpifort`.
mod common;
use common::*;

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// Rank counts every Fortran program runs at.
const FRANKS: &[usize] = &[1, 2, 3, 4];

fn prefix() -> PathBuf {
    std::env::var_os("OXMPI_PREFIX")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("install"))
}

fn mpifort() -> &'static PathBuf {
    static FC: OnceLock<PathBuf> = OnceLock::new();
    FC.get_or_init(|| match std::env::var("OXMPI_TEST_MPIFORT") {
        Ok(v) if !v.is_empty() => which(&v)
            .unwrap_or_else(|| panic!("OXMPI_TEST_MPIFORT={v}: not a file and not on PATH")),
        _ => {
            let p = prefix().join("bin/mpifort");
            assert!(
                p.is_file(),
                "mpifort not found at {}: run `make install` with gfortran installed \
                 (scripts/install-deps.sh), or set OXMPI_PREFIX / OXMPI_TEST_MPIFORT",
                p.display()
            );
            p
        }
    })
}

fn build_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let fc = mpifort();
        let mut h = DefaultHasher::new();
        fs::canonicalize(fc).unwrap_or(fc.clone()).hash(&mut h);
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("oxmpi-f-tests")
            .join(format!("{:012x}", h.finish() & 0xffff_ffff_ffff));
        fs::create_dir_all(&dir).expect("create Fortran build dir");
        dir
    })
}

fn mtime(p: &Path) -> Option<std::time::SystemTime> {
    fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Compile `tests/f/<src>` into `<out>` with the mpifort under test (plus `extra` flags);
/// reuse the program when it is newer than the source, mpifort, mpif.h and mpi.mod.
fn compile_f(src: &str, out: &str, extra: &[&str]) -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let source = workspace_root().join("tests/f").join(src);
    assert!(source.is_file(), "missing test source {}", source.display());
    let exe = build_dir().join(out);
    let inc = prefix().join("include");
    let interface = workspace_root().join("tests/f/mpi_interface.h");
    let inputs = [source.clone(), interface, mpifort().clone(), inc.join("mpif.h"), inc.join("mpi.mod")];
    let newest = inputs.iter().filter_map(|p| mtime(p)).max();
    if let (Some(built), Some(newest)) = (mtime(&exe), newest) {
        if built > newest {
            return exe;
        }
    }
    let tmp = build_dir().join(format!(".{out}.{}.tmp", std::process::id()));
    let output = Command::new(mpifort())
        .args(["-O1", "-Wall", "-Wno-unused-dummy-argument"])
        .args(extra)
        .arg("-o")
        .arg(&tmp)
        .arg(&source)
        .current_dir(build_dir())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", mpifort().display()));
    if !output.status.success() {
        panic!(
            "compiling {} with {} {:?} failed ({}):\n{}{}",
            source.display(),
            mpifort().display(),
            extra,
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    fs::rename(&tmp, &exe).expect("rename compiled program");
    exe
}

/// Build `tests/f/<name>.F90` in both forms and run each at every rank count.
fn run_both(name: &str) {
    for (suffix, flags) in [("mpif_h", &["-DUSE_MPIF_H"][..]), ("use_mpi", &[][..])] {
        let exe = compile_f(&format!("{name}.F90"), &format!("{name}_{suffix}"), flags);
        for &np in FRANKS {
            run_ok(name, &exe, np, &[]);
        }
    }
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
        for needle in [inc.as_str(), rpath.as_str(), "-lmpi", "x.f90"] {
            assert!(text.contains(needle), "{w} -show: no {needle:?} in {text:?}");
        }
    }
    let inc = prefix().join("include");
    assert!(inc.join("mpif.h").is_file() && inc.join("mpi.mod").is_file());
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
}
