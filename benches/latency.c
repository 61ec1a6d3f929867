/* latency: osu_latency-style point-to-point latency between ranks 0 and 1.
 * Usage: mpirun -n 2 ./latency [-i ITERATIONS] [-w WARMUP] [-m MAX_BYTES]
 * For each size 0, 1, 2, 4, ..., MAX_BYTES (default 4 MiB): WARMUP untimed
 * round trips, then ITERATIONS timed ones (large sizes use fewer, like OSU);
 * prints the one-way latency = round-trip time / 2, in microseconds.
 * Builds with any MPI's mpicc; ranks beyond 1 idle. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LARGE_MESSAGE (8 * 1024)

static void usage(int rank, const char *prog)
{
    if (rank == 0)
        fprintf(stderr, "usage: %s [-i iterations] [-w warmup] [-m max_bytes]\n", prog);
}

int main(int argc, char **argv)
{
    int rank, size;
    long iters = 10000, warmup = 1000, max_bytes = 4L * 1024 * 1024;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        long *target = NULL;
        if (strcmp(argv[i], "-i") == 0)
            target = &iters;
        else if (strcmp(argv[i], "-w") == 0)
            target = &warmup;
        else if (strcmp(argv[i], "-m") == 0)
            target = &max_bytes;
        if (!target || i + 1 >= argc || atol(argv[i + 1]) < 0) {
            usage(rank, argv[0]);
            MPI_Finalize();
            return 2;
        }
        *target = atol(argv[++i]);
    }
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "latency: needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    if (iters < 1)
        iters = 1;

    char *sbuf = malloc(max_bytes > 0 ? max_bytes : 1);
    char *rbuf = malloc(max_bytes > 0 ? max_bytes : 1);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "latency: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 'a', max_bytes);
    memset(rbuf, 'b', max_bytes);

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\r\n")] = '\0';
        printf("# OSU-style MPI Latency Test (%s)\n", lib);
        printf("# Size          Latency (us)\n");
    }
    for (long n = 0; n <= max_bytes; n = (n == 0) ? 1 : 2 * n) {
        long it = iters, wu = warmup;
        if (n > LARGE_MESSAGE) { /* as OSU: fewer rounds for large messages */
            it = iters / 10 > 0 ? iters / 10 : 1;
            wu = warmup / 10 > 0 ? warmup / 10 : 1;
        }
        double t0 = 0;
        for (long i = 0; i < it + wu; i++) {
            if (i == wu)
                t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(sbuf, (int)n, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)n, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(rbuf, (int)n, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)n, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
        }
        double t = MPI_Wtime() - t0;
        if (rank == 0) {
            printf("%-10ld%18.2f\n", n, t * 1e6 / (2.0 * it));
            fflush(stdout);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
