//! The TCP transport: the C test programs run again with every peer on TCP
//! (`OXMPI_TRANSPORT=tcp`, one host), in jobs that mix shm and TCP peers (a test node map,
//! `OXMPI_PROCESS_MAPPING`, puts ranks on two "nodes" of this machine), a soak run of 10^5
//! checked messages, and connections from outside with garbage or a wrong secret, which
//! the job must refuse and survive.
mod common;
use common::*;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TCP: (&str, &str) = ("OXMPI_TRANSPORT", "tcp");

/// Runs each (program, args) at each rank count with `env`, one job at a time (the
/// leftover check looks for any process of the same executable).
fn run_all(programs: &[(&str, &[&str])], nps: &[usize], env: &[(&str, &str)]) {
    let _x = exclusive();
    for (name, args) in programs {
        let exe = compile(name);
        for &np in nps {
            run_ok_env(name, &exe, np, args, env);
        }
    }
}

/// Point-to-point at every size class (0 B, eager, rendezvous, 64 MiB), wildcards, every
/// send mode, probes, cancels, persistent requests, datatypes.
#[test]
fn point_to_point_over_tcp() {
    run_all(
        &[
            ("ring", &[]),
            ("send_modes", &[]),
            ("mpi41_api", &[]),
            ("wildcard_order", &[]),
            ("blocking_recv", &[]),
            ("probe_persistent_cancel", &[]),
            ("sendrecv", &[]),
            ("datatypes_p2p", &[]),
            ("grequest", &[]),
            ("pushed", &[]),
            ("reg_reuse", &[]),
            ("credit_flood", &["3000"]),
            ("copy_distances", &[]),
            ("send_status", &[]),
        ],
        &[2, 3, 4, 8],
        &[TCP],
    );
    run_all(&[("pingpong_sizes", &["1", "64"])], &[2, 3, 4], &[TCP]);
}

/// Every collective (blocking and nonblocking, all algorithms' size classes), reductions
/// on pair types, intercommunicator collectives, barriers.
#[test]
fn collectives_over_tcp() {
    run_all(
        &[("coll_all", &[]), ("coll_dtypes", &[]), ("coll_noncomm", &[]), ("coll_overlap", &[]), ("reduce_pairs", &[]), ("reduce_scatter_shapes", &[]), ("stencil", &[]), ("barrier_sync", &[])],
        &[2, 3, 4, 8],
        &[TCP],
    );
    run_all(&[("inter_coll", &[])], &[2, 3, 5], &[TCP]);
}

/// Communicators, groups, topologies, attributes, errors, info, and threads at
/// MPI_THREAD_MULTIPLE (sleeping in epoll while other threads progress).
#[test]
fn communicators_and_threads_over_tcp() {
    run_all(
        &[
            ("comm_split", &[]),
            ("inter_comm", &[]),
            ("comm_idup", &[]),
            ("group_algebra", &[]),
            ("topo_cart", &[]),
            ("neighbor_types", &[]),
            ("attr_callbacks", &[]),
            ("errh_user", &[]),
            ("errors", &[]),
            ("init_misc", &[]),
            ("sleep_wake", &[]),
        ],
        &[2, 3, 4, 8],
        &[TCP],
    );
    run_all(&[("comm_dup_cycles", &["2000"])], &[2, 4], &[TCP]);
    run_all(&[("threads_hammer", &["3"])], &[2, 4], &[TCP]);
}

/// Ranks 0–1 on "node 0" and 2–3 on "node 1" (4–7 and so on at 8 ranks): shm inside a
/// node, TCP between them, both inside one job and one collective.
#[test]
fn mixed_shm_and_tcp_jobs() {
    for (np, map) in [(4, "(vector,(0,2,2))"), (8, "(vector,(0,2,4))"), (3, "(vector,(0,2,2))")] {
        let env = [("OXMPI_PROCESS_MAPPING", map)];
        run_all(
            &[("ring", &[]), ("wildcard_order", &[]), ("pingpong_sizes", &["1"]), ("coll_all", &[]), ("reduce_pairs", &[]), ("barrier_sync", &[]), ("comm_split", &[])],
            &[np],
            &env,
        );
    }
    // The verbose report shows both routes in use, and the congestion control the TCP
    // connections got from OXMPI_TCP_CONGESTION (the first usable name).
    let _x = exclusive();
    let exe = compile("ring");
    let r = run_ok_env("ring", &exe, 4, &[], &[("OXMPI_PROCESS_MAPPING", "(vector,(0,2,2))"), ("OXMPI_VERBOSE", "1"), ("OXMPI_TCP_CONGESTION", "no-such-algorithm,reno")]);
    for rank in 0..4 {
        let line = r.stderr.lines().find(|l| l.starts_with(&format!("OxMPI rank {rank}/4"))).unwrap_or_else(|| panic!("no transport report of rank {rank}\n{}", r.report()));
        let (shm, tcp) = if rank < 2 { ((1 - rank).to_string(), "2-3") } else { ((5 - rank).to_string(), "0-1") };
        assert!(line.contains(&format!("shm to {shm} (same node)")) && line.contains(&format!("tcp to {tcp} (other nodes")), "rank {rank}: {line}\n{}", r.report());
        assert!(line.contains("congestion control reno"), "rank {rank}: {line}\n{}", r.report());
    }
}

/// 4 ranks over TCP, 25000 messages each (10^5 in all) of random sizes 0–4 MiB, random
/// tags, wildcard receives: every byte, size, tag and per-sender order checked.
#[test]
fn soak_over_tcp() {
    let _x = exclusive();
    let exe = compile("soak");
    let r = run_ok_env("soak", &exe, 4, &["25000"], &[TCP]);
    eprintln!("{}", r.stdout.lines().find(|l| l.contains("messages")).unwrap_or(""));
    assert!(r.stdout.contains("soak: 100000 messages"), "{}", r.report());
}

/// Writes a handshake hello as OxMPI's TCP transport does (see
/// `mpi-core/src/transport/tcp/handshake.rs`), with the given secret.
fn hello(rank: u32, size: u32, secret: &[u8]) -> Vec<u8> {
    let mut v = b"OXMPITCP".to_vec();
    v.extend_from_slice(&2u16.to_le_bytes());
    v.extend_from_slice(&(secret.len() as u16).to_le_bytes());
    v.extend_from_slice(&rank.to_le_bytes());
    v.extend_from_slice(&size.to_le_bytes());
    // The sender's job: some other job's (it does not know this one's secret).
    v.extend_from_slice(&0x1234_5678u64.to_le_bytes());
    v.extend_from_slice(secret);
    v
}

/// A job over TCP, poked from outside while it runs: a connection that sends HTTP
/// garbage, one with a well-formed hello and a wrong secret, one that claims to be a
/// rank with no secret at all, and one that closes at once. Each is refused and counted;
/// the job finishes with correct results.
#[test]
fn intruders_are_refused() {
    let _x = exclusive();
    let exe = compile("keep_busy");
    let m = mpi();
    if !m.is_oxmpi {
        return;
    }
    let mut child = Command::new(&m.mpirun)
        .env("OXMPI_TRANSPORT", "tcp")
        .env("OXMPI_VERBOSE", "1")
        .args(["--timeout", "60", "-n", "3"])
        .arg(&exe)
        .arg("4")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mpirun");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    // Rank 1's listening address, from its transport report.
    let start = Instant::now();
    let mut lines = Vec::new();
    let addr = loop {
        let line = rx.recv_timeout(Duration::from_secs(30)).expect("no transport report from rank 1 within 30 s");
        lines.push(line.clone());
        if line.starts_with("OxMPI rank 1/3") {
            let a = line.split("listening on ").nth(1).and_then(|s| s.split(' ').next()).expect("listening address").to_string();
            break a;
        }
    };
    let poke = |bytes: &[u8]| {
        let mut s = std::net::TcpStream::connect(&addr).unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
        s.write_all(bytes).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        // The rank closes the connection: read returns 0 (or a reset), never an answer.
        let mut buf = [0u8; 64];
        let n = std::io::Read::read(&mut s, &mut buf).unwrap_or(0);
        assert_eq!(n, 0, "rank 1 answered an intruder with {:?}", &buf[..n]);
    };
    poke(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    poke(&hello(0, 3, b"not-the-secret-of-this-job-00000"));
    poke(&hello(2, 3, b""));
    drop(std::net::TcpStream::connect(&addr).unwrap());
    let out = child.wait_with_output().expect("mpirun");
    lines.extend(rx.try_iter());
    std::thread::sleep(Duration::from_millis(200));
    lines.extend(rx.try_iter());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report = format!("elapsed {:.1} s\n--- stdout\n{stdout}\n--- stderr\n{}", start.elapsed().as_secs_f64(), lines.join("\n"));
    assert!(out.status.success(), "the job failed after the intruders\n{report}");
    assert!(stdout.contains("keep_busy: OK"), "{report}");
    for why in ["bad magic", "wrong job secret", "closed before its handshake"] {
        assert!(lines.iter().any(|l| l.starts_with("OxMPI rank 1: refused a TCP connection") && l.contains(why)), "no refusal for {why:?}\n{report}");
    }
    assert!(lines.iter().any(|l| l == "OxMPI rank 1: refused 4 TCP connection(s) at the handshake"), "{report}");
}

/// Every wait asleep in `epoll_wait` at once with no bound on the sleep: a wake-up the
/// TCP transport misses (a readiness edge consumed by another pass, a connection set up
/// while asleep, a generalized request completed by another thread) hangs the job.
#[test]
fn waits_sleep_in_epoll() {
    let env = [TCP, ("OXMPI_SPIN_COUNT", "0"), ("OXMPI_YIELD_COUNT", "0"), ("OXMPI_SLEEP_MAX_US", "600000000")];
    run_all(&[("sleep_wake", &[]), ("grequest", &[])], &[2, 3, 4, 8], &env);
    run_all(&[("threads_hammer", &["2"])], &[2], &env);
}
