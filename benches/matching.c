/* matching: cost of message matching against a deep queue of posted receives.
 * Usage: mpirun -n 2 ./matching [-i iters] [-x warmup] [-m [min:]max] [--quick]
 *
 * For each depth N (1, 2, 5, 10, 20, 50, ... 10000; --quick: 1, 10, 100, 1000),
 * one round is:
 *   rank 1 pre-posts B batches of N MPI_Irecv (one int each; batch b uses the
 *   tags 0..N-1 again), with B = ceil(1000 / N) so that every round carries
 *   at least 1000 messages (100 with --quick); it starts its clock and sends
 *   a "ready" message;
 *   rank 0 then sends batch after batch, each in reverse tag order (N-1
 *   first). Receives with equal tags match in posting order, so batch b's
 *   messages match batch b's receives, and a queue searched in posting order
 *   walks past the N-1 older receives of the batch for the first message,
 *   N-2 for the next, ...: the search depth is N whatever B is;
 *   rank 1 stops its clock when MPI_Waitall returns, then checks every payload.
 * Prints, from rank 1's clock, the median over the rounds of the time per
 * message in ns and of the time of a whole round in us (medians, not OSU's
 * means: a round can be short, and one preemption on a busy machine would
 * dominate a mean). Rounds per depth: max(10, 200 * iters / messages per
 * round), iters being -i (default 200: at least 40000 messages per depth),
 * after max(1, rounds / 10) warm-up rounds (-x sets them; --quick: 3 rounds).
 * Batching keeps the fixed cost of a round (the "ready" message) below a few
 * percent of the per-message figure at every depth, so depths compare fairly. */
#include "osu_util.h"

#define TAG_READY 30000
#define TAG_RESULT 30001

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const long depths[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000};
static const long quick_depths[] = {1, 10, 100, 1000};

int main(int argc, char **argv)
{
    struct osu_options o;
    int rank, nprocs;
    int explicit_skip = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-x") == 0 || strcmp(argv[i], "-w") == 0)
            explicit_skip = 1;
    osu_init(&argc, &argv, OSU_MATCH, &o, &rank, &nprocs);
    osu_require_ranks(nprocs, 2, 0, "matching");
    if (o.max_size > 30000) {
        OSU_PRINTF0("matching: depth at most 30000 (tags must stay below MPI_TAG_UB)\n");
        osu_exit(2);
    }

    const long *list = o.quick ? quick_depths : depths;
    int nlist = o.quick ? (int)(sizeof quick_depths / sizeof quick_depths[0])
                        : (int)(sizeof depths / sizeof depths[0]);
    long min_round = o.quick ? 100 : 1000;
    long maxmsgs = (o.max_size > 0 ? o.max_size : 1) + min_round;
    int *rbuf = osu_alloc(sizeof(int) * maxmsgs, 0);
    MPI_Request *req = osu_alloc(sizeof(MPI_Request) * maxmsgs, 0);
    osu_print_header("Matching Depth", "# Depth       Time/msg (ns)    Round (us)");

    for (int d = 0; d < nlist; d++) {
        long n = list[d];
        if (n < o.min_size || n > o.max_size)
            continue;
        long batches = (min_round + n - 1) / n;
        long msgs = batches * n;
        long reps = 200 * o.iterations / msgs;
        if (reps < 10)
            reps = 10;
        if (o.quick)
            reps = 3;
        long skip = explicit_skip ? o.skip : (reps / 10 > 0 ? reps / 10 : 1);
        double *round_s = osu_alloc(sizeof(double) * reps, 0);
        double median = 0;
        OSU_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        for (long r = 0; r < reps + skip; r++) {
            if (rank == 1) {
                int ready = 0;
                for (long k = 0; k < msgs; k++) {
                    rbuf[k] = -1;
                    OSU_CHECK(MPI_Irecv(&rbuf[k], 1, MPI_INT, 0, (int)(k % n), MPI_COMM_WORLD, &req[k]));
                }
                double t0 = MPI_Wtime();
                OSU_CHECK(MPI_Send(&ready, 1, MPI_INT, 0, TAG_READY, MPI_COMM_WORLD));
                OSU_CHECK(MPI_Waitall((int)msgs, req, MPI_STATUSES_IGNORE));
                double t1 = MPI_Wtime();
                if (r >= skip)
                    round_s[r - skip] = t1 - t0;
                for (long k = 0; k < msgs; k++) {
                    if (rbuf[k] != (int)k) {
                        fprintf(stderr, "matching: depth %ld: receive %ld (tag %ld) got %d\n", n, k,
                                k % n, rbuf[k]);
                        MPI_Abort(MPI_COMM_WORLD, 4);
                    }
                }
            } else if (rank == 0) {
                int ready;
                OSU_CHECK(MPI_Recv(&ready, 1, MPI_INT, 1, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                for (long b = 0; b < batches; b++) {
                    for (long t = n - 1; t >= 0; t--) {
                        int v = (int)(b * n + t);
                        OSU_CHECK(MPI_Send(&v, 1, MPI_INT, 1, (int)t, MPI_COMM_WORLD));
                    }
                }
            }
        }
        if (rank == 1) {
            qsort(round_s, (size_t)reps, sizeof(double), cmp_double);
            median = reps % 2 ? round_s[reps / 2] : 0.5 * (round_s[reps / 2 - 1] + round_s[reps / 2]);
            OSU_CHECK(MPI_Send(&median, 1, MPI_DOUBLE, 0, TAG_RESULT, MPI_COMM_WORLD));
        }
        if (rank == 0) {
            OSU_CHECK(MPI_Recv(&median, 1, MPI_DOUBLE, 1, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            printf("%-10ld%18.2f%18.2f\n", n, median * 1e9 / (double)msgs, median * 1e6);
            fflush(stdout);
        }
        free(round_s);
    }
    free(rbuf);
    free(req);
    MPI_Finalize();
    return 0;
}
