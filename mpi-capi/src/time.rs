//! `MPI_Wtime` / `MPI_Wtick`: elapsed time from the monotonic clock.
use std::os::raw::c_double;

/// `MPI_Wtime`: seconds of `CLOCK_MONOTONIC` (not synchronised across nodes:
/// `MPI_WTIME_IS_GLOBAL` is false).
#[no_mangle]
pub unsafe extern "C" fn PMPI_Wtime() -> c_double {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into the valid, exclusively borrowed `ts`.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as c_double + ts.tv_nsec as c_double * 1e-9
}

/// `MPI_Wtick`: resolution of `MPI_Wtime` in seconds.
#[no_mangle]
pub unsafe extern "C" fn PMPI_Wtick() -> c_double {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_getres writes one timespec into the valid, exclusively borrowed `ts`.
    let rc = unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    if rc != 0 || (ts.tv_sec == 0 && ts.tv_nsec == 0) {
        return 1e-9;
    }
    ts.tv_sec as c_double + ts.tv_nsec as c_double * 1e-9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wtime_advances_and_wtick_is_small() {
        // SAFETY: no arguments; these only read the clock.
        let (a, tick) = unsafe { (PMPI_Wtime(), PMPI_Wtick()) };
        std::thread::sleep(std::time::Duration::from_millis(5));
        // SAFETY: as above.
        let b = unsafe { PMPI_Wtime() };
        assert!(b - a >= 0.004, "{a} {b}");
        assert!(tick > 0.0 && tick <= 1e-3);
    }
}
