/* soak: every rank sends N messages (argument 1, default 25000) of random sizes from 0 B
 * to 4 MiB (mostly small, some large: every size class of the protocol) with random tags
 * to random peers, nonblocking, a window of them in flight; every rank receives with
 * MPI_ANY_SOURCE / MPI_ANY_TAG. Each rank's plan comes from a generator seeded with its
 * rank, so a receiver knows exactly what each sender sends it and in which order: every
 * message must be the next one of its sender (MPI's non-overtaking rule), with the right
 * size, tag and bytes. Nothing lost, nothing extra. */
#include "testutil.h"

#define MAXLEN (4 << 20)
#define WINDOW 8

typedef struct {
    uint64_t s;
} rng_t;

static uint64_t next(rng_t *r)
{
    /* splitmix64 */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

typedef struct {
    int dest, len, tag;
} msg_t;

/* Sizes: 70 % up to 256 B, 25 % up to 64 KiB, 5 % log-uniform up to 4 MiB. */
static void plan(int sender, int size, int n, msg_t *out)
{
    rng_t r = {0x5eed0000ULL + (uint64_t)sender};
    for (int i = 0; i < n; i++) {
        int d = (int)(next(&r) % (uint64_t)(size - 1));
        out[i].dest = d >= sender ? d + 1 : d;
        uint64_t c = next(&r) % 100, v = next(&r);
        if (c < 70)
            out[i].len = (int)(v % 257);
        else if (c < 95)
            out[i].len = (int)(v % (64 * 1024 + 1));
        else {
            int bits = 16 + (int)(v % 7); /* 64 KiB .. 4 MiB */
            out[i].len = (int)((next(&r) % ((1ULL << bits) + 1)));
            if (out[i].len > MAXLEN)
                out[i].len = MAXLEN;
        }
        out[i].tag = (int)(next(&r) % 1000);
    }
}

static unsigned char byte_of(int sender, int index, int i)
{
    return (unsigned char)(sender * 131 + index * 7 + i * 13 + (i >> 9));
}

int main(int argc, char **argv)
{
    int rank, size;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 25000;
    if (size < 2) {
        if (rank == 0)
            printf("soak: OK (needs 2 ranks; nothing to do)\n");
        MPI_Finalize();
        return 0;
    }
    /* Every sender's plan, and per sender the positions of its messages to us. */
    msg_t *plans = malloc(sizeof(msg_t) * (size_t)n * (size_t)size);
    CHECK(plans, "out of memory");
    long expected = 0;
    for (int s = 0; s < size; s++) {
        plan(s, size, n, plans + (size_t)s * n);
        if (s != rank)
            for (int i = 0; i < n; i++)
                expected += plans[(size_t)s * n + i].dest == rank;
    }
    int *cursor = calloc((size_t)size, sizeof(int)); /* next message of sender s to look at */
    msg_t *mine = plans + (size_t)rank * n;

    unsigned char *rbuf = malloc(MAXLEN);
    unsigned char *sbuf[WINDOW];
    MPI_Request sreq[WINDOW];
    for (int w = 0; w < WINDOW; w++) {
        sbuf[w] = malloc(MAXLEN);
        sreq[w] = MPI_REQUEST_NULL;
    }
    MPI_Request rreq = MPI_REQUEST_NULL;
    long received = 0, bytes = 0;
    int sent = 0;
    if (expected > 0)
        MPI_OK(MPI_Irecv(rbuf, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rreq));
    while (received < expected || sent < n) {
        for (int w = 0; w < WINDOW && sent < n; w++) {
            int done = 1;
            if (sreq[w] != MPI_REQUEST_NULL)
                MPI_OK(MPI_Test(&sreq[w], &done, MPI_STATUS_IGNORE));
            if (!done)
                continue;
            msg_t m = mine[sent];
            for (int i = 0; i < m.len; i++)
                sbuf[w][i] = byte_of(rank, sent, i);
            MPI_OK(MPI_Isend(sbuf[w], m.len, MPI_BYTE, m.dest, m.tag, MPI_COMM_WORLD, &sreq[w]));
            sent++;
        }
        if (rreq != MPI_REQUEST_NULL) {
            int done;
            MPI_Status st;
            MPI_OK(MPI_Test(&rreq, &done, &st));
            if (done) {
                int s = st.MPI_SOURCE, len;
                CHECK(s >= 0 && s < size && s != rank, "message from impossible source %d", s);
                msg_t *p = plans + (size_t)s * n;
                int i = cursor[s];
                while (i < n && p[i].dest != rank)
                    i++;
                CHECK(i < n, "an extra message from rank %d (tag %d): it sent us no more", s, st.MPI_TAG);
                MPI_Get_count(&st, MPI_BYTE, &len);
                CHECK(st.MPI_TAG == p[i].tag && len == p[i].len,
                      "from rank %d: got tag %d, %d bytes; its next message to us (#%d) has tag %d, %d bytes (lost or reordered)",
                      s, st.MPI_TAG, len, i, p[i].tag, p[i].len);
                for (int k = 0; k < len; k++)
                    CHECK(rbuf[k] == byte_of(s, i, k), "from rank %d message #%d: byte %d is %d, expected %d", s, i, k, rbuf[k], byte_of(s, i, k));
                cursor[s] = i + 1;
                received++;
                bytes += len;
                if (received < expected)
                    MPI_OK(MPI_Irecv(rbuf, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rreq));
            }
        }
    }
    MPI_OK(MPI_Waitall(WINDOW, sreq, MPI_STATUSES_IGNORE));
    long totals[2] = {received, bytes}, sums[2];
    MPI_OK(MPI_Reduce(totals, sums, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK(sums[0] == (long)n * size, "%ld messages received in all, %ld sent", sums[0], (long)n * size);
        printf("soak: %ld messages, %.1f MiB, checked\n", sums[0], sums[1] / 1048576.0);
        printf("soak: OK\n");
    }
    for (int w = 0; w < WINDOW; w++)
        free(sbuf[w]);
    free(rbuf);
    free(plans);
    free(cursor);
    MPI_Finalize();
    return 0;
}
