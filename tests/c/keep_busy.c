/* keep_busy: ranks exchange and reduce for argv[1] seconds (default 3), checking every
 * result: a job that stays up long enough for a test to poke at it from outside (e.g.
 * connect to a rank's TCP port with garbage or a wrong secret) and must still finish
 * with correct results. Rank 0 decides when to stop and tells the others. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"
#include <time.h>

int main(int argc, char **argv)
{
    int rank, size;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double seconds = argc > 1 ? atof(argv[1]) : 3.0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double start = MPI_Wtime();
    long rounds = 0;
    for (int go = 1; go; rounds++) {
        long mine[64], got[64], sum = -1, one = rank + 1;
        for (int k = 0; k < 64; k++)
            mine[k] = rounds * 1000 + rank * 64 + k;
        MPI_OK(MPI_Sendrecv(mine, 64, MPI_LONG, right, 7, got, 64, MPI_LONG, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int k = 0; k < 64; k++)
            CHECK(got[k] == rounds * 1000 + left * 64 + k, "round %ld: ring element %d is %ld", rounds, k, got[k]);
        MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        CHECK(sum == (long)size * (size + 1) / 2, "round %ld: allreduce gave %ld", rounds, sum);
        if (rank == 0)
            go = MPI_Wtime() - start < seconds;
        MPI_OK(MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD));
        if (go && rounds % 64 == 0) {
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
    }
    if (rank == 0)
        printf("keep_busy: OK (%d ranks, %ld rounds)\n", size, rounds);
    MPI_Finalize();
    return 0;
}
