//! Zero-copy transfers: offers (a buffer registered for peers to read), RDMA READ into a
//! local buffer (`get`, the rendezvous receive) and RDMA WRITE from one (`put`).
//!
//! A transfer is split into pieces of at most the port's `max_msg_sz`, with at most the
//! QP's negotiated `max_rd_atomic` READs outstanding (the responder's limit: more would be
//! a protocol error), and returns when every piece completed. Other send completions met
//! while waiting are processed as usual (they free slots of other peers).

use crate::eager::Kind;
use crate::regcache::{Registered, Registrar};
use crate::transport::Verbs;
use rdma_sys::*;

/// WRITEs outstanding per transfer at most (no responder limit; keeps queue room).
const MAX_WRITES: u32 = 8;
/// Empty polls before yielding the CPU while waiting (Soft-RoCE runs in the kernel on
/// the same CPUs; a spinning waiter on an oversubscribed node would starve it).
const SPINS_BEFORE_YIELD: u32 = 256;

/// Registers memory with the protection domain for the registration cache.
pub struct MrRegistrar {
    pub pd: *mut ibv_pd,
}

impl Registrar for MrRegistrar {
    type Mr = *mut ibv_mr;

    fn register(
        &mut self,
        addr: usize,
        len: usize,
        writable: bool,
    ) -> Option<Registered<*mut ibv_mr>> {
        let mut acc = ibv_access_flags::IBV_ACCESS_REMOTE_READ;
        if writable {
            acc |= ibv_access_flags::IBV_ACCESS_LOCAL_WRITE
                | ibv_access_flags::IBV_ACCESS_REMOTE_WRITE;
        }
        // SAFETY: the PD is live; the kernel checks that the range is mapped (it pins it).
        let mr = unsafe { ibv_reg_mr(self.pd, addr as *mut libc::c_void, len, acc.0 as i32) };
        if mr.is_null() {
            return None;
        }
        // SAFETY: a live MR just returned.
        let (lkey, rkey) = unsafe { ((*mr).lkey, (*mr).rkey) };
        Some(Registered { mr, lkey, rkey })
    }

    // The Mr values only ever come from `register` above (the cache hands back its own).
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    fn deregister(&mut self, mr: *mut ibv_mr) {
        // SAFETY: an MR of ours no posted request uses any more, deregistered once.
        unsafe { ibv_dereg_mr(mr) };
    }
}

impl Verbs {
    /// Registers `[addr, addr + len)` for peers to read (and write) until `withdraw`.
    pub fn offer(&mut self, addr: usize, len: usize) -> Option<u32> {
        if len == 0 {
            return Some(0);
        }
        let r = self.regs.acquire(addr, len, false)?;
        self.offers.entry((addr, len)).or_default().push(r.id);
        Some(r.rkey)
    }

    /// The peers are done with an offer.
    pub fn withdraw(&mut self, addr: usize, len: usize) {
        let Some(ids) = self.offers.get_mut(&(addr, len)) else {
            return;
        };
        let id = ids.pop();
        if ids.is_empty() {
            self.offers.remove(&(addr, len));
        }
        if let Some(id) = id {
            self.regs.release(id);
        }
    }

    /// RDMA READ (`read`) of `len` bytes at `remote` into `local`, or RDMA WRITE from
    /// `local` to `remote`; returns `len`, or 0 when `local` cannot be registered.
    pub fn transfer(
        &mut self,
        rank: u32,
        local: usize,
        remote: u64,
        rkey: u32,
        len: usize,
        read: bool,
    ) -> usize {
        if len == 0 {
            return 0;
        }
        let idx = self.peer_idx(rank, if read { "get" } else { "put" });
        let Some(reg) = self.regs.acquire(local, len, read) else {
            if self.verbose {
                eprintln!(
                    "OxMPI verbs: rank {}: cannot register {len} bytes at {local:#x}: {}",
                    self.rank,
                    std::io::Error::last_os_error()
                );
            }
            return 0;
        };
        let (kind, opcode) = if read {
            (Kind::Read, ibv_wr_opcode::IBV_WR_RDMA_READ)
        } else {
            (Kind::Write, ibv_wr_opcode::IBV_WR_RDMA_WRITE)
        };
        let limit = if read {
            self.peers[idx].rd_atomic.max(1)
        } else {
            MAX_WRITES
        } as u64;
        let piece = self.rdma_piece;
        let start = self.rdma_completed;
        let (mut off, mut posted, mut spins) = (0usize, 0u64, 0u32);
        while off < len || self.rdma_completed - start < posted {
            while off < len
                && posted - (self.rdma_completed - start) < limit
                && self.peers[idx].sq.room() > 0
            {
                let n = piece.min(len - off);
                let mut sg = [ibv_sge {
                    addr: (local + off) as u64,
                    length: n as u32,
                    lkey: reg.lkey,
                }];
                self.post_send(
                    idx,
                    kind,
                    opcode,
                    &mut sg,
                    0,
                    None,
                    Some((remote + off as u64, rkey)),
                    true,
                );
                off += n;
                posted += 1;
            }
            if self.poll_send_cq() == 0 {
                spins += 1;
                if spins >= SPINS_BEFORE_YIELD {
                    spins = 0;
                    std::thread::yield_now();
                }
            } else {
                spins = 0;
            }
        }
        self.regs.release(reg.id);
        len
    }

    /// Drops registrations overlapping a range that is being unmapped or replaced.
    pub fn invalidate(&mut self, addr: usize, len: usize) {
        self.regs.invalidate(addr, len);
    }
}
