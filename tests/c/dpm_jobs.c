/* Two jobs (two mpiruns) meet through a port: `dpm_jobs server FILE` opens a port on its
 * rank 0, writes the name to FILE and accepts; `dpm_jobs client FILE` reads it and
 * connects. Checked across the jobs: sizes, point-to-point both ways at 4 B and 4 MiB,
 * an intercommunicator allreduce and bcast, a merged intracommunicator's allreduce and
 * alltoall; then both disconnect, and the server goes on alone after the client job has
 * ended (its connections closing must not fail the server). `server FILE N` accepts N
 * clients one after the other. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int errors = 0, wrank, wsize;
#define CHECK(cond, ...) do { if (!(cond)) { errors++; fprintf(stderr, "rank %d: ", wrank); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

static void traffic(MPI_Comm ic, int server) {
    int lsize, rsize, lrank;
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_rank(ic, &lrank);
    for (int big = 0; big < 2; big++) {
        int n = big ? (1 << 20) : 1;
        int *out = malloc(n * sizeof(int)), *in = malloc(n * sizeof(int));
        for (int i = 0; i < n; i++) out[i] = server * 7000000 + lrank * 1000 + i;
        MPI_Request rq;
        MPI_Isend(out, n, MPI_INT, lrank % rsize, big, ic, &rq);
        for (int r = lrank; r < rsize; r += lsize) {
            MPI_Recv(in, n, MPI_INT, r, big, ic, MPI_STATUS_IGNORE);
            for (int i = 0; i < n; i++)
                if (in[i] != (1 - server) * 7000000 + r * 1000 + i) { CHECK(0, "element %d from remote %d: %d", i, r, in[i]); break; }
        }
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        free(out);
        free(in);
    }
    int one = 1, got = 0;
    MPI_Allreduce(&one, &got, 1, MPI_INT, MPI_SUM, ic);
    CHECK(got == rsize, "intercomm allreduce %d, expected %d", got, rsize);
    int v = server ? 99 : -1;
    if (server) MPI_Bcast(&v, 1, MPI_INT, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
    else MPI_Bcast(&v, 1, MPI_INT, 0, ic);
    CHECK(v == 99 || server, "bcast from the server gave %d", v);
    MPI_Comm m;
    MPI_Intercomm_merge(ic, !server, &m);
    int mr, ms;
    MPI_Comm_rank(m, &mr);
    MPI_Comm_size(m, &ms);
    CHECK(ms == lsize + rsize && mr == (server ? lrank : rsize + lrank), "merged %d of %d", mr, ms);
    int *a = malloc(ms * sizeof(int)), *b = malloc(ms * sizeof(int));
    for (int i = 0; i < ms; i++) a[i] = mr * 100 + i;
    MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, m);
    for (int i = 0; i < ms; i++) CHECK(b[i] == i * 100 + mr, "alltoall from %d: %d", i, b[i]);
    free(a);
    free(b);
    MPI_Comm_free(&m);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (argc < 3) {
        if (wrank == 0) fprintf(stderr, "usage: dpm_jobs server|client FILE [clients]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int server = strcmp(argv[1], "server") == 0;
    const char *file = argv[2];
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm ic;
    if (server) {
        int clients = argc > 3 ? atoi(argv[3]) : 1;
        if (wrank == 0) {
            MPI_Open_port(MPI_INFO_NULL, port);
            /* Published under the file's name before the file appears. */
            MPI_Publish_name(file, MPI_INFO_NULL, port);
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s.tmp", file);
            FILE *f = fopen(tmp, "w");
            fprintf(f, "%s\n", port);
            fclose(f);
            rename(tmp, file);
        }
        for (int c = 0; c < clients; c++) {
            MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic);
            traffic(ic, 1);
            MPI_Comm_disconnect(&ic);
        }
        /* The clients are gone (or going): the server's own work goes on. */
        usleep(300000);
        int one = 1, sum = 0;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(sum == wsize, "server allreduce after the clients left: %d", sum);
        if (wrank == 0) {
            MPI_Unpublish_name(file, MPI_INFO_NULL, port);
            MPI_Close_port(port);
            unlink(file);
        }
    } else {
        if (wrank == 0) {
            FILE *f = NULL;
            for (int i = 0; i < 600 && !(f = fopen(file, "r")); i++) usleep(50000);
            CHECK(f != NULL, "no port name in %s", file);
            if (f) {
                CHECK(fgets(port, sizeof port, f) != NULL, "empty %s", file);
                port[strcspn(port, "\n")] = 0;
                fclose(f);
            }
            char looked[MPI_MAX_PORT_NAME] = "";
            MPI_Lookup_name(file, MPI_INFO_NULL, looked);
            CHECK(strcmp(looked, port) == 0, "MPI_Lookup_name gave '%s', the file '%s'", looked, port);
        }
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic);
        traffic(ic, 0);
        MPI_Comm_disconnect(&ic);
    }
    int all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) printf("dpm_jobs %s: %s\n", argv[1], all ? "FAILED" : "OK");
    MPI_Finalize();
    return all != 0;
}
