/* Polling loops on an oversubscribed host: 4 ranks on 2 CPUs (the test runs mpirun
 * under `taskset -c 0,1`), ranks 0 and 2 ping-pong small messages while ranks 1 and 3
 * wait for a message that comes only at the end by polling with one nonblocking call in
 * a loop, as HPL's idle ranks do with MPI_Iprobe. OxMPI binds ranks 0,1 to one CPU and
 * 2,3 to the other, so each ping-pong message needs the CPU its poller holds: unless a
 * poll that finds nothing gives the CPU away, every message waits for a time slice
 * (milliseconds; ITERS round trips then take minutes, past the launcher's timeout).
 *
 *   poll_loops MODE [ITERS]   MODE: iprobe improbe test testany testall testsome
 *                                   get_status parrived win_test
 * Checked: the polled message's contents, and the ping-pong's. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errors = 0, rank;
#define CHECK(cond, ...) do { if (!(cond)) { errors++; fprintf(stderr, "rank %d: ", rank); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "iprobe";
    int iters = argc > 2 ? atoi(argv[2]) : 10000;
    if (size != 4) {
        if (rank == 0) fprintf(stderr, "poll_loops needs 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int pscw = !strcmp(mode, "win_test");
    /* win_test: the pollers expose a window to their ping-pong neighbour (PSCW), which
     * puts the final value and completes its access epoch at the end. */
    int winbuf = -1;
    MPI_Win win = MPI_WIN_NULL;
    if (pscw) MPI_Win_create(&winbuf, sizeof winbuf, sizeof winbuf, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Group world, pair;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int partner = rank % 2 ? rank - 1 : rank + 1;
    MPI_Group_incl(world, 1, &partner, &pair);
    /* Pollers post what they will poll before the barrier, so the message cannot come
     * first (parrived needs the partitioned pair started on both sides). */
    int got[4] = {0}, go = 0;
    MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int sent[4] = {rank * 10 + 1, rank * 10 + 2, rank * 10 + 3, rank * 10 + 4};
    int parted = !strcmp(mode, "parrived");
    if (parted) {
        if (rank % 2) MPI_Precv_init(got, 4, 1, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]);
        else MPI_Psend_init(sent, 4, 1, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &rq[0]);
        MPI_Start(&rq[0]);
    } else if (rank % 2 && !pscw && strcmp(mode, "iprobe") && strcmp(mode, "improbe")) {
        MPI_Irecv(got, 4, MPI_INT, partner, 2, MPI_COMM_WORLD, &rq[0]);
    }
    if (pscw) {
        if (rank % 2) MPI_Win_post(pair, 0, win);
        else MPI_Win_start(pair, 0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank % 2 == 0) {
        double buf[8];
        int peer = 2 - rank;
        for (int i = 0; i < iters; i++) {
            if (rank == 0) {
                for (int k = 0; k < 8; k++) buf[k] = i + k;
                MPI_Send(buf, 8, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, 8, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                CHECK(buf[7] == i + 7 + 1, "round trip %d came back as %g", i, buf[7]);
                if (buf[7] != i + 7 + 1) break;
            } else {
                MPI_Recv(buf, 8, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int k = 0; k < 8; k++) buf[k] += 1;
                MPI_Send(buf, 8, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD);
            }
        }
        /* Release the poller. */
        if (parted) MPI_Pready_range(0, 3, rq[0]);
        else if (pscw) {
            int v = rank * 10 + 1;
            MPI_Put(&v, 1, MPI_INT, partner, 0, 1, MPI_INT, win);
            MPI_Win_complete(win);
        } else MPI_Send(sent, 4, MPI_INT, partner, 2, MPI_COMM_WORLD);
        if (parted) MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    } else {
        MPI_Status st;
        long polls = 0;
        MPI_Message msg;
        do {
            polls++;
            if (!strcmp(mode, "iprobe")) MPI_Iprobe(partner, 2, MPI_COMM_WORLD, &go, &st);
            else if (!strcmp(mode, "improbe")) MPI_Improbe(partner, 2, MPI_COMM_WORLD, &go, &msg, &st);
            else if (!strcmp(mode, "test")) MPI_Test(&rq[0], &go, &st);
            else if (!strcmp(mode, "testany")) { int idx; MPI_Testany(2, rq, &idx, &go, &st); }
            else if (!strcmp(mode, "testall")) MPI_Testall(2, rq, &go, MPI_STATUSES_IGNORE);
            else if (!strcmp(mode, "testsome")) { int n, idx[2]; MPI_Testsome(2, rq, &n, idx, MPI_STATUSES_IGNORE); go = n > 0; }
            else if (!strcmp(mode, "get_status")) MPI_Request_get_status(rq[0], &go, &st);
            else if (!strcmp(mode, "parrived")) MPI_Parrived(rq[0], 0, &go);
            else if (!strcmp(mode, "win_test")) MPI_Win_test(win, &go);
            else { fprintf(stderr, "poll_loops: unknown mode %s\n", mode); MPI_Abort(MPI_COMM_WORLD, 2); }
        } while (!go);
        if (!strcmp(mode, "iprobe")) MPI_Recv(got, 4, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else if (!strcmp(mode, "improbe")) MPI_Mrecv(got, 4, MPI_INT, &msg, MPI_STATUS_IGNORE);
        else if (!strcmp(mode, "get_status") || parted) MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
        if (pscw) CHECK(winbuf == partner * 10 + 1, "window holds %d, expected %d", winbuf, partner * 10 + 1);
        else
            for (int k = 0; k < 4; k++) CHECK(got[k] == partner * 10 + k + 1, "%s: element %d is %d, expected %d", mode, k, got[k], partner * 10 + k + 1);
        CHECK(polls > 0, "no poll");
    }
    if (parted) MPI_Request_free(&rq[0]);
    if (pscw) MPI_Win_free(&win);
    MPI_Group_free(&pair);
    MPI_Group_free(&world);
    int all;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(all ? "poll_loops %s: %d errors\n" : "poll_loops %s: OK\n", mode, all);
    MPI_Finalize();
    return all != 0;
}
