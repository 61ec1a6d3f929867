//! Binding ranks to CPUs. With one spinning rank per CPU, an unbound pair of ranks can be
//! put on the same CPU by the scheduler whenever something else runs on the other one, and
//! every wait then burns its spin budget before the partner gets to run (tens of
//! microseconds per message). Open MPI binds by default for the same reason.

/// The CPUs this process may run on, in increasing order.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it for our own pid.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer and size of the set above.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return Vec::new();
    }
    // SAFETY: CPU_ISSET reads the set within its size.
    (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect()
}

/// Binds local rank `me` of `nlocal` to its share of the CPUs it may use (all ranks of a
/// node start with the same mask, so the shares are disjoint): `cpu_domain`, one CPU each
/// when there are as many ranks as CPUs, a block of neighbouring CPUs each when there are
/// fewer ranks (the threads of a hybrid MPI + OpenMP rank need CPUs of their own: bound to
/// one CPU, 2 ranks of 4 threads on 8 CPUs would run on 2; Intel MPI's default domains);
/// with more ranks than CPUs, in blocks of neighbouring ranks per CPU (4 ranks on 2 CPUs: 0 and 1 on the first, 2 and 3
/// on the second). Unbound, oversubscribed ranks were placed differently from run to run:
/// the scheduler sometimes kept three of 4 ranks on one CPU for a while (alltoall of 8 B
/// 2.9 instead of 2.05 µs in one run out of three). Blocks rather than round-robin: trees
/// pair neighbouring ranks first, so with blocks the pairs' combining steps run on
/// different CPUs (reduce of 16 MiB 7.2 → 5.3 ms, allreduce of 64 KiB 58 → 43 µs).
/// Returns the first CPU of the share, or None when it left the binding alone.
pub fn bind_local_rank(me: usize, nlocal: usize, allowed: &[usize]) -> Option<usize> {
    if nlocal < 2 || allowed.is_empty() {
        return None;
    }
    let cpus = &allowed[cpu_domain(me, nlocal, allowed.len())];
    // SAFETY: as above; the set holds valid CPU indices (below CPU_SETSIZE: they came
    // from `allowed_cpus`).
    let ok = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    };
    ok.then_some(cpus[0])
}

/// Indices among the `ncpus` allowed CPUs that `bind_local_rank` gives local rank `local`
/// of `nlocal`: an equal block each when the ranks do not outnumber the CPUs (the first
/// ranks get one more when it does not divide), else the one CPU of `cpu_slot`.
pub fn cpu_domain(local: usize, nlocal: usize, ncpus: usize) -> std::ops::Range<usize> {
    if nlocal <= ncpus {
        local * ncpus / nlocal..(local + 1) * ncpus / nlocal
    } else {
        let s = cpu_slot(local, nlocal, ncpus);
        s..s + 1
    }
}

/// A CPU set folded into 256 bits (CPU c sets bit c mod 256), small enough to publish in
/// shared memory; the union of such sets undercounts only beyond 256 CPUs.
pub fn fold_cpus(cpus: &[usize]) -> [u64; 4] {
    let mut bits = [0u64; 4];
    for &c in cpus {
        bits[(c / 64) % 4] |= 1 << (c % 64);
    }
    bits
}

/// Index among the `ncpus` allowed CPUs that `bind_local_rank` binds local rank `local` of
/// `nlocal` to.
pub fn cpu_slot(local: usize, nlocal: usize, ncpus: usize) -> usize {
    if nlocal <= ncpus {
        local
    } else {
        local * ncpus / nlocal
    }
}

/// The local ranks `bind_local_rank` puts on the same CPU as local rank `me` (none when
/// every rank has a CPU of its own). Assumes every local rank started with the same CPU
/// mask, as the binding itself does; used only to choose between equivalent protocols.
pub fn cpu_mates(me: usize, nlocal: usize, ncpus: usize) -> Vec<usize> {
    (0..nlocal).filter(|&i| i != me && cpu_slot(i, nlocal, ncpus) == cpu_slot(me, nlocal, ncpus)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_is_sorted_and_nonempty() {
        let a = allowed_cpus();
        assert!(!a.is_empty());
        assert!(a.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn folded_cpu_sets() {
        assert_eq!(fold_cpus(&[0, 1, 65]), [3, 2, 0, 0]);
        assert_eq!(fold_cpus(&[200, 456]), [0, 0, 0, 1 << 8]);
        let union: u32 = fold_cpus(&[0, 1]).iter().zip(fold_cpus(&[1, 2])).map(|(a, b)| (a | b).count_ones()).sum();
        assert_eq!(union, 3);
    }

    #[test]
    fn mates_are_the_blocks_of_the_binding() {
        assert_eq!(cpu_mates(0, 4, 2), vec![1]);
        assert_eq!(cpu_mates(3, 4, 2), vec![2]);
        assert_eq!(cpu_mates(1, 2, 2), Vec::<usize>::new());
        assert_eq!(cpu_mates(4, 5, 2), vec![3]);
        assert_eq!(cpu_slot(4, 5, 2), 1);
    }

    #[test]
    fn domains_share_the_cpus_out() {
        assert_eq!(cpu_domain(1, 2, 2), 1..2);
        assert_eq!(cpu_domain(0, 2, 8), 0..4);
        assert_eq!(cpu_domain(1, 2, 8), 4..8);
        assert_eq!((0..3).map(|r| cpu_domain(r, 3, 8)).collect::<Vec<_>>(), vec![0..2, 2..5, 5..8]);
        assert_eq!(cpu_domain(3, 4, 2), 1..2, "oversubscribed: cpu_slot's CPU");
        for (n, c) in [(1, 1), (2, 3), (5, 7), (8, 64), (4, 4)] {
            let all: Vec<usize> = (0..n).flat_map(|r| cpu_domain(r, n, c)).collect();
            assert_eq!(all, (0..c).collect::<Vec<_>>(), "{n} ranks cover {c} CPUs once each");
        }
    }

    #[test]
    fn no_binding_for_a_single_rank() {
        let a = allowed_cpus();
        assert_eq!(bind_local_rank(0, 1, &a), None);
        assert_eq!(bind_local_rank(0, 2, &[]), None);
    }
}
