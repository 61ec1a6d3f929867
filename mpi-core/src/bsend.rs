//! The buffers of buffered sends (MPI 4.1 §3.6): the process's (`MPI_Buffer_attach`), each
//! session's (`MPI_Session_attach_buffer`) and each communicator's (`MPI_Comm_attach_buffer`).
//! A buffered send uses its communicator's buffer, else that of the session the
//! communicator derives from, else the process's. A buffer is either user memory, carved first-fit into one
//! region per pending message, or `MPI_BUFFER_AUTOMATIC`: the engine then copies each
//! message into memory of its own, so such a send never fails for lack of space.

use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::request::ReqId;
use std::collections::HashMap;

/// Whose buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Owner {
    /// The process's (`MPI_Buffer_attach`).
    Process,
    /// The session's with this id (`MPI_Session_attach_buffer`).
    Session(u32),
    /// The communicator's with this context id (`MPI_Comm_attach_buffer`).
    Comm(u32),
}

/// Where a pending buffered send keeps its copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// At this offset of a user buffer.
    At(usize),
    /// In memory of the request's own (an automatic buffer).
    Owned,
}

/// One attached buffer.
struct Buffer {
    base: usize,
    size: usize,
    automatic: bool,
    /// Allocated (offset, len) of a user buffer, sorted by offset.
    used: Vec<(usize, usize)>,
    /// Pending sends of an automatic buffer.
    owned: usize,
}

impl Buffer {
    fn alloc(&mut self, len: usize) -> Option<usize> {
        let len = len.max(1);
        let mut at = 0;
        for (i, &(off, l)) in self.used.iter().enumerate() {
            if off - at >= len {
                self.used.insert(i, (at, len));
                return Some(at);
            }
            at = off + l;
        }
        if self.size - at >= len {
            self.used.push((at, len));
            return Some(at);
        }
        None
    }

    fn idle(&self) -> bool {
        self.used.is_empty() && self.owned == 0
    }
}

/// Every attached buffer, and the `MPI_Buffer_iflush`-style requests waiting for one to
/// empty.
#[derive(Default)]
pub struct Buffers {
    map: HashMap<Owner, Buffer>,
    waiters: Vec<(ReqId, Owner)>,
    /// The session each communicator derived from a session belongs to, by context id.
    sessions: HashMap<u32, u32>,
}

impl Buffers {
    /// The buffer a buffered send on context `ctx` uses.
    pub fn owner_for(&self, ctx: u32) -> Owner {
        if self.map.is_empty() {
            return Owner::Process;
        }
        if self.map.contains_key(&Owner::Comm(ctx)) {
            return Owner::Comm(ctx);
        }
        match self.sessions.get(&ctx) {
            Some(&s) if self.map.contains_key(&Owner::Session(s)) => Owner::Session(s),
            _ => Owner::Process,
        }
    }

    /// Records that the communicator on context `ctx` derives from session `session`
    /// (None: from the World Model, or freed).
    pub fn set_session(&mut self, ctx: u32, session: Option<u32>) {
        match session {
            Some(s) => self.sessions.insert(ctx, s),
            None => self.sessions.remove(&ctx),
        };
    }

    /// Attaches a buffer (`base`/`size` are ignored for an automatic one).
    pub fn attach(&mut self, owner: Owner, base: *mut u8, size: usize, automatic: bool) -> MpiResult<()> {
        if self.map.contains_key(&owner) {
            let whose = match owner {
                Owner::Process => "the process",
                Owner::Session(_) => "this session",
                Owner::Comm(_) => "this communicator",
            };
            return Err(MpiError::new(ErrorClass::Buffer, format!("a buffer is already attached to {whose}; detach it first")));
        }
        self.map.insert(owner, Buffer { base: base as usize, size: if automatic { 0 } else { size }, automatic, used: Vec::new(), owned: 0 });
        Ok(())
    }

    /// Whether `owner`'s buffer holds no pending message (true when none is attached).
    pub fn idle(&self, owner: Owner) -> bool {
        self.map.get(&owner).is_none_or(Buffer::idle)
    }

    /// Whether some buffer still holds a pending message.
    pub fn any_pending(&self) -> bool {
        self.map.values().any(|b| !b.idle())
    }

    /// Detaches `owner`'s buffer (the caller waited for it to be idle): (base, size,
    /// automatic), or None when none is attached.
    pub fn detach(&mut self, owner: Owner) -> Option<(*mut u8, usize, bool)> {
        self.map.remove(&owner).map(|b| (b.base as *mut u8, b.size, b.automatic))
    }

    /// Reserves room for a message of `len` bytes in `owner`'s buffer: the region and, for
    /// a user buffer, the address of the copy.
    pub fn reserve(&mut self, owner: Owner, len: usize) -> MpiResult<(Region, *mut u8)> {
        let Some(b) = self.map.get_mut(&owner) else {
            return Err(MpiError::new(ErrorClass::Buffer, format!("a buffered send of {len} bytes, but no buffer is attached (MPI_Buffer_attach, MPI_Comm_attach_buffer, MPI_Session_attach_buffer)")));
        };
        if b.automatic {
            b.owned += 1;
            return Ok((Region::Owned, std::ptr::null_mut()));
        }
        match b.alloc(len) {
            Some(off) => Ok((Region::At(off), (b.base + off) as *mut u8)),
            None => Err(MpiError::new(
                ErrorClass::Buffer,
                format!(
                    "a buffered send of {len} bytes does not fit in the attached buffer ({} bytes, {} in use); attach a larger buffer",
                    b.size,
                    b.used.iter().map(|u| u.1).sum::<usize>()
                ),
            )),
        }
    }

    /// Releases a completed send's region; returns the flush requests that may complete
    /// now (the buffer became idle).
    pub fn release(&mut self, owner: Owner, region: Region) -> Vec<ReqId> {
        let Some(b) = self.map.get_mut(&owner) else { return Vec::new() };
        match region {
            Region::At(off) => b.used.retain(|&(o, _)| o != off),
            Region::Owned => b.owned = b.owned.saturating_sub(1),
        }
        if !b.idle() {
            return Vec::new();
        }
        let (done, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiters).into_iter().partition(|w| w.1 == owner);
        self.waiters = keep;
        done.into_iter().map(|w| w.0).collect()
    }

    /// Request `rid` completes once `owner`'s buffer is idle (the caller checked it is not).
    pub fn wait_idle(&mut self, rid: ReqId, owner: Owner) {
        self.waiters.push((rid, owner));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_reuses_released_regions() {
        let mut b = Buffers::default();
        b.attach(Owner::Process, 0x1000 as *mut u8, 100, false).unwrap();
        let (r1, p1) = b.reserve(Owner::Process, 40).unwrap();
        let (r2, p2) = b.reserve(Owner::Process, 40).unwrap();
        assert_eq!((r1, p1 as usize), (Region::At(0), 0x1000));
        assert_eq!((r2, p2 as usize), (Region::At(40), 0x1028));
        assert!(b.reserve(Owner::Process, 40).is_err(), "only 20 bytes left");
        assert!(b.release(Owner::Process, r1).is_empty(), "still one pending");
        assert_eq!(b.reserve(Owner::Process, 30).unwrap().0, Region::At(0));
        assert!(!b.idle(Owner::Process));
    }

    #[test]
    fn communicator_buffers_take_precedence_and_flush_waiters_complete() {
        let mut b = Buffers::default();
        b.attach(Owner::Process, 0x1000 as *mut u8, 100, false).unwrap();
        b.attach(Owner::Comm(7), std::ptr::null_mut(), 0, true).unwrap();
        assert_eq!(b.owner_for(7), Owner::Comm(7));
        assert_eq!(b.owner_for(8), Owner::Process);
        assert!(b.attach(Owner::Comm(7), std::ptr::null_mut(), 0, true).is_err());
        let (r, _) = b.reserve(Owner::Comm(7), 1 << 30).unwrap();
        assert_eq!(r, Region::Owned);
        b.wait_idle(5, Owner::Comm(7));
        assert_eq!(b.release(Owner::Comm(7), r), vec![5]);
        assert!(b.idle(Owner::Comm(7)));
        assert_eq!(b.detach(Owner::Comm(7)).map(|d| d.2), Some(true));
        assert!(b.detach(Owner::Comm(7)).is_none());
    }

    #[test]
    fn session_buffers_between_communicator_and_process() {
        let mut b = Buffers::default();
        b.attach(Owner::Process, 0x1000 as *mut u8, 100, false).unwrap();
        b.set_session(9, Some(3));
        assert_eq!(b.owner_for(9), Owner::Process, "no session buffer yet");
        b.attach(Owner::Session(3), std::ptr::null_mut(), 0, true).unwrap();
        assert_eq!(b.owner_for(9), Owner::Session(3));
        assert_eq!(b.owner_for(10), Owner::Process, "not derived from the session");
        b.attach(Owner::Comm(9), std::ptr::null_mut(), 0, true).unwrap();
        assert_eq!(b.owner_for(9), Owner::Comm(9));
        b.detach(Owner::Comm(9));
        b.set_session(9, None);
        assert_eq!(b.owner_for(9), Owner::Process);
    }
}
