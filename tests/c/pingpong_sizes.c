/* pingpong_sizes: ping-pong between rank pairs (0,1), (2,3), ... at every size
 * from 0 B to 16 MiB crossing every plausible protocol threshold: 0..16, then
 * 2^k - 1, 2^k, 2^k + 1 and 3*2^(k-1) for 2^k up to 16 MiB. Each direction
 * carries a byte pattern depending on size, iteration and sending rank; both
 * sides verify the data, MPI_Get_count, the status, and that bytes past the
 * message in the receive buffer are untouched. A rank without a partner (odd
 * size, or size 1) ping-pongs with itself using MPI_Irecv + MPI_Send.
 * Optional argv[1]: iterations per size (default 2; sizes > 1 MiB do one); argv[2]: the
 * largest size in MiB (default 16, at most 256). */
#include "testutil.h"

static int max_size = 16 * 1024 * 1024;
#define GUARD 64
#define TAG_PING 11
#define TAG_PONG 12

static int build_sizes(int *sizes)
{
    int n = 0;
    for (int s = 0; s <= 16; s++)
        sizes[n++] = s;
    for (int k = 5; (1 << k) <= max_size; k++) {
        int p = 1 << k;
        sizes[n++] = 3 * (p / 4); /* 3*2^(k-2): between the powers of two */
        sizes[n++] = p - 1;
        sizes[n++] = p;
        if (p + 1 <= max_size)
            sizes[n++] = p + 1;
    }
    return n;
}

static uint32_t seed_of(int size, int iter, int rank, int dir)
{
    return (uint32_t)size * 7919u + (uint32_t)iter * 104729u + (uint32_t)rank * 15485863u +
           (uint32_t)dir * 2246822519u;
}

/* Receive `size` bytes from `src` into buf (posted with room for GUARD more)
 * and verify pattern, count, status and guard bytes. */
static void check_received(unsigned char *buf, int size, int src, int tag, uint32_t seed,
                           const MPI_Status *st, int iter)
{
    int count = -1;
    CHECK(st->MPI_SOURCE == src, "size %d iter %d: status source %d, expected %d", size,
          iter, st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == tag, "size %d iter %d: status tag %d, expected %d", size, iter,
          st->MPI_TAG, tag);
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK(count == size, "size %d iter %d: MPI_Get_count = %d", size, iter, count);
    CHECK_PATTERN(buf, size, seed, "size %d iter %d tag %d from rank %d", size, iter, tag,
                  src);
    for (int i = 0; i < GUARD; i++)
        CHECK(buf[size + i] == 0xA5,
              "size %d iter %d: receive buffer overwritten past the message (byte %d)",
              size, iter, size + i);
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int iters = (argc > 1) ? atoi(argv[1]) : 2;
    if (iters < 1)
        iters = 1;
    if (argc > 2) {
        int mib = atoi(argv[2]);
        CHECK(mib >= 1 && mib <= 256, "largest size %s MiB: give 1..256", argv[2]);
        max_size = mib * 1024 * 1024;
    }

    int partner = rank ^ 1;
    if (partner >= nprocs)
        partner = rank; /* ping-pong with itself */
    int sizes[200];
    int nsizes = build_sizes(sizes);
    unsigned char *sbuf = tu_malloc(max_size);
    unsigned char *rbuf = tu_malloc(max_size + GUARD);
    double t0 = MPI_Wtime();

    for (int si = 0; si < nsizes; si++) {
        int size = sizes[si];
        int niter = size > 1024 * 1024 ? 1 : iters;
        for (int iter = 0; iter < niter; iter++) {
            MPI_Status st;
            memset(rbuf, 0xA5, (size_t)size + GUARD);
            if (partner == rank) {
                MPI_Request req;
                uint32_t seed = seed_of(size, iter, rank, 0);
                tu_fill(sbuf, size, seed);
                MPI_Irecv(rbuf, size + GUARD, MPI_BYTE, rank, TAG_PING, MPI_COMM_WORLD, &req);
                MPI_Send(sbuf, size, MPI_BYTE, rank, TAG_PING, MPI_COMM_WORLD);
                MPI_Wait(&req, &st);
                check_received(rbuf, size, rank, TAG_PING, seed, &st, iter);
            } else if (rank < partner) {
                /* ping, then pong; the receive allows GUARD extra bytes */
                tu_fill(sbuf, size, seed_of(size, iter, rank, 0));
                MPI_Send(sbuf, size, MPI_BYTE, partner, TAG_PING, MPI_COMM_WORLD);
                MPI_Recv(rbuf, size + GUARD, MPI_BYTE, partner, TAG_PONG, MPI_COMM_WORLD, &st);
                check_received(rbuf, size, partner, TAG_PONG, seed_of(size, iter, partner, 1),
                               &st, iter);
            } else {
                MPI_Recv(rbuf, size + GUARD, MPI_BYTE, partner, TAG_PING, MPI_COMM_WORLD, &st);
                check_received(rbuf, size, partner, TAG_PING, seed_of(size, iter, partner, 0),
                               &st, iter);
                tu_fill(sbuf, size, seed_of(size, iter, rank, 1));
                MPI_Send(sbuf, size, MPI_BYTE, partner, TAG_PONG, MPI_COMM_WORLD);
            }
        }
    }
    double t = MPI_Wtime() - t0;
    free(sbuf);
    free(rbuf);
    if (rank == 0)
        printf("pingpong_sizes: OK (%d ranks, %d sizes 0..%d B, %d iterations, %.2f s)\n",
               nprocs, nsizes, max_size, iters, t);
    MPI_Finalize();
    return 0;
}
