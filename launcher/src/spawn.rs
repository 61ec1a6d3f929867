//! Starting one rank: fork, set up the child, exec.
//!
//! Everything the child needs (argv, envp, paths, messages) is prepared before `fork`, so
//! the child only makes async-signal-safe system calls. The child:
//! * joins the job's process group, so teardown reaches grandchildren too;
//! * asks for `SIGKILL` when mpirun dies (`PR_SET_PDEATHSIG`), re-checking the parent
//!   afterwards to close the race with mpirun dying before the prctl;
//! * gets default signal handling back (mpirun blocks some signals for its signalfd and
//!   Rust ignores SIGPIPE);
//! * gets pipes as stdin/stdout/stderr and its PMI socket without close-on-exec.

use crate::sys;
use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What is the same for every rank.
pub struct Program {
    /// Resolved path passed to `execve`.
    path: CString,
    /// argv, argv[0] as the user typed it.
    argv: Vec<CString>,
    wdir: Option<CString>,
    /// Pre-formatted error lines written by the child if chdir/exec fails.
    exec_failed_msg: Vec<u8>,
    chdir_failed_msg: Vec<u8>,
}

/// mpirun's ends of one started rank.
pub struct Started {
    pub pid: i32,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    /// Write end of the rank's stdin (rank 0 only).
    pub stdin: Option<OwnedFd>,
}

fn cstring(s: &OsStr) -> Result<CString, String> {
    CString::new(s.as_bytes())
        .map_err(|_| format!("argument `{}` contains a NUL byte", s.to_string_lossy()))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The program a rank runs: `argv[0]` looked up as `resolve` does, with `argv` and `wdir`.
pub fn program_for(argv: &[String], path_var: Option<&str>, wdir: Option<&Path>) -> Result<Program, String> {
    Program::new(&resolve(&argv[0], path_var, wdir)?, argv, wdir)
}

/// Find `name` the way `execvp` would, using the ranks' `PATH`; relative paths are taken
/// relative to `wdir` (where the child will be when it execs).
pub fn resolve(name: &str, path_var: Option<&str>, wdir: Option<&Path>) -> Result<PathBuf, String> {
    let base = |p: PathBuf| match wdir {
        Some(w) if p.is_relative() => w.join(p),
        _ => p,
    };
    if name.contains('/') {
        let p = base(PathBuf::from(name));
        return if is_executable(&p) {
            Ok(p)
        } else if p.exists() {
            Err(format!("cannot run `{name}`: not an executable file"))
        } else {
            Err(format!("cannot run `{name}`: no such file"))
        };
    }
    let path_var = path_var.unwrap_or("/usr/local/bin:/usr/bin:/bin");
    for dir in path_var.split(':') {
        let dir = if dir.is_empty() { "." } else { dir };
        let candidate = base(Path::new(dir).join(name));
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    Err(format!("cannot run `{name}`: not found in PATH"))
}

impl Program {
    /// Prepare the exec of `path` with the user's `args` (args[0] = program as typed).
    pub fn new(path: &Path, args: &[String], wdir: Option<&Path>) -> Result<Program, String> {
        let argv = args
            .iter()
            .map(|a| cstring(OsStr::new(a)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Program {
            path: cstring(path.as_os_str())?,
            argv,
            wdir: wdir.map(|w| cstring(w.as_os_str())).transpose()?,
            exec_failed_msg: format!("mpirun: cannot execute {}\n", path.display()).into_bytes(),
            chdir_failed_msg: format!(
                "mpirun: cannot change to directory {}\n",
                wdir.map(|w| w.display().to_string()).unwrap_or_default()
            )
            .into_bytes(),
        })
    }
}

/// Encode `(name, value)` pairs as `NAME=VALUE` C strings for `execve`.
pub fn envp(vars: &[(String, String)]) -> Result<Vec<CString>, String> {
    vars.iter()
        .map(|(k, v)| {
            CString::new(format!("{k}={v}"))
                .map_err(|_| format!("environment variable {k} contains a NUL byte"))
        })
        .collect()
}

/// Start one rank. `pgid` 0 makes it the leader of a new process group (rank 0);
/// `child_pmi` is the rank's end of its PMI socketpair, whose number is in `PMI_FD`;
/// `stdin_src` `None` gives the rank a stdin pipe (returned in [`Started::stdin`]).
pub fn start(
    prog: &Program,
    env: &[CString],
    pgid: i32,
    child_pmi: &OwnedFd,
    stdin_src: Option<&OwnedFd>,
) -> io::Result<Started> {
    let (out_r, out_w) = sys::pipe()?;
    let (err_r, err_w) = sys::pipe()?;
    // Rank 0 reads a pipe fed from mpirun's stdin; the others read `stdin_src` (/dev/null).
    let (stdin_fd, in_r, in_w) = match stdin_src {
        Some(src) => (src.as_raw_fd(), None, None),
        None => {
            let (r, w) = sys::pipe()?;
            (r.as_raw_fd(), Some(r), Some(w))
        }
    };

    let mut argv_ptrs: Vec<*const libc::c_char> = prog.argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let mut env_ptrs: Vec<*const libc::c_char> = env.iter().map(|e| e.as_ptr()).collect();
    env_ptrs.push(std::ptr::null());
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    let pmi_fd = child_pmi.as_raw_fd();
    let (out_fd, err_fd) = (out_w.as_raw_fd(), err_w.as_raw_fd());

    // SAFETY: mpirun is single-threaded, and the child below only calls async-signal-safe
    // functions on data prepared before the fork, then execs or `_exit`s.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        // SAFETY: child side of fork; only async-signal-safe calls on pre-built data.
        unsafe {
            child(
                prog, &argv_ptrs, &env_ptrs, parent, pgid, stdin_fd, out_fd, err_fd, pmi_fd,
            )
        }
    }
    // Parent: also set the group, so it is in place whichever process runs first.
    // SAFETY: setpgid on our own child; failure (child already exec'd) is harmless.
    unsafe {
        libc::setpgid(pid, if pgid == 0 { pid } else { pgid });
    }
    drop((out_w, err_w, in_r));
    for fd in [&out_r, &err_r] {
        sys::set_nonblocking(fd.as_raw_fd())?;
    }
    if let Some(w) = &in_w {
        sys::set_nonblocking(w.as_raw_fd())?;
    }
    Ok(Started {
        pid,
        stdout: out_r,
        stderr: err_r,
        stdin: in_w,
    })
}

/// The child between fork and exec. Never returns.
///
/// # Safety
/// Must only be called in the child right after `fork`, with pointers that stay valid
/// (they point into the parent's copy-on-write memory).
#[allow(clippy::too_many_arguments)]
unsafe fn child(
    prog: &Program,
    argv: &[*const libc::c_char],
    envp: &[*const libc::c_char],
    parent: i32,
    pgid: i32,
    stdin_fd: RawFd,
    out_fd: RawFd,
    err_fd: RawFd,
    pmi_fd: RawFd,
) -> ! {
    // SAFETY (whole block): all calls are async-signal-safe syscalls on valid arguments.
    unsafe {
        libc::setpgid(0, pgid);
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        if libc::getppid() != parent {
            libc::_exit(1);
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        for s in [
            libc::SIGPIPE,
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGCHLD,
            libc::SIGHUP,
        ] {
            libc::signal(s, libc::SIG_DFL);
        }
        if libc::dup2(stdin_fd, 0) < 0 || libc::dup2(out_fd, 1) < 0 || libc::dup2(err_fd, 2) < 0 {
            libc::_exit(127);
        }
        // The PMI socket is the one fd (besides 0-2) the rank must inherit.
        libc::fcntl(pmi_fd, libc::F_SETFD, 0);
        if let Some(dir) = &prog.wdir {
            if libc::chdir(dir.as_ptr()) != 0 {
                let m = &prog.chdir_failed_msg;
                libc::write(2, m.as_ptr().cast(), m.len());
                libc::_exit(127);
            }
        }
        libc::execve(prog.path.as_ptr(), argv.as_ptr(), envp.as_ptr());
        let m = &prog.exec_failed_msg;
        libc::write(2, m.as_ptr().cast(), m.len());
        libc::_exit(127);
    }
}

/// Open /dev/null for reading (stdin of ranks other than 0).
pub fn dev_null() -> io::Result<OwnedFd> {
    Ok(std::fs::File::open("/dev/null")?.into())
}
