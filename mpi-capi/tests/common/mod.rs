//! Helpers shared by the mpi-capi integration tests: where cargo put libmpi.so and mpi.h,
//! the function list of the API spec, and running commands.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::Command;

/// target/<profile>: the test binary lives in target/<profile>/deps.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    exe.parent().and_then(Path::parent).expect("target/<profile>").to_path_buf()
}

/// The built library: cargo copies it to target/<profile> on `cargo build`; a plain
/// `cargo test` leaves it in target/<profile>/deps only.
pub fn libmpi() -> PathBuf {
    let dir = profile_dir();
    [dir.join("libmpi.so"), dir.join("deps").join("libmpi.so")]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("libmpi.so not built in {}", dir.display()))
}

pub fn include_dir() -> PathBuf {
    let d = profile_dir().join("include");
    assert!(d.join("mpi.h").is_file(), "{}/mpi.h not generated", d.display());
    d
}

pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Names of all functions in gen/mpi31.txt.
pub fn spec_functions() -> Vec<String> {
    let spec = std::fs::read_to_string(crate_dir().join("gen/mpi31.txt")).expect("mpi31.txt");
    spec.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let open = l.find('(').expect("prototype has '('");
            l[..open].rsplit(|c: char| c.is_whitespace() || c == '*').next().unwrap().to_string()
        })
        .collect()
}

/// A fresh empty scratch directory under the profile directory.
pub fn scratch(name: &str) -> PathBuf {
    let d = profile_dir().join("test-scratch").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create scratch dir");
    d
}

/// Run a command, panicking with its output if it fails; returns stdout.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn have(tool: &str) -> bool {
    Command::new("sh").arg("-c").arg(format!("command -v {tool}")).output().map(|o| o.status.success()).unwrap_or(false)
}
