//! `oxmpi-pmi-probe`: a tiny PMI client built on `mpi_core::bootstrap`, used by the
//! launcher tests as the ranks of a job, and handy to check any launcher's PMI
//! (`mpiexec.mpich -n 2 oxmpi-pmi-probe exchange`).
//!
//! Modes (R = the rank that misbehaves):
//! * `info` — print what PMI says about the job;
//! * `exchange` — every rank puts a card (plus a multi-chunk value), fences, reads all cards;
//! * `crash R SIGNAL` — after a fence rank R raises SIGNAL, the others hang;
//! * `abort R CODE` — rank R calls PMI abort, the others hang;
//! * `exit R CODE` — rank R exits with CODE without finalize, the others hang;
//! * `hang` — init, then sleep forever;
//! * `stdin` — rank 0 prints what it reads from stdin.
//!
//! Every rank creates `/dev/shm/oxmpi-<job_id>-probe-<rank>` in the failure modes, to check
//! that the launcher removes the job's shared-memory files.

use mpi_core::bootstrap::Bootstrap;
use std::io::Read;
use std::time::Duration;

fn die(msg: &str) -> ! {
    eprintln!("oxmpi-pmi-probe: {msg}");
    std::process::exit(1);
}

fn hang() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// A deterministic multi-chunk value for rank `r` (crosses the ~900-byte chunk size).
fn big_value(r: usize) -> Vec<u8> {
    (0..2500 + r).map(|i| (i * 31 + r * 7) as u8).collect()
}

fn arg(args: &[String], i: usize) -> i32 {
    args.get(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| die("expected a number argument"))
}

fn create_shm_marker(b: &Bootstrap) {
    let path = format!("/dev/shm/oxmpi-{}-probe-{}", b.job_id(), b.rank());
    if let Err(e) = std::fs::write(&path, b"x") {
        die(&format!("cannot create {path}: {e}"));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map(String::as_str).unwrap_or("info");
    let mut b = Bootstrap::init().unwrap_or_else(|e| die(&e.to_string()));
    let (rank, size) = (b.rank(), b.size());
    let check = |r: Result<(), mpi_core::bootstrap::BootstrapError>| {
        if let Err(e) = r {
            die(&e.to_string());
        }
    };
    match mode {
        "info" => {
            println!(
                "rank={rank} size={size} job_id={} appnum={} universe={:?} nodes={:?}",
                b.job_id(),
                b.appnum(),
                b.universe_size(),
                b.node_of_ranks()
            );
        }
        "exchange" => {
            check(b.put(
                &format!("card-{rank}"),
                format!("hello from {rank}").as_bytes(),
            ));
            check(b.put(&format!("big-{rank}"), &big_value(rank)));
            check(b.fence());
            for peer in 0..size {
                let card = b
                    .get(&format!("card-{peer}"))
                    .unwrap_or_else(|e| die(&e.to_string()));
                if card != format!("hello from {peer}").as_bytes() {
                    die(&format!("rank {rank}: wrong card from {peer}"));
                }
                let big = b
                    .get(&format!("big-{peer}"))
                    .unwrap_or_else(|e| die(&e.to_string()));
                if big != big_value(peer) {
                    die(&format!("rank {rank}: wrong big value from {peer}"));
                }
            }
            if b.get("no-such-key").is_ok() {
                die("a missing key was found");
            }
            check(b.fence());
            println!("rank {rank} of {size}: exchange ok (job {})", b.job_id());
        }
        "crash" | "abort" | "exit" => {
            let (victim, n) = (arg(&args, 1) as usize, arg(&args, 2));
            create_shm_marker(&b);
            check(b.fence());
            if rank != victim {
                hang();
            }
            match mode {
                "crash" => {
                    // SAFETY: restoring the default action (Rust's runtime handles SIGSEGV
                    // for stack overflows) and raising a signal in our own process.
                    unsafe {
                        libc::signal(n, libc::SIG_DFL);
                        libc::raise(n);
                    }
                    hang();
                }
                "abort" => {
                    b.abort(n, "probe abort");
                    std::process::exit(n);
                }
                _ => std::process::exit(n),
            }
        }
        "hang" => hang(),
        "stdin" => {
            if rank == 0 {
                let mut s = String::new();
                if let Err(e) = std::io::stdin().read_to_string(&mut s) {
                    die(&format!("reading stdin: {e}"));
                }
                println!("rank 0 read stdin: {}", s.trim_end());
            }
        }
        other => die(&format!("unknown mode `{other}`")),
    }
    check(b.finalize());
}
