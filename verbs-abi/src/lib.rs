//! The C ABI between the engine (`mpi-core`) and the RDMA verbs transport plugin
//! (`liboxmpi-verbs.so`, crate `mpi-verbs`).
//!
//! Why a plugin: `libmpi.so.12` must load on machines without libibverbs (most laptops),
//! so nothing in it may need `libibverbs.so.1`. The engine `dlopen`s the plugin at
//! `MPI_Init` when verbs may be used and calls it through the table below. Why a C ABI:
//! the two are separate shared objects; Rust's ABI is not stable across them, C's is.
//!
//! The plugin is a transport in the sense of `mpi-core/src/transport/mod.rs`: it moves a
//! 48-byte engine header plus a payload to a peer, hands received ones back, and offers a
//! zero-copy read (RDMA READ) of a buffer a peer offered. It knows nothing of MPI
//! semantics: eager/rendezvous decisions, matching and ordering stay in the engine.
//!
//! Peers are named by their world rank everywhere. All calls come from one thread at a
//! time (the engine's lock). Every pointer argument is valid for the call only, unless
//! said otherwise.

use std::ffi::c_void;

/// Bumped on any change of this file's types or functions.
pub const ABI_VERSION: u32 = 1;

/// Name of the symbol the plugin exports: `extern "C" fn() -> *const VerbsApi`.
pub const ENTRY_SYMBOL: &[u8] = b"oxmpi_verbs_plugin\0";

/// File name of the plugin (installed beside `libmpi.so.12`).
pub const PLUGIN_FILE: &str = "liboxmpi-verbs.so";

/// Engine header length the plugin must carry verbatim in front of each payload.
pub const HEADER_LEN: usize = 48;

/// Opaque plugin state.
pub type Handle = *mut c_void;

/// Ends the job: prints `msg` (UTF-8, `len` bytes) as one line and aborts. The plugin calls
/// it on any error it cannot report through a return value (a work completion with an
/// error status, a QP in error, a port going down), with a message naming the peer rank
/// and the `ibv_wc_status_str`.
pub type FatalFn = unsafe extern "C" fn(msg: *const u8, len: usize) -> !;

/// Fills `len` bytes at `dst` with a payload (see `VerbsApi::try_send_with`).
pub type FillFn = unsafe extern "C" fn(ctx: *mut c_void, dst: *mut u8, len: usize);

/// What the engine tells the plugin at `open`.
#[repr(C)]
pub struct VerbsConfig {
    pub abi_version: u32,
    /// This process's world rank and the world size.
    pub rank: u32,
    pub size: u32,
    /// World ranks reached through verbs (`npeers` entries; may be 0 for a probe).
    pub peers: *const u32,
    pub npeers: u32,
    /// Device name (`OXMPI_IB_DEVICE`), NUL-terminated, or null/empty = the first device
    /// with an ACTIVE port.
    pub device: *const u8,
    /// Port number (`OXMPI_IB_PORT`); 0 = the first ACTIVE port.
    pub port: u32,
    /// GID index (`OXMPI_IB_GID_INDEX`); -1 = for RoCE the IPv4-mapped RoCE v2 GID, for
    /// InfiniBand none (LID addressing).
    pub gid_index: i32,
    /// Size in bytes of each eager receive buffer (engine header + payload).
    pub buf_size: u32,
    /// Receive buffers posted per peer (the credit window).
    pub bufs_per_peer: u32,
    /// Largest bytes kept registered by the registration cache (least recently used
    /// registrations not in use are dropped beyond it).
    pub reg_cache_bytes: u64,
    /// 1 = `OXMPI_VERBOSE`: the plugin may print (stderr) what it chose.
    pub verbose: u32,
    pub fatal: FatalFn,
}

/// A received message (as `mpi_core::transport::Incoming`). `header` points at
/// `HEADER_LEN` bytes, `payload` at `len` bytes; both stay valid until `release(peer)`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct VerbsIncoming {
    pub peer: u32,
    pub header: *const u8,
    pub payload: *const u8,
    pub len: usize,
}

/// The plugin's functions. Every function takes the handle `open` returned, except `open`.
#[repr(C)]
pub struct VerbsApi {
    /// Must equal `ABI_VERSION`; the engine refuses a plugin that differs.
    pub abi_version: u32,
    /// Opens the device and creates one RC queue pair per peer (not yet connected).
    /// Returns null and writes a NUL-terminated reason into `err` (at most `err_len`
    /// bytes) when verbs cannot be used (no library, no device, no ACTIVE port, ...).
    pub open: unsafe extern "C" fn(cfg: *const VerbsConfig, err: *mut u8, err_len: usize) -> Handle,
    /// A one-line description of the choice (device, port, LID or GID and its index, path
    /// MTU, max_inline_data), NUL-terminated into `buf`; returns its length.
    pub describe: unsafe extern "C" fn(h: Handle, buf: *mut u8, cap: usize) -> usize,
    /// This process's business card (binary: addressing plus the QP number it created for
    /// each peer). Returns its length; if larger than `cap`, nothing is written and the
    /// caller asks again with a larger buffer.
    pub card: unsafe extern "C" fn(h: Handle, buf: *mut u8, cap: usize) -> usize,
    /// Connects the queue pair toward `peer` with `peer`'s card (moves it to RTS). Returns
    /// 0, or -1 with a NUL-terminated reason in `err`. The engine runs a fence after
    /// connecting every peer, before the first send.
    pub connect: unsafe extern "C" fn(h: Handle, peer: u32, card: *const u8, len: usize, err: *mut u8, err_len: usize) -> i32,
    /// Largest payload one message carries (`buf_size` - `HEADER_LEN`).
    pub max_payload: unsafe extern "C" fn(h: Handle) -> usize,
    /// Sends header + payload to `peer`; returns 0 when there is no room or credit now
    /// (the engine retries after progress), 1 when handed over (the payload was copied or
    /// sent inline: the caller's buffer is free at once).
    pub try_send: unsafe extern "C" fn(h: Handle, peer: u32, header: *const u8, payload: *const u8, len: usize) -> i32,
    /// As `try_send`, with the payload written by `fill(ctx, dst, len)` straight into the
    /// registered send buffer.
    pub try_send_with: unsafe extern "C" fn(h: Handle, peer: u32, header: *const u8, len: usize, fill: FillFn, ctx: *mut c_void) -> i32,
    /// The next received message, if any (returns 1 and fills `out`, else 0). It must be
    /// `release`d before the next call.
    pub recv_next: unsafe extern "C" fn(h: Handle, out: *mut VerbsIncoming) -> i32,
    /// Frees the message last returned for `peer` (its receive buffer is reposted, in
    /// batches, and the credit returned to the sender).
    pub release: unsafe extern "C" fn(h: Handle, peer: u32),
    /// Work of its own once per progress pass (send completions, credit messages).
    pub progress: unsafe extern "C" fn(h: Handle),
    /// Messages handed over that the device has not finished sending (finalize drains).
    pub has_pending_output: unsafe extern "C" fn(h: Handle) -> i32,
    /// Offers `len` bytes at `addr` for peers to RDMA READ: registers them (through the
    /// registration cache) and keeps the registration until `withdraw`. Writes the remote
    /// key to `*rkey`; returns 1, or 0 when it cannot be registered (the engine streams).
    pub offer: unsafe extern "C" fn(h: Handle, addr: *const u8, len: usize, rkey: *mut u32) -> i32,
    /// The peers are done with an offer (`addr`, `len` as given to `offer`).
    pub withdraw: unsafe extern "C" fn(h: Handle, addr: *const u8, len: usize),
    /// Reads `len` bytes at `remote` (offered with `rkey`) in `peer`'s memory into `dst`
    /// with RDMA READ, and returns when they are there. Returns the bytes read (`len`, or
    /// 0 when `dst` cannot be registered: the engine streams instead).
    pub get: unsafe extern "C" fn(h: Handle, peer: u32, dst: *mut u8, remote: u64, rkey: u32, len: usize) -> usize,
    /// Writes `len` bytes from `src` to `remote` (offered with `rkey`) in `peer`'s memory
    /// with RDMA WRITE, and returns when the device acknowledged them. Returns the bytes
    /// written (`len`, or 0 when `src` cannot be registered).
    pub put: unsafe extern "C" fn(h: Handle, peer: u32, remote: u64, rkey: u32, src: *const u8, len: usize) -> usize,
    /// The virtual range [addr, addr+len) is being unmapped or replaced: no registration
    /// covering any of it may be used again (one in use by an offer is dropped at its
    /// `withdraw`).
    pub invalidate: unsafe extern "C" fn(h: Handle, addr: usize, len: usize),
    /// Arms the completion channel for a sleep. Returns a pollable file descriptor (it
    /// becomes readable when a message arrives), or -1 when a message already arrived
    /// (poll again instead of sleeping).
    pub prepare_sleep: unsafe extern "C" fn(h: Handle) -> i32,
    /// A sleep ended: take the channel's events (before the next `recv_next`).
    pub after_sleep: unsafe extern "C" fn(h: Handle),
    /// Destroys every verbs resource (after the engine drained pending output).
    pub close: unsafe extern "C" fn(h: Handle),
}

/// The plugin's entry point type.
pub type EntryFn = unsafe extern "C" fn() -> *const VerbsApi;
