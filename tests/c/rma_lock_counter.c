/* rma_lock_counter: passive-target counters (MPI_Win_lock / MPI_Win_lock_all).
 * Window on every rank: 4 longs, all 0 at start.
 *  A. every rank does N MPI_Fetch_and_op(+1, MPI_SUM) on rank 0's counter [0] under
 *     MPI_Win_lock(MPI_LOCK_SHARED, 0), with MPI_Win_flush after each; the final value is
 *     N * size and the fetched values, gathered at rank 0, are a permutation of
 *     0 .. N*size-1 (every increment saw a distinct predecessor);
 *  B. the same on EVERY rank's counter [1] at once under MPI_Win_lock_all (targets
 *     visited in a rotated order, MPI_Win_flush / MPI_Win_flush_all / MPI_Win_flush_local
 *     alternately, the last results only completed by MPI_Win_unlock_all); each target
 *     gathers and checks its own permutation;
 *  C. a non-atomic read-modify-write under MPI_Win_lock(MPI_LOCK_EXCLUSIVE): MPI_Get,
 *     MPI_Win_flush, +1, MPI_Put, unlock; M times by every rank on rank 0's [2] and on
 *     every rank's [3]; exact final counts (a lost update means the lock did not
 *     exclude);
 *  D. shared locks with MPI_MODE_NOCHECK where that is valid (between two barriers
 *     nobody takes an exclusive lock): one MPI_Accumulate from every rank to every
 *     rank's [0], exact sum.
 * Owners read their own counters inside MPI_Win_lock(MPI_LOCK_EXCLUSIVE, self).
 * Usage: rma_lock_counter [N [M]]; the defaults (40 and 10 at 1-2 ranks, 20 and 3 at
 * 3-4, 8 and 1 above) keep a run short oversubscribed on 2 cores. */
#include "testutil.h"

static int N; /* fetch-and-ops per rank per target (argv[1]) */
static int M; /* exclusive read-modify-writes per rank per target (argv[2]) */
static int rank, nprocs;

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* At the root: the gathered fetched values must be exactly 0 .. n-1. */
static void check_permutation(long *v, int n, const char *what)
{
    qsort(v, n, sizeof(long), cmp_long);
    for (int i = 0; i < n; i++)
        CHECK(v[i] == i, "%s: sorted fetched values [%d] = %ld, expected %d (values repeated "
              "or missing: increments were not atomic)", what, i, v[i], i);
}

static long read_own(MPI_Win win, const long *base, int idx)
{
    long v;
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    v = ((volatile const long *)base)[idx];
    MPI_OK(MPI_Win_unlock(rank, win));
    return v;
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    N = argc > 1 ? atoi(argv[1]) : (nprocs <= 2 ? 40 : nprocs <= 4 ? 20 : 8);
    M = argc > 2 ? atoi(argv[2]) : (nprocs <= 2 ? 10 : nprocs <= 4 ? 3 : 1);
    CHECK(N > 0 && M > 0, "usage: rma_lock_counter [N [M]] with N, M > 0");

    long *base = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(4 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                            &win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (int i = 0; i < 4; i++)
        base[i] = 0;
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    long one = 1;
    long *fetched = tu_malloc((size_t)N * nprocs * sizeof(long));
    long *all = tu_malloc((size_t)N * nprocs * sizeof(long));

    /* A: shared lock on rank 0, flush after each fetch-and-op */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    for (int i = 0; i < N; i++) {
        fetched[i] = -1;
        MPI_OK(MPI_Fetch_and_op(&one, &fetched[i], MPI_LONG, 0, 0, MPI_SUM, win));
        MPI_OK(MPI_Win_flush(0, win));
        CHECK(fetched[i] >= 0 && fetched[i] < (long)N * nprocs,
              "A: fetch-and-op %d on rank 0 returned %ld, outside 0..%d", i, fetched[i],
              N * nprocs - 1);
        if (i > 0)
            CHECK(fetched[i] > fetched[i - 1], "A: fetched %ld after %ld: counter went back",
                  fetched[i], fetched[i - 1]);
    }
    MPI_OK(MPI_Win_unlock(0, win));
    MPI_OK(MPI_Gather(fetched, N, MPI_LONG, all, N, MPI_LONG, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        long v = read_own(win, base, 0);
        CHECK(v == (long)N * nprocs, "A: rank 0's counter = %ld, expected %d", v, N * nprocs);
        check_permutation(all, N * nprocs, "A (MPI_Win_lock shared, rank 0's counter)");
    }

    /* B: lock_all, every rank's counter [1] */
    long *fb = tu_malloc((size_t)N * nprocs * sizeof(long)); /* fb[t * N + i] */
    for (int i = 0; i < N * nprocs; i++)
        fb[i] = -1;
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < N; i++) {
        for (int k = 0; k < nprocs; k++) {
            int t = (rank + k) % nprocs;
            MPI_OK(MPI_Fetch_and_op(&one, &fb[t * N + i], MPI_LONG, t, 1, MPI_SUM, win));
            if (i % 3 == 0)
                MPI_OK(MPI_Win_flush(t, win));
        }
        if (i % 3 == 1)
            MPI_OK(MPI_Win_flush_all(win));
        else if (i % 3 == 2 && i != N - 1)
            MPI_OK(MPI_Win_flush_local_all(win));
    }
    MPI_OK(MPI_Win_unlock_all(win));
    for (int t = 0; t < nprocs; t++)
        MPI_OK(MPI_Gather(&fb[t * N], N, MPI_LONG, all, N, MPI_LONG, t, MPI_COMM_WORLD));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    {
        long v = read_own(win, base, 1);
        CHECK(v == (long)N * nprocs, "B: counter of rank %d = %ld, expected %d", rank, v,
              N * nprocs);
        char what[96];
        snprintf(what, sizeof what, "B (MPI_Win_lock_all, rank %d's counter)", rank);
        check_permutation(all, N * nprocs, what);
    }

    /* C: exclusive-lock read-modify-write with Get + Put */
    for (int i = 0; i < M; i++) {
        for (int k = 0; k < nprocs + 1; k++) {
            /* k == nprocs: rank 0's [2]; else rank (rank+k)%nprocs's [3] */
            int t = k == nprocs ? 0 : (rank + k) % nprocs;
            int idx = k == nprocs ? 2 : 3;
            long v = -1;
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            MPI_OK(MPI_Get(&v, 1, MPI_LONG, t, idx, 1, MPI_LONG, win));
            MPI_OK(MPI_Win_flush(t, win));
            CHECK(v >= 0 && v < (long)M * nprocs, "C: read %ld from rank %d [%d]", v, t, idx);
            v++;
            MPI_OK(MPI_Put(&v, 1, MPI_LONG, t, idx, 1, MPI_LONG, win));
            MPI_OK(MPI_Win_unlock(t, win));
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    {
        long v = read_own(win, base, 3);
        CHECK(v == (long)M * nprocs, "C: rank %d's exclusive-lock counter = %ld, expected %d "
              "(lost updates: the exclusive lock did not exclude)", rank, v, M * nprocs);
        if (rank == 0) {
            v = read_own(win, base, 2);
            CHECK(v == (long)M * nprocs, "C: rank 0's shared exclusive-lock counter = %ld, "
                  "expected %d", v, M * nprocs);
        }
    }

    /* D: MPI_MODE_NOCHECK. Between two barriers nobody holds or requests an exclusive
     * lock, so shared locks may skip the check; counter [0] of every rank gets one
     * accumulate from each rank. */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    base[0] = 0;
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < nprocs; k++) {
        int t = (rank + k) % nprocs;
        long add = rank + 1;
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, MPI_MODE_NOCHECK, win));
        MPI_OK(MPI_Accumulate(&add, 1, MPI_LONG, t, 0, 1, MPI_LONG, MPI_SUM, win));
        MPI_OK(MPI_Win_unlock(t, win));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    {
        long v = read_own(win, base, 0);
        long expect = (long)nprocs * (nprocs + 1) / 2;
        CHECK(v == expect, "D: rank %d's counter after NOCHECK shared locks = %ld, expected %ld",
              rank, v, expect);
    }

    MPI_OK(MPI_Win_free(&win));
    free(fetched);
    free(all);
    free(fb);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("rma_lock_counter: OK (%d ranks, N %d, M %d)\n", nprocs, N, M);
    MPI_Finalize();
    return 0;
}
