//! The eager path: registered buffer pools, send slots, send-queue accounting, SEND with
//! immediate data (credits ride in it, see `credit.rs`), receive and release.
//!
//! * Receive buffers: one pool of `npeers x bufs_per_peer` buffers of `buf_size` bytes
//!   (48-byte engine header + payload), registered once; a buffer index names its peer
//!   (`index / bufs_per_peer`), so completions need no lookup.
//! * Send slots: a ring of registered `buf_size` slots per peer. A send copies header and
//!   payload into the next slot (or `fill` writes the payload there), or goes inline when
//!   `48 + len <= max_inline_data` (no slot, the caller's memory is read during the post).
//! * Selective signalling: only every `SIGNAL_EVERY`th send, and any send that leaves the
//!   send queue or the slots nearly full, asks for a completion; an RC completion means
//!   every earlier work request of that QP is done, which frees their slots too. Each work
//!   request gets a per-QP sequence number (in its `wr_id`) for that.

use crate::credit::{self, Credits};
use crate::transport::Verbs;
use rdma_sys::*;
use std::collections::VecDeque;
use verbs_abi::{FillFn, VerbsIncoming, HEADER_LEN};

/// Signal at least every this many sends per QP (bounds the work a completion retires).
pub const SIGNAL_EVERY: u32 = 16;
/// Inline sends stay at or below this many bytes (the scratch buffer for `fill`).
pub const MAX_INLINE: u32 = 1024;
/// Receive work requests posted per `ibv_post_recv` call at most.
const RECV_CHAIN: usize = 32;
/// Completions taken per `ibv_poll_cq` call.
pub const POLL_BATCH: usize = 16;

/// What a work request was, in the top 4 bits of its `wr_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Data = 1,
    Credit = 2,
    Flush = 3,
    Read = 4,
    Write = 5,
    Recv = 8,
}

impl Kind {
    fn from(v: u64) -> Kind {
        match v {
            1 => Kind::Data,
            2 => Kind::Credit,
            3 => Kind::Flush,
            4 => Kind::Read,
            5 => Kind::Write,
            _ => Kind::Recv,
        }
    }

    /// The operation as a fatal line names it.
    pub fn op(self) -> &'static str {
        match self {
            Kind::Data => "SEND",
            Kind::Credit => "SEND of credits",
            Kind::Flush => "RDMA WRITE (flush)",
            Kind::Read => "RDMA READ",
            Kind::Write => "RDMA WRITE",
            Kind::Recv => "RECV",
        }
    }
}

const SEQ_BITS: u32 = 40;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;
const IDX_BITS: u32 = 20;
/// Peers per process at most (the peer index field of a send `wr_id`).
pub const MAX_PEERS: usize = 1 << IDX_BITS;

/// `wr_id` of a send-side work request: kind | peer index | low 40 bits of its sequence.
#[inline]
pub fn send_wr_id(kind: Kind, idx: usize, seq: u64) -> u64 {
    ((kind as u64) << 60) | ((idx as u64) << SEQ_BITS) | (seq & SEQ_MASK)
}

/// `wr_id` of a receive: the buffer index.
#[inline]
pub fn recv_wr_id(buf: u32) -> u64 {
    ((Kind::Recv as u64) << 60) | buf as u64
}

/// `(kind, peer index, sequence low bits)` of a send-side `wr_id`; for a receive the
/// buffer index comes back in the last field.
#[inline]
pub fn parse_wr_id(id: u64) -> (Kind, usize, u64) {
    let kind = Kind::from(id >> 60);
    if kind == Kind::Recv {
        (kind, 0, id & ((1 << 60) - 1))
    } else {
        (
            kind,
            ((id >> SEQ_BITS) & ((1 << IDX_BITS) - 1)) as usize,
            id & SEQ_MASK,
        )
    }
}

/// Send queue accounting of one QP (pure).
#[derive(Debug, Clone)]
pub struct SendQueue {
    depth: u32,
    /// Work requests posted / known complete (sequence numbers below `done` are done).
    posted: u64,
    done: u64,
    /// Unsignalled posts since the last signalled one.
    unsignaled: u32,
}

impl SendQueue {
    pub fn new(depth: u32) -> SendQueue {
        SendQueue {
            depth: depth.max(1),
            posted: 0,
            done: 0,
            unsignaled: 0,
        }
    }

    /// Work requests that may still be posted.
    #[inline]
    pub fn room(&self) -> u32 {
        self.depth - (self.posted - self.done) as u32
    }

    #[inline]
    pub fn next_seq(&self) -> u64 {
        self.posted
    }

    /// Should the next post ask for a completion? Every `SIGNAL_EVERY`th, and whenever
    /// the queue (or the caller's slots) would be nearly full after it, so a full queue
    /// always has a signalled request in it that will free it.
    #[inline]
    pub fn want_signal(&self, slots_low: bool) -> bool {
        self.unsignaled + 1 >= SIGNAL_EVERY || self.room() <= self.depth / 4 + 1 || slots_low
    }

    #[inline]
    pub fn posted(&mut self, signaled: bool) {
        self.posted += 1;
        self.unsignaled = if signaled { 0 } else { self.unsignaled + 1 };
    }

    /// The full sequence number of a completion from its low bits.
    #[inline]
    pub fn full_seq(&self, low: u64) -> u64 {
        let last = self.posted.wrapping_sub(1);
        last - ((last.wrapping_sub(low)) & SEQ_MASK)
    }

    /// A signalled request completed: it and everything before it are done.
    #[inline]
    pub fn completed(&mut self, seq: u64) {
        self.done = self.done.max(seq + 1);
    }

    #[inline]
    pub fn done(&self) -> u64 {
        self.done
    }

    /// Posted requests not known complete.
    #[inline]
    pub fn busy(&self) -> bool {
        self.posted > self.done
    }

    /// The last posted request was unsignalled (nothing will report the tail done).
    #[inline]
    pub fn tail_unsignaled(&self) -> bool {
        self.unsignaled > 0
    }
}

/// A ring of send slots of one peer (pure): slots are taken in order and freed in order as
/// completions retire the sequence numbers that used them.
#[derive(Debug, Clone)]
pub struct SlotRing {
    seqs: Box<[u64]>,
    next: u32,
    busy: u32,
}

impl SlotRing {
    pub fn new(n: u32) -> SlotRing {
        SlotRing {
            seqs: vec![0; n.max(1) as usize].into_boxed_slice(),
            next: 0,
            busy: 0,
        }
    }

    #[inline]
    pub fn capacity(&self) -> u32 {
        self.seqs.len() as u32
    }

    #[inline]
    pub fn free(&self) -> u32 {
        self.capacity() - self.busy
    }

    /// The slot the next `take` returns.
    #[inline]
    pub fn peek(&self) -> u32 {
        self.next
    }

    /// Uses the next slot for the work request `seq`.
    #[inline]
    pub fn take(&mut self, seq: u64) -> u32 {
        let i = self.next;
        self.seqs[i as usize] = seq;
        self.next = if i + 1 == self.capacity() { 0 } else { i + 1 };
        self.busy += 1;
        i
    }

    /// Frees the slots of requests below `done`.
    #[inline]
    pub fn release_upto(&mut self, done: u64) {
        let n = self.capacity();
        while self.busy > 0 {
            let oldest = (self.next + n - self.busy) % n;
            if self.seqs[oldest as usize] >= done {
                break;
            }
            self.busy -= 1;
        }
    }
}

/// A received data message not yet handed to the engine.
#[derive(Debug, Clone, Copy)]
pub struct Rx {
    pub idx: u32,
    pub buf: u32,
    pub len: u32,
}

/// An anonymous private mapping (page-aligned for registration), unmapped on drop.
pub struct Mapping {
    pub ptr: *mut u8,
    pub len: usize,
}

impl Mapping {
    pub fn new(len: usize) -> Option<Mapping> {
        let len = len.max(1);
        // SAFETY: a fresh anonymous mapping; no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        (p != libc::MAP_FAILED).then_some(Mapping {
            ptr: p as *mut u8,
            len,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len came from our own mmap and nothing refers to it any more (the
        // registrations were dropped first, see `Verbs::drop`).
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// Registers `m` for local writes (receive buffers, send slots) and remote writes (the
/// flush target).
///
/// # Safety
/// `pd` must be a live protection domain.
pub unsafe fn register_pool(pd: *mut ibv_pd, m: &Mapping, remote_write: bool) -> *mut ibv_mr {
    let mut acc = ibv_access_flags::IBV_ACCESS_LOCAL_WRITE;
    if remote_write {
        acc |= ibv_access_flags::IBV_ACCESS_REMOTE_WRITE;
    }
    // SAFETY: m is a live mapping of m.len bytes; pd is live (caller contract).
    unsafe { ibv_reg_mr(pd, m.ptr as *mut libc::c_void, m.len, acc.0 as i32) }
}

/// One peer's queue pair and eager state.
pub struct Peer {
    pub rank: u32,
    pub qp: *mut ibv_qp,
    pub qpn: u32,
    pub connected: bool,
    pub max_inline: u32,
    /// RDMA READs outstanding at most (negotiated at connect).
    pub rd_atomic: u32,
    pub flush_addr: u64,
    pub flush_rkey: u32,
    pub credits: Credits,
    pub sq: SendQueue,
    pub slots: SlotRing,
    /// Buffers handed to the engine, oldest first.
    pub held: VecDeque<u32>,
    /// Buffers released by the engine, not yet posted again.
    pub unposted: Vec<u32>,
    /// Listed in `Verbs::owed` (credit work for progress).
    pub in_owed: bool,
}

/// Scatter entry.
#[inline]
fn sge(addr: u64, length: u32, lkey: u32) -> ibv_sge {
    ibv_sge { addr, length, lkey }
}

impl Verbs {
    /// Address of receive buffer `buf`.
    #[inline]
    pub fn recv_buf(&self, buf: u32) -> *mut u8 {
        // SAFETY: buf < npeers x bufs_per_peer, all inside the receive pool.
        unsafe { self.recv_pool.ptr.add(buf as usize * self.stride) }
    }

    /// Address of send slot `slot` of peer `idx`.
    #[inline]
    pub fn send_slot(&self, idx: usize, slot: u32) -> *mut u8 {
        // SAFETY: idx < npeers and slot < slots per peer, all inside the send pool.
        unsafe {
            self.send_pool
                .ptr
                .add((idx * self.slots_per_peer as usize + slot as usize) * self.stride)
        }
    }

    /// Posts receive buffers `bufs` of peer `idx` (chains of up to `RECV_CHAIN` per call).
    pub fn post_recvs(&mut self, idx: usize, bufs: &[u32]) {
        let qp = self.peers[idx].qp;
        let lkey = self.recv_lkey;
        for chunk in bufs.chunks(RECV_CHAIN) {
            let mut sges = [sge(0, 0, 0); RECV_CHAIN];
            // SAFETY: all-zero is a valid ibv_recv_wr (null pointers, zero integers).
            let mut wrs: [ibv_recv_wr; RECV_CHAIN] = unsafe { std::mem::zeroed() };
            let n = chunk.len();
            for (i, &b) in chunk.iter().enumerate() {
                sges[i] = sge(self.recv_buf(b) as u64, self.buf_size, lkey);
            }
            for i in 0..n {
                wrs[i].wr_id = recv_wr_id(chunk[i]);
                wrs[i].sg_list = &mut sges[i];
                wrs[i].num_sge = 1;
                wrs[i].next = if i + 1 < n {
                    &mut wrs[i + 1]
                } else {
                    std::ptr::null_mut()
                };
            }
            let mut bad = std::ptr::null_mut();
            // SAFETY: qp is live; the chain and its SGEs live on this stack frame during
            // the call (the provider copies them); the buffers are registered (lkey).
            let rc = unsafe { ibv_post_recv(qp, wrs.as_mut_ptr(), &mut bad) };
            if rc != 0 {
                let rank = self.peers[idx].rank;
                self.die(&format!(
                    "RDMA transport error with rank {rank}: ibv_post_recv: {}",
                    std::io::Error::from_raw_os_error(rc)
                ));
            }
        }
    }

    /// Posts the released buffers of peer `idx` again; their credits become returnable.
    pub fn repost_released(&mut self, idx: usize) {
        let bufs = std::mem::take(&mut self.peers[idx].unposted);
        if bufs.is_empty() {
            return;
        }
        self.post_recvs(idx, &bufs);
        let p = &mut self.peers[idx];
        p.credits.reposted(bufs.len() as u32);
        let mut bufs = bufs;
        bufs.clear();
        p.unposted = bufs;
    }

    /// Posts one send-side work request on peer `idx`'s QP with the sequence accounting;
    /// dies on a post failure (the QP is broken or this plugin is).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn post_send(
        &mut self,
        idx: usize,
        kind: Kind,
        opcode: u32,
        sges: &mut [ibv_sge],
        mut flags: u32,
        imm: Option<u32>,
        rdma: Option<(u64, u32)>,
        signal: bool,
    ) -> u64 {
        let p = &mut self.peers[idx];
        let seq = p.sq.next_seq();
        // SAFETY: all-zero is a valid ibv_send_wr (null pointers, zero integers, unions).
        let mut wr: ibv_send_wr = unsafe { std::mem::zeroed() };
        wr.wr_id = send_wr_id(kind, idx, seq);
        wr.sg_list = if sges.is_empty() {
            std::ptr::null_mut()
        } else {
            sges.as_mut_ptr()
        };
        wr.num_sge = sges.len() as i32;
        wr.opcode = opcode;
        if signal {
            flags |= ibv_send_flags::IBV_SEND_SIGNALED.0;
        }
        wr.send_flags = flags;
        if let Some(imm) = imm {
            wr.imm_data_invalidated_rkey_union.imm_data = imm.to_be();
        }
        if let Some((remote_addr, rkey)) = rdma {
            wr.wr.rdma = rdma_sys::rdma_t { remote_addr, rkey };
        }
        let mut bad = std::ptr::null_mut();
        // SAFETY: the QP is live and connected; wr and the SGEs live during the call; SGE
        // memory is registered (or inline, copied during the call).
        let rc = unsafe { ibv_post_send(p.qp, &mut wr, &mut bad) };
        if rc != 0 {
            let rank = p.rank;
            self.die(&format!(
                "RDMA transport error with rank {rank} ({}): ibv_post_send: {}",
                kind.op(),
                std::io::Error::from_raw_os_error(rc)
            ));
        }
        p.sq.posted(signal);
        self.signaled_out += signal as u32;
        seq
    }

    /// Local index of world rank `rank`, or the job ends (the engine's contract).
    #[inline]
    pub fn peer_idx(&self, rank: u32, what: &str) -> usize {
        match self.rank_to_idx.get(rank as usize) {
            Some(&i) if i != u32::MAX && self.peers[i as usize].connected => i as usize,
            Some(&i) if i != u32::MAX => self.die(&format!(
                "verbs {what} to rank {rank} before its queue pair was connected"
            )),
            _ => self.die(&format!(
                "verbs {what} to rank {rank}, which is not a verbs peer of rank {}",
                self.rank
            )),
        }
    }

    /// `try_send` / `try_send_with`: 1 when handed over, 0 when no credit, slot or queue
    /// room now.
    ///
    /// # Safety
    /// `header` must point at 48 readable bytes, and `payload` at `len` (unless `fill`).
    pub unsafe fn send(
        &mut self,
        rank: u32,
        header: *const u8,
        payload: *const u8,
        len: usize,
        fill: Option<(FillFn, *mut libc::c_void)>,
    ) -> i32 {
        let idx = self.peer_idx(rank, "send");
        if len > self.max_payload() {
            self.die(&format!(
                "verbs send of {len} bytes to rank {rank}, above the {} byte limit",
                self.max_payload()
            ));
        }
        if self.peers[idx].credits.data() == 0 {
            return 0;
        }
        if self.peers[idx].sq.room() == 0 {
            self.poll_send_cq();
            if self.peers[idx].sq.room() == 0 {
                return 0;
            }
        }
        let total = HEADER_LEN + len;
        let inline = total as u32 <= self.peers[idx].max_inline;
        let mut sges = [sge(0, 0, 0); 2];
        let nsge;
        let mut slot = None;
        if inline {
            if let Some((f, ctx)) = fill {
                let b = self.inline_buf.as_mut_ptr();
                // SAFETY: inline_buf holds MAX_INLINE >= max_inline >= total bytes; header
                // is 48 readable bytes (caller); fill writes len bytes after it.
                unsafe {
                    std::ptr::copy_nonoverlapping(header, b, HEADER_LEN);
                    f(ctx, b.add(HEADER_LEN), len);
                }
                sges[0] = sge(b as u64, total as u32, 0);
                nsge = 1;
            } else {
                sges[0] = sge(header as u64, HEADER_LEN as u32, 0);
                sges[1] = sge(payload as u64, len as u32, 0);
                nsge = if len > 0 { 2 } else { 1 };
            }
        } else {
            if self.peers[idx].slots.free() == 0 {
                self.poll_send_cq();
                if self.peers[idx].slots.free() == 0 {
                    return 0;
                }
            }
            let s = self.peers[idx].slots.peek();
            let dst = self.send_slot(idx, s);
            // SAFETY: the slot holds buf_size >= total bytes and no posted request reads it
            // (free); header is 48 readable bytes and payload len (caller contract).
            unsafe {
                std::ptr::copy_nonoverlapping(header, dst, HEADER_LEN);
                match fill {
                    Some((f, ctx)) => f(ctx, dst.add(HEADER_LEN), len),
                    None if len > 0 => {
                        std::ptr::copy_nonoverlapping(payload, dst.add(HEADER_LEN), len)
                    }
                    None => {}
                }
            }
            sges[0] = sge(dst as u64, total as u32, self.send_lkey);
            nsge = 1;
            slot = Some(s);
        }
        let p = &mut self.peers[idx];
        let slots_low = slot.is_some() && p.slots.free() <= p.slots.capacity() / 4 + 1;
        let signal = p.sq.want_signal(slots_low);
        let (d, c) = p.credits.take_returns();
        p.credits.take_data();
        let flags = if inline {
            ibv_send_flags::IBV_SEND_INLINE.0
        } else {
            0
        };
        let seq = self.post_send(
            idx,
            Kind::Data,
            ibv_wr_opcode::IBV_WR_SEND_WITH_IMM,
            &mut sges[..nsge],
            flags,
            Some(credit::encode_imm(d, c, false)),
            None,
            signal,
        );
        if slot.is_some() {
            self.peers[idx].slots.take(seq);
        }
        1
    }

    /// An explicit credit-only message to peer `idx`, if a ctrl credit and queue room allow.
    pub fn send_credits(&mut self, idx: usize) -> bool {
        let p = &mut self.peers[idx];
        if p.credits.ctrl() == 0 || p.sq.room() == 0 || !p.connected {
            return false;
        }
        let signal = p.sq.want_signal(false);
        let (d, c) = p.credits.take_returns();
        p.credits.take_ctrl();
        self.post_send(
            idx,
            Kind::Credit,
            ibv_wr_opcode::IBV_WR_SEND_WITH_IMM,
            &mut [],
            0,
            Some(credit::encode_imm(d, c, true)),
            None,
            signal,
        );
        true
    }

    /// A signalled zero-byte RDMA WRITE to the peer's flush target: its completion retires
    /// the unsignalled sends before it (finalize must see them done).
    pub fn flush(&mut self, idx: usize) {
        let p = &self.peers[idx];
        if !p.connected || p.sq.room() == 0 || !p.sq.tail_unsignaled() {
            return;
        }
        let target = (p.flush_addr, p.flush_rkey);
        self.post_send(
            idx,
            Kind::Flush,
            ibv_wr_opcode::IBV_WR_RDMA_WRITE,
            &mut [],
            0,
            None,
            Some(target),
            true,
        );
    }

    /// Takes receive completions into `rx` (credit-only messages are consumed here).
    /// Returns how many completions there were.
    pub fn poll_recv(&mut self) -> usize {
        // Left uninitialised: zeroing the 16 entries before every poll cost ~0.5 us of the
        // 8-byte latency under qemu; ibv_poll_cq writes the first n, the only ones read.
        let mut wcs = std::mem::MaybeUninit::<[ibv_wc; POLL_BATCH]>::uninit();
        // SAFETY: the CQ is live; wcs has room for POLL_BATCH entries.
        let n = unsafe { ibv_poll_cq(self.recv_cq, POLL_BATCH as i32, wcs.as_mut_ptr() as *mut ibv_wc) };
        if n < 0 {
            self.die(&format!(
                "RDMA transport error: ibv_poll_cq (receive) returned {n}"
            ));
        }
        // SAFETY: ibv_poll_cq initialised the first n entries (n >= 0 checked above).
        let wcs = unsafe { std::slice::from_raw_parts(wcs.as_ptr() as *const ibv_wc, n as usize) };
        for wc in wcs {
            if wc.status != ibv_wc_status::IBV_WC_SUCCESS {
                self.wc_fatal(wc, Kind::Recv);
            }
            let buf = (wc.wr_id & ((1 << 60) - 1)) as u32;
            let idx = (buf / self.bufs_per_peer) as usize;
            if wc.wc_flags & ibv_wc_flags::IBV_WC_WITH_IMM.0 == 0 {
                let rank = self.peers[idx].rank;
                self.die(&format!("RDMA transport error with rank {rank}: a message without credits (not an OxMPI verbs peer?)"));
            }
            // SAFETY: IBV_WC_WITH_IMM says imm_data is the member in use.
            let imm = u32::from_be(unsafe { wc.imm_data_invalidated_rkey_union.imm_data });
            let (d, c, only) = credit::decode_imm(imm);
            self.peers[idx].credits.returned(d, c);
            if only {
                self.post_recvs(idx, &[buf]);
                self.peers[idx].credits.ctrl_reposted();
            } else {
                if (wc.byte_len as usize) < HEADER_LEN {
                    let rank = self.peers[idx].rank;
                    self.die(&format!("RDMA transport error with rank {rank}: a message of {} bytes, shorter than a header", wc.byte_len));
                }
                self.rx.push_back(Rx {
                    idx: idx as u32,
                    buf,
                    len: wc.byte_len - HEADER_LEN as u32,
                });
            }
        }
        n as usize
    }

    /// The next received message for the engine.
    pub fn recv_next(&mut self, out: &mut VerbsIncoming) -> i32 {
        loop {
            if let Some(m) = self.rx.pop_front() {
                let p = &mut self.peers[m.idx as usize];
                p.held.push_back(m.buf);
                let b = self.recv_buf(m.buf);
                *out = VerbsIncoming {
                    peer: self.peers[m.idx as usize].rank,
                    header: b,
                    // SAFETY: the payload follows the header inside the buffer.
                    payload: unsafe { b.add(HEADER_LEN) },
                    len: m.len as usize,
                };
                return 1;
            }
            if std::mem::take(&mut self.rx_dry) || self.poll_recv() == 0 {
                return 0;
            }
        }
    }

    /// The engine is done with the oldest message it holds from `rank`.
    pub fn release(&mut self, rank: u32) {
        let idx = self.peer_idx(rank, "release");
        let p = &mut self.peers[idx];
        let Some(buf) = p.held.pop_front() else {
            return;
        };
        p.unposted.push(buf);
        if p.credits.released() {
            self.repost_released(idx);
        }
        let p = &mut self.peers[idx];
        if p.credits.explicit_due() && !p.in_owed {
            p.in_owed = true;
            self.owed.push(idx as u32);
        }
    }

    /// Credit work of progress: repost released buffers and send explicit credit messages
    /// to peers owed at least half a window that no traffic carried back.
    pub fn credit_work(&mut self) {
        let mut i = 0;
        while i < self.owed.len() {
            let idx = self.owed[i] as usize;
            if self.peers[idx].credits.repost_due() {
                self.repost_released(idx);
            }
            if self.peers[idx].credits.explicit_due() {
                self.send_credits(idx);
            }
            if self.peers[idx].credits.explicit_due() {
                i += 1;
            } else {
                self.peers[idx].in_owed = false;
                self.owed.swap_remove(i);
            }
        }
    }

    /// Sends not yet known complete, or credit messages owed (finalize drains these).
    /// Unsignalled tails get a signalled flush so their completion becomes visible.
    pub fn has_pending_output(&mut self) -> bool {
        let mut pending = false;
        for idx in 0..self.peers.len() {
            if self.peers[idx].sq.tail_unsignaled() {
                self.flush(idx);
            }
            let p = &self.peers[idx];
            pending |= p.sq.busy() || p.credits.explicit_due();
        }
        pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wr_ids() {
        let id = send_wr_id(Kind::Read, 12345, (1 << 41) + 77);
        assert_eq!(
            parse_wr_id(id),
            (Kind::Read, 12345, (1 << 41 | 77) & SEQ_MASK)
        );
        assert_eq!(
            parse_wr_id(recv_wr_id(4_000_000)),
            (Kind::Recv, 0, 4_000_000)
        );
        assert_eq!(
            parse_wr_id(send_wr_id(Kind::Data, MAX_PEERS - 1, 0)).1,
            MAX_PEERS - 1
        );
    }

    #[test]
    fn full_sequence_across_wrap() {
        let mut q = SendQueue::new(64);
        q.posted = (1 << 40) + 5; // last posted: 2^40 + 4
        q.done = (1 << 40) - 10;
        assert_eq!(q.full_seq(4), (1 << 40) + 4);
        assert_eq!(q.full_seq(SEQ_MASK - 2), (1 << 40) - 3);
    }

    #[test]
    fn signalling_keeps_a_full_queue_completable() {
        let mut q = SendQueue::new(8);
        let mut signaled = Vec::new();
        while q.room() > 0 {
            let s = q.want_signal(false);
            signaled.push(s);
            q.posted(s);
        }
        assert!(
            *signaled.last().unwrap(),
            "the post that fills the queue is signalled"
        );
        assert!(!signaled[0]);
        // Completing the last frees everything.
        q.completed(q.full_seq(7));
        assert_eq!(q.room(), 8);
        assert!(!q.busy());
        // Every SIGNAL_EVERY posts at least one signal in a deep queue.
        let mut q = SendQueue::new(1000);
        let mut run = 0;
        for _ in 0..100 {
            let s = q.want_signal(false);
            q.posted(s);
            run = if s { 0 } else { run + 1 };
            assert!(run < SIGNAL_EVERY);
        }
        assert!(q.tail_unsignaled() || run == 0);
    }

    #[test]
    fn slot_ring_frees_in_order() {
        let mut r = SlotRing::new(4);
        assert_eq!(r.take(10), 0);
        assert_eq!(r.take(11), 1);
        assert_eq!(r.take(14), 2);
        assert_eq!(r.free(), 1);
        r.release_upto(12); // requests 10 and 11 done
        assert_eq!(r.free(), 3);
        assert_eq!(r.take(15), 3);
        assert_eq!(r.take(16), 0, "wraps");
        r.release_upto(15); // 14 done; 15 and 16 still in flight
        assert_eq!(r.free(), 2);
        r.release_upto(100);
        assert_eq!(r.free(), 4);
    }
}
