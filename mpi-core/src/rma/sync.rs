//! Synchronisation: completion of outstanding operations (flush), passive-target locks,
//! the fence's local half (the C layer adds the barrier), and post-start-complete-wait.
//! Every misuse of an epoch is an `MPI_ERR_RMA_SYNC` error, never a hang.

use super::am::{self, Kind, TAG_COMPLETE, TAG_POST};
use super::window::{Access, Held, Win};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::op::{Elem, PredefOp};
use crate::request::{Op, RawBuf, ReqId};
use crate::runtime::{self, Runtime};

fn sync_err(m: String) -> MpiError {
    MpiError::new(ErrorClass::RmaSync, m)
}

fn win_err() -> MpiError {
    MpiError::new(ErrorClass::Win, "invalid window")
}

/// Runs `f` on window `idx` with the rest of the runtime alongside.
pub fn with_win<R>(rt: &mut Runtime, idx: usize, f: impl FnOnce(&mut Runtime, &mut Win) -> R) -> MpiResult<R> {
    let mut w = rt.wins.take(idx).ok_or_else(win_err)?;
    let r = f(rt, &mut w);
    rt.wins.put_back(idx, w);
    Ok(r)
}

/// Polls progress until `done` holds, never sleeping: used where the awaited event is a
/// store by another local process (a lock word) that rings no doorbell.
fn spin_until(mut done: impl FnMut(&mut Runtime) -> bool) {
    let mut polls = 0u32;
    loop {
        if runtime::with(|rt| {
            rt.progress();
            done(rt)
        }) {
            return;
        }
        polls += 1;
        if polls > 32 {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// One progress pass when some rank reaches this window by active messages: every RMA
/// call polls, so a target that only makes RMA calls to itself or to directly reached
/// ranks (spinning on a lock word, say) still serves the others (MPI 4.1 §12.7 progress).
pub fn poll_if_served(rt: &mut Runtime, idx: usize) {
    if rt.wins.get(idx).is_some_and(|w| w.serve) {
        rt.progress();
    }
}

/// Whether every reply awaited from `target` (every target: None) has arrived.
fn replies_done(rt: &mut Runtime, idx: usize, target: Option<usize>) -> bool {
    with_win(rt, idx, |rt, w| {
        am::reap(rt, w);
        match target {
            Some(t) => w.targets[t].pending.is_empty(),
            None => w.targets.iter().all(|t| t.pending.is_empty()),
        }
    })
    .unwrap_or(true)
}

/// Waits for every outstanding operation to `target` (or all) to be complete at the target.
pub fn wait_replies(idx: usize, target: Option<usize>) {
    if runtime::with(|rt| {
        poll_if_served(rt, idx);
        replies_done(rt, idx, target)
    }) {
        return;
    }
    runtime::wait_until(|rt| replies_done(rt, idx, target));
}

/// `MPI_Win_flush` and friends: checks a passive-target epoch covers `target` (all
/// targets: None), then completes the operations.
pub fn flush(idx: usize, target: Option<usize>, func: &str) -> MpiResult<()> {
    runtime::with(|rt| {
        let w = rt.wins.get(idx).ok_or_else(win_err)?;
        let ok = match target {
            Some(t) => w.lock_all || w.targets[t].held != Held::None,
            None => w.lock_all || w.targets.iter().any(|t| t.held != Held::None),
        };
        if ok {
            Ok(())
        } else {
            Err(sync_err(format!("{func} outside a passive-target epoch (call MPI_Win_lock or MPI_Win_lock_all first)")))
        }
    })?;
    runtime::with(|rt| rt.wins.get_mut(idx).map(Win::synced));
    wait_replies(idx, target);
    Ok(())
}

/// The local half of `MPI_Win_fence` before its barrier: no other epoch may be open, and
/// this process's operations are completed.
pub fn fence_begin(idx: usize) -> MpiResult<()> {
    runtime::with(|rt| {
        let w = rt.wins.get(idx).ok_or_else(win_err)?;
        if w.in_sync_epoch() || w.post_group.is_some() {
            return Err(sync_err("MPI_Win_fence while a lock, PSCW access or exposure epoch is open on the window".into()));
        }
        Ok(())
    })?;
    wait_replies(idx, None);
    Ok(())
}

/// After the fence's barrier: opens the next fence epoch unless `MPI_MODE_NOSUCCEED`.
pub fn fence_end(idx: usize, open: bool) {
    runtime::with(|rt| {
        if let Some(w) = rt.wins.get_mut(idx) {
            w.fence_epoch = open;
            w.fence_used = false;
            w.synced();
        }
    });
}

/// Takes a lock on `target` as seen from origin window `w`: blocking until granted for a
/// target whose lock words are mapped here; for an active-message target only noted, the
/// request rides on the epoch's first operation (`before_operation`).
fn acquire(idx: usize, target: usize, exclusive: bool) -> MpiResult<()> {
    let deferred = runtime::with(|rt| {
        let w = rt.wins.get_mut(idx)?;
        let t = &mut w.targets[target];
        (t.access == Access::Am).then(|| t.lock_unsent = Some(exclusive))
    });
    if deferred.is_some() {
        return Ok(());
    }
    let words = runtime::with(|rt| rt.wins.get(idx).map(|w| w.targets[target].words as usize)).ok_or_else(win_err)?;
    // SAFETY: the words live in the node segment, mapped while the window lives (the
    // window cannot be freed during this call: freeing is collective and we are in it).
    let words = unsafe { &*(words as *const super::words::TargetWords) };
    if !words.try_lock(exclusive) {
        spin_until(|_| words.try_lock(exclusive));
    }
    Ok(())
}

/// Before an operation toward window rank `target` (called outside the runtime lock): if
/// the epoch on it deferred its lock request, which the operation will carry
/// (`ops::issue`; the target holds back this origin's later requests until it grants the
/// lock), waits until no other lock request of this process awaits its
/// grant. One at a time, a process acquires its locks in the order of the epochs' first
/// operations: a second request sent while the first waited could be granted first and
/// close a deadlock cycle with a process that blocks in `MPI_Win_lock` on its own window.
pub fn before_operation(idx: usize, target: usize) {
    let deferred = |rt: &mut Runtime| rt.wins.get(idx).is_some_and(|w| w.targets.get(target).is_some_and(|t| t.lock_unsent.is_some()));
    if runtime::with(deferred) {
        runtime::wait_until(|rt| !grants_awaited(rt));
    }
}

/// Whether this process awaits the grant of some lock request (on any window).
fn grants_awaited(rt: &mut Runtime) -> bool {
    let mut awaited = false;
    for idx in 0..rt.wins.slots_len() {
        if !rt.wins.get(idx).is_some_and(|w| w.targets.iter().any(|t| t.awaiting_grant)) {
            continue;
        }
        let _ = with_win(rt, idx, |rt, w| {
            am::reap(rt, w);
            awaited |= w.targets.iter().any(|t| t.awaiting_grant);
        });
    }
    awaited
}

/// Starts releasing the lock on active-message target `target`: sends the unlock, whose
/// reply follows those of the epoch's operations. Nothing to send for a lock never sent (no
/// operation in the epoch), a `NOCHECK` epoch or a target reached directly.
fn send_unlock(idx: usize, target: usize, held: Held) {
    runtime::with(|rt| {
        let Some(t) = rt.wins.get_mut(idx).map(|w| &mut w.targets[target]) else { return };
        if held == Held::NoCheck || t.access != Access::Am || t.lock_unsent.take().is_some() {
            return;
        }
        let msg = am::encode(Kind::Unlock, PredefOp::NoOp, Elem::Byte, held == Held::Exclusive, &[], &[]);
        super::ops::issue(rt, idx, target, msg, (RawBuf::EMPTY, None), None);
    });
}

/// Releases the lock words of a target reached directly (its operations completed when
/// they were issued).
fn unlock_words(idx: usize, target: usize, held: Held) {
    runtime::with(|rt| {
        if let Some(w) = rt.wins.get(idx) {
            if matches!(held, Held::Shared | Held::Exclusive) && w.targets[target].access != Access::Am {
                // SAFETY: as in `acquire`.
                unsafe { &*w.targets[target].words }.unlock(held == Held::Exclusive);
            }
        }
    });
}

/// Releases a lock on `target` after completing the operations to it.
fn release(idx: usize, target: usize, held: Held) {
    send_unlock(idx, target, held);
    wait_replies(idx, Some(target));
    unlock_words(idx, target, held);
}

/// `MPI_Win_lock`.
pub fn lock(idx: usize, target: usize, exclusive: bool, nocheck: bool) -> MpiResult<()> {
    runtime::with(|rt| {
        let w = rt.wins.get_mut(idx).ok_or_else(win_err)?;
        if w.lock_all {
            return Err(sync_err(format!("MPI_Win_lock of rank {target} inside MPI_Win_lock_all's epoch")));
        }
        if w.targets[target].held != Held::None {
            return Err(sync_err(format!("MPI_Win_lock of rank {target}, which this process has locked already")));
        }
        if w.fence_epoch && w.fence_used {
            return Err(sync_err("MPI_Win_lock inside a fence epoch with operations in it (end it with MPI_Win_fence(MPI_MODE_NOSUCCEED))".into()));
        }
        if w.start_group.is_some() {
            return Err(sync_err("MPI_Win_lock inside a PSCW access epoch (MPI_Win_start)".into()));
        }
        w.fence_epoch = false; // the fence's (empty) epoch ends; the next fence opens one
        Ok(())
    })?;
    if !nocheck {
        acquire(idx, target, exclusive)?;
    }
    let held = if nocheck { Held::NoCheck } else if exclusive { Held::Exclusive } else { Held::Shared };
    runtime::with(|rt| rt.wins.get_mut(idx).map(|w| w.targets[target].held = held));
    Ok(())
}

/// `MPI_Win_unlock`.
pub fn unlock(idx: usize, target: usize) -> MpiResult<()> {
    let held = runtime::with(|rt| rt.wins.get(idx).map(|w| (w.lock_all, w.targets[target].held))).ok_or_else(win_err)?;
    if held.0 || held.1 == Held::None {
        return Err(sync_err(format!("MPI_Win_unlock of rank {target}, which this process has not locked with MPI_Win_lock")));
    }
    release(idx, target, held.1);
    runtime::with(|rt| {
        rt.wins.get_mut(idx).map(|w| {
            w.targets[target].held = Held::None;
            w.synced();
        })
    });
    Ok(())
}

/// `MPI_Win_lock_all`: a shared lock on every target.
pub fn lock_all(idx: usize, nocheck: bool) -> MpiResult<()> {
    let n = runtime::with(|rt| {
        let w = rt.wins.get_mut(idx).ok_or_else(win_err)?;
        if w.lock_all || w.targets.iter().any(|t| t.held != Held::None) {
            return Err(sync_err("MPI_Win_lock_all while this process holds a lock on the window".into()));
        }
        if w.fence_epoch && w.fence_used {
            return Err(sync_err("MPI_Win_lock_all inside a fence epoch with operations in it (end it with MPI_Win_fence(MPI_MODE_NOSUCCEED))".into()));
        }
        if w.start_group.is_some() {
            return Err(sync_err("MPI_Win_lock_all inside a PSCW access epoch (MPI_Win_start)".into()));
        }
        w.fence_epoch = false; // as in `lock`
        Ok(w.targets.len())
    })?;
    for t in 0..n {
        if !nocheck {
            acquire(idx, t, false)?;
        }
        runtime::with(|rt| rt.wins.get_mut(idx).map(|w| w.targets[t].held = if nocheck { Held::NoCheck } else { Held::Shared }));
    }
    runtime::with(|rt| rt.wins.get_mut(idx).map(|w| w.lock_all = true));
    Ok(())
}

/// `MPI_Win_unlock_all`.
pub fn unlock_all(idx: usize) -> MpiResult<()> {
    let n = runtime::with(|rt| rt.wins.get(idx).map(|w| (w.lock_all, w.targets.len()))).ok_or_else(win_err)?;
    if !n.0 {
        return Err(sync_err("MPI_Win_unlock_all without MPI_Win_lock_all".into()));
    }
    // Every unlock goes out before any reply is awaited: one round trip for all targets.
    let held: Vec<Held> = runtime::with(|rt| rt.wins.get(idx).map(|w| w.targets.iter().map(|t| t.held).collect())).ok_or_else(win_err)?;
    for (t, &h) in held.iter().enumerate() {
        send_unlock(idx, t, h);
    }
    wait_replies(idx, None);
    for (t, &h) in held.iter().enumerate() {
        unlock_words(idx, t, h);
        runtime::with(|rt| rt.wins.get_mut(idx).map(|w| w.targets[t].held = Held::None));
    }
    runtime::with(|rt| {
        rt.wins.get_mut(idx).map(|w| {
            w.lock_all = false;
            w.synced();
        })
    });
    Ok(())
}

/// Posts a zero-byte receive of `tag` from window rank `src`.
fn post_notice(rt: &mut Runtime, w: &Win, src: usize, tag: i32) -> ReqId {
    let rid = rt.engine.create(Op::Recv { buf: RawBuf::EMPTY, ctx: w.ctx, src: src as i32, tag }, false);
    rt.engine.start(rid).expect("receive starts");
    rid
}

fn all_done(rt: &Runtime, rids: &[ReqId]) -> bool {
    rids.iter().all(|&r| rt.engine.reqs.get(r).is_none_or(|r| r.is_complete()))
}

fn release_all(rt: &mut Runtime, rids: &[ReqId]) {
    for &r in rids {
        rt.engine.reqs.remove(r);
    }
}

/// `MPI_Win_post`: opens an exposure epoch to `group` (window ranks) and tells them.
pub fn post(idx: usize, group: Vec<usize>, nocheck: bool) -> MpiResult<()> {
    runtime::with(|rt| {
        with_win(rt, idx, |rt, w| {
            if w.post_group.is_some() {
                return Err(sync_err("MPI_Win_post while an exposure epoch (an earlier MPI_Win_post) is open".into()));
            }
            w.post_recvs = group.iter().map(|&o| post_notice(rt, w, o, TAG_COMPLETE)).collect();
            if !nocheck {
                for &o in &group {
                    am::send(rt, w, o, TAG_POST, Vec::new());
                }
            }
            w.post_group = Some(group);
            Ok(())
        })?
    })
}

/// `MPI_Win_start`: opens an access epoch to `group`, waiting for each target's post.
pub fn start(idx: usize, group: Vec<usize>, nocheck: bool) -> MpiResult<()> {
    let rids = runtime::with(|rt| {
        with_win(rt, idx, |rt, w| {
            if w.start_group.is_some() {
                return Err(sync_err("MPI_Win_start while an access epoch (an earlier MPI_Win_start) is open".into()));
            }
            if w.lock_all || w.targets.iter().any(|t| t.held != Held::None) {
                return Err(sync_err("MPI_Win_start while this process holds a lock on the window".into()));
            }
            if w.fence_epoch && w.fence_used {
                return Err(sync_err("MPI_Win_start inside a fence epoch with operations in it (end it with MPI_Win_fence(MPI_MODE_NOSUCCEED))".into()));
            }
            w.fence_epoch = false; // as in `lock`
            let rids: Vec<ReqId> = if nocheck { Vec::new() } else { group.iter().map(|&t| post_notice(rt, w, t, TAG_POST)).collect() };
            w.start_group = Some(group);
            Ok(rids)
        })?
    })?;
    if !runtime::with(|rt| all_done(rt, &rids)) {
        runtime::wait_until(|rt| all_done(rt, &rids));
    }
    runtime::with(|rt| release_all(rt, &rids));
    Ok(())
}

/// `MPI_Win_complete`: completes the operations of the access epoch at every target and
/// tells them.
pub fn complete(idx: usize) -> MpiResult<()> {
    let group = runtime::with(|rt| rt.wins.get(idx).map(|w| w.start_group.clone())).ok_or_else(win_err)?;
    let Some(group) = group else {
        return Err(sync_err("MPI_Win_complete without MPI_Win_start".into()));
    };
    for &t in &group {
        wait_replies(idx, Some(t));
    }
    runtime::with(|rt| {
        with_win(rt, idx, |rt, w| {
            for &t in &group {
                am::send(rt, w, t, TAG_COMPLETE, Vec::new());
            }
            w.start_group = None;
            w.synced();
        })
    })
}

/// `MPI_Win_test` (`blocking` false) and `MPI_Win_wait`: whether every origin of the
/// exposure epoch has completed; closes the epoch when so.
pub fn wait(idx: usize, blocking: bool) -> MpiResult<bool> {
    let open = runtime::with(|rt| rt.wins.get(idx).map(|w| w.post_group.is_some())).ok_or_else(win_err)?;
    if !open {
        return Err(sync_err(format!("{} without MPI_Win_post", if blocking { "MPI_Win_wait" } else { "MPI_Win_test" })));
    }
    let done = |rt: &mut Runtime| rt.wins.get(idx).is_none_or(|w| all_done(rt, &w.post_recvs));
    let finished = if blocking {
        if !runtime::with(|rt| done(rt)) {
            runtime::wait_until(|rt| done(rt));
        }
        true
    } else {
        runtime::with(|rt| {
            rt.progress();
            done(rt)
        })
    };
    if !blocking {
        runtime::polled(finished);
    }
    if finished {
        runtime::with(|rt| {
            with_win(rt, idx, |rt, w| {
                release_all(rt, &std::mem::take(&mut w.post_recvs));
                w.post_group = None;
            })
        })?;
    }
    Ok(finished)
}
