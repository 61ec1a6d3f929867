//! Smoke test of the benchmark suite (benches/*.c, see docs/benchmarks.md):
//! every benchmark is compiled with the mpicc under test and run briefly
//! (`--quick`) with its mpirun, 2 ranks for point-to-point benchmarks and 4
//! for collectives. Asserts exit status 0 and the OSU-style output format;
//! no timing assertions (the numbers come from `benches/compare`).
//!
//! The MPI under test is chosen as for the C tests (tests/common/mod.rs), so
//! `OXMPI_TEST_MPICC=mpicc.mpich OXMPI_TEST_MPIRUN=mpiexec.mpich` validates
//! the suite itself against MPICH.
mod common;
use common::*;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// Runs one at a time: 4 ranks on 2 cores already oversubscribe the machine.
static SERIAL: Mutex<()> = Mutex::new(());

/// Sizes printed in --quick mode (osu_util.h: osu_quick_sizes).
const QUICK_SIZES: &[u64] = &[1, 8, 64, 1024, 8192, 65536, 1048576];
const QUICK_DEPTHS: &[u64] = &[1, 10, 100, 1000];

/// What a benchmark prints: the column header's start, the number of
/// numeric fields per data line, and the first column of every line
/// (None: the benchmark has no size column).
struct Format {
    columns: &'static str,
    fields: usize,
    sizes: Option<Vec<u64>>,
}

fn format_of(bench: &str) -> Format {
    let all = QUICK_SIZES.to_vec();
    let from4: Vec<u64> = QUICK_SIZES.iter().copied().filter(|&s| s >= 4).collect();
    let from8 = |v: &[u64]| -> Vec<u64> { v.iter().copied().filter(|&s| s >= 8).collect() };
    match bench {
        "latency" => Format { columns: "# Size", fields: 2, sizes: Some(all) },
        "bw" | "bibw" => Format { columns: "# Size", fields: 2, sizes: Some(all) },
        "mbw_mr" => Format { columns: "# Size", fields: 3, sizes: Some(all) },
        "put_latency" | "get_latency" | "put_bw" | "get_bw" => {
            Format { columns: "# Size", fields: 2, sizes: Some(all) }
        }
        "acc_latency" => Format { columns: "# Size", fields: 2, sizes: Some(from8(&all)) },
        "fop_latency" | "cas_latency" => Format { columns: "# Size", fields: 2, sizes: Some(vec![8]) },
        "matching" => Format { columns: "# Depth", fields: 3, sizes: Some(QUICK_DEPTHS.to_vec()) },
        "barrier" => Format { columns: "# Avg Latency", fields: 4, sizes: None },
        "reduce" | "allreduce" => Format { columns: "# Size", fields: 5, sizes: Some(from4) },
        _ => Format { columns: "# Size", fields: 5, sizes: Some(all) },
    }
}

/// Compile benches/<name>.c with the mpicc under test (with -Werror for
/// OxMPI's own header), into a directory of this test target.
fn compile_bench(name: &str) -> PathBuf {
    let m = mpi();
    let benches = workspace_root().join("benches");
    let source = benches.join(format!("{name}.c"));
    assert!(source.is_file(), "missing benchmark source {}", source.display());
    let tag: String = fs::canonicalize(&m.mpicc)
        .unwrap_or_else(|_| m.mpicc.clone())
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("oxmpi-benches").join(tag);
    fs::create_dir_all(&dir).expect("create benchmark build dir");
    let exe = dir.join(name);
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut cmd = Command::new(&m.mpicc);
    cmd.args(["-O2", "-std=c99", "-Wall"]);
    if m.is_oxmpi {
        cmd.args(["-Wextra", "-Werror"]);
    }
    let out = cmd
        .arg("-o")
        .arg(&tmp)
        .arg(&source)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", m.mpicc.display()));
    assert!(
        out.status.success(),
        "compiling {} with {} failed ({}):\n{}{}",
        source.display(),
        m.mpicc.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    fs::rename(&tmp, &exe).expect("rename compiled benchmark");
    exe
}

fn smoke(name: &str, np: usize) {
    let exe = compile_bench(name);
    smoke_run(&exe, name, np, &[], None);
}

/// Run a compiled benchmark with `--quick` and `extra` arguments; check its exit status and
/// output (`sizes`: the sizes expected instead of the --quick ones of `format_of`).
fn smoke_run(exe: &Path, name: &str, np: usize, extra: &[&str], sizes: Option<Vec<u64>>) {
    let mut args = vec!["--quick".to_string()];
    args.extend(extra.iter().map(|a| a.to_string()));
    let r = {
        let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        run(
            exe,
            RunOpts {
                np,
                args,
                launcher_timeout: Some(60),
                hard_timeout: Duration::from_secs(90),
                ..Default::default()
            },
        )
    };
    let unsupported = format!("{}\n{}", r.stdout, r.stderr)
        .lines()
        .find(|l| l.contains("is not supported by OxMPI yet"))
        .map(str::to_owned);
    if let Some(line) = unsupported {
        panic!(
            "benchmark {name} {extra:?} -n {np}: OxMPI does not support a call it needs yet: {line}\n{}",
            r.report()
        );
    }
    assert!(r.success(), "benchmark {name} {extra:?} -n {np} failed\n{}", r.report());
    assert!(r.leftovers.is_empty(), "benchmark {name}: processes left behind\n{}", r.report());
    check_output(name, np, &r.stdout, sizes).unwrap_or_else(|e| {
        panic!("benchmark {name} {extra:?} -n {np}: bad output: {e}\n{}", r.report())
    });
    eprintln!("{name} {extra:?} -n {np}: ok in {:.2} s", r.elapsed.as_secs_f64());
}

fn check_output(name: &str, np: usize, stdout: &str, sizes: Option<Vec<u64>>) -> Result<(), String> {
    let mut f = format_of(name);
    if sizes.is_some() {
        f.sizes = sizes;
    }
    let lines: Vec<&str> = stdout.lines().collect();
    let header: Vec<&str> = lines.iter().copied().filter(|l| l.starts_with('#')).collect();
    let data: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    if !header.first().is_some_and(|l| l.starts_with("# OSU-style MPI ")) {
        return Err("first line is not \"# OSU-style MPI ... Test\"".into());
    }
    if !header.iter().any(|l| l.starts_with("# MPI library: ")) {
        return Err("no \"# MPI library:\" line".into());
    }
    if !header.iter().any(|l| *l == format!("# Ranks: {np}")) {
        return Err(format!("no \"# Ranks: {np}\" line"));
    }
    let col = header
        .iter()
        .position(|l| l.starts_with(f.columns))
        .ok_or_else(|| format!("no column header starting with {:?}", f.columns))?;
    // Data comes after the column header, and every line is only numbers.
    let first_data = lines.iter().position(|l| !l.starts_with('#') && !l.trim().is_empty());
    let col_line = lines.iter().position(|l| *l == header[col]).unwrap();
    if first_data.is_some_and(|d| d < col_line) {
        return Err("data before the column header".into());
    }
    let mut firsts = Vec::new();
    for line in &data {
        let nums: Vec<f64> = line
            .split_whitespace()
            .map(|t| t.parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("non-numeric data line {line:?}"))?;
        if nums.len() != f.fields {
            return Err(format!("{} fields in {line:?}, expected {}", nums.len(), f.fields));
        }
        if nums.iter().any(|v| !v.is_finite() || *v < 0.0) {
            return Err(format!("negative or non-finite value in {line:?}"));
        }
        firsts.push(nums[0]);
        // Collectives: size avg min max iterations (barrier: avg min max iterations).
        if f.fields >= 4 {
            let v = if f.sizes.is_some() { &nums[1..] } else { &nums[..] };
            if !(v[1] <= v[0] + 0.011 && v[0] <= v[2] + 0.011) {
                return Err(format!("not min <= avg <= max in {line:?}"));
            }
            if v[3] < 1.0 || v[3].fract() != 0.0 {
                return Err(format!("bad iteration count in {line:?}"));
            }
        }
    }
    match &f.sizes {
        Some(sizes) => {
            let got: Vec<u64> = firsts.iter().map(|v| *v as u64).collect();
            if firsts.iter().any(|v| v.fract() != 0.0) || &got != sizes {
                return Err(format!("sizes {got:?}, expected {sizes:?}"));
            }
        }
        None => {
            if data.len() != 1 {
                return Err(format!("{} data lines, expected 1", data.len()));
            }
        }
    }
    Ok(())
}

#[test]
fn latency() {
    smoke("latency", 2);
}

#[test]
fn bw() {
    smoke("bw", 2);
}

#[test]
fn bibw() {
    smoke("bibw", 2);
}

#[test]
fn mbw_mr() {
    smoke("mbw_mr", 2);
}

#[test]
fn matching() {
    smoke("matching", 2);
}

#[test]
fn barrier() {
    smoke("barrier", 4);
}

#[test]
fn bcast() {
    smoke("bcast", 4);
}

#[test]
fn reduce() {
    smoke("reduce", 4);
}

#[test]
fn allreduce() {
    smoke("allreduce", 4);
}

#[test]
fn allgather() {
    smoke("allgather", 4);
}

#[test]
fn alltoall() {
    smoke("alltoall", 4);
}

#[test]
fn gather() {
    smoke("gather", 4);
}

#[test]
fn scatter() {
    smoke("scatter", 4);
}

/// A one-sided benchmark with the two synchronisations `benches/compare` tables:
/// MPI_Win_flush (the default) and MPI_Win_fence, both on MPI_Win_allocate.
fn smoke_rma(name: &str) {
    let exe = compile_bench(name);
    smoke_run(&exe, name, 2, &[], None);
    smoke_run(&exe, name, 2, &["-s", "fence"], None);
}

#[test]
fn put_latency() {
    smoke_rma("put_latency");
}

#[test]
fn get_latency() {
    smoke_rma("get_latency");
}

#[test]
fn acc_latency() {
    smoke_rma("acc_latency");
}

#[test]
fn fop_latency() {
    smoke_rma("fop_latency");
}

#[test]
fn cas_latency() {
    smoke_rma("cas_latency");
}

#[test]
fn put_bw() {
    smoke_rma("put_bw");
}

#[test]
fn get_bw() {
    smoke_rma("get_bw");
}

/// Every synchronisation (-s) with every window flavor (-w) of the shared one-sided driver
/// (benches/rma_util.h): a latency, a bandwidth and a single-size benchmark, sizes up to 64 B.
#[test]
fn rma_sync_and_window_variants() {
    for name in ["put_latency", "get_bw", "fop_latency"] {
        let exe = compile_bench(name);
        let sizes = if name == "fop_latency" { vec![8] } else { vec![1, 8, 64] };
        for sync in ["flush", "flush_local", "lock", "lock_all", "fence", "pscw"] {
            for win in ["allocate", "create", "dynamic"] {
                smoke_run(&exe, name, 2, &["-s", sync, "-w", win, "-m", "64"], Some(sizes.clone()));
            }
        }
    }
}

/// The loopback floor of `compare --transport tcp` (no MPI): builds with cc and prints a
/// latency per size and a bandwidth, all positive.
#[test]
fn tcp_floor_runs() {
    let dir = std::env::temp_dir().join(format!("oxmpi-tcp-floor-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("tcp_floor");
    let st = std::process::Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(workspace_root().join("benches/tcp_floor.c"))
        .status()
        .expect("run cc");
    assert!(st.success(), "building benches/tcp_floor.c failed");
    let out = std::process::Command::new(&exe).output().expect("run tcp_floor");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "tcp_floor failed: {text}{}", String::from_utf8_lossy(&out.stderr));
    for want in ["latency 8 ", "latency 65536 ", "latency 1048576 ", "bw 1048576 "] {
        let line = text.lines().find(|l| l.starts_with(want)).unwrap_or_else(|| panic!("no {want:?} line in\n{text}"));
        let v: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(v > 0.0, "{line}");
    }
    let _ = fs::remove_dir_all(&dir);
}

/// Every benchmark source in benches/ has a test above (keeps the list honest).
/// hello (the start-up benchmark's program): one line from rank 0 naming the job size.
#[test]
fn hello_runs() {
    let exe = compile_bench("hello");
    for np in [1, 4] {
        let r = {
            let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
            run(&exe, RunOpts { np, launcher_timeout: Some(60), ..Default::default() })
        };
        assert!(r.success(), "hello -n {np}\n{}", r.report());
        assert_eq!(r.stdout.trim(), format!("hello from {np} ranks"), "{}", r.report());
    }
}

#[test]
fn every_benchmark_is_smoke_tested() {
    const TESTED: &[&str] = &[
        "latency", "bw", "bibw", "mbw_mr", "matching", "barrier", "bcast", "reduce", "allreduce",
        "allgather", "alltoall", "gather", "scatter", "tcp_floor", "hello", "put_latency",
        "get_latency", "acc_latency", "fop_latency", "cas_latency", "put_bw", "get_bw",
    ];
    let mut found: Vec<String> = fs::read_dir(workspace_root().join("benches"))
        .expect("read benches/")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".c").map(str::to_owned))
        .collect();
    found.sort();
    let missing: Vec<&String> = found.iter().filter(|n| !TESTED.contains(&n.as_str())).collect();
    assert!(missing.is_empty(), "benchmarks without a smoke test: {missing:?}");
}
