/* where: every rank reports where it runs, gathered to rank 0, which prints one line per
 * rank in rank order:
 *   where: rank R host H local L/N
 * (H: the host name, L/N: MPI_LOCALRANKID/MPI_LOCALNRANKS from the launcher, "-" when
 * unset), after a message went round all ranks. The harness compares the lines with the
 * placement it asked for. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <unistd.h>

enum { LINE = 160 };

int main(int argc, char **argv)
{
    int rank, size;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char host[64] = "?";
    gethostname(host, sizeof host - 1);
    const char *lr = getenv("MPI_LOCALRANKID"), *ln = getenv("MPI_LOCALNRANKS");
    char line[LINE];
    snprintf(line, LINE, "where: rank %d host %s local %s/%s", rank, host, lr ? lr : "-", ln ? ln : "-");
    char *all = rank == 0 ? calloc((size_t)size, LINE) : NULL;
    MPI_Gather(line, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
    /* A token round the ring: every pair of neighbours talks, whatever their hosts. */
    int token = rank == 0 ? 1 : 0;
    if (size > 1) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
        }
        if (rank == 0)
            CHECK(token == size, "token came back as %d, expected %d", token, size);
    }
    if (rank == 0) {
        for (int r = 0; r < size; r++)
            printf("%s\n", all + (size_t)r * LINE);
        printf("where: OK (%d ranks)\n", size);
        free(all);
    }
    MPI_Finalize();
    return 0;
}
