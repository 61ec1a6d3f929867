//! Collectives on intercommunicators (MPI 4.1 §6.2.2): builders that fill a `Schedule`
//! whose `CollComm` is the local group plus the remote group (`CollComm::remote_peer`).
//! Each is the MPICH-style decomposition into steps inside one group, done by the
//! intracommunicator algorithms of `algorithms` over the local group, and transfers
//! between the groups; every step is a round of the one schedule, so the nonblocking forms
//! progress like any other collective.
//!
//! Rooted collectives move data from one process (the root) to the other group, or back:
//! the root's group takes no other part (`Role`). Unrooted ones make each group's result
//! out of the other group's data.

use super::algorithms;
use super::schedule::{Schedule, Slice};

/// What a process does in a rooted intercommunicator collective (from its `root` argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `MPI_ROOT`: this process is the root.
    Root,
    /// `MPI_PROC_NULL`: the root is in this process's group, which otherwise takes no part.
    Idle,
    /// The root is rank `root` of the remote group.
    Leaf { root: usize },
}

/// An empty byte range (synchronisation messages).
fn token() -> Slice {
    Slice::user(std::ptr::null(), 0)
}

/// Barrier: a local barrier, the leaders (rank 0 of each group) swap a message, then each
/// leader releases its group with a local broadcast. No process leaves before every
/// process of the other group has entered.
pub fn barrier(s: &mut Schedule) {
    algorithms::barrier(s);
    if s.comm.rank == 0 {
        s.next_round();
        let peer = s.comm.remote_peer(0);
        s.send(peer, token());
        s.recv(peer, token());
    }
    algorithms::bcast(s, token(), 0);
}

/// Broadcast of `buf` from the root to the other group: the root sends to remote rank 0,
/// which broadcasts in its group.
pub fn bcast(s: &mut Schedule, buf: Slice, role: Role) {
    match role {
        Role::Root => {
            s.next_round();
            s.send_from_root(s.comm.remote_peer(0), buf);
        }
        Role::Idle => {}
        Role::Leaf { root } => {
            if s.comm.rank == 0 {
                s.next_round();
                s.recv(s.comm.remote_peer(root), buf);
            }
            algorithms::bcast(s, buf, 0);
        }
    }
}

/// Reduction of the other group's `input`s into the root's `result`: the other group
/// reduces to its rank 0 (in rank order when the op is not commutative), which sends the
/// result to the root.
pub fn reduce(s: &mut Schedule, input: Slice, result: Slice, role: Role, commutative: bool) {
    match role {
        Role::Root => {
            s.next_round();
            s.recv(s.comm.remote_peer(0), result);
        }
        Role::Idle => {}
        Role::Leaf { root } => {
            let acc = if s.comm.rank == 0 { s.temp(input.len) } else { token() };
            algorithms::reduce(s, input, acc, 0, commutative);
            if s.comm.rank == 0 {
                s.next_round();
                s.send_to_root(s.comm.remote_peer(root), acc);
            }
        }
    }
}

/// Gather(v) at the root of one block per remote rank: the root receives `parts[j]` from
/// remote rank j, each of which sends its `send` straight to the root.
pub fn gatherv(s: &mut Schedule, send: Slice, parts: &[Slice], role: Role) {
    match role {
        Role::Root => {
            s.next_round();
            for (j, &p) in parts.iter().enumerate() {
                s.recv(s.comm.remote_peer(j), p);
            }
        }
        Role::Idle => {}
        Role::Leaf { root } => {
            s.next_round();
            s.send_to_root(s.comm.remote_peer(root), send);
        }
    }
}

/// Scatter(v) from the root: `parts[j]` goes straight to remote rank j's `recv`.
pub fn scatterv(s: &mut Schedule, parts: &[Slice], recv: Slice, role: Role) {
    match role {
        Role::Root => {
            s.next_round();
            for (j, &p) in parts.iter().enumerate() {
                s.send_from_root(s.comm.remote_peer(j), p);
            }
        }
        Role::Idle => {}
        Role::Leaf { root } => {
            s.next_round();
            s.recv(s.comm.remote_peer(root), recv);
        }
    }
}

/// Allreduce: each group reduces its `input`s to its rank 0, the leaders swap their
/// results, and each leader broadcasts the other group's result into `output` locally.
pub fn allreduce(s: &mut Schedule, input: Slice, output: Slice, commutative: bool) {
    let leader = s.comm.rank == 0;
    let acc = if leader { s.temp(input.len) } else { token() };
    algorithms::reduce(s, input, acc, 0, commutative);
    if leader {
        s.next_round();
        let peer = s.comm.remote_peer(0);
        s.send(peer, acc);
        s.recv(peer, output);
    }
    algorithms::bcast(s, output, 0);
}

/// Every process sends `send` to remote rank 0; the leader receives remote rank j's block
/// into `parts[j]`.
fn collect_at_leaders(s: &mut Schedule, send: Slice, parts: &[Slice]) {
    s.next_round();
    s.send(s.comm.remote_peer(0), send);
    if s.comm.rank == 0 {
        for (j, &p) in parts.iter().enumerate() {
            s.recv(s.comm.remote_peer(j), p);
        }
    }
}

/// Allgather of the other group's blocks (`blk` bytes each) into `recv`: each leader
/// collects them straight into `recv`, then broadcasts it in its group.
pub fn allgather(s: &mut Schedule, send: Slice, recv: Slice, blk: usize) {
    let parts: Vec<Slice> = (0..s.comm.remote_size()).map(|j| recv.sub(j * blk, blk)).collect();
    collect_at_leaders(s, send, &parts);
    algorithms::bcast(s, recv, 0);
}

/// Allgatherv: as `allgather`, but the leader collects the blocks packed into a temporary,
/// broadcasts that, and every process copies the blocks to their places `parts[j]`.
pub fn allgatherv(s: &mut Schedule, send: Slice, parts: &[Slice]) {
    let lens: Vec<usize> = parts.iter().map(|p| p.len).collect();
    let all = s.temp(lens.iter().sum());
    let packed: Vec<Slice> = algorithms::packed_blocks(&lens).iter().map(|&(off, len)| all.sub(off, len)).collect();
    collect_at_leaders(s, send, &packed);
    algorithms::bcast(s, all, 0);
    s.next_round();
    for (q, p) in packed.iter().zip(parts) {
        s.copy(*q, *p);
    }
}

/// Alltoall(v,w): `sends[j]` goes to remote rank j, `recvs[j]` comes from it. Pairwise
/// over max(local, remote) steps: in step i, send to rank+i and receive from rank-i (modulo
/// that maximum), skipping ranks the remote group does not have; both groups count the
/// same steps, so each step pairs a sender with its receiver.
pub fn alltoallv(s: &mut Schedule, sends: &[Slice], recvs: &[Slice]) {
    let (me, r) = (s.comm.rank, s.comm.remote_size());
    let m = s.comm.size().max(r);
    for i in 0..m {
        let to = (me + i) % m;
        let from = (me + m - i) % m;
        s.next_round();
        if to < r {
            s.send(s.comm.remote_peer(to), sends[to]);
        }
        if from < r {
            s.recv(s.comm.remote_peer(from), recvs[from]);
        }
    }
}

/// Reduce_scatter: each group reduces its full vectors (`input`, blocks of `lens[i]` bytes
/// for local rank i) to its rank 0, the leaders swap the results, and each leader scatters
/// the other group's result over its group (`output`: this process's block).
pub fn reduce_scatter(s: &mut Schedule, input: Slice, output: Slice, lens: &[usize], commutative: bool) {
    let leader = s.comm.rank == 0;
    let total: usize = lens.iter().sum();
    let (acc, theirs) = if leader { (s.temp(total), s.temp(total)) } else { (token(), token()) };
    algorithms::reduce(s, input, acc, 0, commutative);
    if leader {
        s.next_round();
        let peer = s.comm.remote_peer(0);
        s.send(peer, acc);
        s.recv(peer, theirs);
    }
    let parts: Vec<Slice> = algorithms::packed_blocks(lens).iter().map(|&(off, len)| if leader { theirs.sub(off, len) } else { token() }).collect();
    algorithms::scatterv_linear(s, &parts, output, 0);
}
