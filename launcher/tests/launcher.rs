//! End-to-end tests of `mpirun`: real processes, real PMI, real signals.
//!
//! The ranks are `oxmpi-pmi-probe` (a PMI client built on `mpi_core::bootstrap`) or shell
//! commands. Every job gets a unique `OXMPI_TEST_MARKER` in its ranks' environment so the
//! tests can prove, via /proc, that no process of the job survives mpirun. Timing bounds are
//! deliberately generous (the requirement is teardown within 2 s; we assert 5 s so a loaded
//! 2-core CI machine does not flake) and the measured time is printed.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const MPIRUN: &str = env!("CARGO_BIN_EXE_mpirun");
const PROBE: &str = env!("CARGO_BIN_EXE_oxmpi-pmi-probe");
/// Any single test job taking longer than this is killed and the test fails.
const WATCHDOG: Duration = Duration::from_secs(60);

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
    pid: u32,
    marker: String,
}

fn unique_marker() -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "t{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// Start `mpirun <args>` with a fresh marker in the ranks' environment.
fn spawn(args: &[&str], stdin: bool, env: &[(&str, &str)]) -> (std::process::Child, String) {
    let marker = unique_marker();
    let mut cmd = Command::new(MPIRUN);
    cmd.args(["-genv", "OXMPI_TEST_MARKER", &marker])
        .args(args)
        .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    (cmd.spawn().expect("cannot start mpirun"), marker)
}

/// Wait for a child with a watchdog; collect its output.
fn finish(
    mut child: std::process::Child,
    marker: String,
    input: Option<&str>,
    start: Instant,
) -> Run {
    let pid = child.id();
    if let Some(text) = input {
        let mut si = child.stdin.take().unwrap();
        si.write_all(text.as_bytes()).unwrap();
    }
    let done = Arc::new(AtomicBool::new(false));
    let d2 = done.clone();
    std::thread::spawn(move || {
        let until = Instant::now() + WATCHDOG;
        while Instant::now() < until {
            if d2.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: signalling the test's own child.
        unsafe {
            libc::kill(pid as i32, libc::SIGKILL);
        }
    });
    let mut out = String::new();
    let mut err = String::new();
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t = std::thread::spawn(move || {
        let mut e = String::new();
        se.read_to_string(&mut e).unwrap();
        e
    });
    so.read_to_string(&mut out).unwrap();
    err.push_str(&t.join().unwrap());
    let status = child.wait().unwrap();
    done.store(true, Ordering::SeqCst);
    Run {
        code: status.code(),
        stdout: out,
        stderr: err,
        elapsed: start.elapsed(),
        pid,
        marker,
    }
}

fn run_with(args: &[&str], input: Option<&str>, env: &[(&str, &str)]) -> Run {
    let start = Instant::now();
    let (child, marker) = spawn(args, input.is_some(), env);
    finish(child, marker, input, start)
}

fn run(args: &[&str]) -> Run {
    run_with(args, None, &[])
}

/// Live (non-zombie) processes whose environment carries `marker`.
fn processes_with_marker(marker: &str) -> Vec<i32> {
    let needle = format!("OXMPI_TEST_MARKER={marker}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(env) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if !env.split(|&b| b == 0).any(|v| v == needle.as_bytes()) {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .chars()
            .next();
        if state != Some('Z') {
            found.push(pid);
        }
    }
    found
}

/// Shared-memory files named after the job of mpirun `pid` (kvsname `oxmpi_<pid>_…`).
fn shm_files_of(pid: u32) -> Vec<String> {
    let prefix = format!("oxmpi-oxmpi_{pid}_");
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

fn assert_clean(r: &Run) {
    assert_eq!(
        processes_with_marker(&r.marker),
        Vec::<i32>::new(),
        "leftover processes"
    );
    assert_eq!(
        shm_files_of(r.pid),
        Vec::<String>::new(),
        "leftover /dev/shm files"
    );
}

fn assert_teardown(r: &Run, code: i32, needles: &[&str]) {
    eprintln!("teardown took {:?}; stderr: {}", r.elapsed, r.stderr.trim());
    assert_eq!(r.code, Some(code), "stderr: {}", r.stderr);
    for n in needles {
        assert!(r.stderr.contains(n), "stderr lacks `{n}`: {}", r.stderr);
    }
    assert!(r.elapsed < Duration::from_secs(5), "took {:?}", r.elapsed);
    assert_eq!(
        r.stderr.matches("terminating the job").count(),
        1,
        "one message: {}",
        r.stderr
    );
    assert_clean(r);
}

#[test]
fn pmi_exchange_across_4_ranks() {
    let r = run(&["-n", "4", PROBE, "exchange"]);
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    for rank in 0..4 {
        assert!(
            r.stdout.contains(&format!("rank {rank} of 4: exchange ok")),
            "{}",
            r.stdout
        );
    }
    assert_clean(&r);
}

#[test]
fn job_info_from_pmi() {
    let r = run(&["-n", "3", PROBE, "info"]);
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 3);
    let job = format!("job_id=oxmpi_{}_", r.pid);
    for l in lines {
        assert!(
            l.contains("size=3") && l.contains(&job) && l.contains("nodes=[0, 0, 0]"),
            "{l}"
        );
    }
}

#[test]
fn rank_killed_by_sigkill() {
    let r = run(&["-n", "3", PROBE, "crash", "1", "9"]);
    assert_teardown(&r, 137, &["rank 1 (pid ", "signal 9 (SIGKILL)"]);
}

#[test]
fn rank_killed_by_sigsegv() {
    let r = run(&["-n", "3", PROBE, "crash", "2", "11"]);
    assert_teardown(&r, 139, &["rank 2 (pid ", "signal 11 (SIGSEGV)"]);
}

#[test]
fn crash_also_kills_grandchildren() {
    let script = format!("sleep 300 & exec {PROBE} crash 0 9");
    let r = run(&["-n", "2", "sh", "-c", &script]);
    assert_teardown(&r, 137, &["rank 0 (pid "]);
}

#[test]
fn teardown_escalates_to_sigkill_when_sigterm_is_ignored() {
    // `trap "" TERM` makes the shell and its children ignore SIGTERM: only SIGKILL works.
    let script = "trap '' TERM; [ $PMI_RANK = 1 ] && kill -9 $$; while :; do sleep 1; done";
    let r = run(&["-n", "3", "sh", "-c", script]);
    assert_teardown(&r, 137, &["rank 1 (pid ", "SIGKILL"]);
}

#[test]
fn pmi_abort_exit_code() {
    let r = run(&["-n", "2", PROBE, "abort", "1", "7"]);
    assert_teardown(&r, 7, &["rank 1 (pid ", "called MPI_Abort with code 7"]);
}

#[test]
fn nonzero_exit_before_finalize() {
    let r = run(&["-n", "2", PROBE, "exit", "1", "3"]);
    assert_teardown(
        &r,
        3,
        &["rank 1 (pid ", "exited with code 3 before MPI_Finalize"],
    );
}

#[test]
fn zero_exit_before_finalize_is_a_failure() {
    let r = run(&["-n", "2", PROBE, "exit", "0", "0"]);
    assert_teardown(
        &r,
        1,
        &["rank 0 (pid ", "exited with code 0 before MPI_Finalize"],
    );
}

#[test]
fn plain_program_nonzero_exit() {
    let r = run(&[
        "-n",
        "2",
        "sh",
        "-c",
        "[ $PMI_RANK = 1 ] && exit 5; sleep 300",
    ]);
    assert_teardown(&r, 5, &["rank 1 (pid ", "exited with code 5"]);
}

#[test]
fn timeout_ends_hung_job() {
    let r = run(&["-n", "2", "--timeout", "2", PROBE, "hang"]);
    eprintln!("--timeout 2 job ended after {:?}", r.elapsed);
    assert_eq!(r.code, Some(124), "stderr: {}", r.stderr);
    assert!(r.stderr.contains("time limit of 2 s"), "{}", r.stderr);
    assert!(r.elapsed >= Duration::from_millis(1900) && r.elapsed < Duration::from_secs(7));
    assert_clean(&r);
}

#[test]
fn mpiexec_timeout_env() {
    let r = run_with(
        &["-n", "2", "sleep", "300"],
        None,
        &[("MPIEXEC_TIMEOUT", "1")],
    );
    assert_eq!(r.code, Some(124), "stderr: {}", r.stderr);
    assert!(r.elapsed < Duration::from_secs(6));
    assert_clean(&r);
}

#[test]
fn stdin_reaches_rank_0_only() {
    let r = run_with(&["-n", "2", PROBE, "stdin"], Some("hello world\n"), &[]);
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert!(
        r.stdout.contains("rank 0 read stdin: hello world"),
        "{}",
        r.stdout
    );
    let r = run_with(&["-n", "3", "cat"], Some("once\n"), &[]);
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert_eq!(r.stdout, "once\n");
}

#[test]
fn tag_output_prefixes_lines() {
    let r = run(&[
        "-n",
        "2",
        "-l",
        "sh",
        "-c",
        "echo out-$PMI_RANK; echo err-$PMI_RANK >&2",
    ]);
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    for rank in 0..2 {
        assert!(
            r.stdout.contains(&format!("[{rank}] out-{rank}\n")),
            "{}",
            r.stdout
        );
        assert!(
            r.stderr.contains(&format!("[{rank}] err-{rank}\n")),
            "{}",
            r.stderr
        );
    }
    let r = run(&["-n", "1", "--tag-output", "printf", "a\\nb"]);
    assert_eq!(r.stdout, "[0] a\n[0] b");
}

#[test]
fn true_exits_zero() {
    let r = run(&["-n", "3", "true"]);
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    assert_eq!(r.stderr, "");
    assert_clean(&r);
}

#[test]
fn environment_and_wdir() {
    let r = run_with(
        &[
            "-np",
            "2",
            "-genv",
            "A",
            "1",
            "-x",
            "B=2",
            "-x",
            "C",
            "-wdir",
            "/tmp",
            "--",
            "sh",
            "-c",
            "echo $A$B$C $PMI_SIZE $MPI_LOCALNRANKS $MPI_LOCALRANKID ${#OXMPI_JOB_SECRET} $(pwd)",
        ],
        None,
        &[("C", "3")],
    );
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    let mut lines: Vec<&str> = r.stdout.lines().collect();
    lines.sort();
    assert_eq!(lines, vec!["123 2 2 0 32 /tmp", "123 2 2 1 32 /tmp"]);
}

#[test]
fn sigint_is_forwarded() {
    let start = Instant::now();
    let (child, marker) = spawn(&["-n", "2", PROBE, "hang"], false, &[]);
    // Wait until both ranks run (mpirun has set up its signal handling by then).
    while processes_with_marker(&marker).len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "ranks did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let t = Instant::now();
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let r = finish(child, marker, None, t);
    assert_teardown(&r, 130, &["received SIGINT"]);
}

#[test]
fn version_help_and_usage_errors() {
    let out = Command::new(MPIRUN).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("OxMPI mpirun {}", env!("CARGO_PKG_VERSION"))
    );
    let out = Command::new(MPIRUN).arg("--help").output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--timeout"));
    let r = run(&["-hosts", "localhost,some-other-node", "-n", "2", "true"]);
    assert_ne!(r.code, Some(0));
    // No such host: ssh (or its absence) fails, named in one line, and the job ends.
    assert!(
        r.stderr.contains("cannot start the proxy") && r.stderr.contains("some-other-node"),
        "{}",
        r.stderr
    );
    let r = run(&[
        "-host",
        "localhost",
        "-ppn",
        "2",
        "--oversubscribe",
        "--allow-run-as-root",
        "-n",
        "2",
        "true",
    ]);
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    let r = run(&["-n", "2", "/nonexistent/program"]);
    assert_eq!(r.code, Some(127));
    assert!(r.stderr.contains("/nonexistent/program"), "{}", r.stderr);
}

#[test]
fn singleton_without_launcher() {
    let out = Command::new(PROBE)
        .arg("exchange")
        .env_remove("PMI_FD")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("rank 0 of 1: exchange ok"));
}

#[test]
fn parallel_env_without_pmi_server_is_an_error() {
    let out = Command::new(PROBE)
        .arg("info")
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .env("SLURM_STEP_NUM_TASKS", "4")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("srun --mpi=pmi2"), "{err}");
}

#[test]
fn client_works_under_hydra() {
    let Ok(path) = which("mpiexec.mpich") else {
        eprintln!("mpiexec.mpich not installed: skipping the Hydra interop test");
        return;
    };
    for extra in [&[][..], &["-pmi-port"][..]] {
        let child = Command::new(&path)
            .args(extra)
            .args(["-n", "2", PROBE, "exchange"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let r = finish(child, String::new(), None, Instant::now());
        assert_eq!(r.code, Some(0), "hydra {extra:?}: {}", r.stderr);
        assert!(
            r.stdout.contains("rank 0 of 2: exchange ok"),
            "{}",
            r.stdout
        );
        assert!(
            r.stdout.contains("rank 1 of 2: exchange ok"),
            "{}",
            r.stdout
        );
    }
}

/// Our PMI server must satisfy MPICH's own PMI-1 client (compiled with mpicc.mpich).
#[test]
fn real_mpich_program_under_our_mpirun() {
    let Ok(mpicc) = which("mpicc.mpich") else {
        eprintln!("mpicc.mpich not installed: skipping the MPICH-under-mpirun test");
        return;
    };
    let dir = std::env::temp_dir().join(format!("oxmpi-launcher-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("hello.c");
    std::fs::write(
        &src,
        r#"#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int r, n, sum;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d of %d sum %d\n", r, n, sum);
    if (argc > 1 && r == 1) MPI_Abort(MPI_COMM_WORLD, 7);
    MPI_Finalize();
    return 0;
}
"#,
    )
    .unwrap();
    let exe = dir.join("hello");
    let out = Command::new(mpicc)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mpicc.mpich failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = exe.to_str().unwrap();
    let r = run(&["-n", "3", exe]);
    assert_eq!(r.code, Some(0), "stderr: {}", r.stderr);
    for rank in 0..3 {
        assert!(
            r.stdout.contains(&format!("rank {rank} of 3 sum 3")),
            "{}",
            r.stdout
        );
    }
    let r = run(&["-n", "3", exe, "abort"]);
    assert_teardown(&r, 7, &["rank 1 (pid ", "called MPI_Abort with code 7"]);
    let _ = std::fs::remove_dir_all(&dir);
}

fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .map(|d| std::path::Path::new(d).join(name))
        .find(|p| p.is_file())
        .ok_or(())
}
