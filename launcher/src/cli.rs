//! Command line: the flags users know from Hydra and Open MPI.
//!
//! Hydra spells long options with one dash (`-np`, `-genv`, `-wdir`), which clap cannot
//! parse, so [`normalize`] first rewrites every known spelling into one canonical clap
//! option, and stops at the program name: everything after it belongs to the program.

use clap::Parser;
use std::path::PathBuf;

/// Canonical option name and number of values for each accepted spelling.
const OPTIONS: &[(&[&str], &str, usize)] = &[
    (&["-n", "-np", "--np", "--n", "-c"], "--np", 1),
    (&["-genv", "--genv"], "--genv", 2),
    (&["-env", "--env"], "--env", 2),
    (&["-x"], "-x", 1),
    (
        &[
            "-l",
            "--tag-output",
            "-tag-output",
            "-prepend-rank",
            "--prepend-rank",
        ],
        "--tag-output",
        0,
    ),
    (&["--timeout", "-timeout"], "--timeout", 1),
    (&["-wdir", "--wdir", "-wd", "--wd"], "--wdir", 1),
    (&["--oversubscribe", "-oversubscribe"], "--oversubscribe", 0),
    (
        &["--allow-run-as-root", "-allow-run-as-root"],
        "--allow-run-as-root",
        0,
    ),
    (&["-hosts", "--hosts", "-host", "--host", "-H"], "--host", 1),
    (
        &[
            "-f",
            "-hostfile",
            "--hostfile",
            "-machinefile",
            "--machinefile",
        ],
        "--hostfile",
        1,
    ),
    (&["-ppn", "--ppn", "-npernode", "--npernode"], "--ppn", 1),
    (&["-usize", "--usize"], "--usize", 1),
    (&["-launcher", "--launcher", "-bootstrap", "--bootstrap"], "--launcher", 1),
    (&["-launcher-exec", "--launcher-exec", "-bootstrap-exec", "--bootstrap-exec"], "--launcher-exec", 1),
    (&["--map-by", "-map-by"], "--map-by", 1),
    (&["-rr", "--rr", "--bynode", "-bynode"], "--rr", 0),
    (&["--nooversubscribe", "-nooversubscribe", "--no-oversubscribe"], "--nooversubscribe", 0),
    (&["-h", "-help", "--help"], "--help", 0),
    (&["-V", "-version", "--version"], "--version", 0),
    (&["--help-tuning", "-help-tuning"], "--help-tuning", 0),
];

/// Rewrite Hydra/Open MPI spellings into canonical options followed by `--` and the
/// program with its arguments (untouched). Unknown options are passed through for clap to
/// reject with a clear message.
pub fn normalize(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if arg == "--" {
            out.push("--".to_string());
            out.extend(args[i + 1..].iter().cloned());
            return out;
        }
        if !arg.starts_with('-') || arg == "-" {
            // The program: everything from here on is its command line.
            out.push("--".to_string());
            out.extend(args[i..].iter().cloned());
            return out;
        }
        // `--opt=value` / `-opt=value`.
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (arg.as_str(), None),
        };
        match OPTIONS.iter().find(|(names, _, _)| names.contains(&name)) {
            Some(&(_, canon, nvals)) => {
                out.push(canon.to_string());
                let mut needed = nvals;
                if let Some(v) = inline.filter(|_| nvals > 0) {
                    out.push(v);
                    needed -= 1;
                }
                for _ in 0..needed {
                    i += 1;
                    if i < args.len() {
                        out.push(args[i].clone());
                    }
                }
            }
            None => out.push(arg.clone()),
        }
        i += 1;
    }
    out
}

/// OxMPI's launcher: runs N copies of a program as one MPI job, here or on several hosts.
#[derive(Parser, Debug)]
#[command(
    name = "mpirun",
    disable_version_flag = true,
    about = "OxMPI mpirun/mpiexec: start an MPI job on this machine or across hosts",
    after_help = "Hydra and Open MPI spellings are accepted too: -np, -genv, -env, -wdir, -wd, \
                  -hosts, -hostfile, -machinefile, -ppn, -tag-output, -prepend-rank, -bootstrap, \
                  -bootstrap-exec.\n\
                  Environment: OXMPI_LAUNCHER, OXMPI_LAUNCHER_EXEC (as -launcher, -launcher-exec), \
                  OXMPI_LAUNCHER_IF (mpirun's interface for proxies), MPIEXEC_TIMEOUT.\n\
                  Inside a Slurm allocation (salloc, sbatch: SLURM_JOB_ID set) the hosts and slots are \
                  the allocation's (SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE) unless -hosts/-hostfile \
                  is given, and one srun starts the proxies (-launcher slurm).\n\
                  MPMD: mpirun [OPTIONS] -n N PROG [ARGS] : -n M PROG2 [ARGS] ... runs the programs \
                  in one job, ranks in that order (-n, -env, -x, -wdir may follow each `:`).\n\
                  Exit status: 0 if all ranks exit 0; otherwise the failing rank's code \
                  (128+N if killed by signal N), the MPI_Abort code, 124 on --timeout."
)]
pub struct Cli {
    /// Number of ranks to start (-n, -np); default: the hosts' slots (inside a Slurm
    /// allocation: its tasks), or 1 without hosts.
    #[arg(long = "np", short = 'n', value_name = "N")]
    pub np: Option<usize>,

    /// Set NAME=VALUE in every rank's environment (repeatable).
    #[arg(long = "genv", num_args = 2, value_names = ["NAME", "VALUE"], action = clap::ArgAction::Append)]
    pub genv: Vec<String>,

    /// Set NAME=VALUE in the environment of this program's ranks (as -genv without a `:`
    /// on the command line; repeatable).
    #[arg(long = "env", num_args = 2, value_names = ["NAME", "VALUE"], action = clap::ArgAction::Append)]
    pub env: Vec<String>,

    /// Export NAME (from mpirun's environment) or set NAME=VALUE in every rank (repeatable).
    #[arg(short = 'x', value_name = "NAME[=VALUE]", action = clap::ArgAction::Append)]
    pub export: Vec<String>,

    /// Prefix every output line with `[rank] ` (-l).
    #[arg(long = "tag-output", short = 'l')]
    pub tag_output: bool,

    /// Kill the job after SECS seconds (default: $MPIEXEC_TIMEOUT if set); exit status 124.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    /// Working directory of the ranks (-wdir, -wd).
    #[arg(long, value_name = "DIR")]
    pub wdir: Option<PathBuf>,

    /// Accepted for compatibility; oversubscription is allowed unless --nooversubscribe.
    #[arg(long)]
    pub oversubscribe: bool,

    /// Refuse more ranks than the hosts have slots.
    #[arg(long)]
    pub nooversubscribe: bool,

    /// Accepted for compatibility; running as root is always allowed.
    #[arg(long = "allow-run-as-root")]
    pub allow_run_as_root: bool,

    /// Hosts to run on, comma-separated, each `host` or `host:slots` (-hosts, -host, -H).
    #[arg(long = "host", value_name = "HOSTS", action = clap::ArgAction::Append)]
    pub hosts: Vec<String>,

    /// Host file, one host per line: `host`, `host:slots` or `host slots=N` (-f, -hostfile, -machinefile).
    #[arg(long, value_name = "FILE")]
    pub hostfile: Option<PathBuf>,

    /// Ranks per host (-ppn), instead of each host's slot count.
    #[arg(long, value_name = "N")]
    pub ppn: Option<usize>,

    /// MPI_UNIVERSE_SIZE of the job (-usize, as Hydra): how many processes it may have
    /// with those it spawns. Default: unknown (the attribute is not set).
    #[arg(long, value_name = "N")]
    pub usize: Option<usize>,

    /// How proxies reach other hosts: ssh (default), rsh, fork (every host on this machine), or
    /// slurm (one srun; the default inside an allocation).
    #[arg(long, value_name = "NAME")]
    pub launcher: Option<String>,

    /// Remote-exec program run as `PROG HOST COMMAND...` to start proxies (as ssh); with
    /// -launcher slurm, the srun to use.
    #[arg(long = "launcher-exec", value_name = "PROG")]
    pub launcher_exec: Option<String>,

    /// Placement: `slot` (default: fill each host's slots in turn) or `node` (round-robin).
    #[arg(long = "map-by", value_name = "slot|node")]
    pub map_by: Option<String>,

    /// Round-robin placement, one rank per host in turn (as --map-by node).
    #[arg(long)]
    pub rr: bool,

    /// Print the version and exit.
    #[arg(long, short = 'V')]
    pub version: bool,

    /// Print the OXMPI_* tuning variables (name, default, meaning) and exit.
    #[arg(long)]
    pub help_tuning: bool,

    /// The program to run and its arguments.
    #[arg(value_name = "PROGRAM [ARGS]")]
    pub command: Vec<String>,
}

/// The parts of an MPMD command line (`mpirun -n 2 a : -n 3 b`, as Hydra and Open MPI
/// take it): the arguments split at each `:` argument.
pub fn split_mpmd(args: &[String]) -> Vec<&[String]> {
    args.split(|a| a == ":").collect()
}

impl Cli {
    /// Parse the process arguments (without argv[0]): the whole command line, or its first
    /// part when it has several (see [`split_mpmd`], [`Cli::parse_mpmd`]).
    pub fn parse_args(args: &[String]) -> Result<Cli, clap::Error> {
        let mut argv = vec!["mpirun".to_string()];
        argv.extend(normalize(args));
        Cli::try_parse_from(argv)
    }

    /// An MPMD command line: the first part with the global options, then each further
    /// part's own options (-n, -env, -x, -wdir) and program. Other options in a later
    /// part are refused (they are the job's, given before the first program).
    pub fn parse_mpmd(args: &[String]) -> Result<(Cli, Vec<Cli>), String> {
        let parts = split_mpmd(args);
        let first = Cli::parse_args(parts[0]).map_err(|e| e.to_string())?;
        let mut more = Vec::new();
        for (i, part) in parts.iter().enumerate().skip(1) {
            let c = Cli::parse_args(part).map_err(|e| e.to_string())?;
            let global = c.tag_output
                || c.timeout.is_some()
                || !c.genv.is_empty()
                || !c.hosts.is_empty()
                || c.hostfile.is_some()
                || c.ppn.is_some()
                || c.usize.is_some()
                || c.launcher.is_some()
                || c.launcher_exec.is_some()
                || c.map_by.is_some()
                || c.rr
                || c.nooversubscribe
                || c.version
                || c.help_tuning;
            if global {
                return Err(format!(
                    "part {} of the MPMD command line (after `:` number {i}) has an option for the whole job; only -n, -env, -x and -wdir apply to one program (give the others before the first program)",
                    i + 1
                ));
            }
            if c.command.is_empty() {
                return Err(format!("part {} of the MPMD command line (after `:` number {i}) names no program", i + 1));
            }
            more.push(c);
        }
        Ok((first, more))
    }

    /// `-env` pairs (this program's ranks), then `-x` when in a later MPMD part.
    pub fn local_env(&self) -> Vec<(String, String)> {
        self.env.chunks(2).filter(|p| p.len() == 2).map(|p| (p[0].clone(), p[1].clone())).collect()
    }

    /// `-genv` pairs plus `-x` entries as (name, value). `-x NAME` without a value takes
    /// mpirun's own value (skipped if unset).
    pub fn extra_env(&self) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = self
            .genv
            .chunks(2)
            .filter(|p| p.len() == 2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect();
        if let Some(n) = self.usize {
            env.push(("OXMPI_UNIVERSE_SIZE".to_string(), n.to_string()));
        }
        for x in &self.export {
            match x.split_once('=') {
                Some((k, v)) => env.push((k.to_string(), v.to_string())),
                None => {
                    if let Ok(v) = std::env::var(x) {
                        env.push((x.clone(), v));
                    }
                }
            }
        }
        env
    }

    /// The job timeout: `--timeout`, else `MPIEXEC_TIMEOUT` (as Hydra); 0 means none.
    pub fn timeout_secs(&self) -> Result<Option<u64>, String> {
        let secs = match self.timeout {
            Some(s) => s,
            None => match std::env::var("MPIEXEC_TIMEOUT") {
                Ok(v) if !v.trim().is_empty() => v
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| format!("MPIEXEC_TIMEOUT={v} is not a number of seconds"))?,
                _ => 0,
            },
        };
        Ok((secs > 0).then_some(secs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Cli {
        let args: Vec<String> = s.split_whitespace().map(String::from).collect();
        Cli::parse_args(&args).unwrap()
    }

    #[test]
    fn hydra_spellings() {
        let c = parse("-np 4 -genv A 1 -genv B 2 -wdir /tmp -l -ppn 2 ./a.out -n 9 -l");
        assert_eq!(c.np, Some(4));
        assert_eq!(
            c.extra_env(),
            vec![("A".into(), "1".into()), ("B".into(), "2".into())]
        );
        assert_eq!(c.wdir, Some(PathBuf::from("/tmp")));
        assert!(c.tag_output);
        assert_eq!(c.command, vec!["./a.out", "-n", "9", "-l"]);
    }

    #[test]
    fn openmpi_spellings() {
        let c =
            parse("--np=3 -x FOO=bar --tag-output --oversubscribe --allow-run-as-root -- prog --x");
        assert_eq!(c.np, Some(3));
        assert_eq!(c.extra_env(), vec![("FOO".into(), "bar".into())]);
        assert!(c.tag_output && c.oversubscribe && c.allow_run_as_root);
        assert_eq!(c.command, vec!["prog", "--x"]);
    }

    #[test]
    fn timeout_and_hosts() {
        let c = parse("-n 2 --timeout 5 -hosts localhost,127.0.0.1 -f hf true");
        assert_eq!(c.timeout_secs().unwrap(), Some(5));
        assert_eq!(c.hosts, vec!["localhost,127.0.0.1"]);
        assert_eq!(c.hostfile, Some(PathBuf::from("hf")));
        assert_eq!(c.command, vec!["true"]);
    }

    #[test]
    fn launcher_and_placement_flags() {
        let c = parse("-launcher fork -rr --nooversubscribe -f hosts -n 2 true");
        assert_eq!(c.launcher.as_deref(), Some("fork"));
        assert!(c.rr && c.nooversubscribe);
        let c = parse("-launcher-exec ./agent --map-by node true");
        assert_eq!(c.launcher_exec.as_deref(), Some("./agent"));
        assert_eq!(c.map_by.as_deref(), Some("node"));
        assert_eq!(c.np, None);
    }

    #[test]
    fn mpmd_parts() {
        let args: Vec<String> = "-genv A 1 -env B 2 -n 2 a x : -n 3 -env B 3 -x C=4 b y : c".split_whitespace().map(String::from).collect();
        let (first, more) = Cli::parse_mpmd(&args).unwrap();
        assert_eq!((first.np, first.command.clone()), (Some(2), vec!["a".to_string(), "x".to_string()]));
        assert_eq!(first.extra_env(), vec![("A".into(), "1".into())]);
        assert_eq!(first.local_env(), vec![("B".into(), "2".into())]);
        assert_eq!(more.len(), 2);
        assert_eq!((more[0].np, more[0].command.clone()), (Some(3), vec!["b".to_string(), "y".to_string()]));
        assert_eq!(more[0].local_env(), vec![("B".into(), "3".into())]);
        assert_eq!(more[0].extra_env(), vec![("C".into(), "4".into())]);
        assert_eq!((more[1].np, more[1].command.clone()), (None, vec!["c".to_string()]));
        let bad: Vec<String> = "-n 1 a : -l b".split_whitespace().map(String::from).collect();
        assert!(Cli::parse_mpmd(&bad).unwrap_err().contains("only -n, -env, -x and -wdir"));
    }

    #[test]
    fn unknown_option_rejected() {
        let args: Vec<String> = ["--bogus", "true"].iter().map(|s| s.to_string()).collect();
        assert!(Cli::parse_args(&args).is_err());
    }
}
