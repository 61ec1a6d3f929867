/* Prints MPI_UNIVERSE_SIZE as rank 0 sees it: "universe: unset" or "universe: N" (the
 * launcher test checks mpirun's default and -usize). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank, flag = 0, *v = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag);
    if (rank == 0) {
        if (flag) printf("universe: %d\n", *v);
        else printf("universe: unset\n");
    }
    MPI_Finalize();
    return 0;
}
