//! Point-to-point entry points: send modes (blocking, nonblocking, persistent), receives,
//! probes, matched probes, sendrecv, and the buffered-send buffer.

use crate::abi::*;
use crate::errors::raise;
use crate::handles::{request_handle, request_id};
use crate::p2p_args::*;
use crate::requests::{complete_error, finish, is_complete, wait_finish, wait_request};
use mpi_core::protocol::BlockingRecv;
use mpi_core::request::{Layout, Op, RawBuf, ReqId, SendMode, Status};
use mpi_core::runtime::{self, Runtime};
use std::os::raw::{c_int, c_void};

/// How a point-to-point call proceeds after validation.
enum Started {
    /// Finished already (fast path or MPI_PROC_NULL), with this status.
    Done(Status),
    /// A request to wait for (blocking calls) or hand out (nonblocking calls).
    Pending(ReqId),
    /// `MPI_Recv` waiting without a request (`BlockingRecv::Waiting`).
    Waiting,
}

#[allow(clippy::too_many_arguments)]
#[inline]
fn send_op(rt: &Runtime, buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: SendMode) -> Result<(Op, Option<Layout>), ArgError> {
    let c = comm_of(rt, comm)?;
    let (buf, layout) = buffer(buf, count, dt)?;
    send_tag(tag)?;
    let dest_world = dest_world(c, dest)?;
    Ok((Op::Send { buf, dest_world, ctx: c.ctx, src_rank: c.rank as i32, tag, mode }, layout))
}

#[inline]
fn recv_op(rt: &Runtime, buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, src: c_int, tag: c_int, comm: MPI_Comm) -> Result<(Op, Option<Layout>), ArgError> {
    let c = comm_of(rt, comm)?;
    let (buf, layout) = buffer(buf, count, dt)?;
    recv_source(c, src)?;
    recv_tag(tag)?;
    Ok((Op::Recv { buf, ctx: c.ctx, src, tag }, layout))
}

/// Largest count the fast path takes: its byte length (at most 255-byte builtin items)
/// cannot overflow. Larger counts go down the general path, which checks them.
const FAST_COUNT_MAX: u64 = (isize::MAX as u64) >> 8;

/// The common case of a point-to-point call, checked without building an `Op`: a valid
/// communicator, a builtin datatype, a non-negative count with a buffer, a valid tag and a
/// real peer (`peer_ok`). Returns (communicator, contiguous buffer); None sends the call down
/// the general path, which also reports every error.
#[inline(always)]
fn common_args(rt: &Runtime, buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, tag_ok: bool, comm: MPI_Comm) -> Option<(&mpi_core::comm::Comm, RawBuf)> {
    // One unsigned compare rejects negative counts and counts too large to multiply.
    if !tag_ok || count as u64 > FAST_COUNT_MAX || !crate::types::is_builtin_handle(dt) {
        return None;
    }
    let c = rt.comms.get(crate::handles::comm_index(comm)?)?;
    let len = count as usize * (((dt as u32) >> 8) & 0xff) as usize;
    if buf.is_null() && len > 0 {
        return None;
    }
    Some((c, RawBuf { ptr: buf as *mut u8, len }))
}

/// `common_args` for a send to a real destination: (buffer, destination's world rank,
/// context, our rank).
#[inline(always)]
fn fast_send_args(rt: &Runtime, buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> Option<(RawBuf, usize, u32, i32)> {
    let (c, b) = common_args(rt, buf, count, dt, (0..=TAG_UB).contains(&tag), comm)?;
    let world = *c.world_ranks.get(usize::try_from(dest).ok()?)?;
    Some((b, world, c.ctx, c.rank as i32))
}

/// `common_args` for a receive from a real (or any) source: (buffer, context).
#[inline(always)]
fn fast_recv_args(rt: &Runtime, buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, src: c_int, tag: c_int, comm: MPI_Comm) -> Option<(RawBuf, u32)> {
    let (c, b) = common_args(rt, buf, count, dt, tag == MPI_ANY_TAG || (0..=TAG_UB).contains(&tag), comm)?;
    (src == MPI_ANY_SOURCE || (src >= 0 && (src as usize) < c.size())).then_some((b, c.ctx))
}

/// Creates and (unless persistent) starts a request for `op` (with a non-contiguous
/// buffer `layout`, if any).
#[inline]
fn launch(rt: &mut Runtime, (op, layout): (Op, Option<Layout>), comm: MPI_Comm, persistent: bool) -> Result<ReqId, ArgError> {
    if let (Op::Recv { buf, ctx, src, tag }, None, false) = (op, &layout, persistent) {
        if src != MPI_PROC_NULL {
            return Ok(rt.engine.post_recv(buf, ctx, src, tag, comm as i64));
        }
    }
    let rid = rt.engine.create(op, persistent);
    let r = rt.engine.reqs.get_mut(rid).unwrap();
    r.owner = comm as i64;
    if layout.is_some() {
        r.extra().layout = layout;
    }
    if !persistent {
        if let Err(e) = rt.engine.start(rid) {
            rt.engine.reqs.discard(rid);
            return Err((e.class as c_int, e.msg));
        }
    }
    Ok(rid)
}

/// Finishes a blocking call: waits for a pending request and reports its status.
fn finish_blocking(func: &str, comm: MPI_Comm, started: Result<Started, ArgError>, status: *mut MPI_Status) -> c_int {
    let st = match started {
        Err((class, msg)) => return raise(comm, func, class, msg),
        Ok(Started::Done(st)) => st,
        Ok(Started::Pending(rid)) => wait_finish(rid),
        Ok(Started::Waiting) => wait_blocking_recv(),
    };
    // SAFETY: `status` is the caller's MPI_Status pointer or MPI_STATUS_IGNORE.
    unsafe { write_status(status, &st, None) };
    match st.error {
        Some(class) => complete_error(comm, func, class as c_int, &st),
        None => MPI_SUCCESS,
    }
}

/// Waits until the request-free blocking receive ends; its status.
fn wait_blocking_recv() -> Status {
    let mut now = BlockingRecv::Waiting;
    runtime::wait_until(|rt| {
        now = rt.engine.poll_blocking_recv();
        !matches!(now, BlockingRecv::Waiting)
    });
    match now {
        BlockingRecv::Done(st) => st,
        BlockingRecv::Request(rid) => wait_finish(rid),
        BlockingRecv::Waiting => unreachable!("wait_until returns once the receive ended"),
    }
}

#[allow(clippy::too_many_arguments)]
fn send_blocking(func: &str, buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: SendMode) -> c_int {
    require_init!(func);
    let started = runtime::with(|rt| {
        if matches!(mode, SendMode::Standard | SendMode::Ready) && send_now(rt, buf, count, dt, dest, tag, comm) {
            return Ok(Started::Done(Status::default()));
        }
        let op = send_op(rt, buf, count, dt, dest, tag, comm, mode)?;
        if let (Op::Send { buf, dest_world, ctx, src_rank, .. }, layout) = &op {
            if *dest_world == mpi_core::protocol::PROC_NULL_WORLD {
                return Ok(Started::Done(Status::default()));
            }
            if layout.is_none() && matches!(mode, SendMode::Standard | SendMode::Ready) && rt.engine.try_send_now(*buf, *dest_world, *ctx, *src_rank, tag) {
                return Ok(Started::Done(Status::default()));
            }
        }
        launch(rt, op, comm, false).map(Started::Pending)
    });
    finish_blocking(func, comm, started, std::ptr::null_mut())
}

#[allow(clippy::too_many_arguments)]
fn send_request(func: &str, buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, mode: SendMode, persistent: bool, request: *mut MPI_Request) -> c_int {
    // An eager standard/ready send that the transport takes at once is complete when it
    // starts: it needs no request of its own and gets the shared completed-send handle.
    let eager_now = !persistent && matches!(mode, SendMode::Standard | SendMode::Ready);
    request_call(func, comm, persistent, request, |rt| {
        if eager_now && send_now(rt, buf, count, dt, dest, tag, comm) {
            return Ok(Launch::Started(mpi_core::request::COMPLETED_SEND));
        }
        send_op(rt, buf, count, dt, dest, tag, comm, mode).map(Launch::Op)
    })
}

/// A standard-mode send of the common case handed to the transport at once (true), with
/// no request; false sends the caller down the general path.
#[inline(always)]
fn send_now(rt: &mut Runtime, buf: *const c_void, count: MPI_Count, dt: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> bool {
    fast_send_args(rt, buf, count, dt, dest, tag, comm).is_some_and(|(b, world, ctx, me)| rt.engine.try_send_now(b, world, ctx, me, tag))
}

#[allow(clippy::too_many_arguments)]
fn recv_request(func: &str, buf: *mut c_void, count: MPI_Count, dt: MPI_Datatype, src: c_int, tag: c_int, comm: MPI_Comm, persistent: bool, request: *mut MPI_Request) -> c_int {
    // The common nonblocking case never gets here (`PMPI_Irecv` posts it itself).
    request_call(func, comm, persistent, request, |rt| recv_op(rt, buf, count, dt, src, tag, comm).map(Launch::Op))
}

/// What a nonblocking call's validation produced.
pub(crate) enum Launch {
    /// An operation to create (and unless persistent, start) a request for.
    Op((Op, Option<Layout>)),
    /// A request already made (a send that completed at once: `COMPLETED_SEND`; a
    /// partitioned request).
    Started(ReqId),
}

/// The nonblocking and persistent entry points: validate into an operation, create (and
/// unless persistent, start) its request, hand out the handle.
pub(crate) fn request_call(func: &str, comm: MPI_Comm, persistent: bool, request: *mut MPI_Request, op: impl FnOnce(&mut Runtime) -> Result<Launch, ArgError>) -> c_int {
    require_init!(func);
    if request.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "request is NULL");
    }
    let launched = runtime::with(|rt| match op(rt)? {
        Launch::Started(rid) => Ok(rid),
        Launch::Op(op) => launch(rt, op, comm, persistent),
    });
    match launched {
        Ok(rid) => {
            // SAFETY: checked non-null.
            unsafe { *request = request_handle(rid) };
            MPI_SUCCESS
        }
        Err((class, msg)) => raise(comm, func, class, msg),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Send(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
    send_blocking("MPI_Send", buf, count.into(), datatype, dest, tag, comm, SendMode::Standard)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Send_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
    send_blocking("MPI_Send_c", buf, count, datatype, dest, tag, comm, SendMode::Standard)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ssend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
    send_blocking("MPI_Ssend", buf, count.into(), datatype, dest, tag, comm, SendMode::Synchronous)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ssend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
    send_blocking("MPI_Ssend_c", buf, count, datatype, dest, tag, comm, SendMode::Synchronous)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Bsend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
    send_blocking("MPI_Bsend", buf, count.into(), datatype, dest, tag, comm, SendMode::Buffered)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Bsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
    send_blocking("MPI_Bsend_c", buf, count, datatype, dest, tag, comm, SendMode::Buffered)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Rsend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
    send_blocking("MPI_Rsend", buf, count.into(), datatype, dest, tag, comm, SendMode::Ready)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Rsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> c_int {
    send_blocking("MPI_Rsend_c", buf, count, datatype, dest, tag, comm, SendMode::Ready)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Isend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    isend("MPI_Isend", buf, count, datatype, dest, tag, comm, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Isend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    isend("MPI_Isend_c", buf, count, datatype, dest, tag, comm, request)
}

/// The hot entry points' bodies (`isend`, `irecv`, `recv_blocking`) are generic over the
/// count's type so the int and `_c` forms get one copy each: shared, the engine call's
/// closure had two callers and stopped being inlined into the int form.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn isend<C: Into<MPI_Count>>(func: &str, buf: *const c_void, count: C, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    let count = count.into();
    // The common case in one short function, as in `irecv`.
    if mpi_core::runtime::is_active() && !request.is_null() && runtime::with(|rt| send_now(rt, buf, count, datatype, dest, tag, comm)) {
        // SAFETY: checked non-null.
        unsafe { *request = request_handle(mpi_core::request::COMPLETED_SEND) };
        return MPI_SUCCESS;
    }
    send_request(func, buf, count, datatype, dest, tag, comm, SendMode::Standard, false, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Issend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    send_request("MPI_Issend", buf, count.into(), datatype, dest, tag, comm, SendMode::Synchronous, false, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Issend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    send_request("MPI_Issend_c", buf, count, datatype, dest, tag, comm, SendMode::Synchronous, false, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ibsend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    send_request("MPI_Ibsend", buf, count.into(), datatype, dest, tag, comm, SendMode::Buffered, false, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ibsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    send_request("MPI_Ibsend_c", buf, count, datatype, dest, tag, comm, SendMode::Buffered, false, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Irsend(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    send_request("MPI_Irsend", buf, count.into(), datatype, dest, tag, comm, SendMode::Ready, false, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Irsend_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    send_request("MPI_Irsend_c", buf, count, datatype, dest, tag, comm, SendMode::Ready, false, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Send_init(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    send_request("MPI_Send_init", buf, count.into(), datatype, dest, tag, comm, SendMode::Standard, true, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Send_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    send_request("MPI_Send_init_c", buf, count, datatype, dest, tag, comm, SendMode::Standard, true, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ssend_init(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    send_request("MPI_Ssend_init", buf, count.into(), datatype, dest, tag, comm, SendMode::Synchronous, true, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Ssend_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    send_request("MPI_Ssend_init_c", buf, count, datatype, dest, tag, comm, SendMode::Synchronous, true, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Bsend_init(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    send_request("MPI_Bsend_init", buf, count.into(), datatype, dest, tag, comm, SendMode::Buffered, true, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Bsend_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    send_request("MPI_Bsend_init_c", buf, count, datatype, dest, tag, comm, SendMode::Buffered, true, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Rsend_init(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    send_request("MPI_Rsend_init", buf, count.into(), datatype, dest, tag, comm, SendMode::Ready, true, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Rsend_init_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    send_request("MPI_Rsend_init_c", buf, count, datatype, dest, tag, comm, SendMode::Ready, true, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Recv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
    recv_blocking("MPI_Recv", buf, count, datatype, source, tag, comm, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Recv_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
    recv_blocking("MPI_Recv_c", buf, count, datatype, source, tag, comm, status)
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn recv_blocking<C: Into<MPI_Count>>(func: &str, buf: *mut c_void, count: C, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
    let count = count.into();
    require_init!(func);
    require_status!(func, comm, status);
    let started = runtime::with(|rt| {
        let rid = if let Some((b, ctx)) = fast_recv_args(rt, buf, count, datatype, source, tag, comm) {
            match rt.engine.begin_blocking_recv(b, ctx, source, tag, comm as i64) {
                BlockingRecv::Done(st) => return Ok(Started::Done(st)),
                BlockingRecv::Request(rid) => rid,
                BlockingRecv::Waiting => {
                    // As below: the message may already sit in the transport.
                    rt.progress();
                    return Ok(match rt.engine.poll_blocking_recv() {
                        BlockingRecv::Done(st) => Started::Done(st),
                        BlockingRecv::Request(rid) => Started::Pending(rid),
                        BlockingRecv::Waiting => Started::Waiting,
                    });
                }
            }
        } else {
            let op = recv_op(rt, buf, count, datatype, source, tag, comm)?;
            if source == MPI_PROC_NULL {
                return Ok(Started::Done(proc_null_status()));
            }
            launch(rt, op, comm, false)?
        };
        // The message may already sit in the transport: one progress pass in this critical
        // section often completes the receive without another lock round trip.
        rt.progress();
        if is_complete(rt, rid) {
            return Ok(Started::Done(finish(rt, rid)));
        }
        Ok(Started::Pending(rid))
    });
    finish_blocking(func, comm, started, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Irecv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    irecv("MPI_Irecv", buf, count, datatype, source, tag, comm, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Irecv_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    irecv("MPI_Irecv_c", buf, count, datatype, source, tag, comm, request)
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn irecv<C: Into<MPI_Count>>(func: &str, buf: *mut c_void, count: C, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    let count = count.into();
    // The common case in one short function: the shared path's generality (persistent
    // requests, non-contiguous buffers, errors) cost ~40 instructions per receive.
    if mpi_core::runtime::is_active() && !request.is_null() {
        let posted = runtime::with(|rt| {
            let (b, ctx) = fast_recv_args(rt, buf, count, datatype, source, tag, comm)?;
            Some(rt.engine.post_recv(b, ctx, source, tag, comm as i64))
        });
        if let Some(rid) = posted {
            // SAFETY: checked non-null.
            unsafe { *request = request_handle(rid) };
            return MPI_SUCCESS;
        }
    }
    recv_request(func, buf, count, datatype, source, tag, comm, false, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Recv_init(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    recv_request("MPI_Recv_init", buf, count.into(), datatype, source, tag, comm, true, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Recv_init_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, source: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    recv_request("MPI_Recv_init_c", buf, count, datatype, source, tag, comm, true, request)
}

#[allow(clippy::too_many_arguments)]
fn sendrecv(func: &str, sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
    require_init!(func);
    require_status!(func, comm, status);
    let r = runtime::with(|rt| {
        let sop = send_op(rt, sendbuf, sendcount, sendtype, dest, sendtag, comm, SendMode::Standard)?;
        let rop = recv_op(rt, recvbuf, recvcount, recvtype, source, recvtag, comm)?;
        let rreq = launch(rt, rop, comm, false)?;
        match launch(rt, sop, comm, false) {
            Ok(sreq) => Ok((sreq, rreq)),
            Err(e) => {
                rt.engine.cancel(rreq);
                rt.engine.reqs.discard(rreq);
                Err(e)
            }
        }
    });
    let (sreq, rreq) = match r {
        Ok(x) => x,
        Err((class, msg)) => return raise(comm, func, class, msg),
    };
    wait_request(sreq);
    runtime::with(|rt| finish(rt, sreq));
    finish_blocking(func, comm, Ok(Started::Pending(rreq)), status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Sendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
    sendrecv("MPI_Sendrecv", sendbuf, sendcount.into(), sendtype, dest, sendtag, recvbuf, recvcount.into(), recvtype, source, recvtag, comm, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Sendrecv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
    sendrecv("MPI_Sendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status)
}

/// `MPI_Isendrecv(_replace)`: both halves validated as `MPI_Sendrecv`'s, started, and
/// joined into one request (`Engine::join`) that completes when both are done, with the
/// receive's status. `keep` is the staged outgoing data the send reads (replace).
#[allow(clippy::too_many_arguments)]
fn isendrecv(func: &str, sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request, keep: Vec<u8>) -> c_int {
    require_init!(func);
    if request.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "request is NULL");
    }
    let r = runtime::with(|rt| {
        let sop = send_op(rt, sendbuf, sendcount, sendtype, dest, sendtag, comm, SendMode::Standard)?;
        let rop = recv_op(rt, recvbuf, recvcount, recvtype, source, recvtag, comm)?;
        let rreq = launch(rt, rop, comm, false)?;
        let sreq = match launch(rt, sop, comm, false) {
            Ok(sreq) => sreq,
            Err(e) => {
                rt.engine.cancel(rreq);
                rt.engine.reqs.discard(rreq);
                return Err(e);
            }
        };
        let rid = rt.engine.join(sreq, rreq, keep);
        if let Some(r) = rt.engine.reqs.get_mut(rid) {
            r.owner = comm as i64;
        }
        Ok(rid)
    });
    match r {
        Ok(rid) => {
            // SAFETY: checked non-null.
            unsafe { *request = request_handle(rid) };
            MPI_SUCCESS
        }
        Err((class, msg)) => raise(comm, func, class, msg),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Isendrecv(sendbuf: *const c_void, sendcount: c_int, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: c_int, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    isendrecv("MPI_Isendrecv", sendbuf, sendcount.into(), sendtype, dest, sendtag, recvbuf, recvcount.into(), recvtype, source, recvtag, comm, request, Vec::new())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Isendrecv_c(sendbuf: *const c_void, sendcount: MPI_Count, sendtype: MPI_Datatype, dest: c_int, sendtag: c_int, recvbuf: *mut c_void, recvcount: MPI_Count, recvtype: MPI_Datatype, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    isendrecv("MPI_Isendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, request, Vec::new())
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Isendrecv_replace(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    isendrecv_replace("MPI_Isendrecv_replace", buf, count.into(), datatype, dest, sendtag, source, recvtag, comm, request)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Isendrecv_replace_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    isendrecv_replace("MPI_Isendrecv_replace_c", buf, count, datatype, dest, sendtag, source, recvtag, comm, request)
}

#[allow(clippy::too_many_arguments)]
fn isendrecv_replace(func: &str, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> c_int {
    require_init!(func);
    let copy = match staged_copy(buf, count, datatype) {
        Ok(v) => v,
        Err((class, msg)) => return raise(comm, func, class, msg),
    };
    // The Vec's heap block does not move when the engine takes it.
    let (p, n) = (copy.as_ptr() as *const c_void, copy.len() as MPI_Count);
    isendrecv(func, p, n, MPI_BYTE, dest, sendtag, buf, count, datatype, source, recvtag, comm, request, copy)
}

/// The outgoing data of a `_replace` call, copied (packed for non-contiguous types), so
/// the receive may land in the caller's buffer while the send still reads.
fn staged_copy(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype) -> Result<Vec<u8>, ArgError> {
    Ok(match buffer(buf, count, datatype)? {
        // SAFETY: `buffer` checked that the contiguous view holds len bytes (or len is 0).
        (b, None) if b.len > 0 => unsafe { std::slice::from_raw_parts(b.ptr as *const u8, b.len) }.to_vec(),
        (_, None) => Vec::new(),
        (_, Some(l)) => {
            let mut v = vec![0u8; l.bytes()];
            // SAFETY: the layout describes the caller's buffer.
            unsafe { l.dt.pack(l.base, l.count, &mut v) };
            v
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Sendrecv_replace(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
    sendrecv_replace("MPI_Sendrecv_replace", buf, count.into(), datatype, dest, sendtag, source, recvtag, comm, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Sendrecv_replace_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
    sendrecv_replace("MPI_Sendrecv_replace_c", buf, count, datatype, dest, sendtag, source, recvtag, comm, status)
}

#[allow(clippy::too_many_arguments)]
fn sendrecv_replace(func: &str, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, sendtag: c_int, source: c_int, recvtag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
    require_init!(func);
    require_status!(func, comm, status);
    // The outgoing data is copied (packed for non-contiguous types) first; the receive then
    // lands in the caller's buffer.
    let copy = match staged_copy(buf, count, datatype) {
        Ok(v) => v,
        Err((class, msg)) => return raise(comm, func, class, msg),
    };
    sendrecv(func, copy.as_ptr() as *const c_void, copy.len() as MPI_Count, MPI_BYTE, dest, sendtag, buf, count, datatype, source, recvtag, comm, status)
}

// ------------------------------------------------------------------ probes

fn probe_args(rt: &Runtime, source: c_int, tag: c_int, comm: MPI_Comm) -> Result<u32, ArgError> {
    let c = comm_of(rt, comm)?;
    recv_source(c, source)?;
    recv_tag(tag)?;
    Ok(c.ctx)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Iprobe(source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, status: *mut MPI_Status) -> c_int {
    require_init!("MPI_Iprobe");
    require_status!("MPI_Iprobe", comm, status);
    if flag.is_null() {
        return raise(comm, "MPI_Iprobe", MPI_ERR_ARG, "flag is NULL");
    }
    let r = runtime::with(|rt| {
        let ctx = probe_args(rt, source, tag, comm)?;
        if source == MPI_PROC_NULL {
            return Ok(Some(proc_null_status()));
        }
        rt.progress();
        Ok(rt.engine.iprobe(ctx, source, tag))
    });
    match r {
        Ok(found) => {
            // SAFETY: checked non-null; status per the standard.
            unsafe {
                *flag = found.is_some() as c_int;
                if let Some(st) = found {
                    write_status(status, &st, None);
                }
            }
            runtime::polled(found.is_some());
            MPI_SUCCESS
        }
        Err((class, msg)) => raise(comm, "MPI_Iprobe", class, msg),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Probe(source: c_int, tag: c_int, comm: MPI_Comm, status: *mut MPI_Status) -> c_int {
    require_init!("MPI_Probe");
    require_status!("MPI_Probe", comm, status);
    let ctx = match runtime::with(|rt| probe_args(rt, source, tag, comm)) {
        Ok(ctx) => ctx,
        Err((class, msg)) => return raise(comm, "MPI_Probe", class, msg),
    };
    let mut found = (source == MPI_PROC_NULL).then(proc_null_status);
    if found.is_none() {
        runtime::wait_until(|rt| {
            found = rt.engine.iprobe(ctx, source, tag);
            found.is_some()
        });
    }
    // SAFETY: status per the standard.
    unsafe { write_status(status, &found.unwrap(), None) };
    MPI_SUCCESS
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Improbe(source: c_int, tag: c_int, comm: MPI_Comm, flag: *mut c_int, message: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
    require_init!("MPI_Improbe");
    require_status!("MPI_Improbe", comm, status);
    if flag.is_null() || message.is_null() {
        return raise(comm, "MPI_Improbe", MPI_ERR_ARG, "flag or message is NULL");
    }
    let r = runtime::with(|rt| {
        let ctx = probe_args(rt, source, tag, comm)?;
        if source == MPI_PROC_NULL {
            return Ok(Some((MPI_MESSAGE_NO_PROC, proc_null_status())));
        }
        rt.progress();
        Ok(improbe(rt, ctx, source, tag, comm))
    });
    match r {
        Ok(found) => {
            // SAFETY: checked non-null pointers; status per the standard.
            unsafe {
                *flag = found.is_some() as c_int;
                if let Some((m, st)) = found {
                    *message = m;
                    write_status(status, &st, None);
                }
            }
            runtime::polled(found.is_some());
            MPI_SUCCESS
        }
        Err((class, msg)) => raise(comm, "MPI_Improbe", class, msg),
    }
}

fn improbe(rt: &mut Runtime, ctx: u32, source: c_int, tag: c_int, comm: MPI_Comm) -> Option<(MPI_Message, Status)> {
    let rid = rt.engine.improbe(ctx, source, tag)?;
    let r = rt.engine.reqs.get_mut(rid).unwrap();
    r.owner = comm as i64;
    Some((request_handle(rid), r.status))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Mprobe(source: c_int, tag: c_int, comm: MPI_Comm, message: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
    require_init!("MPI_Mprobe");
    require_status!("MPI_Mprobe", comm, status);
    if message.is_null() {
        return raise(comm, "MPI_Mprobe", MPI_ERR_ARG, "message is NULL");
    }
    let ctx = match runtime::with(|rt| probe_args(rt, source, tag, comm)) {
        Ok(ctx) => ctx,
        Err((class, msg)) => return raise(comm, "MPI_Mprobe", class, msg),
    };
    let mut found = (source == MPI_PROC_NULL).then(|| (MPI_MESSAGE_NO_PROC, proc_null_status()));
    if found.is_none() {
        runtime::wait_until(|rt| {
            found = improbe(rt, ctx, source, tag, comm);
            found.is_some()
        });
    }
    let (m, st) = found.unwrap();
    // SAFETY: checked non-null; status per the standard.
    unsafe {
        *message = m;
        write_status(status, &st, None);
    }
    MPI_SUCCESS
}

/// Starts receiving matched message `*message` into the buffer; returns its request id, or
/// a finished status for `MPI_MESSAGE_NO_PROC`.
unsafe fn start_mrecv(func: &str, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, message: *mut MPI_Message) -> Result<Started, ArgError> {
    if message.is_null() {
        return Err((MPI_ERR_ARG, "message is NULL".into()));
    }
    // SAFETY: checked non-null.
    let m = unsafe { *message };
    let (b, layout) = buffer(buf, count, datatype)?;
    if m == MPI_MESSAGE_NO_PROC {
        // SAFETY: checked non-null.
        unsafe { *message = MPI_MESSAGE_NULL };
        return Ok(Started::Done(proc_null_status()));
    }
    let rid = request_id(m).ok_or_else(|| (MPI_ERR_REQUEST, format!("{func}: invalid message handle {m:#x}")))?;
    runtime::with(|rt| rt.engine.mrecv(rid, b, layout)).map_err(|e| (e.class as c_int, e.msg))?;
    // SAFETY: checked non-null.
    unsafe { *message = MPI_MESSAGE_NULL };
    Ok(Started::Pending(rid))
}

fn message_comm(message: *mut MPI_Message) -> MPI_Comm {
    if message.is_null() {
        return MPI_COMM_WORLD;
    }
    // SAFETY: checked non-null.
    let m = unsafe { *message };
    request_id(m)
        .and_then(|rid| runtime::with(|rt| rt.engine.reqs.get(rid).map(|r| r.owner as MPI_Comm)))
        .unwrap_or(MPI_COMM_WORLD)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Mrecv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, message: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
    // SAFETY: forwarded caller pointers.
    unsafe { mrecv("MPI_Mrecv", buf, count.into(), datatype, message, status) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Mrecv_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, message: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
    // SAFETY: forwarded caller pointers.
    unsafe { mrecv("MPI_Mrecv_c", buf, count, datatype, message, status) }
}

/// # Safety
/// `message` and `status` as `MPI_Mrecv` takes them.
unsafe fn mrecv(func: &str, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, message: *mut MPI_Message, status: *mut MPI_Status) -> c_int {
    require_init!(func);
    require_status!(func, MPI_COMM_WORLD, status);
    let comm = message_comm(message);
    // SAFETY: forwarded caller pointers.
    let started = unsafe { start_mrecv(func, buf, count, datatype, message) };
    finish_blocking(func, comm, started, status)
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Imrecv(buf: *mut c_void, count: c_int, datatype: MPI_Datatype, message: *mut MPI_Message, request: *mut MPI_Request) -> c_int {
    // SAFETY: forwarded caller pointers.
    unsafe { imrecv("MPI_Imrecv", buf, count.into(), datatype, message, request) }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Imrecv_c(buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, message: *mut MPI_Message, request: *mut MPI_Request) -> c_int {
    // SAFETY: forwarded caller pointers.
    unsafe { imrecv("MPI_Imrecv_c", buf, count, datatype, message, request) }
}

/// # Safety
/// `message` and `request` as `MPI_Imrecv` takes them.
unsafe fn imrecv(func: &str, buf: *mut c_void, count: MPI_Count, datatype: MPI_Datatype, message: *mut MPI_Message, request: *mut MPI_Request) -> c_int {
    require_init!(func);
    let comm = message_comm(message);
    if request.is_null() {
        return raise(comm, func, MPI_ERR_ARG, "request is NULL");
    }
    // SAFETY: forwarded caller pointers.
    match unsafe { start_mrecv(func, buf, count, datatype, message) } {
        Ok(Started::Pending(rid)) => {
            // SAFETY: checked non-null.
            unsafe { *request = request_handle(rid) };
            MPI_SUCCESS
        }
        Ok(Started::Done(_)) => {
            // A receive from MPI_PROC_NULL: a request that is already complete.
            let rid = runtime::with(|rt| {
                let op = Op::Recv { buf: RawBuf::EMPTY, ctx: 0, src: MPI_PROC_NULL, tag: MPI_ANY_TAG };
                launch(rt, (op, None), comm, false)
            });
            match rid {
                Ok(rid) => {
                    // SAFETY: checked non-null.
                    unsafe { *request = request_handle(rid) };
                    MPI_SUCCESS
                }
                Err((class, msg)) => raise(comm, func, class, msg),
            }
        }
        Ok(Started::Waiting) => unreachable!("a matched receive always has its message"),
        Err((class, msg)) => raise(comm, func, class, msg),
    }
}

