//! Communicators as the engine sees them: a context id pair (point-to-point and
//! collective traffic never match each other), this process's rank, and the world rank of
//! every member.

/// A communicator. `ctx` carries point-to-point traffic, `ctx + 1` collective traffic.
#[derive(Clone, Debug)]
pub struct Comm {
    pub ctx: u32,
    pub rank: usize,
    /// World rank of each member, indexed by communicator rank.
    pub world_ranks: Vec<usize>,
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
        let world = Comm { ctx: 0, rank, world_ranks: (0..size).collect(), errhandler: default_errhandler, name: "MPI_COMM_WORLD".into() };
        let me = Comm { ctx: 2, rank: 0, world_ranks: vec![rank], errhandler: default_errhandler, name: "MPI_COMM_SELF".into() };
        CommTable { comms: vec![Some(world), Some(me)] }
    }

    pub fn get(&self, idx: usize) -> Option<&Comm> {
        self.comms.get(idx).and_then(|c| c.as_ref())
    }

    pub fn get_mut(&mut self, idx: usize) -> Option<&mut Comm> {
        self.comms.get_mut(idx).and_then(|c| c.as_mut())
    }
}
