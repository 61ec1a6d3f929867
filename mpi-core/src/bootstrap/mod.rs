//! Bootstrap: how ranks find each other (PMI wire clients, singleton).
//!
//! [`Bootstrap::init`] picks the mechanism from the environment, in the precedence the
//! research notes require (inherited Slurm variables can lie; PMI variables cannot):
//! 1. `PMI_FD` → PMI-1 over that fd (our `mpirun`, MPICH's hydra, `srun --mpi=pmi2`);
//! 2. `PMI_PORT` (+`PMI_ID`) → PMI-1 over TCP (hydra `-pmi-port`);
//! 3. launcher variables saying the job is parallel but no PMI server → a one-line error
//!    naming the fix (never N silent singletons);
//! 4. nothing → singleton: rank 0 of 1 with an in-memory key-value store.
//!
//! Values put into the KVS are arbitrary bytes: they are hex-encoded and split into chunks
//! that keep every PMI-1 line below the 1024-byte limit Slurm enforces.

pub mod pmi1;
pub mod pmi_wire;

mod mapping;

use pmi1::Pmi1Client;
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

/// Reads an environment variable as an integer; `None` if unset, error if garbage.
fn env_int(name: &str) -> Result<Option<i64>, BootstrapError> {
    match std::env::var(name) {
        Err(_) => Ok(None),
        Ok(v) => v.trim().parse::<i64>().map(Some).map_err(|_| {
            err(format!(
                "{name}={v} is not a number; the launcher environment is corrupt"
            ))
        }),
    }
}

/// The launcher environment says "parallel job" but offers no PMI server: explain the fix.
fn parallel_without_server() -> Result<Option<BootstrapError>, BootstrapError> {
    if let Some(n) = env_int("PMI_SIZE")?.filter(|&n| n > 1) {
        return Ok(Some(err(format!(
            "PMI_SIZE={n} says this is a parallel job, but neither PMI_FD nor PMI_PORT is set, \
             so no PMI server is reachable; start the program with OxMPI's mpirun"
        ))));
    }
    if let Some(n) = env_int("SLURM_STEP_NUM_TASKS")?.filter(|&n| n > 1) {
        return Ok(Some(err(format!(
            "this process was started by srun ({n} tasks) without a PMI server; \
             run `srun --mpi=pmi2 ...` or use OxMPI's mpirun"
        ))));
    }
    if let Some(n) = env_int("OMPI_COMM_WORLD_SIZE")?.filter(|&n| n > 1) {
        return Ok(Some(err(format!(
            "this process was started by Open MPI's mpirun ({n} ranks), which speaks only PMIx; \
             use OxMPI's mpirun (or `srun --mpi=pmi2 ...`)"
        ))));
    }
    if std::env::var_os("PMIX_RANK").is_some() {
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
        if let Ok(fd) = std::env::var("PMI_FD") {
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
            let rank = env_int("PMI_RANK")?;
            let size = env_int("PMI_SIZE")?;
            let (Some(rank), Some(size)) = (rank, size) else {
                return Err(err(
                    "PMI_FD is set but PMI_RANK/PMI_SIZE are missing; the launcher is not \
                     PMI-1 compatible — use OxMPI's mpirun or `srun --mpi=pmi2`",
                ));
            };
            // SAFETY: PMI_FD was handed to this process for exclusive use by the PMI client.
            let client = unsafe { Pmi1Client::from_fd(fd) };
            return Self::init_pmi1(client, rank, size);
        }
        if let Ok(port) = std::env::var("PMI_PORT") {
            let id = env_int("PMI_ID")?;
            let (client, hs) = Pmi1Client::connect_tcp(&port, id)
                .map_err(|e| err(format!("{e}; is the launcher (mpiexec) still running?")))?;
            let (rank, size) = match hs {
                Some(h) => (h.rank as i64, h.size as i64),
                None => match (env_int("PMI_RANK")?, env_int("PMI_SIZE")?) {
                    (Some(r), Some(s)) => (r, s),
                    _ => {
                        return Err(err("PMI_PORT is set without PMI_ID or PMI_RANK/PMI_SIZE; \
                             the launcher environment is incomplete — use OxMPI's mpirun"))
                    }
                },
            };
            return Self::init_pmi1(client, rank, size);
        }
        if let Some(e) = parallel_without_server()? {
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

    /// Universe size if the server knows it (hydra reports -1 → `None`).
    pub fn universe_size(&self) -> Option<usize> {
        self.universe_size
    }

    /// The kvsname: unique per job, used to name shared-memory segments.
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
    /// `msg` is not sent; the caller prints it.
    pub fn abort(&mut self, exit_code: i32, msg: &str) {
        let _ = msg;
        if let Backend::Pmi1(c) = &mut self.backend {
            let _ = c.send(&Message::new("abort").with("exitcode", exit_code));
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
            Backend::Singleton { .. } | Backend::Closed => Ok(()),
        }
    }
}

/// Random bytes from the kernel (used only for names; falls back to time if unavailable).
pub(crate) fn fill_random(buf: &mut [u8]) {
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

    #[test]
    fn error_display_is_one_line() {
        let e = err("x; run `srun --mpi=pmi2 ...`");
        assert!(!e.to_string().contains('\n'));
        assert!(e.to_string().starts_with("OxMPI: "));
    }
}
