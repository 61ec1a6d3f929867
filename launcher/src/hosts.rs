//! Host lists as users write them, and where each rank runs.
//!
//! Sources: `-hosts h1,h2` / `-host h1:2,h2:2` (Hydra's `host:slots`), host files in
//! Hydra's form (`host:slots`) or Open MPI's (`host slots=N`), with `#` comments and blank
//! lines. A host named twice adds its slots. Without a slot count a host has one slot.
//!
//! Placement (as Hydra): in blocks by default, each host taking as many consecutive ranks
//! as it has slots, host after host, starting over at the first host when every slot is
//! taken (oversubscription, allowed unless `--nooversubscribe`); `-ppn N` gives every
//! host N slots. `--map-by node` / `-rr` deals ranks out one per host in turn instead.

use std::path::Path;

/// One host of the job with its slot count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    pub name: String,
    pub slots: usize,
}

/// Names that mean "this machine".
pub fn local_names() -> Vec<String> {
    let mut names: Vec<String> = ["localhost", "localhost.localdomain", "127.0.0.1", "::1", "ip6-localhost"].iter().map(|s| s.to_string()).collect();
    let full = this_host();
    if let Some((short, _)) = full.split_once('.') {
        names.push(short.to_string());
    }
    names.push(full);
    names
}

/// This machine's host name (its UTS name).
pub fn this_host() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is valid for `buf.len()` bytes; gethostname NUL-terminates on success.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).to_string()
}

/// Whether `name` is this machine.
pub fn is_local(name: &str) -> bool {
    local_names().iter().any(|l| l.eq_ignore_ascii_case(name))
}

/// Parses one host entry: `host`, `host:slots` or `host slots=N` (also `max_slots=`,
/// ignored). `None` for a blank or comment line.
fn parse_entry(entry: &str) -> Result<Option<Host>, String> {
    let entry = entry.split('#').next().unwrap_or("").trim();
    let mut words = entry.split_whitespace();
    let Some(first) = words.next() else { return Ok(None) };
    let bad_count = |v: &str| format!("host entry `{entry}`: `{v}` is not a slot count (a whole number ≥ 1)");
    let count = |v: &str| v.parse::<usize>().ok().filter(|&n| n >= 1).ok_or_else(|| bad_count(v));
    // `host:2` (Hydra), but an IPv6 address like `::1` has several colons.
    let (name, mut slots) = match first.rsplit_once(':') {
        Some((h, n)) if first.matches(':').count() == 1 => (h.to_string(), Some(count(n)?)),
        _ => (first.to_string(), None),
    };
    for w in words {
        match w.split_once('=') {
            Some(("slots", v)) | Some(("cpu", v)) => slots = Some(count(v)?),
            Some(("max_slots", v)) | Some(("max-slots", v)) => {
                count(v)?;
            }
            _ => return Err(format!("host entry `{entry}`: cannot read `{w}` (expected `host`, `host:N` or `host slots=N`)")),
        }
    }
    if name.is_empty() {
        return Err(format!("host entry `{entry}` has no host name"));
    }
    Ok(Some(Host { name, slots: slots.unwrap_or(1) }))
}

/// Adds `h` to `hosts`, merging a repeated name (its slots add up).
fn add(hosts: &mut Vec<Host>, h: Host) {
    match hosts.iter_mut().find(|x| x.name == h.name) {
        Some(x) => x.slots += h.slots,
        None => hosts.push(h),
    }
}

/// The hosts of `-hosts` values (comma-separated) and of a host file, in order.
pub fn parse(hosts: &[String], hostfile: Option<&Path>) -> Result<Vec<Host>, String> {
    let mut out = Vec::new();
    for list in hosts {
        for entry in list.split(',') {
            if entry.trim().is_empty() {
                return Err(format!("empty host name in `{list}`"));
            }
            if let Some(h) = parse_entry(entry)? {
                add(&mut out, h);
            }
        }
    }
    if let Some(path) = hostfile {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read host file {}: {e}", path.display()))?;
        let before = out.len();
        for (i, line) in text.lines().enumerate() {
            if let Some(h) = parse_entry(line).map_err(|e| format!("host file {} line {}: {e}", path.display(), i + 1))? {
                add(&mut out, h);
            }
        }
        if out.len() == before && hosts.is_empty() {
            return Err(format!("host file {} names no hosts", path.display()));
        }
    }
    Ok(out)
}

/// How ranks are dealt out to hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapBy {
    /// Consecutive ranks fill a host's slots (Hydra's default, Open MPI's `--map-by slot`).
    Slot,
    /// One rank per host in turn (`--map-by node`, `-rr`).
    Node,
}

/// Which host (index into `hosts`) each of `np` ranks runs on. `ppn` replaces every host's
/// slot count; `oversubscribe: false` refuses more ranks than slots.
pub fn place(hosts: &[Host], np: usize, ppn: Option<usize>, map: MapBy, oversubscribe: bool) -> Result<Vec<usize>, String> {
    assert!(!hosts.is_empty());
    let slots: Vec<usize> = hosts.iter().map(|h| ppn.unwrap_or(h.slots)).collect();
    let total: usize = slots.iter().sum();
    if np > total && !oversubscribe {
        let list: Vec<String> = hosts.iter().zip(&slots).map(|(h, s)| format!("{}:{s}", h.name)).collect();
        return Err(format!(
            "{np} ranks requested but the hosts have only {total} slots ({}); ask for fewer ranks, give hosts more slots (host:N, slots=N, -ppn), or allow oversubscription (drop --nooversubscribe)",
            list.join(",")
        ));
    }
    let mut out = Vec::with_capacity(np);
    match map {
        MapBy::Slot => 'outer: loop {
            for (h, &s) in slots.iter().enumerate() {
                for _ in 0..s {
                    if out.len() == np {
                        break 'outer;
                    }
                    out.push(h);
                }
            }
            if out.len() == np {
                break;
            }
        },
        MapBy::Node => {
            // Rounds of one rank per host that still has a free slot in this pass over the
            // slots; once every slot is used, the next pass starts (oversubscription).
            let mut used = vec![0usize; hosts.len()];
            let mut pass = 1;
            while out.len() < np {
                let mut any = false;
                for h in 0..hosts.len() {
                    if out.len() < np && used[h] < slots[h] * pass {
                        used[h] += 1;
                        out.push(h);
                        any = true;
                    }
                }
                if !any {
                    pass += 1;
                }
            }
        }
    }
    Ok(out)
}

/// `PMI_process_mapping` for ranks on nodes `node_of`: `(vector,(start,nodes,ppn),…)`,
/// the shortest block list whose cyclic repetition (as readers expand it) gives the layout.
pub fn process_mapping(node_of: &[usize]) -> String {
    // Runs of equal nodes, then runs of runs on consecutive nodes with equal lengths.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &n in node_of {
        match runs.last_mut() {
            Some((node, len)) if *node == n => *len += 1,
            _ => runs.push((n, 1)),
        }
    }
    let mut blocks: Vec<(usize, usize, usize)> = Vec::new();
    for (node, len) in runs {
        match blocks.last_mut() {
            Some((start, nodes, ppn)) if *ppn == len && *start + *nodes == node => *nodes += 1,
            _ => blocks.push((node, 1, len)),
        }
    }
    let expand = |b: &[(usize, usize, usize)]| -> Vec<usize> {
        let mut v = Vec::with_capacity(node_of.len());
        while v.len() < node_of.len() {
            for &(start, nodes, ppn) in b {
                for n in start..start + nodes {
                    for _ in 0..ppn {
                        v.push(n);
                    }
                }
            }
        }
        v.truncate(node_of.len());
        v
    };
    let k = (1..=blocks.len()).find(|&k| expand(&blocks[..k]) == node_of).unwrap_or(blocks.len());
    let parts: Vec<String> = blocks[..k].iter().map(|(s, n, p)| format!("({s},{n},{p})")).collect();
    format!("(vector,{})", parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpi_core::bootstrap::parse_process_mapping;

    fn hosts(spec: &str) -> Vec<Host> {
        parse(&[spec.to_string()], None).unwrap()
    }

    #[test]
    fn host_lists() {
        assert_eq!(hosts("a,b"), vec![Host { name: "a".into(), slots: 1 }, Host { name: "b".into(), slots: 1 }]);
        assert_eq!(hosts("a:2,b:3,a"), vec![Host { name: "a".into(), slots: 3 }, Host { name: "b".into(), slots: 3 }]);
        assert_eq!(hosts("::1"), vec![Host { name: "::1".into(), slots: 1 }]);
        assert!(parse(&["a,,b".into()], None).unwrap_err().contains("empty host name"));
        assert!(parse(&["a:0".into()], None).unwrap_err().contains("slot count"));
        assert!(parse(&["a:x".into()], None).unwrap_err().contains("slot count"));
    }

    #[test]
    fn host_files_both_forms() {
        let path = std::env::temp_dir().join(format!("oxmpi-hosts-{}", std::process::id()));
        std::fs::write(&path, "# cluster\nn1 slots=4\n\n  n2:2   # two cores\nn3 slots=1 max_slots=8\nn1\n").unwrap();
        let h = parse(&[], Some(&path)).unwrap();
        assert_eq!(h, vec![Host { name: "n1".into(), slots: 5 }, Host { name: "n2".into(), slots: 2 }, Host { name: "n3".into(), slots: 1 }]);
        std::fs::write(&path, "# nothing\n\n").unwrap();
        assert!(parse(&[], Some(&path)).unwrap_err().contains("names no hosts"));
        std::fs::write(&path, "n1 slots=two\n").unwrap();
        let e = parse(&[], Some(&path)).unwrap_err();
        assert!(e.contains("line 1") && e.contains("slot count"), "{e}");
        std::fs::write(&path, "n1 cores=2\n").unwrap();
        assert!(parse(&[], Some(&path)).unwrap_err().contains("cannot read `cores=2`"));
        std::fs::remove_file(&path).unwrap();
        assert!(parse(&[], Some(Path::new("/nonexistent/hosts"))).unwrap_err().contains("cannot read host file"));
    }

    #[test]
    fn placement() {
        let two = hosts("a:2,b:2");
        assert_eq!(place(&two, 4, None, MapBy::Slot, true).unwrap(), vec![0, 0, 1, 1]);
        assert_eq!(place(&two, 4, None, MapBy::Node, true).unwrap(), vec![0, 1, 0, 1]);
        assert_eq!(place(&two, 6, None, MapBy::Slot, true).unwrap(), vec![0, 0, 1, 1, 0, 0]);
        assert_eq!(place(&two, 3, Some(1), MapBy::Slot, true).unwrap(), vec![0, 1, 0]);
        assert_eq!(place(&two, 6, Some(3), MapBy::Slot, false).unwrap(), vec![0, 0, 0, 1, 1, 1]);
        let e = place(&two, 5, None, MapBy::Slot, false).unwrap_err();
        assert!(e.contains("5 ranks requested") && e.contains("only 4 slots") && e.contains("a:2,b:2"), "{e}");
        let uneven = hosts("a:3,b:1");
        assert_eq!(place(&uneven, 4, None, MapBy::Node, false).unwrap(), vec![0, 1, 0, 0]);
        assert_eq!(place(&uneven, 6, None, MapBy::Node, true).unwrap(), vec![0, 1, 0, 0, 0, 1]);
        // Hydra: hosts without counts take one rank each, in turn.
        assert_eq!(place(&hosts("a,b,c"), 5, None, MapBy::Slot, true).unwrap(), vec![0, 1, 2, 0, 1]);
    }

    #[test]
    fn mappings_round_trip() {
        for layout in [vec![0, 0, 1, 1], vec![0, 1, 0, 1], vec![0, 0, 0], vec![0, 1, 2, 0, 1], vec![0, 0, 1, 1, 0, 0], vec![0, 0, 0, 1], vec![1, 0], vec![0, 1, 1, 2, 2, 2]] {
            let m = process_mapping(&layout);
            assert_eq!(parse_process_mapping(&m, layout.len()).unwrap(), layout, "{m}");
        }
        assert_eq!(process_mapping(&[0, 0, 1, 1]), "(vector,(0,2,2))");
        assert_eq!(process_mapping(&[0, 1, 0, 1, 0, 1, 0, 1]), "(vector,(0,2,1))");
        assert_eq!(process_mapping(&[0; 5]), "(vector,(0,1,5))");
        assert!(process_mapping(&(0..4096).map(|i| i % 64).collect::<Vec<_>>()).len() < 40);
    }
}
