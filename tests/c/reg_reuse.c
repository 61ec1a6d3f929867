/* reg_reuse: a buffer freed and another mapped at the same address must never be read or
 * written through a stale registration (RDMA transports cache memory registrations).
 * Pairs (0,1), (2,3), ...: for each round, the even rank maps LEN bytes (mmap), fills them
 * with a pattern of the round, sends them (rendezvous: the receiver reads them straight
 * from this buffer), unmaps them and maps a new buffer at the same address
 * (MAP_FIXED_NOREPLACE, falling back to a hint) with the next round's pattern; the odd
 * rank does the same with its receive buffer, and both check every byte. Then the same
 * with malloc/free of a large buffer (the allocator may return the same address), and
 * with a buffer whose pages are dropped with madvise(MADV_DONTNEED) and rewritten.
 * Usage: reg_reuse [rounds (default 6)] [size in KiB (default 1024)] */
#define _GNU_SOURCE
#include "testutil.h"
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static size_t len;

static unsigned char pat(int round, size_t i, int who) { return (unsigned char)(i * 131 + round * 17 + who * 7 + (i >> 12)); }

static void fill(unsigned char *b, int round, int who)
{
    for (size_t i = 0; i < len; i++)
        b[i] = pat(round, i, who);
}

static void check(const unsigned char *b, int round, int who, const char *what)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] != pat(round, i, who))
            FAIL("%s round %d: byte %zu is %u, expected %u (a stale registration?)", what, round, i, b[i], pat(round, i, who));
}

/* A new mapping of len bytes at `at` (or anywhere if at is NULL). */
static unsigned char *map_at(void *at)
{
    void *p = mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);
    if (p == MAP_FAILED && at)
        p = mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED, "mmap of %zu bytes failed", len);
    return p;
}

/* One round of the pair: the sender sends `b` filled for (round, who), the receiver
 * receives into `b` and checks it. */
static void exchange(unsigned char *b, int sender, int peer, int round, int who, const char *what)
{
    if (sender) {
        fill(b, round, who);
        MPI_Send(b, (int)len, MPI_BYTE, peer, round, MPI_COMM_WORLD);
    } else {
        memset(b, 0xee, len);
        MPI_Recv(b, (int)len, MPI_BYTE, peer, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(b, round, who, what);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tu_rank = rank;
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    len = (size_t)(argc > 2 ? atoi(argv[2]) : 1024) * 1024;
    int peer = rank ^ 1;
    if (peer >= size) /* no partner (odd size): only the barrier below */
        rounds = 0;
    int sender = rank % 2 == 0;
    int same = 0;

    /* 1. munmap + mmap at the same address. */
    unsigned char *buf = map_at(NULL);
    for (int round = 0; round < rounds; round++) {
        exchange(buf, sender, peer, round, 0, "mmap reuse");
        void *old = buf;
        CHECK(munmap(buf, len) == 0, "munmap failed");
        buf = map_at(old);
        same += (void *)buf == old;
    }
    munmap(buf, len);

    /* 2. malloc/free (the allocator may hand the same address out again). */
    for (int round = 0; round < rounds; round++) {
        unsigned char *m = malloc(len);
        CHECK(m != NULL, "malloc failed");
        exchange(m, sender, peer, round + 100, 1, "malloc reuse");
        free(m);
    }

    /* 3. Pages dropped with madvise(MADV_DONTNEED), then rewritten. */
    buf = map_at(NULL);
    for (int round = 0; round < rounds; round++) {
        exchange(buf, sender, peer, round + 200, 2, "madvise reuse");
        CHECK(madvise(buf, len, MADV_DONTNEED) == 0, "madvise failed");
    }
    munmap(buf, len);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("reg_reuse: OK (%d rounds of %zu bytes, %d of %d remaps at the same address)\n", rounds, len, same, rounds);
    MPI_Finalize();
    return 0;
}
