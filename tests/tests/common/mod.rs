//! Shared harness for the C integration tests: finds the MPI under test,
//! compiles `tests/c/*.c` once (cached, rebuilt when stale), and runs programs
//! through `mpirun` with a launcher timeout plus a hard timeout of our own.
//!
//! MPI under test (first match wins):
//! - `OXMPI_TEST_MPICC` / `OXMPI_TEST_MPIRUN`: explicit compiler wrapper and launcher
//!   (e.g. `mpicc.mpich` / `mpiexec.mpich` to validate the tests against MPICH);
//! - `$OXMPI_PREFIX/bin/{mpicc,mpirun}`;
//! - `<workspace>/install/bin/{mpicc,mpirun}` (what `make install` produces).
//!
//! `OXMPI_TEST_HYDRA` names MPICH's Hydra launcher for the interop test
//! (default `mpiexec.mpich`).
#![allow(dead_code)]

use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

pub mod fortran;

/// Rank counts every ordinary program runs at.
pub const RANKS: &[usize] = &[1, 2, 3, 4, 8];
/// Launcher timeout for ordinary runs (seconds).
pub const LAUNCHER_TIMEOUT: u64 = 120;
/// Our own deadline for any run, after which the whole process group is killed.
pub const HARD_TIMEOUT: Duration = Duration::from_secs(180);

pub struct Mpi {
    pub mpicc: PathBuf,
    pub mpirun: PathBuf,
    /// True when the launcher is OxMPI's: enables OxMPI-specific assertions
    /// (message wording) and its `--timeout` flag.
    pub is_oxmpi: bool,
    build_dir: PathBuf,
}

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Resolve a program name through PATH (names with a '/' are taken as paths).
pub fn which(prog: &str) -> Option<PathBuf> {
    if prog.contains('/') {
        let p = PathBuf::from(prog);
        return p.is_file().then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(prog))
        .find(|p| p.is_file())
}

fn resolve_tool(env_var: &str, default: PathBuf, what: &str) -> (PathBuf, bool) {
    match std::env::var(env_var) {
        Ok(v) if !v.is_empty() => {
            let p = which(&v).unwrap_or_else(|| {
                panic!("{env_var}={v}: {what} not found (not a file and not on PATH)")
            });
            (p, true)
        }
        _ => {
            if !default.is_file() {
                panic!(
                    "{what} not found at {}: run `make install` first (or set OXMPI_PREFIX, \
                     or {env_var} to test another MPI)",
                    default.display()
                );
            }
            (default, false)
        }
    }
}

pub fn mpi() -> &'static Mpi {
    static MPI: OnceLock<Mpi> = OnceLock::new();
    MPI.get_or_init(|| {
        let prefix = std::env::var_os("OXMPI_PREFIX")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join("install"));
        let (mpicc, _) = resolve_tool("OXMPI_TEST_MPICC", prefix.join("bin/mpicc"), "mpicc");
        let (mpirun, overridden) =
            resolve_tool("OXMPI_TEST_MPIRUN", prefix.join("bin/mpirun"), "mpirun");
        let is_oxmpi = if overridden {
            // Another launcher was named explicitly: is it ours anyway?
            Command::new(&mpirun)
                .arg("--version")
                .stdin(Stdio::null())
                .output()
                .map(|o| {
                    let text = format!(
                        "{}{}",
                        String::from_utf8_lossy(&o.stdout),
                        String::from_utf8_lossy(&o.stderr)
                    );
                    text.to_lowercase().contains("oxmpi")
                })
                .unwrap_or(false)
        } else {
            true
        };
        // Compiled programs are cached per compiler, under this target dir.
        let mut h = DefaultHasher::new();
        fs::canonicalize(&mpicc)
            .unwrap_or(mpicc.clone())
            .hash(&mut h);
        let stem = mpicc
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace('.', "_");
        let build_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("oxmpi-c-tests")
            .join(format!("{stem}-{:012x}", h.finish() & 0xffff_ffff_ffff));
        fs::create_dir_all(&build_dir).expect("create build dir");
        eprintln!(
            "MPI under test: mpicc={} mpirun={} ({}) build dir {}",
            mpicc.display(),
            mpirun.display(),
            if is_oxmpi {
                "OxMPI"
            } else {
                "not OxMPI: OxMPI-specific checks off"
            },
            build_dir.display()
        );
        Mpi {
            mpicc,
            mpirun,
            is_oxmpi,
            build_dir,
        }
    })
}

fn mtime(p: &Path) -> Option<std::time::SystemTime> {
    fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// Compile `tests/c/<src>.c` with the mpicc under test into `<out>`; reuse the
/// binary when it is newer than the source, the shared header and the compiler.
pub fn compile_as(src: &str, out: &str) -> PathBuf {
    static LOCK: Mutex<()> = Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let m = mpi();
    let cdir = workspace_root().join("tests/c");
    let source = cdir.join(format!("{src}.c"));
    assert!(source.is_file(), "missing test source {}", source.display());
    let exe = m.build_dir.join(out);
    let inputs = [source.clone(), cdir.join("testutil.h"), m.mpicc.clone()];
    let newest = inputs.iter().filter_map(|p| mtime(p)).max();
    if let (Some(built), Some(newest)) = (mtime(&exe), newest) {
        if built > newest {
            return exe;
        }
    }
    let tmp = m
        .build_dir
        .join(format!(".{out}.{}.tmp", std::process::id()));
    let output = Command::new(&m.mpicc)
        .args(["-O2", "-Wall", "-o"])
        .arg(&tmp)
        .arg(&source)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", m.mpicc.display()));
    if !output.status.success() {
        panic!(
            "compiling {} with {} failed ({}):\n{}{}",
            source.display(),
            m.mpicc.display(),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    fs::rename(&tmp, &exe).expect("rename compiled program");
    exe
}

pub fn compile(src: &str) -> PathBuf {
    compile_as(src, src)
}

/// Process ids of live processes executing `exe` (zombies have no exe link).
pub fn processes_running(exe: &Path) -> Vec<u32> {
    let target = fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf());
    let mut pids = Vec::new();
    if let Ok(dir) = fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            if let Ok(link) = fs::read_link(e.path().join("exe")) {
                if link == target {
                    pids.push(pid);
                }
            }
        }
    }
    pids
}

/// Process ids of live `mpirun --oxmpi-proxy` processes of the launcher `mpirun`.
pub fn proxies_running(mpirun: &Path) -> Vec<u32> {
    let mut out = Vec::new();
    for pid in processes_running(mpirun) {
        let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if cmdline.split(|&b| b == 0).any(|a| a == b"--oxmpi-proxy") {
            out.push(pid);
        }
    }
    out
}

fn kill_pids(pids: &[u32]) {
    if pids.is_empty() {
        return;
    }
    let _ = Command::new("kill")
        .arg("-KILL")
        .arg("--")
        .args(pids.iter().map(|p| p.to_string()))
        .stderr(Stdio::null())
        .status();
}

/// Entries of /dev/shm whose names start with `oxmpi-`.
pub fn oxmpi_shm_entries() -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("oxmpi-"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

pub struct RunOpts<'a> {
    pub np: usize,
    pub args: Vec<String>,
    pub stdin: Option<Vec<u8>>,
    /// Launcher timeout in seconds (`--timeout` for OxMPI, MPIEXEC_TIMEOUT otherwise).
    pub launcher_timeout: Option<u64>,
    /// Pass the launcher timeout only through MPIEXEC_TIMEOUT, even for OxMPI.
    pub timeout_via_env: bool,
    pub hard_timeout: Duration,
    /// Run with this launcher instead of the one under test.
    pub launcher: Option<&'a Path>,
    /// Extra environment variables for the launcher (and so the ranks).
    pub env: Vec<(String, String)>,
    /// Launcher options before `-n` (hosts, placement, launcher choice).
    pub launcher_args: Vec<String>,
    /// A command the launcher runs under (e.g. `tests/netns/agent h1`: mpirun on a
    /// test host).
    pub prefix: Vec<String>,
}

impl Default for RunOpts<'_> {
    fn default() -> Self {
        RunOpts {
            np: 1,
            args: Vec::new(),
            stdin: None,
            launcher_timeout: Some(LAUNCHER_TIMEOUT),
            timeout_via_env: false,
            hard_timeout: HARD_TIMEOUT,
            launcher: None,
            env: Vec::new(),
            launcher_args: Vec::new(),
            prefix: Vec::new(),
        }
    }
}

pub struct RunResult {
    pub command: String,
    pub status: Option<ExitStatus>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
    /// Our hard deadline expired and we killed the job.
    pub hard_timed_out: bool,
    /// Processes still executing the program after the launcher exited (after
    /// a 1 s grace period); they have been killed since.
    pub leftovers: Vec<u32>,
}

impl RunResult {
    pub fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }
    pub fn success(&self) -> bool {
        self.status.map(|s| s.success()).unwrap_or(false) && !self.hard_timed_out
    }
    pub fn status_text(&self) -> String {
        match self.status {
            Some(s) => s.to_string(),
            None => "no exit status".into(),
        }
    }
    /// Everything needed to understand a failure.
    pub fn report(&self) -> String {
        fn tail(s: &str) -> &str {
            const MAX: usize = 12000;
            if s.len() <= MAX {
                return s;
            }
            let mut i = s.len() - MAX;
            while !s.is_char_boundary(i) {
                i += 1;
            }
            &s[i..]
        }
        format!(
            "command: {}\nstatus: {}{}\nelapsed: {:.2} s\nleftover processes: {:?}\n\
             --- stdout ---\n{}\n--- stderr ---\n{}\n--------------",
            self.command,
            self.status_text(),
            if self.hard_timed_out {
                " (KILLED BY THE HARNESS: hard timeout)"
            } else {
                ""
            },
            self.elapsed.as_secs_f64(),
            self.leftovers,
            tail(&self.stdout),
            tail(&self.stderr)
        )
    }
}

fn read_all(mut r: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        let _ = tx.send(String::from_utf8_lossy(&buf).into_owned());
    });
    rx
}

/// Run `exe` through the launcher. Never hangs: the launcher gets its own
/// timeout and the harness kills the whole process group at `hard_timeout`.
pub fn run(exe: &Path, opts: RunOpts) -> RunResult {
    use std::os::unix::process::CommandExt;
    let m = mpi();
    let launcher = opts.launcher.unwrap_or(&m.mpirun);
    let ours = opts.launcher.is_none() && m.is_oxmpi;
    let mut cmd = match opts.prefix.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(launcher);
            c
        }
        None => Command::new(launcher),
    };
    let mut shown: Vec<String> = opts.prefix.clone();
    shown.push(launcher.display().to_string());
    for (k, v) in &opts.env {
        cmd.env(k, v);
        shown.insert(0, format!("{k}={v}"));
    }
    cmd.args(&opts.launcher_args);
    shown.extend(opts.launcher_args.iter().cloned());
    // np 0: leave -n to the launcher (the hosts' slots).
    if opts.np > 0 {
        cmd.arg("-n").arg(opts.np.to_string());
        shown.push(format!("-n {}", opts.np));
    }
    if let Some(t) = opts.launcher_timeout {
        if ours && !opts.timeout_via_env {
            cmd.arg("--timeout").arg(t.to_string());
            shown.push(format!("--timeout {t}"));
        } else {
            cmd.env("MPIEXEC_TIMEOUT", t.to_string());
            shown.insert(0, format!("MPIEXEC_TIMEOUT={t}"));
        }
    }
    cmd.arg(exe).args(&opts.args);
    shown.push(exe.display().to_string());
    shown.extend(opts.args.iter().cloned());
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.stdin(if opts.stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.process_group(0);
    let command = shown.join(" ");

    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command}: {e}"));
    let pgid = child.id();
    if let Some(data) = opts.stdin {
        let mut w = child.stdin.take().unwrap();
        thread::spawn(move || {
            let _ = w.write_all(&data);
        });
    }
    let out_rx = read_all(child.stdout.take().unwrap());
    let err_rx = read_all(child.stderr.take().unwrap());

    let mut hard_timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(_) => break None,
        }
        if start.elapsed() > opts.hard_timeout {
            hard_timed_out = true;
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pgid}")])
                .stderr(Stdio::null())
                .status();
            kill_pids(&processes_running(exe));
            break child.wait().ok();
        }
        thread::sleep(Duration::from_millis(10));
    };
    let elapsed = start.elapsed();

    // Ranks must be gone once the launcher has exited; allow 1 s to be reaped.
    let mut leftovers = processes_running(exe);
    let grace = Instant::now();
    while !leftovers.is_empty() && grace.elapsed() < Duration::from_secs(1) {
        thread::sleep(Duration::from_millis(20));
        leftovers = processes_running(exe);
    }
    // Proxies of a multi-host launch must be gone too.
    let proxies = proxies_running(launcher);
    leftovers.extend(&proxies);
    kill_pids(&leftovers);

    // Output pipes close when the last writer is gone; do not wait forever.
    let collect = |rx: mpsc::Receiver<String>| {
        rx.recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| "<output not closed 10 s after the launcher exited>".into())
    };
    let stdout = collect(out_rx);
    let stderr = collect(err_rx);
    RunResult {
        command,
        status,
        stdout,
        stderr,
        elapsed,
        hard_timed_out,
        leftovers,
    }
}

/// Run an ordinary self-checking program and require success: exit status 0,
/// the program's "<name>: OK" line on stdout, nothing left running.
pub fn run_ok(name: &str, exe: &Path, np: usize, args: &[&str]) -> RunResult {
    run_ok_env(name, exe, np, args, &[])
}

/// `run_ok` with extra environment variables.
pub fn run_ok_env(name: &str, exe: &Path, np: usize, args: &[&str], env: &[(&str, &str)]) -> RunResult {
    let r = run(
        exe,
        RunOpts {
            np,
            args: args.iter().map(|s| s.to_string()).collect(),
            env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            ..Default::default()
        },
    );
    if !r.success() {
        panic!("{name} failed at -n {np}\n{}", r.report());
    }
    let ok = format!("{name}: OK");
    assert!(
        r.stdout.contains(&ok),
        "{name} at -n {np}: no \"{ok}\" line on stdout\n{}",
        r.report()
    );
    assert!(
        r.leftovers.is_empty(),
        "{name} at -n {np}: processes left behind\n{}",
        r.report()
    );
    eprintln!("{name} -n {np}: ok in {:.2} s", r.elapsed.as_secs_f64());
    r
}

/// Compile `name` and run it at every rank count in RANKS.
pub fn run_program_all(name: &str, args: &[&str]) {
    run_program_all_env(name, args, &[]);
}

/// `run_program_all` with extra environment variables.
pub fn run_program_all_env(name: &str, args: &[&str], env: &[(&str, &str)]) {
    let exe = compile(name);
    for &np in RANKS {
        run_ok_env(name, &exe, np, args, env);
    }
}

/// Serializes tests that must not overlap with other jobs (leak checks).
pub fn exclusive() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}
