/* pingpong: ranks 0 and 1 bounce messages of a few sizes and print the
 * one-way latency and bandwidth. Other ranks (if any) just wait. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size;
    static const int sizes[] = {8, 1024, 65536, 1048576, 4194304};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            printf("pingpong needs at least 2 ranks\n");
        MPI_Finalize();
        return 0;
    }
    char *buf = malloc(4194304);
    memset(buf, rank, 4194304);
    if (rank == 0)
        printf("%10s %8s %14s %12s\n", "bytes", "iters", "latency (us)", "MB/s");
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int n = sizes[s], iters = n >= 1048576 ? 20 : 200;
        double t0 = 0;
        for (int i = -5; i < iters; i++) { /* 5 warm-up rounds */
            if (i == 0)
                t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        double one_way = (MPI_Wtime() - t0) / iters / 2;
        if (rank == 0)
            printf("%10d %8d %14.2f %12.1f\n", n, iters, one_way * 1e6, n / one_way / 1e6);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
