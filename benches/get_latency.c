/* get_latency: osu_get_latency-style MPI_Get latency, rank 0 reads from rank 1.
 * Usage: mpirun -n 2 ./get_latency [-s flush|flush_local|lock|lock_all|fence|pscw]
 *            [-w allocate|create|dynamic] [-i iters] [-x warmup] [-m [min:]max] [--quick]
 * One MPI_Get of `size` bytes (MPI_CHAR) and the synchronisation of -s per
 * iteration (default: MPI_Win_flush inside one MPI_Win_lock epoch); sizes
 * 1 B .. 4 MiB; prints the time per operation in us (fence and pscw:
 * ping-pong, half the round trip). See rma_util.h. */
#include "rma_util.h"

static int get_op(const struct rma_ctx *c, int target, int j)
{
    MPI_Aint off = (MPI_Aint)j * c->size;
    return MPI_Get(c->obuf + off, (int)c->size, MPI_CHAR, target, c->disp + off, (int)c->size,
                   MPI_CHAR, c->win);
}

int main(int argc, char **argv)
{
    static const struct rma_bench b = {"Get Latency", "get_latency", OSU_LAT, NULL, 0, 0, get_op, NULL};
    return rma_main(argc, argv, &b);
}
