/* hang: every rank blocks forever in MPI_Recv. The harness runs it with
 * `mpirun --timeout 3` (MPIEXEC_TIMEOUT=3 for other launchers) and expects a
 * non-zero exit well before its own deadline. */
#include "testutil.h"

int main(int argc, char **argv)
{
    int rank, buf;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        printf("hang: all ranks now wait for a message that never comes\n");
        fflush(stdout);
    }
    MPI_Recv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "hang: UNEXPECTED: rank %d received a message\n", rank);
    MPI_Finalize();
    return 0;
}
