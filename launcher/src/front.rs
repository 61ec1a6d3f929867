//! `mpirun` for a job on several hosts: one proxy per host (started by `remote.rs`),
//! which connects back here over TCP, proves it knows the job secret, gets its host's
//! part of the job (`wire::ProxySpec`) and runs it (`job.rs` with an upstream).
//!
//! mpirun then only coordinates: it prints what the proxies forward (whole lines, rank
//! tags intact), feeds its stdin to the host of rank 0, completes PMI barriers across
//! hosts (each host sends the pairs its ranks put once all of them are in the barrier;
//! when every host is in, every host gets every pair: one round trip per host and
//! barrier), and applies the single-host teardown policy to the whole job: the first
//! failure anywhere is reported with its rank, host, pid and cause, every proxy is told to
//! end its ranks, and mpirun exits with that failure's status. A proxy whose connection
//! closes before it said `Done` (killed, or its host cut off) is such a failure; a proxy
//! that loses mpirun kills its ranks at once.
//!
//! Inside a Slurm allocation one srun is the agent of every proxy (`slurm.rs`); a proxy
//! then says which host it is by its Slurm node name.

use crate::frames::FrameConn;
use crate::job::{Failure, KILL_GRACE};
use crate::remote::{self, Launcher};
use crate::sys::{self, ExitStatus};
use crate::wire::{Down, ProxySpec, Up};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// How long a proxy may take to connect back after its agent started.
const CONNECT_LIMIT: Duration = Duration::from_secs(60);
/// After the job is told to end, how long to wait for the proxies' last words.
const END_LIMIT: Duration = Duration::from_secs(3);
/// An accepted connection must send its hello within this time.
const HELLO_LIMIT: Duration = Duration::from_secs(10);

/// A multi-host job as `main` prepared it.
pub struct FrontSpec {
    /// The hosts that run ranks; a host's index is its node number.
    pub hosts: Vec<String>,
    pub ranks_of: Vec<Vec<u32>>,
    pub np: usize,
    /// The programs, in rank order (each with its working directory set).
    pub apps: Vec<crate::wire::AppDesc>,
    pub env: Vec<(String, String)>,
    pub tag_output: bool,
    pub timeout: Option<Duration>,
    pub launcher: Launcher,
    pub mapping: String,
    pub verbose: bool,
}

/// A process that starts proxies (ssh, srun, or a proxy started directly).
struct Agent {
    started: remote::Started,
    status: Option<ExitStatus>,
}

/// mpirun's view of one host.
struct Proxy {
    host: String,
    /// Its agent (an index into `Front::agents`; srun is the agent of every host).
    agent: Option<usize>,
    started_at: Instant,
    conn: Option<FrameConn>,
    /// The proxy's pid on its host (from its hello).
    pid: u32,
    fence: Option<Vec<(String, String)>>,
    retired: bool,
    done: bool,
}

/// An accepted connection that has not said who it is.
struct Pending {
    conn: FrameConn,
    from: SocketAddr,
    since: Instant,
}

struct Front {
    spec: FrontSpec,
    kvsname: String,
    secret: String,
    proxies: Vec<Proxy>,
    agents: Vec<Agent>,
    pending: Vec<Pending>,
    listener: TcpListener,
    failure: Option<(Failure, Option<String>)>,
    /// The first late exit a proxy reported (see `job::Job::late_exit`): the exit status
    /// when nothing fails.
    late_exit: Option<Failure>,
    /// When mpirun stops waiting for proxies after the job was told to end.
    give_up_at: Option<Instant>,
    deadline: Option<(Instant, u64)>,
    /// Reading our stdin for rank 0 (until EOF, or rank 0's host is gone).
    stdin_open: bool,
    refused: usize,
}

/// Runs the job and returns mpirun's exit status.
pub fn run(spec: FrontSpec) -> i32 {
    let Some(sigfd) = sys::launcher_setup() else { return 1 };
    let all_local = spec.launcher == Launcher::Fork || spec.hosts.iter().all(|h| crate::hosts::is_local(h));
    let bind_ip = if all_local { Ipv4Addr::LOCALHOST } else { Ipv4Addr::UNSPECIFIED };
    let listener = match TcpListener::bind((bind_ip, 0)).and_then(|l| l.set_nonblocking(true).map(|_| l)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mpirun: cannot listen for proxies: {e}");
            return 1;
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let now = Instant::now();
    let mut f = Front {
        kvsname: format!("oxmpi_{}_{}", std::process::id(), sys::random_hex(4)),
        secret: sys::random_hex(16),
        proxies: spec
            .hosts
            .iter()
            .map(|h| Proxy { host: h.clone(), agent: None, started_at: now, conn: None, pid: 0, fence: None, retired: false, done: false })
            .collect(),
        agents: Vec::new(),
        pending: Vec::new(),
        listener,
        failure: None,
        late_exit: None,
        give_up_at: None,
        deadline: spec.timeout.map(|t| (now + t, t.as_secs())),
        stdin_open: true,
        refused: 0,
        spec,
    };
    f.start_proxies(port);
    f.event_loop(&sigfd);
    f.finish()
}

impl Front {
    /// Starts every host's proxy (an agent for remote hosts) and says where to connect.
    fn start_proxies(&mut self, port: u16) {
        let exe = match std::env::current_exe() {
            Ok(p) => p.display().to_string(),
            Err(e) => return self.fail(Failure::Host { host: String::new(), reason: format!("cannot find mpirun's own path to start proxies: {e}") }, None),
        };
        let iface = std::env::var("OXMPI_LAUNCHER_IF").ok();
        if let Launcher::Slurm(srun) = &self.spec.launcher {
            return self.start_slurm_step(&srun.clone(), &exe, port, iface.as_deref());
        }
        for i in 0..self.proxies.len() {
            let host = self.proxies[i].host.clone();
            let local = self.spec.launcher == Launcher::Fork || crate::hosts::is_local(&host);
            let ip = match reach_from(&host, local, iface.as_deref()) {
                Ok(ip) => ip,
                Err(e) => return self.fail(Failure::Host { host: host.clone(), reason: e }, None),
            };
            let addr = format!("{ip}:{port}");
            if self.spec.verbose {
                eprintln!("mpirun: the proxy on {host} connects to {addr}");
            }
            let proxy_cmd = vec![exe.clone(), "--oxmpi-proxy".to_string(), addr, i.to_string()];
            let argv = self.spec.launcher.command_for(&host, local, &proxy_cmd).unwrap_or(proxy_cmd);
            if !self.start_agent(&argv, remote::SecretVia::Stdin, &[i]) {
                return;
            }
        }
    }

    /// Starts `argv` as the agent of the proxies `of`; false (and the job failed) if it
    /// could not start.
    fn start_agent(&mut self, argv: &[String], via: remote::SecretVia, of: &[usize]) -> bool {
        match remote::start(argv, &self.secret, via) {
            Ok(s) => {
                self.agents.push(Agent { started: s, status: None });
                for &i in of {
                    self.proxies[i].agent = Some(self.agents.len() - 1);
                    self.proxies[i].started_at = Instant::now();
                }
                true
            }
            Err(e) => {
                let why = if e.kind() == std::io::ErrorKind::NotFound { format!("{} not found (install it, or choose another agent with -launcher / -launcher-exec)", argv[0]) } else { e.to_string() };
                let host = self.proxies[of[0]].host.clone();
                let on = if of.len() == 1 { host.clone() } else { format!("{} hosts", of.len()) };
                let reason = format!("cannot start the proxy on {on} (`{}`): {why}", argv.join(" "));
                self.fail(Failure::Host { host, reason }, None);
                false
            }
        }
    }

    /// Inside a Slurm allocation: one srun starts a proxy on every host; each proxy names
    /// its node in its hello, and finds the secret in its environment.
    fn start_slurm_step(&mut self, srun: &str, exe: &str, port: u16, iface: Option<&str>) {
        // One address for all (one command line): the route to a node that is not this
        // machine, else loopback.
        let remote = self.proxies.iter().find(|p| !crate::hosts::is_local(&p.host)).map(|p| p.host.clone());
        let ip = match reach_from(remote.as_deref().unwrap_or("localhost"), remote.is_none(), iface) {
            Ok(ip) => ip,
            Err(e) => return self.fail(Failure::Host { host: remote.unwrap_or_default(), reason: e }, None),
        };
        let addr = format!("{ip}:{port}");
        let hosts: Vec<String> = self.proxies.iter().map(|p| p.host.clone()).collect();
        let argv = crate::slurm::srun_command(srun, &hosts, &[exe.to_string(), "--oxmpi-proxy".into(), addr.clone(), "slurm".into()]);
        if self.spec.verbose {
            for h in &hosts {
                eprintln!("mpirun: the proxy on {h} connects to {addr}");
            }
            eprintln!("mpirun: starting the proxies with `{}`", argv.join(" "));
        }
        let all: Vec<usize> = (0..hosts.len()).collect();
        self.start_agent(&argv, remote::SecretVia::Env, &all);
    }

    /// Records the first failure, reports it, and tells every proxy to end its ranks.
    fn fail(&mut self, f: Failure, host: Option<String>) {
        if self.failure.is_some() {
            return;
        }
        let _ = sys::write_all(2, f.message_on(host.as_deref()).as_bytes());
        let sig = match f {
            Failure::Signal { sig } if host.is_none() => sig,
            _ => libc::SIGTERM,
        };
        self.failure = Some((f, host));
        let mut stop = Vec::new();
        for p in &mut self.proxies {
            match p.conn.as_mut() {
                Some(c) => c.send(Down::Kill(sig).encode()),
                // Never connected: its agent is all there is to stop (not the agent of a
                // proxy that is done: srun may still be the agent of others).
                None if !p.done => stop.extend(p.agent),
                None => {}
            }
        }
        stop.sort_unstable();
        stop.dedup();
        for a in stop {
            sys::kill(-self.agents[a].started.pid, libc::SIGKILL);
        }
        self.give_up_at = Some(Instant::now() + KILL_GRACE + END_LIMIT);
    }

    fn all_done(&self) -> bool {
        self.proxies.iter().all(|p| p.done || (self.failure.is_some() && p.conn.is_none() && p.agent.map_or(true, |a| self.agents[a].status.is_some())))
    }

    fn event_loop(&mut self, sigfd: &OwnedFd) {
        loop {
            self.reap();
            self.check_timers();
            if self.all_done() || self.give_up_at.is_some_and(|t| Instant::now() >= t) {
                return;
            }
            let mut fds: Vec<libc::pollfd> = Vec::new();
            let mut slots: Vec<Slot> = Vec::new();
            let mut add = |fd, events, slot| {
                fds.push(libc::pollfd { fd, events, revents: 0 });
                slots.push(slot);
            };
            add(sigfd.as_raw_fd(), libc::POLLIN, Slot::Signal);
            add(self.listener.as_raw_fd(), libc::POLLIN, Slot::Listener);
            for (i, p) in self.pending.iter().enumerate() {
                add(p.conn.raw(), libc::POLLIN, Slot::Pending(i));
            }
            for (i, p) in self.proxies.iter().enumerate() {
                if let Some(c) = p.conn.as_ref() {
                    add(c.raw(), if c.wants_write() { libc::POLLIN | libc::POLLOUT } else { libc::POLLIN }, Slot::Proxy(i));
                }
            }
            // Our stdin goes to rank 0's host once it is connected (and not backed up).
            let rank0 = self.host_of_rank0();
            if self.stdin_open && self.failure.is_none() {
                if self.proxies[rank0].conn.as_ref().is_some_and(|c| !c.wants_write()) {
                    add(0, libc::POLLIN, Slot::Stdin);
                }
            }
            if let Err(e) = sys::poll(&mut fds, 200) {
                eprintln!("mpirun: poll failed: {e}");
                return;
            }
            for (pfd, slot) in fds.iter().zip(slots).rev() {
                if pfd.revents == 0 {
                    continue;
                }
                match slot {
                    Slot::Signal => self.on_signals(sigfd),
                    Slot::Listener => self.accept(),
                    Slot::Pending(i) => self.on_pending(i),
                    Slot::Proxy(i) => self.on_proxy(i),
                    Slot::Stdin => self.on_stdin(rank0),
                }
            }
        }
    }

    fn host_of_rank0(&self) -> usize {
        self.spec.ranks_of.iter().position(|r| r.contains(&0)).unwrap_or(0)
    }

    fn check_timers(&mut self) {
        let now = Instant::now();
        if let Some((at, secs)) = self.deadline {
            if now >= at {
                self.deadline = None;
                self.fail(Failure::Timeout { secs }, None);
            }
        }
        if self.failure.is_none() {
            for i in 0..self.proxies.len() {
                let p = &self.proxies[i];
                if p.conn.is_none() && !p.done && p.agent.is_some() && now.duration_since(p.started_at) > CONNECT_LIMIT {
                    let reason = format!(
                        "the proxy on {} did not connect back to mpirun within {} s (can {} reach this machine? choose mpirun's interface with OXMPI_LAUNCHER_IF)",
                        p.host,
                        CONNECT_LIMIT.as_secs(),
                        p.host
                    );
                    let host = p.host.clone();
                    self.fail(Failure::Host { host, reason }, None);
                }
            }
        }
        let stale: Vec<usize> = (0..self.pending.len()).filter(|&i| now.duration_since(self.pending[i].since) > HELLO_LIMIT).collect();
        for i in stale.into_iter().rev() {
            let p = self.pending.remove(i);
            self.refuse(p.from, "no hello in time");
        }
    }

    fn on_signals(&mut self, sigfd: &OwnedFd) {
        for sig in sys::read_signals(sigfd) {
            match sig {
                libc::SIGCHLD => {}
                _ if self.failure.is_some() => {
                    // A second Ctrl-C: everything dies now.
                    for p in &mut self.proxies {
                        if let Some(c) = p.conn.as_mut() {
                            c.send(Down::Kill(libc::SIGKILL).encode());
                        }
                    }
                    for a in &self.agents {
                        sys::kill(-a.started.pid, libc::SIGKILL);
                    }
                    self.give_up_at = Some(Instant::now() + Duration::from_millis(500));
                }
                _ => self.fail(Failure::Signal { sig }, None),
            }
        }
    }

    /// Reaps agents (and proxies started directly) that exited.
    fn reap(&mut self) {
        while let Some((pid, status)) = sys::reap_any() {
            let Some(a) = self.agents.iter().position(|a| a.started.pid == pid) else { continue };
            self.agents[a].status = Some(status);
            // The first of its proxies that never connected, if any.
            let waiting = self.proxies.iter().position(|p| p.agent == Some(a) && p.conn.is_none() && !p.done);
            if let Some(p) = waiting.map(|i| &self.proxies[i]).filter(|_| self.failure.is_none()) {
                let a = &self.agents[a].started;
                let (how, code) = match status {
                    ExitStatus::Code(c) => (format!("exited with code {c}"), c),
                    ExitStatus::Signal(s) => (format!("was killed by {}", sys::signal_name(s)), 128 + s),
                };
                let reason = format!(
                    "cannot start the proxy on {}: `{}` {how} before the proxy connected{}",
                    p.host,
                    a.argv.join(" "),
                    self.spec.launcher.hint(&p.host, code)
                );
                let host = p.host.clone();
                self.fail(Failure::Host { host, reason }, None);
            }
        }
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, from)) => {
                    let _ = stream.set_nodelay(true);
                    let fd: OwnedFd = stream.into();
                    if let Ok(conn) = FrameConn::new(fd) {
                        self.pending.push(Pending { conn, from, since: Instant::now() });
                    }
                }
                Err(_) => return,
            }
        }
    }

    fn refuse(&mut self, from: SocketAddr, why: &str) {
        self.refused += 1;
        if self.spec.verbose {
            eprintln!("mpirun: refused a proxy connection from {from}: {why}");
        }
    }

    /// An accepted connection's hello: the secret, and which host it is.
    fn on_pending(&mut self, i: usize) {
        let p = &mut self.pending[i];
        p.conn.fill();
        let verdict = match p.conn.next(Up::decode) {
            Ok(None) if !p.conn.eof => return,
            Ok(None) => Err("closed before its hello".to_string()),
            Ok(Some(Up::Hello { secret, host, pid })) => {
                let h = host as usize;
                if !same_secret(&secret, &self.secret) {
                    Err("wrong job secret".to_string())
                } else if h >= self.proxies.len() {
                    Err(format!("host index {h} out of range"))
                } else if self.proxies[h].conn.is_some() || self.proxies[h].done {
                    Err(format!("host {} is connected already", self.proxies[h].host))
                } else {
                    Ok((h, pid))
                }
            }
            Ok(Some(Up::HelloNamed { secret, name, pid })) => {
                let free = self.proxies.iter().position(|p| p.host == name && p.conn.is_none() && !p.done);
                if !same_secret(&secret, &self.secret) {
                    Err("wrong job secret".to_string())
                } else if let Some(h) = free {
                    Ok((h, pid))
                } else if self.proxies.iter().any(|p| p.host == name) {
                    Err(format!("host {name} is connected already"))
                } else {
                    Err(format!("no host {name} in this job"))
                }
            }
            Ok(Some(_)) => Err("sent something before its hello".to_string()),
            Err(e) => Err(e),
        };
        let p = self.pending.remove(i);
        let verdict = verdict.and_then(|v| if self.failure.is_some() { Err("the job is ending".to_string()) } else { Ok(v) });
        match verdict {
            Err(why) => self.refuse(p.from, &why),
            Ok((h, pid)) => {
                let mut conn = p.conn;
                conn.send(Down::Start(self.spec_for(h)).encode());
                let px = &mut self.proxies[h];
                px.pid = pid;
                px.conn = Some(conn);
                if self.spec.verbose {
                    eprintln!("mpirun: the proxy on {} (pid {pid}) connected from {}", px.host, p.from);
                }
            }
        }
    }

    fn spec_for(&self, h: usize) -> ProxySpec {
        ProxySpec {
            kvsname: self.kvsname.clone(),
            np: self.spec.np as u32,
            node: h as u32,
            ranks: self.spec.ranks_of[h].clone(),
            apps: self.spec.apps.clone(),
            env: self.spec.env.clone(),
            tag_output: self.spec.tag_output,
            mapping: self.spec.mapping.clone(),
        }
    }

    fn on_proxy(&mut self, i: usize) {
        let Some(c) = self.proxies[i].conn.as_mut() else { return };
        c.flush();
        c.fill();
        loop {
            let Some(c) = self.proxies[i].conn.as_mut() else { return };
            match c.next(Up::decode) {
                Ok(Some(m)) => self.on_message(i, m),
                Ok(None) if c.eof => return self.lost(i, None),
                Ok(None) => return,
                Err(e) => return self.lost(i, Some(e)),
            }
        }
    }

    fn on_message(&mut self, i: usize, m: Up) {
        match m {
            Up::Output { stream, data, .. } => {
                let fd = if stream == 2 { 2 } else { 1 };
                let _ = sys::write_all(fd, &data);
            }
            Up::Fence { kvs } => {
                self.proxies[i].fence = Some(kvs);
                self.check_fence();
            }
            Up::Retired => {
                self.proxies[i].retired = true;
                self.check_fence();
            }
            Up::Failed(f) => {
                let host = self.proxies[i].host.clone();
                self.fail(f, Some(host));
            }
            Up::LateExit(f) => {
                if self.failure.is_none() && self.late_exit.is_none() {
                    let _ = sys::write_all(2, f.late_message_on(Some(&self.proxies[i].host)).as_bytes());
                    self.late_exit = Some(f);
                }
            }
            Up::Done => {
                self.proxies[i].done = true;
                self.proxies[i].conn = None;
                if i == self.host_of_rank0() {
                    self.stdin_open = false;
                }
            }
            Up::Hello { .. } | Up::HelloNamed { .. } => self.lost(i, Some("a second hello".into())),
        }
    }

    /// A proxy's connection closed (or broke) before it said `Done`.
    fn lost(&mut self, i: usize, why: Option<String>) {
        let p = &mut self.proxies[i];
        p.conn = None;
        if p.done {
            return;
        }
        p.done = true;
        let reason = format!(
            "lost the proxy on {} (pid {}): {}; the proxy was killed or the host went down",
            p.host,
            p.pid,
            why.unwrap_or_else(|| "its connection closed".into())
        );
        let host = p.host.clone();
        self.fail(Failure::Host { host, reason }, None);
        self.check_fence();
    }

    /// A barrier is complete once every host is in it or can never enter it again.
    fn check_fence(&mut self) {
        let waiting = self.proxies.iter().any(|p| p.fence.is_some());
        let all_in = self.proxies.iter().all(|p| p.fence.is_some() || p.retired || p.done);
        if !waiting || !all_in || self.failure.is_some() {
            return;
        }
        let mut kvs = Vec::new();
        for p in &mut self.proxies {
            kvs.extend(p.fence.take().unwrap_or_default());
        }
        let done = Down::FenceDone { kvs }.encode();
        for p in &mut self.proxies {
            if let Some(c) = p.conn.as_mut().filter(|_| !p.retired) {
                c.send(done.clone());
            }
        }
    }

    fn on_stdin(&mut self, rank0: usize) {
        let mut buf = [0u8; 64 * 1024];
        let data = match sys::read(0, &mut buf) {
            Ok(n) => buf[..n].to_vec(),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
            Err(_) => Vec::new(),
        };
        if data.is_empty() {
            self.stdin_open = false;
        }
        if let Some(c) = self.proxies[rank0].conn.as_mut() {
            c.send(Down::Stdin(data).encode());
        }
    }

    /// After the loop: stop whatever is left, and mpirun's exit status.
    fn finish(&mut self) -> i32 {
        for p in &mut self.proxies {
            if let Some(c) = p.conn.as_mut() {
                c.flush_blocking(Duration::from_millis(200));
            }
            p.conn = None;
        }
        // Agents end when their proxy does; give them a moment (srun reports the end of
        // its step to Slurm first), then stop them.
        let grace = if matches!(self.spec.launcher, Launcher::Slurm(_)) { Duration::from_secs(3) } else { Duration::from_millis(500) };
        let end = Instant::now() + grace;
        loop {
            self.reap();
            let running: Vec<i32> = self.agents.iter().filter(|a| a.status.is_none()).map(|a| a.started.pid).collect();
            if running.is_empty() {
                break;
            }
            if Instant::now() >= end {
                for pid in running {
                    sys::kill(-pid, libc::SIGKILL);
                    sys::kill(pid, libc::SIGKILL);
                }
                crate::cleanup::kill_and_reap_all(0, Duration::from_secs(1));
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if self.spec.verbose && self.refused > 0 {
            eprintln!("mpirun: refused {} proxy connection(s)", self.refused);
        }
        match (&self.failure, &self.late_exit) {
            (Some((f, _)), _) | (None, Some(f)) => f.exit_code(),
            (None, None) => 0,
        }
    }
}

/// Constant-time comparison of two secrets.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The address of this machine that `host` reaches it at: loopback for this machine,
/// `OXMPI_LAUNCHER_IF` when set, else the source address of the route to the host (where
/// its name resolves), else the first interface that is up.
fn reach_from(host: &str, local: bool, iface: Option<&str>) -> Result<Ipv4Addr, String> {
    use mpi_core::transport::tcp::addr;
    if iface.is_some_and(|s| !s.trim().is_empty()) {
        return addr::choose_by("OXMPI_LAUNCHER_IF", iface, false, &addr::interfaces()).map(|(ip, _)| ip);
    }
    if local {
        return Ok(Ipv4Addr::LOCALHOST);
    }
    let resolved = std::net::ToSocketAddrs::to_socket_addrs(&(host, 9)).ok().and_then(|mut a| a.find(|a| a.is_ipv4()));
    if let Some(target) = resolved {
        if let Ok(sock) = std::net::UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)) {
            if sock.connect(target).is_ok() {
                if let Ok(SocketAddr::V4(me)) = sock.local_addr() {
                    return Ok(*me.ip());
                }
            }
        }
    }
    addr::choose_by("OXMPI_LAUNCHER_IF", None, false, &addr::interfaces()).map(|(ip, _)| ip)
}

/// What a poll entry stands for.
#[derive(Clone, Copy)]
enum Slot {
    Signal,
    Listener,
    Pending(usize),
    Proxy(usize),
    Stdin,
}
