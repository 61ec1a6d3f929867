//! The RDMA verbs transport, as the engine sees it: a `Transport` over the table of the
//! plugin `liboxmpi-verbs.so` (crate `mpi-verbs`), which the engine `dlopen`s at
//! `MPI_Init`. `libmpi.so.12` itself never needs `libibverbs.so.1`, so it loads on machines
//! without RDMA; the plugin does need it, and where it is missing `dlopen` fails and the
//! reason is reported (`OXMPI_VERBOSE=1`) while off-node peers use TCP.
//!
//! What the plugin does (QPs, credits, receive buffers, RDMA READ, the registration
//! cache) is documented in `mpi-verbs`; the ABI is `verbs_abi`.

use super::{Incoming, SleepToken, Transport, Via};
use crate::header::HEADER_LEN;
use std::ffi::{c_void, CStr, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicPtr, Ordering};
use verbs_abi::{Handle, VerbsApi, VerbsConfig, VerbsIncoming};

/// What `open` is given besides the peers (from the tunables table and `OXMPI_IB_*`).
pub struct Settings {
    pub device: Option<String>,
    pub port: u32,
    pub gid_index: i32,
    pub buf_size: usize,
    pub bufs_per_peer: usize,
    pub reg_cache_bytes: usize,
    pub eager_max: usize,
    pub verbose: bool,
}

impl Settings {
    /// From `OXMPI_IB_DEVICE`, `OXMPI_IB_PORT`, `OXMPI_IB_GID_INDEX` and the tunables.
    pub fn from_env() -> Result<Settings, String> {
        let cfg = crate::config::config();
        let device = std::env::var("OXMPI_IB_DEVICE").ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        let port = match std::env::var("OXMPI_IB_PORT") {
            Ok(s) if !s.trim().is_empty() => s.trim().parse::<u32>().map_err(|_| format!("OXMPI_IB_PORT={s} is not a port number"))?,
            _ => 0,
        };
        let gid_index = match std::env::var("OXMPI_IB_GID_INDEX") {
            Ok(s) if !s.trim().is_empty() => s.trim().parse::<u16>().map_err(|_| format!("OXMPI_IB_GID_INDEX={s} is not a GID index"))? as i32,
            _ => -1,
        };
        let buf_size = cfg.get("IB_BUF_SIZE").clamp(HEADER_LEN + 64, 1 << 20);
        Ok(Settings {
            device,
            port,
            gid_index,
            buf_size,
            bufs_per_peer: cfg.get("IB_BUFS").clamp(8, 4096),
            // Without the memory hooks a cached registration could outlive its pages.
            reg_cache_bytes: if crate::memhooks::hooks_bound() { cfg.get("IB_REG_CACHE") } else { 0 },
            eager_max: cfg.get("IB_EAGER_MAX"),
            verbose: cfg.get("VERBOSE") != 0,
        })
    }
}

/// Where the plugin lives: `OXMPI_VERBS_PLUGIN`, else beside the library holding this code
/// (`libmpi.so.12` in an install tree).
fn plugin_path() -> String {
    if let Ok(p) = std::env::var("OXMPI_VERBS_PLUGIN") {
        if !p.is_empty() {
            return p;
        }
    }
    // SAFETY: dladdr only reads our own code address and fills a local struct.
    let dir = unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(plugin_path as *const c_void, &mut info) != 0 && !info.dli_fname.is_null() {
            let me = CStr::from_ptr(info.dli_fname).to_string_lossy().into_owned();
            std::path::Path::new(&me).parent().map(|p| p.to_string_lossy().into_owned())
        } else {
            None
        }
    };
    match dir {
        Some(d) if !d.is_empty() => format!("{d}/{}", verbs_abi::PLUGIN_FILE),
        _ => verbs_abi::PLUGIN_FILE.to_string(),
    }
}

/// The plugin's table, loaded once per process (the library stays loaded).
fn load() -> Result<&'static VerbsApi, String> {
    static API: AtomicPtr<VerbsApi> = AtomicPtr::new(std::ptr::null_mut());
    let p = API.load(Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: set below from the plugin's static table, which is never unloaded.
        return Ok(unsafe { &*p });
    }
    let path = plugin_path();
    let c = CString::new(path.clone()).map_err(|_| "bad plugin path".to_string())?;
    // SAFETY: dlopen/dlsym/dlerror with NUL-terminated strings; the handle is kept forever.
    unsafe {
        let lib = libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        if lib.is_null() {
            let e = libc::dlerror();
            let why = if e.is_null() { String::from("unknown error") } else { CStr::from_ptr(e).to_string_lossy().into_owned() };
            return Err(if std::path::Path::new(&path).exists() {
                format!("cannot load {path}: {why}")
            } else {
                format!("{path} is not installed (OxMPI builds it where libibverbs-dev is installed)")
            });
        }
        let sym = libc::dlsym(lib, verbs_abi::ENTRY_SYMBOL.as_ptr() as *const libc::c_char);
        if sym.is_null() {
            return Err(format!("{path} has no {} entry point", String::from_utf8_lossy(&verbs_abi::ENTRY_SYMBOL[..verbs_abi::ENTRY_SYMBOL.len() - 1])));
        }
        let entry: verbs_abi::EntryFn = std::mem::transmute(sym);
        let api = entry();
        if api.is_null() || (*api).abi_version != verbs_abi::ABI_VERSION {
            return Err(format!("{path} speaks another plugin ABI than this libmpi (rebuild and reinstall OxMPI)"));
        }
        API.store(api as *mut VerbsApi, Ordering::Release);
        Ok(&*api)
    }
}

/// Receive buffers and registrations are locked memory: take all the hard limit allows
/// (the soft limit is often lower, e.g. 64 KiB, where the hard one is unlimited).
fn raise_memlock() {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit on a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_MEMLOCK, &lim);
        }
    }
}

unsafe extern "C" fn plugin_fatal(msg: *const u8, len: usize) -> ! {
    // SAFETY: the plugin passes `len` readable bytes.
    let m = unsafe { std::slice::from_raw_parts(msg, len) };
    crate::error::fatal(&String::from_utf8_lossy(m))
}

fn reason(buf: &[u8]) -> String {
    let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// The verbs transport of this process. Peers are indexed by world rank.
pub struct VerbsTransport {
    api: &'static VerbsApi,
    h: Handle,
    max_payload: usize,
    eager_max: usize,
    /// An eventfd other threads write to wake a wait asleep on the completion channel.
    wake_fd: OwnedFd,
    sleepers: usize,
}

// SAFETY: the handle is only used under the engine lock (one thread at a time).
unsafe impl Send for VerbsTransport {}

impl VerbsTransport {
    /// Loads the plugin and opens the device with one queue pair per peer (world ranks).
    pub fn open(rank: usize, size: usize, peers: &[usize], s: &Settings) -> Result<VerbsTransport, String> {
        let api = load()?;
        raise_memlock();
        let peers32: Vec<u32> = peers.iter().map(|&p| p as u32).collect();
        let device = s.device.as_ref().map(|d| CString::new(d.as_str()).unwrap_or_default());
        let cfg = VerbsConfig {
            abi_version: verbs_abi::ABI_VERSION,
            rank: rank as u32,
            size: size as u32,
            peers: peers32.as_ptr(),
            npeers: peers32.len() as u32,
            device: device.as_ref().map_or(std::ptr::null(), |d| d.as_ptr() as *const u8),
            port: s.port,
            gid_index: s.gid_index,
            buf_size: s.buf_size as u32,
            bufs_per_peer: s.bufs_per_peer as u32,
            reg_cache_bytes: s.reg_cache_bytes as u64,
            verbose: s.verbose as u32,
            fatal: plugin_fatal,
        };
        let mut err = [0u8; 512];
        // SAFETY: cfg and the buffers it points to outlive the call; err is writable.
        let h = unsafe { (api.open)(&cfg, err.as_mut_ptr(), err.len()) };
        if h.is_null() {
            return Err(reason(&err));
        }
        // SAFETY: eventfd(2) returns a new descriptor we own.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            // SAFETY: h came from open and is not used again.
            unsafe { (api.close)(h) };
            return Err(format!("eventfd: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: h is a live handle.
        let max_payload = unsafe { (api.max_payload)(h) };
        crate::memhooks::watch(true);
        Ok(VerbsTransport {
            api,
            h,
            max_payload,
            eager_max: s.eager_max.min(max_payload),
            // SAFETY: fd is a fresh descriptor owned by nobody else.
            wake_fd: unsafe { OwnedFd::from_raw_fd(fd) },
            sleepers: 0,
        })
    }

    /// Device, port, addressing and MTU the plugin chose (for `OXMPI_VERBOSE`).
    pub fn describe(&self) -> String {
        let mut buf = [0u8; 512];
        // SAFETY: buf is writable for its length.
        unsafe { (self.api.describe)(self.h, buf.as_mut_ptr(), buf.len()) };
        reason(&buf)
    }

    /// This rank's business card (binary).
    pub fn card(&self) -> Vec<u8> {
        let mut buf = vec![0u8; 4096];
        loop {
            // SAFETY: buf is writable for its length.
            let n = unsafe { (self.api.card)(self.h, buf.as_mut_ptr(), buf.len()) };
            if n <= buf.len() {
                buf.truncate(n);
                return buf;
            }
            buf = vec![0u8; n];
        }
    }

    /// Connects the queue pair toward `peer` with its card.
    pub fn connect(&mut self, peer: usize, card: &[u8]) -> Result<(), String> {
        let mut err = [0u8; 512];
        // SAFETY: card and err are valid for their lengths.
        let rc = unsafe { (self.api.connect)(self.h, peer as u32, card.as_ptr(), card.len(), err.as_mut_ptr(), err.len()) };
        if rc == 0 {
            Ok(())
        } else {
            Err(reason(&err))
        }
    }

    /// Hands the ranges the memory hooks saw unmapped to the registration cache, before
    /// it is used. Deferred to here (under the engine lock) because the hooks also fire
    /// inside libibverbs, while the plugin is in the middle of a registration.
    #[inline]
    fn drop_stale(&mut self) {
        let (api, h) = (self.api, self.h);
        // SAFETY: live handle; called under the engine lock, never from inside the plugin.
        crate::memhooks::drain(|addr, len| unsafe { (api.invalidate)(h, addr, len) });
    }

    pub fn after_sleep(&mut self) {
        // SAFETY: live handle.
        unsafe { (self.api.after_sleep)(self.h) };
        self.sleepers = self.sleepers.saturating_sub(1);
        if self.sleepers == 0 {
            let mut v = 0u64;
            // SAFETY: an 8-byte read from our nonblocking eventfd into a live u64 (clears it).
            unsafe { libc::read(self.wake_fd.as_raw_fd(), &mut v as *mut u64 as *mut c_void, 8) };
        }
    }
}

unsafe extern "C" fn call_fill(ctx: *mut c_void, dst: *mut u8, len: usize) {
    // SAFETY: ctx is the `&mut &mut dyn FnMut` passed by `try_send_with` for this call; dst
    // is the plugin's send slot, writable for len bytes.
    unsafe {
        let f = &mut *(ctx as *mut &mut dyn FnMut(&mut [u8]));
        f(std::slice::from_raw_parts_mut(dst, len));
    }
}

impl Transport for VerbsTransport {
    fn max_payload(&self) -> usize {
        self.max_payload
    }

    fn eager_max(&self) -> usize {
        self.eager_max
    }

    unsafe fn try_send(&mut self, peer: usize, header: &[u8; HEADER_LEN], payload: *const u8, len: usize) -> bool {
        // SAFETY: header is 48 bytes; payload valid for len (caller contract).
        unsafe { (self.api.try_send)(self.h, peer as u32, header.as_ptr(), payload, len) != 0 }
    }

    fn try_send_with(&mut self, peer: usize, header: &[u8; HEADER_LEN], len: usize, fill: &mut dyn FnMut(&mut [u8])) -> bool {
        let mut f: &mut dyn FnMut(&mut [u8]) = fill;
        // SAFETY: the context points at `f`, alive for the call; call_fill casts it back.
        unsafe { (self.api.try_send_with)(self.h, peer as u32, header.as_ptr(), len, call_fill, &mut f as *mut _ as *mut c_void) != 0 }
    }

    fn recv_next(&mut self) -> Option<Incoming> {
        let mut m = VerbsIncoming { peer: 0, header: std::ptr::null(), payload: std::ptr::null(), len: 0 };
        // SAFETY: m is writable.
        if unsafe { (self.api.recv_next)(self.h, &mut m) } == 0 {
            return None;
        }
        Some(Incoming { via: Via::Verbs, peer: m.peer as usize, header: m.header as *const [u8; HEADER_LEN], payload: m.payload, len: m.len })
    }

    fn release(&mut self, peer: usize) {
        // SAFETY: live handle.
        unsafe { (self.api.release)(self.h, peer as u32) }
    }

    fn wake(&mut self, _peer: usize) {
        // A peer asleep on its completion channel wakes when our message completes there.
    }

    fn wake_self(&mut self) {
        if self.sleepers > 0 {
            let one = 1u64;
            // SAFETY: an 8-byte write of a live u64 to our eventfd.
            unsafe { libc::write(self.wake_fd.as_raw_fd(), &one as *const u64 as *const c_void, 8) };
        }
    }

    fn progress(&mut self) {
        // SAFETY: live handle.
        unsafe { (self.api.progress)(self.h) }
    }

    fn has_pending_output(&self) -> bool {
        // SAFETY: live handle.
        unsafe { (self.api.has_pending_output)(self.h) != 0 }
    }

    fn has_zcopy(&self) -> bool {
        true
    }

    fn zcopy_ready(&mut self, _peer: usize) -> bool {
        true
    }

    fn offer(&mut self, ptr: *const u8, len: usize) -> Option<u32> {
        self.drop_stale();
        let mut key = 0u32;
        // SAFETY: the engine keeps the buffer untouched until `withdraw` (rendezvous send).
        (unsafe { (self.api.offer)(self.h, ptr, len, &mut key) } != 0).then_some(key)
    }

    fn withdraw(&mut self, ptr: *const u8, len: usize) {
        // SAFETY: live handle; (ptr, len) as offered.
        unsafe { (self.api.withdraw)(self.h, ptr, len) }
    }

    unsafe fn get(&mut self, peer: usize, dst: *mut u8, remote: u64, key: u32, len: usize) -> usize {
        self.drop_stale();
        // SAFETY: caller contract (dst valid for len, remote offered by peer with key).
        unsafe { (self.api.get)(self.h, peer as u32, dst, remote, key, len) }
    }

    unsafe fn put(&mut self, peer: usize, remote: u64, key: u32, src: *const u8, len: usize) -> usize {
        self.drop_stale();
        // SAFETY: caller contract.
        unsafe { (self.api.put)(self.h, peer as u32, remote, key, src, len) }
    }

    fn prepare_sleep(&mut self) -> Option<SleepToken> {
        // SAFETY: live handle.
        let fd = unsafe { (self.api.prepare_sleep)(self.h) };
        if fd < 0 {
            return None;
        }
        self.sleepers += 1;
        Some(SleepToken::Epoll { epoll: fd, wake: self.wake_fd.as_raw_fd() })
    }

    fn end_sleep(&mut self) {}
}

impl Drop for VerbsTransport {
    fn drop(&mut self) {
        crate::memhooks::watch(false);
        // SAFETY: the handle is not used after this.
        unsafe { (self.api.close)(self.h) };
    }
}
