//! `mpirun` inside a Slurm allocation, without Slurm: the allocation is a set of
//! environment variables (as salloc/sbatch set them) and `srun` is a stand-in script on
//! PATH that starts the command once per node of `--nodelist` on this machine, like
//! slurmstepd would, last node first and with `SLURM_NODEID`/`SLURM_PROCID` in that reversed
//! order (so mpirun must tell its proxies apart by node name). It records its command
//! line, whether the job secret was in its environment, and its stdin.
//!
//! Covered: hosts and slots from `SLURM_JOB_NODELIST`/`SLURM_TASKS_PER_NODE`, `-n` from the
//! allocation, the one srun and its options, the ranks' environment (the node's Slurm
//! variables, none of the leaked task/step/PMI ones, no proxy secret), C programs across
//! the fake nodes, exit statuses and failure lines, srun failing, bad allocation variables
//! (one line each), and `-launcher fork` inside an allocation. `tests/slurm/` runs the
//! same launcher against a real Slurm.
mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const FAKE_SRUN: &str = r#"#!/bin/bash
# Stand-in for Slurm's srun (tests/tests/slurm_launcher.rs).
{
    printf '%s\n' "$@"
    echo "secret-in-env=${OXMPI_PROXY_SECRET:+yes}"
    echo "stdin=$(readlink /proc/$$/fd/0)"
} >"$FAKE_SRUN_LOG"
if [ -n "$FAKE_SRUN_FAIL" ]; then
    echo "srun: error: fake srun refuses" >&2
    exit 1
fi
nodes=
while [ $# -gt 0 ]; do
    case $1 in
    --nodelist=*) nodes=${1#--nodelist=} ;;
    -*) ;;
    *) break ;;
    esac
    shift
done
IFS=, read -ra list <<<"$nodes"
pids=()
id=0
for ((i = ${#list[@]} - 1; i >= 0; i--)); do
    SLURMD_NODENAME=${list[i]} SLURM_TOPOLOGY_ADDR=${list[i]} SLURM_NODEID=$id SLURM_PROCID=$id \
        SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=${#list[@]} "$@" </dev/null &
    pids+=($!)
    id=$((id + 1))
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=$?; done
exit $rc
"#;

/// Variables that would change what mpirun does: removed from what it inherits.
fn inherited_to_drop() -> Vec<String> {
    std::env::vars()
        .map(|(k, _)| k)
        .filter(|k| ["SLURM", "PMI_", "PMIX_", "OXMPI_LAUNCHER"].iter().any(|p| k.starts_with(p)))
        .collect()
}

/// A fake allocation of nodes fk1, fk2 with its srun, and a copy of the mpirun under
/// test (other test programs running at the same time end every proxy of *their* mpirun
/// when they look for leftovers).
struct Alloc {
    dir: PathBuf,
    log: PathBuf,
    env: Vec<(String, String)>,
    mpirun: PathBuf,
}

impl Alloc {
    fn new(tag: &str) -> Alloc {
        let dir = std::env::temp_dir().join(format!("oxmpi-slurm-{tag}-{}", std::process::id()));
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let srun = bin.join("srun");
        std::fs::write(&srun, FAKE_SRUN).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&srun, std::fs::Permissions::from_mode(0o755)).unwrap();
        let log = dir.join("srun.log");
        let mpirun = bin.join("mpirun");
        std::fs::copy(&mpi().mpirun, &mpirun).unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
        let env = [
            ("PATH", path.as_str()),
            ("FAKE_SRUN_LOG", &log.display().to_string()),
            ("SLURM_JOB_ID", "4242"),
            ("SLURM_JOB_NODELIST", "fk[1-2]"),
            ("SLURM_TASKS_PER_NODE", "2(x2)"),
            ("SLURM_JOB_CPUS_PER_NODE", "8(x2)"),
            // What a batch step, an outer srun or PMI server leave to mpirun: not the ranks'.
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "4"),
            ("SLURM_NODEID", "0"),
            ("SLURMD_NODENAME", "fk1"),
            ("SLURM_STEP_NUM_TASKS", "4"),
            ("SLURM_MPI_TYPE", "pmi2"),
            ("PMI_JOBID", "4242.0"),
            ("PMIX_RANK", "0"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        Alloc { dir, log, env, mpirun }
    }

    fn set(&mut self, k: &str, v: &str) {
        self.env.retain(|(n, _)| n != k);
        self.env.push((k.into(), v.into()));
    }

    fn unset(&mut self, k: &str) {
        self.env.retain(|(n, _)| n != k);
    }

    /// `env -u` for inherited variables this allocation does not set.
    fn prefix(&self) -> Vec<String> {
        let mut p = vec!["env".to_string()];
        for k in inherited_to_drop() {
            if !self.env.iter().any(|(n, _)| *n == k) {
                p.extend(["-u".to_string(), k]);
            }
        }
        p
    }

    fn opts(&self, np: usize, launcher_args: &[&str], args: &[&str]) -> RunOpts<'_> {
        RunOpts {
            launcher: Some(&self.mpirun),
            np,
            args: args.iter().map(|s| s.to_string()).collect(),
            launcher_args: launcher_args.iter().map(|s| s.to_string()).collect(),
            env: self.env.clone(),
            prefix: self.prefix(),
            launcher_timeout: Some(60),
            hard_timeout: Duration::from_secs(90),
            ..Default::default()
        }
    }

    fn srun_log(&self) -> Option<String> {
        std::fs::read_to_string(&self.log).ok()
    }

    /// A copy of a system tool under a name of its own (the harness looks for leftover
    /// processes by executable).
    fn tool(&self, name: &str) -> PathBuf {
        let src = which(name).unwrap_or_else(|| panic!("{name} not found"));
        let dst = self.dir.join(format!("ox-{name}"));
        std::fs::copy(src, &dst).unwrap();
        dst
    }
}

impl Drop for Alloc {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Only for OxMPI's mpirun, one test at a time (the harness's leftover check ends every
/// proxy of that mpirun, a concurrent test's too).
fn serial() -> Option<std::sync::MutexGuard<'static, ()>> {
    mpi().is_oxmpi.then(exclusive)
}

fn no_leftovers(what: &str, r: &RunResult, exe: &Path) {
    assert!(r.leftovers.is_empty(), "{what}: processes left behind\n{}", r.report());
    assert!(processes_running(exe).is_empty(), "{what}: {} still running", exe.display());
}

/// Hosts, slots and -n from the allocation; one srun with the options that matter; the
/// ranks' environment.
#[test]
fn allocation_srun_and_rank_environment() {
    let Some(_x) = serial() else { return };
    let a = Alloc::new("env");
    let env = a.tool("env");
    let r = run(&env, a.opts(0, &["-l"], &[]));
    assert!(r.success(), "env in a fake allocation\n{}", r.report());
    let has = |rank: usize, line: &str| r.stdout.lines().any(|l| l == format!("[{rank}] {line}"));
    for rank in 0..4 {
        let node = if rank < 2 { "fk1" } else { "fk2" };
        for want in [
            format!("PMI_RANK={rank}"),
            "PMI_SIZE=4".into(),
            "MPI_LOCALNRANKS=2".into(),
            format!("SLURMD_NODENAME={node}"),
            format!("SLURM_TOPOLOGY_ADDR={node}"),
            "SLURM_JOB_ID=4242".into(),
            "SLURM_JOB_NODELIST=fk[1-2]".into(),
        ] {
            assert!(has(rank, &want), "rank {rank} lacks {want}\n{}", r.report());
        }
        for leaked in ["SLURM_PROCID", "SLURM_NTASKS", "SLURM_NODEID", "SLURM_STEP_NUM_TASKS", "SLURM_STEP_ID", "SLURM_MPI_TYPE", "PMI_JOBID", "PMIX_RANK", "OXMPI_PROXY_SECRET"] {
            assert!(!r.stdout.lines().any(|l| l.starts_with(&format!("[{rank}] {leaked}="))), "rank {rank} sees {leaked}\n{}", r.report());
        }
    }
    no_leftovers("env", &r, &env);
    let log = a.srun_log().expect("srun was not run");
    let args: Vec<&str> = log.lines().collect();
    for want in ["--mpi=none", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--nodelist=fk1,fk2", "--input=none", "--kill-on-bad-exit=1", "--export=ALL", "--oxmpi-proxy", "slurm", "secret-in-env=yes", "stdin=/dev/null"] {
        assert!(args.contains(&want), "srun got no {want}: {log}");
    }
    let secret = r.stdout.lines().find_map(|l| l.strip_prefix("[0] OXMPI_JOB_SECRET=")).expect("ranks get the job secret");
    assert!(!log.contains(secret), "the job secret is on srun's command line: {log}");
}

/// C programs across the two fake nodes: shm inside a node, TCP between them, and the
/// placement the allocation asks for (`-n` smaller than the slots uses fewer nodes).
#[test]
fn programs_across_fake_nodes() {
    let Some(_x) = serial() else { return };
    let a = Alloc::new("progs");
    let ring = compile("ring");
    let r = run(&ring, a.opts(0, &[], &[]));
    assert!(r.success() && r.stdout.contains("ring: OK (4 ranks"), "ring\n{}", r.report());
    no_leftovers("ring", &r, &ring);
    let wh = compile("where");
    let r = run(&wh, a.opts(3, &[], &[]));
    assert!(r.success() && r.stdout.contains("where: OK (3 ranks)"), "where\n{}", r.report());
    for (rank, local) in [(0, "0/2"), (1, "1/2"), (2, "0/1")] {
        assert!(r.stdout.lines().any(|l| l.starts_with(&format!("where: rank {rank} host ")) && l.ends_with(&format!("local {local}"))), "rank {rank} not {local}\n{}", r.report());
    }
    // -n 2 fills fk1's two slots: srun starts one proxy, on fk1.
    let r = run(&wh, a.opts(2, &[], &[]));
    assert!(r.success(), "where -n 2\n{}", r.report());
    let log = a.srun_log().unwrap();
    assert!(log.lines().any(|l| l == "--nodelist=fk1") && log.lines().any(|l| l == "--nodes=1"), "{log}");
    no_leftovers("where", &r, &wh);
}

/// Exit statuses and failure lines as outside Slurm; srun failing before the proxies
/// connect is one line that names srun.
#[test]
fn failures_under_srun() {
    let Some(_x) = serial() else { return };
    let mut a = Alloc::new("fail");
    let sh = a.tool("sh");
    let r = run(&sh, a.opts(4, &[], &["-c", "if [ \"$PMI_RANK\" = 2 ]; then exit 3; fi; sleep 30"]));
    assert_eq!(r.code(), Some(3), "rank exit code\n{}", r.report());
    assert!(r.stderr.contains("rank 2 (pid ") && r.stderr.contains(" on fk2) exited with code 3"), "{}", r.report());
    assert!(r.elapsed < Duration::from_secs(10), "{}", r.report());
    no_leftovers("exit 3", &r, &sh);

    let abort = compile("abort");
    let r = run(&abort, a.opts(4, &[], &[]));
    assert_eq!(r.code(), Some(7), "MPI_Abort\n{}", r.report());
    assert!(r.stderr.contains("called MPI_Abort with code 7"), "{}", r.report());
    no_leftovers("abort", &r, &abort);

    a.set("FAKE_SRUN_FAIL", "1");
    let r = run(&abort, a.opts(4, &[], &[]));
    assert!(!r.success() && r.elapsed < Duration::from_secs(10), "srun failing\n{}", r.report());
    assert!(r.stderr.contains("fake srun refuses"), "srun's own message is shown\n{}", r.report());
    let line = r.stderr.lines().find(|l| l.starts_with("mpirun:")).unwrap_or_default();
    assert!(line.contains("cannot start the proxy on fk") && line.contains("srun --mpi=none") && line.contains("exited with code 1 before the proxy connected"), "{}", r.report());
    assert_eq!(r.stderr.lines().filter(|l| l.starts_with("mpirun:")).count(), 1, "{}", r.report());
    no_leftovers("srun failing", &r, &abort);
}

/// Bad allocation variables and launcher choices: one line each, nothing started.
#[test]
fn allocation_errors() {
    let Some(_x) = serial() else { return };
    let t = which("true").unwrap();
    let cases: Vec<(&[(&str, Option<&str>)], &[&str], &str)> = vec![
        (&[("SLURM_JOB_NODELIST", Some("fk[1-"))], &[], "cannot read the Slurm host list `fk[1-`: `[` without `]`"),
        (&[("SLURM_TASKS_PER_NODE", Some("2(x3)"))], &[], "gives 3 counts for the 2 nodes"),
        (&[("SLURM_TASKS_PER_NODE", Some("2(x"))], &[], "cannot read SLURM_TASKS_PER_NODE=`2(x`"),
        (&[("SLURM_JOB_NODELIST", None)], &[], "SLURM_JOB_NODELIST is not"),
        (&[], &["-hosts", "fk9"], "host fk9 is not a node of Slurm job 4242 (fk1,fk2)"),
        (&[("SLURM_JOB_ID", None)], &["-launcher", "slurm", "-hosts", "fk1,fk2"], "-launcher slurm needs a Slurm allocation"),
    ];
    for (vars, args, want) in cases {
        let mut a = Alloc::new("err");
        for (k, v) in vars {
            match v {
                Some(v) => a.set(k, v),
                None => a.unset(k),
            }
        }
        let prefix = a.prefix();
        let out = Command::new(&prefix[0]).args(&prefix[1..]).envs(a.env.iter().map(|(k, v)| (k, v))).arg(&a.mpirun).args(args).arg(&t).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.code() == Some(2) && err.contains(want), "{vars:?} {args:?}: expected exit 2 and {want:?}, got {:?}: {err}", out.status);
        assert_eq!(err.lines().count(), 1, "{vars:?} {args:?}: one line, got: {err}");
        assert!(a.srun_log().is_none(), "{vars:?} {args:?}: srun ran");
    }
}

/// `-launcher fork` (or ssh) inside an allocation takes the allocation's hosts and does
/// not use srun.
#[test]
fn other_launcher_inside_allocation() {
    let Some(_x) = serial() else { return };
    let a = Alloc::new("fork");
    let wh = compile("where");
    let r = run(&wh, a.opts(0, &["-launcher", "fork"], &[]));
    assert!(r.success() && r.stdout.contains("where: OK (4 ranks)"), "where -launcher fork\n{}", r.report());
    assert!(r.stdout.contains("where: rank 3 host ") && r.stdout.lines().any(|l| l.starts_with("where: rank 3 ") && l.ends_with("local 1/2")), "{}", r.report());
    assert!(a.srun_log().is_none(), "srun ran under -launcher fork");
    no_leftovers("where", &r, &wh);
}
