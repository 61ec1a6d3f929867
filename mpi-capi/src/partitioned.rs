//! Partitioned point-to-point communication (MPI-4.0 chapter 4): `MPI_Psend_init`,
//! `MPI_Precv_init`, `MPI_Pready{,_range,_list}` and `MPI_Parrived`. The engine runs them
//! (`mpi_core::partitioned`); this module checks arguments and maps handles. Start, the
//! Wait/Test families, `MPI_Request_free` and `MPI_Cancel` are those of `requests`.

use crate::abi::*;
use crate::errors::raise;
use crate::handles::request_id;
use crate::p2p_args::*;
use crate::pt2pt::{request_call, Launch};
use mpi_core::partitioned::{PartArgs, PART_TAG_MASK};
use mpi_core::protocol::PROC_NULL_WORLD;
use mpi_core::request::ReqId;
use mpi_core::runtime;
use std::os::raw::{c_int, c_void};

/// Checks the arguments of a partitioned init call into the engine's `PartArgs`.
#[allow(clippy::too_many_arguments)]
fn part_args(rt: &runtime::Runtime, send: bool, buf: *const c_void, partitions: c_int, count: MPI_Count, dt: MPI_Datatype, peer: c_int, tag: c_int, comm: MPI_Comm, info: MPI_Info) -> Result<PartArgs, ArgError> {
    let c = comm_of(rt, comm)?;
    if partitions < 0 || partitions as u32 > PART_TAG_MASK {
        return Err((MPI_ERR_ARG, format!("invalid number of partitions {partitions} (0 to {PART_TAG_MASK})")));
    }
    if count < 0 {
        return Err((MPI_ERR_COUNT, format!("negative count {count}")));
    }
    let total = (partitions as u64).checked_mul(count as u64).filter(|&n| n <= isize::MAX as u64).ok_or_else(|| (MPI_ERR_COUNT, format!("{partitions} partitions of {count} items are too many")))?;
    let (whole, layout) = buffer_of(buf, total as usize, dt)?;
    let bytes = whole.len.max(layout.as_ref().map_or(0, |l| l.bytes()));
    if crate::info::pairs(info).is_none() {
        return Err((MPI_ERR_INFO, format!("invalid info handle {info:#x}")));
    }
    let (world, label) = if send {
        send_tag(tag)?;
        (dest_world(c, peer)?, c.rank as i32)
    } else {
        if peer == MPI_ANY_SOURCE {
            return Err((MPI_ERR_RANK, "MPI_ANY_SOURCE is not allowed in MPI_Precv_init (partitioned receives name their source)".into()));
        }
        if tag == MPI_ANY_TAG {
            return Err((MPI_ERR_TAG, "MPI_ANY_TAG is not allowed in MPI_Precv_init (partitioned receives name their tag)".into()));
        }
        recv_source(c, peer)?;
        recv_tag(tag)?;
        (if peer == MPI_PROC_NULL { PROC_NULL_WORLD } else { c.world_ranks[peer as usize] }, peer)
    };
    let parts = partitions as usize;
    Ok(PartArgs {
        buf: whole,
        layout,
        parts,
        part_bytes: if parts == 0 { 0 } else { bytes / parts },
        peer: world,
        ctx: c.coll_ctx(),
        label,
        tag,
        owner: comm as i64,
    })
}

#[allow(clippy::too_many_arguments)]
fn init(func: &str, send: bool, buf: *const c_void, partitions: c_int, count: MPI_Count, dt: MPI_Datatype, peer: c_int, tag: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    request_call(func, comm, true, request, |rt| {
        let a = part_args(rt, send, buf, partitions, count, dt, peer, tag, comm, info)?;
        Ok(Launch::Started(if send { rt.engine.psend_init(a) } else { rt.engine.precv_init(a) }))
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Psend_init(buf: *const c_void, partitions: c_int, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    init("MPI_Psend_init", true, buf, partitions, count, datatype, dest, tag, comm, info, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Precv_init(buf: *mut c_void, partitions: c_int, count: MPI_Count, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, info: MPI_Info, request: *mut MPI_Request) -> c_int {
    init("MPI_Precv_init", false, buf, partitions, count, datatype, source, tag, comm, info, request)
}

/// The engine id of partitioned request `h` and the communicator it reports errors on.
fn partitioned(rt: &runtime::Runtime, h: MPI_Request) -> Result<(ReqId, MPI_Comm), String> {
    if h == MPI_REQUEST_NULL {
        return Err("request is MPI_REQUEST_NULL".into());
    }
    let rid = request_id(h).ok_or_else(|| format!("invalid request handle {h:#x}"))?;
    let r = rt.engine.reqs.get(rid).ok_or_else(|| format!("request {h:#x} was already freed or completed"))?;
    rt.engine.partitioned_side(rid).ok_or_else(|| format!("request {h:#x} is not a partitioned request"))?;
    Ok((rid, r.owner as MPI_Comm))
}

/// Marks `list` (partition indices, checked by the engine) ready on send request `h`.
fn pready(func: &str, h: MPI_Request, list: impl FnOnce() -> Result<Vec<usize>, String>) -> c_int {
    require_init!(func);
    let r = runtime::with(|rt| {
        let (rid, comm) = partitioned(rt, h).map_err(|m| (MPI_COMM_WORLD, MPI_ERR_REQUEST, m))?;
        let list = list().map_err(|m| (comm, MPI_ERR_ARG, m))?;
        rt.engine.pready(rid, &list).map_err(|e| (comm, e.class as c_int, e.msg))
    });
    match r {
        Ok(()) => MPI_SUCCESS,
        Err((comm, class, msg)) => raise(comm, func, class, msg),
    }
}

/// A partition index from the caller (the engine checks it against the request's count).
fn index(i: c_int) -> Result<usize, String> {
    usize::try_from(i).map_err(|_| format!("negative partition {i}"))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pready(partition: c_int, request: MPI_Request) -> c_int {
    pready("MPI_Pready", request, || Ok(vec![index(partition)?]))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pready_range(partition_low: c_int, partition_high: c_int, request: MPI_Request) -> c_int {
    pready("MPI_Pready_range", request, || {
        if partition_low < 0 || partition_high < partition_low {
            return Err(format!("invalid partition range {partition_low}..={partition_high}"));
        }
        Ok((partition_low as usize..=partition_high as usize).collect())
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Pready_list(length: c_int, array_of_partitions: *const c_int, request: MPI_Request) -> c_int {
    pready("MPI_Pready_list", request, || {
        if length < 0 || (length > 0 && array_of_partitions.is_null()) {
            return Err(format!("invalid partition list (length {length}, array {array_of_partitions:p})"));
        }
        if length == 0 {
            return Ok(Vec::new());
        }
        // SAFETY: the caller passes `length` partition indices.
        let l = unsafe { std::slice::from_raw_parts(array_of_partitions, length as usize) };
        l.iter().map(|&i| index(i)).collect()
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Parrived(request: MPI_Request, partition: c_int, flag: *mut c_int) -> c_int {
    const F: &str = "MPI_Parrived";
    require_init!(F);
    if flag.is_null() {
        return raise(MPI_COMM_WORLD, F, MPI_ERR_ARG, "flag is NULL");
    }
    if request == MPI_REQUEST_NULL {
        // SAFETY: checked non-null.
        unsafe { *flag = 1 };
        return MPI_SUCCESS;
    }
    let r = runtime::with(|rt| {
        let (rid, comm) = partitioned(rt, request).map_err(|m| (MPI_COMM_WORLD, MPI_ERR_REQUEST, m))?;
        rt.engine.progress();
        let i = index(partition).map_err(|m| (comm, MPI_ERR_ARG, m))?;
        rt.engine.parrived(rid, i).map_err(|e| (comm, e.class as c_int, e.msg))
    });
    match r {
        Ok(arrived) => {
            // SAFETY: checked non-null.
            unsafe { *flag = arrived as c_int };
            runtime::polled(arrived);
            MPI_SUCCESS
        }
        Err((comm, class, msg)) => raise(comm, F, class, msg),
    }
}

/// Why partitioned request `rid` may not be freed or cancelled now (an active round:
/// erroneous, MPI 4.1 §4.2.1), if so.
pub fn busy(rt: &runtime::Runtime, rid: ReqId, what: &str) -> Option<String> {
    rt.engine.partitioned_side(rid)?;
    let r = rt.engine.reqs.get(rid)?;
    (r.state != mpi_core::request::State::Inactive && !r.is_complete()).then(|| format!("cannot {what} a partitioned request whose round is active (started, not complete)"))
}

