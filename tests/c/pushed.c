/* pushed: messages above the eager limit that the sender pushes through the ring
 * without waiting for the receiver (OxMPI's FLAG_PUSH; on by default when ranks
 * outnumber CPUs, forced with OXMPI_SHM_PUSH_MAX). Ranks pair up (0 <-> 1, 2 <-> 3, ...);
 * an odd last rank only joins the collectives. Sizes straddle the eager limit
 * (8 KiB), the cell size and the push limit.
 *  1. receive posted before the message arrives (data lands straight in it);
 *  2. message complete before its receive is posted (held, then matched), checked
 *     with MPI_Probe's count first;
 *  3. MPI_Recv already waiting when the message comes (~20 ms later);
 *  4. order: pushed, eager, pushed, rendezvous with one tag, received with
 *     MPI_ANY_SOURCE/MPI_ANY_TAG in sending order;
 *  5. truncation under MPI_ERRORS_RETURN: MPI_ERR_TRUNCATE, then the next message is intact;
 *  6. a strided (MPI_Type_vector) receive buffer;
 *  7. MPI_Bsend;
 *  8. when OXMPI_SHM_PUSH_MAX and OXMPI_OSUB_PUSH_MAX force pushes: MPI_Send of a pushed size returns before
 *     the receiver posts its receive (the receiver first waits for a later message);
 *  9. bcast, gather, allgather, alltoall of the same sizes. */
#include "testutil.h"
#include <unistd.h>

static const size_t sizes[] = {8193, 12000, 16384, 16385, 40000, 65536, 65537};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAXLEN 65537

static void send_pattern(int dest, int tag, size_t len, uint32_t seed)
{
    unsigned char *buf = tu_malloc(len);
    tu_fill(buf, len, seed);
    MPI_OK(MPI_Send(buf, (int)len, MPI_BYTE, dest, tag, MPI_COMM_WORLD));
    free(buf);
}

static void recv_pattern(int src, int tag, size_t len, uint32_t seed, const char *what)
{
    unsigned char *buf = tu_malloc(len);
    MPI_Status st;
    memset(buf, 0, len);
    MPI_OK(MPI_Recv(buf, (int)len, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st));
    CHECK_STATUS(&st, src, tag, MPI_BYTE, (int)len);
    CHECK_PATTERN(buf, len, seed, "%s, %zu bytes", what, len);
    free(buf);
}

/* A size from the environment (plain, or with a k/m suffix); 0 when unset. */
static long env_size(const char *name)
{
    const char *v = getenv(name);
    char *unit = NULL;
    long n = v ? strtol(v, &unit, 10) : 0;
    if (unit && (*unit == 'k' || *unit == 'K'))
        n *= 1024;
    if (unit && (*unit == 'm' || *unit == 'M'))
        n *= 1024 * 1024;
    return n;
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    int size;
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int me = tu_rank;
    int paired = (me ^ 1) < size;
    int peer = me ^ 1;
    int sender = (me & 1) == 0;
    int pushes_forced = env_size("OXMPI_SHM_PUSH_MAX") >= MAXLEN && env_size("OXMPI_OSUB_PUSH_MAX") >= MAXLEN;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm pair;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, paired ? me / 2 : MPI_UNDEFINED, me, &pair));

    for (size_t k = 0; k < NSIZES && paired; k++) {
        size_t len = sizes[k];
        uint32_t seed = (uint32_t)(k * 16 + me / 2);

        /* 1. Receive posted first. */
        if (sender) {
            MPI_OK(MPI_Barrier(pair));
            send_pattern(peer, 1, len, seed);
        } else {
            unsigned char *buf = tu_malloc(len);
            MPI_Request rq;
            MPI_Status st;
            memset(buf, 0, len);
            MPI_OK(MPI_Irecv(buf, (int)len, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &rq));
            MPI_OK(MPI_Barrier(pair));
            MPI_OK(MPI_Wait(&rq, &st));
            CHECK_STATUS(&st, peer, 1, MPI_BYTE, (int)len);
            CHECK_PATTERN(buf, len, seed, "case 1 (posted first)");
            free(buf);
        }

        /* 2. Complete before the receive: probe, then receive. */
        if (sender) {
            unsigned char *buf = tu_malloc(len);
            MPI_Request rq;
            tu_fill(buf, len, seed + 1);
            MPI_OK(MPI_Isend(buf, (int)len, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &rq));
            MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD));
            MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            free(buf);
        } else {
            MPI_Status st;
            MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &st));
            MPI_OK(MPI_Probe(peer, 2, MPI_COMM_WORLD, &st));
            CHECK_STATUS(&st, peer, 2, MPI_BYTE, (int)len);
            recv_pattern(peer, 2, len, seed + 1, "case 2 (arrived first)");
        }

        /* 3. MPI_Recv waiting when the message arrives. */
        if (sender) {
            usleep(20000);
            send_pattern(peer, 4, len, seed + 2);
        } else {
            recv_pattern(peer, 4, len, seed + 2, "case 3 (receive waiting)");
        }

        /* 4. Order with one tag, wildcard receives. */
        size_t lens[4] = {len, 100, len, 1 << 20};
        if (sender) {
            for (int i = 0; i < 4; i++)
                send_pattern(peer, 5, lens[i], seed + 10 + (uint32_t)i);
        } else {
            unsigned char *buf = tu_malloc(1 << 20);
            for (int i = 0; i < 4; i++) {
                MPI_Status st;
                MPI_OK(MPI_Recv(buf, 1 << 20, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                CHECK_STATUS(&st, peer, 5, MPI_BYTE, (int)lens[i]);
                CHECK_PATTERN(buf, lens[i], seed + 10 + (uint32_t)i, "case 4 (order), message %d", i);
            }
            free(buf);
        }

        /* 5. Truncation, then an intact message. */
        if (sender) {
            send_pattern(peer, 6, len, seed + 3);
            send_pattern(peer, 6, len, seed + 4);
        } else {
            unsigned char *buf = tu_malloc(len);
            MPI_Status st;
            int rc = MPI_Recv(buf, (int)(len / 2), MPI_BYTE, peer, 6, MPI_COMM_WORLD, &st);
            int cls = -1;
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_TRUNCATE, "case 5: truncated receive of %zu into %zu bytes gave class %d, expected MPI_ERR_TRUNCATE", len, len / 2, cls);
            CHECK_PATTERN(buf, len / 2, seed + 3, "case 5 (truncated part)");
            recv_pattern(peer, 6, len, seed + 4, "case 5 (after truncation)");
            free(buf);
        }

        /* 6. Strided receive: len bytes land in every other 8-byte block. */
        if (sender) {
            send_pattern(peer, 7, len / 8 * 8, seed + 5);
        } else {
            size_t blocks = len / 8;
            unsigned char *buf = tu_malloc(blocks * 16);
            MPI_Datatype vec;
            MPI_Status st;
            memset(buf, 0xee, blocks * 16);
            MPI_OK(MPI_Type_vector((int)blocks, 8, 16, MPI_BYTE, &vec));
            MPI_OK(MPI_Type_commit(&vec));
            MPI_OK(MPI_Recv(buf, 1, vec, peer, 7, MPI_COMM_WORLD, &st));
            for (size_t b = 0; b < blocks; b++)
                for (size_t i = 0; i < 8; i++) {
                    CHECK(buf[b * 16 + i] == tu_pattern_byte(b * 8 + i, seed + 5), "case 6: block %zu byte %zu wrong", b, i);
                    CHECK(buf[b * 16 + 8 + i] == 0xee, "case 6: gap after block %zu overwritten", b);
                }
            MPI_OK(MPI_Type_free(&vec));
            free(buf);
        }

        /* 7. MPI_Bsend. */
        if (sender) {
            int bsize = (int)len + MPI_BSEND_OVERHEAD;
            void *att = tu_malloc((size_t)bsize);
            unsigned char *buf = tu_malloc(len);
            MPI_OK(MPI_Buffer_attach(att, bsize));
            tu_fill(buf, len, seed + 6);
            MPI_OK(MPI_Bsend(buf, (int)len, MPI_BYTE, peer, 8, MPI_COMM_WORLD));
            memset(buf, 0, len); /* the buffered copy is what goes out */
            void *det;
            MPI_OK(MPI_Buffer_detach(&det, &bsize));
            free(att);
            free(buf);
        } else {
            recv_pattern(peer, 8, len, seed + 6, "case 7 (Bsend)");
        }

        /* 8. With pushes forced, the send completes before the receive is posted. */
        if (pushes_forced) {
            if (sender) {
                send_pattern(peer, 9, len, seed + 7);
                MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 10, MPI_COMM_WORLD));
            } else {
                MPI_Request rq;
                MPI_Status st;
                MPI_OK(MPI_Irecv(NULL, 0, MPI_BYTE, peer, 10, MPI_COMM_WORLD, &rq));
                WAIT_DEADLINE(&rq, &st, 20, "case 8: the message sent after a pushed one (the pushed send did not complete on its own)");
                recv_pattern(peer, 9, len, seed + 7, "case 8 (pushed, received late)");
            }
        }
    }

    /* 9. Collectives of the same sizes. */
    for (size_t k = 0; k < NSIZES; k++) {
        size_t len = sizes[k];
        unsigned char *a = tu_malloc(len * (size_t)size);
        unsigned char *b = tu_malloc(len * (size_t)size);
        uint32_t seed = 1000 + (uint32_t)k;
        int root = (int)(k % (size_t)size);
        if (me == root)
            tu_fill(a, len, seed);
        else
            memset(a, 0, len);
        MPI_OK(MPI_Bcast(a, (int)len, MPI_BYTE, root, MPI_COMM_WORLD));
        CHECK_PATTERN(a, len, seed, "case 9: bcast of %zu from %d", len, root);

        tu_fill(a, len, seed + (uint32_t)me);
        memset(b, 0, len * (size_t)size);
        MPI_OK(MPI_Gather(a, (int)len, MPI_BYTE, b, (int)len, MPI_BYTE, root, MPI_COMM_WORLD));
        if (me == root)
            for (int r = 0; r < size; r++)
                CHECK_PATTERN(b + (size_t)r * len, len, seed + (uint32_t)r, "case 9: gather of %zu, block %d", len, r);

        memset(b, 0, len * (size_t)size);
        MPI_OK(MPI_Allgather(a, (int)len, MPI_BYTE, b, (int)len, MPI_BYTE, MPI_COMM_WORLD));
        for (int r = 0; r < size; r++)
            CHECK_PATTERN(b + (size_t)r * len, len, seed + (uint32_t)r, "case 9: allgather of %zu, block %d", len, r);

        for (int r = 0; r < size; r++)
            tu_fill(a + (size_t)r * len, len, seed + (uint32_t)(me * 64 + r));
        memset(b, 0, len * (size_t)size);
        MPI_OK(MPI_Alltoall(a, (int)len, MPI_BYTE, b, (int)len, MPI_BYTE, MPI_COMM_WORLD));
        for (int r = 0; r < size; r++)
            CHECK_PATTERN(b + (size_t)r * len, len, seed + (uint32_t)(r * 64 + me), "case 9: alltoall of %zu, block from %d", len, r);
        free(a);
        free(b);
    }

    if (pair != MPI_COMM_NULL)
        MPI_OK(MPI_Comm_free(&pair));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("pushed: OK (%d ranks, %zu sizes%s)\n", size, NSIZES, pushes_forced ? ", pushes forced" : "");
    MPI_Finalize();
    return 0;
}
