//! The library's PMI-2 client end to end, through our own mpirun (whose PMI server speaks
//! PMI-1 and PMI-2 on the same fd): `OXMPI_PMI=2` forces PMI-2. C programs at 1, 2 and 4
//! ranks, two fake nodes (`-launcher fork -hosts a:2,b:2`: shm inside a node, TCP between
//! them, from the node map PMI-2's `PMI_process_mapping` gives), MPI_Abort, the protocol
//! choice (PMI-1 stays the default under our mpirun), and the singleton guard for programs
//! started by `srun` without a PMI server. Slurm itself: tests/slurm/.
mod common;
use common::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const PMI2: (&str, &str) = ("OXMPI_PMI", "2");
const VERBOSE: (&str, &str) = ("OXMPI_VERBOSE", "1");

fn env_of(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// The `OxMPI rank R/N on node …` line of every rank (OXMPI_VERBOSE=1), by rank.
fn verbose_lines(r: &RunResult, np: usize) -> Vec<String> {
    (0..np)
        .map(|rank| {
            let head = format!("OxMPI rank {rank}/{np} on node ");
            r.stderr
                .lines()
                .find(|l| l.starts_with(&head))
                .unwrap_or_else(|| panic!("no verbose line of rank {rank}\n{}", r.report()))
                .to_string()
        })
        .collect()
}

#[test]
fn programs_over_pmi2() {
    let _x = exclusive();
    let progs: [(&str, &[&str]); 5] = [
        ("ring", &[]),
        ("coll_all", &[]),
        ("send_modes", &[]),
        ("datatypes_p2p", &[]),
        ("pingpong_sizes", &["1", "8"]),
    ];
    for (name, args) in progs {
        let exe = compile(name);
        for np in [1, 2, 4] {
            run_ok_env(name, &exe, np, args, &[PMI2]);
        }
    }
}

/// Every rank reports PMI-2 and the job id our mpirun gave; one node: all shm.
#[test]
fn pmi2_is_what_runs() {
    let _x = exclusive();
    let exe = compile("ring");
    for np in [1, 2, 4] {
        let r = run_ok_env("ring", &exe, np, &[], &[PMI2, VERBOSE]);
        for (rank, line) in verbose_lines(&r, np).iter().enumerate() {
            assert!(line.contains("bootstrap PMI-2 (job oxmpi_"), "rank {rank}: {line}");
            assert!(line.starts_with(&format!("OxMPI rank {rank}/{np} on node 0 (")), "rank {rank}: {line}");
            if np > 1 {
                assert!(line.contains("(same node)") && !line.contains("tcp to"), "rank {rank}: {line}");
            }
        }
    }
}

/// Two fake nodes of two ranks: the node map from PMI-2 puts ranks 0-1 on node 0 and 2-3
/// on node 1, so each talks shm to its neighbour and TCP to the other node; programs with
/// collectives pass, and no shared-memory segment is left.
#[test]
fn two_fake_nodes_over_pmi2() {
    let _x = exclusive();
    let before = oxmpi_shm_entries();
    let hosts = ["-launcher", "fork", "-hosts", "a:2,b:2"];
    let opts = |exe_args: &[&str], env: &[(&str, &str)]| RunOpts {
        np: 4,
        args: exe_args.iter().map(|s| s.to_string()).collect(),
        env: env_of(env),
        launcher_args: hosts.iter().map(|s| s.to_string()).collect(),
        launcher_timeout: Some(60),
        ..Default::default()
    };
    let exe = compile("ring");
    let r = run(&exe, opts(&[], &[PMI2, VERBOSE]));
    assert!(r.success() && r.stdout.contains("ring: OK"), "{}", r.report());
    let lines = verbose_lines(&r, 4);
    let want = [(0, "shm to 1 (same node)", "tcp to 2-3 (other nodes"), (0, "shm to 0 (same node)", "tcp to 2-3 (other nodes"), (1, "shm to 3 (same node)", "tcp to 0-1 (other nodes"), (1, "shm to 2 (same node)", "tcp to 0-1 (other nodes")];
    for (rank, (node, shm, tcp)) in want.iter().enumerate() {
        let line = &lines[rank];
        assert!(line.starts_with(&format!("OxMPI rank {rank}/4 on node {node} (")), "rank {rank}: {line}");
        assert!(line.contains(shm) && line.contains(tcp), "rank {rank}: {line}");
        assert!(line.contains("bootstrap PMI-2 (job oxmpi_"), "rank {rank}: {line}");
    }
    for name in ["coll_all", "send_modes", "reduce_pairs"] {
        let exe = compile(name);
        let r = run(&exe, opts(&[], &[PMI2]));
        assert!(r.success() && r.stdout.contains(&format!("{name}: OK")), "{name}\n{}", r.report());
        assert!(r.leftovers.is_empty(), "{name}: processes left\n{}", r.report());
        eprintln!("{name} on a:2,b:2 over PMI-2: ok in {:.2} s", r.elapsed.as_secs_f64());
    }
    let after = oxmpi_shm_entries();
    assert!(after.iter().all(|e| before.contains(e)), "segments left in /dev/shm: {after:?}");
}

/// MPI_Abort over PMI-2 ends the whole job quickly with a non-zero status. (PMI-2's
/// `abort` carries no exit code: our mpirun reports 1 unless it sees the rank's own exit
/// status 7 first; Slurm reports 137.)
#[test]
fn abort_over_pmi2() {
    let _x = exclusive();
    let exe = compile("abort");
    for np in [1, 2, 4] {
        let r = run(&exe, RunOpts { np, env: env_of(&[PMI2]), launcher_timeout: Some(60), ..Default::default() });
        eprintln!("abort -n {np} over PMI-2: {} in {:.2} s", r.status_text(), r.elapsed.as_secs_f64());
        assert!(!r.success() && r.code().is_some_and(|c| c != 0), "abort -n {np}\n{}", r.report());
        assert!(r.elapsed <= Duration::from_secs(10), "abort -n {np}: slow\n{}", r.report());
        assert!(!r.stderr.contains("UNEXPECTED"), "abort -n {np}\n{}", r.report());
        assert!(r.leftovers.is_empty(), "abort -n {np}: processes left\n{}", r.report());
    }
}

/// Under our mpirun the default is PMI-1 (and `OXMPI_PMI=1`/`PMI_VERSION` pick it too);
/// a version OxMPI does not speak is a one-line error naming the fix.
#[test]
fn protocol_choice() {
    let _x = exclusive();
    let exe = compile("ring");
    for env in [&[VERBOSE][..], &[VERBOSE, ("OXMPI_PMI", "1")], &[VERBOSE, ("PMI_VERSION", "2"), ("OXMPI_PMI", "1")]] {
        let r = run_ok_env("ring", &exe, 2, &[], env);
        for line in verbose_lines(&r, 2) {
            assert!(line.contains("bootstrap PMI-1 (job oxmpi_"), "{env:?}: {line}");
        }
    }
    let r = run(&exe, RunOpts { np: 2, env: env_of(&[("OXMPI_PMI", "3")]), launcher_timeout: Some(60), ..Default::default() });
    assert!(!r.success(), "{}", r.report());
    let line = r.stderr.lines().find(|l| l.contains("OXMPI_PMI=3")).unwrap_or_else(|| panic!("no message\n{}", r.report()));
    assert!(line.contains("set OXMPI_PMI=1 or OXMPI_PMI=2"), "{line}");
    assert!(r.leftovers.is_empty(), "{}", r.report());
}

/// Run `exe` directly (no launcher), with the launcher-ish variables of the test removed
/// and `env` added, under a deadline.
fn run_direct(exe: &std::path::Path, env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(exe);
    for (k, _) in std::env::vars() {
        if ["PMI_", "SLURM_", "PMIX_", "OMPI_", "OXMPI_PMI"].iter().any(|p| k.starts_with(p)) {
            cmd.env_remove(&k);
        }
    }
    cmd.envs(env.iter().copied()).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start the program");
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("{} hung with {env:?}", exe.display());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// What `srun` sets under `--mpi=none` and `--mpi=pmix` (research notes, §2): one line
/// naming `--mpi=pmi2`, never a silent singleton; a batch script's own step and a
/// one-task PMIx step are singletons.
#[test]
fn singleton_guard_under_srun_variables() {
    let _x = exclusive();
    let exe = compile("ring");
    let none = [("SLURM_JOB_ID", "5"), ("SLURM_STEP_ID", "0"), ("SLURM_NTASKS", "2"), ("SLURM_STEP_NUM_TASKS", "2"), ("SLURM_PROCID", "1")];
    let pmix = [("SLURM_JOB_ID", "6"), ("SLURM_MPI_TYPE", "pmix"), ("SLURM_STEP_NUM_TASKS", "2"), ("PMIX_RANK", "0"), ("PMIX_NAMESPACE", "slurm.pmix.6.0")];
    for (what, env, want) in [("--mpi=none", &none[..], "srun --mpi=pmi2"), ("--mpi=pmix", &pmix[..], "`srun --mpi=pmix`")] {
        let (code, out, err) = run_direct(&exe, env);
        assert!(code.is_some_and(|c| c != 0), "{what}: exit {code:?}\n{out}{err}");
        let lines: Vec<&str> = err.lines().filter(|l| l.contains("OxMPI")).collect();
        assert_eq!(lines.len(), 1, "{what}: want one line\n{err}");
        assert!(lines[0].contains(want) && lines[0].contains("srun --mpi=pmi2"), "{what}: {}", lines[0]);
        assert!(!out.contains("ring: OK"), "{what}: ran as a singleton\n{out}");
    }
    let batch = [("ENVIRONMENT", "BATCH"), ("SLURM_JOB_ID", "12"), ("SLURM_NTASKS", "4"), ("SLURM_PROCID", "0")];
    let pmix1 = [("SLURM_MPI_TYPE", "pmix"), ("SLURM_STEP_NUM_TASKS", "1"), ("PMIX_RANK", "0")];
    for (what, env) in [("batch step", &batch[..]), ("srun -n 1 --mpi=pmix", &pmix1[..])] {
        let (code, out, err) = run_direct(&exe, env);
        assert!(code == Some(0) && out.contains("ring: OK"), "{what}: exit {code:?}\n{out}{err}");
    }
}
