/* rma_passive_progress: passive-target RMA completes while the target makes no MPI calls.
 * Rank 1 computes in a busy loop that only reads a volatile flag in its own window
 * memory (no MPI call at all) until rank 0 sets the flag with MPI_Put + MPI_Win_flush,
 * bounded by a wall-clock deadline (FAIL after DEADLINE seconds). Meanwhile rank 0, under
 * MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1), does MPI_Put, MPI_Accumulate(MPI_SUM),
 * MPI_Get (checked after a flush), MPI_Fetch_and_op, MPI_Compare_and_swap,
 * MPI_Get_accumulate, unlocks, takes a shared lock, and only then sets the flag. Rank 1
 * then checks every value in its memory. Ranks 2.. only wait at the final barrier.
 * Windows: MPI_Win_allocate always; MPI_Win_create (user memory) too unless the argument
 * "allocate-only" is given (an implementation may give only memory it allocated itself
 * the hardware/shared-memory path that needs no target progress).
 * Usage: rma_passive_progress [allocate-only] ; at 1 rank it only prints OK.
 *
 * MPICH 4.0.2 (Debian, ch4:ucx) fails BOTH variants as is: even MPI_Win_lock on an
 * MPI_Win_allocate window waits for the target to enter MPI (rank 1 hits the deadline).
 * With its progress thread (MPIR_CVAR_ASYNC_PROGRESS=1) both variants pass, which is how
 * this program was validated. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <time.h>

#define DEADLINE 10.0
#define NDATA 32
enum { FLAG = 0, ACC = 1, FOP = 2, CAS = 3, GACC = 4, DATA = 8, RO = DATA + NDATA, NW = RO + NDATA };

static int rank, nprocs;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void init_window(long *w)
{
    for (int i = 0; i < NW; i++)
        w[i] = 0;
    w[ACC] = 100;
    w[FOP] = 200;
    w[CAS] = 300;
    w[GACC] = 400;
    for (int i = 0; i < NDATA; i++) {
        w[DATA + i] = -1;
        w[RO + i] = 5000 + i;
    }
}

static void origin(MPI_Win win, const char *kind)
{
    long data[NDATA], ro[NDATA], add = 11, fop_old = -1, cas_old = -1, cmp = 300, swap = 301;
    long gacc_old = -1, one = 1, flag = 1;
    for (int i = 0; i < NDATA; i++) {
        data[i] = 7000 + i;
        ro[i] = -1;
    }
    double t0 = now();
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
    MPI_OK(MPI_Put(data, NDATA, MPI_LONG, 1, DATA, NDATA, MPI_LONG, win));
    MPI_OK(MPI_Accumulate(&add, 1, MPI_LONG, 1, ACC, 1, MPI_LONG, MPI_SUM, win));
    MPI_OK(MPI_Get(ro, NDATA, MPI_LONG, 1, RO, NDATA, MPI_LONG, win));
    MPI_OK(MPI_Win_flush(1, win));
    for (int i = 0; i < NDATA; i++)
        CHECK(ro[i] == 5000 + i, "%s: MPI_Get of rank 1's data [%d] = %ld, expected %d", kind, i,
              ro[i], 5000 + i);
    MPI_OK(MPI_Fetch_and_op(&one, &fop_old, MPI_LONG, 1, FOP, MPI_SUM, win));
    MPI_OK(MPI_Compare_and_swap(&swap, &cmp, &cas_old, MPI_LONG, 1, CAS, win));
    MPI_OK(MPI_Get_accumulate(&one, 1, MPI_LONG, &gacc_old, 1, MPI_LONG, 1, GACC, 1, MPI_LONG,
                              MPI_SUM, win));
    MPI_OK(MPI_Win_unlock(1, win));
    CHECK(fop_old == 200 && cas_old == 300 && gacc_old == 400, "%s: fetch-and-op %ld, "
          "compare-and-swap %ld, get-accumulate %ld returned; expected 200, 300, 400", kind,
          fop_old, cas_old, gacc_old);
    /* everything above is complete at rank 1: now release it */
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
    MPI_OK(MPI_Put(&flag, 1, MPI_LONG, 1, FLAG, 1, MPI_LONG, win));
    MPI_OK(MPI_Win_flush(1, win));
    MPI_OK(MPI_Win_unlock(1, win));
    double t = now() - t0;
    CHECK(t < DEADLINE, "%s: the passive-target epoch took %.1f s", kind, t);
}

static void target(MPI_Win win, long *w, const char *kind)
{
    volatile long *flag = &w[FLAG];
    double t0 = now(), t = 0;
    unsigned long spins = 0;
    /* no MPI call in this loop */
    while (*flag == 0) {
        if (++spins % 4096 == 0) {
            t = now() - t0;
            if (t > DEADLINE)
                FAIL("%s: rank 0's passive-target operations did not complete within %.0f s "
                     "while this rank made no MPI calls (flag still 0)", kind, DEADLINE);
        }
    }
    /* the data arrived before the flag; read it as the window's owner */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
    CHECK(w[ACC] == 111, "%s: accumulate target %ld, expected 111", kind, w[ACC]);
    CHECK(w[FOP] == 201, "%s: fetch-and-op target %ld, expected 201", kind, w[FOP]);
    CHECK(w[CAS] == 301, "%s: compare-and-swap target %ld, expected 301", kind, w[CAS]);
    CHECK(w[GACC] == 401, "%s: get-accumulate target %ld, expected 401", kind, w[GACC]);
    for (int i = 0; i < NDATA; i++) {
        CHECK(w[DATA + i] == 7000 + i, "%s: put data [%d] = %ld, expected %d", kind, i,
              w[DATA + i], 7000 + i);
        CHECK(w[RO + i] == 5000 + i, "%s: read-only data [%d] changed to %ld", kind, i,
              w[RO + i]);
    }
    MPI_OK(MPI_Win_unlock(1, win));
}

static void run(MPI_Win win, long *w, const char *kind)
{
    /* the owner initialises its window memory before anyone may access it */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    init_window(w);
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        origin(win, kind);
    else if (rank == 1)
        target(win, w, kind);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int allocate_only = argc > 1 && strcmp(argv[1], "allocate-only") == 0;
    CHECK(argc == 1 || allocate_only, "usage: rma_passive_progress [allocate-only]");

    if (nprocs >= 2) {
        long *w = NULL;
        MPI_Win win;
        MPI_OK(MPI_Win_allocate(NW * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD,
                                &w, &win));
        run(win, w, "MPI_Win_allocate");
        MPI_OK(MPI_Win_free(&win));

        if (!allocate_only) {
            long *u = tu_malloc(NW * sizeof(long));
            MPI_OK(MPI_Win_create(u, NW * sizeof(long), sizeof(long), MPI_INFO_NULL,
                                  MPI_COMM_WORLD, &win));
            run(win, u, "MPI_Win_create");
            MPI_OK(MPI_Win_free(&win));
            free(u);
        }
    }
    if (rank == 0)
        printf("rma_passive_progress: OK (%d ranks%s)\n", nprocs,
               nprocs < 2 ? ", nothing to do below 2 ranks" :
               allocate_only ? ", MPI_Win_allocate only" : "");
    MPI_Finalize();
    return 0;
}
