/* acc_latency: osu_acc_latency-style MPI_Accumulate latency, rank 0 -> rank 1.
 * Usage: mpirun -n 2 ./acc_latency [-s flush|flush_local|lock|lock_all|fence|pscw]
 *            [-w allocate|create|dynamic] [-i iters] [-x warmup] [-m [min:]max] [--quick]
 * One MPI_Accumulate of size/8 MPI_DOUBLE elements with MPI_SUM and the
 * synchronisation of -s per iteration (default: MPI_Win_flush inside one
 * MPI_Win_lock epoch); sizes 8 B .. 4 MiB; prints the time per operation in us
 * (fence and pscw: ping-pong, half the round trip). See rma_util.h.
 * OSU uses MPI_CHAR by default, which MPI_SUM is not defined for (MPI-3.1
 * 5.9.2); MPI_DOUBLE is the common real-world case and valid everywhere. */
#include "rma_util.h"

static int acc_op(const struct rma_ctx *c, int target, int j)
{
    int count = (int)(c->size / (long)sizeof(double));
    (void)j;
    return MPI_Accumulate(c->obuf, count, MPI_DOUBLE, target, c->disp, count, MPI_DOUBLE, MPI_SUM,
                          c->win);
}

static void acc_fill(struct rma_ctx *c)
{
    double *d = (double *)c->obuf;
    for (long k = 0; k < c->size / (long)sizeof(double); k++)
        d[k] = 1.0;
}

int main(int argc, char **argv)
{
    static const struct rma_bench b = {"Accumulate Latency", "acc_latency", OSU_LAT,
                                       "MPI_DOUBLE, MPI_SUM", (long)sizeof(double), 0, acc_op,
                                       acc_fill};
    return rma_main(argc, argv, &b);
}
