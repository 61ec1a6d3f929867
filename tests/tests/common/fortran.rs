//! Compiling the Fortran test programs (`tests/f/*.F90`) with the mpifort under test,
//! shared by `fortran.rs` and `rma.rs`.

use super::*;
use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};

pub fn prefix() -> PathBuf {
    std::env::var_os("OXMPI_PREFIX")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("install"))
}

pub fn mpifort() -> &'static PathBuf {
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

pub fn build_dir() -> &'static PathBuf {
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

pub fn mtime(p: &Path) -> Option<std::time::SystemTime> {
    fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Compile `tests/f/<src>` into `<out>` with the mpifort under test (plus `extra` flags);
/// reuse the program when it is newer than the source, mpifort, mpif.h and the modules.
pub fn compile_f(src: &str, out: &str, extra: &[&str]) -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let source = workspace_root().join("tests/f").join(src);
    assert!(source.is_file(), "missing test source {}", source.display());
    let exe = build_dir().join(out);
    let inc = prefix().join("include");
    let interface = workspace_root().join("tests/f/mpi_interface.h");
    let f08_fail = workspace_root().join("tests/f/f08_fail.h");
    let inputs = [source.clone(), interface, f08_fail, mpifort().clone(), inc.join("mpif.h"), inc.join("mpi.mod"),
        inc.join("mpi_f08.mod")];
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
