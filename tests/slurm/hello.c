/* hello: every rank prints "hello: rank R/N node NODE" (NODE: SLURMD_NODENAME, or "-"),
 * then the ranks check an allreduce and swap a message round a ring; rank 0 prints
 * "hello: OK (N ranks, sum S)". Plain MPI: built with MPICH's mpicc.mpich to cross-check
 * the Slurm set-up, and with OxMPI's mpicc for the singleton-guard cases. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, sum = -1, token = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *node = getenv("SLURMD_NODENAME");
    printf("hello: rank %d/%d node %s\n", rank, size, node ? node : "-");
    fflush(stdout);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * (size - 1) / 2) {
        fprintf(stderr, "hello: rank %d: allreduce gave %d, expected %d\n", rank, sum, size * (size - 1) / 2);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 0, &token, 1, MPI_INT, (rank + size - 1) % size, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (token != (rank + size - 1) % size) {
        fprintf(stderr, "hello: rank %d: ring gave %d\n", rank, token);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("hello: OK (%d ranks, sum %d)\n", size, sum);
    MPI_Finalize();
    return 0;
}
