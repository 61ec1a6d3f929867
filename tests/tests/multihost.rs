//! `mpirun` across hosts: one proxy per host, the node map, shm inside a host and TCP
//! between hosts, placement, stdin, tags, timeouts and teardown.
//!
//! Every case runs on two kinds of cluster:
//! - fake hosts `a`, `b`, `c` on this machine (`-launcher fork`: the proxies run here, each
//!   host a node of its own), which needs nothing;
//! - network-namespace hosts `h1`..`h3` (`tests/netns/up.sh`), with mpirun started inside
//!   `h1` and the proxies through `tests/netns/agent` (`-launcher-exec`), each with its
//!   own address and host name. These need root; without it they print a line saying
//!   they were skipped.
mod common;
use common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A failure anywhere must end the whole job within this (the 2 s, plus the
/// harness's own polling and process start-up).
const TEARDOWN: Duration = Duration::from_millis(2500);

/// Where a test's hosts come from.
struct Cluster {
    kind: &'static str,
    /// Host names, in the order tests use them.
    hosts: [&'static str; 3],
    /// mpirun options that pick the launcher.
    launcher_args: Vec<String>,
    /// What mpirun runs under (the agent into h1 for namespaces).
    prefix: Vec<String>,
    /// Ranks see the host names (namespaces); fake hosts all have this machine's.
    real_names: bool,
}

fn fake() -> Cluster {
    Cluster { kind: "fake hosts", hosts: ["a", "b", "c"], launcher_args: vec!["-launcher".into(), "fork".into()], prefix: Vec::new(), real_names: false }
}

fn agent() -> PathBuf {
    workspace_root().join("tests/netns/agent")
}

/// The namespace hosts, created once per test run; None (and a line saying why) when
/// this is not root.
fn netns() -> Option<Cluster> {
    static UP: OnceLock<Result<(), String>> = OnceLock::new();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("netns tests skipped: not root (ip netns needs root; CI runs them as root)");
        return None;
    }
    let up = UP.get_or_init(|| {
        let out = Command::new(workspace_root().join("tests/netns/up.sh")).arg("3").output().map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
        }
    });
    if let Err(e) = up {
        panic!("tests/netns/up.sh 3 failed as root: {e}");
    }
    let a = agent().display().to_string();
    Some(Cluster { kind: "netns hosts", hosts: ["h1", "h2", "h3"], launcher_args: vec!["-launcher-exec".into(), a.clone()], prefix: vec![a, "h1".into()], real_names: true })
}

impl Cluster {
    /// `A:2,B:2`-style host list with this cluster's names for A, B, C.
    fn names(&self, spec: &str) -> String {
        spec.replace('A', self.hosts[0]).replace('B', self.hosts[1]).replace('C', self.hosts[2])
    }

    fn opts(&self, np: usize, hosts: &str, extra: &[&str], args: &[&str]) -> RunOpts<'static> {
        let mut la = self.launcher_args.clone();
        if !hosts.is_empty() {
            la.extend(["-hosts".to_string(), self.names(hosts)]);
        }
        la.extend(extra.iter().map(|s| self.names(s)));
        RunOpts { np, args: args.iter().map(|s| s.to_string()).collect(), launcher_args: la, prefix: self.prefix.clone(), launcher_timeout: Some(60), ..Default::default() }
    }
}

/// A self-checking program must pass: exit 0, its OK line, nothing left.
fn must_pass(c: &Cluster, name: &str, exe: &Path, r: &RunResult) {
    assert!(r.success(), "{name} on {}: failed\n{}", c.kind, r.report());
    assert!(r.stdout.contains(&format!("{name}: OK")), "{name} on {}: no OK line\n{}", c.kind, r.report());
    assert!(r.leftovers.is_empty(), "{name} on {}: processes left behind\n{}", c.kind, r.report());
    assert!(processes_running(exe).is_empty());
}

/// The C test programs across hosts: 2 hosts with 2 ranks each (shm inside a host, TCP
/// between them), 3 hosts with one rank each, and 8 ranks on 3 hosts (3, 3 and 2 ranks:
/// hosts that disagree on being oversubscribed must still pick the same collective
/// algorithms).
fn programs(c: &Cluster) {
    let _x = exclusive();
    let layouts: [(&str, usize); 3] = [("A:2,B:2", 4), ("A,B,C", 3), ("A,B,C", 8)];
    let progs: [(&str, &[&str]); 13] = [
        ("ring", &[]),
        ("coll_all", &[]),
        ("send_modes", &[]),
        ("wildcard_order", &[]),
        ("pingpong_sizes", &["1", "8"]),
        ("comm_split", &[]),
        ("datatypes_p2p", &[]),
        ("barrier_sync", &[]),
        ("reduce_pairs", &[]),
        // One-sided: shared memory within a host, active messages between hosts.
        ("rma_fence", &[]),
        ("rma_lock_counter", &[]),
        ("rma_accumulate", &[]),
        ("rma_shared", &[]),
    ];
    for (name, args) in progs {
        // comm_split checks MPI_COMM_TYPE_SHARED against processor names, which fake hosts
        // share (the node map, which split_type follows, says otherwise).
        if name == "comm_split" && !c.real_names {
            continue;
        }
        let exe = compile(name);
        for (hosts, np) in layouts {
            let r = run(&exe, c.opts(np, hosts, &[], args));
            must_pass(c, name, &exe, &r);
            eprintln!("{name} on {} {hosts} -n {np}: ok in {:.2} s", c.kind, r.elapsed.as_secs_f64());
        }
    }
}

/// MPI-IO across hosts: the collective steps of open, close and set_view, the ordered
/// calls' scan, and the shared file pointer's lock, with the ranks of one file on several
/// hosts (the file system is this machine's, shared by all of them). Each program must
/// leave its directory empty.
fn io_programs(c: &Cluster) {
    let _x = exclusive();
    let dir = std::env::temp_dir().join(format!("oxmpi-multihost-io-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["io_shared", "io_views", "io_nonblocking"] {
        let exe = compile(name);
        for (hosts, np) in [("A:2,B:2", 4), ("A,B,C", 3)] {
            let r = run(&exe, c.opts(np, hosts, &[], &[dir.to_str().unwrap()]));
            must_pass(c, name, &exe, &r);
            let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
            assert!(left.is_empty(), "{name} on {} {hosts}: files left behind: {left:?}", c.kind);
            eprintln!("{name} on {} {hosts} -n {np}: ok in {:.2} s", c.kind, r.elapsed.as_secs_f64());
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `where` lines: (host, local rank, local count) per rank.
fn layout(r: &RunResult) -> Vec<(String, String)> {
    r.stdout
        .lines()
        .filter_map(|l| {
            let l = l.strip_prefix("[0] ").unwrap_or(l);
            let rest = l.strip_prefix("where: rank ")?;
            let mut w = rest.split_whitespace();
            let _rank = w.next()?;
            let host = w.nth(1)?.to_string();
            let local = w.nth(1)?.to_string();
            Some((host, local))
        })
        .collect()
}

/// Placement: blocks by default, `-rr`, `-ppn`, host files in Hydra's and Open MPI's forms
/// (comments, blank lines), `-n` from the slots, and `-l` tags.
fn placement(c: &Cluster) {
    let _x = exclusive();
    let exe = compile("where");
    let dir = std::env::temp_dir().join(format!("oxmpi-hostfiles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let hydra = dir.join("hydra");
    std::fs::write(&hydra, c.names("# Hydra form\nA:3\n\nB:1   # one slot\n")).unwrap();
    let ompi = dir.join("ompi");
    std::fs::write(&ompi, c.names("# Open MPI form\nA slots=1\n\nB slots=3 max_slots=8\n")).unwrap();
    let (h, o) = (hydra.display().to_string(), ompi.display().to_string());
    // (np, hosts, extra options, host of each rank by letter)
    let cases: Vec<(usize, &str, Vec<&str>, &str)> = vec![
        (4, "A:2,B:2", vec![], "AABB"),
        (4, "A:2,B:2", vec!["-rr"], "ABAB"),
        (4, "A:2,B:2", vec!["--map-by", "node"], "ABAB"),
        (4, "A:3,B:3", vec!["-ppn", "1"], "ABAB"),
        (5, "A,B,C", vec![], "ABCAB"),
        (4, "", vec!["-f", &h], "AAAB"),
        (0, "", vec!["-hostfile", &o], "ABBB"),
        (3, "", vec!["-machinefile", &o, "-rr"], "ABB"),
        (4, "B:2,A:2", vec!["-l"], "BBAA"),
    ];
    for (np, hosts, extra, want) in cases {
        let r = run(&exe, c.opts(np, hosts, &extra, &[]));
        let what = format!("{} -n {np} -hosts {hosts} {extra:?}", c.kind);
        must_pass(c, "where", &exe, &r);
        let got = layout(&r);
        let letters: Vec<char> = want.chars().collect();
        assert_eq!(got.len(), letters.len(), "{what}: {} where lines\n{}", got.len(), r.report());
        for (rank, (host, local)) in got.iter().enumerate() {
            let expect_host = c.names(&letters[rank].to_string());
            let same: Vec<usize> = (0..letters.len()).filter(|&k| letters[k] == letters[rank]).collect();
            let expect_local = format!("{}/{}", same.iter().position(|&k| k == rank).unwrap(), same.len());
            assert_eq!(local, &expect_local, "{what}: rank {rank}'s local rank\n{}", r.report());
            if c.real_names {
                assert_eq!(host, &expect_host, "{what}: rank {rank}'s host\n{}", r.report());
            }
        }
        if extra.contains(&"-l") {
            assert!(r.stdout.lines().filter(|l| l.contains("where: rank")).all(|l| l.starts_with("[0] where: rank")), "{what}: untagged lines\n{}", r.report());
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn stdin_text(lines: usize) -> Vec<u8> {
    (0..lines).map(|i| format!("oxmpi stdin line {i}\n")).collect::<String>().into_bytes()
}

/// stdin reaches rank 0 on another host than mpirun's (mpirun runs on A = h1; rank 0 on B).
fn stdin_to_remote_rank0(c: &Cluster) {
    let _x = exclusive();
    let exe = compile("stdin_echo");
    let mut o = c.opts(3, "B:1,A:2", &[], &["20000"]);
    o.stdin = Some(stdin_text(20000));
    let r = run(&exe, o);
    must_pass(c, "stdin_echo", &exe, &r);
}

/// MPIEXEC_TIMEOUT ends a hung multi-host job with 124, everything gone.
fn timeout_env(c: &Cluster) {
    let _x = exclusive();
    let exe = compile("hang");
    let mut o = c.opts(4, "A:2,B:2", &[], &[]);
    o.launcher_timeout = None;
    o.env = vec![("MPIEXEC_TIMEOUT".into(), "3".into())];
    let r = run(&exe, o);
    assert_eq!(r.code(), Some(124), "{}: hung job under MPIEXEC_TIMEOUT=3\n{}", c.kind, r.report());
    assert!(r.elapsed < Duration::from_secs(3) + TEARDOWN, "{}: took {:.2} s\n{}", c.kind, r.elapsed.as_secs_f64(), r.report());
    assert!(r.stderr.contains("time limit of 3 s"), "{}", r.report());
    assert!(r.leftovers.is_empty(), "{}", r.report());
}

/// New /dev/shm entries of OxMPI after a run (allowing a moment for another job's).
fn shm_leaks(before: &[String]) -> Vec<String> {
    let mut leaked = Vec::new();
    for _ in 0..20 {
        leaked = oxmpi_shm_entries().into_iter().filter(|e| !before.contains(e)).collect();
        if leaked.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    leaked
}

/// A rank on host B killed by SIGKILL, and a rank on B calling MPI_Abort(…, 7): the job
/// ends on every host within the limit, with the rank's status, and mpirun's line names
/// the rank, its host, its pid and the cause; nothing is left anywhere.
fn teardown_rank_failures(c: &Cluster) {
    let _x = exclusive();
    for (prog, args, code, needles) in [
        ("crash", vec!["kill", "recv"], 137, vec!["rank 1 (pid", "killed by signal 9 (SIGKILL)"]),
        ("crash", vec!["kill", "rndv"], 137, vec!["rank 1 (pid", "SIGKILL"]),
        ("abort", vec![], 7, vec!["rank 1 (pid", "MPI_Abort with code 7"]),
    ] {
        let exe = compile(prog);
        let before = oxmpi_shm_entries();
        // Ranks 0 and 2 on A, 1 and 3 on B: the victim (rank 1) is on B.
        let r = run(&exe, c.opts(4, "A,B", &[], &args));
        let what = format!("{prog} {args:?} on {}", c.kind);
        assert_eq!(r.code(), Some(code), "{what}\n{}", r.report());
        assert!(r.elapsed < TEARDOWN + Duration::from_millis(600), "{what}: took {:.2} s\n{}", r.elapsed.as_secs_f64(), r.report());
        let line = r.stderr.lines().find(|l| l.starts_with("mpirun: ")).unwrap_or("");
        for n in needles {
            assert!(line.contains(n), "{what}: mpirun's line lacks {n:?}: {line}\n{}", r.report());
        }
        assert!(line.contains(&format!(" on {})", c.hosts[1])), "{what}: mpirun's line does not name host {}: {line}", c.hosts[1]);
        assert!(r.leftovers.is_empty(), "{what}: left behind {:?}\n{}", r.leftovers, r.report());
        assert!(shm_leaks(&before).is_empty(), "{what}: /dev/shm entries left");
    }
}

/// A rank on host B exiting non-zero after MPI_Finalize ends nothing: the other ranks'
/// output arrives from both hosts, mpirun's line names the rank and host, and the exit
/// status is the rank's.
fn late_exit(c: &Cluster) {
    let _x = exclusive();
    let exe = compile("exit_after_finalize");
    // Ranks 0 and 2 on A, 1 and 3 on B: rank 3 exits with code 3.
    let r = run(&exe, c.opts(4, "A,B", &[], &[]));
    let what = format!("exit_after_finalize on {}", c.kind);
    assert_eq!(r.code(), Some(3), "{what}\n{}", r.report());
    for rank in 0..3 {
        let line = format!("exit_after_finalize: rank {rank} still here after the exit");
        assert!(r.stdout.contains(&line), "{what}: no {line:?}\n{}", r.report());
    }
    let line = r.stderr.lines().find(|l| l.starts_with("mpirun: ")).unwrap_or("");
    assert!(line.contains("rank 3 (pid") && line.contains(&format!(" on {})", c.hosts[1])) && line.contains("exited with code 3 after MPI_Finalize"), "{what}: {line}\n{}", r.report());
    assert!(r.leftovers.is_empty(), "{what}: left behind {:?}\n{}", r.leftovers, r.report());
}

/// An MPMD command line across hosts: each host's proxy starts the parts its ranks run
/// (ranks 0, 2 on A and 1, 3 on B: both parts on both hosts), with MPI_APPNUM and the
/// part's `-env`.
fn mpmd(c: &Cluster) {
    let _x = exclusive();
    let exe = compile("mpmd");
    let e = exe.display().to_string();
    let args = ["0", "0,0,1,1", ":", "-n", "2", "-env", "MPMD_PART", "1", e.as_str(), "1", "0,0,1,1"];
    let mut o = c.opts(2, "A,B", &[], &args);
    // After `opts`, which would read the A and B of these names as hosts.
    o.launcher_args.extend(["-genv", "MPMD_JOB", "all", "-env", "MPMD_PART", "0"].map(String::from));
    let r = run(&exe, o);
    must_pass(c, "mpmd", &exe, &r);
}

/// mpirun started by hand (the harness's `run` waits for it to end by itself).
struct Live {
    child: Child,
    stderr_lines: std::sync::mpsc::Receiver<String>,
    exe: PathBuf,
}

fn start_live(c: &Cluster, prog: &str, np: usize, hosts: &str, args: &[&str], env: &[(&str, &str)]) -> Live {
    use std::os::unix::process::CommandExt;
    let exe = compile(prog);
    let m = mpi();
    let o = c.opts(np, hosts, &[], args);
    let mut cmd = match o.prefix.split_first() {
        Some((first, rest)) => {
            let mut cmd = Command::new(first);
            cmd.args(rest).arg(&m.mpirun);
            cmd
        }
        None => Command::new(&m.mpirun),
    };
    cmd.args(&o.launcher_args).args(["--timeout", "60", "-n", &np.to_string()]).arg(&exe).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut child = cmd.spawn().expect("start mpirun");
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    let mut out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = out.read_to_end(&mut sink);
    });
    Live { child, stderr_lines: rx, exe }
}

impl Live {
    /// Waits until `n` ranks run.
    fn wait_ranks(&self, n: usize) {
        let t = Instant::now();
        while processes_running(&self.exe).len() < n {
            assert!(t.elapsed() < Duration::from_secs(30), "ranks did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        // Let them get past MPI_Init.
        std::thread::sleep(Duration::from_millis(300));
    }

    /// Waits for mpirun's exit (at most `limit`), then for the ranks and proxies to be
    /// gone; returns the exit status, how long it took from `t0`, and what is left.
    fn finish(mut self, t0: Instant, limit: Duration) -> (Option<std::process::ExitStatus>, Duration, Vec<u32>, Vec<String>) {
        let mut status = None;
        while t0.elapsed() < limit + Duration::from_secs(5) {
            if let Ok(Some(s)) = self.child.try_wait() {
                status = Some(s);
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let mpirun = &mpi().mpirun;
        // Everything must be gone within the limit, mpirun's exit or not.
        let mut left: Vec<u32>;
        loop {
            left = processes_running(&self.exe);
            left.extend(proxies_running(mpirun));
            if left.is_empty() || t0.elapsed() > limit {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let elapsed = t0.elapsed();
        for p in &left {
            // SAFETY: killing a leftover process of this test.
            unsafe { libc::kill(*p as i32, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(100));
        let lines: Vec<String> = self.stderr_lines.try_iter().collect();
        (status, elapsed, left, lines)
    }
}

/// SIGKILL of mpirun itself: every rank and proxy on every host is gone within the limit.
fn teardown_mpirun_killed(c: &Cluster) {
    let _x = exclusive();
    let before = oxmpi_shm_entries();
    let live = start_live(c, "hang", 4, "A:2,B:2", &[], &[]);
    live.wait_ranks(4);
    // mpirun itself (under the agent it is a shell's child, not our child).
    let mpirun = &mpi().mpirun;
    let proxies = proxies_running(mpirun);
    let front = processes_running(mpirun).into_iter().find(|p| !proxies.contains(p)).expect("mpirun running");
    let t0 = Instant::now();
    // SAFETY: killing the test job's mpirun.
    unsafe { libc::kill(front as i32, libc::SIGKILL) };
    let (_, took, left, lines) = live.finish(t0, TEARDOWN);
    assert!(left.is_empty(), "{}: after SIGKILL of mpirun, {left:?} still run after {:.2} s\n{}", c.kind, took.as_secs_f64(), lines.join("\n"));
    assert!(shm_leaks(&before).is_empty(), "{}: /dev/shm entries left", c.kind);
}

/// SIGKILL of host B's proxy: mpirun says it lost that host, exits non-zero, and the
/// ranks on every host are gone within the limit.
fn teardown_proxy_killed(c: &Cluster) {
    let _x = exclusive();
    let before = oxmpi_shm_entries();
    let live = start_live(c, "hang", 4, "A:2,B:2", &[], &[]);
    live.wait_ranks(4);
    let mpirun = &mpi().mpirun;
    let proxy = proxies_running(mpirun)
        .into_iter()
        .find(|p| {
            let cmd = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            cmd.split(|&b| b == 0).filter(|a| !a.is_empty()).last() == Some(b"1")
        })
        .expect("the proxy of host B (index 1)");
    let t0 = Instant::now();
    // SAFETY: killing the test job's proxy.
    unsafe { libc::kill(proxy as i32, libc::SIGKILL) };
    let (status, took, left, lines) = live.finish(t0, TEARDOWN);
    let text = lines.join("\n");
    assert!(left.is_empty(), "{}: after SIGKILL of B's proxy, {left:?} still run after {:.2} s\n{text}", c.kind, took.as_secs_f64());
    assert!(status.is_some_and(|s| !s.success()), "{}: mpirun exit status {status:?}\n{text}", c.kind);
    assert!(text.contains(&format!("lost the proxy on {}", c.hosts[1])), "{}: no line naming the lost host\n{text}", c.kind);
    assert!(shm_leaks(&before).is_empty(), "{}: /dev/shm entries left", c.kind);
}

/// Every host's ranks see mpirun's environment plus `-genv`, their PMI variables, and
/// start in `-wdir`.
fn environment(c: &Cluster) {
    let _x = exclusive();
    let env = which("env").expect("env(1)");
    let mut o = c.opts(2, "A,B", &["-l", "-genv", "OXTEST_GENV", "two"], &[]);
    o.env = vec![("OXTEST_INHERITED".into(), "one".into())];
    let r = run(&env, o);
    assert!(r.success(), "{}: env across hosts\n{}", c.kind, r.report());
    for rank in 0..2 {
        for want in ["OXTEST_INHERITED=one", "OXTEST_GENV=two", &format!("PMI_RANK={rank}"), "PMI_SIZE=2", "MPI_LOCALNRANKS=1"] {
            assert!(r.stdout.lines().any(|l| l == format!("[{rank}] {want}")), "{}: rank {rank} lacks {want}\n{}", c.kind, r.report());
        }
    }
    let pwd = which("pwd").expect("pwd(1)");
    let dir = std::env::temp_dir().join(format!("oxmpi-wdir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.display().to_string();
    let r = run(&pwd, c.opts(2, "A,B", &["-l", "-wdir", &d], &[]));
    assert!(r.success(), "{}\n{}", c.kind, r.report());
    for rank in 0..2 {
        assert!(r.stdout.lines().any(|l| l == format!("[{rank}] {d}")), "{}: rank {rank} not in -wdir {d}\n{}", c.kind, r.report());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The bytes of a proxy hello (see launcher/src/wire.rs) with `secret`.
fn proxy_hello(secret: &str, host: u32) -> Vec<u8> {
    let mut body = vec![0u8];
    body.extend_from_slice(b"OXMPIPRX");
    body.extend_from_slice(&(secret.len() as u32).to_le_bytes());
    body.extend_from_slice(secret.as_bytes());
    body.extend_from_slice(&host.to_le_bytes());
    body.extend_from_slice(&4242u32.to_le_bytes());
    let mut v = (body.len() as u32).to_le_bytes().to_vec();
    v.extend(body);
    v
}

/// Connections to mpirun that are not its proxies (garbage, a hello with a wrong secret)
/// are refused and counted, and the job completes with correct results.
fn impostor_proxy(c: &Cluster) {
    let _x = exclusive();
    let live = start_live(c, "keep_busy", 4, "A:2,B:2", &["4"], &[("OXMPI_VERBOSE", "1")]);
    // mpirun tells where host B's proxy connects to.
    let t = Instant::now();
    let addr = loop {
        let l = live.stderr_lines.recv_timeout(Duration::from_secs(20)).expect("no 'connects to' line from mpirun");
        if let Some(rest) = l.strip_prefix(&format!("mpirun: the proxy on {} connects to ", c.hosts[1])) {
            break rest.trim().to_string();
        }
        assert!(t.elapsed() < Duration::from_secs(20));
    };
    live.wait_ranks(4);
    let pokes: Vec<Vec<u8>> = vec![b"GET / HTTP/1.1\r\n\r\n".to_vec(), proxy_hello("not-the-secret-0123456789abcdef0", 1), proxy_hello("", 0)];
    for bytes in &pokes {
        if c.real_names {
            // From host B's namespace, as a proxy there would connect.
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            let (ip, port) = addr.rsplit_once(':').unwrap();
            // The agent runs its arguments through sh, as ssh does: one quoted word.
            let py = format!("import socket;s=socket.create_connection((\"{ip}\",{port}));s.sendall(bytes.fromhex(\"{hex}\"));s.settimeout(5);print(len(s.recv(64)))");
            let out = Command::new(agent()).args([c.hosts[1], &format!("python3 -c '{py}'")]).output().expect("poke through the agent");
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0", "mpirun answered an impostor: {}", String::from_utf8_lossy(&out.stderr));
        } else {
            let mut s = std::net::TcpStream::connect(&addr).expect("connect to mpirun");
            s.write_all(bytes).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut buf = [0u8; 64];
            let n = s.read(&mut buf).unwrap_or(0);
            assert_eq!(n, 0, "mpirun answered an impostor with {:?}", &buf[..n]);
        }
    }
    let (status, _, left, lines) = live.finish(Instant::now(), Duration::from_secs(30));
    let text = lines.join("\n");
    assert!(status.is_some_and(|s| s.success()), "{}: the job failed after impostors: {status:?}\n{text}", c.kind);
    assert!(left.is_empty(), "{text}");
    for why in ["not an OxMPI proxy", "wrong job secret"] {
        assert!(text.lines().any(|l| l.starts_with("mpirun: refused a proxy connection") && l.contains(why)), "{}: no refusal for {why:?}\n{text}", c.kind);
    }
    assert!(text.contains("mpirun: refused 3 proxy connection(s)"), "{}: {text}", c.kind);
}

/// Bad host lists and launchers: one line each, before anything starts.
#[test]
fn host_list_errors() {
    let m = mpi();
    if !m.is_oxmpi {
        return;
    }
    let true_exe = which("true").unwrap();
    let dir = std::env::temp_dir().join(format!("oxmpi-badhosts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empty = dir.join("empty");
    std::fs::write(&empty, "# nobody\n\n").unwrap();
    let e = empty.display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["-f", &e], "names no hosts"),
        (vec!["-f", "/nonexistent/hostfile"], "cannot read host file"),
        (vec!["-hosts", "a:0"], "slot count"),
        (vec!["-hosts", "a,,b"], "empty host name"),
        (vec!["-hosts", "a:2,b:2", "--nooversubscribe", "-n", "5"], "5 ranks requested but the hosts have only 4 slots"),
        (vec!["-launcher", "telnet", "-hosts", "a,b"], "unknown launcher"),
        (vec!["-launcher", "fork", "--map-by", "socket", "-hosts", "a,b"], "expected slot or node"),
    ];
    for (args, want) in cases {
        let out = Command::new(&m.mpirun).args(&args).arg(&true_exe).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(want), "{args:?}: expected an error with {want:?}, got {:?}: {err}", out.status);
        assert_eq!(err.lines().count(), 1, "{args:?}: one line, got: {err}");
    }
    // A launcher that cannot reach a host: one line naming the host and the agent.
    let out = Command::new(&m.mpirun).args(["-launcher-exec", "/bin/false", "-hosts", "nohost-1,nohost-2"]).arg(&true_exe).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("cannot start the proxy on nohost-") && err.contains("/bin/false"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

macro_rules! on_both {
    ($($case:ident => $fake:ident, $ns:ident;)*) => {$(
        #[test]
        fn $fake() {
            if mpi().is_oxmpi {
                $case(&fake());
            }
        }
        #[test]
        fn $ns() {
            if let Some(c) = netns().filter(|_| mpi().is_oxmpi) {
                $case(&c);
            }
        }
    )*};
}

on_both! {
    programs => programs_fake_hosts, programs_netns;
    io_programs => io_fake_hosts, io_netns;
    placement => placement_fake_hosts, placement_netns;
    stdin_to_remote_rank0 => stdin_fake_hosts, stdin_netns;
    timeout_env => timeout_fake_hosts, timeout_netns;
    teardown_rank_failures => rank_failures_fake_hosts, rank_failures_netns;
    late_exit => late_exit_fake_hosts, late_exit_netns;
    mpmd => mpmd_fake_hosts, mpmd_netns;
    teardown_mpirun_killed => mpirun_killed_fake_hosts, mpirun_killed_netns;
    teardown_proxy_killed => proxy_killed_fake_hosts, proxy_killed_netns;
    impostor_proxy => impostor_fake_hosts, impostor_netns;
    environment => environment_fake_hosts, environment_netns;
}

/// MPI_Comm_spawn with the `host` info key from a job on h1 onto h2: the nested mpirun
/// reaches h2 through `OXMPI_LAUNCHER_EXEC`, and the children connect back to a parent
/// whose ranks all share one host (its dynamic-process listener is not on loopback).
#[test]
fn spawn_onto_another_host() {
    let Some(c) = netns() else { return };
    let _x = exclusive();
    let exe = compile("spawn_host");
    let a = agent().display().to_string();
    let r = run(&exe, RunOpts { np: 1, args: vec!["h2".into()], env: vec![("OXMPI_LAUNCHER_EXEC".into(), a)], prefix: c.prefix.clone(), ..Default::default() });
    assert!(r.success() && r.stdout.contains("spawn_host: OK"), "{}", r.report());
    assert!(r.stdout.contains("parent on h1: child 0 on h2") && r.stdout.contains("child 1 on h2"), "{}", r.report());
    assert!(r.leftovers.is_empty(), "processes left behind\n{}", r.report());
}

/// Two jobs on different hosts meet through a port: a server job on h1 and h2 accepts a
/// client job on h2 and h3 (each job's own ranks on two hosts too), then goes on alone
/// after the client job ends. Checked by `dpm_jobs` (point-to-point both ways at 4 B and
/// 4 MiB, intercommunicator and merged collectives).
#[test]
fn connect_accept_across_hosts() {
    let Some(_c) = netns() else { return };
    let _x = exclusive();
    let exe = compile("dpm_jobs");
    let a = agent().display().to_string();
    let file = std::env::temp_dir().join(format!("oxmpi-dpm-hosts-{}", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let job = |host: &str, hosts: &str, role: &str, extra: &[&str]| {
        let mut cmd = Command::new(&a);
        cmd.arg(host).arg(&mpi().mpirun).args(["--timeout", "60", "-launcher-exec", &a, "-hosts", hosts, "-n", "2"]);
        cmd.arg(&exe).arg(role).arg(&file).args(extra);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        cmd
    };
    let start = Instant::now();
    let server = job("h1", "h1,h2", "server", &["1"]).spawn().expect("start the server job");
    let client = job("h2", "h2,h3", "client", &[]).output().expect("run the client job");
    let s = server.wait_with_output().expect("server job");
    let text = |what: &str, o: &std::process::Output| format!("{what}: {}\n{}{}", o.status, String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let report = format!("{:.1} s\n{}\n{}", start.elapsed().as_secs_f64(), text("server on h1,h2", &s), text("client on h2,h3", &client));
    let _ = std::fs::remove_file(&file);
    assert!(s.status.success() && report.contains("dpm_jobs server: OK"), "the server job failed\n{report}");
    assert!(client.status.success() && report.contains("dpm_jobs client: OK"), "the client job failed\n{report}");
    assert!(processes_running(&exe).is_empty(), "processes left behind\n{report}");
    eprintln!("connect_accept_across_hosts: ok in {:.2} s", start.elapsed().as_secs_f64());
}
