/* MPI_Comm_spawn with the `host` info key: `spawn_host HOST` spawns two copies of itself
 * on HOST from MPI_COMM_SELF; each child sends its host name back. Prints the placements
 * and "spawn_host: OK" when both children ran on HOST (tests/tests/multihost.rs runs it on
 * network-namespace hosts). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm parent, ic;
    char host[256] = "", got[256];
    gethostname(host, sizeof host);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        MPI_Send(host, 256, MPI_CHAR, 0, 0, parent);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: spawn_host HOST\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "host", argv[1]);
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    MPI_Comm_spawn(self, MPI_ARGV_NULL, 2, info, 0, MPI_COMM_SELF, &ic, MPI_ERRCODES_IGNORE);
    MPI_Info_free(&info);
    int ok = 1;
    for (int i = 0; i < 2; i++) {
        MPI_Recv(got, 256, MPI_CHAR, i, 0, ic, MPI_STATUS_IGNORE);
        printf("parent on %s: child %d on %s\n", host, i, got);
        if (strcmp(got, argv[1]) != 0) ok = 0;
    }
    MPI_Comm_disconnect(&ic);
    printf(ok ? "spawn_host: OK\n" : "spawn_host: FAILED\n");
    MPI_Finalize();
    return !ok;
}
