//! `mpirun` / `mpiexec`: OxMPI's single-host launcher.
//!
//! It serves PMI-1 (and PMI-2) to every rank over an inherited socketpair (`PMI_FD`, the
//! contract of MPICH's Hydra), forwards output and stdin, forwards SIGINT/SIGTERM, and tears
//! the job down on the first failure with the failing rank's exit status. See `job.rs` for
//! the policy and `--help` for the flags.

mod cleanup;
mod cli;
mod hosts;
mod job;
mod output;
mod pmi_server;
mod spawn;
mod sys;

use cli::Cli;
use std::time::Duration;

fn main() {
    std::process::exit(real_main());
}

fn real_main() -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cli = match Cli::parse_args(&args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    if cli.version {
        println!("OxMPI mpirun {}", env!("CARGO_PKG_VERSION"));
        return 0;
    }
    if cli.help_tuning {
        print!("{}", mpi_core::config::describe());
        return 0;
    }
    match prepare(&cli) {
        Ok(spec) => job::run(spec),
        Err((msg, code)) => {
            eprintln!("mpirun: {msg}");
            code
        }
    }
}

/// Validate the command line and build the job; errors carry mpirun's exit status.
fn prepare(cli: &Cli) -> Result<job::JobSpec, (String, i32)> {
    let usage = |m: String| (m, 2);
    if cli.command.is_empty() {
        return Err(usage(
            "no program given; usage: mpirun -n N PROGRAM [ARGS...]".into(),
        ));
    }
    if cli.np == 0 {
        return Err(usage("-n must be at least 1".into()));
    }
    hosts::check_local(&cli.hosts, cli.hostfile.as_deref()).map_err(usage)?;
    let timeout = cli.timeout_secs().map_err(usage)?.map(Duration::from_secs);
    let wdir = match &cli.wdir {
        Some(d) if !d.is_dir() => {
            return Err(usage(format!("-wdir {}: not a directory", d.display())));
        }
        Some(d) => Some(d.clone()),
        None => None,
    };

    // Inherited environment minus any outer launcher's PMI variables, then -genv/-x.
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| !k.starts_with("PMI_"))
        .collect();
    for (k, v) in cli.extra_env() {
        if k.is_empty() || k.contains('=') {
            return Err(usage(format!("invalid environment variable name `{k}`")));
        }
        env.retain(|(name, _)| *name != k);
        env.push((k, v));
    }

    let path_var = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str());
    let program =
        spawn::resolve(&cli.command[0], path_var, wdir.as_deref()).map_err(|m| (m, 127))?;
    let program = spawn::Program::new(&program, &cli.command, wdir.as_deref()).map_err(usage)?;
    Ok(job::JobSpec {
        np: cli.np,
        program,
        base_env: env,
        tag_output: cli.tag_output,
        timeout,
    })
}
