//! Collective algorithms: builders that fill a `Schedule` for one rank. Each works for any
//! communicator size (non-powers of two included) and any byte length (zero included).
//!
//! Everything here works on bytes: the C layer turns (buffer, count, datatype) into
//! `Slice`s and supplies the reduction kernel. Reductions keep MPI's operand order where an
//! algorithm is used for non-commutative ops: a reduction over ranks equals
//! a0 ∘ a1 ∘ … ∘ a(p-1), and `Schedule::reduce(input, inout)` computes inout = input ∘ inout,
//! so the lower-ranked operand is always passed as `input`.
//!
//! Selection between algorithms (message size, rank count) uses the thresholds in `Tuning`,
//! read once from the tunables table (`crate::config`), MPICH's classic defaults.
//!
//! Schedule reminder: the transfers of a round start together and the round's local
//! actions (reduce, copy) run after all of them completed; a send reads its data when the
//! round starts, so data produced by local actions is sent from the next round on.

use super::schedule::{Buf, Schedule, Slice};
use crate::config::config;
use std::sync::OnceLock;

/// Algorithm-selection thresholds (bytes, rank counts), one place for all of them.
#[derive(Clone, Debug)]
pub struct Tuning {
    pub bcast_short_msg: usize,
    pub bcast_min_procs: usize,
    pub allreduce_short_msg: usize,
    pub allgather_short_msg: usize,
    pub allgather_long_msg: usize,
    pub osub_allgather_long_msg: usize,
    pub alltoall_short_msg: usize,
    pub alltoall_min_procs: usize,
    pub alltoall_medium_msg: usize,
    pub gather_short_msg: usize,
    pub reduce_scatter_short_msg: usize,
    /// Finished schedules the engine keeps for reuse.
    pub spare_schedules: usize,
    /// Largest temporary arena (bytes) a recycled schedule keeps.
    pub keep_temp: usize,
    /// Oversubscribed communicators of up to this many ranks use flat trees (`flat`).
    pub osub_flat_procs: usize,
}

/// The thresholds, read from the environment (`OXMPI_<NAME>`) on first use.
pub fn tuning() -> &'static Tuning {
    static T: OnceLock<Tuning> = OnceLock::new();
    T.get_or_init(|| {
        let c = config();
        Tuning {
            bcast_short_msg: c.get("BCAST_SHORT_MSG"),
            bcast_min_procs: c.get("BCAST_MIN_PROCS"),
            allreduce_short_msg: c.get("ALLREDUCE_SHORT_MSG"),
            allgather_short_msg: c.get("ALLGATHER_SHORT_MSG"),
            allgather_long_msg: c.get("ALLGATHER_LONG_MSG"),
            osub_allgather_long_msg: c.get("OSUB_ALLGATHER_LONG_MSG"),
            alltoall_short_msg: c.get("ALLTOALL_SHORT_MSG"),
            alltoall_min_procs: c.get("ALLTOALL_MIN_PROCS"),
            alltoall_medium_msg: c.get("ALLTOALL_MEDIUM_MSG"),
            gather_short_msg: c.get("GATHER_SHORT_MSG"),
            reduce_scatter_short_msg: c.get("REDUCE_SCATTER_SHORT_MSG"),
            spare_schedules: c.get("COLL_SPARE_SCHEDULES"),
            keep_temp: c.get("COLL_KEEP_TEMP"),
            osub_flat_procs: c.get("OSUB_FLAT_PROCS").min(super::direct::FLAT_MAX_PROCS),
        }
    })
}

/// Whether collectives on `n` ranks use flat trees (root talks to every rank itself):
/// oversubscribed runs on at most `OSUB_FLAT_PROCS` ranks. There a tree's inner rank
/// forwards data only when the scheduler gets to it, a delay of a whole timeslice share
/// that a flat tree never pays. Every rank of the communicator must decide alike:
/// `oversubscribed` is a property of a host, and hosts of one job may differ (3 ranks on
/// a 2-CPU host, 2 on another), so only a communicator within one host (`one_host`) may
/// go flat.
pub fn flat(oversubscribed: bool, n: usize, one_host: impl FnOnce() -> bool) -> bool {
    oversubscribed && n <= tuning().osub_flat_procs && one_host()
}

// ------------------------------------------------------------------ helpers

/// Whether two slices denote the same bytes (in-place arguments).
fn same(a: Slice, b: Slice) -> bool {
    let base_eq = match (a.buf, b.buf) {
        (Buf::User(p), Buf::User(q)) => p == q,
        (Buf::Temp(i), Buf::Temp(j)) => i == j,
        _ => false,
    };
    base_eq && a.off == b.off && a.len == b.len
}

/// Whether two slices share any byte (an MPI_IN_PLACE output inside the input vector).
fn overlap(a: Slice, b: Slice) -> bool {
    let start = |x: Slice| match x.buf {
        Buf::User(p) => (0, p as usize + x.off),
        Buf::Temp(i) => (i + 1, x.off),
    };
    let ((ka, sa), (kb, sb)) = (start(a), start(b));
    ka == kb && a.len > 0 && b.len > 0 && sa < sb + b.len && sb < sa + a.len
}

/// A local round copying `from` into `to` (nothing when they are the same bytes).
fn local_copy(s: &mut Schedule, from: Slice, to: Slice) {
    if !same(from, to) && from.len > 0 {
        s.next_round();
        s.copy(from, to);
    }
}

/// Largest power of two ≤ n (n ≥ 1).
fn pof2_floor(n: usize) -> usize {
    1 << (usize::BITS - 1 - n.leading_zeros())
}

/// Lowest set bit of v (v ≥ 1).
fn lowbit(v: usize) -> usize {
    v & v.wrapping_neg()
}

/// Splits `count` elements of `elem` bytes into n nearly equal blocks: (offset, len) in bytes.
fn even_blocks(count: usize, elem: usize, n: usize) -> Vec<(usize, usize)> {
    let (base, extra) = (count / n, count % n);
    let mut off = 0;
    (0..n)
        .map(|i| {
            let len = (base + usize::from(i < extra)) * elem;
            let b = (off, len);
            off += len;
            b
        })
        .collect()
}

/// Consecutive blocks of the given byte lengths: (offset, len).
pub(super) fn packed_blocks(lens: &[usize]) -> Vec<(usize, usize)> {
    let mut off = 0;
    lens.iter()
        .map(|&len| {
            let b = (off, len);
            off += len;
            b
        })
        .collect()
}

// ------------------------------------------------------------------ barrier

/// Dissemination barrier: ⌈log2 p⌉ rounds; in round k, signal rank+2^k and wait for rank-2^k.
pub fn barrier(s: &mut Schedule) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let token = Slice::user(std::ptr::null(), 0);
    let mut k = 1;
    while k < n {
        s.next_round();
        s.send((me + k) % n, token);
        s.recv((me + n - k) % n, token);
        k <<= 1;
    }
}

// ------------------------------------------------------------------ bcast

/// Broadcast of `buf` from `root`: binomial tree for short messages or few ranks (latency
/// log p), scatter + ring allgather for long ones (bandwidth ~2x the message instead of
/// log p times it).
pub fn bcast(s: &mut Schedule, buf: Slice, root: usize) {
    let t = tuning();
    if s.comm.size() == 1 {
        return;
    }
    if s.flat {
        bcast_flat(s, buf, root);
    } else if buf.len < t.bcast_short_msg || s.comm.size() < t.bcast_min_procs {
        bcast_binomial(s, buf, root);
    } else {
        bcast_scatter_ring_allgather(s, buf, root);
    }
}

/// Binomial-tree broadcast over ranks relative to the root: receive from the parent
/// (relative rank minus its lowest set bit), then send to every child.
pub fn bcast_binomial(s: &mut Schedule, buf: Slice, root: usize) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let vr = (me + n - root) % n;
    let real = |v: usize| (v + root) % n;
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            s.next_round();
            s.recv(real(vr - mask), buf);
            break;
        }
        mask <<= 1;
    }
    s.next_round();
    mask >>= 1;
    while mask > 0 {
        if vr + mask < n {
            s.send_from_root(real(vr + mask), buf);
        }
        mask >>= 1;
    }
}

/// Flat broadcast (oversubscribed runs, see `flat`): the root sends to every rank itself.
pub fn bcast_flat(s: &mut Schedule, buf: Slice, root: usize) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    s.next_round();
    if me == root {
        for k in 1..n {
            s.send_from_root((root + k) % n, buf);
        }
    } else {
        s.recv(root, buf);
    }
}

/// Scatter + ring allgather broadcast (van de Geijn; MPICH's long-message bcast): the
/// message is cut into p chunks, scattered down a binomial tree (chunk i to relative rank
/// i), then a ring allgather gives everyone every chunk.
pub fn bcast_scatter_ring_allgather(s: &mut Schedule, buf: Slice, root: usize) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let vr = (me + n - root) % n;
    let real = |v: usize| (v + root) % n;
    let chunk = buf.len.div_ceil(n);
    // Bytes [first chunk of relative rank a, first chunk of relative rank b), clipped.
    let range = |a: usize, b: usize| {
        let lo = (a * chunk).min(buf.len);
        let hi = (b * chunk).min(buf.len);
        buf.sub(lo, hi - lo)
    };
    // Binomial scatter: relative rank v owns chunks [v, v + subtree size).
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            s.next_round();
            s.recv(real(vr - mask), range(vr, (vr + mask).min(n)));
            break;
        }
        mask <<= 1;
    }
    s.next_round();
    mask >>= 1;
    while mask > 0 {
        if vr + mask < n {
            s.send(real(vr + mask), range(vr + mask, (vr + 2 * mask).min(n)));
        }
        mask >>= 1;
    }
    // Ring allgather of the chunks, in relative-rank order.
    let right = real((vr + 1) % n);
    let left = real((vr + n - 1) % n);
    for k in 0..n - 1 {
        let send_chunk = (vr + n - k) % n;
        let recv_chunk = (vr + n - k - 1) % n;
        s.next_round();
        s.send(right, range(send_chunk, send_chunk + 1));
        s.recv(left, range(recv_chunk, recv_chunk + 1));
    }
}

// ------------------------------------------------------------------ reduce

/// Reduction of every rank's `input` into `result` at `root` (`result` is ignored elsewhere;
/// at the root `input` may be `result` itself: MPI_IN_PLACE). Commutative ops use a
/// binomial tree rooted at `root`; non-commutative ones the rank-ordered tree.
pub fn reduce(s: &mut Schedule, input: Slice, result: Slice, root: usize, commutative: bool) {
    if commutative {
        reduce_binomial(s, input, result, root);
    } else {
        reduce_ordered(s, input, result, root);
    }
}

/// Binomial-tree reduction over ranks relative to the root: each rank combines the
/// partial results of its children into its accumulator, then sends it to its parent. The
/// rotation by `root` reorders operands, so this is for commutative ops only.
///
/// No copy of the input: a leaf sends its input as is; a rank with children receives the
/// first child's data straight into its accumulator and combines its own input into it
/// (in place at the root, where the input is the result, a temporary takes the data).
pub fn reduce_binomial(s: &mut Schedule, input: Slice, result: Slice, root: usize) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let vr = (me + n - root) % n;
    let real = |v: usize| (v + root) % n;
    let in_place = me == root && same(input, result);
    let acc = if me == root { result } else if vr & 1 == 0 && vr + 1 < n { s.temp(input.len) } else { input };
    // `cur`: what this rank would send now (its input until a child's data arrived).
    let mut cur = input;
    let mut tmp = None;
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            s.next_round();
            s.send_to_root(real(vr - mask), cur);
            break;
        }
        if vr + mask < n {
            s.next_round();
            if same(cur, input) && !in_place {
                s.recv(real(vr + mask), acc);
                s.reduce(input, acc);
                cur = acc;
            } else {
                let t = *tmp.get_or_insert_with(|| s.temp(input.len));
                s.recv(real(vr + mask), t);
                s.reduce(t, acc);
                cur = acc;
            }
        }
        mask <<= 1;
    }
    // A root without children (one rank) still owes its result.
    if me == root && same(cur, input) {
        local_copy(s, input, result);
    }
}

/// Rank-ordered binomial reduction for non-commutative ops: a tree rooted at rank 0 over
/// unrotated ranks, where rank r holds the combination of ranks [r, r + 2^k) and appends
/// its child's (higher) range on the right; rank 0 then forwards the result to the root.
pub fn reduce_ordered(s: &mut Schedule, input: Slice, result: Slice, root: usize) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let acc = if me == 0 && root == 0 { result } else { s.temp(input.len) };
    local_copy(s, input, acc);
    let tmp = s.temp(input.len);
    let mut mask = 1;
    while mask < n {
        if me & mask != 0 {
            s.next_round();
            s.send_to_root(me - mask, acc);
            break;
        }
        if me + mask < n {
            s.next_round();
            s.recv(me + mask, tmp);
            s.reduce(acc, tmp); // tmp = acc ∘ tmp: lower ranks on the left
            s.copy(tmp, acc);
        }
        mask <<= 1;
    }
    if root != 0 {
        if me == 0 {
            s.next_round();
            s.send_to_root(root, acc);
        } else if me == root {
            s.next_round();
            s.recv(0, result);
        }
    }
}

// ------------------------------------------------------------------ allreduce

/// Allreduce of `input` into `output` (`input` may be `output`: MPI_IN_PLACE); `elem` is the
/// element size in bytes (blocks are split on element boundaries). Short vectors (or fewer
/// elements than ranks) use recursive doubling, which keeps rank order; long ones a ring
/// (commutative) or a rank-ordered reduce to rank 0 followed by a broadcast.
pub fn allreduce(s: &mut Schedule, input: Slice, output: Slice, elem: usize, commutative: bool) {
    let n = s.comm.size();
    let count = if elem == 0 { 0 } else { output.len / elem };
    if n == 1 {
        local_copy(s, input, output);
    } else if output.len <= tuning().allreduce_short_msg || count < n {
        allreduce_recursive_doubling(s, input, output);
    } else if commutative {
        allreduce_ring(s, input, output, elem);
    } else {
        reduce_ordered(s, input, output, 0);
        bcast(s, output, 0);
    }
}

/// Recursive-doubling allreduce (MPICH's short-message algorithm). With p' the largest
/// power of two ≤ p and r = p - p', ranks below 2r first pair up (each even rank hands its
/// vector to the odd one above it, which combines even ∘ odd); the p' survivors then
/// exchange and combine with partner newrank XOR 2^k for log p' rounds, the lower partner's
/// data on the left; finally the odd ranks return the result to their even partners.
/// Survivors hold contiguous rank ranges in order, so non-commutative ops are fine.
pub fn allreduce_recursive_doubling(s: &mut Schedule, input: Slice, output: Slice) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let acc = output;
    local_copy(s, input, acc);
    let tmp = s.temp(acc.len);
    let pof2 = pof2_floor(n);
    let rem = n - pof2;
    let newrank = if me < 2 * rem {
        s.next_round();
        if me % 2 == 0 {
            s.send(me + 1, acc);
            None
        } else {
            s.recv(me - 1, tmp);
            s.reduce(tmp, acc); // acc = lower ∘ mine
            Some(me / 2)
        }
    } else {
        Some(me - rem)
    };
    if let Some(nr) = newrank {
        let mut mask = 1;
        while mask < pof2 {
            let pnr = nr ^ mask;
            let partner = if pnr < rem { pnr * 2 + 1 } else { pnr + rem };
            s.next_round();
            s.send(partner, acc);
            s.recv(partner, tmp);
            if partner < me {
                s.reduce(tmp, acc);
            } else {
                s.reduce(acc, tmp);
                s.copy(tmp, acc);
            }
            mask <<= 1;
        }
    }
    if me < 2 * rem {
        s.next_round();
        if me % 2 == 1 {
            s.send(me - 1, acc);
        } else {
            s.recv(me + 1, acc);
        }
    }
}

/// Ring allreduce for long vectors: a ring reduce-scatter (p-1 steps; rank i ends with
/// block i fully reduced) followed by a ring allgather (p-1 steps). Each rank sends about
/// 2(p-1)/p of the vector, which is optimal in bandwidth; commutative ops only (each
/// block is combined in ring order starting after its owner). Out of place, blocks are
/// received straight into `output` (no copy of the input first, no temporary).
pub fn allreduce_ring(s: &mut Schedule, input: Slice, output: Slice, elem: usize) {
    let n = s.comm.size();
    let split = even_blocks(output.len / elem, elem, n);
    let out: Vec<Slice> = split.iter().map(|b| output.sub(b.0, b.1)).collect();
    if same(input, output) {
        ring_reduce_scatter(s, &out);
    } else {
        let inp: Vec<Slice> = split.iter().map(|b| input.sub(b.0, b.1)).collect();
        ring_reduce_scatter_into(s, &inp, &out);
    }
    ring_allgather(s, &out, None);
}

/// Out-of-place ring reduce-scatter: as `ring_reduce_scatter`, but every block a rank
/// receives is received into its place in `out` (each is received exactly once) and then
/// combined with the rank's own input block there, `out[b] = inp[b] ∘ out[b]`. Step 0
/// sends an input block; step k sends the block combined in step k-1. Rank r's `out[r]`
/// ends fully reduced; `out[r-1]` is left for the allgather. Commutative only.
fn ring_reduce_scatter_into(s: &mut Schedule, inp: &[Slice], out: &[Slice]) {
    ring_reduce_scatter_via(s, inp, |_, b| out[b]);
}

/// The out-of-place ring reduce-scatter step: in step k rank r sends block r-k-1 (its
/// input block at k = 0, else the partial sum received in step k-1) to r+1, receives
/// block r-k-2 from r-1 into `slot(k, block)` and combines its own input block into it.
/// The last step (k = p-2) receives block r. Commutative only.
fn ring_reduce_scatter_via(s: &mut Schedule, inp: &[Slice], slot: impl Fn(usize, usize) -> Slice) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let right = (me + 1) % n;
    let left = (me + n - 1) % n;
    for k in 0..n - 1 {
        let sb = (me + 2 * n - k - 1) % n;
        let rb = (me + 2 * n - k - 2) % n;
        s.next_round();
        s.send(right, if k == 0 { inp[sb] } else { slot(k - 1, sb) });
        let into = slot(k, rb);
        s.recv(left, into);
        s.reduce(inp[rb], into);
    }
}

/// Ring reduce-scatter on `blocks` (this rank's full vector, reduced in place): in step k
/// rank r sends block r-k-1 to r+1 and combines block r-k-2 received from r-1 into its
/// own copy. After p-1 steps rank r's block r holds the full reduction. Commutative only.
fn ring_reduce_scatter(s: &mut Schedule, blocks: &[Slice]) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let right = (me + 1) % n;
    let left = (me + n - 1) % n;
    let max = blocks.iter().map(|b| b.len).max().unwrap_or(0);
    let tmp = s.temp(max);
    for k in 0..n - 1 {
        let sb = blocks[(me + 2 * n - k - 1) % n];
        let rb = blocks[(me + 2 * n - k - 2) % n];
        s.next_round();
        s.send(right, sb);
        s.recv(left, tmp.sub(0, rb.len));
        s.reduce(tmp.sub(0, rb.len), rb);
    }
}

/// Ring allgather where rank r already holds `blocks[r]`: in step k rank r sends block
/// r-k to r+1 and receives block r-k-1 from r-1. Blocks may differ in size.
/// `own`: where this rank's block also is, untouched by this collective (the caller's send
/// buffer), sent in the first step instead of its fresh copy in `blocks` (see
/// `allgather_recursive_doubling`).
fn ring_allgather(s: &mut Schedule, blocks: &[Slice], own: Option<Slice>) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let right = (me + 1) % n;
    let left = (me + n - 1) % n;
    for k in 0..n - 1 {
        let sb = match own {
            Some(o) if k == 0 => o,
            _ => blocks[(me + n - k) % n],
        };
        let rb = blocks[(me + 2 * n - k - 1) % n];
        s.next_round();
        s.send(right, sb);
        s.recv(left, rb);
    }
}

// ------------------------------------------------------------------ gather / scatter

/// Gather of equal blocks of `blk` bytes into `recv` (n blocks, root only) at `root`;
/// `send` is this rank's block (at the root it may be its own block of `recv`:
/// MPI_IN_PLACE). Binomial tree for short blocks (log p messages at the root), direct
/// sends to the root for long ones (no intermediate copies).
pub fn gather(s: &mut Schedule, send: Slice, recv: Slice, blk: usize, root: usize) {
    if blk <= tuning().gather_short_msg && !s.flat {
        gather_binomial(s, send, recv, blk, root);
    } else {
        // Only the root's receive buffer holds the blocks (elsewhere it may be empty).
        let n = if s.comm.rank == root { s.comm.size() } else { 0 };
        let parts: Vec<Slice> = (0..n).map(|i| recv.sub(i * blk, blk)).collect();
        gatherv_linear(s, send, &parts, root);
    }
}

/// Binomial-tree gather over ranks relative to the root: relative rank v collects the
/// blocks of its subtree [v, v + lowbit(v)) in a temporary buffer and sends them to its
/// parent in one message; the root finally rotates the blocks into rank order.
pub fn gather_binomial(s: &mut Schedule, send: Slice, recv: Slice, blk: usize, root: usize) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let vr = (me + n - root) % n;
    let real = |v: usize| (v + root) % n;
    let subtree = if vr == 0 { n } else { lowbit(vr).min(n - vr) };
    // A leaf sends its block as is; inner ranks collect their subtree in a temporary.
    let acc = if me == root && root == 0 {
        recv
    } else if subtree == 1 && me != root {
        send
    } else {
        s.temp(subtree * blk)
    };
    local_copy(s, send, acc.sub(0, blk));
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            s.next_round();
            s.send_to_root(real(vr - mask), acc);
            break;
        }
        if vr + mask < n {
            let cnt = mask.min(n - vr - mask);
            s.next_round();
            s.recv(real(vr + mask), acc.sub(mask * blk, cnt * blk));
        }
        mask <<= 1;
    }
    if me == root && root != 0 {
        s.next_round();
        for j in 0..n {
            s.copy(acc.sub(j * blk, blk), recv.sub(real(j) * blk, blk));
        }
    }
}

/// Linear gather (Gatherv, and Gather of long blocks): every rank sends its block straight
/// to the root, which receives all of them at once into `parts[i]` (root only).
pub fn gatherv_linear(s: &mut Schedule, send: Slice, parts: &[Slice], root: usize) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    s.next_round();
    if me == root {
        for (i, &p) in parts.iter().enumerate().take(n) {
            if i != root {
                s.recv(i, p);
            }
        }
        if !same(send, parts[root]) {
            s.copy(send, parts[root]);
        }
    } else {
        s.send_to_root(root, send);
    }
}

/// Scatter of equal blocks of `blk` bytes from `send` (root only) at `root` into `recv`
/// (at the root `recv` may be its own block of `send`: MPI_IN_PLACE). Binomial tree for
/// short blocks, direct sends from the root for long ones.
pub fn scatter(s: &mut Schedule, send: Slice, recv: Slice, blk: usize, root: usize) {
    if blk <= tuning().gather_short_msg && !s.flat {
        scatter_binomial(s, send, recv, blk, root);
    } else {
        // Only the root's send buffer holds the blocks (elsewhere it may be empty).
        let n = if s.comm.rank == root { s.comm.size() } else { 0 };
        let parts: Vec<Slice> = (0..n).map(|i| send.sub(i * blk, blk)).collect();
        scatterv_linear(s, &parts, recv, root);
    }
}

/// Binomial-tree scatter, the gather tree reversed: the root rotates the blocks into
/// relative-rank order, and each relative rank v receives the blocks of its subtree from
/// its parent, keeps the first and sends each child its subtree's share.
pub fn scatter_binomial(s: &mut Schedule, send: Slice, recv: Slice, blk: usize, root: usize) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let vr = (me + n - root) % n;
    let real = |v: usize| (v + root) % n;
    let subtree = if vr == 0 { n } else { lowbit(vr).min(n - vr) };
    // A leaf receives its block straight into `recv`; inner ranks take their subtree's
    // blocks into a temporary.
    let acc = if me == root && root == 0 {
        send
    } else if subtree == 1 && me != root {
        recv
    } else {
        s.temp(subtree * blk)
    };
    if me == root && root != 0 {
        s.next_round();
        for j in 0..n {
            s.copy(send.sub(real(j) * blk, blk), acc.sub(j * blk, blk));
        }
    }
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            s.next_round();
            s.recv(real(vr - mask), acc);
            break;
        }
        mask <<= 1;
    }
    s.next_round();
    mask >>= 1;
    while mask > 0 {
        if vr + mask < n {
            let cnt = mask.min(n - vr - mask);
            s.send_from_root(real(vr + mask), acc.sub(mask * blk, cnt * blk));
        }
        mask >>= 1;
    }
    local_copy(s, acc.sub(0, blk), recv);
}

/// Linear scatter (Scatterv, and Scatter of long blocks): the root sends `parts[i]` to
/// each rank i at once; the others receive into `recv`.
pub fn scatterv_linear(s: &mut Schedule, parts: &[Slice], recv: Slice, root: usize) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    s.next_round();
    if me == root {
        for (i, &p) in parts.iter().enumerate().take(n) {
            if i != root {
                s.send_from_root(i, p);
            }
        }
        if !same(parts[root], recv) {
            s.copy(parts[root], recv);
        }
    } else {
        s.recv(root, recv);
    }
}

// ------------------------------------------------------------------ allgather

/// Allgather of equal blocks of `blk` bytes into `recv` (p blocks); `send` is None for
/// MPI_IN_PLACE (the own block is already in `recv`). MPICH's selection: recursive doubling
/// for powers of two below the long-message size, Bruck for other rank counts below the
/// short-message size, the ring otherwise. On a flat schedule (oversubscribed) the ring
/// starts at a lower size: its steps each wait for one neighbour, and 4 ranks on 2 CPUs
/// gathered 64 KiB blocks in 47–56 µs by ring against 54–63 by recursive doubling.
pub fn allgather(s: &mut Schedule, send: Option<Slice>, recv: Slice, blk: usize) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let t = tuning();
    let total = n * blk;
    let long = if s.flat { t.osub_allgather_long_msg } else { t.allgather_long_msg };
    if n.is_power_of_two() && total < long {
        if let Some(send) = send {
            local_copy(s, send, recv.sub(me * blk, blk));
        }
        allgather_recursive_doubling(s, send, recv, blk);
    } else if total < t.allgather_short_msg {
        allgather_bruck(s, send.unwrap_or(recv.sub(me * blk, blk)), recv, blk);
    } else {
        if let Some(send) = send {
            local_copy(s, send, recv.sub(me * blk, blk));
        }
        let blocks: Vec<Slice> = (0..n).map(|i| recv.sub(i * blk, blk)).collect();
        ring_allgather(s, &blocks, send);
    }
}

/// Recursive-doubling allgather (power-of-two rank counts): in round k each rank exchanges
/// the 2^k blocks it has with partner rank XOR 2^k, directly in the receive buffer. The
/// first round sends from the caller's send buffer when there is one: the partner then
/// reads data at rest rather than lines this rank has just written into `recv` (reading
/// freshly written lines from the other core's cache made a 64 KiB exchange 2.5× slower).
pub fn allgather_recursive_doubling(s: &mut Schedule, send: Option<Slice>, recv: Slice, blk: usize) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let mut mask = 1;
    while mask < n {
        let partner = me ^ mask;
        let mine = me & !(mask - 1);
        let theirs = partner & !(mask - 1);
        s.next_round();
        match send {
            Some(own) if mask == 1 => s.send(partner, own),
            _ => s.send(partner, recv.sub(mine * blk, mask * blk)),
        }
        s.recv(partner, recv.sub(theirs * blk, mask * blk));
        mask <<= 1;
    }
}

/// Bruck allgather (any rank count, ⌈log2 p⌉ rounds): a temporary buffer holds the blocks
/// of ranks me, me+1, …; in the round with distance d a rank sends its first min(d, p-d)
/// blocks to me-d and appends the same number from me+d; a final rotation puts them into
/// rank order.
pub fn allgather_bruck(s: &mut Schedule, mine: Slice, recv: Slice, blk: usize) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let tmp = s.temp(n * blk);
    local_copy(s, mine, tmp.sub(0, blk));
    let mut d = 1;
    while d < n {
        let cnt = d.min(n - d);
        s.next_round();
        s.send((me + n - d) % n, tmp.sub(0, cnt * blk));
        s.recv((me + d) % n, tmp.sub(d * blk, cnt * blk));
        d <<= 1;
    }
    s.next_round();
    for j in 0..n {
        s.copy(tmp.sub(j * blk, blk), recv.sub(((me + j) % n) * blk, blk));
    }
}

/// Allgatherv of equal blocks placed anywhere (`parts`): an allgather's algorithms into a
/// temporary, then each block copied to its place. Its messages are then an allgather's,
/// as those of ranks whose blocks lie end to end and which run the allgather itself.
pub fn allgather_equal_parts(s: &mut Schedule, send: Option<Slice>, parts: &[Slice]) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let blk = parts[me].len;
    let tmp = s.temp(n * blk);
    allgather(s, Some(send.unwrap_or(parts[me])), tmp, blk);
    s.next_round();
    for (i, p) in parts.iter().enumerate() {
        s.copy(tmp.sub(i * blk, blk), *p);
    }
}

/// Allgatherv: `parts[i]` is where rank i's block goes (and, for MPI_IN_PLACE, where this
/// rank's block already is). Ring: p-1 steps, each forwarding the block received last;
/// works for any block sizes.
pub fn allgatherv(s: &mut Schedule, send: Option<Slice>, parts: &[Slice]) {
    let me = s.comm.rank;
    if let Some(send) = send {
        local_copy(s, send, parts[me]);
    }
    ring_allgather(s, parts, send);
}

// ------------------------------------------------------------------ alltoall

/// Alltoall of equal blocks of `blk` bytes; `send` None means MPI_IN_PLACE (the data to
/// send is in `recv`, copied aside first). Bruck for short blocks on many ranks, all
/// exchanges at once for medium blocks, pairwise exchange (one peer per step, bounded
/// buffering) for long ones — except on a flat schedule (oversubscribed, few ranks):
/// there each pairwise step waits for its one partner to be scheduled, while with every
/// exchange posted a rank moves whichever transfers are ready (4 ranks on 2 CPUs, 64 KiB
/// to 1 MiB blocks: 5–15 % faster).
pub fn alltoall(s: &mut Schedule, send: Option<Slice>, recv: Slice, blk: usize) {
    let n = s.comm.size();
    let t = tuning();
    let send = match send {
        Some(sb) => sb,
        None => {
            let copy = s.temp(recv.len);
            local_copy(s, recv, copy);
            copy
        }
    };
    if blk <= t.alltoall_short_msg && n >= t.alltoall_min_procs {
        alltoall_bruck(s, send, recv, blk);
    } else {
        let sends: Vec<Slice> = (0..n).map(|i| send.sub(i * blk, blk)).collect();
        let recvs: Vec<Slice> = (0..n).map(|i| recv.sub(i * blk, blk)).collect();
        if blk <= t.alltoall_medium_msg || s.flat {
            alltoallv_scattered(s, &sends, &recvs);
        } else {
            alltoallv_pairwise(s, &sends, &recvs);
        }
    }
}

/// Bruck alltoall (⌈log2 p⌉ rounds, for short blocks): rotate so block i is the one for
/// rank me+i; in the round with distance d send every block whose index has bit d set to
/// rank me+d (packed into one message) and receive the same indices from me-d; finally
/// block i holds the data from rank me-i.
pub fn alltoall_bruck(s: &mut Schedule, send: Slice, recv: Slice, blk: usize) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    let tmp = s.temp(n * blk);
    let spack = s.temp(n.div_ceil(2) * blk);
    let rpack = s.temp(n.div_ceil(2) * blk);
    s.next_round();
    for i in 0..n {
        s.copy(send.sub(((me + i) % n) * blk, blk), tmp.sub(i * blk, blk));
    }
    let mut d = 1;
    while d < n {
        let idx: Vec<usize> = (0..n).filter(|i| i & d != 0).collect();
        let bytes = idx.len() * blk;
        // Pack, as local actions of the previous round (after its unpack).
        for (k, &i) in idx.iter().enumerate() {
            s.copy(tmp.sub(i * blk, blk), spack.sub(k * blk, blk));
        }
        s.next_round();
        s.send((me + d) % n, spack.sub(0, bytes));
        s.recv((me + n - d) % n, rpack.sub(0, bytes));
        for (k, &i) in idx.iter().enumerate() {
            s.copy(rpack.sub(k * blk, blk), tmp.sub(i * blk, blk));
        }
        d <<= 1;
    }
    s.next_round();
    for i in 0..n {
        s.copy(tmp.sub(i * blk, blk), recv.sub(((me + n - i) % n) * blk, blk));
    }
}

/// All-at-once exchange: one round posting every send and receive (MPICH's "scattered"
/// alltoall for medium blocks); the own block is a local copy.
pub fn alltoallv_scattered(s: &mut Schedule, sends: &[Slice], recvs: &[Slice]) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    s.next_round();
    for i in 1..n {
        let to = (me + i) % n;
        let from = (me + n - i) % n;
        s.send(to, sends[to]);
        s.recv(from, recvs[from]);
    }
    if !same(sends[me], recvs[me]) {
        s.copy(sends[me], recvs[me]);
    }
}

/// Pairwise exchange: p-1 steps, in step i send to me+i and receive from me-i, so only one
/// message per direction is in flight (long messages, Alltoallv/Alltoallw).
pub fn alltoallv_pairwise(s: &mut Schedule, sends: &[Slice], recvs: &[Slice]) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    local_copy(s, sends[me], recvs[me]);
    for i in 1..n {
        let to = (me + i) % n;
        let from = (me + n - i) % n;
        s.next_round();
        s.send(to, sends[to]);
        s.recv(from, recvs[from]);
    }
}

/// Alltoallv/Alltoallw: `sends[i]`/`recvs[i]` are the byte ranges for peer i. Pairwise
/// exchange (per-peer sizes vary, so one peer at a time bounds the buffering).
pub fn alltoallv(s: &mut Schedule, sends: &[Slice], recvs: &[Slice]) {
    alltoallv_pairwise(s, sends, recvs);
}

/// MPI_IN_PLACE Alltoallv/Alltoallw: copies each `recvs[i]` into a temporary first, then
/// exchanges from there.
pub fn alltoallv_in_place(s: &mut Schedule, recvs: &[Slice]) {
    let copies: Vec<Slice> = recvs.iter().map(|r| s.temp(r.len)).collect();
    s.next_round();
    for (r, c) in recvs.iter().zip(&copies) {
        s.copy(*r, *c);
    }
    alltoallv_pairwise(s, &copies, recvs);
}

// ------------------------------------------------------------------ reduce_scatter

/// Reduce_scatter: `input` is the full vector (p blocks of `lens[i]` bytes, consecutive),
/// `output` receives this rank's reduced block (`input` may start at `output`:
/// MPI_IN_PLACE). Commutative ops on long vectors, or on two ranks at any length (one
/// exchange of a block), use a ring that moves only blocks (`ring_reduce_scatter_out`);
/// otherwise a reduction to rank 0 (rank-ordered when needed) followed by a linear
/// scatter: two hops, fewer rounds than the ring's p-1 for short vectors.
pub fn reduce_scatter(s: &mut Schedule, input: Slice, output: Slice, lens: &[usize], commutative: bool) {
    let n = s.comm.size();
    let total: usize = lens.iter().sum();
    let blocks = packed_blocks(lens);
    if n > 1 && commutative && (n == 2 || total >= tuning().reduce_scatter_short_msg) {
        ring_reduce_scatter_out(s, input, output, &blocks);
    } else {
        let acc = s.temp(total);
        let parts: Vec<Slice> = blocks.iter().map(|b| acc.sub(b.0, b.1)).collect();
        reduce(s, input, acc, 0, commutative);
        scatterv_linear(s, &parts, output, 0);
    }
}

/// Ring reduce-scatter from `input` (consecutive `blocks`: offset, length) into this
/// rank's `output`, with no copy of the vector: the partial sums go through two
/// block-sized temporaries in turn, and the last step receives this rank's own block
/// straight into `output` unless `output` lies inside `input` (MPI_IN_PLACE), where it
/// would overwrite input still being read. Commutative only.
fn ring_reduce_scatter_out(s: &mut Schedule, input: Slice, output: Slice, blocks: &[(usize, usize)]) {
    let n = s.comm.size();
    let inp: Vec<Slice> = blocks.iter().map(|b| input.sub(b.0, b.1)).collect();
    let max = if n > 2 { blocks.iter().map(|b| b.1).max().unwrap_or(0) } else { 0 };
    let partial = [s.temp(max), s.temp(max)];
    let last = if overlap(input, output) { s.temp(output.len) } else { output };
    ring_reduce_scatter_via(s, &inp, |k, b| if k == n - 2 { last } else { partial[k % 2].sub(0, inp[b].len) });
    local_copy(s, last, output);
}

// ------------------------------------------------------------------ scan / exscan

/// Inclusive (Scan) or exclusive (Exscan) prefix reduction by recursive doubling (MPICH):
/// `partial` holds the combination of a growing rank range containing this rank; in round
/// k it is exchanged with rank XOR 2^k, and data from a lower partner is put on the left of
/// both `partial` and the result, keeping rank order. `input` may be `output`
/// (MPI_IN_PLACE). For Exscan rank 0's output is left untouched.
///
/// Nothing is moved that no one needs: `partial` is the input itself until a round changes
/// it; in the last round nobody's `partial` matters any more, so only the lower rank of
/// each pair sends and the higher one receives; a rank's first data from below lands
/// straight in the output (Exscan). Two ranks: one message, no copy.
pub fn scan(s: &mut Schedule, input: Slice, output: Slice, exclusive: bool) {
    let (n, me) = (s.comm.size(), s.comm.rank);
    // In place, the output overwrites the input: the partial needs its own copy at once.
    let mut owned = same(input, output);
    let mut partial = if owned { s.temp(input.len) } else { input };
    if owned {
        s.copy(input, partial);
    } else if !exclusive {
        s.copy(input, output);
    }
    let mut spare = None;
    let mut have_result = !exclusive;
    let mut mask = 1;
    while mask < n {
        let partner = me ^ mask;
        let last = mask * 2 >= n;
        mask <<= 1;
        if partner >= n {
            continue;
        }
        s.next_round();
        if partner > me {
            s.send(partner, partial);
            if last {
                continue;
            }
            // partial = partial ∘ (the partner's), received into a spare temporary that
            // then becomes the partial (no copy back).
            let into = *spare.get_or_insert_with(|| s.temp(input.len));
            s.recv(partner, into);
            s.reduce(partial, into);
            spare = if owned { Some(partial) } else { None };
            partial = into;
            owned = true;
            continue;
        }
        if !last {
            s.send(partner, partial);
        }
        if !have_result {
            s.recv(partner, output);
            have_result = true;
            if !last {
                own(s, &mut owned, &mut partial, input.len);
                s.reduce(output, partial);
            }
        } else {
            let into = *spare.get_or_insert_with(|| s.temp(input.len));
            s.recv(partner, into);
            s.reduce(into, output);
            if !last {
                own(s, &mut owned, &mut partial, input.len);
                s.reduce(into, partial);
            }
        }
    }

    /// Gives `partial` a temporary of its own (a copy of the input) before a round
    /// changes it.
    fn own(s: &mut Schedule, owned: &mut bool, partial: &mut Slice, len: usize) {
        if !*owned {
            let t = s.temp(len);
            s.copy(*partial, t);
            *partial = t;
            *owned = true;
        }
    }
}
