/* self_messages: point-to-point messages from a rank to itself (OxMPI delivers them at
 * once when nothing of the rank's own is queued ahead, else through its self queue), at
 * 0 B, 8 B, 4 KiB, 100 KiB and 1 MiB, every received byte checked:
 *  - unexpected: several MPI_Isends (standard, then MPI_Issend and MPI_Bsend mixed in)
 *    before any receive, received in order with one tag and with MPI_ANY_TAG /
 *    MPI_ANY_SOURCE (non-overtaking), statuses checked;
 *  - posted: receives posted first (two with the same tag: matched in order);
 *  - MPI_Iprobe / MPI_Probe / MPI_Improbe + MPI_Mrecv of a self message, the status
 *    count exact;
 *  - MPI_Sendrecv and MPI_Sendrecv_replace with oneself, a vector type on the send side;
 *  - truncation: a message longer than the receive buffer gives MPI_ERR_TRUNCATE
 *    (MPI_ERRORS_RETURN) and the buffer's bytes past its end are untouched;
 *  - an MPI_Issend to self stays incomplete until its receive is posted;
 *  - 0 items from and into NULL, unexpected and posted;
 *  - a receive and an MPI_Irsend to self waited for with MPI_Waitany into one status:
 *    the receive's source, tag and count are left (a send's completion sets only the
 *    cancelled bit, as in MPICH; its f77 irsendf test relies on it);
 *  - MPI_Cancel of a self send nobody received: cancelled, and a later receive gets the
 *    next message, not the cancelled one. MPICH 4.0.2 (ch4, UCX) never returns from the
 *    MPI_Wait of such a cancelled send (MPI 4.1 §3.8.4 says it must): build with
 *    -DSKIP_SEND_CANCEL to check the rest against it. */
#include "testutil.h"
#include <string.h>

static const int sizes[] = {0, 8, 4096, 100 * 1024, 1 << 20};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])
#define NMSG 4

static unsigned char pat(int seed, size_t i)
{
    return (unsigned char)(seed * 29 + i * 7 + (i >> 10));
}

static void fill(unsigned char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = pat(seed, (size_t)i);
}

static void expect(const unsigned char *b, int n, int seed, const char *what, int size)
{
    for (int i = 0; i < n; i++)
        CHECK(b[i] == pat(seed, (size_t)i), "%s (size %d): byte %d = %d, expected %d", what, size, i, b[i],
              pat(seed, (size_t)i));
}

static void expect_status(const MPI_Status *st, int source, int tag, int bytes, const char *what, int size)
{
    int got;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &got));
    CHECK(st->MPI_SOURCE == source && st->MPI_TAG == tag && got == bytes,
          "%s (size %d): status source %d tag %d count %d, expected %d %d %d", what, size, st->MPI_SOURCE,
          st->MPI_TAG, got, source, tag, bytes);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    int me = tu_rank, max = 1 << 20;
    MPI_Comm comm;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    unsigned char *s[NMSG], *r[NMSG];
    for (int k = 0; k < NMSG; k++) {
        s[k] = malloc(max + 64);
        r[k] = malloc(max + 64);
        CHECK(s[k] && r[k], "malloc");
    }
    int bsize = NMSG * (max + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc(bsize);
    MPI_OK(MPI_Buffer_attach(bbuf, bsize));

    for (int z = 0; z < NSIZES; z++) {
        int n = sizes[z];
        MPI_Request q[2 * NMSG];
        MPI_Status st;

        /* Unexpected, one tag, mixed modes; received in order. */
        for (int k = 0; k < NMSG; k++) {
            fill(s[k], n, 10 * z + k);
            if (k == 1)
                MPI_OK(MPI_Issend(s[k], n, MPI_BYTE, me, 7, comm, &q[k]));
            else if (k == 2)
                MPI_OK(MPI_Ibsend(s[k], n, MPI_BYTE, me, 7, comm, &q[k]));
            else
                MPI_OK(MPI_Isend(s[k], n, MPI_BYTE, me, 7, comm, &q[k]));
        }
        for (int k = 0; k < NMSG; k++) {
            memset(r[k], 0xEE, n + 64);
            MPI_OK(MPI_Recv(r[k], max, MPI_BYTE, k % 2 ? MPI_ANY_SOURCE : me, k == 3 ? MPI_ANY_TAG : 7, comm, &st));
            expect_status(&st, me, 7, n, "unexpected, in order", n);
            expect(r[k], n, 10 * z + k, "unexpected, in order", n);
            CHECK(r[k][n] == 0xEE, "size %d: a byte past the message was written", n);
        }
        MPI_OK(MPI_Waitall(NMSG, q, MPI_STATUSES_IGNORE));

        /* Posted first: two receives of one tag match in order, a third another tag. */
        for (int k = 0; k < 3; k++)
            MPI_OK(MPI_Irecv(r[k], max, MPI_BYTE, me, k == 2 ? 9 : 8, comm, &q[k]));
        for (int k = 0; k < 3; k++) {
            fill(s[k], n, 100 + 10 * z + k);
            MPI_OK(MPI_Isend(s[k], n, MPI_BYTE, me, k == 0 ? 9 : 8, comm, &q[3 + k]));
        }
        MPI_Status sts[6];
        MPI_OK(MPI_Waitall(6, q, sts));
        expect(r[0], n, 100 + 10 * z + 1, "posted, first of tag 8", n);
        expect(r[1], n, 100 + 10 * z + 2, "posted, second of tag 8", n);
        expect(r[2], n, 100 + 10 * z + 0, "posted, tag 9", n);
        expect_status(&sts[2], me, 9, n, "posted, tag 9", n);

        /* Probes. */
        fill(s[0], n, 200 + z);
        MPI_OK(MPI_Isend(s[0], n, MPI_BYTE, me, 11, comm, &q[0]));
        int flag = 0;
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 11, comm, &flag, &st));
        CHECK(flag, "size %d: MPI_Iprobe does not see a message sent to self", n);
        expect_status(&st, me, 11, n, "MPI_Iprobe", n);
        MPI_OK(MPI_Probe(me, MPI_ANY_TAG, comm, &st));
        expect_status(&st, me, 11, n, "MPI_Probe", n);
        MPI_Message msg;
        MPI_OK(MPI_Improbe(me, 11, comm, &flag, &msg, &st));
        CHECK(flag, "size %d: MPI_Improbe does not see a message sent to self", n);
        MPI_OK(MPI_Mrecv(r[0], max, MPI_BYTE, &msg, &st));
        expect_status(&st, me, 11, n, "MPI_Mrecv", n);
        expect(r[0], n, 200 + z, "MPI_Mrecv", n);
        MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
        MPI_OK(MPI_Iprobe(me, 11, comm, &flag, &st));
        CHECK(!flag, "size %d: the received message is still there for MPI_Iprobe", n);

        /* Sendrecv with a vector on the send side (every other byte), and replace. */
        MPI_Datatype every_other;
        MPI_OK(MPI_Type_vector(n, 1, 2, MPI_BYTE, &every_other));
        MPI_OK(MPI_Type_commit(&every_other));
        unsigned char *wide = malloc(2 * (size_t)n + 1);
        CHECK(wide != NULL, "malloc");
        for (int i = 0; i < n; i++) {
            wide[2 * i] = pat(300 + z, (size_t)i);
            wide[2 * i + 1] = 0x55;
        }
        MPI_OK(MPI_Sendrecv(wide, 1, every_other, me, 12, r[1], max, MPI_BYTE, me, 12, comm, &st));
        expect_status(&st, me, 12, n, "MPI_Sendrecv", n);
        expect(r[1], n, 300 + z, "MPI_Sendrecv of a vector", n);
        free(wide);
        MPI_OK(MPI_Type_free(&every_other));
        fill(r[2], n, 400 + z);
        MPI_OK(MPI_Sendrecv_replace(r[2], n, MPI_BYTE, me, 13, me, 13, comm, &st));
        expect(r[2], n, 400 + z, "MPI_Sendrecv_replace", n);

        /* Truncation. */
        if (n > 0) {
            fill(s[0], n, 500 + z);
            memset(r[0], 0xEE, n + 64);
            MPI_OK(MPI_Isend(s[0], n, MPI_BYTE, me, 14, comm, &q[0]));
            int rc = MPI_Recv(r[0], n - 1, MPI_BYTE, me, 14, comm, &st);
            int cls;
            MPI_OK(MPI_Error_class(rc, &cls));
            CHECK(cls == MPI_ERR_TRUNCATE, "size %d: a self message into a buffer one byte short gave class %d", n, cls);
            CHECK(r[0][n - 1] == 0xEE && r[0][n] == 0xEE, "size %d: truncation wrote past the buffer", n);
            MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
        }

        /* Issend to self: incomplete until the receive. */
        MPI_OK(MPI_Issend(s[0], n, MPI_BYTE, me, 15, comm, &q[0]));
        for (int i = 0; i < 100; i++) {
            MPI_OK(MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE));
            CHECK(!flag, "size %d: MPI_Issend to self completed with no receive", n);
        }
        MPI_OK(MPI_Recv(r[0], max, MPI_BYTE, me, 15, comm, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));

#ifndef SKIP_SEND_CANCEL
        /* Cancel of an unreceived self send. */
        fill(s[0], n, 600 + z);
        fill(s[1], n, 700 + z);
        MPI_OK(MPI_Isend(s[0], n, MPI_BYTE, me, 16, comm, &q[0]));
        MPI_OK(MPI_Cancel(&q[0]));
        MPI_OK(MPI_Wait(&q[0], &st));
        int cancelled;
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        MPI_OK(MPI_Isend(s[1], n, MPI_BYTE, me, 16, comm, &q[1]));
        MPI_OK(MPI_Recv(r[0], max, MPI_BYTE, me, 16, comm, &st));
        if (cancelled) {
            expect(r[0], n, 700 + z, "the message after a cancelled one", n);
        } else {
            /* Not cancelled: both arrive, in order. */
            expect(r[0], n, 600 + z, "an uncancelled message", n);
            MPI_OK(MPI_Recv(r[0], max, MPI_BYTE, me, 16, comm, &st));
            expect(r[0], n, 700 + z, "the message after it", n);
        }
        MPI_OK(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
#endif
        MPI_OK(MPI_Iprobe(me, MPI_ANY_TAG, comm, &flag, &st));
        CHECK(!flag, "size %d: a message to self is left over (tag %d)", n, st.MPI_TAG);
    }

    /* MPICH's irsendf pattern: a receive and an MPI_Irsend to self waited for with
     * MPI_Waitany twice into one status: a send's completion leaves the status's source,
     * tag and count alone, so the receive's stay whatever order they completed in. */
    {
        MPI_Request q[2];
        MPI_Status st;
        int idx, v = 42, got = 0;
        MPI_OK(MPI_Irecv(&got, 1, MPI_INT, me, 20, comm, &q[0]));
        MPI_OK(MPI_Irsend(&v, 1, MPI_INT, me, 20, comm, &q[1]));
        for (int k = 0; k < 2; k++)
            MPI_OK(MPI_Waitany(2, q, &idx, &st));
        expect_status(&st, me, 20, (int)sizeof(int), "the status left by two MPI_Waitany (Irsend to self)", 4);
        CHECK(got == 42, "Irsend to self delivered %d", got);
    }

    /* No data from and into NULL. */
    {
        MPI_Request q;
        MPI_Status st;
        MPI_OK(MPI_Isend(NULL, 0, MPI_BYTE, me, 18, comm, &q));
        MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, me, 18, comm, &st));
        expect_status(&st, me, 18, 0, "0 bytes from NULL", 0);
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Irecv(NULL, 0, MPI_INT, MPI_ANY_SOURCE, 19, comm, &q));
        MPI_OK(MPI_Send(NULL, 0, MPI_INT, me, 19, comm));
        MPI_OK(MPI_Wait(&q, &st));
        expect_status(&st, me, 19, 0, "0 ints from NULL, receive posted", 0);
    }

    int sz;
    MPI_OK(MPI_Buffer_detach(&bbuf, &sz));
    free(bbuf);
    for (int k = 0; k < NMSG; k++) {
        free(s[k]);
        free(r[k]);
    }
    MPI_OK(MPI_Comm_free(&comm));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("self_messages: OK\n");
    MPI_OK(MPI_Finalize());
    return 0;
}
