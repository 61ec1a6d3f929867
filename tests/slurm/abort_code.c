/* abort_code [CODE]: after one allreduce, rank 1 (rank 0 when alone) calls
 * MPI_Abort(MPI_COMM_WORLD, CODE) (default 3) while the other ranks wait in MPI_Recv for a
 * message that never comes. The job must end soon with a non-zero status. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    int rank, size, one = 1, sum = 0, buf;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int code = argc > 1 ? atoi(argv[1]) : 3;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == (size > 1 ? 1 : 0)) {
        struct timespec ts = {0, 200 * 1000 * 1000}; /* let the others block first */
        nanosleep(&ts, NULL);
        fprintf(stderr, "abort_code: rank %d calls MPI_Abort(MPI_COMM_WORLD, %d)\n", rank, code);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, code);
        fprintf(stderr, "abort_code: UNEXPECTED: MPI_Abort returned\n");
        return 0;
    }
    MPI_Recv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "abort_code: UNEXPECTED: rank %d received a message\n", rank);
    MPI_Finalize();
    return 0;
}
