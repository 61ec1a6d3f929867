//! Collective algorithms: builders that fill a `Schedule` for one rank. Each works for any
//! communicator size (non-powers of two included).

use super::schedule::{Schedule, Slice};

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
