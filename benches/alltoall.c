/* alltoall: osu_alltoall-style MPI_Alltoall latency; size = bytes sent by
 * each rank to each rank, 1 B .. 16 MiB.
 * Usage: mpirun -n N ./alltoall [-i iters] [-x warmup] [-m [min:]max] [--quick] */
#include "osu_util.h"

static int run(const struct osu_coll_ctx *c)
{
    return MPI_Alltoall(c->sbuf, (int)c->size, MPI_CHAR, c->rbuf, (int)c->size, MPI_CHAR,
                        MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    return osu_coll_main(argc, argv, "All-to-All Personalized Exchange Latency", "alltoall", 1,
                         -1, -1, run);
}
