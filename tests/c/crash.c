/* crash: after MPI_Init and one successful exchange, rank 1 (rank 0 when alone)
 * dies by a signal while the other ranks are blocked in MPI_Recv:
 *   crash segv  -> raise(SIGSEGV)
 *   crash kill  -> kill(getpid(), SIGKILL)
 * An optional second argument says where the others are blocked when it dies:
 *   recv (default)  a receive from MPI_ANY_SOURCE nobody sends;
 *   rndv            rank 0 in an 8 MiB receive (rendezvous) the victim started to send
 *                   (MPI_Isend), the others as for recv;
 *   allreduce       an allreduce of 1 MiB that the victim never joins.
 * The harness expects a non-zero exit of the launcher within a bounded time,
 * the dead rank named on stderr, and nothing left behind. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <signal.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, token = 0;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *how = (argc > 1) ? argv[1] : "segv";
    const char *where = (argc > 2) ? argv[2] : "recv";
    CHECK(strcmp(how, "segv") == 0 || strcmp(how, "kill") == 0,
          "usage: crash segv|kill [recv|rndv|allreduce] (got \"%s\")", how);
    CHECK(strcmp(where, "recv") == 0 || strcmp(where, "rndv") == 0 || strcmp(where, "allreduce") == 0,
          "usage: crash segv|kill [recv|rndv|allreduce] (got \"%s\")", where);
    enum { BIG = 8 << 20, VEC = (1 << 20) / 8 };
    char *big = calloc(BIG, 1);
    double *vec = calloc(VEC, sizeof(double)), *sum = calloc(VEC, sizeof(double));

    /* one good exchange: every rank is wired up before the crash */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 1, &token, 1, MPI_INT, left, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK(token == left, "exchange before the crash: got %d, expected %d", token, left);

    int victim = (size > 1) ? 1 : 0;
    if (rank == victim) {
        MPI_Request rq;
        if (strcmp(where, "rndv") == 0 && victim != 0)
            MPI_Isend(big, BIG, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &rq);
        struct timespec ts = {0, 200 * 1000 * 1000}; /* let the others block first */
        nanosleep(&ts, NULL);
        fprintf(stderr, "crash: rank %d (pid %d) dies by %s now\n", rank, (int)getpid(),
                strcmp(how, "kill") == 0 ? "SIGKILL" : "SIGSEGV");
        fflush(stderr);
        if (strcmp(how, "kill") == 0)
            kill(getpid(), SIGKILL);
        else
            raise(SIGSEGV);
        fprintf(stderr, "crash: UNEXPECTED: rank %d survived its signal\n", rank);
        return 0;
    }
    if (strcmp(where, "rndv") == 0 && rank == 0)
        MPI_Recv(big, BIG, MPI_BYTE, victim, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else if (strcmp(where, "allreduce") == 0)
        MPI_Allreduce(vec, sum, VEC, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else
        MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "crash: UNEXPECTED: rank %d completed its %s\n", rank, where);
    MPI_Finalize();
    return 0;
}
