//! Host lists (`-hosts`, `-hostfile`): accepted as long as they name only this machine,
//! because multi-host launch (proxies over ssh/srun) is not implemented yet.

use std::path::Path;

/// Names that mean "this machine".
fn local_names() -> Vec<String> {
    let mut names: Vec<String> = [
        "localhost",
        "localhost.localdomain",
        "127.0.0.1",
        "::1",
        "ip6-localhost",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is valid for `buf.len()` bytes; gethostname NUL-terminates on success.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let full = String::from_utf8_lossy(&buf[..end]).to_string();
        if let Some((short, _)) = full.split_once('.') {
            names.push(short.to_string());
        }
        names.push(full);
    }
    names
}

/// Host name of one host-list entry: `host`, `host:slots`, `host slots=N`.
fn host_of(entry: &str) -> Option<&str> {
    let entry = entry.split('#').next().unwrap_or("").trim();
    let first = entry.split_whitespace().next()?;
    // `host:2` (hydra) — but keep IPv6 `::1` intact.
    Some(if first.matches(':').count() == 1 {
        first.split(':').next().unwrap_or(first)
    } else {
        first
    })
}

/// Ok if every host in `-hosts` values and the host file is this machine.
pub fn check_local(hosts: &[String], hostfile: Option<&Path>) -> Result<(), String> {
    let mut all: Vec<String> = Vec::new();
    for h in hosts {
        all.extend(h.split(',').filter_map(host_of).map(String::from));
    }
    if let Some(path) = hostfile {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read host file {}: {e}", path.display()))?;
        all.extend(text.lines().filter_map(host_of).map(String::from));
    }
    let local = local_names();
    match all
        .iter()
        .find(|h| !local.iter().any(|l| l.eq_ignore_ascii_case(h)))
    {
        None => Ok(()),
        Some(h) => Err(format!(
            "multi-host launch is not supported yet (host `{h}` is not this machine); \
             run on one machine, or launch with `srun --mpi=pmi2` inside a Slurm allocation"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_hosts_accepted_remote_rejected() {
        assert!(check_local(&["localhost,127.0.0.1:4".into()], None).is_ok());
        assert!(check_local(&["::1".into()], None).is_ok());
        let e = check_local(&["localhost,node17".into()], None).unwrap_err();
        assert!(e.contains("multi-host launch is not supported yet"));
        assert!(e.contains("node17"));
    }

    #[test]
    fn hostfile_parsing() {
        let dir = std::env::temp_dir().join(format!("oxmpi-hosts-{}", std::process::id()));
        std::fs::write(&dir, "# comment\nlocalhost slots=4\n\n127.0.0.1:2\n").unwrap();
        assert!(check_local(&[], Some(&dir)).is_ok());
        std::fs::write(&dir, "localhost\nfar-away slots=2\n").unwrap();
        assert!(check_local(&[], Some(&dir)).is_err());
        std::fs::remove_file(&dir).unwrap();
    }
}
