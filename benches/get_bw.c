/* get_bw: osu_get_bw-style MPI_Get bandwidth, rank 0 reads from rank 1.
 * Usage: mpirun -n 2 ./get_bw [-s flush|flush_local|lock|lock_all|fence|pscw]
 *            [-w allocate|create|dynamic] [-i iters] [-x warmup] [-m [min:]max] [-W window] [--quick]
 * Per iteration `window` (default 64) MPI_Get of `size` bytes from consecutive
 * offsets of the target window, then the synchronisation of -s (default:
 * MPI_Win_flush inside one MPI_Win_lock epoch); sizes 1 B .. 4 MiB; prints
 * MB/s (10^6 bytes per second). See rma_util.h. */
#include "rma_util.h"

static int get_op(const struct rma_ctx *c, int target, int j)
{
    MPI_Aint off = (MPI_Aint)j * c->size;
    return MPI_Get(c->obuf + off, (int)c->size, MPI_CHAR, target, c->disp + off, (int)c->size,
                   MPI_CHAR, c->win);
}

int main(int argc, char **argv)
{
    static const struct rma_bench b = {"Get Bandwidth", "get_bw", OSU_BW, NULL, 0, 0, get_op, NULL};
    return rma_main(argc, argv, &b);
}
