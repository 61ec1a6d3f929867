/* allgather: osu_allgather-style MPI_Allgather latency; size = bytes
 * contributed by each rank, 1 B .. 16 MiB.
 * Usage: mpirun -n N ./allgather [-i iters] [-x warmup] [-m [min:]max] [--quick] */
#include "osu_util.h"

static int run(const struct osu_coll_ctx *c)
{
    return MPI_Allgather(c->sbuf, (int)c->size, MPI_CHAR, c->rbuf, (int)c->size, MPI_CHAR,
                         MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    return osu_coll_main(argc, argv, "Allgather Latency", "allgather", 1, 1, -1, run);
}
