/* reduce: osu_reduce-style MPI_Reduce latency (MPI_FLOAT, MPI_SUM, root 0),
 * 4 B .. 16 MiB (size / 4 floats).
 * Usage: mpirun -n N ./reduce [-i iters] [-x warmup] [-m [min:]max] [--quick] */
#include "osu_util.h"

static int run(const struct osu_coll_ctx *c)
{
    return MPI_Reduce(c->sbuf, c->rbuf, (int)(c->size / sizeof(float)), MPI_FLOAT, MPI_SUM, 0,
                      MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    return osu_coll_main(argc, argv, "Reduce Latency", "reduce", 4, 1, 1, run);
}
