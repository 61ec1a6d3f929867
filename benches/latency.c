/* latency: osu_latency-style one-way latency between ranks 0 and 1.
 * Usage: mpirun -n 2 ./latency [-i iters] [-x warmup] [-m [min:]max] [--quick]
 * For each size (1 B .. 16 MiB, doubling): warm-up round trips, then timed
 * blocking ping-pongs (MPI_Send/MPI_Recv); prints round-trip time / 2 in us.
 * Ranks beyond 1 idle. */
#include "osu_util.h"

int main(int argc, char **argv)
{
    struct osu_options o;
    int rank, nprocs;
    osu_init(&argc, &argv, OSU_LAT, &o, &rank, &nprocs);
    osu_require_ranks(nprocs, 2, 0, "latency");

    char *sbuf = osu_alloc(o.max_size, 'a');
    char *rbuf = osu_alloc(o.max_size, 'b');
    osu_print_header("Latency", "# Size          Latency (us)");

    for (long size = osu_first_size(&o, 0); size <= o.max_size; size = osu_next_size(&o, size)) {
        long iters = osu_iters(&o, size), skip = osu_skip(&o, size);
        double t0 = 0, t1 = 0;
        OSU_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip)
                t0 = MPI_Wtime();
            if (rank == 0) {
                OSU_CHECK(MPI_Send(sbuf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD));
                OSU_CHECK(MPI_Recv(rbuf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else if (rank == 1) {
                OSU_CHECK(MPI_Recv(rbuf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                OSU_CHECK(MPI_Send(sbuf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD));
            }
        }
        t1 = MPI_Wtime();
        if (rank == 0) {
            printf("%-10ld%18.2f\n", size, (t1 - t0) * 1e6 / (2.0 * iters));
            fflush(stdout);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
