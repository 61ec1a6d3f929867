//! Communicators as the engine sees them: a context id pair (point-to-point and
//! collective traffic never match each other), this process's rank, and the world rank of
//! every member; plus the table of communicators and the context-id allocator.
//!
//! Context ids come in slots: slot `s` owns contexts `2s` (point-to-point) and `2s + 1`
//! (collectives; for an intercommunicator, also the private traffic of its local group). A new
//! communicator's slot must be free on every member, so the members AND their free-slot
//! masks (see `ContextAlloc`) and take the lowest bit of the result. Freeing a communicator
//! returns its slot. Lowest-first keeps context ids small: the matching engine indexes
//! its queues by context id.

use crate::coll::schedule::COLL_TAG_MASK;
use crate::coll::CollComm;
use crate::topology::Topology;
use std::collections::BTreeSet;
use std::sync::Arc;

/// A communicator. `ctx` carries point-to-point traffic, `ctx + 1` collective traffic.
///
/// For an intercommunicator, `world_ranks` is the *remote* group (point-to-point ranks
/// address it, so sends and receives need no special case) and `local_ranks` the local one.
#[derive(Clone, Debug)]
pub struct Comm {
    pub ctx: u32,
    pub rank: usize,
    /// World rank of each member addressed by point-to-point ranks (the remote group of an
    /// intercommunicator), indexed by rank.
    pub world_ranks: Arc<[usize]>,
    /// Intercommunicators only: the local group (this process is `local_ranks[rank]`).
    pub local_ranks: Option<Arc<[usize]>>,
    /// Blocking collectives started on this communicator, and nonblocking ones: the tag of
    /// each, identical on every member because all members call collectives in the same
    /// order. Two sequences, in disjoint tag ranges (`NONBLOCKING_TAG`), as MPICH and Open
    /// MPI keep them apart too: programs that order blocking and nonblocking collectives
    /// differently on different ranks (erroneous by MPI 4.1 §6.12, but mpi4py's ULFM
    /// fallbacks do it) still match up.
    pub coll_seq: u32,
    pub nb_coll_seq: u32,
    /// Error handler handle of the C layer (opaque here).
    pub errhandler: i32,
    pub name: String,
    /// Process topology attached by the topology constructors.
    pub topo: Option<Arc<Topology>>,
    /// Info hints given at creation or by `MPI_Comm_set_info` (kept and returned as is).
    pub info: Vec<(String, String)>,
}

impl Comm {
    /// A fresh intracommunicator on context `ctx` over `world_ranks`.
    pub fn intra(ctx: u32, rank: usize, world_ranks: Arc<[usize]>, errhandler: i32) -> Comm {
        Comm { ctx, rank, world_ranks, local_ranks: None, coll_seq: 0, nb_coll_seq: 0, errhandler, name: String::new(), topo: None, info: Vec::new() }
    }

    /// Number of ranks point-to-point calls address (remote group size on intercomms).
    pub fn size(&self) -> usize {
        self.world_ranks.len()
    }

    pub fn is_inter(&self) -> bool {
        self.local_ranks.is_some()
    }

    /// The group this process belongs to (world ranks).
    pub fn local_group(&self) -> Arc<[usize]> {
        self.local_ranks.clone().unwrap_or_else(|| self.world_ranks.clone())
    }

    /// Size of the local group (`MPI_Comm_size`).
    pub fn local_size(&self) -> usize {
        self.local_ranks.as_ref().map_or(self.world_ranks.len(), |l| l.len())
    }

    /// Collective-traffic context.
    pub fn coll_ctx(&self) -> u32 {
        self.ctx + 1
    }

    /// The next collective's tag (advances its sequence number).
    fn next_tag(&mut self, nonblocking: bool) -> i32 {
        let seq = if nonblocking { &mut self.nb_coll_seq } else { &mut self.coll_seq };
        let tag = (*seq & SEQ_TAG_MASK) as i32;
        *seq = seq.wrapping_add(1);
        if nonblocking {
            tag | NONBLOCKING_TAG
        } else {
            tag
        }
    }

    /// Restarts both sequences (a new communicator from a copy of this one).
    pub fn reset_sequences(&mut self) {
        self.coll_seq = 0;
        self.nb_coll_seq = 0;
    }

    /// The schedule view of this communicator for the next collective (advances the tag of
    /// the blocking or the nonblocking sequence). On an intercommunicator the algorithms
    /// run over the local group and reach the remote group through `CollComm::remote_peer`.
    pub fn next_collective(&mut self, nonblocking: bool) -> (CollComm, i32) {
        let tag = self.next_tag(nonblocking);
        let cc = match &self.local_ranks {
            None => CollComm::new(self.coll_ctx(), self.rank, self.world_ranks.clone()),
            Some(local) => CollComm { ctx: self.coll_ctx(), rank: self.rank, world_ranks: local.clone(), remote: Some(self.world_ranks.clone()) },
        };
        (cc, tag)
    }

    /// The schedule view of the *local group* only, for internal agreement steps
    /// (context-id allocation, splits). It shares the tag sequences of `next_collective`,
    /// so the local traffic of an agreement and of a collective never match each other.
    pub fn next_local_collective(&mut self, nonblocking: bool) -> (CollComm, i32) {
        let tag = self.next_tag(nonblocking);
        (CollComm::new(self.coll_ctx(), self.rank, self.local_group()), tag)
    }
}

/// Tag bit of nonblocking collectives (below `REMOTE_TAG`, within `COLL_TAG_MASK`).
pub const NONBLOCKING_TAG: i32 = 0x1000_0000;
/// Sequence numbers are taken modulo this + 1 before the `NONBLOCKING_TAG` bit is added.
const SEQ_TAG_MASK: u32 = 0x0fff_ffff;
const _: () = assert!(NONBLOCKING_TAG as u32 | SEQ_TAG_MASK == COLL_TAG_MASK);

/// Index of `MPI_COMM_WORLD` and `MPI_COMM_SELF` in the table.
pub const WORLD: usize = 0;
pub const SELF: usize = 1;

/// Context of a communicator from `MPI_Comm_idup` whose agreement has not ended: no
/// slot's context, so nothing matches it (using the communicator then is erroneous).
pub const PENDING_CTX: u32 = u32::MAX - 1;

/// Number of context slots (each is two context ids), shared by the three `Lane`s.
pub const CONTEXT_SLOTS: usize = 4096;
/// 64-bit words in a free-slot mask.
pub const MASK_WORDS: usize = CONTEXT_SLOTS / 64;

/// Which agreements a slot serves (slot mod 4: 0 and 2 blocking, 1 nonblocking, 3 local).
/// An agreement whose round is in flight holds its lane's mask until every member has
/// joined, and a member may first block in another constructor; that one must not wait
/// for the held mask, or the job hangs. So:
/// - `MPI_Comm_idup` (nonblocking) has its own lane: a member may legally start a
///   blocking constructor before the idup that its peers already started;
/// - a constructor whose only member is this process (`MPI_Comm_dup(MPI_COMM_SELF)`,
///   a split into singletons) needs no consensus and takes a `Local` slot at once, even
///   while other threads' agreements are in flight (MPICH's threads/comm tests hold a
///   lock around such a dup while their other threads' agreements wait for peers).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Lane {
    Blocking = 0,
    Nonblocking = 1,
    Local = 2,
}

impl Lane {
    /// Bits of a mask word whose slots belong to this lane.
    fn bits(self) -> u64 {
        match self {
            Lane::Blocking => 0x5555_5555_5555_5555,
            Lane::Nonblocking => 0x2222_2222_2222_2222,
            Lane::Local => 0x8888_8888_8888_8888,
        }
    }

    /// Slots of this lane.
    pub fn capacity(self) -> usize {
        CONTEXT_SLOTS * self.bits().count_ones() as usize / 64
    }
}

/// Turn-taking of one lane: only one agreement at a time may offer the real mask.
#[derive(Default)]
struct Turns {
    /// Key of the agreement currently offering the real mask.
    owner: Option<u64>,
    /// Keys of agreements waiting for the mask.
    waiting: BTreeSet<u64>,
}

/// Free context slots of this process, and the state that lets several agreements run at
/// once (MPICH's scheme, per lane): only one agreement of a lane at a time may offer the
/// real mask; the others offer an empty mask and retry. The pending agreement whose parent
/// has the lowest key (`Agreement::key_of`: parent context, then tag) goes first, the same
/// choice on every process, so one always wins.
pub struct ContextAlloc {
    used: [u64; MASK_WORDS],
    turns: [Turns; 3],
}

impl ContextAlloc {
    fn new() -> ContextAlloc {
        let mut used = [0u64; MASK_WORDS];
        used[0] = 0b11; // world and self
        ContextAlloc { used, turns: Default::default() }
    }

    /// The mask this process offers for the agreement with key `parent` on `lane`: the
    /// lane's free slots if this agreement may use them now, else all zero. Returns
    /// (mask, owner).
    pub fn offer(&mut self, lane: Lane, parent: u64) -> ([u64; MASK_WORDS], bool) {
        let t = &mut self.turns[lane as usize];
        t.waiting.insert(parent);
        let first = t.waiting.iter().next().copied();
        if t.owner.is_none() && first == Some(parent) {
            t.owner = Some(parent);
            let mut m = [0u64; MASK_WORDS];
            for (o, u) in m.iter_mut().zip(self.used.iter()) {
                *o = !u & lane.bits();
            }
            (m, true)
        } else {
            ([0u64; MASK_WORDS], false)
        }
    }

    /// Ends one agreement round on `parent` with the ANDed mask `agreed`: takes and returns
    /// its lowest slot if any (possible only if every member offered its real mask).
    pub fn conclude(&mut self, lane: Lane, parent: u64, owner: bool, agreed: &[u64; MASK_WORDS]) -> Option<usize> {
        let t = &mut self.turns[lane as usize];
        if owner {
            t.owner = None;
        }
        let slot = agreed.iter().enumerate().find(|(_, w)| **w != 0).map(|(i, w)| i * 64 + w.trailing_zeros() as usize)?;
        debug_assert!(owner, "a non-empty agreement implies this process offered its mask");
        self.used[slot / 64] |= 1 << (slot % 64);
        t.waiting.remove(&parent);
        Some(slot)
    }

    /// The lowest free `Local` slot, taken at once (an agreement of this process alone).
    pub fn take_local(&mut self) -> Option<usize> {
        let (i, w) = self.used.iter_mut().enumerate().find(|(_, w)| !**w & Lane::Local.bits() != 0)?;
        let bit = (!*w & Lane::Local.bits()).trailing_zeros() as usize;
        *w |= 1 << bit;
        Some(i * 64 + bit)
    }

    /// Gives up an agreement (the caller reports an error).
    pub fn abandon(&mut self, lane: Lane, parent: u64) {
        let t = &mut self.turns[lane as usize];
        t.waiting.remove(&parent);
        if t.owner == Some(parent) {
            t.owner = None;
        }
    }

    /// Returns the slot of context `ctx` to the free pool.
    pub fn release(&mut self, ctx: u32) {
        let slot = (ctx / 2) as usize;
        if slot > 1 && slot < CONTEXT_SLOTS {
            self.used[slot / 64] &= !(1 << (slot % 64));
        }
    }

    /// Slots in use (world and self included).
    pub fn in_use(&self) -> usize {
        self.used.iter().map(|w| w.count_ones() as usize).sum()
    }
}

/// Point-to-point context of slot `slot`.
pub fn slot_ctx(slot: usize) -> u32 {
    (slot * 2) as u32
}

/// All communicators of this process; freed slots are `None`.
pub struct CommTable {
    pub comms: Vec<Option<Comm>>,
    pub contexts: ContextAlloc,
}

impl Default for CommTable {
    fn default() -> Self {
        CommTable { comms: Vec::new(), contexts: ContextAlloc::new() }
    }
}

impl CommTable {
    /// The table at init: world (contexts 0/1) and self (contexts 2/3).
    pub fn new(rank: usize, size: usize, default_errhandler: i32) -> CommTable {
        let mut world = Comm::intra(0, rank, (0..size).collect(), default_errhandler);
        world.name = "MPI_COMM_WORLD".into();
        let mut me = Comm::intra(2, 0, Arc::new([rank]), default_errhandler);
        me.name = "MPI_COMM_SELF".into();
        CommTable { comms: vec![Some(world), Some(me)], contexts: ContextAlloc::new() }
    }

    pub fn get(&self, idx: usize) -> Option<&Comm> {
        self.comms.get(idx).and_then(|c| c.as_ref())
    }

    pub fn get_mut(&mut self, idx: usize) -> Option<&mut Comm> {
        self.comms.get_mut(idx).and_then(|c| c.as_mut())
    }

    /// Adds a communicator (its context slot already taken); returns its table index.
    pub fn insert(&mut self, c: Comm) -> usize {
        if let Some(i) = self.comms.iter().skip(2).position(|c| c.is_none()) {
            self.comms[i + 2] = Some(c);
            i + 2
        } else {
            self.comms.push(Some(c));
            self.comms.len() - 1
        }
    }

    /// Removes a user communicator and frees its context slot.
    pub fn remove(&mut self, idx: usize) -> Option<Comm> {
        if idx <= SELF {
            return None;
        }
        let c = self.comms.get_mut(idx)?.take()?;
        self.contexts.release(c.ctx);
        Some(c)
    }

    /// Number of live communicators (world and self included).
    pub fn live(&self) -> usize {
        self.comms.iter().filter(|c| c.is_some()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_takes_lowest_common_slot_and_release_reuses_it() {
        let mut a = ContextAlloc::new();
        let b = Lane::Blocking;
        let (m, own) = a.offer(b, 0);
        assert!(own);
        let s = a.conclude(b, 0, true, &m).unwrap();
        assert_eq!(s, 2);
        let (m2, _) = a.offer(b, 0);
        assert_eq!(a.conclude(b, 0, true, &m2), Some(4));
        a.release(slot_ctx(2));
        let (m3, _) = a.offer(b, 0);
        assert_eq!(a.conclude(b, 0, true, &m3), Some(2));
        assert_eq!(a.in_use(), 4);
    }

    #[test]
    fn concurrent_agreements_take_turns_lowest_parent_first() {
        let mut a = ContextAlloc::new();
        let b = Lane::Blocking;
        let (_, own_hi) = a.offer(b, 8);
        assert!(own_hi, "alone: it may offer");
        let (zero, own_lo) = a.offer(b, 4);
        assert!(!own_lo && zero.iter().all(|w| *w == 0), "mask busy: offer nothing");
        assert_eq!(a.conclude(b, 4, false, &zero), None);
        assert_eq!(a.conclude(b, 8, true, &[0; MASK_WORDS]), None, "a peer offered nothing");
        // Now the lower parent has priority.
        assert!(!a.offer(b, 8).1);
        assert!(a.offer(b, 4).1);
    }

    #[test]
    fn an_idup_in_flight_leaves_blocking_constructors_their_own_slots() {
        let mut a = ContextAlloc::new();
        let (nb, own_nb) = a.offer(Lane::Nonblocking, 8);
        assert!(own_nb);
        let (bl, own_bl) = a.offer(Lane::Blocking, 100);
        assert!(own_bl, "the blocking lane is not held by the idup");
        for (x, y) in nb.iter().zip(bl.iter()) {
            assert_eq!(x & y, 0, "the two lanes never offer the same slot");
        }
        assert_eq!(a.conclude(Lane::Blocking, 100, true, &bl), Some(2));
        assert_eq!(a.conclude(Lane::Nonblocking, 8, true, &nb), Some(5));
    }

    #[test]
    fn local_slots_are_taken_at_once_and_never_offered() {
        let mut a = ContextAlloc::new();
        let (bl, _) = a.offer(Lane::Blocking, 4);
        let (nb, _) = a.offer(Lane::Nonblocking, 8);
        assert_eq!(a.take_local(), Some(3));
        assert_eq!(a.take_local(), Some(7));
        for w in bl.iter().chain(nb.iter()) {
            assert_eq!(w & Lane::Local.bits(), 0, "no agreement is offered a local slot");
        }
        a.release(slot_ctx(3));
        assert_eq!(a.take_local(), Some(3));
        let taken = (0..Lane::Local.capacity()).filter_map(|_| a.take_local()).count();
        assert_eq!(taken, Lane::Local.capacity() - 2);
        assert_eq!(a.take_local(), None, "full: the caller agrees in the blocking lane");
        assert_eq!(Lane::Blocking.capacity() + Lane::Nonblocking.capacity() + Lane::Local.capacity(), CONTEXT_SLOTS);
    }
}
