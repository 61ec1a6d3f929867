//! `liboxmpi-verbs.so`: OxMPI's RDMA verbs transport, a plugin the engine `dlopen`s and
//! calls through the C table of `verbs_abi` (so `libmpi.so.12` never needs libibverbs).
//!
//! Modules, one concept each:
//! * `device`: device, port and address (LID / RoCE v2 GID) discovery
//! * `card`: the business card peers exchange to connect
//! * `qp`: RC queue pair creation and state transitions
//! * `credit`: the flow-control protocol and its no-deadlock argument
//! * `eager`: pools, send slots, selective signalling, SEND/receive/release
//! * `regcache`: the registration cache
//! * `rdma`: offers, RDMA READ (`get`) and WRITE (`put`)
//! * `transport`: the handle's state: open/close, completions, progress, sleeping
//! * `error`: reasons and the fatal line
//!
//! This file is the exported table: argument checks and handle glue only. No panic may
//! cross it (the crate is built with `panic = "abort"` besides); errors are returned or,
//! where the ABI has no error return, end the job through the engine's `fatal`.
//!
//! Thread safety: none inside; the engine calls one function at a time (its lock).

pub mod card;
pub mod credit;
pub mod device;
pub mod eager;
pub mod error;
pub mod qp;
pub mod rdma;
pub mod regcache;
pub mod transport;

use std::ffi::c_void;
use transport::Verbs;
use verbs_abi::{FillFn, Handle, VerbsApi, VerbsConfig, VerbsIncoming};

/// The handle as our state.
///
/// # Safety
/// `h` must be a handle from `open` not yet closed.
#[inline]
unsafe fn state<'a>(h: Handle) -> &'a mut Verbs {
    // SAFETY: handles are Box<Verbs> pointers from `open` (caller contract); the engine
    // calls one function at a time, so this is the only reference.
    unsafe { &mut *(h as *mut Verbs) }
}

unsafe extern "C" fn open(cfg: *const VerbsConfig, err: *mut u8, err_len: usize) -> Handle {
    if cfg.is_null() {
        // SAFETY: err is null or writable for err_len (ABI).
        unsafe { error::write_c_string("no configuration", err, err_len) };
        return std::ptr::null_mut();
    }
    // SAFETY: cfg points at a live VerbsConfig whose pointers are valid (ABI).
    match unsafe { Verbs::open(&*cfg) } {
        Ok(v) => Box::into_raw(v) as Handle,
        Err(e) => {
            // SAFETY: as above.
            unsafe { error::write_c_string(&e.0, err, err_len) };
            std::ptr::null_mut()
        }
    }
}

unsafe extern "C" fn describe(h: Handle, buf: *mut u8, cap: usize) -> usize {
    // SAFETY: live handle (ABI).
    let s = unsafe { state(h) }.describe();
    // SAFETY: buf is writable for cap bytes (ABI).
    unsafe { error::write_c_string(&s, buf, cap) }
}

unsafe extern "C" fn card(h: Handle, buf: *mut u8, cap: usize) -> usize {
    // SAFETY: live handle (ABI).
    let v = unsafe { state(h) };
    let need = v.card(&mut []);
    if buf.is_null() || cap < need {
        return need;
    }
    // SAFETY: buf is writable for cap >= need bytes (ABI).
    v.card(unsafe { std::slice::from_raw_parts_mut(buf, need) })
}

unsafe extern "C" fn connect(
    h: Handle,
    peer: u32,
    card: *const u8,
    len: usize,
    err: *mut u8,
    err_len: usize,
) -> i32 {
    let bytes = if card.is_null() || len == 0 {
        &[][..]
    } else {
        // SAFETY: card points at len readable bytes (ABI).
        unsafe { std::slice::from_raw_parts(card, len) }
    };
    // SAFETY: live handle (ABI).
    match unsafe { state(h) }.connect(peer, bytes) {
        Ok(()) => 0,
        Err(e) => {
            // SAFETY: err is null or writable for err_len (ABI).
            unsafe { error::write_c_string(&e.0, err, err_len) };
            -1
        }
    }
}

unsafe extern "C" fn max_payload(h: Handle) -> usize {
    // SAFETY: live handle (ABI).
    unsafe { state(h) }.max_payload()
}

unsafe extern "C" fn try_send(
    h: Handle,
    peer: u32,
    header: *const u8,
    payload: *const u8,
    len: usize,
) -> i32 {
    // SAFETY: live handle; header is 48 bytes and payload len bytes (ABI).
    unsafe { state(h).send(peer, header, payload, len, None) }
}

unsafe extern "C" fn try_send_with(
    h: Handle,
    peer: u32,
    header: *const u8,
    len: usize,
    fill: FillFn,
    ctx: *mut c_void,
) -> i32 {
    // SAFETY: live handle; header is 48 bytes; fill writes len bytes (ABI).
    unsafe { state(h).send(peer, header, std::ptr::null(), len, Some((fill, ctx))) }
}

unsafe extern "C" fn recv_next(h: Handle, out: *mut VerbsIncoming) -> i32 {
    if out.is_null() {
        return 0;
    }
    // SAFETY: live handle; out is writable (ABI).
    unsafe { state(h).recv_next(&mut *out) }
}

unsafe extern "C" fn release(h: Handle, peer: u32) {
    // SAFETY: live handle (ABI).
    unsafe { state(h) }.release(peer)
}

unsafe extern "C" fn progress(h: Handle) {
    // SAFETY: live handle (ABI).
    unsafe { state(h) }.progress()
}

unsafe extern "C" fn has_pending_output(h: Handle) -> i32 {
    // SAFETY: live handle (ABI).
    unsafe { state(h) }.has_pending_output() as i32
}

unsafe extern "C" fn offer(h: Handle, addr: *const u8, len: usize, rkey: *mut u32) -> i32 {
    // SAFETY: live handle (ABI).
    match unsafe { state(h) }.offer(addr as usize, len) {
        Some(k) => {
            if !rkey.is_null() {
                // SAFETY: rkey is writable (ABI).
                unsafe { *rkey = k };
            }
            1
        }
        None => 0,
    }
}

unsafe extern "C" fn withdraw(h: Handle, addr: *const u8, len: usize) {
    // SAFETY: live handle (ABI).
    unsafe { state(h) }.withdraw(addr as usize, len)
}

unsafe extern "C" fn get(
    h: Handle,
    peer: u32,
    dst: *mut u8,
    remote: u64,
    rkey: u32,
    len: usize,
) -> usize {
    // SAFETY: live handle; dst is writable for len bytes (ABI); the device writes it.
    unsafe { state(h) }.transfer(peer, dst as usize, remote, rkey, len, true)
}

unsafe extern "C" fn put(
    h: Handle,
    peer: u32,
    remote: u64,
    rkey: u32,
    src: *const u8,
    len: usize,
) -> usize {
    // SAFETY: live handle; src is readable for len bytes (ABI).
    unsafe { state(h) }.transfer(peer, src as usize, remote, rkey, len, false)
}

unsafe extern "C" fn invalidate(h: Handle, addr: usize, len: usize) {
    // SAFETY: live handle (ABI).
    unsafe { state(h) }.invalidate(addr, len)
}

unsafe extern "C" fn prepare_sleep(h: Handle) -> i32 {
    // SAFETY: live handle (ABI).
    unsafe { state(h) }.prepare_sleep()
}

unsafe extern "C" fn after_sleep(h: Handle) {
    // SAFETY: live handle (ABI).
    unsafe { state(h) }.after_sleep()
}

unsafe extern "C" fn close(h: Handle) {
    if !h.is_null() {
        // SAFETY: the handle came from Box::into_raw in `open` and is not used again.
        drop(unsafe { Box::from_raw(h as *mut Verbs) });
    }
}

static API: VerbsApi = VerbsApi {
    abi_version: verbs_abi::ABI_VERSION,
    open,
    describe,
    card,
    connect,
    max_payload,
    try_send,
    try_send_with,
    recv_next,
    release,
    progress,
    has_pending_output,
    offer,
    withdraw,
    get,
    put,
    invalidate,
    prepare_sleep,
    after_sleep,
    close,
};

/// The plugin's entry point (`verbs_abi::ENTRY_SYMBOL`): the function table.
#[no_mangle]
pub extern "C" fn oxmpi_verbs_plugin() -> *const VerbsApi {
    &API
}
