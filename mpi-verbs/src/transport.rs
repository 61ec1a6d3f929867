//! The plugin's state behind a handle: opening (device, pools, one QP per peer), the card,
//! connecting, send completions, progress, asynchronous events, sleeping on the completion
//! channel, and closing.

use crate::card::{self, Addr};
use crate::credit::{Credits, RESERVE};
use crate::device::{self, Device};
use crate::eager::{self, Kind, Mapping, Peer, Rx, SendQueue, SlotRing};
use crate::error::{self, Error, Result};
use crate::qp;
use crate::rdma::MrRegistrar;
use crate::regcache::RegCache;
use rdma_sys::*;
use std::collections::{HashMap, VecDeque};
use std::ffi::CStr;
use verbs_abi::{FatalFn, VerbsConfig, HEADER_LEN};

/// RDMA READs outstanding per QP at most (devices allow 16-128; more buys nothing).
const MAX_RD_ATOMIC: u32 = 16;
/// Inline data asked for at QP creation (the device may grant less, or more).
const WANT_INLINE: u32 = 256;
/// Send slots per peer at most (beyond the credit window they cannot be used anyway).
const MAX_SLOTS: u32 = 64;
/// RDMA READ/WRITE piece size (`OXMPI_VERBS_RDMA_PIECE` overrides; never above the
/// port's max_msg_sz). With up to MAX_RD_ATOMIC pieces outstanding that keeps 2 MiB in
/// flight: far above any fabric's bandwidth-delay product, while a lost packet on a lossy
/// (Soft-RoCE) network costs one piece, not a whole transfer. Across two Soft-RoCE VMs a
/// 64 MiB get ran at 0.9 MB/s in 8 MiB pieces and 3-6 MB/s in 128 KiB-1 MiB ones.
const RDMA_PIECE: usize = 128 << 10;
/// Asynchronous events are looked at every this many progress calls (a syscall each: at
/// 64 it cost ~0.2 us of the 8-byte latency under qemu; 4096 passes are still well under
/// a millisecond, and a wait about to sleep reads them first).
const ASYNC_EVERY: u32 = 4096;
/// With no signalled request outstanding the send CQ can only hold the error completion
/// of an unsignalled send: polled every this many progress passes, not every pass (one
/// `ibv_poll_cq` less per pass of an 8-byte ping-pong, which qemu makes dear).
const SEND_CQ_EVERY: u32 = 64;

pub struct Verbs {
    pub fatal: FatalFn,
    pub verbose: bool,
    pub rank: u32,
    pub size: u32,
    pub dev: Device,
    pub pd: *mut ibv_pd,
    pub channel: *mut ibv_comp_channel,
    pub send_cq: *mut ibv_cq,
    pub recv_cq: *mut ibv_cq,
    pub peers: Vec<Peer>,
    /// World rank -> index in `peers` (u32::MAX: not a verbs peer).
    pub rank_to_idx: Vec<u32>,
    pub buf_size: u32,
    /// Distance between buffers in the pools (buf_size rounded up to a cache line).
    pub stride: usize,
    pub bufs_per_peer: u32,
    pub slots_per_peer: u32,
    pub recv_pool: Mapping,
    pub recv_mr: *mut ibv_mr,
    pub recv_lkey: u32,
    pub send_pool: Mapping,
    pub send_mr: *mut ibv_mr,
    pub send_lkey: u32,
    /// 64 bytes peers write zero bytes to (see `eager::Verbs::flush`).
    pub flush_target: Mapping,
    pub flush_mr: *mut ibv_mr,
    /// Scratch for inline sends written by `fill`.
    pub inline_buf: Box<[u8]>,
    /// Received data messages polled but not yet handed out.
    pub rx: VecDeque<Rx>,
    /// Peers with credit work for progress.
    pub owed: Vec<u32>,
    pub regs: RegCache<MrRegistrar>,
    /// Live offers: (addr, len) -> registration ids (the same buffer may be offered twice).
    pub offers: HashMap<(usize, usize), Vec<usize>>,
    /// RDMA READ/WRITE completions seen (get/put wait on it).
    pub rdma_completed: u64,
    /// Signalled send-queue requests not yet seen complete: while there are none, a
    /// progress pass leaves the send CQ alone (see `SEND_CQ_EVERY`).
    pub signaled_out: u32,
    /// This progress pass polled the receive CQ and found nothing: the engine's
    /// `recv_next` right after it skips its own poll (one `ibv_poll_cq` per idle pass).
    pub rx_dry: bool,
    /// Largest single RDMA READ/WRITE.
    pub rdma_piece: usize,
    pub psn: u32,
    /// Our READ initiator depth and responder resources (in the card).
    pub rd_init: u8,
    pub rd_resp: u8,
    pub max_inline: u32,
    pub sq_depth: u32,
    pub ticks: u32,
    /// The send CQ is armed for the current sleep.
    pub send_armed: bool,
}

fn random_psn() -> u32 {
    let mut v = 0u32;
    // SAFETY: getrandom writes at most 4 bytes into v.
    let n = unsafe {
        libc::getrandom(
            &mut v as *mut u32 as *mut libc::c_void,
            4,
            libc::GRND_NONBLOCK,
        )
    };
    if n != 4 {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        v = t ^ std::process::id().wrapping_mul(0x9e37_79b9);
    }
    v & 0xff_ffff
}

fn set_nonblocking(fd: i32) -> Result<()> {
    // SAFETY: fcntl on a descriptor the verbs library owns; only O_NONBLOCK is added.
    let rc = unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl < 0 {
            -1
        } else {
            libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK)
        }
    };
    if rc < 0 {
        return Err(Error::last_os("fcntl(O_NONBLOCK)"));
    }
    Ok(())
}

/// An `ibv_async_event` read into our own layout: rdma-sys types `event_type` as a Rust
/// enum, and a value newer than its list would be undefined behaviour there.
#[repr(C)]
struct RawAsyncEvent {
    element: usize,
    event_type: u32,
}

fn event_name(t: u32) -> &'static str {
    const N: [&str; 20] = [
        "IBV_EVENT_CQ_ERR",
        "IBV_EVENT_QP_FATAL",
        "IBV_EVENT_QP_REQ_ERR",
        "IBV_EVENT_QP_ACCESS_ERR",
        "IBV_EVENT_COMM_EST",
        "IBV_EVENT_SQ_DRAINED",
        "IBV_EVENT_PATH_MIG",
        "IBV_EVENT_PATH_MIG_ERR",
        "IBV_EVENT_DEVICE_FATAL",
        "IBV_EVENT_PORT_ACTIVE",
        "IBV_EVENT_PORT_ERR",
        "IBV_EVENT_LID_CHANGE",
        "IBV_EVENT_PKEY_CHANGE",
        "IBV_EVENT_SM_CHANGE",
        "IBV_EVENT_SRQ_ERR",
        "IBV_EVENT_SRQ_LIMIT_REACHED",
        "IBV_EVENT_QP_LAST_WQE_REACHED",
        "IBV_EVENT_CLIENT_REREGISTER",
        "IBV_EVENT_GID_CHANGE",
        "IBV_EVENT_WQ_FATAL",
    ];
    N.get(t as usize).copied().unwrap_or("unknown event")
}

impl Verbs {
    /// Opens the device, allocates and registers the pools, creates one QP per peer in
    /// INIT with all its receive buffers posted.
    ///
    /// # Safety
    /// `cfg.peers` must point at `cfg.npeers` u32s and `cfg.device` be null or a
    /// NUL-terminated string.
    pub unsafe fn open(cfg: &VerbsConfig) -> Result<Box<Verbs>> {
        if cfg.abi_version != verbs_abi::ABI_VERSION {
            return Err(Error::new(format!(
                "engine speaks plugin ABI {}, this plugin {}",
                cfg.abi_version,
                verbs_abi::ABI_VERSION
            )));
        }
        if cfg.rank >= cfg.size {
            return Err(Error::new(format!(
                "rank {} outside a world of {}",
                cfg.rank, cfg.size
            )));
        }
        if (cfg.buf_size as usize) < HEADER_LEN || cfg.buf_size > 1 << 30 {
            return Err(Error::new(format!(
                "eager buffer size {} (must hold the {HEADER_LEN}-byte header)",
                cfg.buf_size
            )));
        }
        let peers: Vec<u32> = if cfg.npeers == 0 || cfg.peers.is_null() {
            Vec::new()
        } else {
            // SAFETY: the engine passes npeers u32s at peers (caller contract).
            unsafe { std::slice::from_raw_parts(cfg.peers, cfg.npeers as usize) }.to_vec()
        };
        if peers.len() >= eager::MAX_PEERS {
            return Err(Error::new(format!(
                "{} verbs peers, at most {} supported",
                peers.len(),
                eager::MAX_PEERS - 1
            )));
        }
        let mut rank_to_idx = vec![u32::MAX; cfg.size as usize];
        for (i, &r) in peers.iter().enumerate() {
            if r >= cfg.size || r == cfg.rank || rank_to_idx[r as usize] != u32::MAX {
                return Err(Error::new(format!(
                    "bad verbs peer list: rank {r} (own rank {}, world {})",
                    cfg.rank, cfg.size
                )));
            }
            rank_to_idx[r as usize] = i as u32;
        }
        let want_dev = if cfg.device.is_null() {
            None
        } else {
            // SAFETY: a NUL-terminated string (caller contract).
            let s = unsafe { CStr::from_ptr(cfg.device as *const libc::c_char) }
                .to_string_lossy()
                .trim()
                .to_string();
            (!s.is_empty()).then_some(s)
        };
        let dev = device::open(want_dev.as_deref(), cfg.port, cfg.gid_index)?;

        let npeers = peers.len();
        // Every posted receive and every signalled send may complete before a poll, so the
        // CQs must hold them all: with many peers on a device with small CQs (Soft-RoCE:
        // 32767 entries) the per-peer buffers and send queues shrink to fit.
        let fit = (dev.max_cqe as usize / npeers.max(1)).min(u32::MAX as usize) as u32;
        let mut bufs = cfg.bufs_per_peer.clamp(RESERVE + 1, credit_max_bufs());
        if bufs > fit {
            if fit < RESERVE + 2 {
                return Err(Error::new(format!(
                    "{npeers} peers need more completion queue entries than {} has ({})",
                    dev.name, dev.max_cqe
                )));
            }
            if cfg.verbose != 0 {
                eprintln!(
                    "OxMPI verbs: rank {}: {} receive buffers per peer instead of {bufs} ({npeers} peers, {} completion queue entries at most)",
                    cfg.rank, fit, dev.max_cqe
                );
            }
            bufs = fit;
        }
        let window = Credits::new(bufs).window();
        let slots = window.min(MAX_SLOTS);
        let rd_init = dev.max_qp_init_rd_atom.min(MAX_RD_ATOMIC) as u8;
        let rd_resp = dev.max_qp_rd_atom.min(MAX_RD_ATOMIC) as u8;
        // Data sends are bounded by the window, credit messages by the reserve, plus the
        // READs of a get and a flush. (Any depth works: posts check the room.)
        let sq_depth = (window + RESERVE + rd_init as u32 + 4)
            .min(dev.max_qp_wr)
            .min(fit)
            .max(2);
        let stride = (cfg.buf_size as usize).next_multiple_of(64);
        let recv_cqe = (npeers as u64 * bufs as u64).max(1);
        let send_cqe = (npeers as u64 * sq_depth as u64).max(1);
        let piece = std::env::var("OXMPI_VERBS_RDMA_PIECE")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or(RDMA_PIECE);

        let mut v = Box::new(Verbs {
            fatal: cfg.fatal,
            verbose: cfg.verbose != 0,
            rank: cfg.rank,
            size: cfg.size,
            dev,
            pd: std::ptr::null_mut(),
            channel: std::ptr::null_mut(),
            send_cq: std::ptr::null_mut(),
            recv_cq: std::ptr::null_mut(),
            peers: Vec::with_capacity(npeers),
            rank_to_idx,
            buf_size: cfg.buf_size,
            stride,
            bufs_per_peer: bufs,
            slots_per_peer: slots,
            recv_pool: Mapping::new(stride * bufs as usize * npeers)
                .ok_or_else(|| Error::last_os("mmap of the receive buffers"))?,
            recv_mr: std::ptr::null_mut(),
            recv_lkey: 0,
            send_pool: Mapping::new(stride * slots as usize * npeers)
                .ok_or_else(|| Error::last_os("mmap of the send slots"))?,
            send_mr: std::ptr::null_mut(),
            send_lkey: 0,
            flush_target: Mapping::new(64).ok_or_else(|| Error::last_os("mmap"))?,
            flush_mr: std::ptr::null_mut(),
            inline_buf: vec![0u8; eager::MAX_INLINE as usize].into_boxed_slice(),
            rx: VecDeque::with_capacity(eager::POLL_BATCH * 2),
            owed: Vec::new(),
            regs: RegCache::new(
                MrRegistrar {
                    pd: std::ptr::null_mut(),
                },
                cfg.reg_cache_bytes.min(usize::MAX as u64) as usize,
                page_size(),
            ),
            offers: HashMap::new(),
            rdma_completed: 0,
            signaled_out: 0,
            rx_dry: false,
            rdma_piece: piece,
            psn: random_psn(),
            rd_init,
            rd_resp,
            max_inline: 0,
            sq_depth,
            ticks: 0,
            send_armed: false,
        });
        v.rdma_piece = v.rdma_piece.min(v.dev.max_msg_sz.max(1) as usize);
        let ctx = v.dev.ctx;
        // SAFETY: ctx is an open device context; every object below is checked and
        // recorded in v, whose Drop destroys what was created if a later step fails.
        unsafe {
            v.pd = ibv_alloc_pd(ctx);
            if v.pd.is_null() {
                return Err(Error::last_os("ibv_alloc_pd"));
            }
            v.regs.registrar().pd = v.pd;
            v.channel = ibv_create_comp_channel(ctx);
            if v.channel.is_null() {
                return Err(Error::last_os("ibv_create_comp_channel"));
            }
            set_nonblocking((*v.channel).fd)?;
            set_nonblocking((*ctx).async_fd)?;
            v.send_cq = ibv_create_cq(ctx, send_cqe as i32, std::ptr::null_mut(), v.channel, 0);
            if v.send_cq.is_null() {
                return Err(Error::last_os(&format!(
                    "ibv_create_cq ({send_cqe} entries)"
                )));
            }
            v.recv_cq = ibv_create_cq(ctx, recv_cqe as i32, std::ptr::null_mut(), v.channel, 0);
            if v.recv_cq.is_null() {
                return Err(Error::last_os(&format!(
                    "ibv_create_cq ({recv_cqe} entries)"
                )));
            }
        }
        // SAFETY: the PD is live (checked above).
        unsafe {
            v.recv_mr = eager::register_pool(v.pd, &v.recv_pool, false);
            v.send_mr = eager::register_pool(v.pd, &v.send_pool, false);
            v.flush_mr = eager::register_pool(v.pd, &v.flush_target, true);
        }
        if v.recv_mr.is_null() || v.send_mr.is_null() || v.flush_mr.is_null() {
            let mut e = Error::last_os(&format!(
                "ibv_reg_mr of the eager pools ({} + {} bytes)",
                v.recv_pool.len, v.send_pool.len
            ));
            e.0.push_str(&memlock_hint());
            return Err(e);
        }
        // SAFETY: the MRs were just checked non-null.
        unsafe {
            v.recv_lkey = (*v.recv_mr).lkey;
            v.send_lkey = (*v.send_mr).lkey;
        }
        let send_sge = 2u32.min(v.dev.max_sge);
        let caps = qp::Caps {
            send_wr: sq_depth,
            recv_wr: bufs,
            send_sge,
            inline: WANT_INLINE,
        };
        let mut max_inline = u32::MAX;
        for (i, &r) in peers.iter().enumerate() {
            // SAFETY: PD and CQs are live objects of this context.
            let (qp, inline) = unsafe { qp::create(v.pd, v.send_cq, v.recv_cq, caps)? };
            // Two gather entries (header, payload) are only used inline; with one, inline
            // sends of a payload go through the scratch buffer.
            let inline = if send_sge < 2 {
                0
            } else {
                inline.min(eager::MAX_INLINE)
            };
            max_inline = max_inline.min(inline);
            // SAFETY: qp is a live QP just created.
            let qpn = unsafe { (*qp).qp_num };
            v.peers.push(Peer {
                rank: r,
                qp,
                qpn,
                connected: false,
                max_inline: inline,
                rd_atomic: 1,
                flush_addr: 0,
                flush_rkey: 0,
                credits: Credits::new(bufs),
                sq: SendQueue::new(sq_depth),
                slots: SlotRing::new(slots),
                held: VecDeque::new(),
                unposted: Vec::with_capacity(bufs as usize),
                in_owed: false,
            });
            // SAFETY: qp is live (recorded in v.peers, destroyed by Drop).
            unsafe { qp::to_init(qp, v.dev.port)? };
            let all: Vec<u32> = (i as u32 * bufs..(i as u32 + 1) * bufs).collect();
            v.post_recvs(i, &all);
        }
        if peers.is_empty() {
            // A probe: learn what inline size a QP would get, for `describe`.
            // SAFETY: PD and CQs are live; the probe QP is destroyed at once, unused.
            let (qp, inline) = unsafe { qp::create(v.pd, v.send_cq, v.recv_cq, caps)? };
            // SAFETY: as above.
            unsafe { ibv_destroy_qp(qp) };
            max_inline = if send_sge < 2 {
                0
            } else {
                inline.min(eager::MAX_INLINE)
            };
        }
        v.max_inline = max_inline;
        Ok(v)
    }

    /// Ends the job with `msg` (one line).
    pub fn die(&self, msg: &str) -> ! {
        // SAFETY: the engine's fatal takes len bytes at msg and never returns.
        unsafe { (self.fatal)(msg.as_ptr(), msg.len()) }
    }

    pub fn max_payload(&self) -> usize {
        self.buf_size as usize - HEADER_LEN
    }

    /// One line: device, port, addressing, path MTU, inline size, eager pools.
    pub fn describe(&self) -> String {
        format!(
            "{}, max_inline_data {}, max_msg_sz {}, {} peers x {} receive buffers of {} B ({} data credits + {} reserve), {} send slots, max_rd_atomic {}",
            self.dev.describe(),
            self.max_inline,
            self.dev.max_msg_sz,
            self.peers.len(),
            self.bufs_per_peer,
            self.buf_size,
            self.bufs_per_peer - RESERVE,
            RESERVE,
            self.slots_per_peer,
            self.rd_init,
        )
    }

    /// Our card: addressing plus the QP number created for each world rank.
    pub fn card(&self, buf: &mut [u8]) -> usize {
        let mut qpns = vec![0u32; self.size as usize];
        for p in &self.peers {
            qpns[p.rank as usize] = p.qpn;
        }
        let a = Addr {
            link_layer: self.dev.link_layer,
            mtu: self.dev.active_mtu as u8,
            lid: self.dev.lid,
            rd_atomic: self.rd_init,
            dest_rd_atomic: self.rd_resp,
            psn: self.psn,
            gid: self.dev.gid,
            flush_rkey: if self.flush_mr.is_null() {
                0
            } else {
                // SAFETY: a live MR.
                unsafe { (*self.flush_mr).rkey }
            },
            flush_addr: self.flush_target.ptr as u64,
            flags: if self.dev.gid_index.is_some() {
                card::FLAG_GLOBAL
            } else {
                0
            },
        };
        card::encode(&a, &qpns, buf)
    }

    /// Moves the QP toward `rank` to RTS with its card.
    pub fn connect(&mut self, rank: u32, card_bytes: &[u8]) -> Result<()> {
        let idx = match self.rank_to_idx.get(rank as usize) {
            Some(&i) if i != u32::MAX => i as usize,
            _ => {
                return Err(Error::new(format!(
                    "rank {rank} is not a verbs peer of rank {}",
                    self.rank
                )))
            }
        };
        if self.peers[idx].connected {
            return Err(Error::new(format!(
                "the queue pair toward rank {rank} is connected already"
            )));
        }
        let (remote, qpn) = card::decode(card_bytes, self.rank)
            .map_err(|e| Error::new(format!("card of rank {rank}: {e}")))?;
        if remote.link_layer != self.dev.link_layer {
            return Err(Error::new(format!(
                "rank {rank} uses a {} port, this rank a {} one",
                if remote.link_layer == device::LINK_LAYER_ETHERNET {
                    "RoCE"
                } else {
                    "InfiniBand"
                },
                if self.dev.link_layer == device::LINK_LAYER_ETHERNET {
                    "RoCE"
                } else {
                    "InfiniBand"
                }
            )));
        }
        let mtu = (self.dev.active_mtu).min(remote.mtu as u32).max(1);
        let path = qp::Path {
            remote_qpn: qpn,
            remote,
            mtu,
            rd_atomic: self.rd_init.min(remote.dest_rd_atomic).max(1),
            dest_rd_atomic: self.rd_resp,
            my_psn: self.psn,
        };
        // SAFETY: the peer's QP is live (destroyed only by Drop).
        unsafe { qp::connect(self.peers[idx].qp, &self.dev, &path) }
            .map_err(|e| Error::new(format!("connecting to rank {rank}: {e}")))?;
        let p = &mut self.peers[idx];
        p.connected = true;
        p.rd_atomic = path.rd_atomic as u32;
        p.flush_addr = remote.flush_addr;
        p.flush_rkey = remote.flush_rkey;
        if self.verbose {
            eprintln!(
                "OxMPI verbs: rank {} -> rank {rank}: QP {:#x} -> {:#x}, path MTU {}, max_rd_atomic {}",
                self.rank,
                p.qpn,
                qpn,
                device::mtu_bytes(mtu),
                path.rd_atomic
            );
        }
        Ok(())
    }

    /// The fatal line of a work completion in error.
    pub fn wc_fatal(&self, wc: &ibv_wc, kind: Kind) -> ! {
        let rank = self
            .peers
            .iter()
            .find(|p| p.qpn == wc.qp_num)
            .map(|p| p.rank);
        // SAFETY: ibv_wc_status_str returns a static NUL-terminated string for any value.
        let s = unsafe { CStr::from_ptr(ibv_wc_status_str(wc.status)) }
            .to_string_lossy()
            .into_owned();
        self.die(&error::wc_error_line(
            rank,
            kind.op(),
            &s,
            wc.status,
            wc.vendor_err,
        ))
    }

    /// Takes send completions: frees send queue room and slots, counts RDMA completions.
    pub fn poll_send_cq(&mut self) -> usize {
        // Left uninitialised: zeroing the 16 entries before every poll cost ~0.5 us of the
        // 8-byte latency under qemu; ibv_poll_cq writes the first n, the only ones read.
        let mut wcs = std::mem::MaybeUninit::<[ibv_wc; eager::POLL_BATCH]>::uninit();
        // SAFETY: the CQ is live; wcs has room for POLL_BATCH entries.
        let n = unsafe { ibv_poll_cq(self.send_cq, eager::POLL_BATCH as i32, wcs.as_mut_ptr() as *mut ibv_wc) };
        if n < 0 {
            self.die(&format!(
                "RDMA transport error: ibv_poll_cq (send) returned {n}"
            ));
        }
        // SAFETY: ibv_poll_cq initialised the first n entries (n >= 0 checked above).
        let wcs = unsafe { std::slice::from_raw_parts(wcs.as_ptr() as *const ibv_wc, n as usize) };
        // Only signalled requests complete, but for a failed one (a flush error) any may.
        self.signaled_out = self.signaled_out.saturating_sub(n as u32);
        for wc in wcs {
            let (kind, idx, low) = eager::parse_wr_id(wc.wr_id);
            if wc.status != ibv_wc_status::IBV_WC_SUCCESS {
                self.wc_fatal(wc, kind);
            }
            let Some(p) = self.peers.get_mut(idx) else {
                continue;
            };
            let seq = p.sq.full_seq(low);
            p.sq.completed(seq);
            let done = p.sq.done();
            p.slots.release_upto(done);
            if matches!(kind, Kind::Read | Kind::Write) {
                self.rdma_completed += 1;
            }
        }
        n as usize
    }

    /// Once per engine progress pass.
    pub fn progress(&mut self) {
        if self.signaled_out > 0 || self.ticks.is_multiple_of(SEND_CQ_EVERY) {
            while self.poll_send_cq() == eager::POLL_BATCH {}
        }
        // Credits a peer sent come in on the receive queue: take them even when the engine
        // is busy sending rather than receiving (data messages wait in `rx`, in order).
        if self.rx.len() < eager::POLL_BATCH {
            self.rx_dry = self.poll_recv() == 0 && self.rx.is_empty();
        }
        if !self.owed.is_empty() {
            self.credit_work();
        }
        self.ticks = self.ticks.wrapping_add(1);
        if self.ticks.is_multiple_of(ASYNC_EVERY) {
            self.async_events();
        }
    }

    /// Reads the device's asynchronous events (non-blocking): a port going down or a QP
    /// in error ends the job with a line naming the peer.
    pub fn async_events(&mut self) {
        loop {
            let mut ev = RawAsyncEvent {
                element: 0,
                event_type: 0,
            };
            // SAFETY: the async fd is non-blocking; ev has the layout of ibv_async_event
            // (a pointer-sized union and a 32-bit enum), read without naming the enum type.
            let rc = unsafe {
                ibv_get_async_event(
                    self.dev.ctx,
                    &mut ev as *mut RawAsyncEvent as *mut ibv_async_event,
                )
            };
            if rc != 0 {
                return;
            }
            let t = ev.event_type;
            let element = ev.element;
            // SAFETY: ev was filled by ibv_get_async_event and is acknowledged once.
            unsafe { ibv_ack_async_event(&mut ev as *mut RawAsyncEvent as *mut ibv_async_event) };
            match t {
                // QP events: the element is the QP.
                1..=3 | 7 => {
                    let rank = self
                        .peers
                        .iter()
                        .find(|p| p.qp as usize == element)
                        .map(|p| p.rank);
                    let who = rank.map_or("an unknown peer".to_string(), |r| format!("rank {r}"));
                    self.die(&format!(
                        "RDMA transport error with {who}: its queue pair failed ({})",
                        event_name(t)
                    ));
                }
                0 => self.die(&format!(
                    "RDMA transport error: completion queue overrun on {} ({})",
                    self.dev.name,
                    event_name(t)
                )),
                8 => self.die(&format!(
                    "RDMA transport error: device {} failed ({})",
                    self.dev.name,
                    event_name(t)
                )),
                10 if element as i32 == self.dev.port as i32 => self.die(&format!(
                    "RDMA transport error: {} port {} went down ({})",
                    self.dev.name,
                    self.dev.port,
                    event_name(t)
                )),
                _ => {
                    if self.verbose {
                        eprintln!(
                            "OxMPI verbs: rank {}: {} ({})",
                            self.rank,
                            event_name(t),
                            self.dev.name
                        );
                    }
                }
            }
        }
    }

    /// Arms the completion channel. -1: something arrived meanwhile (poll instead).
    pub fn prepare_sleep(&mut self) -> i32 {
        if !self.rx.is_empty() {
            return -1;
        }
        self.async_events();
        // SAFETY: live CQs of this context.
        unsafe {
            if ibv_req_notify_cq(self.recv_cq, 0) != 0 {
                return -1;
            }
            // Sends in flight can free slots or credit room the engine waits for.
            self.send_armed = self.peers.iter().any(|p| p.sq.busy());
            if self.send_armed && ibv_req_notify_cq(self.send_cq, 0) != 0 {
                return -1;
            }
        }
        // A completion that came before arming raises no event: look once more.
        if self.poll_recv() > 0 || (self.send_armed && self.poll_send_cq() > 0) {
            return -1;
        }
        // SAFETY: the channel is live.
        unsafe { (*self.channel).fd }
    }

    /// Takes and acknowledges the channel's events (until EAGAIN).
    pub fn after_sleep(&mut self) {
        let (mut nrecv, mut nsend) = (0u32, 0u32);
        loop {
            let mut cq = std::ptr::null_mut();
            let mut ctx = std::ptr::null_mut();
            // SAFETY: the channel fd is non-blocking; cq/ctx are writable.
            if unsafe { ibv_get_cq_event(self.channel, &mut cq, &mut ctx) } != 0 {
                break;
            }
            if cq == self.recv_cq {
                nrecv += 1;
            } else {
                nsend += 1;
            }
        }
        // SAFETY: acknowledging exactly the events taken above, per CQ.
        unsafe {
            if nrecv > 0 {
                ibv_ack_cq_events(self.recv_cq, nrecv);
            }
            if nsend > 0 {
                ibv_ack_cq_events(self.send_cq, nsend);
            }
        }
    }
}

/// Receive buffers per peer at most (their credits fit the immediate data's 16 bits).
fn credit_max_bufs() -> u32 {
    crate::credit::MAX_DATA_RETURN
}

/// The locked-memory limit, when it is what stops registrations (ENOMEM, EPERM).
pub fn memlock_hint() -> String {
    let errno = std::io::Error::last_os_error().raw_os_error();
    if !matches!(errno, Some(libc::ENOMEM) | Some(libc::EPERM)) {
        return String::new();
    }
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into r.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut r) } != 0
        || r.rlim_cur == libc::RLIM_INFINITY
    {
        return String::new();
    }
    format!(
        " (the locked-memory limit is {} KiB: raise `ulimit -l`, e.g. memlock unlimited in /etc/security/limits.conf, or lower OXMPI_IB_BUFS)",
        r.rlim_cur / 1024
    )
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 && (p as usize).is_power_of_two() {
        p as usize
    } else {
        4096
    }
}

impl Drop for Verbs {
    /// Destroys in dependency order: registrations, QPs, pool MRs, CQs, channel, PD,
    /// device context; the pools' memory is unmapped after (field drops).
    fn drop(&mut self) {
        self.regs.clear();
        self.offers.clear();
        // SAFETY: every pointer is null or a live object of this context, destroyed once;
        // the channel's events were all acknowledged by after_sleep.
        unsafe {
            for p in &self.peers {
                if !p.qp.is_null() {
                    ibv_destroy_qp(p.qp);
                }
            }
            for mr in [self.recv_mr, self.send_mr, self.flush_mr] {
                if !mr.is_null() {
                    ibv_dereg_mr(mr);
                }
            }
            for cq in [self.send_cq, self.recv_cq] {
                if !cq.is_null() {
                    ibv_destroy_cq(cq);
                }
            }
            if !self.channel.is_null() {
                ibv_destroy_comp_channel(self.channel);
            }
            if !self.pd.is_null() {
                ibv_dealloc_pd(self.pd);
            }
        }
        self.peers.clear();
        // The device context closes when `dev` drops, after this.
    }
}
