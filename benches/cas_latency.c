/* cas_latency: osu_cas_latency-style MPI_Compare_and_swap latency, rank 0 -> rank 1.
 * Usage: mpirun -n 2 ./cas_latency [-s flush|flush_local|lock|lock_all|fence|pscw]
 *            [-w allocate|create|dynamic] [-i iters] [-x warmup] [--quick]
 * One MPI_Compare_and_swap (one MPI_LONG_LONG) and the synchronisation of -s
 * per iteration (default: MPI_Win_flush inside one MPI_Win_lock epoch); prints
 * one line, size 8, the time per operation in us (fence and pscw: ping-pong,
 * half the round trip). See rma_util.h. */
#include "rma_util.h"

static int cas_op(const struct rma_ctx *c, int target, int j)
{
    (void)j;
    return MPI_Compare_and_swap(c->obuf, c->cbuf, c->rbuf, MPI_LONG_LONG, target, c->disp, c->win);
}

static void cas_fill(struct rma_ctx *c)
{
    long long one = 1, zero = 0;
    memcpy(c->obuf, &one, sizeof one);   /* swap in 1 ... */
    memcpy(c->cbuf, &zero, sizeof zero); /* ... where the target holds 0 (the first time only) */
}

int main(int argc, char **argv)
{
    static const struct rma_bench b = {"Compare_and_swap Latency", "cas_latency", OSU_LAT,
                                       "MPI_LONG_LONG", 8, 8, cas_op, cas_fill};
    return rma_main(argc, argv, &b);
}
