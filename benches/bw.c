/* bw: osu_bw-style unidirectional bandwidth from rank 0 to rank 1.
 * Usage: mpirun -n 2 ./bw [-i iters] [-x warmup] [-m [min:]max] [-W window] [--quick]
 * Each iteration: rank 0 posts `window` (default 64) MPI_Isend of the same
 * buffer, rank 1 the matching MPI_Irecv; both MPI_Waitall; rank 1 then sends
 * a 4-byte acknowledgement. Prints MB/s (10^6 bytes per second). */
#include "osu_util.h"

int main(int argc, char **argv)
{
    struct osu_options o;
    int rank, nprocs;
    osu_init(&argc, &argv, OSU_BW, &o, &rank, &nprocs);
    osu_require_ranks(nprocs, 2, 0, "bw");

    char *sbuf = osu_alloc(o.max_size, 'a');
    char *rbuf = osu_alloc(o.max_size, 'b');
    MPI_Request *req = osu_alloc(sizeof(MPI_Request) * o.window, 0);
    int ack = 0;
    osu_print_header("Bandwidth", "# Size      Bandwidth (MB/s)");

    for (long size = osu_first_size(&o, 0); size <= o.max_size; size = osu_next_size(&o, size)) {
        long iters = osu_iters(&o, size), skip = osu_skip(&o, size);
        double t0 = 0, t1 = 0;
        OSU_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip)
                t0 = MPI_Wtime();
            if (rank == 0) {
                for (int w = 0; w < o.window; w++)
                    OSU_CHECK(MPI_Isend(sbuf, (int)size, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &req[w]));
                OSU_CHECK(MPI_Waitall(o.window, req, MPI_STATUSES_IGNORE));
                OSU_CHECK(MPI_Recv(&ack, 1, MPI_INT, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else if (rank == 1) {
                for (int w = 0; w < o.window; w++)
                    OSU_CHECK(MPI_Irecv(rbuf, (int)size, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &req[w]));
                OSU_CHECK(MPI_Waitall(o.window, req, MPI_STATUSES_IGNORE));
                OSU_CHECK(MPI_Send(&ack, 1, MPI_INT, 0, 101, MPI_COMM_WORLD));
            }
        }
        t1 = MPI_Wtime();
        if (rank == 0) {
            double bytes = (double)size * (double)o.window * (double)iters;
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
