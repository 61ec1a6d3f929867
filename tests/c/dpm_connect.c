/* Dynamic processes inside one job: MPI_Open_port / MPI_Comm_accept / MPI_Comm_connect
 * between the two halves of MPI_COMM_WORLD, MPI_Comm_join over a TCP socket between
 * ranks 0 and 1, and the error classes of bad port names. Checked: remote sizes and
 * groups, point-to-point both ways, intercommunicator collectives, Intercomm_merge,
 * several connections on one port, disconnect. Any number of ranks (1 skips the pairs). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

static int errors = 0;
#define CHECK(cond, ...) do { if (!(cond)) { errors++; fprintf(stderr, "rank %d: ", wrank); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)
static int wrank, wsize;

/* Traffic over intercommunicator `ic` whose local group is `side` (0 = acceptors). */
static void exercise(MPI_Comm ic, int side, int nlocal, int nremote, int round) {
    int lrank, rsize, lsize, flag;
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_test_inter(ic, &flag);
    CHECK(flag, "not an intercommunicator");
    CHECK(lsize == nlocal && rsize == nremote, "sizes %d/%d, expected %d/%d", lsize, rsize, nlocal, nremote);
    /* The remote group: world ranks of the other half, in order. */
    MPI_Group rg, wg;
    MPI_Comm_remote_group(ic, &rg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; i < rsize; i++) {
        int w;
        MPI_Group_translate_ranks(rg, 1, &i, wg, &w);
        int expect = side == 0 ? (wsize / 2) + i : i;
        CHECK(w == expect, "remote rank %d is world rank %d, expected %d", i, w, expect);
    }
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);
    /* Point to point: every local rank sends to remote rank (lrank % rsize) and receives
     * from every remote rank that targets it; sizes 4 B and 1 MiB (rendezvous). */
    for (int big = 0; big < 2; big++) {
        int n = big ? (1 << 18) : 1;
        int *out = malloc(n * sizeof(int)), *in = malloc(n * sizeof(int));
        for (int i = 0; i < n; i++) out[i] = side * 1000000 + lrank * 1000 + round + i;
        MPI_Request rq;
        MPI_Isend(out, n, MPI_INT, lrank % rsize, 7 + big, ic, &rq);
        for (int r = 0; r < rsize; r++) {
            if (r % lsize != lrank) continue;
            MPI_Status st;
            MPI_Recv(in, n, MPI_INT, r, 7 + big, ic, &st);
            CHECK(st.MPI_SOURCE == r, "source %d, expected %d", st.MPI_SOURCE, r);
            for (int i = 0; i < n; i++)
                if (in[i] != (1 - side) * 1000000 + r * 1000 + round + i) { CHECK(0, "p2p byte %d from %d wrong: %d", i, r, in[i]); break; }
        }
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        free(out);
        free(in);
    }
    /* Collectives: bcast from remote root 0 / local root 0, allreduce across groups. */
    int v = side == 0 ? 4242 + round : -1;
    if (side == 0) MPI_Bcast(&v, 1, MPI_INT, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
    else MPI_Bcast(&v, 1, MPI_INT, 0, ic);
    if (side == 1) CHECK(v == 4242 + round, "bcast gave %d", v);
    int mine = wrank + 1, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, ic);
    /* An intercommunicator allreduce gives each group the remote group's sum. */
    int expect = 0;
    for (int w = 0; w < wsize; w++) if ((w >= wsize / 2) != side) expect += w + 1;
    CHECK(sum == expect, "allreduce %d, expected %d", sum, expect);
    MPI_Barrier(ic);
    /* Merge: acceptors low. */
    MPI_Comm merged;
    MPI_Intercomm_merge(ic, side, &merged);
    int mr, ms, total = 0;
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    CHECK(ms == wsize && mr == wrank, "merged rank %d of %d, expected %d of %d", mr, ms, wrank, wsize);
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, merged);
    CHECK(total == wsize * (wsize + 1) / 2, "merged allreduce %d", total);
    MPI_Comm_free(&merged);
}

static void accept_connect(void) {
    int half = wsize / 2, side = wrank >= half;
    MPI_Comm mine;
    MPI_Comm_split(MPI_COMM_WORLD, side, wrank, &mine);
    char port[MPI_MAX_PORT_NAME] = "";
    if (wrank == 0) {
        MPI_Open_port(MPI_INFO_NULL, port);
        CHECK(strlen(port) > 0 && strlen(port) < MPI_MAX_PORT_NAME, "port name '%s'", port);
        MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, half, 0, MPI_COMM_WORLD);
    } else if (wrank == half) {
        MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    /* Three connections on one port, each used and disconnected; the roots vary. */
    for (int round = 0; round < 3; round++) {
        MPI_Comm ic;
        int nl = side ? wsize - half : half, nr = side ? half : wsize - half;
        int root = round % nl;
        /* The port name matters only at the root; the connecting root of later rounds
         * gets it from the first one. */
        if (side == 1 && root != 0) {
            if (wrank == half) MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, half + root, 1, MPI_COMM_WORLD);
            if (wrank == half + root) MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, half, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        if (side == 0) {
            /* Only rank 0 opened the port: the acceptors' root stays 0. */
            MPI_Comm_accept(port, MPI_INFO_NULL, 0, mine, &ic);
        } else {
            MPI_Comm_connect(port, MPI_INFO_NULL, root, mine, &ic);
        }
        exercise(ic, side, nl, nr, round);
        MPI_Comm_disconnect(&ic);
        CHECK(ic == MPI_COMM_NULL, "disconnect left the handle");
    }
    if (wrank == 0) MPI_Close_port(port);
    MPI_Comm_free(&mine);
}

static void join_pair(void) {
    MPI_Comm ic;
    int fd = -1;
    if (wrank == 0) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bind(l, (struct sockaddr *)&a, sizeof a);
        listen(l, 1);
        socklen_t len = sizeof a;
        getsockname(l, (struct sockaddr *)&a, &len);
        int port = ntohs(a.sin_port);
        MPI_Send(&port, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
        fd = accept(l, NULL, NULL);
        close(l);
    } else if (wrank == 1) {
        int port;
        MPI_Recv(&port, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect to rank 0's socket failed");
    } else {
        return;
    }
    MPI_Comm_join(fd, &ic);
    int rs, v = wrank * 10 + 5, got = -1;
    MPI_Comm_remote_size(ic, &rs);
    CHECK(rs == 1, "join: remote size %d", rs);
    MPI_Sendrecv(&v, 1, MPI_INT, 0, 9, &got, 1, MPI_INT, 0, 9, ic, MPI_STATUS_IGNORE);
    CHECK(got == (1 - wrank) * 10 + 5, "join: got %d", got);
    /* MPI_Comm_disconnect (unlike MPI_Comm_free) returns only when pending communication
     * on the communicator is complete: rank 0 leaves a 1 MiB send (rendezvous) pending,
     * rank 1 posts its receive late and leaves it pending; both requests are complete
     * (and still the user's) when disconnect returns. */
    int n = 1 << 18, *buf = malloc(n * sizeof(int)), flag = 0;
    MPI_Request rq;
    if (wrank == 0) {
        for (int i = 0; i < n; i++) buf[i] = i ^ 0x5a5a;
        MPI_Isend(buf, n, MPI_INT, 0, 10, ic, &rq);
    } else {
        usleep(200000);
        MPI_Irecv(buf, n, MPI_INT, 0, 10, ic, &rq);
    }
    MPI_Comm_disconnect(&ic);
    CHECK(ic == MPI_COMM_NULL, "join: disconnect left the handle");
    MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    CHECK(flag, "join: a request on the communicator was pending after MPI_Comm_disconnect");
    if (!flag) MPI_Wait(&rq, MPI_STATUS_IGNORE);
    if (wrank == 1)
        for (int i = 0; i < n; i++)
            if (buf[i] != (i ^ 0x5a5a)) { CHECK(0, "join: received int %d is %d", i, buf[i]); break; }
    free(buf);
    close(fd);
}

static void bad_ports(void) {
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm ic = MPI_COMM_WORLD;
    int cls, rc = MPI_Comm_connect("no such port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT, "connect to a garbage port: class %d", cls);
    CHECK(ic == MPI_COMM_NULL, "failed connect left a communicator");
    rc = MPI_Close_port("no such port");
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT, "close of a garbage port: class %d", cls);
    char port[MPI_MAX_PORT_NAME];
    /* A connect nobody accepts times out (OXMPI_CONNECT_TIMEOUT, read at each connect). */
    setenv("OXMPI_CONNECT_TIMEOUT", "1", 1);
    MPI_Open_port(MPI_INFO_NULL, port);
    double t0 = MPI_Wtime();
    rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT && MPI_Wtime() - t0 < 30, "connect without accept: class %d after %.1f s", cls, MPI_Wtime() - t0);
    CHECK(ic == MPI_COMM_NULL, "timed-out connect left a communicator");
    MPI_Close_port(port);
    rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT, "accept on a closed port: class %d", cls);
    rc = MPI_Close_port(port);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT, "closing a port twice: class %d", cls);
    rc = MPI_Comm_accept(port, MPI_INFO_NULL, 5, MPI_COMM_SELF, &ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT, "accept with root 5 of 1: class %d", cls);
    /* The name service (a name per rank: they run at once). */
    char service[64], looked[MPI_MAX_PORT_NAME];
    snprintf(service, sizeof service, "oxmpi-dpm-connect-%d-%d", (int)getpid(), wrank);
    MPI_Open_port(MPI_INFO_NULL, port);
    rc = MPI_Publish_name(service, MPI_INFO_NULL, port);
    CHECK(rc == MPI_SUCCESS, "publish: %d", rc);
    rc = MPI_Lookup_name(service, MPI_INFO_NULL, looked);
    CHECK(rc == MPI_SUCCESS && strcmp(looked, port) == 0, "lookup gave %d '%s'", rc, looked);
    rc = MPI_Publish_name(service, MPI_INFO_NULL, port);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SERVICE, "publishing a name twice: class %d", cls);
    rc = MPI_Unpublish_name(service, MPI_INFO_NULL, port);
    CHECK(rc == MPI_SUCCESS, "unpublish: %d", rc);
    rc = MPI_Lookup_name(service, MPI_INFO_NULL, looked);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_NAME, "lookup of an unpublished name: class %d", cls);
    rc = MPI_Unpublish_name(service, MPI_INFO_NULL, port);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SERVICE, "unpublishing twice: class %d", cls);
    /* Left published: MPI_Finalize removes it (the test harness checks no file stays). */
    MPI_Publish_name(service, MPI_INFO_NULL, port);
    MPI_Close_port(port);
    rc = MPI_Comm_join(-1, &ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "join on fd -1: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize >= 2) {
        accept_connect();
        join_pair();
    }
    bad_ports();
    int all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) printf(all ? "dpm_connect: %d errors\n" : "dpm_connect: OK\n", all);
    MPI_Finalize();
    return all != 0;
}
