//! Self-checking MPI C programs (tests/c/*.c), compiled with the mpicc under
//! test and run with its mpirun at -n 1, 2, 3, 4 and 8. Each program verifies
//! its own data and exits non-zero (or calls MPI_Abort) on any mismatch.
mod common;
use common::*;

#[test]
fn ring() {
    run_program_all("ring", &[]);
}

#[test]
fn pingpong_sizes() {
    // Two iterations per size up to 1 MiB, one above: every size 0 B..16 MiB
    // crossing every protocol threshold, still a few seconds at 8 ranks.
    run_program_all("pingpong_sizes", &["2"]);
}

#[test]
fn send_modes() {
    run_program_all("send_modes", &[]);
}

#[test]
fn wildcard_order() {
    run_program_all("wildcard_order", &[]);
}

/// MPI_Recv already waiting when its message arrives: every way the request-free
/// blocking receive can end, and matching order against an earlier MPI_Irecv.
#[test]
fn blocking_recv() {
    run_program_all("blocking_recv", &[]);
}

/// MPI_Alloc_mem / MPI_Free_mem: alignment (and the MPI 4.1 alignment info key), blocks
/// carrying messages, and the error classes of bad sizes, info handles and frees.
#[test]
fn alloc_mem() {
    run_program_all("alloc_mem", &[]);
}

/// Waits that sleep at once on the doorbell, with a sleep bound far beyond the launcher's
/// timeout: a sender that fails to wake a sleeping receiver hangs the job. Both wake-up
/// schemes: fenceless senders with the sleeper's `membarrier` (the default where the
/// kernel offers it) and a fence per message. (Dropping the sleeper's membarrier while
/// senders stay fenceless hung 3 runs of 6 at 2 ranks.)
#[test]
fn sleep_wake() {
    for membarrier in ["1", "0"] {
        let env = [
            ("OXMPI_SPIN_COUNT", "0"),
            ("OXMPI_YIELD_COUNT", "0"),
            ("OXMPI_SLEEP_MAX_US", "600000000"),
            ("OXMPI_SHM_MEMBARRIER", membarrier),
        ];
        run_program_all_env("sleep_wake", &[], &env);
    }
}

/// Generalized requests through every completion function, cancel, free and errors; then
/// with every wait asleep at once and unbounded sleeps, so the wake-up
/// `MPI_Grequest_complete` gives a waiting thread is what ends its wait.
#[test]
fn grequest() {
    run_program_all("grequest", &[]);
    let env = [("OXMPI_SPIN_COUNT", "0"), ("OXMPI_YIELD_COUNT", "0"), ("OXMPI_SLEEP_MAX_US", "600000000")];
    run_program_all_env("grequest", &[], &env);
}

/// Messages pushed through the ring without waiting for the receiver (`FLAG_PUSH`), with
/// the default limits (pushes only when oversubscribed).
#[test]
fn pushed() {
    run_program_all("pushed", &[]);
}

/// Memory unmapped, remapped at the same address, freed and reallocated, or dropped with
/// madvise between sends (what a registration cache must notice), and floods of eager
/// messages before the receiver posts anything (what credit flow control must survive).
#[test]
fn memory_reuse_and_eager_floods() {
    run_program_all("reg_reuse", &[]);
    run_program_all("credit_flood", &[]);
}

/// Every pushed path forced at every rank count, up to 1 MiB: the program's own checks
/// (including that such a send completes before its receive is posted), plus the size
/// sweep, collectives, wildcard order and datatype programs carried by pushes.
#[test]
fn pushed_forced() {
    let env = [("OXMPI_SHM_PUSH_MAX", "1048576"), ("OXMPI_OSUB_PUSH_MAX", "1048576")];
    run_program_all_env("pushed", &[], &env);
    run_program_all_env("pingpong_sizes", &["2"], &env);
    run_program_all_env("coll_all", &[], &env);
    run_program_all_env("wildcard_order", &[], &env);
    run_program_all_env("datatypes_p2p", &[], &env);
}

/// Every rank on one CPU (`taskset -c 0`): each is oversubscribed and shares its CPU with
/// all others, so small messages are pushed and every large message of a bcast, scatter,
/// gather or reduce is written by its sender (`FLAG_ROOTED`) instead of read.
#[test]
fn one_cpu() {
    use std::os::unix::fs::PermissionsExt;
    let m = mpi();
    let wrapper = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpirun-on-cpu0");
    std::fs::write(&wrapper, format!("#!/bin/sh\nexec taskset -c 0 '{}' \"$@\"\n", m.mpirun.display())).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    for name in ["pushed", "coll_all", "coll_dtypes"] {
        let exe = compile(name);
        for np in [3, 4] {
            let r = run(&exe, RunOpts { np, launcher: Some(&wrapper), ..Default::default() });
            assert!(r.success() && r.stdout.contains(&format!("{name}: OK")), "{name} -n {np} on one CPU failed\n{}", r.report());
        }
    }
}

/// The CPUs this process may run on (`Cpus_allowed_list`), as numbers in text.
fn allowed_cpus() -> Vec<String> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).expect("Cpus_allowed_list").trim().to_string();
    list.split(',')
        .flat_map(|part| match part.split_once('-') {
            Some((a, b)) => (a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap()).map(|c| c.to_string()).collect::<Vec<_>>(),
            None => vec![part.to_string()],
        })
        .collect()
}

/// Nonblocking polls in a loop on an oversubscribed host (4 ranks on 2 CPUs: mpirun
/// under `taskset`): two ranks ping-pong 10 000 times while the two that share their
/// CPUs poll for a message with MPI_Iprobe, MPI_Improbe, MPI_Test, Testany, Testall,
/// Testsome, MPI_Request_get_status, MPI_Parrived or MPI_Win_test. A poll that finds
/// nothing must give the CPU away: otherwise each message waits for the poller's time
/// slice and the job runs minutes (past the 10 s limit; it takes well under a second).
#[test]
fn poll_loops_oversubscribed() {
    use std::os::unix::fs::PermissionsExt;
    let m = mpi();
    if !m.is_oxmpi {
        return;
    }
    let _x = exclusive();
    let first_two = allowed_cpus().into_iter().take(2).collect::<Vec<_>>().join(",");
    let wrapper = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("mpirun-on-two-cpus");
    std::fs::write(&wrapper, format!("#!/bin/sh\nexec taskset -c {first_two} '{}' \"$@\"\n", m.mpirun.display())).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let exe = compile("poll_loops");
    for mode in ["iprobe", "improbe", "test", "testany", "testall", "testsome", "get_status", "parrived", "win_test"] {
        let r = run(&exe, RunOpts { np: 4, args: vec![mode.to_string()], launcher: Some(&wrapper), launcher_timeout: Some(10), ..Default::default() });
        assert!(r.success() && r.stdout.contains(&format!("poll_loops {mode}: OK")), "polling with {mode} on 2 CPUs\n{}", r.report());
    }
}

/// Each rank confined to one CPU of its own by the launcher (as `srun --cpu-bind=cores`
/// does; here a wrapper runs `taskset -c <CPU of PMI_RANK>`): results must not change,
/// whether the ranks share CPUs (more ranks than CPUs) or not.
#[test]
fn per_rank_cpu_masks() {
    use std::os::unix::fs::PermissionsExt;
    let cpus = allowed_cpus();
    let wrapper = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("one-cpu-per-rank");
    let script = format!("#!/bin/sh\nset -- {}\nshift $((PMI_RANK % $#))\nexec taskset -c \"$1\" \"$OXMPI_TEST_PROGRAM\"\n", cpus.join(" "));
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    for name in ["coll_all", "pushed"] {
        let exe = compile(name);
        for np in [2, 4] {
            let env = vec![("OXMPI_TEST_PROGRAM".to_string(), exe.display().to_string())];
            let r = run(&wrapper, RunOpts { np, env, ..Default::default() });
            assert!(r.success() && r.stdout.contains(&format!("{name}: OK")), "{name} -n {np}, one CPU per rank, failed\n{}", r.report());
        }
    }
}

/// Where local ranks are bound (OXMPI_BIND): a share of the CPUs each (one CPU at one rank
/// per CPU), one CPU each when they outnumber the CPUs, unbound alone or when they
/// outnumber the CPUs and asked for MPI_THREAD_MULTIPLE (their threads need room).
#[test]
fn binding() {
    if !mpi().is_oxmpi {
        eprintln!("binding: skipped (OxMPI's placement)");
        return;
    }
    let exe = compile("binding");
    for mode in ["single", "multiple"] {
        for np in [1, 2, 3, 4] {
            run_ok("binding", &exe, np, &[mode]);
        }
    }
}

/// MPI_Barrier synchronises (no rank leaves before the last enters), on world, duplicates,
/// halves and overlapping pairs, and across 200 communicator free/create cycles.
#[test]
fn barrier_sync() {
    run_program_all("barrier_sync", &[]);
}

#[test]
fn probe_persistent_cancel() {
    run_program_all("probe_persistent_cancel", &[]);
}

#[test]
fn sendrecv() {
    run_program_all("sendrecv", &[]);
}

/// MPI-4.0's MPI_Comm_idup_with_info and MPI_Info_create_env.
#[test]
fn mpi4_comm_info() {
    run_program_all("mpi4_comm_info", &[]);
}

/// MPI-4.1's additions: status field accessors, MPI_Request_get_status_any/all/some,
/// MPI_Type_get_value_index, MPI_Remove_error_*, MPI_Get_hw_resource_info, and the
/// buffered-send buffers of communicators (MPI_BUFFER_AUTOMATIC, flush, iflush, free).
#[test]
fn mpi41_api() {
    run_program_all("mpi41_api", &[]);
}

/// MPI-4.0's MPI_T event interface (no events exist) and mpi_f08 status conversions.
#[test]
fn mpi4_tool_status() {
    run_program_all("mpi4_tool_status", &[]);
}

/// MPI-4.0's MPI_Isendrecv and MPI_Isendrecv_replace.
#[test]
fn isendrecv() {
    run_program_all("isendrecv", &[]);
}

#[test]
fn errors_return() {
    run_program_all("errors", &[]);
}

/// Which handler argument errors run (MPICH's: an unset one follows MPI_COMM_WORLD's), and
/// the classes MPICH gives them.
#[test]
fn errors_args() {
    run_program_all("errors_args", &[]);
}

/// Messages from a rank to itself at 0 B–1 MiB: unexpected and posted, in order across
/// modes and wildcards, probes and matched probes, sendrecv (a vector on one side) and
/// replace, truncation, Issend completion, cancel.
#[test]
fn self_messages() {
    run_program_all("self_messages", &[]);
}

/// A send's completion leaves the user status's source, tag and count alone (as MPICH;
/// MPICH's irsendf reads a receive's status from one MPI_Waitany buffer shared with a
/// send): every send kind (an eager MPI_Isend completed at once among them) through every
/// wait, test and get_status call.
#[test]
fn send_status() {
    run_program_all("send_status", &[]);
}

/// Long copies whose destination lies just past the source modulo 4 KiB (OxMPI copies
/// those backwards): one-sided gets and puts, pack/unpack and collectives' local copies
/// at every such distance, every byte and the bytes around checked.
#[test]
fn copy_distances() {
    run_program_all("copy_distances", &[]);
}

#[test]
fn datatypes_basic() {
    run_program_all("datatypes_basic", &[]);
}

/// External32: every predefined type's size (C long and wchar_t narrower than in memory),
/// the exact big-endian bytes, round trips, pairs and a mixed struct.
#[test]
fn pack_external32() {
    run_program_all("pack_external32", &[]);
}

/// Empty blocks (blocklength 0) first, in the middle, last or only, at displacements that
/// would overflow if placed: construction, bounds, pack/unpack and a ring exchange.
#[test]
fn zero_blocks() {
    run_program_all("zero_blocks", &[]);
}

/// Structs with MPI_LB / MPI_UB markers: a marker sets only its own bound (a struct of an
/// MPI_LB marker alone has ub 0), as MPICH computes them.
#[test]
fn struct_markers() {
    run_program_all("struct_markers", &[]);
}

/// MPI_Type_get_name of every predefined type (aliased handles report MPICH's name), and
/// names set on predefined and derived types.
#[test]
fn type_names() {
    run_program_all("type_names", &[]);
}

/// MPIX_C_FLOAT16: queries, point-to-point through a vector, pack, reductions.
#[test]
fn float16() {
    run_program_all("float16", &[]);
}

#[test]
fn init_misc() {
    run_program_all("init_misc", &[]);
}

/// An invalid call under MPI_ERRORS_ARE_FATAL ends the job: non-zero exit,
/// a message about the invalid rank, and the call never returns.
#[test]
fn errors_fatal() {
    let exe = compile("errors_fatal");
    for np in [1, 3] {
        let r = run(
            &exe,
            RunOpts {
                np,
                launcher_timeout: Some(60),
                ..Default::default()
            },
        );
        assert!(
            !r.hard_timed_out,
            "errors_fatal -n {np} hung\n{}",
            r.report()
        );
        assert!(
            !r.success(),
            "errors_fatal -n {np}: exit status 0 after an invalid MPI_Send under \
             MPI_ERRORS_ARE_FATAL\n{}",
            r.report()
        );
        assert!(
            !r.stdout.contains("UNEXPECTED"),
            "errors_fatal -n {np}: the invalid call returned\n{}",
            r.report()
        );
        // Loose wording check: a line saying the rank is invalid (MPICH: "Invalid
        // rank has value 3 ..."), or the class name. Hydra sometimes loses the
        // output of a rank that aborts while its peers are torn down, so for
        // other launchers an empty stderr is tolerated; OxMPI must deliver it.
        let all = format!("{}\n{}", r.stderr, r.stdout).to_lowercase();
        let named = all.contains("mpi_err_rank")
            || all
                .lines()
                .any(|l| l.contains("invalid") && l.contains("rank"));
        let lost_by_other_launcher = !mpi().is_oxmpi && r.stderr.trim().is_empty();
        if lost_by_other_launcher {
            eprintln!("errors_fatal -n {np}: launcher forwarded no stderr; wording not checked");
        }
        assert!(
            named || lost_by_other_launcher,
            "errors_fatal -n {np}: the error message does not mention the invalid rank\n{}",
            r.report()
        );
        assert!(
            r.leftovers.is_empty(),
            "errors_fatal -n {np}: processes left\n{}",
            r.report()
        );
        eprintln!(
            "errors_fatal -n {np}: failed as expected in {:.2} s",
            r.elapsed.as_secs_f64()
        );
    }
}

/// Derived datatypes in point-to-point: staged (small) and streamed (large) paths.
#[test]
fn datatypes_p2p() {
    run_program_all("datatypes_p2p", &[]);
}

/// MPI-4.0's large-count (`_c`) point-to-point, datatype, pack/unpack, status, buffered
/// send buffer and user-op functions, with types and statuses beyond INT_MAX; at 2 ranks
/// also one real message of 2^31 + 8 bytes (about 5 s); over TCP and mixed shm/TCP too.
#[test]
fn large_count() {
    let exe = compile("large_count");
    for np in [1, 2, 3, 4] {
        run_ok("large_count", &exe, np, &[]);
    }
    run_ok("large_count", &exe, 2, &["big"]);
    run_ok_env("large_count", &exe, 4, &[], &[("OXMPI_TRANSPORT", "tcp")]);
    run_ok_env("large_count", &exe, 4, &[], &[("OXMPI_PROCESS_MAPPING", "(vector,(0,2,2))")]);
}

/// Build probes that do not call `mpicc` (rsmpi's `build-probe-mpi`, Meson) ask pkg-config
/// for `mpich` or `mpi`: both name our install, and a program built with plain `gcc` and
/// those flags runs under our mpirun. `mpicc -compile_info` / `-link_info` (MPICH's forms)
/// print the halves of `-show`.
#[test]
fn pkg_config_and_show_forms() {
    if !mpi().is_oxmpi {
        eprintln!("pkg_config_and_show_forms: skipped (not OxMPI)");
        return;
    }
    let prefix = std::path::Path::new(&mpi().mpicc).parent().unwrap().parent().unwrap().to_path_buf();
    let inc = format!("-I{}", prefix.join("include").display());
    let out = |cmd: &mut std::process::Command| {
        let o = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
        assert!(o.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let compile_info = out(std::process::Command::new(&mpi().mpicc).arg("-compile_info"));
    let link_info = out(std::process::Command::new(&mpi().mpicc).arg("-link_info"));
    assert!(compile_info.contains(&inc) && !compile_info.contains("-lmpi"), "-compile_info: {compile_info}");
    assert!(link_info.contains(&inc) && link_info.contains("-lmpi"), "-link_info: {link_info}");
    let src = workspace_root().join("tests/c/ring.c");
    for name in ["mpich", "mpi"] {
        let flags = out(std::process::Command::new("pkg-config").args(["--cflags", "--libs", name]).env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig")));
        assert!(flags.contains(&inc) && flags.contains(" -lmpi"), "pkg-config {name}: {flags}");
        let exe = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ring-pkg-config-{name}"));
        let mut cc = std::process::Command::new("gcc");
        cc.arg("-O1").arg(format!("-I{}", workspace_root().join("tests/c").display())).arg("-o").arg(&exe).arg(&src);
        cc.args(flags.split_whitespace());
        out(&mut cc);
        // run_ok wants the program's own "ring: OK" line.
        run_ok("ring", &exe, 3, &[]);
    }
}
