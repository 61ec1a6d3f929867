//! Self-test of `liboxmpi-verbs.so` on a real verbs device (Soft-RoCE in the test VM).
//!
//! The plugin is loaded the way the engine loads it: `dlopen`, the `oxmpi_verbs_plugin`
//! entry point, and nothing but the function table afterwards. Looked for at
//! `$OXMPI_VERBS_PLUGIN`, else beside this executable as `liboxmpi-verbs.so` or
//! `liboxmpi_verbs.so` (the cargo name).
//!
//! ```text
//! verbs_selftest                    ranks 0 and 1 in this process: the whole suite
//! verbs_selftest server PORT        rank 0 of a two-process run (cards over TCP)
//! verbs_selftest client HOST PORT   rank 1 of it
//! verbs_selftest fatal-child        (internal) a READ with a bad rkey, must die via fatal
//! ```
//! Prints one `PASS`/`FAIL` line per case and a closing `N passed, N failed` line; exits
//! non-zero on any failure.

use std::ffi::{c_void, CStr, CString};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};
use verbs_abi::{Handle, VerbsApi, VerbsConfig, VerbsIncoming, HEADER_LEN};

const DEADLINE: Duration = Duration::from_secs(120);
const FATAL_EXIT: i32 = 86;

// ---------------------------------------------------------------- loading the plugin

fn load() -> Result<&'static VerbsApi, String> {
    let mut candidates = Vec::new();
    if let Ok(p) = std::env::var("OXMPI_VERBS_PLUGIN") {
        candidates.push(p);
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.to_path_buf()))
    {
        candidates.push(
            dir.join(verbs_abi::PLUGIN_FILE)
                .to_string_lossy()
                .into_owned(),
        );
        candidates.push(dir.join("liboxmpi_verbs.so").to_string_lossy().into_owned());
    }
    let mut why = Vec::new();
    for path in candidates {
        if !std::path::Path::new(&path).exists() {
            continue;
        }
        let c = CString::new(path.clone()).map_err(|e| e.to_string())?;
        // SAFETY: dlopen/dlsym with NUL-terminated strings; the library stays loaded.
        unsafe {
            let lib = libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
            if lib.is_null() {
                why.push(format!(
                    "{path}: {}",
                    CStr::from_ptr(libc::dlerror()).to_string_lossy()
                ));
                continue;
            }
            let sym = libc::dlsym(lib, verbs_abi::ENTRY_SYMBOL.as_ptr() as *const libc::c_char);
            if sym.is_null() {
                why.push(format!("{path}: no entry point"));
                continue;
            }
            let entry: verbs_abi::EntryFn = std::mem::transmute(sym);
            let api = entry();
            if api.is_null() || (*api).abi_version != verbs_abi::ABI_VERSION {
                why.push(format!("{path}: other ABI version"));
                continue;
            }
            return Ok(&*api);
        }
    }
    Err(format!(
        "plugin not found ({})",
        if why.is_empty() {
            "set OXMPI_VERBS_PLUGIN".to_string()
        } else {
            why.join("; ")
        }
    ))
}

/// The engine's fatal, as the test sees it: one line on stderr, then exit.
unsafe extern "C" fn test_fatal(msg: *const u8, len: usize) -> ! {
    // SAFETY: the plugin passes len readable bytes.
    let m = String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(msg, len) }).into_owned();
    eprintln!("OxMPI fatal error: {m}");
    let code = match std::env::args().nth(1).as_deref() {
        Some("fatal-child" | "port-down-child") => FATAL_EXIT,
        _ => 1,
    };
    // SAFETY: ends the process without unwinding (we are inside the plugin's frames).
    unsafe { libc::_exit(code) }
}

// ---------------------------------------------------------------- one endpoint

struct Ep {
    api: &'static VerbsApi,
    h: Handle,
}

struct Msg {
    peer: u32,
    header: [u8; HEADER_LEN],
    payload: Vec<u8>,
}

fn c_reason(b: &[u8]) -> String {
    let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..n]).into_owned()
}

impl Ep {
    fn open(
        api: &'static VerbsApi,
        rank: u32,
        size: u32,
        peers: &[u32],
        bufs: u32,
        buf_size: u32,
    ) -> Result<Ep, String> {
        let dev = std::env::var("OXMPI_IB_DEVICE")
            .ok()
            .map(|d| CString::new(d).unwrap_or_default());
        let cfg = VerbsConfig {
            abi_version: verbs_abi::ABI_VERSION,
            rank,
            size,
            peers: peers.as_ptr(),
            npeers: peers.len() as u32,
            device: dev
                .as_ref()
                .map_or(std::ptr::null(), |d| d.as_ptr() as *const u8),
            port: 0,
            gid_index: -1,
            buf_size,
            bufs_per_peer: bufs,
            reg_cache_bytes: 256 << 20,
            verbose: std::env::var("OXMPI_VERBOSE").is_ok_and(|v| v == "1") as u32,
            fatal: test_fatal,
        };
        let mut err = [0u8; 512];
        // SAFETY: cfg and what it points to live across the call; err is writable.
        let h = unsafe { (api.open)(&cfg, err.as_mut_ptr(), err.len()) };
        if h.is_null() {
            return Err(c_reason(&err));
        }
        hooks_add(api, h);
        Ok(Ep { api, h })
    }

    fn describe(&self) -> String {
        let mut b = [0u8; 512];
        // SAFETY: live handle, writable buffer.
        let n = unsafe { (self.api.describe)(self.h, b.as_mut_ptr(), b.len()) };
        String::from_utf8_lossy(&b[..n]).into_owned()
    }

    fn card(&self) -> Vec<u8> {
        let mut small = [0u8; 8];
        // SAFETY: live handle; a too small buffer is not written.
        let need = unsafe { (self.api.card)(self.h, small.as_mut_ptr(), small.len()) };
        let mut b = vec![0u8; need];
        // SAFETY: as above, now large enough.
        let n = unsafe { (self.api.card)(self.h, b.as_mut_ptr(), b.len()) };
        assert_eq!(n, need);
        b
    }

    fn connect(&self, peer: u32, card: &[u8]) -> Result<(), String> {
        let mut err = [0u8; 512];
        // SAFETY: live handle; card and err valid for their lengths.
        let rc = unsafe {
            (self.api.connect)(
                self.h,
                peer,
                card.as_ptr(),
                card.len(),
                err.as_mut_ptr(),
                err.len(),
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(c_reason(&err))
        }
    }

    fn max_payload(&self) -> usize {
        // SAFETY: live handle.
        unsafe { (self.api.max_payload)(self.h) }
    }

    fn try_send(&self, peer: u32, header: &[u8; HEADER_LEN], payload: &[u8]) -> bool {
        let p = if payload.is_empty() {
            std::ptr::null()
        } else {
            payload.as_ptr()
        };
        // SAFETY: live handle; header 48 bytes; payload len bytes (null only when empty).
        unsafe { (self.api.try_send)(self.h, peer, header.as_ptr(), p, payload.len()) != 0 }
    }

    fn try_send_with(
        &self,
        peer: u32,
        header: &[u8; HEADER_LEN],
        len: usize,
        f: &mut dyn FnMut(&mut [u8]),
    ) -> bool {
        unsafe extern "C" fn call(ctx: *mut c_void, dst: *mut u8, len: usize) {
            // SAFETY: ctx is the &mut &mut dyn FnMut below, alive for the call; dst is
            // writable for len bytes (plugin contract).
            unsafe {
                let f = &mut *(ctx as *mut &mut dyn FnMut(&mut [u8]));
                f(std::slice::from_raw_parts_mut(dst, len));
            }
        }
        let mut f = f;
        // SAFETY: live handle; the context outlives the call.
        unsafe {
            (self.api.try_send_with)(
                self.h,
                peer,
                header.as_ptr(),
                len,
                call,
                &mut f as *mut _ as *mut c_void,
            ) != 0
        }
    }

    /// The next message, copied out and released.
    fn recv(&self) -> Option<Msg> {
        let mut m = VerbsIncoming {
            peer: 0,
            header: std::ptr::null(),
            payload: std::ptr::null(),
            len: 0,
        };
        // SAFETY: live handle; m writable.
        if unsafe { (self.api.recv_next)(self.h, &mut m) } == 0 {
            return None;
        }
        let mut header = [0u8; HEADER_LEN];
        // SAFETY: header/payload valid until release (plugin contract).
        let payload = unsafe {
            std::ptr::copy_nonoverlapping(m.header, header.as_mut_ptr(), HEADER_LEN);
            std::slice::from_raw_parts(m.payload, m.len).to_vec()
        };
        // SAFETY: live handle.
        unsafe { (self.api.release)(self.h, m.peer) };
        Some(Msg {
            peer: m.peer,
            header,
            payload,
        })
    }

    fn progress(&self) {
        // SAFETY: live handle.
        unsafe { (self.api.progress)(self.h) }
    }

    fn pending(&self) -> bool {
        // SAFETY: live handle.
        unsafe { (self.api.has_pending_output)(self.h) != 0 }
    }

    fn offer(&self, p: *const u8, len: usize) -> Option<u32> {
        let mut k = 0u32;
        // SAFETY: live handle; the memory stays until withdraw (the tests keep it).
        (unsafe { (self.api.offer)(self.h, p, len, &mut k) } != 0).then_some(k)
    }

    fn withdraw(&self, p: *const u8, len: usize) {
        // SAFETY: live handle.
        unsafe { (self.api.withdraw)(self.h, p, len) }
    }

    fn get(&self, peer: u32, dst: *mut u8, remote: u64, rkey: u32, len: usize) -> usize {
        // SAFETY: live handle; dst writable for len bytes.
        unsafe { (self.api.get)(self.h, peer, dst, remote, rkey, len) }
    }

    fn put(&self, peer: u32, remote: u64, rkey: u32, src: *const u8, len: usize) -> usize {
        // SAFETY: live handle; src readable for len bytes.
        unsafe { (self.api.put)(self.h, peer, remote, rkey, src, len) }
    }

    fn invalidate(&self, addr: usize, len: usize) {
        // SAFETY: live handle.
        unsafe { (self.api.invalidate)(self.h, addr, len) }
    }

    fn prepare_sleep(&self) -> i32 {
        // SAFETY: live handle.
        unsafe { (self.api.prepare_sleep)(self.h) }
    }

    fn after_sleep(&self) {
        // SAFETY: live handle.
        unsafe { (self.api.after_sleep)(self.h) }
    }
}

impl Drop for Ep {
    fn drop(&mut self) {
        hooks_remove(self.h);
        // SAFETY: the handle is not used after this.
        unsafe { (self.api.close)(self.h) }
    }
}

// ---------------------------------------------------------------- data patterns

fn header(seq: u32, len: usize) -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[0..4].copy_from_slice(b"OXT1");
    h[4..8].copy_from_slice(&seq.to_le_bytes());
    h[8..16].copy_from_slice(&(len as u64).to_le_bytes());
    for (i, b) in h[16..].iter_mut().enumerate() {
        *b = (seq as u8).wrapping_mul(3).wrapping_add(i as u8);
    }
    h
}

fn byte(seq: u32, i: usize) -> u8 {
    (seq.wrapping_mul(131) as usize ^ i.wrapping_mul(7) ^ (i >> 8)) as u8
}

fn payload(seq: u32, len: usize) -> Vec<u8> {
    (0..len).map(|i| byte(seq, i)).collect()
}

/// Checks a received message against what `seq` carried; Err names the difference.
fn check(m: &Msg, from: u32, seq: u32) -> Result<(), String> {
    if m.peer != from {
        return Err(format!("message from rank {} instead of {from}", m.peer));
    }
    if &m.header[0..4] != b"OXT1" {
        return Err("bad header magic".into());
    }
    let got = u32::from_le_bytes(m.header[4..8].try_into().unwrap());
    if got != seq {
        return Err(format!("message {got} arrived where {seq} was due (order)"));
    }
    let len = u64::from_le_bytes(m.header[8..16].try_into().unwrap()) as usize;
    if m.header != header(seq, len) {
        return Err(format!("message {seq}: header corrupted"));
    }
    if m.payload.len() != len {
        return Err(format!(
            "message {seq}: {} payload bytes, {len} sent",
            m.payload.len()
        ));
    }
    if let Some(i) = (0..len).find(|&i| m.payload[i] != byte(seq, i)) {
        return Err(format!("message {seq} ({len} B): byte {i} differs"));
    }
    Ok(())
}

fn fill_pattern(p: *mut u8, len: usize, salt: u64) {
    // SAFETY: p is writable for len bytes (callers' buffers); 8-byte words then the tail.
    let s = unsafe { std::slice::from_raw_parts_mut(p, len) };
    for (i, c) in s.chunks_mut(8).enumerate() {
        let w = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt;
        c.copy_from_slice(&w.to_le_bytes()[..c.len()]);
    }
}

fn check_pattern(p: *const u8, len: usize, salt: u64) -> Result<(), String> {
    // SAFETY: p is readable for len bytes.
    let s = unsafe { std::slice::from_raw_parts(p, len) };
    for (i, c) in s.chunks(8).enumerate() {
        let w = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt;
        if c != &w.to_le_bytes()[..c.len()] {
            return Err(format!("byte {} of {len} differs (salt {salt:#x})", i * 8));
        }
    }
    Ok(())
}

/// Anonymous memory, page-aligned, unmapped on drop.
struct Region {
    p: *mut u8,
    len: usize,
}

impl Region {
    fn new(len: usize) -> Region {
        Region::at(std::ptr::null_mut(), len).expect("mmap")
    }

    /// At `addr` exactly (MAP_FIXED_NOREPLACE) when addr is not null.
    fn at(addr: *mut u8, len: usize) -> Option<Region> {
        let flags = libc::MAP_PRIVATE
            | libc::MAP_ANONYMOUS
            | if addr.is_null() {
                0
            } else {
                libc::MAP_FIXED_NOREPLACE
            };
        // SAFETY: a new anonymous mapping; NOREPLACE never clobbers an existing one.
        let p = unsafe {
            libc::mmap(
                addr as *mut c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED || (!addr.is_null() && p as *mut u8 != addr) {
            return None;
        }
        Some(Region {
            p: p as *mut u8,
            len,
        })
    }
}

/// Live handles, told about every unmapping as the engine's munmap hooks tell the plugin
/// (a registration cache must never serve a range that was unmapped and mapped again).
static LIVE: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());

fn hooks_add(api: &'static VerbsApi, h: Handle) {
    LIVE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((api as *const VerbsApi as usize, h as usize));
}

fn hooks_remove(h: Handle) {
    LIVE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|&(_, x)| x != h as usize);
}

fn hooks_unmap(addr: usize, len: usize) {
    for &(api, h) in LIVE.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        // SAFETY: entries are live handles of the loaded plugin (removed at close).
        unsafe { ((*(api as *const VerbsApi)).invalidate)(h as Handle, addr, len) };
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        hooks_unmap(self.p as usize, self.len);
        // SAFETY: our own mapping.
        unsafe { libc::munmap(self.p as *mut c_void, self.len) };
    }
}

// ---------------------------------------------------------------- reporting

struct Report {
    pass: u32,
    fail: u32,
}

impl Report {
    fn run(&mut self, name: &str, f: impl FnOnce() -> Result<String, String>) {
        let t = Instant::now();
        let r = f();
        let secs = t.elapsed().as_secs_f64();
        match r {
            Ok(note) => {
                self.pass += 1;
                println!(
                    "PASS: {name} ({secs:.2}s){}{note}",
                    if note.is_empty() { "" } else { ": " }
                );
            }
            Err(e) => {
                self.fail += 1;
                println!("FAIL: {name} ({secs:.2}s): {e}");
            }
        }
        let _ = std::io::stdout().flush();
    }

    fn finish(&self) -> ! {
        println!("{} passed, {} failed", self.pass, self.fail);
        std::process::exit(if self.fail == 0 { 0 } else { 1 })
    }
}

fn deadline_check(t: Instant, what: &str) -> Result<(), String> {
    if t.elapsed() > DEADLINE {
        return Err(format!("timed out: {what}"));
    }
    Ok(())
}

// ---------------------------------------------------------------- in-process pair

struct Pair {
    a: Ep,
    b: Ep,
}

fn pair(api: &'static VerbsApi, bufs: u32, buf_size: u32) -> Result<Pair, String> {
    let a = Ep::open(api, 0, 2, &[1], bufs, buf_size)?;
    let b = Ep::open(api, 1, 2, &[0], bufs, buf_size)?;
    let (ca, cb) = (a.card(), b.card());
    a.connect(1, &cb)?;
    b.connect(0, &ca)?;
    Ok(Pair { a, b })
}

impl Pair {
    fn ep(&self, rank: u32) -> &Ep {
        if rank == 0 {
            &self.a
        } else {
            &self.b
        }
    }

    fn progress(&self) {
        self.a.progress();
        self.b.progress();
    }

    /// Sends `seq` of `len` bytes from `from`, retrying after progress of both sides.
    fn send(&self, from: u32, seq: u32, len: usize) -> Result<(), String> {
        let (h, p) = (header(seq, len), payload(seq, len));
        let t = Instant::now();
        while !self.ep(from).try_send(1 - from, &h, &p) {
            self.progress();
            deadline_check(t, "send never found credit")?;
        }
        Ok(())
    }

    fn recv(&self, at: u32) -> Result<Msg, String> {
        let t = Instant::now();
        loop {
            if let Some(m) = self.ep(at).recv() {
                return Ok(m);
            }
            self.progress();
            deadline_check(t, "no message arrived")?;
        }
    }

    /// Until neither side has output pending.
    fn drain(&self) -> Result<(), String> {
        let t = Instant::now();
        while self.a.pending() || self.b.pending() {
            self.progress();
            while self.a.recv().is_some() || self.b.recv().is_some() {}
            deadline_check(t, "pending output never drained")?;
        }
        Ok(())
    }
}

/// A one-way flood of `n` messages of `len` bytes from `from`; the receiver only starts
/// consuming once the sender is out of credits (checked), and the sender keeps retrying.
fn flood_one_way(p: &Pair, from: u32, n: u32, len: usize, window: u32) -> Result<String, String> {
    let to = 1 - from;
    let (s, r) = (p.ep(from), p.ep(to));
    // Quiet first: earlier traffic's credits go home (a receiver sends an explicit credit
    // message from progress once half a window is owed).
    p.drain()?;
    for _ in 0..100 {
        p.progress();
    }
    let t = Instant::now();
    // Phase 1: no receiver activity: the sender must stop at the credit window.
    let mut sent = 0u32;
    let mut refused = 0;
    while refused < 1000 && sent < n {
        if s.try_send(to, &header(sent, len), &payload(sent, len)) {
            sent += 1;
        } else {
            refused += 1;
            s.progress();
        }
    }
    // Up to T - 1 credits (T = half the window) may still be owed from earlier traffic:
    // below the explicit-message threshold they wait for a message to ride on.
    let min = window - window.div_ceil(2) + 1;
    if sent < min.min(n) || sent > window {
        return Err(format!("the sender took {sent} messages before the receiver released any; the credit window is {window}"));
    }
    let first = sent;
    // Phase 2: both run; the receiver releases what it gets.
    let mut got = 0u32;
    let mut stalls = 0u64;
    while got < n {
        while sent < n {
            if s.try_send(to, &header(sent, len), &payload(sent, len)) {
                sent += 1;
            } else {
                stalls += 1;
                break;
            }
        }
        s.progress();
        r.progress();
        while let Some(m) = r.recv() {
            check(&m, from, got)?;
            got += 1;
        }
        deadline_check(
            t,
            &format!("flood stuck at {got}/{n} received, {sent} sent"),
        )?;
    }
    let secs = t.elapsed().as_secs_f64();
    Ok(format!("{n} x {len} B, stopped after {first} (window {window}), {stalls} credit stalls, {:.0} msg/s", n as f64 / secs))
}

/// Both sides send `n` messages to each other at once, receiving only every few rounds so
/// both run out of credits at the same time.
fn flood_both(p: &Pair, n: u32, len: usize) -> Result<String, String> {
    p.drain()?;
    let t = Instant::now();
    let (mut sent, mut got) = ([0u32; 2], [0u32; 2]);
    let mut round = 0u64;
    let mut both_blocked = 0u64;
    while got[0] < n || got[1] < n {
        round += 1;
        let mut blocked = [false; 2];
        for from in 0..2u32 {
            let e = p.ep(from);
            let mut k = 0;
            while sent[from as usize] < n && k < 64 {
                let s = sent[from as usize];
                let l = if s % 7 == 0 {
                    0
                } else {
                    (s as usize * 37) % (len + 1)
                };
                if !e.try_send(1 - from, &header(s, l), &payload(s, l)) {
                    blocked[from as usize] = true;
                    break;
                }
                sent[from as usize] += 1;
                k += 1;
            }
        }
        if blocked[0] && blocked[1] {
            both_blocked += 1;
        }
        p.progress();
        if round.is_multiple_of(4) {
            for at in 0..2u32 {
                while let Some(m) = p.ep(at).recv() {
                    let s = got[at as usize];
                    check(&m, 1 - at, s)?;
                    got[at as usize] += 1;
                }
            }
        }
        deadline_check(
            t,
            &format!("bidirectional flood stuck: sent {sent:?} received {got:?}"),
        )?;
    }
    if both_blocked == 0 {
        return Err(
            "the two sides were never out of credits at the same time (test too gentle)".into(),
        );
    }
    Ok(format!(
        "{n} each way, both sides out of credits in {both_blocked} rounds"
    ))
}

fn offer_get(p: &Pair, len: usize, salt: u64) -> Result<String, String> {
    let src = Region::new(len);
    let dst = Region::new(len);
    fill_pattern(src.p, len, salt);
    // SAFETY: dst is writable for len bytes.
    unsafe { std::ptr::write_bytes(dst.p, 0, len) };
    let key = p.a.offer(src.p, len).ok_or("offer failed")?;
    let t = Instant::now();
    let n = p.b.get(0, dst.p, src.p as u64, key, len);
    let secs = t.elapsed().as_secs_f64();
    p.a.withdraw(src.p, len);
    if n != len {
        return Err(format!("get returned {n} of {len}"));
    }
    check_pattern(dst.p, len, salt)?;
    Ok(format!("{:.1} MB/s", len as f64 / secs / 1e6))
}

fn put_test(p: &Pair, len: usize) -> Result<String, String> {
    let target = Region::new(len);
    let src = Region::new(len);
    // SAFETY: target is writable for len bytes.
    unsafe { std::ptr::write_bytes(target.p, 0, len) };
    fill_pattern(src.p, len, 0x5151);
    let key = p.b.offer(target.p, len).ok_or("offer failed")?;
    let t = Instant::now();
    let n = p.a.put(1, target.p as u64, key, src.p, len);
    let secs = t.elapsed().as_secs_f64();
    p.b.withdraw(target.p, len);
    if n != len {
        return Err(format!("put returned {n} of {len}"));
    }
    check_pattern(target.p, len, 0x5151)?;
    Ok(format!("{:.1} MB/s", len as f64 / secs / 1e6))
}

/// A buffer is cached (offered and read), unmapped and replaced at the same address with
/// other contents: after `invalidate`, the next transfer must see the new pages, on the
/// offering side and on the reading side alike.
fn stale_registration(p: &Pair) -> Result<String, String> {
    let len = 2 << 20;
    // Offering side.
    let src = Region::new(len);
    fill_pattern(src.p, len, 0xa1);
    let dst = Region::new(len);
    let key = p.a.offer(src.p, len).ok_or("offer failed")?;
    if p.b.get(0, dst.p, src.p as u64, key, len) != len {
        return Err("first get failed".into());
    }
    p.a.withdraw(src.p, len);
    check_pattern(dst.p, len, 0xa1)?;
    let addr = src.p;
    p.a.invalidate(addr as usize, len);
    drop(src);
    let src2 = Region::at(addr, len).ok_or("could not map the same address again")?;
    fill_pattern(src2.p, len, 0xb2);
    let key2 = p.a.offer(src2.p, len).ok_or("second offer failed")?;
    if p.b.get(0, dst.p, src2.p as u64, key2, len) != len {
        return Err("second get failed".into());
    }
    p.a.withdraw(src2.p, len);
    check_pattern(dst.p, len, 0xb2)
        .map_err(|e| format!("offering side replaced: stale bytes arrived: {e}"))?;
    // Reading side: dst (cached by the gets above) is replaced.
    let daddr = dst.p;
    p.b.invalidate(daddr as usize, len);
    drop(dst);
    let dst2 = Region::at(daddr, len).ok_or("could not map the destination address again")?;
    // SAFETY: dst2 writable for len.
    unsafe { std::ptr::write_bytes(dst2.p, 0, len) };
    fill_pattern(src2.p, len, 0xc3);
    let key3 = p.a.offer(src2.p, len).ok_or("third offer failed")?;
    if p.b.get(0, dst2.p, src2.p as u64, key3, len) != len {
        return Err("third get failed".into());
    }
    p.a.withdraw(src2.p, len);
    check_pattern(dst2.p, len, 0xc3)
        .map_err(|e| format!("reading side replaced: bytes went to the old pages: {e}"))?;
    // An offer still in use when invalidated keeps working until withdrawn.
    fill_pattern(src2.p, len, 0xd4);
    let key4 = p.a.offer(src2.p, len).ok_or("fourth offer failed")?;
    p.a.invalidate(src2.p as usize, len);
    if p.b.get(0, dst2.p, src2.p as u64, key4, len) != len {
        return Err("get of an offer invalidated in use failed".into());
    }
    p.a.withdraw(src2.p, len);
    check_pattern(dst2.p, len, 0xd4)?;
    Ok("new pages seen on both sides".into())
}

fn sleep_wakeup(p: &Pair) -> Result<String, String> {
    p.drain()?;
    let fd = p.b.prepare_sleep();
    if fd < 0 {
        return Err("prepare_sleep returned -1 with nothing pending".into());
    }
    let poll = |ms: i32| {
        let mut f = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd.
        unsafe { libc::poll(&mut f, 1, ms) }
    };
    if poll(0) != 0 {
        return Err("the channel fd was readable before anything was sent".into());
    }
    let t = Instant::now();
    p.send(0, 7777, 100)?;
    let r = poll(10_000);
    let woke = t.elapsed();
    p.b.after_sleep();
    if r != 1 {
        return Err(format!(
            "the channel fd did not become readable (poll returned {r})"
        ));
    }
    let m = p.recv(1)?;
    check(&m, 0, 7777)?;
    // A message already there: prepare_sleep must say so.
    p.send(0, 7778, 10)?;
    let t2 = Instant::now();
    let mut fd2 = p.b.prepare_sleep();
    while fd2 >= 0 {
        // Not yet arrived: wait on the fd as the engine would, then look again.
        let mut f = libc::pollfd {
            fd: fd2,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd.
        unsafe { libc::poll(&mut f, 1, 1000) };
        p.b.after_sleep();
        deadline_check(t2, "second message never reported")?;
        fd2 = p.b.prepare_sleep();
    }
    p.b.after_sleep();
    let m = p.recv(1)?;
    check(&m, 0, 7778)?;
    Ok(format!("woke after {:.0} us", woke.as_secs_f64() * 1e6))
}

fn fatal_case() -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = std::process::Command::new(exe)
        .arg("fatal-child")
        .output()
        .map_err(|e| format!("cannot run the child: {e}"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("fatal error"))
        .unwrap_or("")
        .to_string();
    if out.status.code() != Some(FATAL_EXIT) {
        return Err(format!(
            "the child exited with {:?}, not via fatal; stderr: {err}",
            out.status
        ));
    }
    for want in ["rank 0", "RDMA READ", "IBV_WC_REM_ACCESS_ERR"] {
        if !line.contains(want) {
            return Err(format!("the fatal line lacks {want:?}: {line:?}"));
        }
    }
    Ok(line)
}

/// The child's side of `fatal_case`: must not return.
fn fatal_child(api: &'static VerbsApi) -> ! {
    let p = pair(api, 16, 4096).unwrap_or_else(|e| {
        eprintln!("child: {e}");
        std::process::exit(2)
    });
    let src = Region::new(65536);
    let dst = Region::new(65536);
    let key = p.a.offer(src.p, 65536).unwrap_or(0);
    let n = p.b.get(0, dst.p, src.p as u64, key ^ 0x00ba_d000, 65536);
    eprintln!("child: the get with a bad rkey returned {n} instead of ending the job");
    std::process::exit(3)
}

/// The child of `port_down_case`: waits in progress until the port goes down.
fn port_down_child(api: &'static VerbsApi) -> ! {
    let p = pair(api, 16, 4096).unwrap_or_else(|e| {
        eprintln!("child: {e}");
        std::process::exit(2)
    });
    println!("READY");
    let _ = std::io::stdout().flush();
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(30) {
        p.progress();
        std::thread::sleep(Duration::from_millis(1));
    }
    eprintln!("child: no fatal within 30 s of waiting");
    std::process::exit(3)
}

/// Takes the RoCE interface down under a waiting pair (VERBS_SELFTEST_PORT_DOWN=IFACE;
/// root, in the test VM): the job must end through fatal naming the port.
fn port_down_case(iface: &str) -> Result<String, String> {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .arg("port-down-child")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut line = String::new();
    let out = child.stdout.take().ok_or("no stdout")?;
    std::io::BufReader::new(out)
        .read_line(&mut line)
        .map_err(|e| e.to_string())?;
    if line.trim() != "READY" {
        let _ = child.kill();
        return Err(format!("child not ready: {line:?}"));
    }
    let down = Command::new("ip")
        .args(["link", "set", iface, "down"])
        .status();
    let res = child.wait_with_output();
    let up = Command::new("ip")
        .args(["link", "set", iface, "up"])
        .status();
    let (down, res) = (
        down.map_err(|e| e.to_string())?,
        res.map_err(|e| e.to_string())?,
    );
    let _ = up;
    if !down.success() {
        return Err("ip link set down failed".into());
    }
    let err = String::from_utf8_lossy(&res.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("fatal error"))
        .unwrap_or("")
        .to_string();
    if res.status.code() != Some(FATAL_EXIT) || !line.contains("went down") {
        return Err(format!("child exited {:?}; stderr: {err}", res.status));
    }
    Ok(line)
}

/// Three verbs ranks of a world of four (rank 3 is reached by other means, so no QP is
/// created for it): all-to-all messages in per-sender order, a get and a put between
/// different pairs, then a drain.
#[allow(clippy::needless_range_loop)]
fn three_ranks(api: &'static VerbsApi) -> Result<String, String> {
    let eps: Vec<Ep> = (0..3u32)
        .map(|r| {
            let peers: Vec<u32> = (0..3).filter(|&x| x != r).collect();
            Ep::open(api, r, 4, &peers, 12, 2048 + HEADER_LEN as u32)
        })
        .collect::<Result<_, _>>()?;
    let cards: Vec<Vec<u8>> = eps.iter().map(|e| e.card()).collect();
    for (r, e) in eps.iter().enumerate() {
        for (q, c) in cards.iter().enumerate() {
            if q != r {
                e.connect(q as u32, c)?;
            }
        }
    }
    if eps[0].connect(3, &cards[1]).is_ok() {
        return Err("connected to rank 3, which is no verbs peer".into());
    }
    const N: u32 = 600;
    let t = Instant::now();
    let mut sent = [[0u32; 3]; 3];
    let mut got = [[0u32; 3]; 3];
    let total = 6 * N;
    let mut done = 0;
    while done < total {
        for from in 0..3usize {
            for to in 0..3usize {
                if from == to || sent[from][to] >= N {
                    continue;
                }
                let s = sent[from][to];
                let len = (s as usize * 13 + from * 100 + to) % 2049;
                if eps[from].try_send(to as u32, &header(s, len), &payload(s, len)) {
                    sent[from][to] += 1;
                }
            }
        }
        for (at, e) in eps.iter().enumerate() {
            e.progress();
            while let Some(m) = e.recv() {
                let from = m.peer as usize;
                if from >= 3 || from == at {
                    return Err(format!("rank {at} got a message from rank {from}"));
                }
                check(&m, from as u32, got[from][at])?;
                got[from][at] += 1;
                done += 1;
            }
        }
        deadline_check(
            t,
            &format!("all-to-all stuck: sent {sent:?} received {got:?}"),
        )?;
    }
    // Rank 2 reads what rank 0 offers; rank 1 writes into what rank 2 offers.
    let len = 3 << 20;
    let src = Region::new(len);
    fill_pattern(src.p, len, 0xabc);
    let dst = Region::new(len);
    let key = eps[0].offer(src.p, len).ok_or("offer failed")?;
    if eps[2].get(0, dst.p, src.p as u64, key, len) != len {
        return Err("get failed".into());
    }
    eps[0].withdraw(src.p, len);
    check_pattern(dst.p, len, 0xabc)?;
    let key2 = eps[2].offer(dst.p, len).ok_or("offer failed")?;
    fill_pattern(src.p, len, 0xdef);
    if eps[1].put(2, dst.p as u64, key2, src.p, len) != len {
        return Err("put failed".into());
    }
    eps[2].withdraw(dst.p, len);
    check_pattern(dst.p, len, 0xdef)?;
    let t = Instant::now();
    while eps.iter().any(|e| e.pending()) {
        for e in &eps {
            e.progress();
            while e.recv().is_some() {}
        }
        deadline_check(t, "drain")?;
    }
    Ok(format!(
        "{total} messages all-to-all, card {} B",
        cards[0].len()
    ))
}

fn suite(api: &'static VerbsApi) -> ! {
    let mut rep = Report { pass: 0, fail: 0 };
    const BUFS: u32 = 16;
    const BUF_SIZE: u32 = 8192 + HEADER_LEN as u32;
    let window = BUFS - 2;

    // Opening problems come back as reasons.
    rep.run("open reports a missing device", || {
        match Ep::open_named(api, "no_such_dev0") {
            Ok(_) => Err("opened a device that does not exist".into()),
            Err(e) if e.contains("no_such_dev0") && e.contains("not found") => Ok(e),
            Err(e) => Err(format!("unclear reason: {e}")),
        }
    });
    rep.run("probe (no peers)", || {
        let e = Ep::open(api, 0, 1, &[], BUFS, BUF_SIZE)?;
        Ok(e.describe())
    });

    let p = match pair(api, BUFS, BUF_SIZE) {
        Ok(p) => p,
        Err(e) => {
            rep.run("open and connect two handles", || Err(e));
            rep.finish();
        }
    };
    rep.run("open and connect two handles", || {
        Ok(format!("rank 0: {}", p.a.describe()))
    });
    rep.run("card and connect errors", || {
        let c = p.a.card();
        if c.len() != 56 + 4 * 2 {
            return Err(format!("card of {} bytes", c.len()));
        }
        match p.b.connect(0, &c) {
            Err(e) if e.contains("connected already") => {}
            r => return Err(format!("second connect: {r:?}")),
        }
        match p.b.connect(0, &c[..10]) {
            Err(_) => Ok("rejected".into()),
            Ok(()) => Err("accepted a truncated card".into()),
        }
    });
    let maxp = p.a.max_payload();
    rep.run(
        "messages of 0, 1, 4000 and max_payload bytes, both ways, in order",
        || {
            if maxp != BUF_SIZE as usize - HEADER_LEN {
                return Err(format!("max_payload {maxp}"));
            }
            let sizes = [0usize, 0, 1, 4000, maxp, 1, 0, maxp, 100, 200, 300];
            for from in [0u32, 1] {
                for (i, &len) in sizes.iter().enumerate() {
                    p.send(from, i as u32, len)?;
                }
                for (i, _) in sizes.iter().enumerate() {
                    check(&p.recv(1 - from)?, from, i as u32)?;
                }
            }
            // Interleaved: a message each way at a time.
            for (i, &len) in sizes.iter().enumerate() {
                p.send(0, 100 + i as u32, len)?;
                p.send(1, 200 + i as u32, len)?;
                check(&p.recv(1)?, 0, 100 + i as u32)?;
                check(&p.recv(0)?, 1, 200 + i as u32)?;
            }
            Ok(format!("max_payload {maxp}"))
        },
    );
    rep.run("try_send_with (inline and slot sizes)", || {
        for (i, &len) in [0usize, 5, 150, 1000, 5000, maxp].iter().enumerate() {
            let seq = 300 + i as u32;
            let h = header(seq, len);
            let t = Instant::now();
            while !p.a.try_send_with(1, &h, len, &mut |dst: &mut [u8]| {
                for (j, b) in dst.iter_mut().enumerate() {
                    *b = byte(seq, j);
                }
            }) {
                p.progress();
                deadline_check(t, "try_send_with never sent")?;
            }
            check(&p.recv(1)?, 0, seq)?;
        }
        Ok(String::new())
    });
    rep.run(
        "credit exhaustion and recovery: 10000 one-way messages 0 -> 1",
        || flood_one_way(&p, 0, 10_000, 64, window),
    );
    rep.run(
        "credit exhaustion and recovery: 10000 one-way messages 1 -> 0 (slot sizes)",
        || flood_one_way(&p, 1, 10_000, 2000, window),
    );
    rep.run("bidirectional flood", || flood_both(&p, 5000, 3000));
    rep.run(
        "has_pending_output drains (unsignalled sends flushed)",
        || {
            p.drain()?;
            // A few small sends: unsignalled (every 16th asks for a completion), so only the
            // flush that has_pending_output posts can show them done.
            for i in 0..3 {
                p.send(0, 900 + i, 8)?;
            }
            let before = p.a.pending();
            let t = Instant::now();
            while p.a.pending() {
                p.a.progress();
                deadline_check(t, "pending output never drained")?;
            }
            for i in 0..3 {
                check(&p.recv(1)?, 0, 900 + i)?;
            }
            if !before {
                return Err("has_pending_output was false right after three sends".into());
            }
            Ok(format!(
                "drained in {:.0} us",
                t.elapsed().as_secs_f64() * 1e6
            ))
        },
    );
    rep.run("offer + get 1 MiB", || offer_get(&p, 1 << 20, 0x11));
    rep.run("offer + get 64 MiB", || offer_get(&p, 64 << 20, 0x22));
    rep.run("offer + get of an odd length at an odd address", || {
        let r = Region::new(1 << 20);
        let d = Region::new(1 << 20);
        // SAFETY: offsets stay within the regions.
        let (s, t) = unsafe { (r.p.add(13), d.p.add(4091)) };
        let len = 700_001;
        fill_pattern(s, len, 0x33);
        let key = p.a.offer(s, len).ok_or("offer failed")?;
        let n = p.b.get(0, t, s as u64, key, len);
        p.a.withdraw(s, len);
        if n != len {
            return Err(format!("get returned {n}"));
        }
        check_pattern(t, len, 0x33)?;
        Ok(String::new())
    });
    rep.run("put 1 MiB", || put_test(&p, 1 << 20));
    rep.run(
        "stale registration after munmap + mmap at the same address",
        || stale_registration(&p),
    );
    rep.run("prepare_sleep fd wakes on a message", || sleep_wakeup(&p));
    rep.run(
        "bad rkey ends the job with one line naming the peer and status",
        fatal_case,
    );
    rep.run("final drain and close", || {
        p.drain()?;
        drop(p);
        Ok(String::new())
    });
    rep.run(
        "three ranks of four: all-to-all, get and put between other pairs",
        || three_ranks(api),
    );
    if let Ok(iface) = std::env::var("VERBS_SELFTEST_PORT_DOWN") {
        rep.run("the port going down ends the job", || {
            port_down_case(&iface)
        });
    }
    // Small pieces: a transfer split into many READs, more than max_rd_atomic at a time.
    std::env::set_var("OXMPI_VERBS_RDMA_PIECE", "16384");
    match pair(api, 8, 1024) {
        Ok(q) => {
            rep.run("get 16 MiB in 16 KiB pieces (rd_atomic window)", || {
                offer_get(&q, 16 << 20, 0x44)
            });
            rep.run("put 4 MiB in 16 KiB pieces", || put_test(&q, 4 << 20));
            rep.run("small buffers (8 x 1024 B): one-way flood", || {
                flood_one_way(&q, 0, 3000, 900, 6)
            });
            rep.run("small buffers: bidirectional flood", || {
                flood_both(&q, 3000, 900)
            });
            rep.run("small buffers: drain", || q.drain().map(|_| String::new()));
        }
        Err(e) => rep.run("second pair", || Err(e)),
    }
    rep.finish()
}

impl Ep {
    fn open_named(api: &'static VerbsApi, dev: &str) -> Result<Ep, String> {
        std::env::set_var("OXMPI_IB_DEVICE", dev);
        let r = Ep::open(api, 0, 2, &[1], 8, 1024);
        std::env::remove_var("OXMPI_IB_DEVICE");
        r
    }
}

// ---------------------------------------------------------------- two processes

/// Cards and small control values over TCP, each as a u32 length + bytes.
struct Ctl(TcpStream);

impl Ctl {
    fn send(&mut self, b: &[u8]) -> Result<(), String> {
        self.0
            .write_all(&(b.len() as u32).to_le_bytes())
            .and_then(|_| self.0.write_all(b))
            .map_err(|e| format!("control socket: {e}"))
    }

    fn recv(&mut self) -> Result<Vec<u8>, String> {
        let mut n = [0u8; 4];
        self.0
            .read_exact(&mut n)
            .map_err(|e| format!("control socket: {e}"))?;
        let mut b = vec![0u8; u32::from_le_bytes(n) as usize];
        self.0
            .read_exact(&mut b)
            .map_err(|e| format!("control socket: {e}"))?;
        Ok(b)
    }

    fn barrier(&mut self) -> Result<(), String> {
        self.send(b"B")?;
        self.recv().map(|_| ())
    }

    fn send_u64s(&mut self, v: &[u64]) -> Result<(), String> {
        let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.send(&b)
    }

    fn recv_u64s(&mut self) -> Result<Vec<u64>, String> {
        Ok(self
            .recv()?
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect())
    }
}

/// One side's loop of a two-process exchange: send `n_out` messages and receive `n_in`.
fn exchange(
    e: &Ep,
    peer: u32,
    n_out: u32,
    n_in: u32,
    len_of: impl Fn(u32) -> usize,
) -> Result<(), String> {
    let t = Instant::now();
    let (mut sent, mut got) = (0u32, 0u32);
    while sent < n_out || got < n_in {
        while sent < n_out
            && e.try_send(
                peer,
                &header(sent, len_of(sent)),
                &payload(sent, len_of(sent)),
            )
        {
            sent += 1;
        }
        e.progress();
        while let Some(m) = e.recv() {
            check(&m, peer, got)?;
            got += 1;
        }
        deadline_check(
            t,
            &format!("exchange stuck: sent {sent}/{n_out}, received {got}/{n_in}"),
        )?;
    }
    // The peer may still need our credits and completions: drain.
    while e.pending() {
        e.progress();
        deadline_check(t, "pending output never drained")?;
    }
    Ok(())
}

fn two_process(api: &'static VerbsApi, server: bool, host: &str, port: u16) -> ! {
    let mut rep = Report { pass: 0, fail: 0 };
    let (me, peer) = if server { (0u32, 1u32) } else { (1, 0) };
    let stream = if server {
        let l = TcpListener::bind(("0.0.0.0", port)).unwrap_or_else(|e| {
            println!("FAIL: listen on {port}: {e}");
            std::process::exit(1)
        });
        l.accept().map(|(s, _)| s)
    } else {
        let t = Instant::now();
        loop {
            match TcpStream::connect((host, port)) {
                Ok(s) => break Ok(s),
                Err(e) if t.elapsed() < Duration::from_secs(60) => {
                    let _ = e;
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(e) => break Err(e),
            }
        }
    };
    let mut ctl = match stream {
        Ok(s) => Ctl(s),
        Err(e) => {
            println!("FAIL: control connection: {e}");
            std::process::exit(1)
        }
    };
    let _ = ctl.0.set_nodelay(true);
    const BUFS: u32 = 16;
    let ep = match Ep::open(api, me, 2, &[peer], BUFS, 8192 + HEADER_LEN as u32) {
        Ok(e) => e,
        Err(e) => {
            println!("FAIL: open: {e}");
            std::process::exit(1)
        }
    };
    rep.run("exchange cards over TCP and connect", || {
        ctl.send(&ep.card())?;
        let c = ctl.recv()?;
        ep.connect(peer, &c)?;
        ctl.barrier()?;
        Ok(ep.describe())
    });
    if rep.fail > 0 {
        rep.finish();
    }
    let maxp = ep.max_payload();
    rep.run(
        "messages of 0, 1, 4000 and max_payload bytes both ways",
        || {
            let sizes = [0usize, 1, 4000, maxp, 0, 17];
            exchange(&ep, peer, sizes.len() as u32, sizes.len() as u32, |s| {
                sizes[s as usize]
            })?;
            ctl.barrier()?;
            Ok(String::new())
        },
    );
    rep.run("10000 one-way messages rank 0 -> rank 1", || {
        let t = Instant::now();
        if server {
            exchange(&ep, peer, 10_000, 0, |_| 64)?;
        } else {
            exchange(&ep, peer, 0, 10_000, |_| 64)?;
        }
        ctl.barrier()?;
        Ok(format!("{:.0} msg/s", 10_000.0 / t.elapsed().as_secs_f64()))
    });
    rep.run("10000 one-way messages rank 1 -> rank 0 (2000 B)", || {
        if server {
            exchange(&ep, peer, 0, 10_000, |_| 2000)?;
        } else {
            exchange(&ep, peer, 10_000, 0, |_| 2000)?;
        }
        ctl.barrier().map(|_| String::new())
    });
    // VERBS_SELFTEST_REPEAT=n repeats this one (a stress run).
    let repeat: u32 = std::env::var("VERBS_SELFTEST_REPEAT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    for r in 0..repeat.max(1) {
        let name = if repeat > 1 {
            format!("bidirectional flood 5000 each way (round {r})")
        } else {
            "bidirectional flood 5000 each way".to_string()
        };
        rep.run(&name, || {
            exchange(&ep, peer, 5000, 5000, |s| (s as usize * 37) % 3001)?;
            ctl.barrier().map(|_| String::new())
        });
    }
    for (name, len) in [("get 1 MiB", 1usize << 20), ("get 64 MiB", 64 << 20)] {
        rep.run(name, || {
            // Rank 0 offers, rank 1 reads.
            if server {
                let r = Region::new(len);
                fill_pattern(r.p, len, len as u64);
                let key = ep.offer(r.p, len).ok_or("offer failed")?;
                ctl.send_u64s(&[r.p as u64, key as u64])?;
                ctl.barrier()?;
                ep.withdraw(r.p, len);
                Ok(String::new())
            } else {
                let v = ctl.recv_u64s()?;
                let d = Region::new(len);
                let t = Instant::now();
                let n = ep.get(peer, d.p, v[0], v[1] as u32, len);
                let secs = t.elapsed().as_secs_f64();
                let r = if n != len {
                    Err(format!("get returned {n}"))
                } else {
                    check_pattern(d.p, len, len as u64)
                };
                ctl.barrier()?;
                r.map(|_| format!("{:.1} MB/s", len as f64 / secs / 1e6))
            }
        });
    }
    rep.run("put 1 MiB", || {
        let len = 1 << 20;
        // Rank 1 offers a target, rank 0 writes it.
        if server {
            let v = ctl.recv_u64s()?;
            let s = Region::new(len);
            fill_pattern(s.p, len, 0x77);
            let n = ep.put(peer, v[0], v[1] as u32, s.p, len);
            ctl.barrier()?;
            if n != len {
                return Err(format!("put returned {n}"));
            }
            Ok(String::new())
        } else {
            let r = Region::new(len);
            let key = ep.offer(r.p, len).ok_or("offer failed")?;
            ctl.send_u64s(&[r.p as u64, key as u64])?;
            ctl.barrier()?;
            ep.withdraw(r.p, len);
            check_pattern(r.p, len, 0x77).map(|_| String::new())
        }
    });
    rep.run(
        "prepare_sleep fd wakes on a message from the other process",
        || {
            if server {
                ctl.barrier()?; // the client is armed
                let t = Instant::now();
                while !ep.try_send(peer, &header(0, 10), &payload(0, 10)) {
                    ep.progress();
                    deadline_check(t, "send")?;
                }
                ctl.barrier()?;
                Ok(String::new())
            } else {
                let fd = ep.prepare_sleep();
                if fd < 0 {
                    return Err("prepare_sleep returned -1 with nothing pending".into());
                }
                ctl.barrier()?;
                let mut f = libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one live pollfd.
                let r = unsafe { libc::poll(&mut f, 1, 20_000) };
                ep.after_sleep();
                ctl.barrier()?;
                if r != 1 {
                    return Err(format!("poll returned {r}"));
                }
                let t = Instant::now();
                loop {
                    if let Some(m) = ep.recv() {
                        check(&m, peer, 0)?;
                        break;
                    }
                    ep.progress();
                    deadline_check(t, "message")?;
                }
                Ok(String::new())
            }
        },
    );
    rep.run("drain and close", || {
        let t = Instant::now();
        while ep.pending() {
            ep.progress();
            deadline_check(t, "drain")?;
        }
        ctl.barrier()?;
        Ok(String::new())
    });
    drop(ep);
    rep.finish()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let api = match load() {
        Ok(a) => a,
        Err(e) => {
            println!("FAIL: load the plugin: {e}");
            println!("0 passed, 1 failed");
            std::process::exit(1)
        }
    };
    match args.get(1).map(String::as_str) {
        None => suite(api),
        Some("fatal-child") => fatal_child(api),
        Some("port-down-child") => port_down_child(api),
        Some("server") => {
            let port = args.get(2).and_then(|p| p.parse().ok()).unwrap_or(18515);
            two_process(api, true, "", port)
        }
        Some("client") if args.len() >= 3 => {
            let port = args.get(3).and_then(|p| p.parse().ok()).unwrap_or(18515);
            two_process(api, false, &args[2], port)
        }
        _ => {
            eprintln!("usage: verbs_selftest [server PORT | client HOST PORT]");
            std::process::exit(2)
        }
    }
}
