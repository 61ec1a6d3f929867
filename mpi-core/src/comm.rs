//! Communicators as the engine sees them: a context id pair (point-to-point and
//! collective traffic never match each other), this process's rank, and the world rank of
//! every member.

use crate::coll::CollComm;
use std::sync::Arc;

/// A communicator. `ctx` carries point-to-point traffic, `ctx + 1` collective traffic.
#[derive(Clone, Debug)]
pub struct Comm {
    pub ctx: u32,
    pub rank: usize,
    /// World rank of each member, indexed by communicator rank.
    pub world_ranks: Arc<[usize]>,
    /// Collectives started on this communicator: their tag, identical on every member
    /// because all members call collectives in the same order.
    pub coll_seq: u32,
    /// Error handler handle of the C layer (opaque here).
    pub errhandler: i32,
    pub name: String,
}

impl Comm {
    pub fn size(&self) -> usize {
        self.world_ranks.len()
    }

    /// Collective-traffic context.
    pub fn coll_ctx(&self) -> u32 {
        self.ctx + 1
    }

    /// The schedule view of this communicator for the next collective (advances the tag).
    pub fn next_collective(&mut self) -> (CollComm, i32) {
        let tag = (self.coll_seq & 0x3fff_ffff) as i32;
        self.coll_seq = self.coll_seq.wrapping_add(1);
        (CollComm { ctx: self.coll_ctx(), rank: self.rank, world_ranks: self.world_ranks.clone() }, tag)
    }
}

/// Index of `MPI_COMM_WORLD` and `MPI_COMM_SELF` in the table.
pub const WORLD: usize = 0;
pub const SELF: usize = 1;

/// All communicators of this process; freed slots are `None`.
#[derive(Default)]
pub struct CommTable {
    pub comms: Vec<Option<Comm>>,
}

impl CommTable {
    /// The table at init: world (contexts 0/1) and self (contexts 2/3).
    pub fn new(rank: usize, size: usize, default_errhandler: i32) -> CommTable {
        let world = Comm { ctx: 0, rank, world_ranks: (0..size).collect(), coll_seq: 0, errhandler: default_errhandler, name: "MPI_COMM_WORLD".into() };
        let me = Comm { ctx: 2, rank: 0, world_ranks: Arc::new([rank]), coll_seq: 0, errhandler: default_errhandler, name: "MPI_COMM_SELF".into() };
        CommTable { comms: vec![Some(world), Some(me)] }
    }

    pub fn get(&self, idx: usize) -> Option<&Comm> {
        self.comms.get(idx).and_then(|c| c.as_ref())
    }

    pub fn get_mut(&mut self, idx: usize) -> Option<&mut Comm> {
        self.comms.get_mut(idx).and_then(|c| c.as_mut())
    }
}
