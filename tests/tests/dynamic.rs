//! Dynamic processes: ports, `MPI_Comm_accept`/`connect` and `MPI_Comm_join` inside one
//! job (shared memory and TCP), and between two jobs of two `mpirun`s, which reach each
//! other over TCP only; the server job outlives its clients.
mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Accept/connect between the halves of MPI_COMM_WORLD (three connections on one port),
/// join over a socket, bad port names: 1 to 5 ranks, and over TCP at 2 and 4.
#[test]
fn connect_accept_join_in_one_job() {
    let _x = exclusive();
    let exe = compile("dpm_connect");
    // Its own name directory: every rank leaves a name published, which MPI_Finalize
    // must remove.
    let names = std::env::temp_dir().join(format!("oxmpi-dpm-names-{}", std::process::id()));
    let dir = names.to_str().unwrap();
    for np in [1, 2, 3, 4, 5] {
        run_ok_env("dpm_connect", &exe, np, &[], &[("OXMPI_NAME_DIR", dir)]);
    }
    for np in [2, 4] {
        run_ok_env("dpm_connect", &exe, np, &[], &[("OXMPI_TRANSPORT", "tcp"), ("OXMPI_NAME_DIR", dir)]);
    }
    let left: Vec<_> = std::fs::read_dir(&names).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "published names left in {dir}: {left:?}");
    let _ = std::fs::remove_dir_all(&names);
}

/// One server job and `clients` client jobs of the given sizes, one after another
/// (clients start when the port file appears); every job must report OK.
fn server_and_clients(exe: &Path, server_np: usize, clients: &[usize], env: &[(&str, &str)]) {
    let m = mpi();
    let dir = std::env::temp_dir().join(format!("oxmpi-dpm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("port");
    let _ = std::fs::remove_file(&file);
    let start = Instant::now();
    let mut server = Command::new(&m.mpirun);
    server.envs(env.iter().copied()).args(["--timeout", "60", "-n", &server_np.to_string()]).arg(exe).arg("server").arg(&file).arg(clients.len().to_string());
    let server = server.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start the server job");
    let mut outputs = Vec::new();
    for &np in clients {
        let out = Command::new(&m.mpirun)
            .envs(env.iter().copied())
            .args(["--timeout", "60", "-n", &np.to_string()])
            .arg(exe)
            .arg("client")
            .arg(&file)
            .output()
            .expect("run a client job");
        let text = format!("client -n {np}: {}\n{}{}", out.status, String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        outputs.push((out.status.success() && text.contains("dpm_jobs client: OK"), text));
        // The next client connects to the same port: the server accepts again.
    }
    let s = server.wait_with_output().expect("server job");
    let stext = format!("server -n {server_np}: {}\n{}{}", s.status, String::from_utf8_lossy(&s.stdout), String::from_utf8_lossy(&s.stderr));
    let report = format!("{:.1} s, env {env:?}\n{stext}\n{}", start.elapsed().as_secs_f64(), outputs.iter().map(|o| o.1.as_str()).collect::<Vec<_>>().join("\n"));
    assert!(s.status.success() && stext.contains("dpm_jobs server: OK"), "the server job failed\n{report}");
    assert!(outputs.iter().all(|o| o.0), "a client job failed\n{report}");
    let left = processes_running(exe);
    assert!(left.is_empty(), "processes left behind: {left:?}\n{report}");
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("dpm_jobs: server -n {server_np}, clients {clients:?}: ok in {:.2} s", start.elapsed().as_secs_f64());
}

/// Two jobs meet through a port: a server of 2 ranks accepts clients of 1, 3 and 2
/// ranks in turn, then goes on alone; a server of 1 and a client of 4; the same with
/// every rank on TCP inside its job too.
#[test]
fn two_jobs_through_a_port() {
    let _x = exclusive();
    let exe = compile("dpm_jobs");
    if !mpi().is_oxmpi {
        return;
    }
    server_and_clients(&exe, 2, &[1, 3, 2], &[]);
    server_and_clients(&exe, 1, &[4], &[]);
    server_and_clients(&exe, 3, &[2], &[("OXMPI_TRANSPORT", "tcp")]);
}

/// MPI_Comm_spawn (twice, from different roots) and MPI_Comm_spawn_multiple (MPI_APPNUM,
/// `wdir`) from parent jobs of 1 to 4 ranks, also over TCP; a missing program is
/// MPI_ERR_SPAWN on every rank and the job goes on.
#[test]
fn spawn_and_spawn_multiple() {
    let _x = exclusive();
    let exe = compile("spawn");
    if !mpi().is_oxmpi {
        return;
    }
    for np in [1, 2, 3, 4] {
        run_ok("spawn", &exe, np, &[]);
    }
    run_ok_env("spawn", &exe, 2, &[], &[("OXMPI_TRANSPORT", "tcp")]);
}

/// Failures across a spawn: a child killed by SIGKILL ends the whole job (non-zero, in
/// seconds); a parent that aborts takes its children with it; children still working
/// when the parent finalizes are waited for. No process is left behind.
#[test]
fn spawn_failures_end_everything() {
    let _x = exclusive();
    let exe = compile("spawn_fail");
    if !mpi().is_oxmpi {
        return;
    }
    let opts = |mode: &str, file: &str| RunOpts { np: 2, args: vec![mode.to_string(), file.to_string()], ..Default::default() };
    let r = run(&exe, opts("crash", "-"));
    assert!(!r.success() && r.elapsed.as_secs() < 10, "a crashed child did not end the job\n{}", r.report());
    assert!(r.stderr.contains("the job started by MPI_Comm_spawn failed") && r.stderr.contains("SIGKILL"), "no reason given\n{}", r.report());
    assert!(r.leftovers.is_empty(), "processes left behind\n{}", r.report());
    let r = run(&exe, opts("parent", "-"));
    assert_eq!(r.code(), Some(134), "a parent killed by SIGABRT\n{}", r.report());
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let left = processes_running(&exe);
    assert!(r.leftovers.is_empty() && left.is_empty(), "children outlived their parent: {left:?}\n{}", r.report());
    let file = std::env::temp_dir().join(format!("oxmpi-spawn-wait-{}", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let r = run(&exe, opts("wait", file.to_str().unwrap()));
    assert!(r.success() && r.stdout.contains("spawn_fail: OK"), "{}", r.report());
    let done = std::fs::read_to_string(&file).unwrap_or_default();
    assert_eq!(done.lines().count(), 2, "the children did not finish before the parent's MPI_Finalize returned: {done:?}\n{}", r.report());
    let _ = std::fs::remove_file(&file);
}
