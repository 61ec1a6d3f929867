//! Starting the processes of `MPI_Comm_spawn`: the spawning root runs a nested `mpirun`
//! (the one installed beside this library) for the new job, with the port its parent
//! accepts on in `OXMPI_PARENT_PORT`; the children connect to it in `MPI_Init`.
//!
//! Why a nested launcher rather than asking ours over PMI: it needs nothing from whatever
//! started the parent (our mpirun, Hydra, Slurm or none: a singleton), and the new job gets
//! everything a job has (its own PMI server, shared memory, output forwarding, teardown).
//!
//! Lifetimes: a thread per nested `mpirun` starts it and waits for it, so the launcher's
//! parent-death signal (SIGTERM when that thread ends, i.e. when this process dies) takes
//! the children down with the parent. A nested job that fails after its children connected
//! ends this process too, so the outer launcher tears the whole job down, as one job
//! would be; this process's `MPI_Finalize` waits for the jobs it spawned to end, as
//! `mpiexec` waits for every process it started.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// One program of a spawn (one for `MPI_Comm_spawn`, several for `_multiple`).
#[derive(Clone, Debug, Default)]
pub struct SpawnApp {
    pub command: String,
    pub args: Vec<String>,
    pub np: usize,
    /// Info keys `host`, `hostfile`, `wdir`, `path` (MPI 4.1 §11.3.4's reserved keys;
    /// `hostfile` as MPICH).
    pub host: Option<String>,
    pub hostfile: Option<String>,
    pub wdir: Option<String>,
    pub path: Option<String>,
}

/// A nested job: whether its launcher has exited (and how), and whether its children
/// connected (after which its failure is this job's failure).
pub struct Spawned {
    exit: Mutex<Option<i32>>,
    pub connected: AtomicBool,
}

impl Spawned {
    /// The launcher's exit code once it exited (128 + signal for a signal).
    pub fn exit_code(&self) -> Option<i32> {
        *self.exit.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Every nested job this process started.
static SPAWNED: Mutex<Vec<Arc<Spawned>>> = Mutex::new(Vec::new());

/// The `mpirun` beside this library (`PREFIX/lib/libmpi.so` → `PREFIX/bin/mpirun`), or
/// `OXMPI_MPIRUN`, or `mpirun` on the PATH.
pub fn mpirun_path() -> PathBuf {
    if let Some(p) = std::env::var_os("OXMPI_MPIRUN").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    // SAFETY: dladdr only reads the loaded objects' tables for an address of our own code;
    // `info` is written by it and read only when it succeeds.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(mpirun_path as *const libc::c_void, &mut info) != 0 && !info.dli_fname.is_null() {
            let lib = PathBuf::from(std::ffi::CStr::from_ptr(info.dli_fname).to_string_lossy().into_owned());
            if let Some(prefix) = lib.parent().and_then(|d| d.parent()) {
                let m = prefix.join("bin/mpirun");
                if m.is_file() {
                    return m;
                }
            }
        }
    }
    PathBuf::from("mpirun")
}

/// The nested launcher's command line: `mpirun -n N [-hosts H] [-f F] [-wdir D] CMD ARGS
/// [: -n M …]` (an MPMD line for several programs).
pub fn command_line(apps: &[SpawnApp]) -> Vec<String> {
    let mut v = Vec::new();
    for (i, a) in apps.iter().enumerate() {
        if i > 0 {
            v.push(":".into());
        }
        v.extend(["-n".to_string(), a.np.to_string()]);
        if let Some(h) = &a.host {
            v.extend(["-hosts".to_string(), h.clone()]);
        }
        if let Some(f) = &a.hostfile {
            v.extend(["-f".to_string(), f.clone()]);
        }
        if let Some(d) = &a.wdir {
            v.extend(["-wdir".to_string(), d.clone()]);
        }
        // `path`: where to look for the command; a command with a '/' is used as it is.
        let cmd = match &a.path {
            Some(dirs) if !a.command.contains('/') => dirs.split(':').map(|d| PathBuf::from(d).join(&a.command)).find(|p| p.is_file()).map_or(a.command.clone(), |p| p.display().to_string()),
            _ => a.command.clone(),
        };
        v.push(cmd);
        v.extend(a.args.iter().cloned());
    }
    v
}

/// Variables of this process's own launch that must not reach the nested launcher (it
/// would take itself for a rank of this job).
fn inherited(key: &str) -> bool {
    !(key.starts_with("PMI_") || key.starts_with("PMIX_") || key.starts_with("SLURM_") || key == "OXMPI_JOB_SECRET" || key == "OXMPI_PARENT_PORT" || key == "OXMPI_PROCESS_MAPPING")
}

/// Starts the nested job for `apps`, whose ranks connect to `port`; the thread that
/// starts it waits for it (see the module doc). Errors: the launcher could not start.
pub fn start(apps: &[SpawnApp], port: &str) -> Result<Arc<Spawned>, String> {
    let mpirun = mpirun_path();
    let args = command_line(apps);
    let me = Arc::new(Spawned { exit: Mutex::new(None), connected: AtomicBool::new(false) });
    let mine = me.clone();
    let port = port.to_string();
    let (tx, rx) = std::sync::mpsc::channel::<Result<(), String>>();
    let shown = format!("{} {}", mpirun.display(), args.join(" "));
    std::thread::Builder::new()
        .name("oxmpi-spawn".into())
        .spawn(move || {
            let mut cmd = Command::new(&mpirun);
            cmd.args(&args).env_clear().envs(std::env::vars_os().filter(|(k, _)| k.to_str().is_some_and(inherited))).env("OXMPI_PARENT_PORT", &port).stdin(Stdio::null());
            // SAFETY: between fork and exec only an async-signal-safe call (prctl).
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                    Ok(())
                });
            }
            let mut child = match cmd.spawn() {
                Ok(c) => c,
                Err(e) => {
                    let _ = tx.send(Err(format!("cannot start {}: {e}", mpirun.display())));
                    return;
                }
            };
            let _ = tx.send(Ok(()));
            let code = match child.wait() {
                Ok(st) => st.code().unwrap_or_else(|| 128 + std::os::unix::process::ExitStatusExt::signal(&st).unwrap_or(0)),
                Err(_) => 1,
            };
            *mine.exit.lock().unwrap_or_else(|e| e.into_inner()) = Some(code);
            if code != 0 && mine.connected.load(Ordering::Acquire) {
                crate::say!("OxMPI: the job started by MPI_Comm_spawn failed (its mpirun exited with status {code}); ending this job as well");
                // _exit, not exit: the program's threads may hold locks that exit handlers
                // and stdio flushing would wait for. The launcher sees this rank end
                // before MPI_Finalize and ends the job.
                // SAFETY: _exit ends the process at once; nothing runs after it.
                unsafe { libc::_exit(code) };
            }
        })
        .map_err(|e| format!("cannot start a thread for MPI_Comm_spawn: {e}"))?;
    match rx.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(e),
        Err(_) => return Err(format!("the launcher thread for `{shown}` ended early")),
    }
    SPAWNED.lock().unwrap_or_else(|e| e.into_inner()).push(me.clone());
    Ok(me)
}

/// Whether every nested job this process started has ended (`MPI_Finalize` waits).
pub fn all_ended() -> bool {
    SPAWNED.lock().unwrap_or_else(|e| e.into_inner()).iter().all(|s| s.exit_code().is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_command_lines() {
        let a = SpawnApp { command: "worker".into(), args: vec!["-x".into(), "1".into()], np: 3, host: Some("n1,n2".into()), wdir: Some("/tmp".into()), ..Default::default() };
        let b = SpawnApp { command: "/bin/true".into(), np: 1, path: Some("/nowhere".into()), ..Default::default() };
        assert_eq!(command_line(&[a.clone()]).join(" "), "-n 3 -hosts n1,n2 -wdir /tmp worker -x 1");
        assert_eq!(command_line(&[a, b]).join(" "), "-n 3 -hosts n1,n2 -wdir /tmp worker -x 1 : -n 1 /bin/true");
        let c = SpawnApp { command: "sh".into(), np: 2, path: Some("/nowhere:/bin".into()), ..Default::default() };
        assert_eq!(command_line(&[c]).join(" "), "-n 2 /bin/sh");
        assert!(!inherited("PMI_FD") && !inherited("OXMPI_JOB_SECRET") && inherited("OXMPI_TRANSPORT") && inherited("PATH"));
    }
}
