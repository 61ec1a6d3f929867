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
    /// The communicator hints (`info::COMM_HINTS` in the C layer) given at creation or by
    /// `MPI_Comm_set_info`.
    pub info: Vec<(String, String)>,
    /// The session this communicator derives from (its groups came from a session's process
    /// set), or None for the World Model's; inherited by every communicator made from it.
    pub session: Option<u32>,
}

impl Comm {
    /// A fresh intracommunicator on context `ctx` over `world_ranks`.
    pub fn intra(ctx: u32, rank: usize, world_ranks: Arc<[usize]>, errhandler: i32) -> Comm {
        Comm { ctx, rank, world_ranks, local_ranks: None, coll_seq: 0, nb_coll_seq: 0, errhandler, name: String::new(), topo: None, info: Vec::new(), session: None }
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

    /// Takes back the tag `next_collective` just gave: the collective failed its argument
    /// checks before any traffic, so for the peers it never happened (MPICH's errors/coll
    /// tests follow a root-only error with a correct call on the erring rank).
    pub fn unwind_collective(&mut self, nonblocking: bool) {
        let seq = if nonblocking { &mut self.nb_coll_seq } else { &mut self.coll_seq };
        *seq = seq.wrapping_sub(1);
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
        (self.coll_view(), tag)
    }

    /// The schedule view of this communicator, taking no tag: a persistent collective
    /// reuses the tag it took at its initialisation for every start.
    pub fn coll_view(&self) -> CollComm {
        match &self.local_ranks {
            None => CollComm::new(self.coll_ctx(), self.rank, self.world_ranks.clone()),
            Some(local) => CollComm { ctx: self.coll_ctx(), rank: self.rank, world_ranks: local.clone(), remote: Some(self.world_ranks.clone()) },
        }
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

/// Slot whose collective context carries the context agreements of the constructors that
/// have no parent communicator (`MPI_Comm_create_from_group`,
/// `MPI_Intercomm_create_from_groups`): never handed to a communicator.
pub const SESSION_SLOT: usize = 2;

/// Context of a communicator from `MPI_Comm_idup` whose agreement has not ended: no
/// slot's context, so nothing matches it (using the communicator then is erroneous).
pub const PENDING_CTX: u32 = u32::MAX - 1;

/// Number of context slots (each is two context ids).
pub const CONTEXT_SLOTS: usize = 4096;
/// 64-bit words in a free-slot mask.
pub const MASK_WORDS: usize = CONTEXT_SLOTS / 64;
/// Slots of a constructor whose only member is this process (`MPI_Comm_dup(MPI_COMM_SELF)`,
/// a split into singletons): every fourth slot. Such a constructor needs no consensus and
/// takes one at once, even while other agreements are in flight (MPICH's threads/comm
/// tests hold a lock around such a dup while other threads' agreements wait for peers).
const LOCAL_BITS: u64 = 0x8888_8888_8888_8888;
/// The first round of every agreement may offer only the free slots of these words (the
/// eager slots, MPICH's scheme), and only one first round at a time; later rounds offer
/// the other words (the main slots).
const EAGER_WORDS: usize = 2;

/// What an agreement round offered.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Held {
    Nothing,
    Eager,
    Main,
}

/// Free context slots of this process, and the turn-taking that lets several agreements
/// run at once without ever handing one slot to two of them (MPICH's scheme).
///
/// A round that offers slots holds them until every member has joined the round, so the
/// holder must never wait for a member that has not started the agreement: that member
/// may be blocked in another constructor (legal after an `MPI_Comm_idup`, or in another
/// thread) whose slots are the ones held, and the job would hang. Hence:
/// - an agreement's first round offers the eager slots if no other first round holds them,
///   else nothing; either way, once it ends, every member has started the agreement;
/// - only then does the agreement queue for the main slots: among queued agreements the
///   one with the lowest key (`Agreement::key_of`: parent context, then tag, the same on
///   every member) offers them when no other round holds them; the others offer nothing
///   and retry. A main round waits only for members that are inside the agreement.
pub struct ContextAlloc {
    used: [u64; MASK_WORDS],
    /// Key of the first round holding the eager slots.
    eager_owner: Option<u64>,
    /// Key of the round holding the main slots.
    owner: Option<u64>,
    /// Keys of agreements past their first round, waiting for the main slots.
    waiting: BTreeSet<u64>,
}

impl ContextAlloc {
    fn new() -> ContextAlloc {
        let mut used = [0u64; MASK_WORDS];
        used[0] = 0b111; // world, self and the sessions' constructors (`SESSION_SLOT`)
        ContextAlloc { used, eager_owner: None, owner: None, waiting: BTreeSet::new() }
    }

    /// The mask this process offers for a round of the agreement with key `parent`
    /// (`first`: its first round), and what that round holds.
    pub fn offer(&mut self, parent: u64, first: bool) -> ([u64; MASK_WORDS], Held) {
        let mut m = [0u64; MASK_WORDS];
        let words = if first {
            if self.eager_owner.is_some() {
                return (m, Held::Nothing);
            }
            self.eager_owner = Some(parent);
            0..EAGER_WORDS
        } else {
            if self.owner.is_some() || self.waiting.first() != Some(&parent) {
                return (m, Held::Nothing);
            }
            self.owner = Some(parent);
            EAGER_WORDS..MASK_WORDS
        };
        for i in words.clone() {
            m[i] = !self.used[i] & !LOCAL_BITS;
        }
        (m, if words.start == 0 { Held::Eager } else { Held::Main })
    }

    /// Ends a round of agreement `parent` that held `held`, with the ANDed mask `agreed`:
    /// takes and returns its lowest slot if any (possible only if every member offered).
    /// After a first round without a slot the agreement queues for the main slots.
    pub fn conclude(&mut self, parent: u64, held: Held, first: bool, agreed: &[u64; MASK_WORDS]) -> Option<usize> {
        self.release_hold(held);
        let slot = agreed.iter().enumerate().find(|(_, w)| **w != 0).map(|(i, w)| i * 64 + w.trailing_zeros() as usize);
        match slot {
            Some(slot) => {
                debug_assert!(held != Held::Nothing, "a non-empty agreement implies this process offered its slots");
                self.used[slot / 64] |= 1 << (slot % 64);
                self.waiting.remove(&parent);
            }
            None if first => {
                self.waiting.insert(parent);
            }
            None => {}
        }
        slot
    }

    /// The lowest free slot for a constructor of this process alone, taken at once.
    pub fn take_local(&mut self) -> Option<usize> {
        let (i, w) = self.used.iter_mut().enumerate().find(|(_, w)| !**w & LOCAL_BITS != 0)?;
        let bit = (!*w & LOCAL_BITS).trailing_zeros() as usize;
        *w |= 1 << bit;
        Some(i * 64 + bit)
    }

    /// Gives up an agreement (the caller reports an error).
    pub fn abandon(&mut self, parent: u64, held: Held) {
        self.release_hold(held);
        self.waiting.remove(&parent);
    }

    fn release_hold(&mut self, held: Held) {
        match held {
            Held::Eager => self.eager_owner = None,
            Held::Main => self.owner = None,
            Held::Nothing => {}
        }
    }

    /// Returns the slot of context `ctx` to the free pool.
    pub fn release(&mut self, ctx: u32) {
        let slot = (ctx / 2) as usize;
        if slot > SESSION_SLOT && slot < CONTEXT_SLOTS {
            self.used[slot / 64] &= !(1 << (slot % 64));
        }
    }

    /// Slots in use (world and self included).
    pub fn in_use(&self) -> usize {
        self.used.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Slots agreements can take (the local ones excluded).
    pub fn capacity() -> usize {
        CONTEXT_SLOTS - CONTEXT_SLOTS * LOCAL_BITS.count_ones() as usize / 64
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

    /// One agreement alone: its first round takes the lowest eager slot.
    #[test]
    fn agreement_takes_lowest_common_slot_and_release_reuses_it() {
        let mut a = ContextAlloc::new();
        let (m, held) = a.offer(0, true);
        assert_eq!(held, Held::Eager);
        assert_eq!(a.conclude(0, held, true, &m), Some(4), "slot 2 is reserved, slot 3 is a local one");
        let (m2, held) = a.offer(0, true);
        assert_eq!(a.conclude(0, held, true, &m2), Some(5));
        a.release(slot_ctx(4));
        a.release(slot_ctx(SESSION_SLOT));
        let (m3, held) = a.offer(0, true);
        assert_eq!(a.conclude(0, held, true, &m3), Some(4));
        assert_eq!(a.in_use(), 5);
    }

    /// A first round holding the eager slots (its peers have not all started it) never
    /// keeps another agreement from its slots: that one's first round offers nothing, and
    /// its later rounds use the main slots.
    #[test]
    fn a_round_in_flight_never_blocks_another_agreement() {
        let mut a = ContextAlloc::new();
        let (eager, held) = a.offer(8, true);
        assert_eq!(held, Held::Eager);
        let (zero, none) = a.offer(100, true);
        assert_eq!(none, Held::Nothing);
        assert!(zero.iter().all(|w| *w == 0));
        assert_eq!(a.conclude(100, none, true, &zero), None, "first round: nobody may have offered");
        let (main, held_main) = a.offer(100, false);
        assert_eq!(held_main, Held::Main, "queued alone: it takes the main slots");
        for (x, y) in eager.iter().zip(main.iter()) {
            assert_eq!(x & y, 0, "eager and main slots never overlap");
        }
        assert_eq!(a.conclude(100, held_main, false, &main), Some(EAGER_WORDS * 64));
        assert_eq!(a.conclude(8, held, true, &eager), Some(4));
    }

    /// Queued agreements take turns, lowest key first, whatever order they queued in.
    #[test]
    fn queued_agreements_take_turns_lowest_key_first() {
        let mut a = ContextAlloc::new();
        for k in [8, 4] {
            let (_, h) = a.offer(k, true);
            assert_eq!(a.conclude(k, h, true, &[0; MASK_WORDS]), None, "a peer offered nothing");
        }
        assert_eq!(a.offer(8, false).1, Held::Nothing, "4 goes first");
        let (m, h) = a.offer(4, false);
        assert_eq!(h, Held::Main);
        assert_eq!(a.offer(8, false).1, Held::Nothing, "main slots held");
        assert_eq!(a.conclude(4, h, false, &[0; MASK_WORDS]), None, "a peer was not ready");
        assert_eq!(a.offer(4, false).1, Held::Main, "4 again: still the lowest");
        a.abandon(4, Held::Main);
        let (m8, h8) = a.offer(8, false);
        assert_eq!(h8, Held::Main);
        assert!(a.conclude(8, h8, false, &m8).is_some());
        let _ = m;
    }

    #[test]
    fn local_slots_are_taken_at_once_and_never_offered() {
        let mut a = ContextAlloc::new();
        let (eager, _) = a.offer(4, true);
        for k in [8, 9] {
            let (_, h) = a.offer(k, true);
            a.conclude(k, h, true, &[0; MASK_WORDS]);
        }
        let (main, _) = a.offer(8, false);
        assert_eq!(a.take_local(), Some(3));
        assert_eq!(a.take_local(), Some(7));
        for w in eager.iter().chain(main.iter()) {
            assert_eq!(w & LOCAL_BITS, 0, "no agreement is offered a local slot");
        }
        a.release(slot_ctx(3));
        assert_eq!(a.take_local(), Some(3));
        let local = CONTEXT_SLOTS - ContextAlloc::capacity();
        let taken = (0..local).filter_map(|_| a.take_local()).count();
        assert_eq!(taken, local - 2);
        assert_eq!(a.take_local(), None, "full: the caller agrees with the others");
    }
}
