/* exit_after_finalize [CODE]: every rank finalizes; then the last rank exits at once with
 * CODE (default 3) while the others wait 300 ms and print a line (as PRK kernels report a
 * bad input: the rank that found it prints, all exit non-zero after MPI_Finalize). The
 * harness expects every other rank's line, and the launcher's exit status CODE: a non-zero
 * exit after MPI_Finalize is no crash, and must not cut the others short. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <time.h>

int main(int argc, char **argv)
{
    int rank, size;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int code = argc > 1 ? atoi(argv[1]) : 3;
    MPI_Finalize();
    if (rank == size - 1 && size > 1)
        return code;
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    printf("exit_after_finalize: rank %d still here after the exit\n", rank);
    return 0;
}
