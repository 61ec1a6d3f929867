/* Profiling interface: with the tool library pmpi_tool.c linked before libmpi, or
 * preloaded (argument "preload=<path>": the program re-executes itself with LD_PRELOAD),
 * the tool's MPI_Send/MPI_Isend/MPI_Barrier see every call the program makes, and
 * none of the library's internal calls. Argument "none": no tool, counters absent. */
#define _GNU_SOURCE
#include "testutil.h"
#include <dlfcn.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "linked";
    if (strncmp(mode, "preload=", 8) == 0 && !getenv("LD_PRELOAD")) {
        setenv("LD_PRELOAD", mode + 8, 1);
        execv("/proc/self/exe", argv);
        perror("execv");
        return 1;
    }
    int rank, size;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *sends = dlsym(RTLD_DEFAULT, "pmpi_tool_sends");
    int *isends = dlsym(RTLD_DEFAULT, "pmpi_tool_isends");
    int *barriers = dlsym(RTLD_DEFAULT, "pmpi_tool_barriers");
    int expect_tool = strcmp(mode, "none") != 0;
    CHECK((sends != NULL) == expect_tool, "tool %s but mode is %s", sends ? "present" : "absent", mode);

    /* Ring: 5 MPI_Send and 3 MPI_Isend per rank, 2 barriers, plus collectives and
     * communicator calls that use point-to-point inside the library. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size, x = rank, y;
    for (int i = 0; i < 5; i++) {
        MPI_Request r;
        MPI_Irecv(&y, 1, MPI_INT, left, i, MPI_COMM_WORLD, &r);
        MPI_Send(&x, 1, MPI_INT, right, i, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(y == left, "ring value %d", y);
    }
    for (int i = 0; i < 3; i++) {
        MPI_Request r[2];
        MPI_Irecv(&y, 1, MPI_INT, left, 10 + i, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(&x, 1, MPI_INT, right, 10 + i, MPI_COMM_WORLD, &r[1]);
        MPI_Status st[2];
        MPI_Waitall(2, r, st);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int s = 0;
    MPI_Allreduce(&x, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_free(&d);
    MPI_Barrier(MPI_COMM_WORLD);
    if (expect_tool) {
        CHECK(*sends == 5 && *isends == 3 && *barriers == 2, "tool counted %d sends, %d isends, %d barriers (expected 5, 3, 2)", *sends, *isends, *barriers);
    }
    if (rank == 0)
        printf("pmpi_interpose: OK (%s)\n", strncmp(mode, "preload=", 8) == 0 ? "preload" : mode);
    MPI_Finalize();
    return 0;
}
