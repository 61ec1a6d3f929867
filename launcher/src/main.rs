//! `mpirun` / `mpiexec`: OxMPI's launcher.
//!
//! It serves PMI-1 (and PMI-2) to every rank over an inherited socketpair (`PMI_FD`, the
//! contract of MPICH's Hydra), forwards output and stdin, forwards SIGINT/SIGTERM, and tears
//! the job down on the first failure with the failing rank's exit status. On one host it
//! does all of it itself (`job.rs`); across hosts it starts one proxy per host, which does
//! it for that host's ranks (`front.rs`, `proxy.rs`); inside a Slurm allocation the hosts
//! are the allocation's and srun starts the proxies (`slurm.rs`). See `--help` for the
//! flags.

mod cleanup;
mod cli;
mod frames;
mod front;
mod hosts;
mod job;
mod output;
mod pmi_server;
mod proxy;
mod remote;
mod slurm;
mod spawn;
mod sys;
mod wire;

use cli::Cli;
use std::time::Duration;

fn main() {
    std::process::exit(real_main());
}

fn real_main() -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--oxmpi-proxy") {
        return match &args[1..] {
            [addr, host] => proxy::run(addr, host),
            _ => {
                eprintln!("mpirun: usage: mpirun --oxmpi-proxy ADDR HOST (started by mpirun itself)");
                2
            }
        };
    }
    let (cli, more) = if cli::split_mpmd(&args).len() > 1 {
        match Cli::parse_mpmd(&args) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("mpirun: {}", e.trim_end());
                return 2;
            }
        }
    } else {
        match Cli::parse_args(&args) {
            Ok(c) => (c, Vec::new()),
            Err(e) => {
                let _ = e.print();
                return if e.use_stderr() { 2 } else { 0 };
            }
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
    match prepare(&cli, &more) {
        Ok(Launch::Here(spec)) => job::run(spec, None),
        Ok(Launch::Hosts(spec)) => front::run(spec),
        Err((msg, code)) => {
            eprintln!("mpirun: {msg}");
            code
        }
    }
}

/// A job on this machine only, or across hosts.
enum Launch {
    Here(job::JobSpec),
    Hosts(front::FrontSpec),
}

/// One program of the job as the command line gives it (see `cli::split_mpmd`).
struct Part {
    argv: Vec<String>,
    /// Ranks (the first part's is set once the hosts are known: see `prepare`).
    np: usize,
    env: Vec<(String, String)>,
    wdir: Option<std::path::PathBuf>,
}

/// Validate the command line and build the job; errors carry mpirun's exit status.
/// `more`: the further parts of an MPMD command line.
fn prepare(cli: &Cli, more: &[Cli]) -> Result<Launch, (String, i32)> {
    let usage = |m: String| (m, 2);
    if cli.command.is_empty() {
        return Err(usage(
            "no program given; usage: mpirun -n N PROGRAM [ARGS...]".into(),
        ));
    }
    if cli.np == Some(0) {
        return Err(usage("-n must be at least 1".into()));
    }
    if cli.ppn == Some(0) {
        return Err(usage("-ppn must be at least 1".into()));
    }
    // Inside a Slurm allocation (SLURM_JOB_ID): its nodes are the hosts unless a host list
    // is given, and srun starts the proxies unless another launcher is asked for.
    let allocation = slurm::Allocation::from_env();
    let in_slurm = !matches!(allocation, Ok(None));
    let launcher = remote::Launcher::choose(cli.launcher.as_deref(), cli.launcher_exec.as_deref(), in_slurm).map_err(usage)?;
    let by_srun = matches!(launcher, remote::Launcher::Slurm(_));
    let map = match (cli.map_by.as_deref(), cli.rr) {
        (Some("node") | Some("rr"), _) | (None, true) => hosts::MapBy::Node,
        (Some("slot") | Some("core") | None, false) => hosts::MapBy::Slot,
        (Some(other), _) => return Err(usage(format!("--map-by {other}: expected slot or node"))),
    };
    let mut host_list = hosts::parse(&cli.hosts, cli.hostfile.as_deref()).map_err(usage)?;
    if in_slurm && (host_list.is_empty() || by_srun) {
        let alloc = allocation.map_err(usage)?.expect("in an allocation");
        if host_list.is_empty() {
            host_list = alloc.hosts.clone();
        }
        if let Some(h) = host_list.iter().find(|h| !alloc.hosts.iter().any(|a| a.name == h.name)) {
            return Err(usage(format!(
                "host {} is not a node of {}: inside an allocation srun starts the ranks on its nodes (choose another launcher with -launcher to reach other hosts)",
                h.name,
                alloc.describe()
            )));
        }
    }
    if launcher != remote::Launcher::Fork && !by_srun {
        host_list = merge_local(host_list);
    }
    let timeout = cli.timeout_secs().map_err(usage)?.map(Duration::from_secs);
    let mut parts = vec![Part { argv: cli.command.clone(), np: 0, env: cli.local_env(), wdir: cli.wdir.clone() }];
    for c in more {
        let mut env = c.local_env();
        env.extend(c.extra_env());
        parts.push(Part { argv: c.command.clone(), np: c.np.unwrap_or(1), env, wdir: c.wdir.clone() });
    }
    for (i, p) in parts.iter().enumerate() {
        if i > 0 && p.np == 0 {
            return Err(usage("-n must be at least 1".into()));
        }
        if let Some(d) = p.wdir.as_ref().filter(|d| !d.is_dir()) {
            return Err(usage(format!("-wdir {}: not a directory", d.display())));
        }
        check_env_names(&p.env).map_err(usage)?;
    }

    // Inherited environment minus what an outer launcher (PMI, PMIx, srun, the batch step)
    // set for another process, then -genv/-x.
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| !slurm::describes_another_process(k))
        .collect();
    let extra = cli.extra_env();
    check_env_names(&extra).map_err(usage)?;
    for (k, v) in extra {
        env.retain(|(name, _)| *name != k);
        env.push((k, v));
    }

    // Without -n, a lone program gets the hosts' slots; the first of several gets 1.
    parts[0].np = match cli.np {
        Some(n) => n,
        None if more.is_empty() && !host_list.is_empty() => host_list.iter().map(|h| cli.ppn.unwrap_or(h.slots)).sum(),
        None => 1,
    };
    let np: usize = parts.iter().map(|p| p.np).sum();
    if !host_list.is_empty() {
        let node_of = hosts::place(&host_list, np, cli.ppn, map, !cli.nooversubscribe).map_err(usage)?;
        // Only hosts that got ranks take part; node numbers follow the host list.
        let used: Vec<usize> = (0..host_list.len()).filter(|h| node_of.contains(h)).collect();
        // Under srun even a single host of the allocation runs in a job step.
        let one_here = !by_srun && used.len() == 1 && (launcher == remote::Launcher::Fork || hosts::is_local(&host_list[used[0]].name));
        if !one_here {
            let node: Vec<usize> = node_of.iter().map(|h| used.iter().position(|u| u == h).unwrap()).collect();
            let ranks_of = (0..used.len()).map(|n| (0..np).filter(|&r| node[r] == n).map(|r| r as u32).collect()).collect();
            // Ranks start where mpirun is, as with Hydra (relative paths then mean the same).
            let here = std::env::current_dir().ok();
            let apps = parts
                .iter()
                .map(|p| wire::AppDesc {
                    argv: p.argv.clone(),
                    wdir: p.wdir.clone().or_else(|| here.clone()).map(|d| d.display().to_string()),
                    env: p.env.clone(),
                    np: p.np as u32,
                })
                .collect();
            return Ok(Launch::Hosts(front::FrontSpec {
                hosts: used.iter().map(|&h| host_list[h].name.clone()).collect(),
                ranks_of,
                np,
                apps,
                env,
                tag_output: cli.tag_output,
                timeout,
                launcher,
                mapping: hosts::process_mapping(&node),
                verbose: std::env::var("OXMPI_VERBOSE").is_ok_and(|v| v.trim() != "0" && !v.trim().is_empty()),
            }));
        }
    }

    let path_var = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str());
    let mut apps = Vec::new();
    for p in &parts {
        let path = spawn::resolve(&p.argv[0], path_var, p.wdir.as_deref()).map_err(|m| (m, 127))?;
        let program = spawn::Program::new(&path, &p.argv, p.wdir.as_deref()).map_err(usage)?;
        apps.push(job::App { program: Some(program), env: p.env.clone(), np: p.np });
    }
    Ok(Launch::Here(job::JobSpec {
        np,
        ranks: (0..np).collect(),
        node: 0,
        apps,
        base_env: env,
        tag_output: cli.tag_output,
        timeout,
        kvsname: format!("oxmpi_{}_{}", std::process::id(), sys::random_hex(4)),
        secret: sys::random_hex(16),
        mapping: pmi_server::process_mapping(np),
    }))
}

/// `-genv`/`-env`/`-x` names: not empty, no `=`.
fn check_env_names(env: &[(String, String)]) -> Result<(), String> {
    match env.iter().find(|(k, _)| k.is_empty() || k.contains('=')) {
        Some((k, _)) => Err(format!("invalid environment variable name `{k}`")),
        None => Ok(()),
    }
}

/// Host entries that name this machine (`localhost`, its name, 127.0.0.1) are one host.
fn merge_local(list: Vec<hosts::Host>) -> Vec<hosts::Host> {
    let mut out: Vec<hosts::Host> = Vec::new();
    let mut here: Option<usize> = None;
    for h in list {
        if hosts::is_local(&h.name) {
            match here {
                Some(i) => out[i].slots += h.slots,
                None => {
                    here = Some(out.len());
                    out.push(hosts::Host { name: hosts::this_host(), slots: h.slots });
                }
            }
        } else {
            out.push(h);
        }
    }
    out
}
