//! `mpirun` inside a Slurm allocation (`salloc`, `sbatch`, `srun --pty`).
//!
//! - **Hosts and slots** come from the allocation when no host list is given:
//!   `SLURM_JOB_NODELIST` in Slurm's host-list syntax (`n[1-4,7],gpu01`, `n[01-10]`,
//!   several bracket groups in one name), slots from `SLURM_TASKS_PER_NODE` (`2(x3),1`, in
//!   node-list order), else (and inside an srun step, where that variable is the step's)
//!   `SLURM_JOB_CPUS_PER_NODE`; `-n` defaults to their sum.
//! - **Proxies** start with one `srun` (the `slurm` launcher, the default inside an
//!   allocation): one task per node, `--mpi=none` (no PMI server for the proxy step),
//!   `--input=none`, `--overlap` (a step already running, e.g. `srun --pty bash`, must not
//!   block ours), `--kill-on-bad-exit` (a proxy that fails before reporting to mpirun ends
//!   the step, so srun exits and mpirun says so at once).
//! - **Which host a proxy is**: every proxy of the step gets the same command line, so it
//!   announces the Slurm node name it runs on (`SLURMD_NODENAME`, the namespace of
//!   `SLURM_JOB_NODELIST`) and mpirun gives it that host's part. Names, not
//!   `SLURM_NODEID`/`SLURM_PROCID`: those are positions in the step's node order, which is
//!   Slurm's, not necessarily our host list's.
//! - **The job secret** reaches the proxies in srun's environment ([`SECRET_VAR`]), which
//!   srun hands to every task of the step (`--export=ALL`); with `--input=none` there is no
//!   stdin to carry it, and a command line would show it to `ps` on every node. The
//!   environment of a process is readable only by its user (and root), as its memory is.
//! - **The ranks' environment** is mpirun's minus what describes one task, step or node
//!   ([`describes_another_process`]): inside an allocation mpirun inherits `SLURM_PROCID`,
//!   `SLURM_NTASKS`, `SLURM_STEP_*` and maybe a PMI server's `PMI_*` that are not the MPI
//!   job's. A proxy started by srun puts back the node's own [`NODE_VARS`].

use crate::hosts::Host;

/// The environment variable that carries the job secret from mpirun through srun to the
/// proxies.
pub const SECRET_VAR: &str = "OXMPI_PROXY_SECRET";

/// Facts of the node that a proxy started by srun has in its environment and gives to the
/// ranks it starts (mpirun's values are about mpirun's node).
pub const NODE_VARS: &[&str] = &["SLURMD_NODENAME", "SLURM_TOPOLOGY_ADDR", "SLURM_TOPOLOGY_ADDR_PATTERN", "SLURM_CPUS_ON_NODE"];

/// Whether an inherited variable describes another process than the ranks (a PMI or PMIx
/// server's client, the batch step, the task mpirun runs as, mpirun's node): such variables
/// are not passed to the ranks.
pub fn describes_another_process(name: &str) -> bool {
    const PREFIXES: &[&str] = &["PMI_", "PMIX_", "SLURM_STEP_", "SLURM_PMIX", "SLURM_CPU_BIND"];
    const NAMES: &[&str] = &[
        "SLURM_PROCID",
        "SLURM_LOCALID",
        "SLURM_NODEID",
        "SLURM_GTIDS",
        "SLURM_TASK_PID",
        "SLURM_NTASKS",
        "SLURM_NPROCS",
        "SLURM_STEPID",
        "SLURM_SRUN_COMM_HOST",
        "SLURM_SRUN_COMM_PORT",
        "SLURM_LAUNCH_NODE_IPADDR",
        "SLURM_MPI_TYPE",
        "OXMPI_JOB_SECRET",
        SECRET_VAR,
    ];
    PREFIXES.iter().any(|p| name.starts_with(p)) || NAMES.contains(&name) || NODE_VARS.contains(&name)
}

/// Expands a Slurm host list: comma-separated names, each with any number of bracket
/// groups of numbers and ranges (`n[1-4,7]`, `n[01-10]` keeps the padding,
/// `r[1-2]n[1-3]` is every combination, first group slowest).
pub fn expand_hostlist(list: &str) -> Result<Vec<String>, String> {
    let bad = |why: &str| format!("cannot read the Slurm host list `{list}`: {why} (the syntax is like `n[1-4,7],gpu01`)");
    let mut out = Vec::new();
    // Split at commas outside brackets.
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in list.char_indices() {
        match c {
            '[' if depth > 0 => return Err(bad("`[` inside brackets")),
            '[' => depth = 1,
            ']' if depth == 0 => return Err(bad("`]` without `[`")),
            ']' => depth = 0,
            ',' if depth == 0 => {
                items.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth > 0 {
        return Err(bad("`[` without `]`"));
    }
    items.push(&list[start..]);
    for item in items {
        let item = item.trim();
        if item.is_empty() {
            return Err(bad("an empty host name"));
        }
        // Alternating literal text and bracket groups, expanded as a product.
        let mut names = vec![String::new()];
        let mut rest = item;
        while !rest.is_empty() {
            let (text, group) = match rest.find('[') {
                Some(open) => {
                    let close = open + rest[open..].find(']').unwrap();
                    (&rest[..open], Some(&rest[open + 1..close]))
                }
                None => (rest, None),
            };
            for n in &mut names {
                n.push_str(text);
            }
            let Some(group) = group else { break };
            rest = &rest[text.len() + group.len() + 2..];
            let numbers = expand_ranges(group).map_err(|e| bad(&e))?;
            if names.len().saturating_mul(numbers.len()) > 1_000_000 {
                return Err(bad("more than a million names"));
            }
            names = names.iter().flat_map(|n| numbers.iter().map(move |x| format!("{n}{x}"))).collect();
        }
        out.extend(names);
    }
    Ok(out)
}

/// `1-4,7` → `1 2 3 4 7`; `01-10` → `01 … 10` (a bound's width is kept).
fn expand_ranges(group: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for part in group.split(',') {
        let part = part.trim();
        let num = |s: &str| s.parse::<u64>().ok().filter(|_| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
        let (lo_s, hi_s) = part.split_once('-').unwrap_or((part, part));
        let (Some(lo), Some(hi)) = (num(lo_s), num(hi_s)) else {
            return Err(if part.is_empty() { "empty brackets or range".into() } else { format!("`{part}` is not a number or a range a-b") });
        };
        if hi < lo {
            return Err(format!("the range `{part}` goes down"));
        }
        if hi - lo >= 1_000_000 {
            return Err(format!("the range `{part}` is too large"));
        }
        let width = lo_s.len();
        out.extend((lo..=hi).map(|x| format!("{x:0width$}")));
    }
    Ok(out)
}

/// Expands Slurm's per-node counts: `2(x3),1` → `2 2 2 1`.
pub fn expand_counts(var: &str, value: &str) -> Result<Vec<usize>, String> {
    let bad = |why: String| format!("cannot read {var}=`{value}`: {why} (the syntax is like `2(x3),1`)");
    let mut out = Vec::new();
    for part in value.split(',') {
        let part = part.trim();
        let (n, times) = match part.split_once("(x") {
            Some((n, rest)) => {
                let Some(t) = rest.strip_suffix(')') else { return Err(bad(format!("`{part}` lacks its `)`"))) };
                (n, t)
            }
            None => (part, "1"),
        };
        let count = |s: &str| s.trim().parse::<usize>().ok().filter(|&c| c >= 1);
        let (Some(n), Some(times)) = (count(n), count(times)) else {
            return Err(bad(format!("`{part}` is not a count ≥ 1, or count(xrepeat)")));
        };
        if out.len() + times > 1_000_000 {
            return Err(bad("more than a million nodes".into()));
        }
        out.extend(std::iter::repeat(n).take(times));
    }
    Ok(out)
}

/// The allocation mpirun runs in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    pub job_id: String,
    /// Nodes in `SLURM_JOB_NODELIST` order with their slots.
    pub hosts: Vec<Host>,
}

impl Allocation {
    /// The allocation `var` describes, `None` outside one (no `SLURM_JOB_ID`).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Option<Allocation>, String> {
        let get = |names: &[&'static str]| names.iter().find_map(|&n| var(n).filter(|v| !v.trim().is_empty()).map(|v| (n, v)));
        let Some((_, job_id)) = get(&["SLURM_JOB_ID", "SLURM_JOBID"]) else { return Ok(None) };
        let Some((_, list)) = get(&["SLURM_JOB_NODELIST", "SLURM_NODELIST"]) else {
            return Err(format!("SLURM_JOB_ID={job_id} is set but SLURM_JOB_NODELIST is not: cannot tell the allocation's nodes (give hosts with -hosts, or unset SLURM_JOB_ID)"));
        };
        let names = expand_hostlist(&list)?;
        // Inside an srun step (`srun --pty bash`, `srun mpirun`) SLURM_TASKS_PER_NODE is
        // that step's, not the allocation's (the batch step has no step id).
        let in_step = get(&["SLURM_STEP_ID", "SLURM_STEPID"]).is_some();
        let slot_vars: &[&'static str] = if in_step { &["SLURM_JOB_CPUS_PER_NODE"] } else { &["SLURM_TASKS_PER_NODE", "SLURM_JOB_CPUS_PER_NODE"] };
        let slots = match get(slot_vars) {
            Some((name, v)) => {
                let counts = expand_counts(name, &v)?;
                if counts.len() != names.len() {
                    return Err(format!("{name}=`{v}` gives {} counts for the {} nodes of SLURM_JOB_NODELIST=`{list}`", counts.len(), names.len()));
                }
                counts
            }
            None => vec![1; names.len()],
        };
        let mut hosts: Vec<Host> = Vec::new();
        for (name, slots) in names.into_iter().zip(slots) {
            match hosts.iter_mut().find(|h| h.name == name) {
                Some(h) => h.slots += slots,
                None => hosts.push(Host { name, slots }),
            }
        }
        Ok(Some(Allocation { job_id, hosts }))
    }

    /// From mpirun's environment.
    pub fn from_env() -> Result<Option<Allocation>, String> {
        Allocation::from_vars(|k| std::env::var(k).ok())
    }

    /// The allocation as it reads in messages: its job id and (the first of) its nodes.
    pub fn describe(&self) -> String {
        const SHOWN: usize = 8;
        let names: Vec<&str> = self.hosts.iter().take(SHOWN).map(|h| h.name.as_str()).collect();
        let more = if self.hosts.len() > SHOWN { format!(",... {} nodes", self.hosts.len()) } else { String::new() };
        format!("Slurm job {} ({}{more})", self.job_id, names.join(","))
    }
}

/// The one srun that starts `command` (a proxy) once on each of `nodes`.
pub fn srun_command(srun: &str, nodes: &[String], command: &[String]) -> Vec<String> {
    let n = nodes.len();
    let mut v: Vec<String> = vec![
        srun.to_string(),
        "--mpi=none".into(),
        format!("--nodes={n}"),
        format!("--ntasks={n}"),
        "--ntasks-per-node=1".into(),
        format!("--nodelist={}", nodes.join(",")),
        "--input=none".into(),
        "--kill-on-bad-exit=1".into(),
        "--export=ALL".into(),
        "--overlap".into(),
    ];
    v.extend(command.iter().cloned());
    v
}

/// The node a proxy started by srun runs on (`None`: not started by srun).
pub fn this_node() -> Option<String> {
    std::env::var("SLURMD_NODENAME").ok().filter(|v| !v.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(s: &str) -> Vec<String> {
        expand_hostlist(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn host_lists() {
        assert_eq!(ex("n1"), ["n1"]);
        assert_eq!(ex("n[1-2]"), ["n1", "n2"]);
        assert_eq!(ex("n[1-4,7],gpu01"), ["n1", "n2", "n3", "n4", "n7", "gpu01"]);
        assert_eq!(ex("n[01-03]"), ["n01", "n02", "n03"]);
        assert_eq!(ex("n[8-10]"), ["n8", "n9", "n10"]);
        assert_eq!(ex("n[098-101]"), ["n098", "n099", "n100", "n101"]);
        assert_eq!(ex("r[1-2]n[1-2]"), ["r1n1", "r1n2", "r2n1", "r2n2"]);
        assert_eq!(ex("r[1,3]-n[01-02].ib,login"), ["r1-n01.ib", "r1-n02.ib", "r3-n01.ib", "r3-n02.ib", "login"]);
        assert_eq!(ex("a,b[2],c"), ["a", "b2", "c"]);
        assert_eq!(ex(" n[1-2] , m "), ["n1", "n2", "m"]);
        assert_eq!(ex("node-[5]"), ["node-5"]);
    }

    #[test]
    fn bad_host_lists_one_line() {
        for (list, why) in [
            ("n[1-", "`[` without `]`"),
            ("n1-3]", "`]` without `[`"),
            ("n[1[2]]", "`[` inside brackets"),
            ("n[]", "empty brackets"),
            ("n[a-b]", "`a-b` is not a number"),
            ("n[5-3]", "goes down"),
            ("n[1-2],,m", "empty host name"),
            ("n[1--2]", "is not a number"),
            ("n[0-99999999]", "too large"),
            ("", "empty host name"),
        ] {
            let e = expand_hostlist(list).unwrap_err();
            assert!(e.contains(why) && e.contains(&format!("`{list}`")) && !e.contains('\n'), "{list}: {e}");
        }
    }

    #[test]
    fn counts() {
        assert_eq!(expand_counts("X", "2(x3),1").unwrap(), [2, 2, 2, 1]);
        assert_eq!(expand_counts("X", "4").unwrap(), [4]);
        assert_eq!(expand_counts("X", "1(x2)").unwrap(), [1, 1]);
        assert_eq!(expand_counts("X", "3,2(x2)").unwrap(), [3, 2, 2]);
        for bad in ["", "0", "2(x0)", "2(x3", "two", "2(y3)", "-1"] {
            let e = expand_counts("SLURM_TASKS_PER_NODE", bad).unwrap_err();
            assert!(e.starts_with(&format!("cannot read SLURM_TASKS_PER_NODE=`{bad}`")) && !e.contains('\n'), "{bad}: {e}");
        }
    }

    fn alloc(vars: &[(&str, &str)]) -> Result<Option<Allocation>, String> {
        Allocation::from_vars(|k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string()))
    }

    fn h(name: &str, slots: usize) -> Host {
        Host { name: name.into(), slots }
    }

    #[test]
    fn allocations() {
        assert_eq!(alloc(&[("SLURM_JOB_NODELIST", "n1")]).unwrap(), None);
        let a = alloc(&[("SLURM_JOB_ID", "12"), ("SLURM_JOB_NODELIST", "n[1-3],m"), ("SLURM_TASKS_PER_NODE", "2(x3),1"), ("SLURM_JOB_CPUS_PER_NODE", "8(x4)")]).unwrap().unwrap();
        assert_eq!(a.hosts, [h("n1", 2), h("n2", 2), h("n3", 2), h("m", 1)]);
        assert_eq!(a.job_id, "12");
        assert_eq!(a.describe(), "Slurm job 12 (n1,n2,n3,m)");
        // No tasks per node: the CPUs; neither: one slot each.
        let a = alloc(&[("SLURM_JOBID", "3"), ("SLURM_NODELIST", "n[1-2]"), ("SLURM_JOB_CPUS_PER_NODE", "4(x2)")]).unwrap().unwrap();
        assert_eq!(a.hosts, [h("n1", 4), h("n2", 4)]);
        let a = alloc(&[("SLURM_JOB_ID", "3"), ("SLURM_JOB_NODELIST", "n[1-2]")]).unwrap().unwrap();
        assert_eq!(a.hosts, [h("n1", 1), h("n2", 1)]);
        // In an srun step (mpirun run by srun): the step's tasks per node are not the job's.
        let a = alloc(&[("SLURM_JOB_ID", "3"), ("SLURM_STEP_ID", "0"), ("SLURM_JOB_NODELIST", "n[1-2]"), ("SLURM_TASKS_PER_NODE", "1"), ("SLURM_JOB_CPUS_PER_NODE", "2(x2)")]).unwrap().unwrap();
        assert_eq!(a.hosts, [h("n1", 2), h("n2", 2)]);
        let e = alloc(&[("SLURM_JOB_ID", "3"), ("SLURM_JOB_NODELIST", "n[1-2]"), ("SLURM_TASKS_PER_NODE", "2")]).unwrap_err();
        assert!(e.contains("gives 1 counts for the 2 nodes"), "{e}");
        let e = alloc(&[("SLURM_JOB_ID", "3")]).unwrap_err();
        assert!(e.contains("SLURM_JOB_NODELIST is not"), "{e}");
        assert!(alloc(&[("SLURM_JOB_ID", "3"), ("SLURM_JOB_NODELIST", "n[2-1]")]).unwrap_err().contains("goes down"));
        let many = alloc(&[("SLURM_JOB_ID", "9"), ("SLURM_JOB_NODELIST", "node[0001-0100]")]).unwrap().unwrap();
        assert_eq!(many.hosts.len(), 100);
        assert_eq!(many.describe(), "Slurm job 9 (node0001,node0002,node0003,node0004,node0005,node0006,node0007,node0008,... 100 nodes)");
    }

    #[test]
    fn what_the_ranks_do_not_inherit() {
        for leaked in [
            "PMI_FD", "PMI_RANK", "PMI_JOBID", "PMIX_RANK", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_STEP_ID",
            "SLURM_STEP_NUM_TASKS", "SLURM_STEPID", "SLURM_GTIDS", "SLURM_MPI_TYPE", "SLURM_CPU_BIND_LIST", "SLURMD_NODENAME", "OXMPI_JOB_SECRET", SECRET_VAR,
        ] {
            assert!(describes_another_process(leaked), "{leaked}");
        }
        for kept in ["SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_TASKS_PER_NODE", "SLURM_SUBMIT_DIR", "SLURM_CONF", "PATH", "OXMPI_VERBOSE", "PMIX"] {
            assert!(!describes_another_process(kept), "{kept}");
        }
    }

    #[test]
    fn one_srun_for_all_proxies() {
        let cmd: Vec<String> = vec!["/x/mpirun".into(), "--oxmpi-proxy".into(), "10.0.0.1:5000".into(), "slurm".into()];
        let v = srun_command("srun", &["n1".into(), "n3".into()], &cmd);
        assert_eq!(v[0], "srun");
        for want in ["--mpi=none", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--nodelist=n1,n3", "--input=none", "--kill-on-bad-exit=1", "--export=ALL"] {
            assert!(v.contains(&want.to_string()), "{want}: {v:?}");
        }
        assert_eq!(v[v.len() - 4..], cmd[..]);
    }
}
