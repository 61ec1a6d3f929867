/* rma_lock_fairness: a target that keeps locking its own window must not starve the
 * others' lock requests.
 * For each target t in {0, size-1}: t loops MPI_Win_lock(EXCLUSIVE, t) / read its counter
 * / MPI_Win_unlock(t), making no other MPI call, until the counter reaches its final
 * value; meanwhile every other rank does K increments of t's counter:
 *  A. exclusive: MPI_Win_lock(EXCLUSIVE, t), MPI_Get, MPI_Win_flush, +1, MPI_Put, unlock;
 *  B. shared: MPI_Win_lock(SHARED, t), MPI_Fetch_and_op(+1), unlock.
 * The final count is exact (a lost update means the lock did not exclude) and t's loop
 * ends (it does not when a target only grants queued requests while its lock is free
 * and re-locks at once: that is how MPICH's rma/linked_list_bench_lock_excl hung over
 * TCP, where other ranks' locks are active messages the target queues).
 * Windows: MPI_Win_allocate, and a dynamic window with an attached counter (as in the
 * linked-list test). Usage: rma_lock_fairness [K] (default 30). */
#include "testutil.h"

static int rank, nprocs, K;

/* The owner's loop: lock itself, look, unlock, until the counter is `want`. */
static void owner_loop(MPI_Win win, volatile long *counter, long want)
{
    long seen;
    do {
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
        seen = *counter;
        MPI_OK(MPI_Win_unlock(rank, win));
    } while (seen < want);
    CHECK(seen == want, "target %d's counter = %ld, expected %ld", rank, seen, want);
}

static void increments(MPI_Win win, int t, MPI_Aint disp, int shared)
{
    for (int i = 0; i < K; i++) {
        long v = 0, one = 1;
        if (shared) {
            MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
            MPI_OK(MPI_Fetch_and_op(&one, &v, MPI_LONG, t, disp, MPI_SUM, win));
            MPI_OK(MPI_Win_unlock(t, win));
        } else {
            MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            MPI_OK(MPI_Get(&v, 1, MPI_LONG, t, disp, 1, MPI_LONG, win));
            MPI_OK(MPI_Win_flush(t, win));
            v += 1;
            MPI_OK(MPI_Put(&v, 1, MPI_LONG, t, disp, 1, MPI_LONG, win));
            MPI_OK(MPI_Win_unlock(t, win));
        }
    }
}

/* One round: target t, counter at `counter` locally (displacement `disp` for others). */
static void round_on(MPI_Win win, volatile long *counter, MPI_Aint disp, int t, int shared)
{
    long want = (long)(nprocs - 1) * K;
    if (rank == t) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
        *counter = 0;
        MPI_OK(MPI_Win_unlock(rank, win));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == t)
        owner_loop(win, counter, want);
    else
        increments(win, t, disp, shared);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void all_rounds(MPI_Win win, volatile long *counter, MPI_Aint disp, const char *what)
{
    int targets[2] = {0, nprocs - 1};
    for (int i = 0; i < (nprocs > 1 ? 2 : 1); i++)
        for (int shared = 0; shared < 2; shared++) {
            MPI_Aint d = disp;
            /* A dynamic window's displacement is the target's address: the target's. */
            MPI_OK(MPI_Bcast(&d, 1, MPI_AINT, targets[i], MPI_COMM_WORLD));
            round_on(win, counter, d, targets[i], shared);
        }
    if (rank == 0)
        printf("rma_lock_fairness: %s window OK\n", what);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    K = argc > 1 ? atoi(argv[1]) : 30;
    CHECK(K > 0, "usage: rma_lock_fairness [K] with K > 0");

    long *base = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    all_rounds(win, base, 0, "allocated");
    MPI_OK(MPI_Win_free(&win));

    long *cell = NULL;
    MPI_OK(MPI_Alloc_mem(sizeof(long), MPI_INFO_NULL, &cell));
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Win_attach(win, cell, sizeof(long)));
    MPI_Aint addr;
    MPI_OK(MPI_Get_address(cell, &addr));
    all_rounds(win, cell, addr, "dynamic");
    MPI_OK(MPI_Win_detach(win, cell));
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Free_mem(cell));

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("rma_lock_fairness: OK (%d ranks, K %d)\n", nprocs, K);
    MPI_Finalize();
    return 0;
}
