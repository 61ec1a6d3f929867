//! Active messages: one-sided operations on targets this process cannot reach directly,
//! carried as point-to-point messages on the window's private communicator and applied by
//! the target's progress engine (`serve`).
//!
//! A request is one message (tag `TAG_REQUEST`): a fixed head, the target runs (window
//! offsets, or addresses for dynamic windows), then the packed origin data. The first
//! operation of a passive-target epoch also carries the epoch's lock (`FLAG_LOCK`). Every request
//! gets exactly one reply (tag `TAG_REPLY`): the data of a get, the old contents of a
//! get-accumulate or compare-and-swap, or an empty acknowledgement once applied. The
//! origin posts the receive for each reply when it sends the request, so replies — which a
//! target sends in the order it received the requests — match in issue order and a get's
//! data lands straight in the user's buffer (unpacked by the engine for derived types).
//! Flush, unlock, complete and fence wait for the outstanding replies.

use super::access::{self, Runs};
use super::apply;
use super::window::{Access, Flavor, Win};
use crate::error::{fatal, ErrorClass, MpiError, MpiResult};
use crate::op::{Elem, PredefOp};
use crate::request::{Layout, Op, RawBuf, ReqId, SendMode};
use crate::runtime::Runtime;
use std::collections::VecDeque;

/// Tags on the window's private communicator.
pub const TAG_REQUEST: i32 = 1;
pub const TAG_REPLY: i32 = 2;
pub const TAG_POST: i32 = 3;
pub const TAG_COMPLETE: i32 = 4;

/// What a request asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Put = 1,
    Get = 2,
    /// Accumulate; `GetAcc` also returns the old contents.
    Acc = 3,
    GetAcc = 4,
    /// Compare-and-swap: payload = compare value, then the new value.
    Cas = 5,
    /// Release the lock this origin holds (`exclusive` flag: which kind).
    Unlock = 7,
}

const HEAD: usize = 16;
const FLAG_EXCLUSIVE: u8 = 1;
/// The request first takes the lock of the origin's passive-target epoch (exclusive with
/// `FLAG_EXCLUSIVE`): the lock rides on the epoch's first operation, whose reply then also
/// says it was granted.
const FLAG_LOCK: u8 = 2;

/// A decoded request.
pub struct Request<'a> {
    pub kind: Kind,
    pub op: PredefOp,
    pub elem: Elem,
    pub exclusive: bool,
    pub runs: Runs,
    pub payload: &'a [u8],
}

/// Encodes a request; `payload` parts are concatenated after the runs.
pub fn encode(kind: Kind, op: PredefOp, elem: Elem, exclusive: bool, runs: &[(u64, usize)], payload: &[&[u8]]) -> Vec<u8> {
    let plen: usize = payload.iter().map(|p| p.len()).sum();
    let mut v = Vec::with_capacity(HEAD + runs.len() * 16 + plen);
    let op_i = PredefOp::ALL.iter().position(|&o| o == op).unwrap() as u8;
    let elem_i = Elem::ALL.iter().position(|&e| e == elem).unwrap() as u8;
    v.extend_from_slice(&[kind as u8, op_i, elem_i, if exclusive { FLAG_EXCLUSIVE } else { 0 }]);
    v.extend_from_slice(&(runs.len() as u32).to_le_bytes());
    v.extend_from_slice(&(plen as u64).to_le_bytes());
    for &(o, n) in runs {
        v.extend_from_slice(&o.to_le_bytes());
        v.extend_from_slice(&(n as u64).to_le_bytes());
    }
    for p in payload {
        v.extend_from_slice(p);
    }
    v
}

/// Decodes a request, checking every field (a malformed one is a named error).
pub fn decode(b: &[u8]) -> Result<Request<'_>, String> {
    if b.len() < HEAD {
        return Err(format!("one-sided request of {} bytes is shorter than its head", b.len()));
    }
    let kind = match b[0] {
        1 => Kind::Put,
        2 => Kind::Get,
        3 => Kind::Acc,
        4 => Kind::GetAcc,
        5 => Kind::Cas,
        7 => Kind::Unlock,
        k => return Err(format!("unknown one-sided request kind {k}")),
    };
    let op = *PredefOp::ALL.get(b[1] as usize).ok_or("unknown reduction op in a one-sided request")?;
    let elem = *Elem::ALL.get(b[2] as usize).ok_or("unknown element type in a one-sided request")?;
    let nruns = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
    let plen = u64::from_le_bytes(b[8..16].try_into().unwrap()) as usize;
    let runs_end = nruns.checked_mul(16).and_then(|n| n.checked_add(HEAD)).ok_or("run count overflows")?;
    if runs_end.checked_add(plen) != Some(b.len()) {
        return Err(format!("one-sided request of {} bytes does not hold {nruns} runs and {plen} payload bytes", b.len()));
    }
    let runs = b[HEAD..runs_end]
        .chunks_exact(16)
        .map(|c| (u64::from_le_bytes(c[0..8].try_into().unwrap()), u64::from_le_bytes(c[8..16].try_into().unwrap()) as usize))
        .collect();
    Ok(Request { kind, op, elem, exclusive: b[3] & FLAG_EXCLUSIVE != 0, runs, payload: &b[runs_end..] })
}

/// Makes request `msg` take the origin's lock on the target before it applies.
pub fn add_lock(msg: &mut [u8], exclusive: bool) {
    msg[3] |= FLAG_LOCK | if exclusive { FLAG_EXCLUSIVE } else { 0 };
}

/// The lock request `msg` carries: `Some(exclusive)`.
fn lock_of(msg: &[u8]) -> Option<bool> {
    let flags = *msg.get(3)?;
    (flags & FLAG_LOCK != 0).then_some(flags & FLAG_EXCLUSIVE != 0)
}

/// A reply this process (as origin) awaits from a target: the receive posted for it and,
/// for a request-based operation (`MPI_Rget`, ...), the user's request it completes.
pub struct PendingReply {
    pub rid: ReqId,
    pub user: Option<ReqId>,
    /// The reply grants a lock (`Target::awaiting_grant`).
    pub grant: bool,
}

/// A request received (or being received) by this process as target.
pub struct Incoming {
    pub rid: ReqId,
    pub buf: Vec<u8>,
    /// Origin's rank in the window.
    pub src: usize,
}

/// Starts a send of `buf` to window rank `dest`; the window keeps the buffer until the send
/// completes.
pub fn send(rt: &mut Runtime, w: &mut Win, dest: usize, tag: i32, buf: Vec<u8>) {
    let op = Op::Send {
        buf: RawBuf { ptr: buf.as_ptr() as *mut u8, len: buf.len() },
        dest_world: w.world_ranks[dest],
        ctx: w.ctx,
        src_rank: w.rank as i32,
        tag,
        mode: SendMode::Standard,
    };
    let rid = rt.engine.create(op, false);
    if let Err(e) = rt.engine.start(rid) {
        fatal(&format!("one-sided message to rank {dest} failed to start: {e}"));
    }
    if rt.engine.reqs.get(rid).is_some_and(|r| r.is_complete()) {
        rt.engine.reqs.remove(rid);
    } else {
        w.sends.push((rid, buf));
    }
}

/// Posts the receive of the next reply from window rank `src` into `buf` (with `layout` for
/// a non-contiguous buffer).
pub fn post_reply(rt: &mut Runtime, w: &Win, src: usize, buf: RawBuf, layout: Option<Layout>) -> ReqId {
    let rid = rt.engine.create(Op::Recv { buf, ctx: w.ctx, src: src as i32, tag: TAG_REPLY }, false);
    if let Some(l) = layout {
        rt.engine.reqs.get_mut(rid).unwrap().extra().layout = Some(l);
    }
    if let Err(e) = rt.engine.start(rid) {
        fatal(&format!("one-sided reply receive from rank {src} failed to start: {e}"));
    }
    rid
}

/// Releases finished sends and completed replies at the head of each target's queue.
/// Returns how many things completed.
pub fn reap(rt: &mut Runtime, w: &mut Win) -> usize {
    let mut n = 0;
    w.sends.retain(|(rid, _)| {
        let done = rt.engine.reqs.get(*rid).is_none_or(|r| r.is_complete());
        if done {
            rt.engine.reqs.remove(*rid);
            n += 1;
        }
        !done
    });
    for t in &mut w.targets {
        while let Some(p) = t.pending.front() {
            if !rt.engine.reqs.get(p.rid).is_none_or(|r| r.is_complete()) {
                break;
            }
            let p = t.pending.pop_front().unwrap();
            if p.grant {
                t.awaiting_grant = false;
            }
            let error = rt.engine.reqs.remove(p.rid).and_then(|r| r.status.error);
            if let Some(u) = p.user {
                rt.engine.close_coll_request(u, error);
            }
            n += 1;
        }
    }
    n
}

/// The progress engine's service of every window some rank reaches by active messages:
/// takes arrived requests, applies them in arrival order, grants queued locks.
pub fn serve_all(rt: &mut Runtime) -> usize {
    let mut n = 0;
    for idx in 0..rt.wins.slots_len() {
        // Without active messages only post/complete notices can be outstanding.
        match rt.wins.get(idx) {
            Some(w) if w.serve || !w.sends.is_empty() => {}
            _ => continue,
        }
        let Some(mut w) = rt.wins.take(idx) else { continue };
        if w.serve {
            n += serve(rt, &mut w);
        }
        n += reap(rt, &mut w);
        rt.wins.put_back(idx, w);
    }
    n
}

fn serve(rt: &mut Runtime, w: &mut Win) -> usize {
    let mut n = 0;
    while let Some(mid) = rt.engine.improbe(w.ctx, crate::matching::ANY_SOURCE, TAG_REQUEST) {
        let st = rt.engine.reqs.get(mid).unwrap().status;
        let mut buf = vec![0u8; st.bytes];
        let raw = RawBuf { ptr: buf.as_mut_ptr(), len: buf.len() };
        if let Err(e) = rt.engine.mrecv(mid, raw, None) {
            fatal(&format!("receiving a one-sided request: {e}"));
        }
        w.incoming.push_back(Incoming { rid: mid, buf, src: st.source as usize });
        n += 1;
    }
    while let Some(inc) = w.incoming.front() {
        if !rt.engine.reqs.get(inc.rid).is_none_or(|r| r.is_complete()) {
            break;
        }
        let inc = w.incoming.pop_front().unwrap();
        rt.engine.reqs.remove(inc.rid);
        apply_request(rt, w, inc.src, inc.buf);
        n += 1;
    }
    n += grant_locks(rt, w);
    n
}

/// Grants every queued lock request the lock allows now, in arrival order. A shared
/// request is granted past an exclusive one that waits (as MPICH does, and as direct shared
/// lockers take the word): with `MPI_Win_lock_all`'s shared locks held while it waits for
/// others, a writer-first queue closes deadlock cycles (lock_all holder -> its request
/// behind a waiting exclusive one -> that one waiting for another lock_all holder -> ...).
fn grant_locks(rt: &mut Runtime, w: &mut Win) -> usize {
    let mut n = 0;
    let mut i = 0;
    while let Some(&(src, exclusive)) = w.lock_queue.get(i) {
        // SAFETY: my_words points into the node segment, mapped while the window lives.
        let words = unsafe { &*w.my_words };
        if !words.try_grant(exclusive) {
            i += 1;
            continue;
        }
        words.queued.fetch_sub(1, std::sync::atomic::Ordering::Release);
        w.lock_queue.remove(i);
        n += 1 + replay_parked(rt, w, src);
        i = 0; // the replay may have queued, granted or released locks: look again
    }
    n
}

/// Applies, in arrival order, the requests of `src` held back while its lock waited. One of
/// them may be a new lock request that waits again: `apply_request` then holds back the
/// rest once more.
fn replay_parked(rt: &mut Runtime, w: &mut Win, src: usize) -> usize {
    if w.parked.is_empty() {
        return 0;
    }
    let (mine, others): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut w.parked).into_iter().partition(|(s, _)| *s == src);
    w.parked = others;
    let n = mine.len();
    for (_, b) in mine {
        apply_request(rt, w, src, b);
    }
    n
}

/// Applies one request from window rank `src` to this process's window memory and replies;
/// holds it back (`Win::parked`) while a lock request of `src` waits.
fn apply_request(rt: &mut Runtime, w: &mut Win, src: usize, b: Vec<u8>) {
    if w.lock_queue.iter().any(|&(s, _)| s == src) || w.parked.iter().any(|(s, _)| *s == src) {
        w.parked.push_back((src, b));
        return;
    }
    if let Some(exclusive) = lock_of(&b) {
        // Queue the lock and hold the operation back behind it: granting replays it.
        let mut b = b;
        b[3] &= !(FLAG_LOCK | FLAG_EXCLUSIVE);
        w.lock_queue.push_back((src, exclusive));
        // SAFETY: my_words points into the node segment, mapped while the window lives.
        unsafe { &*w.my_words }.queued.fetch_add(1, std::sync::atomic::Ordering::Release);
        w.parked.push_back((src, b));
        grant_locks(rt, w);
        return;
    }
    let req = decode(&b).unwrap_or_else(|e| fatal(&format!("from rank {src} of a window: {e}")));
    if let Err(e) = check_runs(w, &req.runs) {
        fatal(&format!("one-sided operation from rank {src} of a window: {}", e.msg));
    }
    let access = Access::Mapped { base: if w.flavor == Flavor::Dynamic { 0 } else { w.base as u64 } };
    // SAFETY: my_words points into the node segment, mapped while the window lives.
    let words = unsafe { &*w.my_words };
    let total = access::total(&req.runs);
    let payload = [(req.payload.as_ptr() as u64, req.payload.len())];
    let mut reply = Vec::new();
    // SAFETY (all arms): the runs were checked against this window's memory above.
    let r = match req.kind {
        Kind::Put => unsafe { access::write(access, &req.runs, &payload) },
        Kind::Get => {
            reply = vec![0u8; total];
            unsafe { access::read(access, &req.runs, &[(reply.as_mut_ptr() as u64, total)]) }
        }
        Kind::Acc | Kind::GetAcc => {
            let want = req.kind == Kind::GetAcc;
            if want {
                reply = vec![0u8; total];
            }
            unsafe { apply::accumulate(access, words, &req.runs, req.payload, req.op, req.elem, want.then_some(&mut reply[..])) }
        }
        Kind::Cas => {
            let half = req.payload.len() / 2;
            reply = vec![0u8; half];
            unsafe { apply::compare_and_swap(access, words, &req.runs, &req.payload[half..], &req.payload[..half], &mut reply) }
        }
        Kind::Unlock => {
            words.unlock(req.exclusive);
            Ok(())
        }
    };
    if let Err(e) = r {
        fatal(&format!("one-sided operation from rank {src} of a window: {}", e.msg));
    }
    send(rt, w, src, TAG_REPLY, reply);
    if req.kind == Kind::Unlock {
        grant_locks(rt, w);
    }
}

/// Whether attached regions cover `[o, o + n)`: one region, or several that touch (MPICH's
/// win_dynamic_rma_flush_get reaches across two adjacent arrays attached one by one).
fn attached_cover(attached: &[(u64, usize)], o: u64, n: usize) -> bool {
    let Some(end) = o.checked_add(n as u64) else { return false };
    let mut at = o;
    while at < end {
        match attached.iter().find(|&&(a, len)| a <= at && at < a + len as u64) {
            Some(&(a, len)) => at = a + len as u64,
            None => return false,
        }
    }
    true
}

/// Checks target runs against this process's window: inside `[0, size)`, or inside
/// attached memory for a dynamic window.
pub fn check_runs(w: &Win, runs: &[(u64, usize)]) -> MpiResult<()> {
    for &(o, n) in runs {
        let ok = if w.flavor == Flavor::Dynamic {
            attached_cover(&w.attached, o, n)
        } else {
            o.checked_add(n as u64).is_some_and(|e| e <= w.size as u64)
        };
        if !ok {
            return Err(MpiError::new(
                ErrorClass::RmaRange,
                if w.flavor == Flavor::Dynamic {
                    format!("target bytes [{o:#x}, +{n}) are not inside a region attached to the dynamic window")
                } else {
                    format!("target bytes [{o}, {}) are outside the target's window of {} bytes", o + n as u64, w.size)
                },
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::attached_cover;

    #[test]
    fn attached_regions_cover_across_touching_ones_only() {
        let regions = [(0x1000, 0x100), (0x1100, 0x100), (0x1300, 0x10)];
        assert!(attached_cover(&regions, 0x1000, 0x100));
        assert!(attached_cover(&regions, 0x10f0, 0x20), "two touching regions");
        assert!(!attached_cover(&regions, 0x11f0, 0x20), "a gap at 0x1200");
        assert!(!attached_cover(&regions, 0x0ff0, 0x20), "before the first region");
        assert!(attached_cover(&regions, 0x5000, 0), "nothing to touch");
        assert!(!attached_cover(&regions, u64::MAX, 2), "wraps around");
    }
}
