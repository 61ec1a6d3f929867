/* credit_flood: one sender, N eager messages (default 10000) before the receiver posts
 * anything; nothing may be lost, reordered or deadlock. Transports with credit-based flow
 * control (RDMA verbs) run out of credits long before N.
 * Pairs (0,1), (2,3), ...:
 *   phase 1: the receiver computes outside MPI for a moment (no progress at all) while
 *            the sender posts N MPI_Isend of 0..2000 bytes, then waits for them all; the
 *            receiver then receives them with MPI_ANY_TAG and checks order and bytes;
 *   phase 2: the sender does N blocking MPI_Send while the receiver sits in a barrier
 *            (progress, but no receive posted), then the receiver takes them all;
 *   phase 3: both ways at once, N each, nonblocking.
 * Usage: credit_flood [N] */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"
#include <time.h>

#define MAXLEN 2000

static int msg_len(int i) { return (i * 7919) % (MAXLEN + 1); }
static unsigned char pat(int i, int j, int phase) { return (unsigned char)(i * 13 + j * 3 + phase * 101); }

static void fill(unsigned char *b, int i, int phase)
{
    for (int j = 0; j < msg_len(i); j++)
        b[j] = pat(i, j, phase);
}

static void recv_check(int peer, int i, int phase, unsigned char *b)
{
    MPI_Status st;
    MPI_Recv(b, MAXLEN, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    int n;
    MPI_Get_count(&st, MPI_BYTE, &n);
    CHECK(st.MPI_TAG == i % 1000, "phase %d: message %d came with tag %d, expected %d (reordered or lost)", phase, i, st.MPI_TAG, i % 1000);
    CHECK(n == msg_len(i), "phase %d: message %d has %d bytes, expected %d", phase, i, n, msg_len(i));
    for (int j = 0; j < n; j++)
        CHECK(b[j] == pat(i, j, phase), "phase %d: message %d byte %d differs", phase, i, j);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tu_rank = rank;
    int n = argc > 1 ? atoi(argv[1]) : 10000;
    int peer = rank ^ 1;
    int paired = peer < size;
    int sender = rank % 2 == 0;
    unsigned char *bufs = malloc((size_t)n * MAXLEN);
    unsigned char *rb = malloc(MAXLEN);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)n);
    CHECK(bufs && rb && reqs, "out of memory");

    /* Phase 1: the receiver makes no MPI call while the sender floods. */
    if (paired && sender) {
        for (int i = 0; i < n; i++) {
            fill(bufs + (size_t)i * MAXLEN, i, 1);
            MPI_Isend(bufs + (size_t)i * MAXLEN, msg_len(i), MPI_BYTE, peer, i % 1000, MPI_COMM_WORLD, &reqs[i]);
        }
        MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    } else if (paired) {
        struct timespec ts = {0, 300 * 1000 * 1000};
        nanosleep(&ts, NULL);
        for (int i = 0; i < n; i++)
            recv_check(peer, i, 1, rb);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Phase 2: blocking sends while the receiver waits in a barrier. */
    if (paired && sender) {
        for (int i = 0; i < n; i++) {
            fill(rb, i, 2);
            MPI_Send(rb, msg_len(i), MPI_BYTE, peer, i % 1000, MPI_COMM_WORLD);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (paired && !sender)
        for (int i = 0; i < n; i++)
            recv_check(peer, i, 2, rb);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Phase 3: both directions at once. */
    if (paired) {
        unsigned char *in = malloc((size_t)n * MAXLEN);
        CHECK(in != NULL, "out of memory");
        for (int i = 0; i < n; i++) {
            fill(bufs + (size_t)i * MAXLEN, i, 3);
            MPI_Irecv(in + (size_t)i * MAXLEN, MAXLEN, MPI_BYTE, peer, i % 1000, MPI_COMM_WORLD, &reqs[i]);
            MPI_Isend(bufs + (size_t)i * MAXLEN, msg_len(i), MPI_BYTE, peer, i % 1000, MPI_COMM_WORLD, &reqs[n + i]);
        }
        MPI_Waitall(2 * n, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < msg_len(i); j++)
                CHECK(in[(size_t)i * MAXLEN + j] == pat(i, j, 3), "phase 3: message %d byte %d differs", i, j);
        free(in);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("credit_flood: OK (3 phases of %d messages per pair)\n", n);
    free(bufs);
    free(rb);
    free(reqs);
    MPI_Finalize();
    return 0;
}
