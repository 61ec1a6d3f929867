/* barrier: osu_barrier-style MPI_Barrier latency (no message size).
 * Usage: mpirun -n N ./barrier [-i iters] [-x warmup] [--quick]
 * Each rank times iterations of MPI_Barrier after warm-up; prints the average
 * over ranks of the per-rank mean, then min, max and the iteration count. */
#include "osu_util.h"

int main(int argc, char **argv)
{
    struct osu_options o;
    int rank, nprocs;
    double t0, local_us, min_us, avg_us, max_us;
    osu_init(&argc, &argv, OSU_COLL, &o, &rank, &nprocs);
    osu_print_header("Barrier Latency",
                     "# Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations");
    for (long i = 0; i < o.skip; i++)
        OSU_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    t0 = MPI_Wtime();
    for (long i = 0; i < o.iterations; i++)
        OSU_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    local_us = (MPI_Wtime() - t0) * 1e6 / o.iterations;
    osu_coll_stats(local_us, nprocs, &min_us, &avg_us, &max_us);
    if (rank == 0) {
        printf("%18.2f%18.2f%18.2f%12ld\n", avg_us, min_us, max_us, o.iterations);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
