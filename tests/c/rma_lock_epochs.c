/* rma_lock_epochs: passive-target epochs in every shape a lock may take before it is
 * granted. OxMPI sends a lock request to a target reached by active messages only with
 * the epoch's first operation (MPI_Win_lock need not block), and the target holds back
 * that origin's requests until it grants the lock; this program checks the results that
 * depend on it, from every rank to every target, K rounds:
 *  A. an empty exclusive epoch (lock, unlock), then an exclusive read-modify-write whose
 *     first operation is MPI_Rget (completed by MPI_Wait), then MPI_Put of the value + 1:
 *     slot 0 of every target ends at size * K (a lost update: the lock did not exclude);
 *  B. a shared epoch whose only operation is MPI_Get_accumulate(+1): slot 1 ends at
 *     size * K and the values fetched at each target, summed over every origin, are
 *     0 + 1 + ... + (size * K - 1);
 *  C. a shared epoch whose only operation is MPI_Compare_and_swap(-1 -> origin rank) on
 *     slot 2 (once per origin and target): exactly one origin saw -1 at each target, and
 *     slot 2 holds that origin's rank;
 *  D. MPI_Win_lock_all, then operations to one target only ((rank + 1) % size:
 *     MPI_Accumulate(+1) on slot 3 and MPI_Fetch_and_op(+1) on slot 4 with flush), then
 *     MPI_Win_unlock_all, plus an empty lock_all/unlock_all: slots 3 and 4 end at K;
 *  E. two windows, an exclusive epoch on each open at once toward the same target
 *     (operations in the order of the locks: with locks taken at the first operation, as
 *     MPICH and OxMPI take remote ones, the reverse order can deadlock against the target's
 *     own blocking lock on its window): slot 5 of both ends at size * K.
 * Usage: rma_lock_epochs [K] (default 20; 8 above 4 ranks). */
#include "testutil.h"

#define SLOTS 6
static int rank, nprocs, K;

/* The owner's view of its own slot, read under its own exclusive lock. */
static long read_own(MPI_Win win, const long *base, int idx)
{
    long v;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    v = ((volatile const long *)base)[idx];
    MPI_OK(MPI_Win_unlock(rank, win));
    return v;
}

static MPI_Win make_window(long **base)
{
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(SLOTS * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                            base, &win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (int i = 0; i < SLOTS; i++)
        (*base)[i] = 0;
    (*base)[2] = -1;
    MPI_OK(MPI_Win_unlock(rank, win));
    return win;
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    K = argc > 1 ? atoi(argv[1]) : (nprocs <= 4 ? 20 : 8);
    CHECK(K > 0, "usage: rma_lock_epochs [K] with K > 0");

    long *base, *base2;
    MPI_Win win = make_window(&base);
    MPI_Win win2 = make_window(&base2);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    long fetched_sum = 0; /* B: values this origin fetched, by target, summed */
    long *fetched_by_target = calloc(nprocs, sizeof(long));
    int *won = calloc(nprocs, sizeof(int)); /* C: this origin's CAS saw -1 at target t */
    CHECK(fetched_by_target && won, "out of memory");

    for (int k = 0; k < K; k++) {
        for (int i = 0; i < nprocs; i++) {
            int t = (rank + i) % nprocs;
            /* A */
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            MPI_OK(MPI_Win_unlock(t, win));
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            long v = -7;
            MPI_Request rq;
            MPI_OK(MPI_Rget(&v, 1, MPI_LONG, t, 0, 1, MPI_LONG, win, &rq));
            MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            CHECK(v >= 0 && v < (long)nprocs * K, "A: slot 0 of rank %d read %ld", t, v);
            v += 1;
            MPI_OK(MPI_Put(&v, 1, MPI_LONG, t, 0, 1, MPI_LONG, win));
            MPI_OK(MPI_Win_unlock(t, win));
            /* B */
            long one = 1, old = -7;
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
            MPI_OK(MPI_Get_accumulate(&one, 1, MPI_LONG, &old, 1, MPI_LONG, t, 1, 1, MPI_LONG,
                                      MPI_SUM, win));
            MPI_OK(MPI_Win_unlock(t, win));
            CHECK(old >= 0 && old < (long)nprocs * K, "B: slot 1 of rank %d held %ld", t, old);
            fetched_by_target[t] += old;
            /* C */
            if (k == 0) {
                long mine = rank, minus1 = -1, seen = -7;
                MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
                MPI_OK(MPI_Compare_and_swap(&mine, &minus1, &seen, MPI_LONG, t, 2, win));
                MPI_OK(MPI_Win_unlock(t, win));
                CHECK(seen >= -1 && seen < nprocs, "C: slot 2 of rank %d held %ld", t, seen);
                won[t] = seen == -1;
            }
            /* E */
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win2));
            MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG, t, 5, 1, MPI_LONG, MPI_SUM, win));
            MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG, t, 5, 1, MPI_LONG, MPI_SUM, win2));
            MPI_OK(MPI_Win_unlock(t, win));
            MPI_OK(MPI_Win_unlock(t, win2));
        }
        /* D */
        int t = (rank + 1) % nprocs;
        long one = 1, old = -7;
        MPI_OK(MPI_Win_lock_all(0, win));
        MPI_OK(MPI_Win_unlock_all(win));
        MPI_OK(MPI_Win_lock_all(0, win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_LONG, t, 3, 1, MPI_LONG, MPI_SUM, win));
        MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, t, 4, MPI_SUM, win));
        MPI_OK(MPI_Win_flush(t, win));
        CHECK(old == k, "D: slot 4 of rank %d held %ld in round %d (only rank %d adds to it)",
              t, old, k, rank);
        MPI_OK(MPI_Win_unlock_all(win));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    long total = (long)nprocs * K;
    CHECK(read_own(win, base, 0) == total, "A: slot 0 = %ld, expected %ld", read_own(win, base, 0), total);
    CHECK(read_own(win, base, 1) == total, "B: slot 1 = %ld, expected %ld", read_own(win, base, 1), total);
    long sums_here;
    MPI_OK(MPI_Reduce_scatter_block(fetched_by_target, &sums_here, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sums_here == total * (total - 1) / 2,
          "B: fetched values at rank %d sum to %ld, expected %ld (a value repeated or missing)", rank,
          sums_here, total * (total - 1) / 2);
    int winners, winner_plus1;
    MPI_OK(MPI_Reduce_scatter_block(won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int t = 0; t < nprocs; t++)
        won[t] *= rank + 1;
    MPI_OK(MPI_Reduce_scatter_block(won, &winner_plus1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    long owner = read_own(win, base, 2);
    CHECK(winners == 1, "C: %d origins saw -1 in rank %d's slot 2, expected exactly 1", winners, rank);
    CHECK(owner == winner_plus1 - 1, "C: slot 2 = %ld, but the origin that saw -1 was rank %d", owner,
          winner_plus1 - 1);
    CHECK(read_own(win, base, 3) == K, "D: slot 3 = %ld, expected %d", read_own(win, base, 3), K);
    CHECK(read_own(win, base, 4) == K, "D: slot 4 = %ld, expected %d", read_own(win, base, 4), K);
    CHECK(read_own(win, base, 5) == total, "E: slot 5 = %ld, expected %ld", read_own(win, base, 5), total);
    CHECK(read_own(win2, base2, 5) == total, "E: second window's slot 5 = %ld, expected %ld",
          read_own(win2, base2, 5), total);

    MPI_OK(MPI_Win_free(&win2));
    MPI_OK(MPI_Win_free(&win));
    free(fetched_by_target);
    free(won);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("rma_lock_epochs: OK (%d ranks, K %d)\n", nprocs, K);
    MPI_Finalize();
    return 0;
}
