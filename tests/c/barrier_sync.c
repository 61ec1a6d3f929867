/* barrier_sync: MPI_Barrier really synchronises, on every kind of communicator and
 * across communicator reuse. OxMPI runs barriers of single-node communicators over
 * shared-memory flags; this checks the things that could break there:
 *  1. no rank leaves a barrier before the last one entered it, whichever rank is last
 *     (root or not): the late rank sleeps, then tells everyone when it entered
 *     (CLOCK_MONOTONIC, shared by the processes of one node);
 *  2. back-to-back barriers on world, a duplicate, and odd/even halves interleaved;
 *  3. communicators freed and created again 200 times (their context ids are reused),
 *     each used for a few barriers, with a late rank checked in some; then duplicates
 *     whose first barrier has the same context and sequence number as the last one of
 *     the freed duplicate before them;
 *  4. overlapping communicators {r, r+1} entered in rank order (rank r uses the pair to
 *     its left, then the one to its right), so a rank goes on to its next barrier while
 *     its neighbour may still be reading the release of the last one. */
#include "testutil.h"
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One checked barrier on comm: rank `late` enters `delay_us` late. */
static void checked_barrier(MPI_Comm comm, int late, int delay_us, const char *what)
{
    int r;
    double entered = 0, left;
    MPI_OK(MPI_Comm_rank(comm, &r));
    if (r == late) {
        usleep(delay_us);
        entered = now();
    }
    MPI_OK(MPI_Barrier(comm));
    left = now();
    MPI_OK(MPI_Bcast(&entered, 1, MPI_DOUBLE, late, comm));
    CHECK(left >= entered, "%s: rank %d left the barrier %.1f us before rank %d entered it", what, r,
          (entered - left) * 1e6, late);
}

int main(int argc, char **argv)
{
    int nprocs, i, k;
    MPI_Comm dup, half;
    tu_init(&argc, &argv);
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));

    /* 1 */
    for (k = 0; k < nprocs; k++)
        checked_barrier(MPI_COMM_WORLD, k, 20000, "world");

    /* 2 */
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, tu_rank % 2, tu_rank, &half));
    for (i = 0; i < 2000; i++) {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Barrier(i % 3 ? dup : half));
        MPI_OK(MPI_Barrier(half));
    }
    checked_barrier(dup, nprocs - 1, 10000, "dup");
    checked_barrier(half, 0, 10000, "half");
    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Comm_free(&half));

    /* 3 */
    for (i = 0; i < 200; i++) {
        MPI_Comm c;
        int size;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, (tu_rank + i) % 2, nprocs - tu_rank, &c));
        MPI_OK(MPI_Comm_size(c, &size));
        for (k = 0; k < 3; k++)
            MPI_OK(MPI_Barrier(c));
        if (i % 20 == 0)
            checked_barrier(c, i % size, 2000, "reused context");
        MPI_OK(MPI_Comm_free(&c));
    }

    /* 3b: a duplicate of world made and freed again, each used alike: two bcasts, then a
     * checked barrier. A new communicator on a reused context starts its sequence
     * numbers again, so this barrier's token equals the previous duplicate's. */
    for (i = 0; i < 50; i++) {
        MPI_Comm c;
        int x = i;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MPI_OK(MPI_Bcast(&x, 1, MPI_INT, 0, c));
        MPI_OK(MPI_Bcast(&x, 1, MPI_INT, 0, c));
        checked_barrier(c, i % nprocs, 2000, "duplicate on a reused context");
        MPI_OK(MPI_Comm_free(&c));
    }

    /* 4 */
    {
        MPI_Comm left = MPI_COMM_NULL, right = MPI_COMM_NULL;
        MPI_Group world, g;
        MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
        for (k = 0; k + 1 < nprocs; k++) {
            int pair[2] = {k, k + 1};
            MPI_Comm c;
            MPI_OK(MPI_Group_incl(world, 2, pair, &g));
            MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
            MPI_OK(MPI_Group_free(&g));
            if (tu_rank == k)
                right = c;
            else if (tu_rank == k + 1)
                left = c;
        }
        MPI_OK(MPI_Group_free(&world));
        for (i = 0; i < 500; i++) {
            if (left != MPI_COMM_NULL)
                MPI_OK(MPI_Barrier(left));
            if (right != MPI_COMM_NULL)
                MPI_OK(MPI_Barrier(right));
        }
        if (left != MPI_COMM_NULL)
            MPI_OK(MPI_Comm_free(&left));
        if (right != MPI_COMM_NULL)
            MPI_OK(MPI_Comm_free(&right));
    }

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0)
        printf("barrier_sync: OK (%d ranks)\n", nprocs);
    MPI_OK(MPI_Finalize());
    return 0;
}
