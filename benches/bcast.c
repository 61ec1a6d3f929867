/* bcast: osu_bcast-style MPI_Bcast latency (root 0), 1 B .. 16 MiB.
 * Usage: mpirun -n N ./bcast [-i iters] [-x warmup] [-m [min:]max] [--quick]
 * Prints per size the average (over ranks) of each rank's mean time per
 * call in us, then min, max and the iteration count. */
#include "osu_util.h"

static int run(const struct osu_coll_ctx *c)
{
    return MPI_Bcast(c->sbuf, (int)c->size, MPI_CHAR, 0, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    return osu_coll_main(argc, argv, "Broadcast Latency", "bcast", 1, 1, 1, run);
}
