/* 10 000 dup/free cycles (argument: count) never collide or leak: each new communicator
 * carries its own traffic, and alternate long-lived ones keep some context ids busy. */
#include "testutil.h"

int main(int argc, char **argv)
{
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 10000;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm keep[8];
    for (int i = 0; i < 8; i++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &keep[i]));
    for (int i = 0; i < n; i++) {
        MPI_Comm d;
        MPI_OK(MPI_Comm_dup(i % 2 ? keep[i % 8] : MPI_COMM_WORLD, &d));
        if (i % 500 == 0) {
            /* A ring message on the new communicator, with a different one pending on
             * a kept one under the same tag: must not mix. */
            int right = (rank + 1) % size, left = (rank + size - 1) % size, v = -1, w = -1;
            MPI_Request r[4];
            int a = i, b = -i;
            MPI_Irecv(&v, 1, MPI_INT, left, 1, d, &r[0]);
            MPI_Irecv(&w, 1, MPI_INT, left, 1, keep[3], &r[1]);
            MPI_Isend(&b, 1, MPI_INT, right, 1, keep[3], &r[2]);
            MPI_Isend(&a, 1, MPI_INT, right, 1, d, &r[3]);
            MPI_Status st[4];
            MPI_OK(MPI_Waitall(4, r, st));
            CHECK(v == i && w == -i, "cycle %d: got %d %d", i, v, w);
        }
        MPI_OK(MPI_Comm_free(&d));
    }
    for (int i = 0; i < 8; i++)
        MPI_Comm_free(&keep[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("comm_dup_cycles: OK\n");
    MPI_Finalize();
    return 0;
}
