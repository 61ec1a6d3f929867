/* errors_fatal: an invalid call (MPI_Send to rank `size`) under the default
 * error handler MPI_ERRORS_ARE_FATAL must end the whole job with a non-zero
 * status and a message about the invalid rank on stderr. Rank 0 makes the
 * call; the other ranks wait in MPI_Recv for a message that only comes if
 * the erroneous call wrongly returns (then everybody exits 0 and the harness
 * reports the failure). */
#include "testutil.h"

int main(int argc, char **argv)
{
    int rank, size, buf = 0;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        int rc = MPI_Send(&buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
        printf("errors_fatal: UNEXPECTED: MPI_Send to rank %d returned %d under "
               "MPI_ERRORS_ARE_FATAL\n", size, rc);
        fflush(stdout);
        for (int i = 1; i < size; i++)
            MPI_Send(&buf, 1, MPI_INT, i, 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&buf, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
