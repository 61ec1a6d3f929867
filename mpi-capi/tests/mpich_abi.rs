//! ABI-level symbol coverage: a program compiled against MPICH's own mpi.h (`mpicc.mpich
//! -c`) that references every function of the spec and every data symbol MPICH's header
//! exposes links against our library under the name libmpich, and runs.
mod common;
use common::*;
use std::fmt::Write as _;
use std::process::Command;

#[test]
fn mpich_compiled_object_links_and_runs_against_our_library() {
    if !have("mpicc.mpich") {
        eprintln!("mpicc.mpich not installed (apt-get install mpich); skipping");
        return;
    }
    let dir = scratch("mpich-abi");
    let mut c = String::from("#include <mpi.h>\n#include <stdio.h>\n\nstatic void (*const funcs[])(void) = {\n");
    for f in spec_functions() {
        // MPICH defines the handle conversions (except MPI_File's) as macros.
        writeln!(c, "#ifndef {f}\n    (void (*)(void)){f},\n#endif").unwrap();
    }
    c.push_str(
        r#"};
static const void *data[] = {
    &MPI_UNWEIGHTED, &MPI_WEIGHTS_EMPTY, &MPI_F_STATUS_IGNORE, &MPI_F_STATUSES_IGNORE,
    &MPI_F08_STATUS_IGNORE, &MPI_F08_STATUSES_IGNORE, &MPIR_F08_MPI_STATUS_IGNORE_OBJ,
    MPIR_F08_MPI_STATUSES_IGNORE_OBJ, &MPIR_F08_MPI_IN_PLACE, &MPIR_F08_MPI_BOTTOM,
    &MPI_T_PVAR_ALL_HANDLES,
};

int main(void)
{
    int provided = -1, n = -1, flag = 0;
    void *in = &provided, *out = NULL;
    size_t i, nonnull = 0;
    double t0 = MPI_Wtime();
    for (i = 0; i < sizeof funcs / sizeof funcs[0]; i++) nonnull += funcs[i] != 0;
    for (i = 0; i < sizeof data / sizeof data[0]; i++) nonnull += data[i] != 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return 2;
    if (MPI_T_cvar_get_num(&n) != MPI_SUCCESS || n != 0) return 3;
    if (MPI_T_finalize() != MPI_SUCCESS) return 4;
    if (MPI_Aint_diff(MPI_Aint_add(100, 5), 100) != 5) return 5;
    if (MPI_COMM_DUP_FN(MPI_COMM_WORLD, 0, NULL, in, &out, &flag) != MPI_SUCCESS || out != in || flag != 1) return 6;
    if (MPI_Wtime() < t0 || MPI_Wtick() <= 0.0) return 7;
    if (MPI_UNWEIGHTED == MPI_WEIGHTS_EMPTY || MPI_UNWEIGHTED == NULL) return 8;
    printf("ok %zu\n", nonnull);
    return 0;
}
"#,
    );
    let src = dir.join("prog.c");
    std::fs::write(&src, c).unwrap();
    let obj = dir.join("prog.o");
    run(Command::new("mpicc.mpich").arg("-c").arg(&src).arg("-o").arg(&obj));

    // Present our library under MPICH's names, as the install tree does.
    for name in ["libmpich.so", "libmpich.so.12", "libmpi.so.12"] {
        std::os::unix::fs::symlink(libmpi(), dir.join(name)).unwrap();
    }
    let exe = dir.join("prog");
    run(Command::new("gcc")
        .arg(&obj)
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&dir)
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .arg("-lmpich"));
    let needed = run(Command::new("readelf").arg("-d").arg(&exe));
    assert!(needed.contains("[libmpi.so.12]"), "{needed}");
    let out = run(&mut Command::new(&exe));
    assert!(out.starts_with("ok "), "{out}");
}
