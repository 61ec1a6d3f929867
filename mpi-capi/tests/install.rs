//! scripts/install-tree.sh lays out a relocatable, idempotent install tree whose mpicc
//! compiles and links MPI programs (with an rpath) and whose `-show` prints the real command.
mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn install(prefix: &Path, build: &Path, cwd: &Path) {
    let script = crate_dir().join("../scripts/install-tree.sh");
    run(Command::new("bash").arg(script).arg(prefix).arg(build).current_dir(cwd));
}

/// A build directory as install-tree.sh reads it (`libmpi.so`, `include/`, `mpirun`), made
/// from where this test's build left them: `cargo test` keeps the library in `deps/`.
fn staged_build() -> PathBuf {
    let stage = scratch("install-build");
    std::fs::copy(libmpi(), stage.join("libmpi.so")).expect("copy libmpi.so");
    std::os::unix::fs::symlink(include_dir(), stage.join("include")).expect("link include/");
    let mpirun = profile_dir().join("mpirun");
    if mpirun.is_file() {
        std::fs::copy(&mpirun, stage.join("mpirun")).expect("copy mpirun");
    }
    stage
}

#[test]
fn install_tree_layout_wrappers_and_linking() {
    let build = staged_build();
    let dir = scratch("install");
    // A relative PREFIX, installed twice (idempotent).
    install(Path::new("inst"), &build, &dir);
    install(Path::new("inst"), &build, &dir);
    let prefix = dir.join("inst").canonicalize().unwrap();

    for f in ["bin/mpicc", "bin/mpicxx", "include/mpi.h", "include/mpio.h", "lib/libmpi.so.12", "lib/pkgconfig/mpi.pc"] {
        assert!(prefix.join(f).is_file(), "{f} missing");
    }
    for (link, target) in [("lib/libmpi.so", "libmpi.so.12"), ("lib/libmpich.so.12", "libmpi.so.12")] {
        assert_eq!(std::fs::read_link(prefix.join(link)).unwrap(), Path::new(target), "{link}");
    }
    if prefix.join("bin/mpirun").exists() {
        assert_eq!(std::fs::read_link(prefix.join("bin/mpiexec")).unwrap(), Path::new("mpirun"));
    }

    let mpicc = prefix.join("bin/mpicc");
    let p = prefix.display().to_string();
    let show = run(Command::new(&mpicc).args(["-show", "x.c", "-o", "x"]));
    assert!(show.starts_with("gcc "), "{show}");
    for part in [format!("-I{p}/include"), format!("-L{p}/lib"), format!("-Wl,-rpath,{p}/lib"), "-lmpi".into()] {
        assert!(show.contains(&part), "`{part}` not in `{show}`");
    }
    let show_c = run(Command::new(&mpicc).args(["-show", "-c", "x.c"]));
    assert!(show_c.contains(&format!("-I{p}/include")) && !show_c.contains("-lmpi"), "{show_c}");
    let with_cc = run(Command::new(&mpicc).env("MPICC_CC", "cc").arg("-show"));
    assert!(with_cc.starts_with("cc "), "{with_cc}");
    assert!(run(Command::new(&mpicc).arg("-link-info")).contains("-lmpi"));
    assert!(!run(Command::new(&mpicc).arg("-compile-info")).contains("-lmpi"));

    // A program using spawn (linked only) and one that runs without MPI_Init.
    let src = dir.join("spawn.c");
    std::fs::write(
        &src,
        r#"#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    MPI_Comm child;
    double t = MPI_Wtime();
    if (argc > 1) {
        MPI_Init(&argc, &argv);
        MPI_Comm_spawn("true", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &child, MPI_ERRCODES_IGNORE);
        MPI_Finalize();
    }
    printf("wtime %s\n", t > 0.0 ? "ok" : "bad");
    return 0;
}
"#,
    )
    .unwrap();
    let exe = dir.join("spawn");
    run(Command::new(&mpicc).arg(&src).arg("-o").arg(&exe));
    assert_eq!(run(Command::new(&exe).env_remove("LD_LIBRARY_PATH")), "wtime ok\n");

    // mpicxx compiles C++.
    let cxx = dir.join("hello.cc");
    std::fs::write(&cxx, "#include <mpi.h>\n#include <cstdio>\nint main() { std::printf(\"%d\\n\", MPI_VERSION); return MPI_Wtick() > 0 ? 0 : 1; }\n")
        .unwrap();
    let cxx_exe = dir.join("hello");
    run(Command::new(prefix.join("bin/mpicxx")).arg(&cxx).arg("-o").arg(&cxx_exe));
    assert_eq!(run(&mut Command::new(&cxx_exe)), "4\n");

    // pkg-config.
    if have("pkg-config") {
        let cflags = run(Command::new("pkg-config")
            .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
            .args(["--cflags", "--libs", "mpi"]));
        assert!(cflags.contains(&format!("-I{p}/include")) && cflags.contains("-lmpi"), "{cflags}");
    }
}
