//! End-of-job cleanup: no processes and no shared-memory files may outlive the job.

use crate::sys;
use std::time::{Duration, Instant};

/// Remove `/dev/shm/oxmpi-<job_id>*` (the library names its segments after the job id,
/// which is our kvsname, and the node: `oxmpi-<job_id>-n<node>`); with `node`, only that
/// node's (hosts faked on one machine share /dev/shm). Returns how many were removed.
pub fn remove_shm_files(job_id: &str, node: Option<usize>) -> usize {
    let prefix = format!("oxmpi-{job_id}");
    let exact = node.map(|n| format!("{prefix}-n{n}"));
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return 0;
    };
    let mut removed = 0;
    for entry in dir.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = match &exact {
            Some(e) => *name == **e,
            None => name.starts_with(&prefix),
        };
        if ours && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Our direct children according to /proc (as a subreaper this includes orphaned
/// grandchildren of the ranks).
fn children() -> Vec<i32> {
    let mut pids = Vec::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return pids;
    };
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            pids.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            );
        }
    }
    pids
}

/// SIGKILL the job's process group and every remaining child, then reap them all, waiting
/// at most `limit`. Returns the pids of children that are still not reaped (should be none).
pub fn kill_and_reap_all(pgid: i32, limit: Duration) -> Vec<i32> {
    if pgid > 0 {
        sys::kill(-pgid, libc::SIGKILL);
    }
    let deadline = Instant::now() + limit;
    loop {
        for pid in children() {
            sys::kill(pid, libc::SIGKILL);
        }
        while sys::reap_any().is_some() {}
        let left = children();
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
