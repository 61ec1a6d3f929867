//! Collective operations over point-to-point on each communicator's collective context.
//! (Only the barrier so far; the full set comes with the collectives work.)

use crate::abi::*;
use crate::errors::{not_initialized, raise};
use crate::p2p_args::comm_of;
use mpi_core::request::{Op, RawBuf, SendMode};
use mpi_core::runtime;
use std::os::raw::c_int;

const BARRIER_TAG: i32 = 1;

/// Dissemination barrier: ⌈log2 p⌉ rounds of zero-byte exchanges with rank ± 2^k.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Barrier(comm: MPI_Comm) -> c_int {
    if !runtime::is_initialized() || runtime::is_finalized() {
        return not_initialized("MPI_Barrier");
    }
    let c = match runtime::with(|rt| comm_of(rt, comm).cloned()) {
        Ok(c) => c,
        Err((class, msg)) => return raise(MPI_COMM_WORLD, "MPI_Barrier", class, msg),
    };
    let (n, me) = (c.size(), c.rank);
    let mut k = 1;
    while k < n {
        let to = c.world_ranks[(me + k) % n];
        let from = ((me + n - k) % n) as i32;
        let reqs = runtime::with(|rt| {
            let s = rt.engine.create(Op::Send { buf: RawBuf::EMPTY, dest_world: to, ctx: c.coll_ctx(), src_rank: me as i32, tag: BARRIER_TAG, mode: SendMode::Standard }, false);
            let r = rt.engine.create(Op::Recv { buf: RawBuf::EMPTY, ctx: c.coll_ctx(), src: from, tag: BARRIER_TAG }, false);
            rt.engine.start(r).and_then(|_| rt.engine.start(s)).map(|_| [s, r])
        });
        let reqs = match reqs {
            Ok(r) => r,
            Err(e) => return raise(comm, "MPI_Barrier", e.class as c_int, e.msg),
        };
        runtime::wait_until(|rt| reqs.iter().all(|&q| rt.engine.reqs.get(q).is_none_or(|r| r.is_complete())));
        runtime::with(|rt| reqs.iter().for_each(|&q| drop(rt.engine.reqs.remove(q))));
        k <<= 1;
    }
    MPI_SUCCESS
}
