//! Fast paths for the common calls on directly mapped targets (`MPI_Win_allocate` and
//! shared windows on one node, and a process's own memory): one contiguous run of a
//! predefined type, no allocation, no run lists, one runtime entry. Anything else — a
//! derived type, CMA or active-message targets, an error to report — returns `None` and
//! takes the general path (`ops`), which also produces every error message. The one-sided
//! latency benchmarks (put + flush of 8 bytes) are a few loads and a copy here.

use super::window::{Access, Held, Target, Win};
use crate::op::{self, Elem, PredefOp};
use crate::runtime::Runtime;

/// The target's window memory for `len` bytes at displacement `disp`, if the target is
/// mapped here, the window serves no active messages (so no progress is owed), an epoch
/// covers it and the bytes lie inside its window.
#[inline(always)]
fn mapped(w: &mut Win, rank: i32, disp: isize, len: usize) -> Option<(*mut u8, *const super::words::TargetWords)> {
    if w.serve || rank < 0 {
        return None;
    }
    let fence_only;
    let t: &Target = w.targets.get(rank as usize)?;
    let Access::Mapped { base } = t.access else { return None };
    if w.lock_all || t.held != Held::None {
        fence_only = false;
    } else if w.fence_epoch || w.start_group.as_ref().is_some_and(|g| g.contains(&(rank as usize))) {
        fence_only = w.start_group.is_none();
    } else {
        return None;
    }
    let off = disp.checked_mul(t.disp_unit as isize)?;
    if off < 0 || (off as usize).checked_add(len)? > t.size {
        return None;
    }
    let words = t.words;
    if fence_only {
        w.fence_used = true;
    }
    Some(((base as usize).wrapping_add(off as usize) as *mut u8, words))
}

/// `MPI_Put` (`get` false) or `MPI_Get` of `len` contiguous bytes at `buf`. True when done.
///
/// Once the bytes moved since the window's last synchronisation outgrow the cache
/// (`stream_after`), the next large copies use non-temporal stores
/// (`copy::copy_streaming`): such an epoch's data cannot stay cached, and streaming skips
/// reading every destination line before writing it (put/get bandwidth of 64 × 1 MiB per
/// flush: docs/rma.md). The first copy of an epoch never streams, so one large put per
/// epoch, whose bytes may well be read from cache next, copies plainly.
///
/// # Safety
/// `buf` must be valid for `len` bytes (reads for a put, writes for a get).
#[inline(always)]
pub unsafe fn copy(rt: &mut Runtime, idx: usize, rank: i32, disp: isize, buf: *mut u8, len: usize, get: bool) -> bool {
    let Some(w) = rt.wins.get_mut(idx) else { return false };
    let Some((target, _)) = mapped(w, rank, disp, len) else { return false };
    let (src, dst) = if get { (target as *const u8, buf) } else { (buf as *const u8, target) };
    let apart = || (src as usize).wrapping_add(len) <= dst as usize || (dst as usize).wrapping_add(len) <= src as usize;
    let stream = len >= STREAM_MIN && w.moved > stream_after() && apart();
    w.moved = w.moved.saturating_add(len);
    // SAFETY: `target` lies inside the target's mapped window (checked above); `buf` is
    // the caller's buffer of `len` bytes; `ptr::copy` allows them to overlap (a process's
    // own window: `move_bytes`), the streaming copy is used only when they do not.
    unsafe {
        // One word by a typed load and store (read whole before written, so overlap is
        // fine): a `memmove` call costs more than the rest of an 8-byte put.
        match len {
            8 => (dst as *mut u64).write_unaligned((src as *const u64).read_unaligned()),
            4 => (dst as *mut u32).write_unaligned((src as *const u32).read_unaligned()),
            _ if stream => crate::copy::copy_streaming(src, dst, len),
            _ => crate::copy::move_bytes(src, dst, len),
        }
    }
    true
}

/// Copies shorter than this never stream: their cost is the call, not memory traffic.
const STREAM_MIN: usize = 64 * 1024;

/// Bytes an epoch moves before its copies stream: `OXMPI_RMA_STREAM_AFTER`, by default
/// 32 MiB. The volume at which plain copies fall to memory speed is the last-level
/// cache's share one core gets, which the CPU does not report (a VM's host cache, other
/// tenants): on the benchmark machine plain copies won up to 32 MiB of volume (12.8 GB/s
/// against 11.0) and streaming from 64 MiB (8.8 against 6.5); with the L2 size (2 MiB)
/// as the threshold, puts of 64–256 KiB lost a quarter of their bandwidth.
fn stream_after() -> usize {
    static AFTER: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *AFTER.get_or_init(|| crate::config::config().get("RMA_STREAM_AFTER"))
}

/// `MPI_Accumulate` (no `result`), `MPI_Get_accumulate` and `MPI_Fetch_and_op` of `count`
/// contiguous elements of a basic (unpadded) type, through the reduction kernels (the C
/// layer sends the common cases to `word` and `words` first; this also serves a buffer
/// that overlaps the target, in a process's own window). True when done.
///
/// # Safety
/// `origin` (unless the op is `MPI_NO_OP`) and `result` (unless null) must be valid for
/// `count` elements.
#[inline]
#[allow(clippy::too_many_arguments)]
pub unsafe fn accumulate(rt: &mut Runtime, idx: usize, rank: i32, disp: isize, origin: *const u8, result: *mut u8, count: usize, op: PredefOp, elem: Elem) -> bool {
    if elem.size() != elem.packed_size() || !op.applies_to(elem.group()) {
        return false;
    }
    let Some(len) = count.checked_mul(elem.size()) else { return false };
    let Some(w) = rt.wins.get_mut(idx) else { return false };
    let Some((target, words)) = mapped(w, rank, disp, len) else { return false };
    // SAFETY: the words live in the node segment with the window; `target` holds `len`
    // bytes of the window; `origin` and `result` are the caller's `len`-byte buffers.
    unsafe {
        (*words).with_acc(move || {
            if !result.is_null() {
                crate::copy::move_bytes(target, result, len);
            }
            // The op applies to the element group (checked above): cannot fail.
            let _ = op::reduce(op, elem, origin, target, count);
        })
    };
    true
}

/// A basic type whose accumulates run inline (`word`, `words`): integers (C, Fortran and
/// the address kinds, so `MPI_CHAR` of OSU's `osu_acc_latency` too) by size — a wrapping
/// sum is the same bits signed or unsigned — and the two IEEE floating types; all in the
/// groups `MPI_SUM` applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Word {
    B8,
    B16,
    B32,
    B64,
    F32,
    F64,
}

impl Word {
    /// One load from a table made at compile time (matching on the group and then the
    /// representation took two jump tables on the fast path).
    #[inline(always)]
    pub fn of(elem: Elem) -> Option<Word> {
        WORD_OF[elem as usize]
    }

    const fn classify(elem: Elem) -> Option<Word> {
        use crate::op::{Group, Repr};
        if !matches!(elem.group(), Group::CInteger | Group::FortranInteger | Group::FloatingPoint | Group::MultiLanguage) {
            return None;
        }
        match elem.repr() {
            Repr::I8 | Repr::U8 => Some(Word::B8),
            Repr::I16 | Repr::U16 => Some(Word::B16),
            Repr::I32 | Repr::U32 => Some(Word::B32),
            Repr::I64 | Repr::U64 => Some(Word::B64),
            Repr::F32 => Some(Word::F32),
            Repr::F64 => Some(Word::F64),
            _ => None,
        }
    }

    #[inline(always)]
    pub fn size(self) -> usize {
        match self {
            Word::B8 => 1,
            Word::B16 => 2,
            Word::B32 | Word::F32 => 4,
            Word::B64 | Word::F64 => 8,
        }
    }
}

/// `Word::of` for every `Elem`, by discriminant.
const WORD_OF: [Option<Word>; Elem::ALL.len()] = {
    let mut table = [None; Elem::ALL.len()];
    let mut i = 0;
    while i < table.len() {
        assert!(Elem::ALL[i] as usize == i);
        table[i] = Word::classify(Elem::ALL[i]);
        i += 1;
    }
    table
};

/// The ops a `Word` accumulate runs inline: counters, swaps and atomic reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordOp {
    Sum,
    Replace,
    NoOp,
}

impl WordOp {
    #[inline(always)]
    pub fn of(op: PredefOp) -> Option<WordOp> {
        match op {
            PredefOp::Sum => Some(WordOp::Sum),
            PredefOp::Replace => Some(WordOp::Replace),
            PredefOp::NoOp => Some(WordOp::NoOp),
            _ => None,
        }
    }
}

/// Expands `$m!(type, sum)` for the machine type and wrapping sum of `$word` (one
/// dispatch table for `apply_word` and `apply_run`).
macro_rules! by_word {
    ($word:expr, $m:ident) => {
        match $word {
            Word::B8 => $m!(u8, u8::wrapping_add),
            Word::B16 => $m!(u16, u16::wrapping_add),
            Word::B32 => $m!(u32, u32::wrapping_add),
            Word::B64 => $m!(u64, u64::wrapping_add),
            Word::F32 => $m!(f32, |a: f32, b: f32| a + b),
            Word::F64 => $m!(f64, |a: f64, b: f64| a + b),
        }
    };
}

/// `MPI_Fetch_and_op`, or a one-element `MPI_Accumulate` / `MPI_Get_accumulate` (`result`
/// null for the first), of a `Word` type: the C layer decides this from the handles and
/// comes here before anything else, so a counter increment is a window lookup, the
/// accumulate lock and a typed add. True when done; false (nothing touched) sends the call
/// down the other paths. (More elements take `words`: a count here made this path 15
/// instructions longer, constant 1 or not.)
///
/// # Safety
/// `origin` (unless the op is `MPI_NO_OP`) and `result` (unless null) must be valid for one
/// element of `word`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn word(rt: &mut Runtime, idx: usize, rank: i32, disp: isize, origin: *const u8, result: *mut u8, word: Word, op: WordOp) -> bool {
    let Some(w) = rt.wins.get_mut(idx) else { return false };
    let Some((target, words)) = mapped(w, rank, disp, word.size()) else { return false };
    // SAFETY: as in `accumulate`.
    unsafe {
        (*words).lock_acc();
        apply_word(word, op, origin, result, target);
        (*words).unlock_acc();
    }
    true
}

/// `word` for `count` consecutive elements whose buffers do not overlap the target's run
/// (else false, nothing touched: the general accumulate keeps the whole-buffer semantics
/// then). One typed loop per type and op instead of `accumulate`'s reduction kernels, whose
/// dispatch (op check, representation, alignment and overlap) cost more than the whole
/// operation at small counts: one process accumulating `MPI_DOUBLE`s + flush on its own
/// window, ns per iteration through the kernels / here: 2 elements 55 / 32, 16: 66 / 36,
/// 64: 68 / 48, 256: 115 / 97, 2048: 633 / 587.
///
/// # Safety
/// `origin` (unless the op is `MPI_NO_OP`) and `result` (unless null) must be valid for
/// `count` elements of `word`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn words(rt: &mut Runtime, idx: usize, rank: i32, disp: isize, origin: *const u8, result: *mut u8, count: usize, word: Word, op: WordOp) -> bool {
    let Some(len) = count.checked_mul(word.size()) else { return false };
    let Some(w) = rt.wins.get_mut(idx) else { return false };
    let Some((target, words)) = mapped(w, rank, disp, len) else { return false };
    let apart = |p: usize| p == 0 || p.wrapping_add(len) <= target as usize || (target as usize).wrapping_add(len) <= p;
    if !apart(origin as usize) || !apart(result as usize) {
        return false;
    }
    // SAFETY: as in `accumulate`.
    unsafe {
        (*words).lock_acc();
        apply_run(word, op, origin, result, target, count);
        (*words).unlock_acc();
    }
    true
}

/// `apply_word` on `count` consecutive elements: one loop per type and op, which the
/// compiler vectorises.
///
/// # Safety
/// As `apply_word`, for `count` elements; no buffer overlaps the target's run.
#[inline(always)]
unsafe fn apply_run(word: Word, op: WordOp, origin: *const u8, result: *mut u8, target: *mut u8, count: usize) {
    macro_rules! run {
        ($t:ty, $sum:expr) => {{
            let (o, t, r) = (origin as *const $t, target as *mut $t, result as *mut $t);
            // SAFETY: caller's contract: `count` elements in each buffer; `origin` is not
            // read for MPI_NO_OP.
            unsafe {
                if !r.is_null() {
                    for i in 0..count {
                        r.add(i).write_unaligned(t.add(i).read_unaligned());
                    }
                }
                match op {
                    WordOp::Sum => sum_run(o, t, count, $sum),
                    WordOp::Replace => {
                        for i in 0..count {
                            t.add(i).write_unaligned(o.add(i).read_unaligned());
                        }
                    }
                    WordOp::NoOp => {}
                }
            }
        }};
    }
    by_word!(word, run)
}

/// Elements from which `sum_run` takes its AVX2 loop (below, the check costs more).
#[cfg(target_arch = "x86_64")]
const SUM_WIDE_MIN: usize = 128;

/// `t[i] = f(o[i], t[i])` for `count` elements at any alignment, vectorised (origin first,
/// as the reduction kernels, so a NaN's payload comes out the same either way); long runs
/// take a copy compiled for AVX2 where the CPU has it, as the reduction kernels do
/// (`op::kernels::zip_apply`).
///
/// # Safety
/// `o` readable and `t` readable and writable for `count` elements; they do not overlap.
#[inline(always)]
unsafe fn sum_run<T: Copy>(o: *const T, t: *mut T, count: usize, f: impl Fn(T, T) -> T) {
    #[cfg(target_arch = "x86_64")]
    if count >= SUM_WIDE_MIN && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above); the caller's buffers.
        return unsafe { sum_run_avx2(o, t, count, f) };
    }
    for i in 0..count {
        // SAFETY: the caller's contract.
        unsafe {
            let p = t.add(i);
            p.write_unaligned(f(o.add(i).read_unaligned(), p.read_unaligned()));
        }
    }
}

/// `sum_run`'s loop compiled for AVX2.
///
/// # Safety
/// As `sum_run`; the CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn sum_run_avx2<T: Copy>(o: *const T, t: *mut T, count: usize, f: impl Fn(T, T) -> T) {
    for i in 0..count {
        // SAFETY: the caller's contract.
        unsafe {
            let p = t.add(i);
            p.write_unaligned(f(o.add(i).read_unaligned(), p.read_unaligned()));
        }
    }
}

/// One element: the old value into `result` (unless null) as a typed load, not a `memcpy`
/// call, then the op.
///
/// # Safety
/// `origin` (unless the op is `MPI_NO_OP`), `target` and `result` (unless null) hold one
/// element of `word` (any alignment).
#[inline(always)]
unsafe fn apply_word(word: Word, op: WordOp, origin: *const u8, result: *mut u8, target: *mut u8) {
    macro_rules! apply {
        ($t:ty, $sum:expr) => {{
            let (o, t, r) = (origin as *const $t, target as *mut $t, result as *mut $t);
            // SAFETY: caller's contract.
            unsafe {
                let old = t.read_unaligned();
                if !r.is_null() {
                    r.write_unaligned(old);
                }
                match op {
                    WordOp::Sum => t.write_unaligned($sum(o.read_unaligned(), old)),
                    WordOp::Replace => t.write_unaligned(o.read_unaligned()),
                    WordOp::NoOp => {}
                }
            }
        }};
    }
    by_word!(word, apply)
}

/// `MPI_Compare_and_swap` of one element of `size` bytes. True when done.
///
/// # Safety
/// `origin`, `compare` and `result` must be valid for `size` bytes.
#[inline]
#[allow(clippy::too_many_arguments)]
pub unsafe fn compare_and_swap(rt: &mut Runtime, idx: usize, rank: i32, disp: isize, origin: *const u8, compare: *const u8, result: *mut u8, size: usize) -> bool {
    let Some(w) = rt.wins.get_mut(idx) else { return false };
    let Some((target, words)) = mapped(w, rank, disp, size) else { return false };
    // SAFETY: as in `accumulate`.
    unsafe {
        (*words).with_acc(move || {
            // Typed loads for the usual sizes: `memcpy` and `memcmp` calls cost more than
            // the rest of the operation.
            macro_rules! swap {
                ($t:ty) => {{
                    let (old, expected) = ((target as *const $t).read_unaligned(), (compare as *const $t).read_unaligned());
                    (result as *mut $t).write_unaligned(old);
                    if old == expected {
                        (target as *mut $t).write_unaligned((origin as *const $t).read_unaligned());
                    }
                }};
            }
            match size {
                8 => swap!(u64),
                4 => swap!(u32),
                _ => {
                    // Compared before `result` is written, as the typed sizes do.
                    let equal = std::slice::from_raw_parts(target as *const u8, size) == std::slice::from_raw_parts(compare, size);
                    crate::copy::move_bytes(target, result, size);
                    if equal {
                        crate::copy::move_bytes(origin, target, size);
                    }
                }
            }
        })
    };
    true
}

/// `MPI_Win_flush` (and `_local`, `_all`: `rank` None) when nothing is outstanding: the
/// window serves no active messages and no reply is awaited. Some(true) when done,
/// Some(false) outside a passive epoch (the general path reports it), None otherwise.
#[inline(always)]
pub fn flush(rt: &mut Runtime, idx: usize, rank: Option<i32>) -> Option<bool> {
    let w = rt.wins.get_mut(idx)?;
    if w.serve {
        return None;
    }
    w.synced();
    match rank {
        Some(r) => {
            let t = w.targets.get(usize::try_from(r).ok()?)?;
            if !t.pending.is_empty() {
                return None;
            }
            Some(w.lock_all || t.held != Held::None)
        }
        None => {
            if w.targets.iter().any(|t| !t.pending.is_empty()) {
                return None;
            }
            Some(w.lock_all || w.targets.iter().any(|t| t.held != Held::None))
        }
    }
}

/// How `MPI_Win_fence` synchronises after its local half (`fence`).
pub enum FenceSync {
    /// The window's node barrier and round number: wait with `fence_wait`.
    Node(*const super::words::NodeBarrier, u32),
    /// A barrier on the window's communicator (table index), run by the C layer.
    Comm(usize),
}

/// `MPI_Win_fence`'s local half when the window has no active messages in flight: checks
/// no other epoch is open and sets the next fence epoch (`open`) now; the caller then
/// synchronises as returned. None: take the general path.
#[inline]
pub fn fence(rt: &mut Runtime, idx: usize, open: bool) -> Option<FenceSync> {
    let w = rt.wins.get_mut(idx)?;
    if w.serve || !w.sends.is_empty() || w.in_sync_epoch() || w.post_group.is_some() {
        return None;
    }
    w.fence_epoch = open;
    w.fence_used = false;
    w.synced();
    Some(fence_arrive(w))
}

/// The fence's synchronisation for window `w`: arrives at its node barrier
/// when every member shares this node, else names the communicator to barrier on. Every
/// fence of a window takes the same kind, whichever path runs it.
pub fn fence_arrive(w: &mut Win) -> FenceSync {
    match w.node_barrier {
        Some(b) => {
            let round = w.barrier_round;
            w.barrier_round = round.wrapping_add(1);
            // SAFETY: the barrier lives in the node segment, mapped while the window lives.
            unsafe { &*b }.arrive(w.targets.len() as u32, round);
            FenceSync::Node(b, round)
        }
        None => FenceSync::Comm(w.comm),
    }
}

/// Waits for the node barrier's `round` (after `fence` arrived at it), outside the runtime
/// lock: spinning on one line, with a progress pass now and then (and a yield each time
/// when ranks outnumber CPUs), never sleeping — the last arrival rings no doorbell.
///
/// # Safety
/// `b` must be the barrier `fence`/`fence_arrive` returned, of a window not freed since.
pub unsafe fn fence_wait(b: *const super::words::NodeBarrier, round: u32) {
    // SAFETY: caller's contract.
    let b = unsafe { &*b };
    let mut spins = 0u32;
    while !b.passed(round) {
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(256) {
            let osub = crate::runtime::with(|rt| {
                rt.progress();
                rt.engine.oversubscribed
            });
            if osub || spins.is_multiple_of(4096) {
                std::thread::yield_now();
            }
        } else {
            std::hint::spin_loop();
        }
    }
}
