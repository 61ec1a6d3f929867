/* send_modes: MPI_Send, MPI_Ssend, MPI_Bsend (MPI_Buffer_attach/detach) and
 * MPI_Rsend, and their nonblocking forms MPI_Isend/Issend/Ibsend/Irsend, for
 * small and large messages, between pairs (0,1), (2,3), ...: the even rank
 * sends, the odd rank receives. A rank without a partner does the same with
 * itself using nonblocking calls.
 * Semantics checked:
 *  - Rsend/Irsend only after the receiver has posted (a handshake says "go");
 *  - MPI_Issend is not complete (MPI_Test) while the matching receive is not
 *    posted, and completes once it is;
 *  - MPI_Bsend/Ibsend complete locally although the receiver has not posted. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <time.h>

#define NSIZES 7
static const int sizes[NSIZES] = {0, 1, 100, 4000, 20000, 70000, 1048576 + 3};
#define MAXSZ (1048576 + 3)
#define TAG_GO 900
#define TAG_DONE 901

static int rank, nprocs;

static uint32_t seed_of(int size, int mode, int rank_)
{
    return (uint32_t)size * 31u + (uint32_t)mode * 1009u + (uint32_t)rank_ * 65537u;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void recv_check(unsigned char *buf, int size, int src, int tag, int mode)
{
    MPI_Status st;
    memset(buf, 0, size);
    MPI_Recv(buf, MAXSZ, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st);
    CHECK_STATUS(&st, src, tag, MPI_BYTE, size);
    CHECK_PATTERN(buf, size, seed_of(size, mode, src), "mode %d size %d", mode, size);
}

/* Modes, also used as tags: */
enum { M_SEND = 1, M_SSEND, M_BSEND, M_RSEND, M_ISEND, M_ISSEND, M_IBSEND, M_IRSEND };

static void sender(int peer, unsigned char *sbuf)
{
    for (int i = 0; i < NSIZES; i++) {
        int size = sizes[i];
        MPI_Request req;
        MPI_Status st;
        for (int mode = M_SEND; mode <= M_IRSEND; mode++) {
            tu_fill(sbuf, size, seed_of(size, mode, rank));
            if (mode == M_RSEND || mode == M_IRSEND) /* wait until the receive is posted */
                MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            switch (mode) {
            case M_SEND: MPI_Send(sbuf, size, MPI_BYTE, peer, mode, MPI_COMM_WORLD); break;
            case M_SSEND: MPI_Ssend(sbuf, size, MPI_BYTE, peer, mode, MPI_COMM_WORLD); break;
            case M_BSEND: MPI_Bsend(sbuf, size, MPI_BYTE, peer, mode, MPI_COMM_WORLD); break;
            case M_RSEND: MPI_Rsend(sbuf, size, MPI_BYTE, peer, mode, MPI_COMM_WORLD); break;
            default:
                if (mode == M_ISEND)
                    MPI_Isend(sbuf, size, MPI_BYTE, peer, mode, MPI_COMM_WORLD, &req);
                else if (mode == M_ISSEND)
                    MPI_Issend(sbuf, size, MPI_BYTE, peer, mode, MPI_COMM_WORLD, &req);
                else if (mode == M_IBSEND)
                    MPI_Ibsend(sbuf, size, MPI_BYTE, peer, mode, MPI_COMM_WORLD, &req);
                else
                    MPI_Irsend(sbuf, size, MPI_BYTE, peer, mode, MPI_COMM_WORLD, &req);
                MPI_Wait(&req, &st);
            }
            /* Bsend: the data was copied, so the user buffer may be reused at once */
            if (mode == M_BSEND || mode == M_IBSEND)
                memset(sbuf, 0x5A, size);
        }

        /* Issend: not complete before the receiver posts its receive. */
        tu_fill(sbuf, size, seed_of(size, 50, rank));
        MPI_Issend(sbuf, size, MPI_BYTE, peer, 50, MPI_COMM_WORLD, &req);
        for (int k = 0; k < 20; k++) {
            int flag = 0;
            MPI_Test(&req, &flag, &st);
            CHECK(!flag, "size %d: MPI_Issend completed before the receive was posted", size);
            sleep_ms(1);
        }
        MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD);
        WAIT_DEADLINE(&req, &st, 60.0, "MPI_Issend after the receive was posted");
        CHECK(req == MPI_REQUEST_NULL, "completed request not set to MPI_REQUEST_NULL");

        /* Bsend / Ibsend: complete although the receiver has not posted yet. */
        tu_fill(sbuf, size, seed_of(size, 60, rank));
        MPI_Bsend(sbuf, size, MPI_BYTE, peer, 60, MPI_COMM_WORLD);
        memset(sbuf, 0, size);
        tu_fill(sbuf, size, seed_of(size, 61, rank));
        MPI_Ibsend(sbuf, size, MPI_BYTE, peer, 61, MPI_COMM_WORLD, &req);
        WAIT_DEADLINE(&req, &st, 30.0, "MPI_Ibsend without a posted receive");
        memset(sbuf, 0, size);
        MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static void receiver(int peer, unsigned char *rbuf)
{
    for (int i = 0; i < NSIZES; i++) {
        int size = sizes[i];
        MPI_Request req;
        MPI_Status st;
        for (int mode = M_SEND; mode <= M_IRSEND; mode++) {
            if (mode == M_RSEND || mode == M_IRSEND) {
                memset(rbuf, 0, size);
                MPI_Irecv(rbuf, MAXSZ, MPI_BYTE, peer, mode, MPI_COMM_WORLD, &req);
                MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD);
                MPI_Wait(&req, &st);
                CHECK_STATUS(&st, peer, mode, MPI_BYTE, size);
                CHECK_PATTERN(rbuf, size, seed_of(size, mode, peer), "mode %d size %d", mode,
                              size);
            } else {
                recv_check(rbuf, size, peer, mode, mode);
            }
        }
        /* Issend: post only after the go message. */
        MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        recv_check(rbuf, size, peer, 50, 50);
        /* Bsend: the go message arrives while the buffered messages are unreceived */
        MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        recv_check(rbuf, size, peer, 61, 61);
        recv_check(rbuf, size, peer, 60, 60);
        MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_DONE, MPI_COMM_WORLD);
    }
}

/* A rank without a partner: every mode to itself, receives posted first. */
static void self_test(unsigned char *sbuf, unsigned char *rbuf)
{
    for (int i = 0; i < NSIZES; i++) {
        int size = sizes[i];
        for (int mode = M_SEND; mode <= M_IRSEND; mode++) {
            MPI_Request rreq, sreq;
            MPI_Status st;
            memset(rbuf, 0, size);
            tu_fill(sbuf, size, seed_of(size, mode, rank));
            MPI_Irecv(rbuf, MAXSZ, MPI_BYTE, rank, mode, MPI_COMM_WORLD, &rreq);
            switch (mode) {
            case M_SEND: MPI_Send(sbuf, size, MPI_BYTE, rank, mode, MPI_COMM_WORLD); break;
            case M_SSEND: MPI_Ssend(sbuf, size, MPI_BYTE, rank, mode, MPI_COMM_WORLD); break;
            case M_BSEND: MPI_Bsend(sbuf, size, MPI_BYTE, rank, mode, MPI_COMM_WORLD); break;
            case M_RSEND: MPI_Rsend(sbuf, size, MPI_BYTE, rank, mode, MPI_COMM_WORLD); break;
            default:
                if (mode == M_ISEND)
                    MPI_Isend(sbuf, size, MPI_BYTE, rank, mode, MPI_COMM_WORLD, &sreq);
                else if (mode == M_ISSEND)
                    MPI_Issend(sbuf, size, MPI_BYTE, rank, mode, MPI_COMM_WORLD, &sreq);
                else if (mode == M_IBSEND)
                    MPI_Ibsend(sbuf, size, MPI_BYTE, rank, mode, MPI_COMM_WORLD, &sreq);
                else
                    MPI_Irsend(sbuf, size, MPI_BYTE, rank, mode, MPI_COMM_WORLD, &sreq);
                MPI_Wait(&sreq, MPI_STATUS_IGNORE);
            }
            MPI_Wait(&rreq, &st);
            CHECK_STATUS(&st, rank, mode, MPI_BYTE, size);
            CHECK_PATTERN(rbuf, size, seed_of(size, mode, rank), "self mode %d size %d", mode,
                          size);
        }
        /* Issend to self: incomplete until the receive is posted. */
        MPI_Request req;
        MPI_Status st;
        int flag = 0;
        tu_fill(sbuf, size, seed_of(size, 50, rank));
        MPI_Issend(sbuf, size, MPI_BYTE, rank, 50, MPI_COMM_WORLD, &req);
        for (int k = 0; k < 5; k++) {
            MPI_Test(&req, &flag, &st);
            CHECK(!flag, "size %d: MPI_Issend to self completed before the receive", size);
        }
        recv_check(rbuf, size, rank, 50, 50);
        WAIT_DEADLINE(&req, &st, 60.0, "MPI_Issend to self after the receive");
        /* Bsend to self without a posted receive completes locally. */
        tu_fill(sbuf, size, seed_of(size, 60, rank));
        MPI_Bsend(sbuf, size, MPI_BYTE, rank, 60, MPI_COMM_WORLD);
        memset(sbuf, 0, size);
        recv_check(rbuf, size, rank, 60, 60);
    }
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    /* Room for every buffered message that can be pending at once (at most 3),
     * each with its overhead. */
    int bufsize = 4 * (MAXSZ + MPI_BSEND_OVERHEAD);
    char *bsend_buf = tu_malloc(bufsize);
    MPI_Buffer_attach(bsend_buf, bufsize);

    unsigned char *sbuf = tu_malloc(MAXSZ);
    unsigned char *rbuf = tu_malloc(MAXSZ);
    int partner = rank ^ 1;
    if (partner >= nprocs)
        self_test(sbuf, rbuf);
    else if (rank % 2 == 0)
        sender(partner, sbuf);
    else
        receiver(partner, rbuf);

    void *detached = NULL;
    int detached_size = 0;
    MPI_Buffer_detach(&detached, &detached_size);
    CHECK(detached == (void *)bsend_buf && detached_size == bufsize,
          "MPI_Buffer_detach returned (%p, %d), expected (%p, %d)", detached, detached_size,
          (void *)bsend_buf, bufsize);
    free(bsend_buf);
    free(sbuf);
    free(rbuf);
    if (rank == 0)
        printf("send_modes: OK (%d ranks)\n", nprocs);
    MPI_Finalize();
    return 0;
}
