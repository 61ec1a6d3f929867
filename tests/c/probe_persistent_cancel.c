/* probe_persistent_cancel: MPI_Probe/Iprobe, MPI_Mprobe/Improbe/Mrecv/Imrecv,
 * MPI_PROC_NULL, persistent requests (Send_init, Ssend_init, Bsend_init,
 * Rsend_init, Recv_init, Start, Startall), MPI_Cancel of posted receives
 * (MPI_Test_cancelled), MPI_Request_free, MPI_Request_get_status,
 * Waitany/Waitsome/Testany/Testsome/Testall with MPI_REQUEST_NULL entries,
 * MPI_Get_elements, MPI_Status_set_elements, MPI_Status_set_cancelled.
 * Pairs (0,1), (2,3), ...: the even rank is the sender "A", the odd rank the
 * receiver "B". A rank without a partner plays both roles (A's sends are all
 * nonblocking until B's part has run). */
#include "testutil.h"

static int rank, nprocs;
static int A, B;      /* sender and receiver rank of my pair */
static int self_pair; /* A == B == rank */

#define SMALLN 10          /* ints */
#define LARGEB 100000      /* bytes */
#define PERSIST_ITERS 25
#define TAG_READY 800
#define TAG_ACK 801

static void check_empty_status(const MPI_Status *st, const char *what)
{
    int count = -1;
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG,
          "%s: empty status expected, got source %d tag %d", what, st->MPI_SOURCE, st->MPI_TAG);
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK(count == 0, "%s: empty status count %d", what, count);
}

static void check_proc_null_status(const MPI_Status *st, const char *what)
{
    int count = -1;
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL, "%s: status source %d, expected MPI_PROC_NULL",
          what, st->MPI_SOURCE);
    CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: status tag %d, expected MPI_ANY_TAG", what,
          st->MPI_TAG);
    MPI_Get_count(st, MPI_INT, &count);
    CHECK(count == 0, "%s: status count %d, expected 0", what, count);
}

/* ---- 1. Probe / Iprobe ---- */
static int small_msg[SMALLN];
static unsigned char large_msg[LARGEB];
static MPI_Request a_reqs[8];

static void probe_a_start(void)
{
    for (int i = 0; i < SMALLN; i++)
        small_msg[i] = 1000 * A + i;
    tu_fill(large_msg, LARGEB, 77 + A);
    MPI_Isend(large_msg, LARGEB, MPI_BYTE, B, 6, MPI_COMM_WORLD, &a_reqs[0]);
    MPI_Isend(small_msg, SMALLN, MPI_INT, B, 5, MPI_COMM_WORLD, &a_reqs[1]);
}
static void probe_a_finish(void) { MPI_Waitall(2, a_reqs, MPI_STATUSES_IGNORE); }

static void probe_b(void)
{
    MPI_Status st;
    int flag = 0, count = -1;
    /* blocking probe of the large message, by tag, any source */
    MPI_Probe(MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &st);
    CHECK_STATUS(&st, A, 6, MPI_BYTE, LARGEB);
    /* probing again sees the same message */
    MPI_Probe(A, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    CHECK_STATUS(&st, A, 6, MPI_BYTE, LARGEB);
    /* Iprobe until the small one is there; then its count in ints */
    double t0 = MPI_Wtime();
    while (!flag) {
        MPI_Iprobe(A, 5, MPI_COMM_WORLD, &flag, &st);
        CHECK(MPI_Wtime() - t0 < 60, "MPI_Iprobe never found the tag-5 message");
    }
    CHECK_STATUS(&st, A, 5, MPI_INT, SMALLN);
    /* no message with tag 99 */
    MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, &st);
    CHECK(!flag, "MPI_Iprobe found a message with tag 99 that was never sent");
    /* receive both, with the probed sizes */
    int *ints = tu_malloc(SMALLN * sizeof(int));
    MPI_Recv(ints, SMALLN, MPI_INT, A, 5, MPI_COMM_WORLD, &st);
    for (int i = 0; i < SMALLN; i++)
        CHECK(ints[i] == 1000 * A + i, "probe: small[%d] = %d", i, ints[i]);
    unsigned char *big = tu_malloc(LARGEB);
    MPI_Recv(big, LARGEB, MPI_BYTE, A, 6, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == LARGEB, "probe: large count %d", count);
    CHECK_PATTERN(big, LARGEB, 77 + A, "probe: large message");
    free(ints);
    free(big);
}

/* ---- 2. Mprobe / Improbe / Mrecv / Imrecv ---- */
static void mprobe_a_start(void)
{
    for (int i = 0; i < SMALLN; i++)
        small_msg[i] = 2000 * A + i;
    tu_fill(large_msg, LARGEB, 99 + A);
    MPI_Isend(small_msg, SMALLN, MPI_INT, B, 7, MPI_COMM_WORLD, &a_reqs[0]);
    MPI_Isend(large_msg, LARGEB, MPI_BYTE, B, 7, MPI_COMM_WORLD, &a_reqs[1]);
}
static void mprobe_a_finish(void) { MPI_Waitall(2, a_reqs, MPI_STATUSES_IGNORE); }

static void mprobe_b(void)
{
    MPI_Message m1 = MPI_MESSAGE_NULL, m2 = MPI_MESSAGE_NULL;
    MPI_Status st;
    MPI_Request req;
    int flag = 0;
    MPI_Mprobe(A, 7, MPI_COMM_WORLD, &m1, &st);
    CHECK(m1 != MPI_MESSAGE_NULL, "MPI_Mprobe returned MPI_MESSAGE_NULL");
    CHECK_STATUS(&st, A, 7, MPI_INT, SMALLN);
    /* the first message is taken out of matching: the next probe sees the second */
    double t0 = MPI_Wtime();
    while (!flag) {
        MPI_Improbe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, &m2, &st);
        CHECK(MPI_Wtime() - t0 < 60, "MPI_Improbe never found the second message");
    }
    CHECK_STATUS(&st, A, 7, MPI_BYTE, LARGEB);
    /* an ordinary Iprobe must not see the two matched messages any more */
    MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, &st);
    CHECK(!flag, "MPI_Iprobe sees a message already taken by MPI_Mprobe/Improbe");
    /* receive in reverse order */
    unsigned char *big = tu_malloc(LARGEB);
    MPI_Mrecv(big, LARGEB, MPI_BYTE, &m2, &st);
    CHECK(m2 == MPI_MESSAGE_NULL, "MPI_Mrecv did not set the message to MPI_MESSAGE_NULL");
    CHECK_STATUS(&st, A, 7, MPI_BYTE, LARGEB);
    CHECK_PATTERN(big, LARGEB, 99 + A, "Mrecv large message");
    int ints[SMALLN];
    MPI_Imrecv(ints, SMALLN, MPI_INT, &m1, &req);
    CHECK(m1 == MPI_MESSAGE_NULL, "MPI_Imrecv did not set the message to MPI_MESSAGE_NULL");
    MPI_Wait(&req, &st);
    CHECK_STATUS(&st, A, 7, MPI_INT, SMALLN);
    for (int i = 0; i < SMALLN; i++)
        CHECK(ints[i] == 2000 * A + i, "Imrecv: small[%d] = %d", i, ints[i]);
    free(big);
}

/* ---- 3. MPI_PROC_NULL (local) ---- */

/* MPICH before 4.2 returns source 0 / tag 0 in the status of an MPI_Irecv from
 * MPI_PROC_NULL (pmodels/mpich#6805, fixed by #6819). Only that one check is
 * skipped, and only for such an MPICH. */
static int mpich_irecv_proc_null_bug(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, major = 0, minor = 0;
    MPI_Get_library_version(v, &len);
    const char *p = strstr(v, "MPICH Version:");
    if (!p || sscanf(p, "MPICH Version: %d.%d", &major, &minor) != 2)
        return 0;
    return major < 4 || (major == 4 && minor < 2);
}

static void proc_null_test(void)
{
    MPI_Status st;
    MPI_Request req;
    MPI_Message msg;
    int buf[4] = {1, 2, 3, 4}, flag = 0;
    MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Ssend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Rsend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    check_proc_null_status(&st, "Recv from MPI_PROC_NULL");
    CHECK(buf[0] == 1 && buf[3] == 4, "Recv from MPI_PROC_NULL modified the buffer");
    MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req);
    MPI_Test(&req, &flag, &st);
    CHECK(flag, "MPI_Isend to MPI_PROC_NULL not complete at the first MPI_Test");
    MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req);
    flag = 0;
    MPI_Test(&req, &flag, &st);
    CHECK(flag, "MPI_Irecv from MPI_PROC_NULL not complete at the first MPI_Test");
    if (!mpich_irecv_proc_null_bug())
        check_proc_null_status(&st, "Irecv from MPI_PROC_NULL");
    MPI_Probe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    check_proc_null_status(&st, "Probe of MPI_PROC_NULL");
    flag = 0;
    MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    CHECK(flag, "MPI_Iprobe of MPI_PROC_NULL returned flag = false");
    check_proc_null_status(&st, "Iprobe of MPI_PROC_NULL");
    MPI_Mprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &msg, &st);
    CHECK(msg == MPI_MESSAGE_NO_PROC, "MPI_Mprobe(MPI_PROC_NULL) message is not MPI_MESSAGE_NO_PROC");
    check_proc_null_status(&st, "Mprobe of MPI_PROC_NULL");
    MPI_Mrecv(buf, 4, MPI_INT, &msg, &st);
    check_proc_null_status(&st, "Mrecv of MPI_MESSAGE_NO_PROC");
    CHECK(msg == MPI_MESSAGE_NULL, "Mrecv of MPI_MESSAGE_NO_PROC: message not set to NULL");
    MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, buf, 4, MPI_INT, MPI_PROC_NULL, 1,
                 MPI_COMM_WORLD, &st);
    check_proc_null_status(&st, "Sendrecv with MPI_PROC_NULL");
}

/* ---- 4. Persistent requests ---- */
#define NPERS 4 /* Send_init, Ssend_init, Bsend_init, Rsend_init */
static int persist_sizes[2] = {SMALLN * (int)sizeof(int), LARGEB};
static unsigned char *psend[NPERS], *precv[NPERS];
static MPI_Request psreq[NPERS], prreq[NPERS], ready_req;
static int pdummy;

static uint32_t pseed(int k, int iter) { return (uint32_t)(k * 100 + iter + 5 * A); }

static void persist_a_setup(int size)
{
    MPI_Send_init(psend[0], size, MPI_BYTE, B, 20, MPI_COMM_WORLD, &psreq[0]);
    MPI_Ssend_init(psend[1], size, MPI_BYTE, B, 21, MPI_COMM_WORLD, &psreq[1]);
    MPI_Bsend_init(psend[2], size, MPI_BYTE, B, 22, MPI_COMM_WORLD, &psreq[2]);
    MPI_Rsend_init(psend[3], size, MPI_BYTE, B, 23, MPI_COMM_WORLD, &psreq[3]);
}
static void persist_b_setup(int size)
{
    for (int k = 0; k < NPERS; k++)
        MPI_Recv_init(precv[k], size, MPI_BYTE, A, 20 + k, MPI_COMM_WORLD, &prreq[k]);
}
/* B: start the receives, then tell A it may send (needed for Rsend) */
static void persist_b_start(int size)
{
    for (int k = 0; k < NPERS; k++)
        memset(precv[k], 0, size);
    MPI_Startall(NPERS, prreq);
    MPI_Isend(&pdummy, 0, MPI_INT, A, TAG_READY, MPI_COMM_WORLD, &ready_req);
}
static void persist_a_iter(int size, int iter)
{
    MPI_Recv(NULL, 0, MPI_INT, B, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int k = 0; k < NPERS; k++)
        tu_fill(psend[k], size, pseed(k, iter));
    if (iter % 2 == 0) {
        MPI_Startall(NPERS, psreq);
    } else {
        for (int k = NPERS - 1; k >= 0; k--)
            MPI_Start(&psreq[k]);
    }
    MPI_Waitall(NPERS, psreq, MPI_STATUSES_IGNORE);
    for (int k = 0; k < NPERS; k++)
        CHECK(psreq[k] != MPI_REQUEST_NULL, "a persistent request was freed by MPI_Waitall");
}
static void persist_b_finish(int size, int iter)
{
    MPI_Status sts[NPERS];
    MPI_Waitall(NPERS, prreq, sts);
    MPI_Wait(&ready_req, MPI_STATUS_IGNORE);
    for (int k = 0; k < NPERS; k++) {
        CHECK(prreq[k] != MPI_REQUEST_NULL, "a persistent request was freed by MPI_Waitall");
        CHECK_STATUS(&sts[k], A, 20 + k, MPI_BYTE, size);
        CHECK_PATTERN(precv[k], size, pseed(k, iter), "persistent k=%d iter %d size %d", k,
                      iter, size);
    }
}
static void persist_free(MPI_Request *reqs)
{
    /* waiting on an inactive persistent request returns at once, empty status */
    MPI_Status st;
    int flag = 0;
    MPI_Wait(&reqs[0], &st);
    check_empty_status(&st, "MPI_Wait on an inactive persistent request");
    MPI_Test(&reqs[1], &flag, &st);
    CHECK(flag, "MPI_Test on an inactive persistent request returned flag = false");
    for (int k = 0; k < NPERS; k++) {
        MPI_Request_free(&reqs[k]);
        CHECK(reqs[k] == MPI_REQUEST_NULL, "MPI_Request_free did not set MPI_REQUEST_NULL");
    }
}

static void persistent_test(void)
{
    for (int k = 0; k < NPERS; k++) {
        psend[k] = tu_malloc(LARGEB);
        precv[k] = tu_malloc(LARGEB);
    }
    for (int s = 0; s < 2; s++) {
        int size = persist_sizes[s];
        if (rank == A)
            persist_a_setup(size);
        if (rank == B)
            persist_b_setup(size);
        for (int iter = 0; iter < PERSIST_ITERS; iter++) {
            if (self_pair) {
                persist_b_start(size);
                persist_a_iter(size, iter);
                persist_b_finish(size, iter);
            } else if (rank == A) {
                persist_a_iter(size, iter);
            } else {
                persist_b_start(size);
                persist_b_finish(size, iter);
            }
        }
        if (rank == A)
            persist_free(psreq);
        if (rank == B)
            persist_free(prreq);
    }
    for (int k = 0; k < NPERS; k++) {
        free(psend[k]);
        free(precv[k]);
    }
}

/* ---- 5. Cancel, Request_get_status, Request_free ---- */
static void cancel_local_test(void)
{
    MPI_Request req;
    MPI_Status st;
    int flag = 0, buf[4];
    /* a receive nobody will ever match */
    MPI_Irecv(buf, 4, MPI_INT, MPI_ANY_SOURCE, 4321, MPI_COMM_WORLD, &req);
    MPI_Request_get_status(req, &flag, &st);
    CHECK(!flag, "MPI_Request_get_status: unmatched receive reported complete");
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    flag = 0;
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag, "MPI_Test_cancelled false after cancelling an unmatched receive");
    CHECK(req == MPI_REQUEST_NULL, "request not MPI_REQUEST_NULL after MPI_Wait");
    /* cancel + Test loop */
    MPI_Irecv(buf, 4, MPI_INT, rank, 4322, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    flag = 0;
    WAIT_DEADLINE(&req, &st, 30, "cancelled receive");
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag, "MPI_Test_cancelled false after cancel + MPI_Test");
    /* a message sent afterwards with that tag is received normally (the
     * cancelled receive must not have consumed it) */
    int v = 42 + rank;
    MPI_Isend(&v, 1, MPI_INT, rank, 4322, MPI_COMM_WORLD, &req);
    MPI_Recv(buf, 4, MPI_INT, rank, 4322, MPI_COMM_WORLD, &st);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK_STATUS(&st, rank, 4322, MPI_INT, 1);
    CHECK(buf[0] == 42 + rank, "message after cancel: %d", buf[0]);
    MPI_Test_cancelled(&st, &flag);
    CHECK(!flag, "MPI_Test_cancelled true for a normally received message");
}

static int cf_val;
static void cancel_a_start(void)
{
    cf_val = 555 + A;
    tu_fill(large_msg, LARGEB, 31 + A);
    MPI_Isend(&cf_val, 1, MPI_INT, B, 30, MPI_COMM_WORLD, &a_reqs[0]);
    /* Request_free on an active send: the send still happens */
    MPI_Isend(large_msg, LARGEB, MPI_BYTE, B, 31, MPI_COMM_WORLD, &a_reqs[1]);
    MPI_Request_free(&a_reqs[1]);
    CHECK(a_reqs[1] == MPI_REQUEST_NULL, "MPI_Request_free did not set MPI_REQUEST_NULL");
}
static void cancel_a_finish(void)
{
    MPI_Wait(&a_reqs[0], MPI_STATUS_IGNORE);
    /* the buffer of the freed send may be reused only once B confirms receipt */
    MPI_Recv(NULL, 0, MPI_BYTE, B, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
static void cancel_b(void)
{
    MPI_Request req;
    MPI_Status st;
    int v = 0, flag = 0;
    /* matched receive: get_status until complete (request stays valid), then a
     * cancel has no effect */
    MPI_Irecv(&v, 1, MPI_INT, A, 30, MPI_COMM_WORLD, &req);
    double t0 = MPI_Wtime();
    while (!flag) {
        MPI_Request_get_status(req, &flag, &st);
        CHECK(MPI_Wtime() - t0 < 60, "MPI_Request_get_status never reported completion");
    }
    CHECK(req != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
    CHECK_STATUS(&st, A, 30, MPI_INT, 1);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(!flag, "cancelling a completed receive reported it cancelled");
    CHECK(v == 555 + A, "receive then cancel: value %d", v);
    unsigned char *big = tu_malloc(LARGEB);
    MPI_Recv(big, LARGEB, MPI_BYTE, A, 31, MPI_COMM_WORLD, &st);
    CHECK_STATUS(&st, A, 31, MPI_BYTE, LARGEB);
    CHECK_PATTERN(big, LARGEB, 31 + A, "message of a freed send request");
    free(big);
    MPI_Request ack;
    MPI_Isend(NULL, 0, MPI_BYTE, A, TAG_ACK, MPI_COMM_WORLD, &ack);
    if (self_pair) {
        cancel_a_finish();
    }
    MPI_Wait(&ack, MPI_STATUS_IGNORE);
}

/* ---- 6. Waitany / Waitsome / Testany / Testsome / Testall ---- */
#define NMULTI 6
static int mvals[NMULTI];
static const int active[NMULTI] = {0, 1, 0, 1, 1, 0}; /* others are MPI_REQUEST_NULL */

static void multi_a_start(int round)
{
    /* send in the order 4, 1, 3 */
    static const int order[3] = {4, 1, 3};
    for (int i = 0; i < 3; i++) {
        mvals[order[i]] = 100 * round + order[i] + A;
        MPI_Isend(&mvals[order[i]], 1, MPI_INT, B, 40 + order[i], MPI_COMM_WORLD, &a_reqs[i]);
    }
}
static void multi_a_finish(void) { MPI_Waitall(3, a_reqs, MPI_STATUSES_IGNORE); }

static void multi_post(int *vals, MPI_Request *reqs)
{
    for (int i = 0; i < NMULTI; i++) {
        vals[i] = -1;
        reqs[i] = MPI_REQUEST_NULL;
        if (active[i])
            MPI_Irecv(&vals[i], 1, MPI_INT, A, 40 + i, MPI_COMM_WORLD, &reqs[i]);
    }
}
static void multi_check(const int *vals, int round, const char *how)
{
    for (int i = 0; i < NMULTI; i++)
        if (active[i])
            CHECK(vals[i] == 100 * round + i + A, "%s: value[%d] = %d", how, i, vals[i]);
        else
            CHECK(vals[i] == -1, "%s: unused buffer %d was written", how, i);
}

static void multi_b(int round)
{
    int vals[NMULTI], done[NMULTI] = {0}, idx, flag, outcount, indices[NMULTI], ndone = 0;
    MPI_Request reqs[NMULTI];
    MPI_Status st, sts[NMULTI];
    multi_post(vals, reqs);
    double t0 = MPI_Wtime();
    switch (round) {
    case 0: /* Waitany */
        for (int k = 0; k < 3; k++) {
            MPI_Waitany(NMULTI, reqs, &idx, &st);
            CHECK(idx >= 0 && idx < NMULTI && active[idx] && !done[idx],
                  "Waitany returned index %d", idx);
            CHECK_STATUS(&st, A, 40 + idx, MPI_INT, 1);
            CHECK(reqs[idx] == MPI_REQUEST_NULL, "Waitany did not free request %d", idx);
            done[idx] = 1;
        }
        MPI_Waitany(NMULTI, reqs, &idx, &st);
        CHECK(idx == MPI_UNDEFINED, "Waitany on all-null requests returned index %d", idx);
        break;
    case 1: /* Waitsome with statuses, then with MPI_STATUSES_IGNORE */
        while (ndone < 3) {
            MPI_Waitsome(NMULTI, reqs, &outcount, indices, ndone == 0 ? sts : MPI_STATUSES_IGNORE);
            CHECK(outcount >= 1 && outcount <= 3 - ndone, "Waitsome outcount %d", outcount);
            for (int k = 0; k < outcount; k++) {
                int i = indices[k];
                CHECK(i >= 0 && i < NMULTI && active[i] && !done[i], "Waitsome index %d", i);
                if (ndone == 0)
                    CHECK_STATUS(&sts[k], A, 40 + i, MPI_INT, 1);
                done[i] = 1;
            }
            ndone += outcount;
        }
        MPI_Waitsome(NMULTI, reqs, &outcount, indices, sts);
        CHECK(outcount == MPI_UNDEFINED, "Waitsome on all-null requests: outcount %d", outcount);
        break;
    case 2: /* Testany */
        while (ndone < 3) {
            flag = 0;
            MPI_Testany(NMULTI, reqs, &idx, &flag, &st);
            if (flag) {
                CHECK(idx >= 0 && idx < NMULTI && active[idx] && !done[idx],
                      "Testany returned index %d", idx);
                CHECK_STATUS(&st, A, 40 + idx, MPI_INT, 1);
                done[idx] = 1;
                ndone++;
            } else {
                CHECK(idx == MPI_UNDEFINED, "Testany flag false but index %d", idx);
            }
            CHECK(MPI_Wtime() - t0 < 60, "Testany: messages never arrived");
        }
        MPI_Testany(NMULTI, reqs, &idx, &flag, &st);
        CHECK(flag && idx == MPI_UNDEFINED, "Testany on all-null: flag %d index %d", flag, idx);
        check_empty_status(&st, "Testany on all-null requests");
        break;
    case 3: /* Testsome */
        while (ndone < 3) {
            MPI_Testsome(NMULTI, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
            CHECK(outcount >= 0 && outcount <= 3 - ndone, "Testsome outcount %d", outcount);
            for (int k = 0; k < outcount; k++) {
                int i = indices[k];
                CHECK(i >= 0 && i < NMULTI && active[i] && !done[i], "Testsome index %d", i);
                done[i] = 1;
            }
            ndone += outcount;
            CHECK(MPI_Wtime() - t0 < 60, "Testsome: messages never arrived");
        }
        MPI_Testsome(NMULTI, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
        CHECK(outcount == MPI_UNDEFINED, "Testsome on all-null: outcount %d", outcount);
        break;
    default: /* Testall with MPI_STATUSES_IGNORE, then with statuses */
        flag = 0;
        while (!flag) {
            MPI_Testall(NMULTI, reqs, &flag, MPI_STATUSES_IGNORE);
            CHECK(MPI_Wtime() - t0 < 60, "Testall: messages never arrived");
        }
        for (int i = 0; i < NMULTI; i++)
            CHECK(reqs[i] == MPI_REQUEST_NULL, "Testall left request %d active", i);
        MPI_Testall(NMULTI, reqs, &flag, sts);
        CHECK(flag, "Testall on all-null requests returned flag = false");
        check_empty_status(&sts[1], "Testall on all-null requests");
        MPI_Waitall(NMULTI, reqs, sts);
        check_empty_status(&sts[0], "Waitall on all-null requests");
        break;
    }
    multi_check(vals, round, "multi-completion");
}

/* ---- 7. Get_elements, Status_set_elements, Status_set_cancelled ---- */
static void status_test(void)
{
    MPI_Status st;
    MPI_Request req;
    double d[10], r[10];
    int count = -1, elems = -1, flag = 0;
    for (int i = 0; i < 10; i++)
        d[i] = i * 0.5 + rank;
    MPI_Isend(d, 10, MPI_DOUBLE, rank, 50, MPI_COMM_WORLD, &req);
    MPI_Recv(r, 10, MPI_DOUBLE, rank, 50, MPI_COMM_WORLD, &st);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Get_elements(&st, MPI_DOUBLE, &elems);
    CHECK(elems == 10, "MPI_Get_elements(MPI_DOUBLE) = %d, expected 10", elems);
    for (int i = 0; i < 10; i++)
        CHECK(r[i] == d[i], "status test: r[%d] = %g", i, r[i]);
    /* 10 bytes are not a whole number of ints */
    unsigned char bytes[10] = {0};
    MPI_Isend(bytes, 10, MPI_BYTE, rank, 51, MPI_COMM_WORLD, &req);
    MPI_Recv(r, 80, MPI_BYTE, rank, 51, MPI_COMM_WORLD, &st);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == MPI_UNDEFINED, "Get_count(MPI_INT) of 10 bytes = %d, expected MPI_UNDEFINED",
          count);
    MPI_Get_elements(&st, MPI_BYTE, &elems);
    CHECK(elems == 10, "Get_elements(MPI_BYTE) of 10 bytes = %d", elems);
    /* set elements */
    MPI_Status_set_elements(&st, MPI_INT, 7);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 7, "after Status_set_elements(MPI_INT, 7): Get_count = %d", count);
    MPI_Get_elements(&st, MPI_INT, &elems);
    CHECK(elems == 7, "after Status_set_elements(MPI_INT, 7): Get_elements = %d", elems);
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == 7 * (int)sizeof(int), "after Status_set_elements(MPI_INT, 7): bytes = %d",
          count);
    MPI_Status_set_cancelled(&st, 1);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag, "Status_set_cancelled(1) not seen by Test_cancelled");
    MPI_Status_set_cancelled(&st, 0);
    MPI_Test_cancelled(&st, &flag);
    CHECK(!flag, "Status_set_cancelled(0) not seen by Test_cancelled");
    /* MPI_Wait / MPI_Test on MPI_REQUEST_NULL: immediate, empty status */
    req = MPI_REQUEST_NULL;
    MPI_Wait(&req, &st);
    check_empty_status(&st, "MPI_Wait(MPI_REQUEST_NULL)");
    flag = 0;
    MPI_Test(&req, &flag, &st);
    CHECK(flag, "MPI_Test(MPI_REQUEST_NULL) returned flag = false");
    check_empty_status(&st, "MPI_Test(MPI_REQUEST_NULL)");
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int partner = rank ^ 1;
    if (partner >= nprocs)
        partner = rank;
    self_pair = (partner == rank);
    A = (rank < partner) ? rank : partner;
    B = (rank < partner) ? partner : rank;
    int bsize = 2 * (LARGEB + MPI_BSEND_OVERHEAD);
    void *bbuf = tu_malloc(bsize);
    MPI_Buffer_attach(bbuf, bsize);

#define PAIR_STEP(a_start, b_part, a_finish)                                   \
    do {                                                                       \
        if (rank == A)                                                         \
            a_start;                                                           \
        if (rank == B)                                                         \
            b_part;                                                            \
        if (rank == A)                                                         \
            a_finish;                                                          \
    } while (0)

    PAIR_STEP(probe_a_start(), probe_b(), probe_a_finish());
    PAIR_STEP(mprobe_a_start(), mprobe_b(), mprobe_a_finish());
    proc_null_test();
    persistent_test();
    cancel_local_test();
    if (self_pair)
        PAIR_STEP(cancel_a_start(), cancel_b(), (void)0);
    else
        PAIR_STEP(cancel_a_start(), cancel_b(), cancel_a_finish());
    for (int round = 0; round < 5; round++)
        PAIR_STEP(multi_a_start(round), multi_b(round), multi_a_finish());
    status_test();

    MPI_Buffer_detach(&bbuf, &bsize);
    free(bbuf);
    if (rank == 0)
        printf("probe_persistent_cancel: OK (%d ranks)\n", nprocs);
    MPI_Finalize();
    return 0;
}
