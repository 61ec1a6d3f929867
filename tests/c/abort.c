/* abort [CODE]: rank 1 (rank 0 when alone) calls MPI_Abort(MPI_COMM_WORLD, CODE)
 * (default 7) while every other rank is blocked in MPI_Recv. The harness expects the
 * launcher to exit with status CODE within a few seconds, and the line the aborting rank
 * printed just before (still in stdio's buffer) on stdout. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <time.h>

int main(int argc, char **argv)
{
    int rank, size, buf;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int aborter = (size > 1) ? 1 : 0;
    int code = argc > 1 ? atoi(argv[1]) : 7;
    if (rank == aborter) {
        struct timespec ts = {0, 200 * 1000 * 1000}; /* let the others block first */
        nanosleep(&ts, NULL);
        fprintf(stderr, "abort: rank %d calls MPI_Abort(MPI_COMM_WORLD, %d)\n", rank, code);
        fflush(stderr);
        /* Left in stdio's buffer (stdout is a pipe): MPI_Abort must let it out. */
        printf("abort: rank %d's last words\n", rank);
        MPI_Abort(MPI_COMM_WORLD, code);
        fprintf(stderr, "abort: UNEXPECTED: MPI_Abort returned\n");
        return 0;
    }
    MPI_Recv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "abort: UNEXPECTED: rank %d received a message\n", rank);
    MPI_Finalize();
    return 0;
}
