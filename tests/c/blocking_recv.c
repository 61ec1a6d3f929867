/* blocking_recv: MPI_Recv that is already waiting when its message arrives (the
 * receiver enters MPI_Recv, the sender sends ~20 ms later). OxMPI serves such a
 * receive without a request when nothing else is posted on the communicator; this
 * checks every way that path can end, and that it respects MPI's matching order.
 * Ranks pair up (0 receives from 1, 2 from 3, ...); an odd last rank idles.
 *  1. eager message, exact source and tag: data and status;
 *  2. eager message, MPI_ANY_SOURCE + MPI_ANY_TAG;
 *  3. rendezvous message (1 MiB) arriving while the receive waits;
 *  4. MPI_Ssend of an eager message: the sender completes (acknowledged);
 *  5. a message with another tag arrives first: it is left for a later receive;
 *  6. an MPI_Irecv with the same envelope posted before MPI_Recv gets the first
 *     message, MPI_Recv the second;
 *  7. truncation (eager and rendezvous) under MPI_ERRORS_RETURN: MPI_ERR_TRUNCATE,
 *     the status names the message, and the next receive works. */
#include "testutil.h"
#include <unistd.h>

#define BIG (1 << 20)
#define DELAY_US 20000

static void check_bytes(const unsigned char *buf, size_t len, uint32_t seed, const char *what)
{
    for (size_t i = 0; i < len; i++)
        if (buf[i] != tu_pattern_byte(i, seed))
            FAIL("%s: byte %zu is %u, expected %u", what, i, buf[i], tu_pattern_byte(i, seed));
}

/* Sender: waits for the receiver to sit in MPI_Recv, then sends len pattern bytes. */
static void late_send(int dest, int tag, size_t len, uint32_t seed, int sync)
{
    unsigned char *buf = malloc(len ? len : 1);
    tu_fill(buf, len, seed);
    usleep(DELAY_US);
    if (sync)
        MPI_OK(MPI_Ssend(buf, (int)len, MPI_BYTE, dest, tag, MPI_COMM_WORLD));
    else
        MPI_OK(MPI_Send(buf, (int)len, MPI_BYTE, dest, tag, MPI_COMM_WORLD));
    free(buf);
}

static void receiver(int peer)
{
    MPI_Status st;
    unsigned char *buf = malloc(BIG);
    int rc, cls;

    /* 1 */
    MPI_OK(MPI_Recv(buf, 64, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &st));
    CHECK_STATUS(&st, peer, 7, MPI_BYTE, 40);
    check_bytes(buf, 40, 1, "eager exact");
    /* 2 */
    MPI_OK(MPI_Recv(buf, 64, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK_STATUS(&st, peer, 8, MPI_BYTE, 8);
    check_bytes(buf, 8, 2, "eager wildcard");
    /* 3 */
    MPI_OK(MPI_Recv(buf, BIG, MPI_BYTE, peer, 9, MPI_COMM_WORLD, &st));
    CHECK_STATUS(&st, peer, 9, MPI_BYTE, BIG);
    check_bytes(buf, BIG, 3, "rendezvous");
    /* 4 */
    MPI_OK(MPI_Recv(buf, 64, MPI_BYTE, peer, 10, MPI_COMM_WORLD, &st));
    CHECK_STATUS(&st, peer, 10, MPI_BYTE, 16);
    check_bytes(buf, 16, 4, "synchronous");
    /* 5: tag 12 waits while tag 11 arrives first */
    MPI_OK(MPI_Recv(buf, 64, MPI_BYTE, peer, 12, MPI_COMM_WORLD, &st));
    CHECK_STATUS(&st, peer, 12, MPI_BYTE, 12);
    check_bytes(buf, 12, 52, "second tag");
    MPI_OK(MPI_Recv(buf, 64, MPI_BYTE, peer, 11, MPI_COMM_WORLD, &st));
    CHECK_STATUS(&st, peer, 11, MPI_BYTE, 11);
    check_bytes(buf, 11, 51, "first tag, received later");
    /* 6: the earlier-posted MPI_Irecv matches first */
    {
        unsigned char first[64];
        MPI_Request req;
        MPI_OK(MPI_Irecv(first, 64, MPI_BYTE, peer, 13, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Recv(buf, 64, MPI_BYTE, peer, 13, MPI_COMM_WORLD, &st));
        CHECK_STATUS(&st, peer, 13, MPI_BYTE, 2);
        check_bytes(buf, 2, 62, "blocking receive after an Irecv");
        MPI_OK(MPI_Wait(&req, &st));
        CHECK_STATUS(&st, peer, 13, MPI_BYTE, 1);
        check_bytes(first, 1, 61, "Irecv posted first");
    }
    /* 7: truncation, eager then rendezvous */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Recv(buf, 4, MPI_BYTE, peer, 14, MPI_COMM_WORLD, &st);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "eager truncation: error class %d, expected MPI_ERR_TRUNCATE", cls);
    CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 14, "eager truncation: status names %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    check_bytes(buf, 4, 71, "eager truncation (kept part)");
    rc = MPI_Recv(buf, 1000, MPI_BYTE, peer, 15, MPI_COMM_WORLD, &st);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "rendezvous truncation: error class %d, expected MPI_ERR_TRUNCATE", cls);
    CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 15, "rendezvous truncation: status names %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    check_bytes(buf, 1000, 72, "rendezvous truncation (kept part)");
    MPI_OK(MPI_Recv(buf, 64, MPI_BYTE, peer, 16, MPI_COMM_WORLD, &st));
    CHECK_STATUS(&st, peer, 16, MPI_BYTE, 5);
    check_bytes(buf, 5, 73, "after truncations");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    free(buf);
}

static void sender(int peer)
{
    late_send(peer, 7, 40, 1, 0);
    late_send(peer, 8, 8, 2, 0);
    late_send(peer, 9, BIG, 3, 0);
    late_send(peer, 10, 16, 4, 1);
    late_send(peer, 11, 11, 51, 0);
    late_send(peer, 12, 12, 52, 0);
    late_send(peer, 13, 1, 61, 0);
    late_send(peer, 13, 2, 62, 0);
    late_send(peer, 14, 9, 71, 0);
    late_send(peer, 15, BIG, 72, 0);
    late_send(peer, 16, 5, 73, 0);
}

int main(int argc, char **argv)
{
    int nprocs;
    tu_init(&argc, &argv);
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    if (tu_rank % 2 == 0 && tu_rank + 1 < nprocs)
        receiver(tu_rank + 1);
    else if (tu_rank % 2 == 1)
        sender(tu_rank - 1);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0)
        printf("blocking_recv: OK (%d ranks)\n", nprocs);
    MPI_OK(MPI_Finalize());
    return 0;
}
