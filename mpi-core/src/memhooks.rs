//! Memory hooks for the RDMA registration cache. A registration pins the physical pages
//! behind a virtual range; if the program unmaps that range and maps new memory at the same
//! address, a cached registration would let a peer read the old pages. `libmpi.so.12`
//! therefore exports `munmap`, `mremap`, `madvise` and `mmap` (see `mpi-capi/src/memhooks.rs`),
//! which report every range they unmap or replace here before doing the system call; and
//! while a registration cache is live, `malloc` is told never to give memory back to the
//! system (`mallopt`), so `free` cannot unmap pages behind the hooks' back (glibc's own
//! calls do not pass through the exported symbols).
//!
//! The hooks run on any thread, even inside libibverbs while the plugin registers memory,
//! so they only record ranges (a fixed array, no allocation, a spin lock held for a few
//! instructions); the verbs transport applies them under the engine lock before each use
//! of its cache (`drain`).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

const SLOTS: usize = 64;

/// Set while a registration cache exists (the hooks do nothing otherwise).
static WATCHING: AtomicBool = AtomicBool::new(false);
/// Ranges recorded and not yet drained (or an overflow) exist.
static PENDING: AtomicBool = AtomicBool::new(false);
static LOCK: AtomicBool = AtomicBool::new(false);
/// Recorded ranges: `COUNT` of them; more than `SLOTS` = overflow (drop everything).
static COUNT: AtomicUsize = AtomicUsize::new(0);
static RANGES: [(AtomicUsize, AtomicUsize); SLOTS] = [const { (AtomicUsize::new(0), AtomicUsize::new(0)) }; SLOTS];

fn lock() {
    while LOCK.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
        std::hint::spin_loop();
    }
}

fn unlock() {
    LOCK.store(false, Ordering::Release);
}

/// Turns recording on (a registration cache now exists) or off. On: `malloc` keeps what it
/// frees mapped (no trimming, no per-allocation mmap), as MVAPICH does without its own
/// allocator.
pub fn watch(on: bool) {
    if on && !WATCHING.swap(true, Ordering::AcqRel) {
        // SAFETY: mallopt only changes glibc's allocation policy.
        unsafe {
            libc::mallopt(libc::M_TRIM_THRESHOLD, -1);
            libc::mallopt(libc::M_MMAP_MAX, 0);
        }
    } else if !on {
        WATCHING.store(false, Ordering::Release);
    }
}

/// Whether the program's `munmap` is ours (libmpi's hooks come before the C library in
/// symbol lookup). Not so when libmpi was `dlopen`ed after the C library was bound (Python
/// loading mpi4py): the hooks then see nothing, and a registration cache must not keep
/// registrations past their use.
pub fn hooks_bound() -> bool {
    // SAFETY: dlsym/dladdr only look symbols up and fill local structs.
    unsafe {
        let sym = libc::dlsym(libc::RTLD_DEFAULT, c"munmap".as_ptr());
        let mut theirs: libc::Dl_info = std::mem::zeroed();
        let mut ours: libc::Dl_info = std::mem::zeroed();
        !sym.is_null()
            && libc::dladdr(sym, &mut theirs) != 0
            && libc::dladdr(hooks_bound as *const libc::c_void, &mut ours) != 0
            && theirs.dli_fbase == ours.dli_fbase
    }
}

/// [addr, addr + len) is being unmapped or replaced (called by the exported hooks).
#[inline]
pub fn unmapped(addr: usize, len: usize) {
    if len == 0 || !WATCHING.load(Ordering::Acquire) {
        return;
    }
    lock();
    let n = COUNT.load(Ordering::Relaxed);
    if n < SLOTS {
        RANGES[n].0.store(addr, Ordering::Relaxed);
        RANGES[n].1.store(len, Ordering::Relaxed);
    }
    COUNT.store(n.saturating_add(1), Ordering::Relaxed);
    PENDING.store(true, Ordering::Release);
    unlock();
}

/// Hands every recorded range to `f` and forgets them; after an overflow, one range
/// covering the whole address space.
#[inline]
pub fn drain(mut f: impl FnMut(usize, usize)) {
    if !PENDING.load(Ordering::Acquire) {
        return;
    }
    let mut got = [(0usize, 0usize); SLOTS];
    lock();
    let n = COUNT.swap(0, Ordering::Relaxed);
    for (i, g) in got.iter_mut().enumerate().take(n.min(SLOTS)) {
        *g = (RANGES[i].0.load(Ordering::Relaxed), RANGES[i].1.load(Ordering::Relaxed));
    }
    PENDING.store(false, Ordering::Release);
    unlock();
    if n > SLOTS {
        f(0, usize::MAX);
    } else {
        for &(a, l) in &got[..n] {
            f(a, l);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_and_overflows() {
        WATCHING.store(true, Ordering::Release);
        unmapped(4096, 8192);
        unmapped(0, 0);
        let mut seen = Vec::new();
        drain(|a, l| seen.push((a, l)));
        assert_eq!(seen, vec![(4096, 8192)]);
        for i in 0..SLOTS + 1 {
            unmapped(i * 4096, 4096);
        }
        seen.clear();
        drain(|a, l| seen.push((a, l)));
        assert_eq!(seen, vec![(0, usize::MAX)]);
        seen.clear();
        drain(|a, l| seen.push((a, l)));
        assert!(seen.is_empty());
        WATCHING.store(false, Ordering::Release);
    }
}
