//! The origin side of the communication calls: `MPI_Put`, `MPI_Get`, `MPI_Accumulate`,
//! `MPI_Get_accumulate`, `MPI_Fetch_and_op`, `MPI_Compare_and_swap` and their request forms.
//! Directly reachable targets (mapped or CMA) are done before the call returns; others
//! become active messages (`am`) whose replies complete them.

use super::access::{self, Runs};
use super::am::{self, Kind, PendingReply};
use super::apply;
use super::window::{Access, Flavor, Target, Win};
use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::op::{Elem, PredefOp};
use crate::request::{Layout, RawBuf, ReqId};
use crate::runtime::Runtime;
use std::sync::Arc;

/// An origin (or result) buffer: contiguous bytes, or a derived-type layout.
pub struct Buf {
    pub raw: RawBuf,
    pub layout: Option<Layout>,
}

impl Buf {
    /// Its data as runs of local addresses, in type-map order.
    fn runs(&self) -> Runs {
        match &self.layout {
            None => vec![(self.raw.ptr as u64, self.raw.len)],
            Some(l) => l.dt.blocks(l.count).map(|(o, n)| (l.base.wrapping_offset(o) as u64, n)).collect(),
        }
    }

    fn bytes(&self) -> usize {
        self.layout.as_ref().map_or(self.raw.len, |l| l.bytes())
    }

    /// Its data packed: borrowed when contiguous.
    fn packed(&self) -> std::borrow::Cow<'_, [u8]> {
        match &self.layout {
            // SAFETY: the caller's buffer holds `len` readable bytes until the call returns.
            None => std::borrow::Cow::Borrowed(unsafe { slice(self.raw.ptr, self.raw.len) }),
            Some(l) => {
                let mut v = vec![0u8; l.bytes()];
                // SAFETY: the layout describes the caller's readable buffer.
                unsafe { l.dt.pack(l.base, l.count, &mut v) };
                std::borrow::Cow::Owned(v)
            }
        }
    }
}

/// A possibly null pointer with a zero length as a slice.
unsafe fn slice<'a>(p: *const u8, n: usize) -> &'a [u8] {
    if n == 0 {
        &[]
    } else {
        // SAFETY: caller's contract.
        unsafe { std::slice::from_raw_parts(p, n) }
    }
}

/// Where in the target window an operation lands.
pub struct TargetSpec {
    pub rank: usize,
    pub disp: isize,
    pub count: usize,
    pub dt: Arc<Datatype>,
}

/// The data-moving operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    Put,
    Get,
    Acc(PredefOp, Elem),
    GetAcc(PredefOp, Elem),
}

/// Target runs (window offsets; addresses for dynamic windows) of `spec`, checked against
/// the target's window.
fn target_runs(t: &Target, dynamic: bool, spec: &TargetSpec) -> MpiResult<Runs> {
    let range = |m: String| MpiError::new(ErrorClass::RmaRange, m);
    let base = spec.disp.checked_mul(t.disp_unit as isize).ok_or_else(|| range(format!("target displacement {} overflows", spec.disp)))?;
    let mut runs = Vec::new();
    let mut lo = i128::MAX;
    let mut hi = i128::MIN;
    let dt = &spec.dt;
    let mut push = |o: isize, n: usize| {
        let a = base as i128 + o as i128;
        lo = lo.min(a);
        hi = hi.max(a + n as i128);
        runs.push((a as u64, n));
    };
    if dt.is_contiguous() {
        if spec.count * dt.size() > 0 {
            push(dt.true_lb(), spec.count * dt.size());
        }
    } else {
        for (o, n) in dt.blocks(spec.count) {
            push(o, n);
        }
    }
    if runs.is_empty() {
        return Ok(runs);
    }
    if lo < 0 && !dynamic {
        return Err(range(format!("target data starts {} bytes before the target's window", -lo)));
    }
    if !dynamic && hi > t.size as i128 {
        return Err(range(format!(
            "target data ends at byte {hi} but the window of rank {} holds {} bytes (displacement {} x disp_unit {})",
            spec.rank, t.size, spec.disp, t.disp_unit
        )));
    }
    Ok(runs)
}

/// Checks that the origin may access `target` now.
fn check_epoch(w: &mut Win, target: usize, func: &str) -> MpiResult<()> {
    if w.in_epoch(target) {
        if !w.lock_all && w.targets[target].held == super::window::Held::None && w.start_group.is_none() {
            w.fence_used = true;
        }
        Ok(())
    } else {
        Err(MpiError::new(
            ErrorClass::RmaSync,
            format!("{func} to rank {target} outside an access epoch (open one with MPI_Win_fence, MPI_Win_start, MPI_Win_lock or MPI_Win_lock_all)"),
        ))
    }
}

/// One put, get, accumulate or get-accumulate. `result` is the get-accumulate's result
/// buffer. With `want_request`, returns a request completing with the operation (the request
/// forms `MPI_Rput`, ...).
#[allow(clippy::too_many_arguments)]
pub fn communicate(rt: &mut Runtime, idx: usize, what: What, func: &str, origin: Buf, result: Option<Buf>, spec: TargetSpec, want_request: bool) -> MpiResult<Option<ReqId>> {
    super::sync::poll_if_served(rt, idx);
    let w = rt.wins.get_mut(idx).ok_or_else(|| MpiError::new(ErrorClass::Win, "invalid window"))?;
    check_epoch(w, spec.rank, func)?;
    if want_request && !w.lock_all && w.targets[spec.rank].held == super::window::Held::None {
        return Err(MpiError::new(ErrorClass::RmaSync, format!("{func}: request-based operations are only allowed in a passive-target epoch (MPI_Win_lock or MPI_Win_lock_all)")));
    }
    let dynamic = w.flavor == Flavor::Dynamic;
    let t = &w.targets[spec.rank];
    let runs = target_runs(t, dynamic, &spec)?;
    let tbytes = access::total(&runs);
    let obytes = origin.bytes();
    if matches!(what, What::GetAcc(PredefOp::NoOp, _)) {
        // The origin buffer is ignored (MPI_NO_OP).
    } else if obytes != tbytes {
        return Err(MpiError::new(ErrorClass::Type, format!("{func}: origin data is {obytes} bytes but target data is {tbytes} (the type signatures must match)")));
    }
    if let Some(r) = &result {
        if r.bytes() != tbytes {
            return Err(MpiError::new(ErrorClass::Type, format!("{func}: result buffer holds {} bytes but target data is {tbytes}", r.bytes())));
        }
    }
    let access = t.access;
    if access != Access::Am {
        // SAFETY: the runs were checked against the target's window (or, for dynamic
        // windows, are checked by the kernel); the buffers are the caller's.
        unsafe { local(t, access, what, &origin, result.as_ref(), &runs)? };
        return Ok(want_request.then(|| done_request(rt)));
    }
    let (kind, op, elem) = match what {
        What::Put => (Kind::Put, PredefOp::NoOp, Elem::Byte),
        What::Get => (Kind::Get, PredefOp::NoOp, Elem::Byte),
        What::Acc(op, e) => (Kind::Acc, op, e),
        What::GetAcc(op, e) => (Kind::GetAcc, op, e),
    };
    let payload = match what {
        What::Get | What::GetAcc(PredefOp::NoOp, _) => Vec::new(),
        _ => origin.packed().into_owned(),
    };
    let msg = am::encode(kind, op, elem, false, &runs, &[&payload]);
    let reply = match (what, result, origin) {
        (What::Get, _, o) => (o.raw, o.layout),
        (What::GetAcc(..), Some(r), _) => (r.raw, r.layout),
        _ => (RawBuf::EMPTY, None),
    };
    let user = want_request.then(|| rt.engine.open_coll_request());
    issue(rt, idx, spec.rank, msg, reply, user);
    Ok(user)
}

/// Sends an active-message request and posts the receive of its reply.
/// The first request of an epoch whose lock was deferred carries the lock
/// (`sync::before_operation`); its reply is then the grant.
pub(super) fn issue(rt: &mut Runtime, idx: usize, target: usize, mut msg: Vec<u8>, reply: (RawBuf, Option<Layout>), user: Option<ReqId>) {
    let mut w = rt.wins.take(idx).expect("window exists");
    let rid = am::post_reply(rt, &w, target, reply.0, reply.1);
    let deferred = w.targets[target].lock_unsent.take();
    if let Some(exclusive) = deferred {
        am::add_lock(&mut msg, exclusive);
    }
    let grant = deferred.is_some();
    am::send(rt, &mut w, target, am::TAG_REQUEST, msg);
    let t = &mut w.targets[target];
    t.awaiting_grant |= grant;
    t.pending.push_back(PendingReply { rid, user, grant });
    rt.wins.put_back(idx, w);
}

/// A request that is complete already (request forms on directly reached targets).
fn done_request(rt: &mut Runtime) -> ReqId {
    let r = rt.engine.open_coll_request();
    rt.engine.close_coll_request(r, None);
    r
}

/// Applies an operation to a directly reachable target.
///
/// # Safety
/// As `communicate` says.
unsafe fn local(t: &Target, access: Access, what: What, origin: &Buf, result: Option<&Buf>, runs: &Runs) -> MpiResult<()> {
    // SAFETY: node segment words live with the window.
    let words = unsafe { &*t.words };
    match what {
        // SAFETY (both): caller's contract.
        What::Put => unsafe { access::write(access, runs, &origin.runs()) },
        What::Get => unsafe { access::read(access, runs, &origin.runs()) },
        What::Acc(op, elem) => {
            let o = origin.packed();
            // SAFETY: caller's contract.
            unsafe { apply::accumulate(access, words, runs, &o, op, elem, None) }
        }
        What::GetAcc(op, elem) => {
            let o = if op == PredefOp::NoOp { std::borrow::Cow::Borrowed(&[][..]) } else { origin.packed() };
            let r = result.expect("get-accumulate has a result buffer");
            let mut old = vec![0u8; access::total(runs)];
            // SAFETY: caller's contract.
            unsafe { apply::accumulate(access, words, runs, &o, op, elem, Some(&mut old))? };
            scatter(&old, r);
            Ok(())
        }
    }
}

/// Copies packed bytes into a result buffer.
fn scatter(packed: &[u8], r: &Buf) {
    match &r.layout {
        // SAFETY: the result buffer holds `len` writable bytes (checked against the target data).
        None => unsafe { std::ptr::copy_nonoverlapping(packed.as_ptr(), r.raw.ptr, packed.len().min(r.raw.len)) },
        // SAFETY: the layout describes the caller's writable buffer.
        Some(l) => unsafe {
            l.dt.unpack(packed, l.base, l.count);
        },
    }
}

/// `MPI_Compare_and_swap` (and the single-element fast path of `MPI_Fetch_and_op`, which
/// the C layer sends through `communicate`): `size` bytes at `origin`, `compare`, `result`.
///
/// # Safety
/// The three buffers must be valid for `size` bytes; `result` until the operation completes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn compare_and_swap(rt: &mut Runtime, idx: usize, origin: *const u8, compare: *const u8, result: *mut u8, size: usize, rank: usize, disp: isize, byte: Arc<Datatype>) -> MpiResult<()> {
    super::sync::poll_if_served(rt, idx);
    let w = rt.wins.get_mut(idx).ok_or_else(|| MpiError::new(ErrorClass::Win, "invalid window"))?;
    check_epoch(w, rank, "MPI_Compare_and_swap")?;
    let dynamic = w.flavor == Flavor::Dynamic;
    let t = &w.targets[rank];
    let runs = target_runs(t, dynamic, &TargetSpec { rank, disp, count: size, dt: byte })?;
    // SAFETY: the caller's three buffers hold `size` bytes each.
    let (new, cmp) = unsafe { (slice(origin, size), slice(compare, size)) };
    if t.access != Access::Am {
        // Copies first: `compare` may be the result buffer (the expected value updated in
        // place), which must not be read after the old value lands in it.
        let (new, cmp) = (new.to_vec(), cmp.to_vec());
        // SAFETY: as in `communicate`; words live with the window.
        let out = unsafe { std::slice::from_raw_parts_mut(result, size) };
        return unsafe { apply::compare_and_swap(t.access, &*t.words, &runs, &new, &cmp, out) };
    }
    let msg = am::encode(Kind::Cas, PredefOp::NoOp, Elem::Byte, false, &runs, &[cmp, new]);
    issue(rt, idx, rank, msg, (RawBuf { ptr: result, len: size }, None), None);
    Ok(())
}
