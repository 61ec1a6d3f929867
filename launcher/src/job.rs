//! One job, or one host's part of it: start the ranks, run the event loop (PMI server,
//! output, stdin, signals, timeouts), tear down on the first failure, clean up, and
//! compute mpirun's exit status.
//!
//! On a single host `mpirun` runs this itself. With several hosts every host's proxy runs
//! it with an `upstream` connection to `mpirun` (see `front.rs`): output, PMI barriers and
//! failures go up it instead of to the terminal, stdin and the end of the job come down
//! it, and a lost connection (mpirun killed, the host cut off) kills the ranks at once.
//!
//! Teardown policy: the first failure (a rank exiting non-zero, killed by a signal, or
//! exiting after PMI init without finalize; `MPI_Abort`; `--timeout`; SIGINT/SIGTERM/SIGHUP
//! to mpirun) is reported in one line on stderr, every rank gets SIGTERM (the received
//! signal for SIGINT/SIGTERM/SIGHUP), and whatever is still alive after
//! [`KILL_GRACE`] gets SIGKILL. The first failure also decides the exit status. A rank
//! exiting non-zero after `MPI_Finalize` is not a failure: it is reported in one line and
//! gives the exit status if nothing fails, and the other ranks finish (see `late_exit`).

use crate::cleanup;
use crate::frames::FrameConn;
use crate::output::LineForwarder;
use crate::pmi_server::{Event, PmiServer, PmiState};
use crate::spawn::{self, Program};
use crate::sys::{self, ExitStatus};
use crate::wire::{Down, Up};
use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

/// Time between SIGTERM and SIGKILL during teardown.
pub const KILL_GRACE: Duration = Duration::from_millis(1000);
/// After all ranks are gone, how long to wait for output pipes still held open by
/// (killed) grandchildren.
const DRAIN_LIMIT: Duration = Duration::from_millis(1000);
/// Exit status when `--timeout` expires (as coreutils `timeout`).
pub const TIMEOUT_EXIT: i32 = 124;

/// Everything needed to run a job (or one host's ranks of it).
pub struct JobSpec {
    /// Ranks in the job.
    pub np: usize,
    /// The ranks started here (global ranks; `0..np` on a single host).
    pub ranks: Vec<usize>,
    /// This host's node index (shared-memory segments are named after it).
    pub node: usize,
    /// The job's programs in rank order (one, or one per part of an MPMD command line).
    pub apps: Vec<App>,
    /// Environment shared by all ranks (inherited + -genv/-x), without per-rank PMI vars.
    pub base_env: Vec<(String, String)>,
    pub tag_output: bool,
    pub timeout: Option<Duration>,
    pub kvsname: String,
    /// The job's secret (`OXMPI_JOB_SECRET`: the TCP transport's handshakes).
    pub secret: String,
    /// `PMI_process_mapping`.
    pub mapping: String,
}

/// One program of a job: the next `np` ranks (in global rank order) run it, with `env`
/// over the job's environment; its index is their `MPI_APPNUM`.
pub struct App {
    /// None on a host that runs none of its ranks (its program is resolved where it runs).
    pub program: Option<Program>,
    pub env: Vec<(String, String)>,
    pub np: usize,
}

/// The index of the app global rank `rank` runs.
pub fn app_of(apps: &[App], rank: usize) -> usize {
    let mut first = 0;
    for (i, a) in apps.iter().enumerate() {
        if rank < first + a.np {
            return i;
        }
        first += a.np;
    }
    apps.len().saturating_sub(1)
}

/// Why the job is being torn down (the first failure wins).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    RankExit {
        rank: usize,
        pid: i32,
        status: ExitStatus,
        state: PmiState,
    },
    Abort {
        rank: usize,
        pid: i32,
        code: i32,
    },
    Protocol {
        rank: usize,
        pid: i32,
        reason: String,
    },
    Timeout {
        secs: u64,
    },
    Signal {
        sig: i32,
    },
    Spawn {
        rank: usize,
        reason: String,
    },
    /// A host of a multi-host job failed as a whole (its proxy did not start, was killed,
    /// or lost its connection); `reason` names it.
    Host {
        host: String,
        reason: String,
    },
}

impl Failure {
    /// The one line mpirun prints.
    pub fn message(&self) -> String {
        self.message_on(None)
    }

    /// As `message`, naming `host` (where the failure happened) after each pid.
    pub fn message_on(&self, host: Option<&str>) -> String {
        format!("mpirun: {}; terminating the job\n", self.body_on(host))
    }

    /// The line for a late exit (see [`Job::late_exit`]): the job goes on.
    pub fn late_message_on(&self, host: Option<&str>) -> String {
        format!("mpirun: {} after MPI_Finalize; the other ranks may finish\n", self.body_on(host))
    }

    /// What happened, without what mpirun does about it.
    fn body_on(&self, host: Option<&str>) -> String {
        let at = host.map(|h| format!(" on {h}")).unwrap_or_default();
        let body = match self {
            Failure::RankExit {
                rank,
                pid,
                status,
                state,
            } => {
                let when = match state {
                    PmiState::Init => " before MPI_Finalize",
                    _ => "",
                };
                match status {
                    ExitStatus::Signal(s) => format!(
                        "rank {rank} (pid {pid}{at}) was killed by signal {s} ({}){when}",
                        sys::signal_name(*s)
                    ),
                    ExitStatus::Code(c) => {
                        format!("rank {rank} (pid {pid}{at}) exited with code {c}{when}")
                    }
                }
            }
            Failure::Abort { rank, pid, code } => {
                format!("rank {rank} (pid {pid}{at}) called MPI_Abort with code {code}")
            }
            Failure::Protocol { rank, pid, reason } => {
                format!("rank {rank} (pid {pid}{at}) broke the PMI protocol ({reason})")
            }
            Failure::Timeout { secs } => {
                format!("the job exceeded the time limit of {secs} s (--timeout/MPIEXEC_TIMEOUT)")
            }
            Failure::Signal { sig } if host.is_some() => {
                format!("the proxy{at} received {}", sys::signal_name(*sig))
            }
            Failure::Signal { sig } => {
                format!(
                    "received {}, forwarded it to all ranks",
                    sys::signal_name(*sig)
                )
            }
            Failure::Spawn { rank, reason } => format!("cannot start rank {rank}{at}: {reason}"),
            Failure::Host { reason, .. } => reason.clone(),
        };
        body
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            Failure::RankExit {
                status: ExitStatus::Code(0),
                ..
            } => 1,
            Failure::RankExit { status, .. } => status.shell_code(),
            Failure::Abort { code, .. } => *code,
            Failure::Protocol { .. } | Failure::Spawn { .. } | Failure::Host { .. } => 1,
            Failure::Timeout { .. } => TIMEOUT_EXIT,
            Failure::Signal { sig } => 128 + sig,
        }
    }
}

/// One output pipe of a rank.
struct OutPipe {
    fd: OwnedFd,
    /// mpirun's fd to forward to (1 or 2).
    dest: RawFd,
    fwd: LineForwarder,
}

/// mpirun's view of one rank.
struct Rank {
    /// Global rank.
    rank: usize,
    pid: i32,
    pmi: Option<OwnedFd>,
    /// stdout and stderr; `None` once closed.
    outs: [Option<OutPipe>; 2],
    status: Option<ExitStatus>,
}

/// mpirun's stdin copied to rank 0's stdin.
struct StdinForward {
    /// More input may come (from fd 0, or from upstream).
    reading: bool,
    /// Input comes from our fd 0 (else from upstream `Stdin` frames).
    from_fd0: bool,
    dest: Option<OwnedFd>,
    pending: Vec<u8>,
}

/// The running job.
struct Job {
    ranks: Vec<Rank>,
    server: PmiServer,
    pgid: i32,
    stdin: StdinForward,
    failure: Option<Failure>,
    /// The first rank that exited non-zero after `MPI_Finalize`: not a failure of the job
    /// (the other ranks are past MPI too, and are left to finish and print what they
    /// have, as Hydra does), but mpirun's exit status when nothing fails.
    late_exit: Option<Failure>,
    /// When SIGKILL is due for ranks that survived SIGTERM.
    kill_at: Option<Instant>,
    killed: bool,
    deadline: Option<(Instant, u64)>,
    /// Set when the last rank was reaped: stop waiting for output after this.
    drain_until: Option<Instant>,
    /// The connection to mpirun, for a proxy (see the module doc).
    up: Option<FrameConn>,
    retired_sent: bool,
}

/// Run the job (a proxy: its host's part, with `up` its connection to mpirun) and return
/// the exit status.
pub fn run(spec: JobSpec, up: Option<FrameConn>) -> i32 {
    let Some(sigfd) = sys::launcher_setup() else { return 1 };
    let relay = up.is_some();
    let mut job = Job {
        ranks: Vec::new(),
        server: PmiServer::for_host(&spec.kvsname, spec.np, &spec.mapping, spec.ranks.clone(), relay)
            .with_appnums(spec.ranks.iter().map(|&r| app_of(&spec.apps, r) as i32).collect()),
        pgid: 0,
        stdin: StdinForward {
            reading: true,
            from_fd0: !relay,
            dest: None,
            pending: Vec::new(),
        },
        failure: None,
        late_exit: None,
        kill_at: None,
        killed: false,
        deadline: spec.timeout.map(|t| (Instant::now() + t, t.as_secs())),
        drain_until: None,
        up,
        retired_sent: false,
    };
    if let Err(f) = job.start_all(&spec) {
        job.fail(f);
    }
    job.event_loop(&sigfd);
    let left = cleanup::kill_and_reap_all(job.pgid, Duration::from_secs(2));
    if !left.is_empty() {
        eprintln!("mpirun: warning: processes {left:?} could not be reaped");
    }
    cleanup::remove_shm_files(&spec.kvsname, relay.then_some(spec.node));
    if let Some(up) = job.up.as_mut() {
        up.send(Up::Done.encode());
        up.flush_blocking(Duration::from_secs(2));
    }
    job.failure.or(job.late_exit).map(|f| f.exit_code()).unwrap_or(0)
}

impl Job {
    /// Fork every rank. On error the ranks started so far are torn down by the caller.
    fn start_all(&mut self, spec: &JobSpec) -> Result<(), Failure> {
        let dev_null = spawn::dev_null().map_err(|e| Failure::Spawn {
            rank: spec.ranks.first().copied().unwrap_or(0),
            reason: format!("/dev/null: {e}"),
        })?;
        for (local, &rank) in spec.ranks.iter().enumerate() {
            let spawn_err = |e: std::io::Error| Failure::Spawn {
                rank,
                reason: e.to_string(),
            };
            let (ours, theirs) = sys::socketpair().map_err(spawn_err)?;
            sys::set_nonblocking(ours.as_raw_fd()).map_err(spawn_err)?;
            let app = &spec.apps[app_of(&spec.apps, rank)];
            let mut env = spec.base_env.clone();
            env.retain(|(k, _)| !app.env.iter().any(|(a, _)| a == k));
            env.extend(app.env.iter().cloned());
            env.extend([
                ("PMI_FD".to_string(), theirs.as_raw_fd().to_string()),
                ("PMI_RANK".to_string(), rank.to_string()),
                ("PMI_SIZE".to_string(), spec.np.to_string()),
                ("OXMPI_JOB_SECRET".to_string(), spec.secret.clone()),
                ("MPI_LOCALNRANKS".to_string(), spec.ranks.len().to_string()),
                ("MPI_LOCALRANKID".to_string(), local.to_string()),
            ]);
            let envp: Vec<CString> =
                spawn::envp(&env).map_err(|reason| Failure::Spawn { rank, reason })?;
            let stdin_src = if rank == 0 { None } else { Some(&dev_null) };
            let program = app.program.as_ref().ok_or_else(|| Failure::Spawn { rank, reason: "no program for this rank (internal error)".into() })?;
            let started = spawn::start(program, &envp, self.pgid, &theirs, stdin_src)
                .map_err(spawn_err)?;
            drop(theirs);
            if local == 0 {
                self.pgid = started.pid;
            }
            if rank == 0 {
                self.stdin.dest = started.stdin;
            }
            let tag = spec.tag_output.then(|| format!("[{rank}] "));
            self.ranks.push(Rank {
                rank,
                pid: started.pid,
                pmi: Some(ours),
                outs: [
                    Some(OutPipe {
                        fd: started.stdout,
                        dest: 1,
                        fwd: LineForwarder::new(tag.clone()),
                    }),
                    Some(OutPipe {
                        fd: started.stderr,
                        dest: 2,
                        fwd: LineForwarder::new(tag),
                    }),
                ],
                status: None,
            });
        }
        Ok(())
    }

    /// Record the first failure, report it (to mpirun, for a proxy), and start killing the
    /// job.
    fn fail(&mut self, f: Failure) {
        if self.failure.is_some() {
            return;
        }
        match self.up.as_mut() {
            Some(up) => up.send(Up::Failed(f.clone()).encode()),
            None => {
                let _ = sys::write_all(2, f.message().as_bytes());
            }
        }
        let sig = match f {
            Failure::Signal { sig } => sig,
            _ => libc::SIGTERM,
        };
        self.failure = Some(f);
        self.signal_all(sig);
        self.kill_at = Some(Instant::now() + KILL_GRACE);
    }

    /// A rank exited non-zero after `MPI_Finalize`: reported (to mpirun, for a proxy) and
    /// kept for the exit status; the job goes on.
    fn late_exit(&mut self, f: Failure) {
        if self.failure.is_some() || self.late_exit.is_some() {
            return;
        }
        match self.up.as_mut() {
            Some(up) => up.send(Up::LateExit(f.clone()).encode()),
            None => {
                let _ = sys::write_all(2, f.late_message_on(None).as_bytes());
            }
        }
        self.late_exit = Some(f);
    }

    /// Send `sig` to the job's process group and to every live rank (in case a rank left
    /// the group).
    fn signal_all(&self, sig: i32) {
        if self.pgid > 0 {
            sys::kill(-self.pgid, sig);
        }
        for r in self.ranks.iter().filter(|r| r.status.is_none()) {
            sys::kill(r.pid, sig);
        }
    }

    fn all_exited(&self) -> bool {
        self.ranks.iter().all(|r| r.status.is_some())
    }

    fn outputs_open(&self) -> bool {
        self.ranks
            .iter()
            .any(|r| r.outs.iter().any(Option::is_some))
    }

    /// mpirun ends the job (another host failed, or mpirun got a signal): `sig` now,
    /// SIGKILL after the grace time; nothing to report.
    fn ended_by_mpirun(&mut self, sig: i32) {
        if self.failure.is_none() {
            self.failure = Some(Failure::Signal { sig });
            self.signal_all(sig);
            self.kill_at = Some(Instant::now() + KILL_GRACE);
        }
    }

    /// The connection to mpirun is gone (mpirun was killed, or this host was cut off):
    /// nobody is left to report to, so the ranks die now.
    fn lost_mpirun(&mut self) {
        if let Some(up) = self.up.as_mut() {
            up.eof = true;
        }
        if self.failure.is_none() {
            self.failure = Some(Failure::Signal { sig: libc::SIGKILL });
        }
        self.killed = true;
        self.signal_all(libc::SIGKILL);
    }

    /// Handles what mpirun sent.
    fn on_upstream(&mut self) {
        let Some(up) = self.up.as_mut() else { return };
        up.fill();
        loop {
            let Some(up) = self.up.as_mut() else { return };
            match up.next(Down::decode) {
                Ok(Some(Down::FenceDone { kvs })) => {
                    self.server.fence_done(kvs);
                    self.flush_pmi_all();
                }
                Ok(Some(Down::Stdin(data))) => {
                    if data.is_empty() {
                        self.stdin.reading = false;
                        if self.stdin.pending.is_empty() {
                            self.stdin.dest = None;
                        }
                    } else {
                        self.stdin.pending.extend_from_slice(&data);
                    }
                    self.on_stdin_writable();
                }
                Ok(Some(Down::Kill(sig))) => self.ended_by_mpirun(sig),
                Ok(Some(Down::Start(_))) | Err(_) => return self.lost_mpirun(),
                Ok(None) => {
                    if up.eof {
                        self.lost_mpirun();
                    }
                    return;
                }
            }
        }
    }

    /// A proxy tells mpirun about a barrier all its ranks entered, and when none can
    /// enter one any more.
    fn relay_pmi(&mut self) {
        let Some(up) = self.up.as_mut() else { return };
        if let Some(kvs) = self.server.take_fence() {
            up.send(Up::Fence { kvs }.encode());
        }
        if !self.retired_sent && self.server.retired() {
            self.retired_sent = true;
            up.send(Up::Retired.encode());
        }
    }

    fn event_loop(&mut self, sigfd: &OwnedFd) {
        loop {
            self.reap();
            if self.all_exited() {
                let until = *self.drain_until.get_or_insert_with(|| {
                    // Grandchildren may hold the output pipes open: kill them now.
                    cleanup::kill_and_reap_all(self.pgid, Duration::from_millis(200));
                    Instant::now() + DRAIN_LIMIT
                });
                if !self.outputs_open() || Instant::now() >= until {
                    self.flush_all_outputs();
                    return;
                }
            }
            self.check_timers();

            // Build the poll set; `slots` says what each entry is.
            let mut fds: Vec<libc::pollfd> = Vec::new();
            let mut slots: Vec<Slot> = Vec::new();
            let mut add = |fd: RawFd, events: i16, slot: Slot| {
                fds.push(libc::pollfd {
                    fd,
                    events,
                    revents: 0,
                });
                slots.push(slot);
            };
            add(sigfd.as_raw_fd(), libc::POLLIN, Slot::Signal);
            if let Some(up) = self.up.as_ref().filter(|u| !u.eof) {
                let ev = if up.wants_write() { libc::POLLIN | libc::POLLOUT } else { libc::POLLIN };
                add(up.raw(), ev, Slot::Upstream);
            }
            for (i, r) in self.ranks.iter().enumerate() {
                if let Some(p) = &r.pmi {
                    let mut ev = libc::POLLIN;
                    if self.server.has_output(i) {
                        ev |= libc::POLLOUT;
                    }
                    add(p.as_raw_fd(), ev, Slot::Pmi(i));
                }
                for (k, o) in r.outs.iter().enumerate() {
                    if let Some(o) = o {
                        add(o.fd.as_raw_fd(), libc::POLLIN, Slot::Output(i, k));
                    }
                }
            }
            if let Some(d) = &self.stdin.dest {
                if !self.stdin.pending.is_empty() {
                    add(d.as_raw_fd(), libc::POLLOUT, Slot::StdinDest);
                } else if self.stdin.reading && self.stdin.from_fd0 {
                    add(0, libc::POLLIN, Slot::StdinSrc);
                }
            }

            let timeout = self.poll_timeout();
            if let Err(e) = sys::poll(&mut fds, timeout) {
                eprintln!("mpirun: poll failed: {e}");
                self.fail(Failure::Signal { sig: libc::SIGKILL });
                continue;
            }
            for (pfd, slot) in fds.iter().zip(slots) {
                if pfd.revents == 0 {
                    continue;
                }
                match slot {
                    Slot::Signal => self.on_signals(sigfd),
                    Slot::Pmi(i) => self.on_pmi(i),
                    Slot::Output(i, k) => self.on_output(i, k),
                    Slot::StdinSrc => self.on_stdin_readable(),
                    Slot::StdinDest => self.on_stdin_writable(),
                    Slot::Upstream => {
                        if let Some(up) = self.up.as_mut() {
                            up.flush();
                        }
                        self.on_upstream();
                    }
                }
            }
            self.relay_pmi();
            self.flush_idle_partials();
        }
    }

    /// Poll timeout in ms: until the next timer (teardown kill, job timeout, partial-line
    /// flush, output drain), or forever.
    fn poll_timeout(&self) -> i32 {
        let mut next: Option<Instant> = self.kill_at.filter(|_| !self.killed);
        let mut consider = |t: Option<Instant>| {
            if let Some(t) = t {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        };
        consider(self.deadline.map(|d| d.0));
        consider(self.drain_until);
        for o in self.ranks.iter().flat_map(|r| r.outs.iter().flatten()) {
            consider(o.fwd.flush_due());
        }
        match next {
            None => -1,
            Some(t) => {
                let ms = t.saturating_duration_since(Instant::now()).as_millis();
                (ms.min(60_000) as i32).max(1)
            }
        }
    }

    fn check_timers(&mut self) {
        let now = Instant::now();
        if let Some((at, secs)) = self.deadline {
            if now >= at && self.failure.is_none() {
                self.deadline = None;
                self.fail(Failure::Timeout { secs });
            }
        }
        if let Some(at) = self.kill_at {
            if now >= at && !self.killed {
                self.killed = true;
                self.signal_all(libc::SIGKILL);
            }
        }
    }

    fn on_signals(&mut self, sigfd: &OwnedFd) {
        for sig in sys::read_signals(sigfd) {
            match sig {
                libc::SIGCHLD => {} // reaped at the top of the loop
                _ if self.failure.is_some() => {
                    // A second Ctrl-C: do not wait for the grace period.
                    self.killed = true;
                    self.signal_all(libc::SIGKILL);
                }
                _ => self.fail(Failure::Signal { sig }),
            }
        }
    }

    /// Reap every exited child; classify rank exits.
    fn reap(&mut self) {
        while let Some((pid, status)) = sys::reap_any() {
            let Some(i) = self.ranks.iter().position(|r| r.pid == pid) else {
                continue; // an orphaned grandchild (we are a subreaper)
            };
            let rank = self.ranks[i].rank;
            // A rank may have written `abort` or `finalize` just before exiting: handle
            // everything it sent before judging its exit.
            self.drain_pmi(i);
            self.ranks[i].status = Some(status);
            self.ranks[i].pmi = None;
            self.server.rank_gone(i);
            self.flush_pmi_all();
            if rank == 0 {
                self.stdin.dest = None;
                self.stdin.reading = false;
            }
            let state = self.server.state(i);
            let f = Failure::RankExit {
                rank,
                pid,
                status,
                state,
            };
            match status {
                ExitStatus::Code(0) if state != PmiState::Init => {}
                ExitStatus::Code(_) if state == PmiState::Finalized => self.late_exit(f),
                _ => self.fail(f),
            }
        }
    }

    /// Read all PMI input of an exited rank that is still buffered in the socket.
    fn drain_pmi(&mut self, rank: usize) {
        while self.ranks[rank].pmi.is_some() {
            if !self.read_pmi(rank) {
                break;
            }
        }
    }

    fn on_pmi(&mut self, rank: usize) {
        self.read_pmi(rank);
        self.flush_pmi_all();
    }

    /// One non-blocking read from a rank's PMI socket. Returns true if data was read.
    fn read_pmi(&mut self, rank: usize) -> bool {
        let Some(fd) = self.ranks[rank].pmi.as_ref().map(|f| f.as_raw_fd()) else {
            return false;
        };
        let mut buf = [0u8; 16 * 1024];
        match sys::read(fd, &mut buf) {
            Ok(0) => {
                self.close_pmi(rank);
                false
            }
            Ok(n) => {
                for ev in self.server.on_bytes(rank, &buf[..n]) {
                    let pid = self.ranks[rank].pid;
                    match ev {
                        Event::Abort { rank, code } => {
                            self.fail(Failure::Abort { rank, pid, code })
                        }
                        Event::ProtocolError { rank, reason } => {
                            self.fail(Failure::Protocol { rank, pid, reason })
                        }
                    }
                }
                true
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
            Err(_) => {
                self.close_pmi(rank);
                false
            }
        }
    }

    fn close_pmi(&mut self, rank: usize) {
        self.ranks[rank].pmi = None;
        self.server.rank_gone(rank);
    }

    /// Write queued PMI replies (a barrier release queues replies for many ranks).
    fn flush_pmi_all(&mut self) {
        for rank in 0..self.ranks.len() {
            let Some(fd) = self.ranks[rank].pmi.as_ref().map(|f| f.as_raw_fd()) else {
                self.server.take_output(rank).clear();
                continue;
            };
            let out = self.server.take_output(rank);
            while !out.is_empty() {
                match sys::write(fd, out) {
                    Ok(n) => {
                        out.drain(..n);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(_) => {
                        out.clear();
                        self.close_pmi(rank);
                        break;
                    }
                }
            }
            if self.ranks[rank].pmi.is_some() && self.server.should_close(rank) {
                self.ranks[rank].pmi = None; // after finalize_ack, as real servers do
            }
        }
    }

    /// Forward what a rank wrote to stdout/stderr; close the pipe at EOF.
    fn on_output(&mut self, rank: usize, k: usize) {
        let who = self.ranks[rank].rank;
        let Some(o) = self.ranks[rank].outs[k].as_mut() else {
            return;
        };
        let mut chunk = [0u8; 64 * 1024];
        match sys::read(o.fd.as_raw_fd(), &mut chunk) {
            Ok(n) if n > 0 => {
                let data = o.fwd.push(&chunk[..n]);
                emit(&mut self.up, who, o.dest, &data);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            _ => {
                // EOF or a read error: forward the partial line and close.
                let data = o.fwd.flush();
                emit(&mut self.up, who, o.dest, &data);
                self.ranks[rank].outs[k] = None;
            }
        }
    }

    fn flush_idle_partials(&mut self) {
        let now = Instant::now();
        for r in &mut self.ranks {
            for o in r.outs.iter_mut().flatten() {
                if o.fwd.flush_due().is_some_and(|t| t <= now) {
                    let data = o.fwd.flush();
                    emit(&mut self.up, r.rank, o.dest, &data);
                }
            }
        }
    }

    fn flush_all_outputs(&mut self) {
        for r in &mut self.ranks {
            for o in r.outs.iter_mut().flatten() {
                let data = o.fwd.flush();
                emit(&mut self.up, r.rank, o.dest, &data);
            }
            r.outs = [None, None];
        }
    }

    fn on_stdin_readable(&mut self) {
        let mut buf = [0u8; 64 * 1024];
        match sys::read(0, &mut buf) {
            Ok(0) | Err(_) => {
                self.stdin.reading = false;
                self.stdin.dest = None; // EOF for rank 0
            }
            Ok(n) => {
                self.stdin.pending.extend_from_slice(&buf[..n]);
                self.on_stdin_writable();
            }
        }
    }

    fn on_stdin_writable(&mut self) {
        let Some(d) = &self.stdin.dest else {
            self.stdin.pending.clear();
            return;
        };
        while !self.stdin.pending.is_empty() {
            match sys::write(d.as_raw_fd(), &self.stdin.pending) {
                Ok(n) => {
                    self.stdin.pending.drain(..n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    // Rank 0 closed its stdin: stop forwarding.
                    self.stdin.pending.clear();
                    self.stdin.dest = None;
                    self.stdin.reading = false;
                    return;
                }
            }
        }
        if !self.stdin.reading {
            self.stdin.dest = None;
        }
    }
}

/// Forwards output of `rank` to mpirun's `dest` (1 or 2), or up to mpirun for a proxy.
fn emit(up: &mut Option<FrameConn>, rank: usize, dest: RawFd, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    match up {
        Some(up) => up.send(Up::Output { rank: rank as u32, stream: dest as u8, data: data.to_vec() }.encode()),
        None => {
            let _ = sys::write_all(dest, data);
        }
    }
}

/// What a poll entry stands for.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Signal,
    Upstream,
    Pmi(usize),
    Output(usize, usize),
    StdinSrc,
    StdinDest,
}
