//! Proxy mode (`mpirun --oxmpi-proxy ADDR HOST`): what `mpirun` starts on every host of a
//! multi-host job. It reads the job secret from its stdin, connects back to `mpirun` at
//! ADDR, says hello (secret, host index), receives its host's part of the job, and runs it
//! with `job.rs`, whose upstream is this connection.
//!
//! HOST `slurm`: one srun started the proxies of all hosts (`slurm.rs`). The secret is then
//! in the environment, the hello names the Slurm node instead of an index, the ranks get
//! the node's own Slurm variables, and the exit status is 0 once the job ran (mpirun
//! already knows how it went; a non-zero status would make srun report every proxy).

use crate::frames::FrameConn;
use crate::job::{self, Failure, JobSpec};
use crate::slurm;
use crate::spawn;
use crate::sys;
use crate::wire::{Down, Up};
use std::io::BufRead;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long mpirun may take to send the job after the hello.
const START_LIMIT: Duration = Duration::from_secs(30);

fn die(msg: &str) -> i32 {
    eprintln!("mpirun proxy on {}: {msg}", crate::hosts::this_host());
    1
}

/// Runs the proxy; the exit status is for the agent that started it.
pub fn run(addr: &str, host: &str) -> i32 {
    let by_slurm = host == "slurm";
    let mut secret = String::new();
    let hello = if by_slurm {
        secret = std::env::var(slurm::SECRET_VAR).unwrap_or_default();
        std::env::remove_var(slurm::SECRET_VAR);
        let Some(name) = slurm::this_node() else { return die("SLURMD_NODENAME is not set: `--oxmpi-proxy ADDR slurm` is started by mpirun through srun") };
        if secret.trim().is_empty() {
            return die(&format!("no job secret in {} (the proxy is started by mpirun, not by hand)", slurm::SECRET_VAR));
        }
        Up::HelloNamed { secret: secret.trim().to_string(), name, pid: std::process::id() }
    } else {
        let Ok(host) = host.parse::<u32>() else { return die(&format!("bad host index `{host}`")) };
        if std::io::stdin().lock().read_line(&mut secret).is_err() || secret.trim().is_empty() {
            return die("no job secret on stdin (the proxy is started by mpirun, not by hand)");
        }
        Up::Hello { secret: secret.trim().to_string(), host, pid: std::process::id() }
    };
    let target: Option<SocketAddr> = addr.to_socket_addrs().ok().and_then(|mut a| a.next());
    let Some(target) = target else { return die(&format!("bad mpirun address `{addr}`")) };
    let stream = match TcpStream::connect_timeout(&target, Duration::from_secs(10)) {
        Ok(s) => s,
        Err(e) => return die(&format!("cannot connect to mpirun at {addr}: {e} (choose mpirun's interface with OXMPI_LAUNCHER_IF)")),
    };
    let _ = stream.set_nodelay(true);
    let fd: OwnedFd = stream.into();
    let mut up = match FrameConn::new(fd) {
        Ok(c) => c,
        Err(e) => return die(&format!("socket setup failed: {e}")),
    };
    up.send(hello.encode());
    up.flush_blocking(Duration::from_secs(5));
    // The job, or a closed connection (mpirun refused us, or the job already ended).
    let end = Instant::now() + START_LIMIT;
    let spec = loop {
        match up.next(Down::decode) {
            Ok(Some(Down::Start(s))) => break s,
            Ok(Some(_)) => return die("mpirun sent something before the job"),
            Err(e) => return die(&format!("from mpirun: {e}")),
            Ok(None) if up.eof => return 1,
            Ok(None) if Instant::now() >= end => return die("mpirun sent no job in time"),
            Ok(None) => {
                let mut p = [libc::pollfd { fd: up.raw(), events: libc::POLLIN, revents: 0 }];
                let _ = sys::poll(&mut p, 100);
                up.fill();
            }
        }
    };
    let mut spec = spec;
    if by_slurm {
        // The node's facts, as srun gave them to this proxy (mpirun's are its node's).
        for k in slurm::NODE_VARS {
            spec.env.retain(|(name, _)| name != k);
            if let Ok(v) = std::env::var(k) {
                spec.env.push((k.to_string(), v));
            }
        }
    }
    let ranks: Vec<usize> = spec.ranks.iter().map(|&r| r as usize).collect();
    let path_var = spec.env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_str());
    // Each program that runs here, resolved here; the others are not looked for.
    let mut apps = Vec::new();
    let mut app_first = 0;
    for a in &spec.apps {
        let mine = app_first..app_first + a.np as usize;
        app_first = mine.end;
        let program = match ranks.iter().find(|r| mine.contains(r)) {
            None => None,
            Some(&rank) => match spawn::program_for(&a.argv, path_var, a.wdir.as_ref().map(PathBuf::from).as_deref()) {
                Ok(p) => Some(p),
                Err(reason) => {
                    up.send(Up::Failed(Failure::Spawn { rank, reason }).encode());
                    up.send(Up::Done.encode());
                    up.flush_blocking(Duration::from_secs(2));
                    return if by_slurm { 0 } else { 127 };
                }
            },
        };
        apps.push(job::App { program, env: a.env.clone(), np: a.np as usize });
    }
    let status = job::run(
        JobSpec {
            np: spec.np as usize,
            ranks,
            node: spec.node as usize,
            apps,
            base_env: spec.env,
            tag_output: spec.tag_output,
            timeout: None,
            kvsname: spec.kvsname,
            secret: secret.trim().to_string(),
            mapping: spec.mapping,
        },
        Some(up),
    );
    if by_slurm {
        0
    } else {
        status
    }
}
