/* fop_latency: osu_fop_latency-style MPI_Fetch_and_op latency, rank 0 -> rank 1.
 * Usage: mpirun -n 2 ./fop_latency [-s flush|flush_local|lock|lock_all|fence|pscw]
 *            [-w allocate|create|dynamic] [-i iters] [-x warmup] [--quick]
 * One MPI_Fetch_and_op (one MPI_LONG_LONG, MPI_SUM) and the synchronisation
 * of -s per iteration (default: MPI_Win_flush inside one MPI_Win_lock epoch);
 * prints one line, size 8, the time per operation in us (fence and pscw:
 * ping-pong, half the round trip). See rma_util.h. */
#include "rma_util.h"

static int fop_op(const struct rma_ctx *c, int target, int j)
{
    (void)j;
    return MPI_Fetch_and_op(c->obuf, c->rbuf, MPI_LONG_LONG, target, c->disp, MPI_SUM, c->win);
}

static void fop_fill(struct rma_ctx *c)
{
    long long one = 1;
    memcpy(c->obuf, &one, sizeof one);
}

int main(int argc, char **argv)
{
    static const struct rma_bench b = {"Fetch_and_op Latency", "fop_latency", OSU_LAT,
                                       "MPI_LONG_LONG, MPI_SUM", 8, 8, fop_op, fop_fill};
    return rma_main(argc, argv, &b);
}
