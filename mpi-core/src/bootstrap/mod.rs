//! Bootstrap: how ranks find each other (PMI wire clients, singleton).
//!
//! [`Bootstrap::init`] picks the mechanism from the environment, in the precedence the
//! research notes require (inherited Slurm variables can lie; PMI variables cannot):
//! 1. `PMI_FD` → PMI over that fd (our `mpirun`, MPICH's hydra, `srun --mpi=pmi2`);
//! 2. `PMI_PORT` (+`PMI_ID`) → PMI over TCP (hydra `-pmi-port`);
//! 3. launcher variables saying the job is parallel but no PMI server → a one-line error
//!    naming the fix (never N silent singletons): `srun --mpi=none` or a missing `--mpi`
//!    (`SLURM_STEP_NUM_TASKS` > 1), `srun --mpi=pmix` (`SLURM_MPI_TYPE=pmix…`), Open MPI's
//!    mpirun (`OMPI_COMM_WORLD_SIZE` > 1), any other PMIx launcher (`PMIX_RANK` without a
//!    size of 1), `PMI_SIZE` > 1 without a server. A batch script's own step (`sbatch`:
//!    `SLURM_NTASKS` set but no `SLURM_STEP_*`) and an `salloc` shell are singletons, as
//!    with every MPI: only `srun` steps are parallel;
//! 4. nothing → singleton: rank 0 of 1 with an in-memory key-value store.
//!
//! Every server we meet (Slurm's `mpi/pmi2` plugin, hydra, our `mpirun`) speaks PMI-1 and
//! PMI-2 on the same fd; the first `init` line picks one for the connection. The choice
//! ([`pmi_version`]): `OXMPI_PMI=1|2`, else `PMI_VERSION=1|2` from the launcher, else
//! **PMI-2 when the server is Slurm's** (`PMI_FD`, `PMI_JOBID` and `SLURM_JOB_ID` set, no
//! hydra marker) and PMI-1 otherwise. Why (`docs/bootstrap.md` has the measurements):
//! speed does not decide it (MPI_Init under Slurm measured the same with both: it is the
//! start-up fences). Under Slurm, PMI-2 is the plugin's native protocol, and its frames
//! carry their length, whereas its PMI-1 side reads each request with one `read()` of at
//! most 1024 bytes and silently loses longer or pipelined requests after answering `rc=0`
//! (we never send such, but a mistake would be an error with PMI-2, not corruption); the
//! job id and abort behaviour are the same. Elsewhere PMI-1 keeps `MPI_Abort`'s exit code:
//! PMI-2 `abort` has no code field (our mpirun reports 1) and hydra does not implement it.
//!
//! Values put into the KVS are arbitrary bytes: they are hex-encoded (so they never contain
//! the `;`, space or newline the wire formats cannot carry) and split into chunks that keep
//! every PMI-1 line below the 1024-byte limit Slurm enforces and every value below hydra's
//! 1023-byte truncation.

pub mod conn;
pub mod pmi1;
pub mod pmi2;
pub mod pmi_wire;

mod mapping;

use pmi1::Pmi1Client;
use pmi2::Pmi2Client;
use pmi_wire::Message;
use std::collections::HashMap;
use std::fmt;

pub use mapping::parse_process_mapping;

/// A bootstrap failure; `Display` is one line that includes how to fix it.
#[derive(Debug)]
pub struct BootstrapError(pub String);

impl fmt::Display for BootstrapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BootstrapError {}

fn err(msg: impl Into<String>) -> BootstrapError {
    BootstrapError(format!("OxMPI: {}", msg.into()))
}

/// Longest key accepted by [`Bootstrap::put`]: leaves room for the `#NNNN` chunk suffix
/// within PMI's 64-byte `keylen_max`.
pub const MAX_USER_KEY_LEN: usize = 56;
/// Hex characters per chunk: keeps `cmd=put kvsname=… key=… value=…\n` well below 1024
/// bytes and below hydra's 1023-byte value truncation.
const CHUNK_HEX_MAX: usize = 900;
/// PMI-1 line limit (Slurm).
const LINE_MAX: usize = pmi_wire::PMI1_MAX_LINE;

/// Where key-value traffic goes.
enum Backend {
    /// A real PMI-1 server.
    Pmi1(Pmi1Client),
    /// A real PMI-2 server.
    Pmi2(Pmi2Client),
    /// No launcher: a private store (puts are visible after `fence`, as with a server).
    Singleton {
        pending: HashMap<String, String>,
        committed: HashMap<String, String>,
    },
    /// After `finalize`: the connection is closed.
    Closed,
}

/// The job as PMI describes it, plus the connection used for key exchange.
pub struct Bootstrap {
    backend: Backend,
    rank: usize,
    size: usize,
    appnum: i32,
    universe_size: Option<usize>,
    /// The PMI-1 kvsname or PMI-2 job id (the same string under Slurm: `<job>.<step>`).
    kvsname: String,
    node_of_ranks: Vec<usize>,
    /// Chunk size in hex characters, derived from the server's limits.
    chunk_hex: usize,
}

impl fmt::Debug for Bootstrap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bootstrap")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("kvsname", &self.kvsname)
            .finish()
    }
}

/// Looks up an environment variable (the process environment, or a table in tests).
type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Reads an environment variable as an integer; `None` if unset, error if garbage.
fn env_int(env: Env, name: &str) -> Result<Option<i64>, BootstrapError> {
    match env(name) {
        None => Ok(None),
        Some(v) => v.trim().parse::<i64>().map(Some).map_err(|_| {
            err(format!(
                "{name}={v} is not a number; the launcher environment is corrupt"
            ))
        }),
    }
}

/// The PMI wire protocol spoken to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PmiVersion {
    V1,
    V2,
}

impl fmt::Display for PmiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PmiVersion::V1 => "PMI-1",
            PmiVersion::V2 => "PMI-2",
        })
    }
}

/// `1`, `2` (or `1.1`, `2.0`): the protocol a variable asks for.
fn parse_version(name: &str, value: &str) -> Result<PmiVersion, BootstrapError> {
    match value.trim().split('.').next().unwrap_or("") {
        "1" => Ok(PmiVersion::V1),
        "2" => Ok(PmiVersion::V2),
        _ => Err(err(format!(
            "{name}={value}: OxMPI speaks PMI versions 1 and 2; set OXMPI_PMI=1 or OXMPI_PMI=2"
        ))),
    }
}

/// True when the PMI server on `PMI_FD` is Slurm's (`srun --mpi=pmi2`): Slurm alone sets
/// `PMI_JOBID` next to `PMI_FD`. Hydra started inside an allocation passes Slurm's
/// variables on (even `PMI_JOBID`, from its proxy step) but marks its ranks with
/// `MPI_LOCALNRANKS`/`HYDI_CONTROL_FD`; our `mpirun` removes every inherited `PMI_*`.
fn slurm_pmi_server(env: Env) -> bool {
    env("PMI_FD").is_some()
        && env("PMI_JOBID").is_some()
        && env("SLURM_JOB_ID").is_some()
        && env("MPI_LOCALNRANKS").is_none()
        && env("HYDI_CONTROL_FD").is_none()
}

/// Which protocol to speak: `OXMPI_PMI`, else the launcher's `PMI_VERSION`, else PMI-2 for
/// Slurm's server and PMI-1 for everything else (see the module docs for why).
pub fn pmi_version(env: Env) -> Result<PmiVersion, BootstrapError> {
    for name in ["OXMPI_PMI", "PMI_VERSION"] {
        if let Some(v) = env(name).filter(|v| !v.trim().is_empty()) {
            return parse_version(name, &v);
        }
    }
    Ok(if slurm_pmi_server(env) {
        PmiVersion::V2
    } else {
        PmiVersion::V1
    })
}

/// The launcher environment says "parallel job" but offers no PMI server: explain the fix.
fn parallel_without_server(env: Env) -> Result<Option<BootstrapError>, BootstrapError> {
    if let Some(n) = env_int(env, "PMI_SIZE")?.filter(|&n| n > 1) {
        return Ok(Some(err(format!(
            "PMI_SIZE={n} says this is a parallel job, but neither PMI_FD nor PMI_PORT is set, \
             so no PMI server is reachable; start the program with OxMPI's mpirun"
        ))));
    }
    let step_tasks = env_int(env, "SLURM_STEP_NUM_TASKS")?;
    if let Some(t) = env("SLURM_MPI_TYPE").filter(|t| t.starts_with("pmix")) {
        if step_tasks.is_none_or(|n| n > 1) {
            return Ok(Some(err(format!(
                "this process was started by `srun --mpi={t}`, but OxMPI does not speak PMIx; \
                 run `srun --mpi=pmi2 ...`"
            ))));
        }
    }
    if let Some(n) = step_tasks.filter(|&n| n > 1) {
        return Ok(Some(err(format!(
            "this process was started by srun ({n} tasks) without a PMI server \
             (`--mpi=none`, or no `--mpi` where the site default is none); \
             run `srun --mpi=pmi2 ...` or use OxMPI's mpirun"
        ))));
    }
    let ompi_size = env_int(env, "OMPI_COMM_WORLD_SIZE")?;
    if let Some(n) = ompi_size.filter(|&n| n > 1) {
        return Ok(Some(err(format!(
            "this process was started by Open MPI's mpirun ({n} ranks), which speaks only PMIx; \
             use OxMPI's mpirun (or `srun --mpi=pmi2 ...`)"
        ))));
    }
    // A PMIx launcher with a job of one (srun -n 1, mpirun -n 1) is a singleton anyway.
    let one = step_tasks == Some(1) || ompi_size == Some(1);
    if env("PMIX_RANK").is_some() && !one {
        return Ok(Some(err(
            "this process was started by a PMIx launcher (PMIX_RANK is set), which OxMPI does \
             not support; use OxMPI's mpirun or `srun --mpi=pmi2 ...`",
        )));
    }
    Ok(None)
}

/// Upper-case hex, as MPICH encodes KVS values.
fn hex_encode(data: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let mut s = String::with_capacity(data.len() * 2);
    for &b in data {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

fn hex_decode(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    s.as_bytes()
        .chunks(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

fn chunk_key(key: &str, index: usize) -> String {
    if index == 0 {
        key.to_string()
    } else {
        format!("{key}#{index}")
    }
}

fn check_user_key(key: &str) -> Result<(), BootstrapError> {
    let ok = !key.is_empty()
        && key.len() <= MAX_USER_KEY_LEN
        && key
            .bytes()
            .all(|b| b.is_ascii_graphic() && !matches!(b, b'=' | b';' | b'#'));
    if ok {
        Ok(())
    } else {
        Err(err(format!(
            "invalid KVS key `{key}`: use 1..={MAX_USER_KEY_LEN} printable ASCII characters \
             without `=`, `;`, `#` or spaces"
        )))
    }
}

impl Bootstrap {
    /// Connect to the launcher's PMI server (or become a singleton); see the module docs.
    pub fn init() -> Result<Bootstrap, BootstrapError> {
        Self::init_from(&process_env)
    }

    /// [`init`](Self::init) with the environment `env`.
    fn init_from(env: Env) -> Result<Bootstrap, BootstrapError> {
        if let Some(fd) = env("PMI_FD") {
            let fd: i32 = fd.trim().parse().map_err(|_| {
                err(format!(
                    "PMI_FD={fd} is not a file descriptor; the launcher environment is corrupt"
                ))
            })?;
            // SAFETY: F_GETFD only queries the fd table.
            if fd < 0 || unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
                return Err(err(format!(
                    "PMI_FD={fd} is not an open file descriptor (was the variable inherited from \
                     another job?); start the program with OxMPI's mpirun or `srun --mpi=pmi2`"
                )));
            }
            let version = pmi_version(env)?;
            let rank = env_int(env, "PMI_RANK")?;
            let size = env_int(env, "PMI_SIZE")?;
            return match (version, rank, size) {
                (PmiVersion::V1, Some(rank), Some(size)) => {
                    // SAFETY: PMI_FD was handed to this process for exclusive use by the PMI client.
                    Self::init_pmi1(unsafe { Pmi1Client::from_fd(fd) }, rank, size)
                }
                // PMI-2 learns the size from the server; the rank names us in `fullinit`.
                (PmiVersion::V2, Some(rank), size) => {
                    // SAFETY: as above.
                    Self::init_pmi2(unsafe { Pmi2Client::from_fd(fd) }, env, rank, size)
                }
                _ => Err(err(
                    "PMI_FD is set but PMI_RANK/PMI_SIZE are missing; the launcher is not \
                     PMI compatible — use OxMPI's mpirun or `srun --mpi=pmi2`",
                )),
            };
        }
        if let Some(port) = env("PMI_PORT") {
            let id = env_int(env, "PMI_ID")?;
            let reached = |e: String| err(format!("{e}; is the launcher (mpiexec) still running?"));
            if pmi_version(env)? == PmiVersion::V2 {
                // No `initack` in PMI-2: the id is our rank, sent in `fullinit`.
                let Some(rank) = id.or(env_int(env, "PMI_RANK")?) else {
                    return Err(err(
                        "PMI_PORT is set without PMI_ID or PMI_RANK; the launcher \
                         environment is incomplete — use OxMPI's mpirun",
                    ));
                };
                let client = Pmi2Client::connect_tcp(&port).map_err(reached)?;
                return Self::init_pmi2(client, env, rank, env_int(env, "PMI_SIZE")?);
            }
            let (client, hs) = Pmi1Client::connect_tcp(&port, id).map_err(reached)?;
            let (rank, size) = match hs {
                Some(h) => (h.rank as i64, h.size as i64),
                None => match (env_int(env, "PMI_RANK")?, env_int(env, "PMI_SIZE")?) {
                    (Some(r), Some(s)) => (r, s),
                    _ => {
                        return Err(err("PMI_PORT is set without PMI_ID or PMI_RANK/PMI_SIZE; \
                             the launcher environment is incomplete — use OxMPI's mpirun"))
                    }
                },
            };
            return Self::init_pmi1(client, rank, size);
        }
        if let Some(e) = parallel_without_server(env)? {
            return Err(e);
        }
        Ok(Self::singleton())
    }

    /// Rank 0 of 1 with a private key-value store.
    fn singleton() -> Bootstrap {
        let mut rnd = [0u8; 4];
        fill_random(&mut rnd);
        Bootstrap {
            backend: Backend::Singleton {
                pending: HashMap::new(),
                committed: HashMap::new(),
            },
            rank: 0,
            size: 1,
            appnum: 0,
            universe_size: Some(1),
            kvsname: format!(
                "singleton_{}_{}",
                std::process::id(),
                hex_encode(&rnd).to_lowercase()
            ),
            node_of_ranks: vec![0],
            chunk_hex: CHUNK_HEX_MAX,
        }
    }

    /// The PMI-1 start-up sequence MPICH uses: init, maxes, appnum, universe size, kvsname,
    /// process mapping.
    fn init_pmi1(mut c: Pmi1Client, rank: i64, size: i64) -> Result<Bootstrap, BootstrapError> {
        if size < 1 || rank < 0 || rank >= size {
            return Err(err(format!(
                "the launcher says rank {rank} of {size}, which is impossible; check PMI_RANK/PMI_SIZE"
            )));
        }
        let pmi = |e: String| err(format!("PMI-1 start-up failed: {e}"));
        let reply = c
            .request(
                &Message::new("init")
                    .with("pmi_version", 1)
                    .with("pmi_subversion", 1),
                "response_to_init",
            )
            .map_err(pmi)?;
        if !reply.is_ok() {
            return Err(err(format!(
                "the PMI server refused PMI-1 (`{reply}`); use OxMPI's mpirun or `srun --mpi=pmi2`"
            )));
        }
        let maxes = c
            .request(&Message::new("get_maxes"), "maxes")
            .map_err(pmi)?;
        let keylen_max = maxes.get_int("keylen_max").unwrap_or(64);
        let vallen_max = maxes.get_int("vallen_max").unwrap_or(1024);
        if keylen_max < (MAX_USER_KEY_LEN + 8) as i64 || vallen_max < 256 {
            return Err(err(format!(
                "the PMI server's limits are too small (keylen_max={keylen_max}, vallen_max={vallen_max})"
            )));
        }
        let appnum = c
            .request(&Message::new("get_appnum"), "appnum")
            .map_err(pmi)?;
        let appnum = appnum.get_int("appnum").unwrap_or(0) as i32;
        let uni = c
            .request(&Message::new("get_universe_size"), "universe_size")
            .map_err(pmi)?;
        let universe_size = match uni.get_int("size") {
            Ok(n) if n > 0 && uni.is_ok() => Some(n as usize),
            _ => None,
        };
        let kvs = c
            .request(&Message::new("get_my_kvsname"), "my_kvsname")
            .map_err(pmi)?;
        let kvsname = match kvs.get("kvsname") {
            Some(k) if kvs.is_ok() && !k.is_empty() => k.to_string(),
            _ => return Err(err(format!("the PMI server gave no kvsname (`{kvs}`)"))),
        };
        let map = c
            .request(
                &Message::new("get")
                    .with("kvsname", &kvsname)
                    .with("key", "PMI_process_mapping"),
                "get_result",
            )
            .map_err(pmi)?;
        let node_of_ranks = match map.get("value") {
            Some(v) if map.is_ok() => parse_process_mapping(v, size as usize)
                .map_err(|e| err(format!("cannot parse PMI_process_mapping `{v}`: {e}")))?,
            // No mapping: assume every rank is on its own node (safe: no shared memory).
            _ => (0..size as usize).collect(),
        };
        // Chunk size: stay below the value limit and the 1024-byte line limit.
        // (+8: the `<count>:` prefix of chunk 0.)
        let overhead = "cmd=put kvsname= key= value=\n".len()
            + kvsname.len()
            + keylen_max.min(64) as usize
            + 8;
        let by_line = LINE_MAX.saturating_sub(overhead);
        let by_val = (vallen_max as usize).saturating_sub(1 + 8);
        let chunk_hex = CHUNK_HEX_MAX.min(by_line).min(by_val) & !1;
        if chunk_hex < 64 {
            return Err(err(format!(
                "the kvsname `{kvsname}` is too long to leave room for values"
            )));
        }
        Ok(Bootstrap {
            backend: Backend::Pmi1(c),
            rank: rank as usize,
            size: size as usize,
            appnum,
            universe_size,
            kvsname,
            node_of_ranks,
            chunk_hex,
        })
    }

    /// The PMI-2 start-up: `init` and `fullinit` (rank, size, appnum), the job id, and the
    /// job attributes `PMI_process_mapping` and `universeSize`. `rank`/`size` are what the
    /// launcher's variables said; the server must agree.
    fn init_pmi2(
        mut c: Pmi2Client,
        env: Env,
        rank: i64,
        size: Option<i64>,
    ) -> Result<Bootstrap, BootstrapError> {
        let pmi = |e: String| {
            err(format!("PMI-2 start-up failed: {e}; use OxMPI's mpirun or `srun --mpi=pmi2`, or OXMPI_PMI=1"))
        };
        let jobid = env("PMI_JOBID");
        let fi = c.init(rank, jobid.as_deref()).map_err(pmi)?;
        if fi.rank as i64 != rank || size.is_some_and(|s| s != fi.size as i64) {
            return Err(err(format!(
                "the PMI-2 server says rank {} of {}, the launcher's variables rank {rank} of {}; \
                 the launcher environment is inconsistent",
                fi.rank,
                fi.size,
                size.map_or("?".to_string(), |s| s.to_string())
            )));
        }
        let job = c.job_id().map_err(pmi)?;
        if job.contains(';') || job.chars().any(|ch| ch.is_whitespace()) {
            return Err(err(format!(
                "the PMI-2 server gave an unusable job id `{job}`"
            )));
        }
        let node_of_ranks = match c.job_attr("PMI_process_mapping").map_err(pmi)? {
            Some(v) => parse_process_mapping(&v, fi.size)
                .map_err(|e| err(format!("cannot parse PMI_process_mapping `{v}`: {e}")))?,
            // No mapping: every rank on its own node (safe: no shared memory).
            None => (0..fi.size).collect(),
        };
        let universe_size = c
            .job_attr("universeSize")
            .map_err(pmi)?
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0);
        Ok(Bootstrap {
            backend: Backend::Pmi2(c),
            rank: fi.rank,
            size: fi.size,
            appnum: fi.appnum,
            universe_size,
            kvsname: job,
            node_of_ranks,
            // A kvs-put frame: ~30 bytes of syntax, a key of at most 64, the value.
            chunk_hex: CHUNK_HEX_MAX,
        })
    }

    /// The PMI protocol in use (`None` for a singleton).
    pub fn pmi_version(&self) -> Option<PmiVersion> {
        match self.backend {
            Backend::Pmi1(_) => Some(PmiVersion::V1),
            Backend::Pmi2(_) => Some(PmiVersion::V2),
            Backend::Singleton { .. } | Backend::Closed => None,
        }
    }

    /// This process's rank in the job.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of ranks in the job.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Application number as the server reports it (Slurm -1, hydra and ours 0).
    pub fn appnum(&self) -> i32 {
        self.appnum
    }

    /// Universe size if known: `OXMPI_UNIVERSE_SIZE` (our mpirun's `-usize`), else the
    /// server's (Hydra and our mpirun report -1 → `None`).
    pub fn universe_size(&self) -> Option<usize> {
        match std::env::var("OXMPI_UNIVERSE_SIZE").ok().and_then(|v| v.trim().parse::<usize>().ok()) {
            Some(n) if n > 0 => Some(n),
            _ => self.universe_size,
        }
    }

    /// The job id (PMI-1 kvsname, PMI-2 job id): unique per job, so it names the job's
    /// shared-memory segments. Slurm: `<jobid>.<stepid>` (unique per step, and the same for
    /// both protocols); hydra: `kvs_<pid>_<n>_<random>_<host>`; our mpirun:
    /// `oxmpi_<pid>_<random>`.
    pub fn job_id(&self) -> &str {
        &self.kvsname
    }

    /// Node index of every rank, from `PMI_process_mapping`.
    pub fn node_of_ranks(&self) -> &[usize] {
        &self.node_of_ranks
    }

    /// Publish `value` under `key`; visible to all ranks after the next [`fence`](Self::fence).
    /// Keys must be unique in the job (include the rank in them).
    pub fn put(&mut self, key: &str, value: &[u8]) -> Result<(), BootstrapError> {
        check_user_key(key)?;
        let hex = hex_encode(value);
        let chunks: Vec<&str> = if hex.is_empty() {
            vec![""]
        } else {
            hex.as_bytes()
                .chunks(self.chunk_hex)
                .map(|c| std::str::from_utf8(c).unwrap_or(""))
                .collect()
        };
        // Chunk 0 carries the count: `<count>:<hex>` (init_pmi1's line budget includes it).
        for (i, chunk) in chunks.iter().enumerate() {
            let v = if i == 0 {
                format!("{}:{chunk}", chunks.len())
            } else {
                chunk.to_string()
            };
            self.put_raw(&chunk_key(key, i), &v)?;
        }
        Ok(())
    }

    fn put_raw(&mut self, key: &str, value: &str) -> Result<(), BootstrapError> {
        match &mut self.backend {
            Backend::Pmi1(c) => {
                let msg = Message::new("put")
                    .with("kvsname", &self.kvsname)
                    .with("key", key)
                    .with("value", value);
                let r = c
                    .request(&msg, "put_result")
                    .map_err(|e| err(format!("PMI put of `{key}` failed: {e}")))?;
                if !r.is_ok() {
                    return Err(err(format!(
                        "the PMI server rejected the put of `{key}`: `{r}`"
                    )));
                }
                Ok(())
            }
            Backend::Pmi2(c) => c
                .put(key, value)
                .map_err(|e| err(format!("PMI put of `{key}` failed: {e}"))),
            Backend::Singleton { pending, .. } => {
                pending.insert(key.to_string(), value.to_string());
                Ok(())
            }
            Backend::Closed => Err(err("put after finalize")),
        }
    }

    /// Collective barrier that also makes all earlier puts visible (`barrier_in`/`barrier_out`).
    pub fn fence(&mut self) -> Result<(), BootstrapError> {
        match &mut self.backend {
            Backend::Pmi1(c) => {
                let r = c
                    .request(&Message::new("barrier_in"), "barrier_out")
                    .map_err(|e| err(format!("PMI barrier failed: {e}")))?;
                if !r.is_ok() {
                    return Err(err(format!("the PMI server failed the barrier: `{r}`")));
                }
                Ok(())
            }
            Backend::Pmi2(c) => c.fence().map_err(|e| err(format!("PMI fence failed: {e}"))),
            Backend::Singleton { pending, committed } => {
                committed.extend(pending.drain());
                Ok(())
            }
            Backend::Closed => Err(err("fence after finalize")),
        }
    }

    /// Fetch the bytes another rank (or this one) put under `key` before the last fence.
    pub fn get(&mut self, key: &str) -> Result<Vec<u8>, BootstrapError> {
        check_user_key(key)?;
        let first = self.get_raw(key)?;
        let (count, hex0) = first
            .split_once(':')
            .ok_or_else(|| err(format!("KVS value of `{key}` was not written by OxMPI")))?;
        let count: usize = count
            .parse()
            .ok()
            .filter(|n| (1..=100_000).contains(n))
            .ok_or_else(|| err(format!("KVS value of `{key}` has a bad chunk count")))?;
        let mut hex = hex0.to_string();
        for i in 1..count {
            hex.push_str(&self.get_raw(&chunk_key(key, i))?);
        }
        hex_decode(&hex).ok_or_else(|| err(format!("KVS value of `{key}` is not valid hex")))
    }

    fn get_raw(&mut self, key: &str) -> Result<String, BootstrapError> {
        match &mut self.backend {
            Backend::Pmi1(c) => {
                let msg = Message::new("get")
                    .with("kvsname", &self.kvsname)
                    .with("key", key);
                let r = c
                    .request(&msg, "get_result")
                    .map_err(|e| err(format!("PMI get of `{key}` failed: {e}")))?;
                match r.get("value") {
                    Some(v) if r.is_ok() => Ok(v.to_string()),
                    _ => Err(err(format!(
                        "key `{key}` not found in the job's KVS (was it put before the last fence?)"
                    ))),
                }
            }
            Backend::Pmi2(c) => match c
                .get(&self.kvsname, key)
                .map_err(|e| err(format!("PMI get of `{key}` failed: {e}")))?
            {
                Some(v) => Ok(v),
                None => Err(err(format!(
                    "key `{key}` not found in the job's KVS (was it put before the last fence?)"
                ))),
            },
            Backend::Singleton { committed, .. } => committed.get(key).cloned().ok_or_else(|| {
                err(format!(
                    "key `{key}` not found (was it put before the last fence?)"
                ))
            }),
            Backend::Closed => Err(err("get after finalize")),
        }
    }

    /// Ask the launcher to kill the whole job with `exit_code`. Best effort: errors are
    /// ignored because the caller is about to exit anyway. PMI-1 has no message field, so
    /// `msg` is not sent there; PMI-2 has no exit code (Slurm ends the step with 137, our
    /// mpirun with 1 unless the rank's own exit status arrives first), so the code goes
    /// into the message. The caller prints `msg` too.
    pub fn abort(&mut self, exit_code: i32, msg: &str) {
        match &mut self.backend {
            Backend::Pmi1(c) => {
                let _ = c.send(&Message::new("abort").with("exitcode", exit_code));
            }
            Backend::Pmi2(c) => {
                let _ = c.abort(&format!("exit code {exit_code}: {msg}"));
            }
            Backend::Singleton { .. } | Backend::Closed => {}
        }
    }

    /// Leave the job cleanly (`finalize` → `finalize_ack`); the connection is closed after.
    pub fn finalize(&mut self) -> Result<(), BootstrapError> {
        match std::mem::replace(&mut self.backend, Backend::Closed) {
            Backend::Pmi1(mut c) => {
                let r = c
                    .request(&Message::new("finalize"), "finalize_ack")
                    .map_err(|e| err(format!("PMI finalize failed: {e}")))?;
                if !r.is_ok() {
                    return Err(err(format!("the PMI server failed finalize: `{r}`")));
                }
                Ok(())
            }
            Backend::Pmi2(mut c) => c
                .finalize()
                .map_err(|e| err(format!("PMI finalize failed: {e}"))),
            Backend::Singleton { .. } | Backend::Closed => Ok(()),
        }
    }
}

/// Random bytes from the kernel (used only for names; falls back to time if unavailable).
pub fn fill_random(buf: &mut [u8]) {
    use std::io::Read;
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        if f.read_exact(buf).is_ok() {
            return;
        }
    }
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (t >> (8 * (i % 16))) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        let data: Vec<u8> = (0..=255).collect();
        assert_eq!(hex_decode(&hex_encode(&data)).unwrap(), data);
        assert_eq!(hex_encode(b"/dev"), "2F646576");
        assert!(hex_decode("ABC").is_none());
        assert!(hex_decode("ZZ").is_none());
    }

    #[test]
    fn singleton_put_fence_get() {
        let mut b = Bootstrap::singleton();
        assert_eq!((b.rank(), b.size()), (0, 1));
        assert_eq!(b.node_of_ranks(), &[0]);
        let big: Vec<u8> = (0..5000u32).map(|i| (i * 7) as u8).collect();
        b.put("card-0", &big).unwrap();
        b.put("empty-0", b"").unwrap();
        assert!(b.get("card-0").is_err(), "visible before fence");
        b.fence().unwrap();
        assert_eq!(b.get("card-0").unwrap(), big);
        assert_eq!(b.get("empty-0").unwrap(), b"");
        assert!(b.get("missing").is_err());
        assert!(b.put("bad key", b"x").is_err());
        assert!(b.put(&"k".repeat(57), b"x").is_err());
        b.finalize().unwrap();
        assert!(b.get("card-0").is_err());
    }

    /// An environment made of `pairs`.
    fn table(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    /// The variables of a rank of `srun -N2 -n4 --mpi=pmi2` (notes §2), plus `extra`.
    fn srun_pmi2(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
        let mut v = vec![
            ("PMI_FD", "11"),
            ("PMI_JOBID", "1.0"),
            ("PMI_RANK", "2"),
            ("PMI_SIZE", "4"),
            ("SLURM_JOB_ID", "1"),
            ("SLURM_MPI_TYPE", "pmi2"),
            ("SLURM_STEP_NUM_TASKS", "4"),
            ("SLURM_NTASKS", "4"),
            ("SLURM_PROCID", "2"),
        ];
        v.extend_from_slice(extra);
        v
    }

    #[test]
    fn version_selection() {
        use PmiVersion::*;
        let v = |pairs: &[(&str, &str)]| pmi_version(&table(pairs)).map_err(|e| e.0);
        // Slurm's own server: PMI-2.
        assert_eq!(v(&srun_pmi2(&[])), Ok(V2));
        // Forced either way; OXMPI_PMI wins over PMI_VERSION.
        assert_eq!(v(&srun_pmi2(&[("OXMPI_PMI", "1")])), Ok(V1));
        assert_eq!(v(&srun_pmi2(&[("PMI_VERSION", "1")])), Ok(V1));
        assert_eq!(
            v(&srun_pmi2(&[("PMI_VERSION", "1"), ("OXMPI_PMI", "2")])),
            Ok(V2)
        );
        assert_eq!(v(&[("PMI_FD", "5"), ("PMI_VERSION", "2.0")]), Ok(V2));
        assert_eq!(v(&[("PMI_FD", "5"), ("OXMPI_PMI", " ")]), Ok(V1));
        // Our mpirun (PMI_* replaced, inside an allocation or not), hydra (also inside
        // salloc, where it leaks the proxy step's PMI_JOBID): PMI-1.
        assert_eq!(
            v(&[("PMI_FD", "5"), ("PMI_RANK", "0"), ("PMI_SIZE", "2")]),
            Ok(V1)
        );
        assert_eq!(
            v(&[
                ("PMI_FD", "5"),
                ("SLURM_JOB_ID", "3"),
                ("SLURM_STEP_NUM_TASKS", "2")
            ]),
            Ok(V1)
        );
        assert_eq!(v(&srun_pmi2(&[("MPI_LOCALNRANKS", "2")])), Ok(V1));
        assert_eq!(v(&[("PMI_PORT", "vm:41271"), ("PMI_ID", "1")]), Ok(V1));
        // Nonsense is an error naming the fix.
        for bad in [
            ("OXMPI_PMI", "3"),
            ("PMI_VERSION", "x"),
            ("OXMPI_PMI", "pmix"),
        ] {
            let e = v(&[bad]).unwrap_err();
            assert!(e.contains("OXMPI_PMI=1") && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn singleton_guard() {
        let guard =
            |pairs: &[(&str, &str)]| parallel_without_server(&table(pairs)).unwrap().map(|e| e.0);
        // srun --mpi=none (notes: srun-none env) and a missing --mpi with MpiDefault=none.
        let e = guard(&[
            ("SLURM_JOB_ID", "5"),
            ("SLURM_STEP_NUM_TASKS", "2"),
            ("SLURM_NTASKS", "2"),
        ])
        .unwrap();
        assert!(e.contains("srun --mpi=pmi2"), "{e}");
        // srun --mpi=pmix: PMIX_RANK, SLURM_MPI_TYPE, no PMI_FD.
        let pmix = [
            ("SLURM_MPI_TYPE", "pmix"),
            ("SLURM_STEP_NUM_TASKS", "2"),
            ("PMIX_RANK", "0"),
        ];
        let e = guard(&pmix).unwrap();
        assert!(
            e.contains("--mpi=pmix") && e.contains("srun --mpi=pmi2"),
            "{e}"
        );
        let e = guard(&[("SLURM_MPI_TYPE", "pmix_v4"), ("PMIX_RANK", "0")]).unwrap();
        assert!(e.contains("--mpi=pmix_v4"), "{e}");
        // Open MPI's mpirun, another PMIx launcher, PMI_SIZE without a server.
        assert!(guard(&[("OMPI_COMM_WORLD_SIZE", "2"), ("PMIX_RANK", "1")])
            .unwrap()
            .contains("Open MPI"));
        assert!(guard(&[("PMIX_RANK", "1")]).unwrap().contains("PMIx"));
        assert!(guard(&[("PMI_SIZE", "4")]).unwrap().contains("PMI_SIZE=4"));
        // Singletons: one task under any launcher, the batch step, an salloc shell.
        assert_eq!(
            guard(&[
                ("SLURM_MPI_TYPE", "pmix"),
                ("SLURM_STEP_NUM_TASKS", "1"),
                ("PMIX_RANK", "0")
            ]),
            None
        );
        assert_eq!(guard(&[("SLURM_STEP_NUM_TASKS", "1")]), None);
        assert_eq!(
            guard(&[("OMPI_COMM_WORLD_SIZE", "1"), ("PMIX_RANK", "0")]),
            None
        );
        assert_eq!(
            guard(&[
                ("ENVIRONMENT", "BATCH"),
                ("SLURM_NTASKS", "4"),
                ("SLURM_PROCID", "0")
            ]),
            None
        );
        assert_eq!(
            guard(&[("SLURM_JOB_ID", "11"), ("SLURM_NTASKS", "4")]),
            None
        );
        assert_eq!(guard(&[("PMI_SIZE", "1")]), None);
        assert_eq!(guard(&[]), None);
        assert!(parallel_without_server(&table(&[("SLURM_STEP_NUM_TASKS", "x")])).is_err());
    }

    /// A one-rank PMI-2 server speaking Slurm's dialect, enough for a whole Bootstrap life:
    /// init, fullinit, job-getid, job attributes, put/fence/get with chunked values, abort
    /// or finalize. Returns the requests it saw.
    fn fake_slurm(mut s: std::os::unix::net::UnixStream) -> Vec<String> {
        use pmi_wire::{parse_pmi2_frame, PMI2_HEADER_LEN};
        use std::io::{Read, Write};
        let mut seen = Vec::new();
        let mut line = Vec::new();
        let mut b = [0u8; 1];
        while b[0] != b'\n' {
            s.read_exact(&mut b).unwrap();
            line.push(b[0]);
        }
        seen.push(String::from_utf8(line).unwrap());
        s.write_all(b"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n")
            .unwrap();
        let (mut kvs, mut pending) = (HashMap::new(), HashMap::new());
        loop {
            let mut frame = vec![0u8; PMI2_HEADER_LEN];
            if s.read_exact(&mut frame).is_err() {
                return seen;
            }
            let n = pmi_wire::parse_pmi2_header(&frame).unwrap();
            frame.resize(PMI2_HEADER_LEN + n, 0);
            s.read_exact(&mut frame[PMI2_HEADER_LEN..]).unwrap();
            let m = parse_pmi2_frame(&frame).unwrap();
            seen.push(m.to_string());
            let reply = Message::new(&format!("{}-response", m.cmd)).with("rc", 0);
            let reply = match m.cmd.as_str() {
                "fullinit" => reply.with("rank", 0).with("size", 1).with("appnum", -1),
                "job-getid" => reply.with("jobid", "7.3"),
                "info-getjobattr" if m.get("key") == Some("PMI_process_mapping") => reply
                    .with("found", "TRUE")
                    .with("value", "(vector,(0,1,1))"),
                "info-getjobattr" => reply.with("found", "TRUE").with("value", "1"),
                "kvs-put" => {
                    pending.insert(
                        m.get("key").unwrap().to_string(),
                        m.get("value").unwrap().to_string(),
                    );
                    reply
                }
                "kvs-fence" => {
                    kvs.extend(pending.drain());
                    reply
                }
                "kvs-get" => {
                    assert_eq!(m.get("jobid"), Some("7.3"));
                    match kvs.get(m.get("key").unwrap()) {
                        Some(v) => reply.with("found", "TRUE").with("value", v),
                        None => reply.with("found", "FALSE"),
                    }
                }
                "abort" => return seen,
                _ => reply,
            };
            let frame = reply.to_pmi2_frame().unwrap();
            assert!(frame.len() < 1024, "a reply of {} bytes", frame.len());
            s.write_all(&frame).unwrap();
        }
    }

    fn pmi2_bootstrap(extra: &[(&str, &str)]) -> (Bootstrap, std::thread::JoinHandle<Vec<String>>) {
        use std::os::fd::IntoRawFd;
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let h = std::thread::spawn(move || fake_slurm(b));
        let fd = a.into_raw_fd().to_string();
        let mut pairs = vec![
            ("PMI_FD", fd.as_str()),
            ("PMI_RANK", "0"),
            ("PMI_SIZE", "1"),
            ("PMI_JOBID", "7.3"),
            ("SLURM_JOB_ID", "7"),
        ];
        pairs.extend_from_slice(extra);
        (Bootstrap::init_from(&table(&pairs)).unwrap(), h)
    }

    #[test]
    fn bootstrap_over_pmi2() {
        let (mut b, h) = pmi2_bootstrap(&[]);
        assert_eq!(b.pmi_version(), Some(PmiVersion::V2));
        assert_eq!(
            (b.rank(), b.size(), b.appnum(), b.universe_size()),
            (0, 1, -1, Some(1))
        );
        assert_eq!(b.job_id(), "7.3");
        assert_eq!(b.node_of_ranks(), &[0]);
        let big: Vec<u8> = (0..3000u32).map(|i| (i * 13) as u8).collect();
        b.put("card-0", &big).unwrap();
        b.put("empty-0", b"").unwrap();
        b.fence().unwrap();
        assert_eq!(b.get("card-0").unwrap(), big);
        assert_eq!(b.get("empty-0").unwrap(), b"");
        assert!(b.get("missing").unwrap_err().0.contains("not found"));
        b.finalize().unwrap();
        assert!(b.fence().is_err());
        let seen = h.join().unwrap();
        assert_eq!(seen[0], "cmd=init pmi_version=2 pmi_subversion=0\n");
        assert_eq!(
            seen[1],
            "cmd=fullinit pmijobid=7.3 pmirank=0 threaded=FALSE"
        );
        // 3000 bytes = 6000 hex characters: 7 chunks of at most 900.
        assert_eq!(
            seen.iter().filter(|r| r.contains("key=card-0")).count(),
            2 * 7
        );
        assert_eq!(seen.last().unwrap(), "cmd=finalize");

        // OXMPI_PMI=1 against a PMI-2-only server: it refuses, and the message names the fix.
        let (a, s) = std::os::unix::net::UnixStream::pair().unwrap();
        let h = std::thread::spawn(move || {
            use std::io::{Read, Write};
            let mut s = s;
            let mut buf = [0u8; 64];
            let _ = s.read(&mut buf).unwrap();
            s.write_all(b"cmd=response_to_init rc=-1 pmi_version=2 pmi_subversion=0\n")
                .unwrap();
        });
        use std::os::fd::IntoRawFd;
        let fd = a.into_raw_fd().to_string();
        let e = Bootstrap::init_from(&table(&[
            ("PMI_FD", &fd),
            ("PMI_RANK", "0"),
            ("PMI_SIZE", "1"),
            ("OXMPI_PMI", "1"),
        ]))
        .unwrap_err();
        assert!(e.0.contains("refused PMI-1"), "{e}");
        h.join().unwrap();
    }

    #[test]
    fn abort_over_pmi2() {
        let (mut b, h) = pmi2_bootstrap(&[]);
        b.abort(3, "MPI_Abort(3) on rank 0; bye");
        let seen = h.join().unwrap();
        assert_eq!(
            seen.last().unwrap(),
            "cmd=abort isworld=TRUE msg=exit code 3: MPI_Abort(3) on rank 0, bye"
        );
    }

    #[test]
    fn pmi2_rank_mismatch_is_an_error() {
        use std::os::fd::IntoRawFd;
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let h = std::thread::spawn(move || fake_slurm(b));
        let fd = a.into_raw_fd().to_string();
        let e = Bootstrap::init_from(&table(&[
            ("PMI_FD", &fd),
            ("PMI_RANK", "0"),
            ("PMI_SIZE", "2"),
            ("OXMPI_PMI", "2"),
        ]))
        .unwrap_err();
        assert!(
            e.0.contains("rank 0 of 1") && e.0.contains("inconsistent"),
            "{e}"
        );
        drop(e);
        h.join().unwrap();
    }

    #[test]
    fn error_display_is_one_line() {
        let e = err("x; run `srun --mpi=pmi2 ...`");
        assert!(!e.to_string().contains('\n'));
        assert!(e.to_string().starts_with("OxMPI: "));
    }
}
