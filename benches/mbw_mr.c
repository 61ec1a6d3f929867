/* mbw_mr: osu_mbw_mr-style multi-pair bandwidth and message rate.
 * Usage: mpirun -n 2P ./mbw_mr [-i iters] [-x warmup] [-m [min:]max] [-W window] [--quick]
 * Ranks 0..P-1 send to ranks P..2P-1 (rank r pairs with r+P). Each iteration:
 * every sender posts `window` (default 64) MPI_Isend, its receiver the
 * matching MPI_Irecv; MPI_Waitall; the receiver acknowledges with 4 bytes.
 * Time is measured between barriers and taken as the slowest sender's.
 * Prints aggregate MB/s (10^6 B/s) and messages per second over all pairs. */
#include "osu_util.h"

int main(int argc, char **argv)
{
    struct osu_options o;
    int rank, nprocs;
    osu_init(&argc, &argv, OSU_BW, &o, &rank, &nprocs);
    osu_require_ranks(nprocs, 2, 1, "mbw_mr");

    int pairs = nprocs / 2;
    int sender = rank < pairs;
    int peer = sender ? rank + pairs : rank - pairs;
    char *sbuf = osu_alloc(o.max_size, 'a');
    char *rbuf = osu_alloc(o.max_size, 'b');
    MPI_Request *req = osu_alloc(sizeof(MPI_Request) * o.window, 0);
    int ack = 0;
    osu_print_header("Multiple Bandwidth / Message Rate",
                     "# Size                  MB/s        Messages/s");
    OSU_PRINTF0("# Pairs: %d\n", pairs);

    for (long size = osu_first_size(&o, 0); size <= o.max_size; size = osu_next_size(&o, size)) {
        long iters = osu_iters(&o, size), skip = osu_skip(&o, size);
        double t0 = 0, elapsed, max_elapsed = 0;
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip) {
                OSU_CHECK(MPI_Barrier(MPI_COMM_WORLD));
                t0 = MPI_Wtime();
            }
            if (sender) {
                for (int w = 0; w < o.window; w++)
                    OSU_CHECK(MPI_Isend(sbuf, (int)size, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &req[w]));
                OSU_CHECK(MPI_Waitall(o.window, req, MPI_STATUSES_IGNORE));
                OSU_CHECK(MPI_Recv(&ack, 1, MPI_INT, peer, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                for (int w = 0; w < o.window; w++)
                    OSU_CHECK(MPI_Irecv(rbuf, (int)size, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &req[w]));
                OSU_CHECK(MPI_Waitall(o.window, req, MPI_STATUSES_IGNORE));
                OSU_CHECK(MPI_Send(&ack, 1, MPI_INT, peer, 101, MPI_COMM_WORLD));
            }
        }
        elapsed = MPI_Wtime() - t0;
        max_elapsed = osu_max_at_root(elapsed);
        if (rank == 0) {
            double msgs = (double)pairs * (double)o.window * (double)iters;
            double rate = msgs / max_elapsed;
            printf("%-10ld%18.2f%18.2f\n", size, rate * (double)size / 1e6, rate);
            fflush(stdout);
        }
    }
    free(req);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
