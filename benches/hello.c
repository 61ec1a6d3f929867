/* hello: MPI_Init, one line from rank 0, MPI_Finalize: what a job's start-up and teardown
 * cost (benches/compare --hosts netns times the whole launcher command). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        printf("hello from %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
