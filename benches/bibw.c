/* bibw: osu_bibw-style bidirectional bandwidth between ranks 0 and 1.
 * Usage: mpirun -n 2 ./bibw [-i iters] [-x warmup] [-m [min:]max] [-W window] [--quick]
 * Each iteration: both ranks post `window` (default 64) MPI_Irecv, then
 * `window` MPI_Isend, and MPI_Waitall on all of them. Prints the sum of both
 * directions in MB/s (10^6 bytes per second). */
#include "osu_util.h"

int main(int argc, char **argv)
{
    struct osu_options o;
    int rank, nprocs;
    osu_init(&argc, &argv, OSU_BW, &o, &rank, &nprocs);
    osu_require_ranks(nprocs, 2, 0, "bibw");

    char *sbuf = osu_alloc(o.max_size, 'a');
    char *rbuf = osu_alloc(o.max_size, 'b');
    MPI_Request *req = osu_alloc(sizeof(MPI_Request) * 2 * o.window, 0);
    osu_print_header("Bi-Directional Bandwidth", "# Size      Bandwidth (MB/s)");

    for (long size = osu_first_size(&o, 0); size <= o.max_size; size = osu_next_size(&o, size)) {
        long iters = osu_iters(&o, size), skip = osu_skip(&o, size);
        double t0 = 0, t1 = 0;
        OSU_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip)
                t0 = MPI_Wtime();
            if (rank <= 1) {
                int peer = 1 - rank;
                for (int w = 0; w < o.window; w++)
                    OSU_CHECK(MPI_Irecv(rbuf, (int)size, MPI_CHAR, peer, 10, MPI_COMM_WORLD, &req[w]));
                for (int w = 0; w < o.window; w++)
                    OSU_CHECK(MPI_Isend(sbuf, (int)size, MPI_CHAR, peer, 10, MPI_COMM_WORLD,
                                        &req[o.window + w]));
                OSU_CHECK(MPI_Waitall(2 * o.window, req, MPI_STATUSES_IGNORE));
            }
        }
        t1 = MPI_Wtime();
        if (rank == 0) {
            double bytes = 2.0 * (double)size * (double)o.window * (double)iters;
            printf("%-10ld%18.2f\n", size, bytes / 1e6 / (t1 - t0));
            fflush(stdout);
        }
    }
    free(req);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
