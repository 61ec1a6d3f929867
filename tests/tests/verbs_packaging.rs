//! The RDMA verbs transport's packaging and fallbacks, on any machine (the transport itself
//! runs on real Soft-RoCE in `make check-verbs`, tests/softroce/mpi-suite.sh):
//! `libmpi.so.12` never needs libibverbs (the transport is a plugin, `dlopen`ed), a job
//! whose verbs cannot start falls back to TCP between nodes and says why, and a job that
//! forces verbs where there are none fails at once with one line naming the reason.
mod common;
use common::*;
use std::process::Command;

fn lib_dir() -> std::path::PathBuf {
    mpi().mpirun.parent().unwrap().parent().unwrap().join("lib")
}

/// No `NEEDED` entry for libibverbs (or librdmacm) in libmpi.so.12.
#[test]
fn libmpi_does_not_need_libibverbs() {
    if !mpi().is_oxmpi {
        return;
    }
    let lib = lib_dir().join("libmpi.so.12");
    let out = Command::new("readelf").arg("-d").arg(&lib).output().expect("readelf (binutils) runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("(NEEDED)"), "readelf -d {} failed:\n{text}", lib.display());
    for l in text.lines().filter(|l| l.contains("(NEEDED)")) {
        assert!(!l.contains("ibverbs") && !l.contains("rdmacm"), "libmpi.so.12 needs an RDMA library: {l}");
    }
}

/// Two test nodes on this machine and no usable verbs (the plugin named by
/// OXMPI_VERBS_PLUGIN does not exist): the nodes talk over TCP, and the report says why.
#[test]
fn no_plugin_falls_back_to_tcp() {
    if !mpi().is_oxmpi {
        return;
    }
    let _x = exclusive();
    let exe = compile("ring");
    let env = [("OXMPI_PROCESS_MAPPING", "(vector,(0,2,2))"), ("OXMPI_VERBOSE", "1"), ("OXMPI_VERBS_PLUGIN", "/nonexistent/liboxmpi-verbs.so")];
    let r = run_ok_env("ring", &exe, 4, &[], &env);
    let line = r.stderr.lines().find(|l| l.starts_with("OxMPI rank 0/4")).unwrap_or_else(|| panic!("no transport report\n{}", r.report()));
    assert!(
        line.contains("tcp to 2-3 (other nodes; verbs not used: /nonexistent/liboxmpi-verbs.so is not installed"),
        "rank 0: {line}\n{}",
        r.report()
    );
    // OXMPI_IB=0: verbs not even tried.
    let r = run_ok_env("ring", &exe, 4, &[], &[("OXMPI_PROCESS_MAPPING", "(vector,(0,2,2))"), ("OXMPI_VERBOSE", "1"), ("OXMPI_IB", "0")]);
    let line = r.stderr.lines().find(|l| l.starts_with("OxMPI rank 0/4")).unwrap();
    assert!(line.contains("tcp to 2-3 (other nodes;") && !line.contains("verbs"), "rank 0: {line}");
}

/// OXMPI_TRANSPORT=verbs where verbs cannot start (no plugin, or the plugin and no RDMA
/// device, as on this machine): the job fails at start-up with the reason, not a hang.
#[test]
fn forced_verbs_without_rdma_fails_clearly() {
    if !mpi().is_oxmpi {
        return;
    }
    let _x = exclusive();
    let exe = compile("ring");
    let has_device = std::path::Path::new("/sys/class/infiniband").read_dir().is_ok_and(|mut d| d.next().is_some());
    let mut cases = vec![vec![("OXMPI_TRANSPORT", "verbs"), ("OXMPI_VERBS_PLUGIN", "/nonexistent/liboxmpi-verbs.so")]];
    if !has_device && lib_dir().join("liboxmpi-verbs.so").exists() {
        cases.push(vec![("OXMPI_TRANSPORT", "verbs")]);
    }
    for env in cases {
        let r = run(
            &exe,
            RunOpts { np: 2, env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(), launcher_timeout: Some(30), ..Default::default() },
        );
        assert!(!r.success() && r.elapsed.as_secs() < 20, "forced verbs without RDMA should fail fast\n{}", r.report());
        assert!(r.stderr.contains("OXMPI_TRANSPORT=verbs, but rank"), "no reason given\n{}", r.report());
        eprintln!("{:?}: {}", env, r.stderr.lines().find(|l| l.contains("OXMPI_TRANSPORT=verbs")).unwrap_or(""));
    }
}
