/* ring: rank 0 sends a counter around the ring of all ranks three times; each
 * rank adds one before passing it on. */
#include <mpi.h>
#include <stdio.h>

#define LAPS 3

int main(int argc, char **argv)
{
    int rank, size, token = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    for (int lap = 0; lap < LAPS; lap++) {
        if (rank == 0) {
            MPI_Request req;
            token++;
            MPI_Isend(&token, 1, MPI_INT, next, lap, MPI_COMM_WORLD, &req);
            MPI_Recv(&token, 1, MPI_INT, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            printf("lap %d: token came back to rank 0 with value %d\n", lap, token);
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, next, lap, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        int expected = LAPS * size;
        printf("ring of %d ranks: final token %d (%s)\n", size, token,
               token == expected ? "correct" : "WRONG");
        if (token != expected)
            MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return 0;
}
