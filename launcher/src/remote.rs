//! Starting a proxy on a host: directly when the host is this machine (or `-launcher
//! fork`), else through a remote-exec agent with Hydra's convention `PROG HOST COMMAND
//! ARGS…` (`ssh -o BatchMode=yes`, `rsh`, or any `-launcher-exec` program).
//!
//! Inside a Slurm allocation one `srun` starts the proxies of every host (`slurm.rs`).
//!
//! The proxy is this very executable in proxy mode (`--oxmpi-proxy ADDR HOST`), found at
//! the same path on every host, as Hydra finds its proxy. The job secret goes to it on
//! its stdin (through srun: in its environment), never on a command line (`ps` on the
//! host would show it).

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
    /// One srun (this program) for all hosts of a Slurm allocation.
    Slurm(String),
}

impl Launcher {
    /// From `-launcher NAME` / `-launcher-exec PROG`, else `OXMPI_LAUNCHER` /
    /// `OXMPI_LAUNCHER_EXEC`; default slurm inside a Slurm allocation (`in_slurm`), else
    /// ssh. With slurm, the exec program is the srun to use.
    pub fn choose(name: Option<&str>, exec: Option<&str>, in_slurm: bool) -> Result<Launcher, String> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let exec = exec.map(str::to_string).or_else(|| if name.is_none() { env("OXMPI_LAUNCHER_EXEC") } else { None });
        let name = name.map(str::to_string).or_else(|| env("OXMPI_LAUNCHER"));
        let name = name.as_deref().map(str::trim);
        if let Some("slurm" | "srun") = name {
            if !in_slurm {
                return Err("-launcher slurm needs a Slurm allocation (SLURM_JOB_ID is not set): run mpirun inside salloc or an sbatch script, or start the program with `srun --mpi=pmi2`".into());
            }
            return Ok(Launcher::Slurm(exec.unwrap_or_else(|| "srun".into())));
        }
        if let Some(p) = exec {
            return Ok(Launcher::Exec(p));
        }
        match name {
            None if in_slurm => Ok(Launcher::Slurm("srun".into())),
            None | Some("ssh") => Ok(Launcher::Ssh),
            Some("rsh") => Ok(Launcher::Rsh),
            Some("fork") => Ok(Launcher::Fork),
            Some(other) => Err(format!("unknown launcher `{other}` (ssh, rsh, fork, slurm, or -launcher-exec PROG)")),
        }
    }

    /// The command line that runs `command` on `host`; `None`: start it directly.
    pub fn command_for(&self, host: &str, local: bool, command: &[String]) -> Option<Vec<String>> {
        if (local && !matches!(self, Launcher::Slurm(_))) || *self == Launcher::Fork {
            return None;
        }
        let mut v: Vec<String> = match self {
            Launcher::Ssh => ["ssh", "-o", "BatchMode=yes", "-x"].iter().map(|s| s.to_string()).collect(),
            Launcher::Rsh => vec!["rsh".into()],
            Launcher::Exec(p) => vec![p.clone()],
            Launcher::Slurm(srun) => return Some(crate::slurm::srun_command(srun, &[host.to_string()], command)),
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
            Launcher::Slurm(srun) => format!("; srun's message is above; check that `{srun} -N1 -w {host} true` works in this allocation, or choose another launcher with -launcher"),
            _ => String::new(),
        }
    }
}

/// A started agent (or proxy) process.
pub struct Started {
    pub pid: i32,
    pub argv: Vec<String>,
}

/// How the job secret reaches a proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecretVia {
    /// One line on the agent's stdin (ssh, rsh, a proxy started here).
    Stdin,
    /// In the agent's environment, [`crate::slurm::SECRET_VAR`] (srun passes it to every
    /// task; its stdin is /dev/null).
    Env,
}

/// Runs `argv` in its own process group (a Ctrl-C at the terminal reaches mpirun only,
/// which ends the job in order), killed if mpirun dies, with `secret` on its stdin or in
/// its environment.
pub fn start(argv: &[String], secret: &str, via: SecretVia) -> std::io::Result<Started> {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]).process_group(0);
    match via {
        SecretVia::Stdin => cmd.stdin(Stdio::piped()),
        SecretVia::Env => cmd.stdin(Stdio::null()).env(crate::slurm::SECRET_VAR, secret),
    };
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
        assert_eq!(Launcher::choose(Some("rsh"), None, false).unwrap(), Launcher::Rsh);
        assert_eq!(Launcher::choose(Some("fork"), None, false).unwrap(), Launcher::Fork);
        assert_eq!(Launcher::choose(None, Some("/x/agent"), false).unwrap(), Launcher::Exec("/x/agent".into()));
        assert!(Launcher::choose(Some("telnet"), None, false).unwrap_err().contains("unknown launcher"));
        // Slurm: the default inside an allocation, explicit elsewhere an error; the exec
        // program is then srun's path; an explicit launcher still wins.
        assert_eq!(Launcher::choose(Some("slurm"), None, true).unwrap(), Launcher::Slurm("srun".into()));
        assert_eq!(Launcher::choose(Some("srun"), Some("/opt/slurm/bin/srun"), true).unwrap(), Launcher::Slurm("/opt/slurm/bin/srun".into()));
        assert!(Launcher::choose(Some("slurm"), None, false).unwrap_err().contains("needs a Slurm allocation"));
        assert_eq!(Launcher::choose(Some("ssh"), None, true).unwrap(), Launcher::Ssh);
        assert_eq!(Launcher::choose(Some("fork"), None, true).unwrap(), Launcher::Fork);
        assert_eq!(Launcher::choose(None, Some("/x/agent"), true).unwrap(), Launcher::Exec("/x/agent".into()));
        let slurm = Launcher::Slurm("srun".into());
        let one = slurm.command_for("n2", true, &["p".to_string()]).unwrap();
        assert!(one[0] == "srun" && one.contains(&"--nodelist=n2".to_string()) && one.last().unwrap() == "p", "{one:?}");
        let cmd: Vec<String> = vec!["/opt/ox/bin/mpirun".into(), "--oxmpi-proxy".into(), "10.0.0.1:5000".into(), "1".into()];
        assert_eq!(Launcher::Ssh.command_for("n2", false, &cmd).unwrap()[..5], ["ssh", "-o", "BatchMode=yes", "-x", "n2"]);
        assert_eq!(Launcher::Exec("agent".into()).command_for("n2", false, &cmd).unwrap(), ["agent", "n2", "/opt/ox/bin/mpirun", "--oxmpi-proxy", "10.0.0.1:5000", "1"]);
        assert!(Launcher::Ssh.command_for("n2", true, &cmd).is_none());
        assert!(Launcher::Fork.command_for("n2", false, &cmd).is_none());
        assert!(Launcher::Ssh.hint("n2", 255).contains("ssh-copy-id n2"));
    }
}
