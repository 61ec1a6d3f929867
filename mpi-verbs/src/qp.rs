//! Queue pair creation and its state transitions (RESET -> INIT -> RTR -> RTS).
//!
//! One reliable-connected QP per peer: RC gives in-order, reliable delivery and RDMA
//! READ/WRITE, which the engine's rendezvous needs; per-peer QPs keep each peer's messages
//! in order without any sequence numbers of ours.

use crate::card::Addr;
use crate::device::{Device, LINK_LAYER_ETHERNET};
use crate::error::{Error, Result};
use rdma_sys::*;

/// Local ACK timeout exponent: 4.096 us x 2^16 = 268 ms per try, so with RETRY_CNT the
/// QP gives up after about 2 s without an ACK: long enough for a descheduled Soft-RoCE
/// VM or a congested switch, short enough that a tail packet lost on a lossy Ethernet
/// (where loss is recovered by this timer) does not stall a transfer for long.
const TIMEOUT: u8 = 16;
/// Transport retries before the QP errors out (then the job ends with the peer's rank).
const RETRY_CNT: u8 = 7;
/// RNR retries: 7 = infinite. Credits make RNR impossible in a correct run; should a peer
/// ever be slow to repost, retrying beats failing the job.
const RNR_RETRY: u8 = 7;
/// Minimal RNR NAK delay our receive side asks for (12 = 0.64 ms).
const MIN_RNR_TIMER: u8 = 12;
/// Hop limit of the GRH (RoCE v2 packets are routed IP packets).
const HOP_LIMIT: u8 = 64;

/// Sizes a QP is created with.
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    pub send_wr: u32,
    pub recv_wr: u32,
    pub send_sge: u32,
    pub inline: u32,
}

/// Creates an RC QP; the device may grant less inline data than asked, so smaller inline
/// sizes are tried in turn. Returns the QP and the `max_inline_data` it actually has.
///
/// # Safety
/// `pd` and the CQs must be live objects of one device context.
pub unsafe fn create(
    pd: *mut ibv_pd,
    send_cq: *mut ibv_cq,
    recv_cq: *mut ibv_cq,
    caps: Caps,
) -> Result<(*mut ibv_qp, u32)> {
    let mut inline = caps.inline;
    loop {
        // SAFETY: all-zero is a valid ibv_qp_init_attr (pointers null, integers 0).
        let mut init: ibv_qp_init_attr = unsafe { std::mem::zeroed() };
        init.send_cq = send_cq;
        init.recv_cq = recv_cq;
        init.qp_type = ibv_qp_type::IBV_QPT_RC;
        init.sq_sig_all = 0;
        init.cap = ibv_qp_cap {
            max_send_wr: caps.send_wr,
            max_recv_wr: caps.recv_wr,
            max_send_sge: caps.send_sge,
            max_recv_sge: 1,
            max_inline_data: inline,
        };
        // SAFETY: pd and the CQs are live (caller contract); init is initialized.
        let qp = unsafe { ibv_create_qp(pd, &mut init) };
        if !qp.is_null() {
            // The provider wrote the sizes it granted back into init.cap.
            return Ok((qp, init.cap.max_inline_data));
        }
        if inline == 0 {
            return Err(Error::last_os(&format!(
                "ibv_create_qp (RC, {} send / {} receive work requests, {} send SGEs)",
                caps.send_wr, caps.recv_wr, caps.send_sge
            )));
        }
        inline = if inline > 64 { inline / 2 } else { 0 };
    }
}

/// # Safety
/// `qp` must be a live QP.
unsafe fn modify(
    qp: *mut ibv_qp,
    attr: &mut ibv_qp_attr,
    mask: ibv_qp_attr_mask,
    what: &str,
) -> Result<()> {
    // SAFETY: qp is live (caller contract); attr is initialized for the fields in mask.
    let rc = unsafe { ibv_modify_qp(qp, attr, mask.0 as i32) };
    if rc != 0 {
        return Err(Error::os(&format!("ibv_modify_qp to {what}"), rc));
    }
    Ok(())
}

fn zeroed_attr() -> ibv_qp_attr {
    // SAFETY: all-zero is a valid ibv_qp_attr (integers, and unions of integer arrays).
    unsafe { std::mem::zeroed() }
}

/// RESET -> INIT: receive buffers can be posted from here on, before the peer connects
/// (so no message can ever find none posted).
///
/// # Safety
/// `qp` must be a live QP.
pub unsafe fn to_init(qp: *mut ibv_qp, port: u8) -> Result<()> {
    let mut a = zeroed_attr();
    a.qp_state = ibv_qp_state::IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = port;
    a.qp_access_flags = (ibv_access_flags::IBV_ACCESS_LOCAL_WRITE
        | ibv_access_flags::IBV_ACCESS_REMOTE_READ
        | ibv_access_flags::IBV_ACCESS_REMOTE_WRITE)
        .0;
    let mask = ibv_qp_attr_mask::IBV_QP_STATE
        | ibv_qp_attr_mask::IBV_QP_PKEY_INDEX
        | ibv_qp_attr_mask::IBV_QP_PORT
        | ibv_qp_attr_mask::IBV_QP_ACCESS_FLAGS;
    // SAFETY: qp is live (caller contract).
    unsafe { modify(qp, &mut a, mask, "INIT") }
}

/// What `connect` settles from both cards.
pub struct Path {
    pub remote_qpn: u32,
    pub remote: Addr,
    /// min of both sides' active MTU.
    pub mtu: u32,
    /// RDMA READs we may have outstanding: min(ours, the peer's responder resources).
    pub rd_atomic: u8,
    /// Responder resources we grant.
    pub dest_rd_atomic: u8,
    pub my_psn: u32,
}

/// INIT -> RTR (addressing the peer) -> RTS.
///
/// # Safety
/// `qp` must be a live QP in INIT.
pub unsafe fn connect(qp: *mut ibv_qp, dev: &Device, path: &Path) -> Result<()> {
    let mut a = zeroed_attr();
    a.qp_state = ibv_qp_state::IBV_QPS_RTR;
    a.path_mtu = path.mtu;
    a.dest_qp_num = path.remote_qpn;
    a.rq_psn = path.remote.psn & 0xff_ffff;
    a.max_dest_rd_atomic = path.dest_rd_atomic;
    a.min_rnr_timer = MIN_RNR_TIMER;
    a.ah_attr.port_num = dev.port;
    a.ah_attr.sl = 0;
    a.ah_attr.src_path_bits = 0;
    a.ah_attr.dlid = path.remote.lid;
    let global = dev.link_layer == LINK_LAYER_ETHERNET
        || dev.gid_index.is_some()
        || path.remote.flags & crate::card::FLAG_GLOBAL != 0;
    if global {
        // RoCE has no LIDs: the GRH carries the addresses (IPv4-mapped GIDs become the IP
        // header of RoCE v2).
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.dgid = ibv_gid {
            raw: path.remote.gid,
        };
        a.ah_attr.grh.sgid_index = dev.gid_index.unwrap_or(0);
        a.ah_attr.grh.hop_limit = HOP_LIMIT;
        a.ah_attr.grh.traffic_class = 0;
        a.ah_attr.grh.flow_label = 0;
    }
    let mask = ibv_qp_attr_mask::IBV_QP_STATE
        | ibv_qp_attr_mask::IBV_QP_AV
        | ibv_qp_attr_mask::IBV_QP_PATH_MTU
        | ibv_qp_attr_mask::IBV_QP_DEST_QPN
        | ibv_qp_attr_mask::IBV_QP_RQ_PSN
        | ibv_qp_attr_mask::IBV_QP_MAX_DEST_RD_ATOMIC
        | ibv_qp_attr_mask::IBV_QP_MIN_RNR_TIMER;
    // SAFETY: qp is live (caller contract).
    unsafe { modify(qp, &mut a, mask, "RTR")? };

    let mut b = zeroed_attr();
    b.qp_state = ibv_qp_state::IBV_QPS_RTS;
    b.timeout = TIMEOUT;
    b.retry_cnt = RETRY_CNT;
    b.rnr_retry = RNR_RETRY;
    b.sq_psn = path.my_psn & 0xff_ffff;
    b.max_rd_atomic = path.rd_atomic;
    let mask = ibv_qp_attr_mask::IBV_QP_STATE
        | ibv_qp_attr_mask::IBV_QP_TIMEOUT
        | ibv_qp_attr_mask::IBV_QP_RETRY_CNT
        | ibv_qp_attr_mask::IBV_QP_RNR_RETRY
        | ibv_qp_attr_mask::IBV_QP_SQ_PSN
        | ibv_qp_attr_mask::IBV_QP_MAX_QP_RD_ATOMIC;
    // SAFETY: qp is live (caller contract).
    unsafe { modify(qp, &mut b, mask, "RTS") }
}
