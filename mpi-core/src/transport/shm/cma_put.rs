//! Single-copy writes into a peer (`process_vm_writev`): the sending side's half of a
//! cooperative rendezvous, where the receiver reads the first part of a large message while
//! the sender writes the rest, so both cores copy at once.

use super::ShmTransport;
use std::sync::atomic::Ordering;

impl ShmTransport {
    /// Whether single-copy transfers with local rank `peer` work (the kernel has not refused
    /// one and the peer's published pid was verified to name it).
    pub fn cma_ready(&mut self, peer: usize) -> bool {
        if !self.cma_ok || peer == self.me {
            return false;
        }
        let pid = self.pid_word(peer).load(Ordering::Relaxed) as libc::pid_t;
        self.cma_peer_ok(peer, pid)
    }

    /// Writes `len` bytes from `src` to address `remote` of local rank `peer`. Returns how
    /// many bytes landed (a prefix); fewer than `len` means the rest must go another way.
    ///
    /// # Safety
    /// `src` must be valid for reads of `len` bytes; `remote` must be a buffer `peer` handed
    /// us for writing and does not touch until we tell it the write is over.
    pub unsafe fn put(&mut self, peer: usize, remote: u64, src: *const u8, len: usize) -> usize {
        if !self.cma_ready(peer) {
            return 0;
        }
        let pid = self.pid_word(peer).load(Ordering::Relaxed) as libc::pid_t;
        let mut done = 0;
        while done < len {
            let n = (len - done).min(1 << 30);
            // SAFETY: per the contract `src` is readable for len bytes; the kernel checks
            // the remote range and fails cleanly if it is not mapped writable.
            let r = unsafe {
                let local = libc::iovec { iov_base: src.add(done) as *mut libc::c_void, iov_len: n };
                let remote = libc::iovec { iov_base: (remote as usize + done) as *mut libc::c_void, iov_len: n };
                libc::process_vm_writev(pid, &local, 1, &remote, 1, 0)
            };
            if r <= 0 {
                self.cma_ok = false;
                break;
            }
            done += r as usize;
        }
        done
    }
}
