/* allreduce: osu_allreduce-style MPI_Allreduce latency (MPI_FLOAT, MPI_SUM),
 * 4 B .. 16 MiB (size / 4 floats).
 * Usage: mpirun -n N ./allreduce [-i iters] [-x warmup] [-m [min:]max] [--quick] */
#include "osu_util.h"

static int run(const struct osu_coll_ctx *c)
{
    return MPI_Allreduce(c->sbuf, c->rbuf, (int)(c->size / sizeof(float)), MPI_FLOAT, MPI_SUM,
                         MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    return osu_coll_main(argc, argv, "Allreduce Latency", "allreduce", 4, 1, 1, run);
}
