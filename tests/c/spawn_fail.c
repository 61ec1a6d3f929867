/* Failures across a spawn. `spawn_fail crash`: a spawned child kills itself (SIGKILL)
 * while the parents wait for it; the whole job must end, non-zero. `spawn_fail parent`:
 * the parent's rank 0 aborts (SIGABRT) while its children wait for it; the children must
 * not outlive it. `spawn_fail wait`: the children keep working 1 s after the parent
 * disconnected; the parent's MPI_Finalize waits for them and the job ends cleanly. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm parent, ic;
    int rank, v = 0;
    MPI_Comm_get_parent(&parent);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 1 ? argv[1] : "crash";
    if (parent != MPI_COMM_NULL) {
        if (strcmp(mode, "crash") == 0 && rank == 1) raise(SIGKILL);
        if (strcmp(mode, "wait") == 0) {
            MPI_Comm_disconnect(&parent);
            usleep(1000000);
            FILE *f = fopen(argv[2], "a");
            fprintf(f, "child %d done\n", rank);
            fclose(f);
        } else {
            MPI_Recv(&v, 1, MPI_INT, 0, 0, parent, MPI_STATUS_IGNORE);
        }
        MPI_Finalize();
        return 0;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    char *args[] = {(char *)mode, argc > 2 ? argv[2] : "-", NULL};
    MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
    printf("spawned\n");
    fflush(stdout);
    if (strcmp(mode, "parent") == 0 && rank == 0) {
        usleep(200000);
        abort();
    }
    if (strcmp(mode, "wait") == 0) {
        MPI_Comm_disconnect(&ic);
        MPI_Finalize();
        if (rank == 0) printf("spawn_fail: OK\n");
        return 0;
    }
    MPI_Recv(&v, 1, MPI_INT, 0, 0, ic, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
