/* gather: osu_gather-style MPI_Gather latency (root 0); size = bytes
 * contributed by each rank, 1 B .. 16 MiB.
 * Usage: mpirun -n N ./gather [-i iters] [-x warmup] [-m [min:]max] [--quick] */
#include "osu_util.h"

static int run(const struct osu_coll_ctx *c)
{
    return MPI_Gather(c->sbuf, (int)c->size, MPI_CHAR, c->rbuf, (int)c->size, MPI_CHAR, 0,
                      MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    return osu_coll_main(argc, argv, "Gather Latency", "gather", 1, 1, -1, run);
}
