//! Starting a proxy on a host: directly when the host is this machine (or `-launcher
//! fork`), else through a remote-exec agent with Hydra's convention `PROG HOST COMMAND
//! ARGS…` (`ssh -o BatchMode=yes`, `rsh`, or any `-launcher-exec` program).
//!
//! The proxy is this very executable in proxy mode (`--oxmpi-proxy ADDR HOST`), found at
//! the same path on every host, as Hydra finds its proxy. The job secret goes to it on
//! its stdin, never on a command line (`ps` on the host would show it).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

/// How proxies reach their hosts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Launcher {
    Ssh,
    Rsh,
    /// Every proxy on this machine (the hosts are names only: tests, fake nodes).
    Fork,
    /// `PROG HOST COMMAND…`.
    Exec(String),
}

impl Launcher {
    /// From `-launcher NAME` / `-launcher-exec PROG`, else `OXMPI_LAUNCHER` /
    /// `OXMPI_LAUNCHER_EXEC`; default ssh.
    pub fn choose(name: Option<&str>, exec: Option<&str>) -> Result<Launcher, String> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        if let Some(p) = exec.map(str::to_string).or_else(|| if name.is_none() { env("OXMPI_LAUNCHER_EXEC") } else { None }) {
            return Ok(Launcher::Exec(p));
        }
        let name = name.map(str::to_string).or_else(|| env("OXMPI_LAUNCHER"));
        match name.as_deref().map(str::trim) {
            None | Some("ssh") => Ok(Launcher::Ssh),
            Some("rsh") => Ok(Launcher::Rsh),
            Some("fork") => Ok(Launcher::Fork),
            Some("slurm") | Some("srun") => Err("-launcher slurm is not supported yet; start the job with `srun --mpi=pmi2` inside the allocation".into()),
            Some(other) => Err(format!("unknown launcher `{other}` (ssh, rsh, fork, or -launcher-exec PROG)")),
        }
    }

    /// The command line that runs `command` on `host`; `None`: start it directly.
    pub fn command_for(&self, host: &str, local: bool, command: &[String]) -> Option<Vec<String>> {
        if local || *self == Launcher::Fork {
            return None;
        }
        let mut v: Vec<String> = match self {
            Launcher::Ssh => ["ssh", "-o", "BatchMode=yes", "-x"].iter().map(|s| s.to_string()).collect(),
            Launcher::Rsh => vec!["rsh".into()],
            Launcher::Exec(p) => vec![p.clone()],
            Launcher::Fork => unreachable!(),
        };
        v.push(host.to_string());
        v.extend(command.iter().cloned());
        Some(v)
    }

    /// What to tell the user when the agent fails on `host` with exit status `code`.
    pub fn hint(&self, host: &str, code: i32) -> String {
        match self {
            Launcher::Ssh if code == 255 => format!(
                "; ssh failed (its message is above): it must log in to {host} without a password or question (BatchMode): set up keys (ssh-keygen; ssh-copy-id {host}) and check that `ssh {host} true` works, or choose another agent with -launcher-exec"
            ),
            Launcher::Ssh => format!("; check that `ssh {host} true` works"),
            _ => String::new(),
        }
    }
}

/// A started agent (or proxy) process.
pub struct Started {
    pub pid: i32,
    pub argv: Vec<String>,
}

/// Runs `argv` in its own process group (a Ctrl-C at the terminal reaches mpirun only,
/// which ends the job in order), killed if mpirun dies, with `secret` on its stdin.
pub fn start(argv: &[String], secret: &str) -> std::io::Result<Started> {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).stdin(Stdio::piped()).process_group(0);
    // SAFETY: prctl is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
            Ok(())
        });
    }
    let mut child = cmd.spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        // A pipe buffer holds a line; an agent that exits at once makes this fail, which
        // its exit status will explain.
        let _ = writeln!(stdin, "{secret}");
    }
    Ok(Started { pid: child.id() as i32, argv: argv.to_vec() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launcher_choice_and_commands() {
        assert_eq!(Launcher::choose(Some("rsh"), None).unwrap(), Launcher::Rsh);
        assert_eq!(Launcher::choose(Some("fork"), None).unwrap(), Launcher::Fork);
        assert_eq!(Launcher::choose(None, Some("/x/agent")).unwrap(), Launcher::Exec("/x/agent".into()));
        assert!(Launcher::choose(Some("telnet"), None).unwrap_err().contains("unknown launcher"));
        let cmd: Vec<String> = vec!["/opt/ox/bin/mpirun".into(), "--oxmpi-proxy".into(), "10.0.0.1:5000".into(), "1".into()];
        assert_eq!(Launcher::Ssh.command_for("n2", false, &cmd).unwrap()[..5], ["ssh", "-o", "BatchMode=yes", "-x", "n2"]);
        assert_eq!(Launcher::Exec("agent".into()).command_for("n2", false, &cmd).unwrap(), ["agent", "n2", "/opt/ox/bin/mpirun", "--oxmpi-proxy", "10.0.0.1:5000", "1"]);
        assert!(Launcher::Ssh.command_for("n2", true, &cmd).is_none());
        assert!(Launcher::Fork.command_for("n2", false, &cmd).is_none());
        assert!(Launcher::Ssh.hint("n2", 255).contains("ssh-copy-id n2"));
    }
}
