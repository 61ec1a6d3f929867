/* copy_distances: long copies whose destination lies 0-4095 bytes past the source modulo
 * 4 KiB, through every OxMPI path that copies user bytes in the process (OxMPI copies a
 * destination 1-63 bytes past its source backwards: glibc's memcpy crawls there), every
 * byte checked and the bytes around each destination untouched:
 *  - MPI_Get and MPI_Put (MPI_BYTE and MPI_INT) against the right neighbour's
 *    MPI_Win_allocate window inside MPI_Win_lock_all, and MPI_Get_accumulate with
 *    MPI_NO_OP, at target displacements and local offsets that sweep the distances;
 *  - MPI_Pack and MPI_Unpack of an hvector of two long blocks;
 *  - MPI_Allgather of one long block (the rank's own block copied into place) and
 *    MPI_Allreduce (MPI_MAX on MPI_UNSIGNED_CHAR: the send buffer copied into the receive
 *    buffer first), the receive buffer at each distance from the send buffer.
 * Lengths 2047-70001 bytes (either side of the 2 KiB the backward copy starts at). */
#include "testutil.h"
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const size_t lens[] = {2047, 2048, 2049, 4113, 70001};
static const size_t dists[] = {0, 1, 15, 16, 40, 63, 64, 4080};
#define NLENS (sizeof lens / sizeof lens[0])
#define NDISTS (sizeof dists / sizeof dists[0])
#define MAXLEN 70001
#define SLACK 64
#define ARENA (2 * MAXLEN + 3 * 4096 + 2 * SLACK)
/* Window: reads below HALF, puts above. A size not a multiple of 16 meets an MPICH 4.0.2
 * bug (see rma_fence.c), which would hide what this test is about. */
#define HALF ((MAXLEN + 4096 + SLACK + 63) / 64 * 64)
#define WINSZ (2 * HALF)

static unsigned char pat(int seed, size_t i)
{
    return (unsigned char)(seed * 37 + i * 11 + (i >> 8));
}

/* The address in `arena` (past SLACK) that lies `d` bytes past `ref` modulo 4 KiB. */
static unsigned char *at_dist(unsigned char *arena, const void *ref, size_t d)
{
    uintptr_t want = ((uintptr_t)ref + d) & 4095, a = (uintptr_t)(arena + SLACK);
    return arena + SLACK + ((want - a) & 4095);
}

/* The `len` bytes at `p` are pat(seed, from + i). */
static void check_bytes(const unsigned char *p, size_t len, int seed, size_t from, const char *what, size_t d)
{
    for (size_t i = 0; i < len; i++)
        CHECK(p[i] == pat(seed, from + i), "%s, %zu bytes, offset %zu: byte %zu = %d, expected %d", what, len,
              d, i, p[i], pat(seed, from + i));
}

/* SLACK bytes either side of the `len` bytes at `p` are 0xEE. */
static void check_around(const unsigned char *p, size_t len, const char *what, size_t d)
{
    for (size_t i = 1; i <= SLACK; i++)
        CHECK(p[-(ptrdiff_t)i] == 0xEE && p[len + i - 1] == 0xEE, "%s, %zu bytes, offset %zu: wrote outside",
              what, len, d);
}

static void check(const unsigned char *p, size_t len, int seed, size_t from, const char *what, size_t d)
{
    check_bytes(p, len, seed, from, what, d);
    check_around(p, len, what, d);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    int n;
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &n));
    int right = (tu_rank + 1) % n;
    unsigned char *arena = malloc(ARENA), *src = malloc(ARENA);
    CHECK(arena && src, "malloc");

    /* One-sided: my window holds pat(rank) below HALF; the left neighbour puts above. */
    unsigned char *win_base;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(WINSZ, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_base, &win));
    for (size_t i = 0; i < WINSZ; i++)
        win_base[i] = pat(tu_rank, i);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock_all(0, win));
    for (size_t l = 0; l < NLENS; l++) {
        size_t len = lens[l];
        for (size_t t = 0; t < NDISTS; t++) {
            size_t disp = dists[t];
            for (size_t o = 0; o < NDISTS; o++) {
                unsigned char *buf = arena + SLACK + dists[o];
                memset(arena, 0xEE, ARENA);
                MPI_OK(MPI_Get(buf, (int)len, MPI_BYTE, right, (MPI_Aint)disp, (int)len, MPI_BYTE, win));
                MPI_OK(MPI_Win_flush(right, win));
                check(buf, len, right, disp, "MPI_Get", dists[o]);

                memset(arena, 0xEE, ARENA);
                size_t ints = len / 4;
                MPI_OK(MPI_Get(buf, (int)ints, MPI_INT, right, (MPI_Aint)disp, (int)ints, MPI_INT, win));
                MPI_OK(MPI_Win_flush(right, win));
                check(buf, ints * 4, right, disp, "MPI_Get of MPI_INT", dists[o]);

                memset(arena, 0xEE, ARENA);
                MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_BYTE, buf, (int)len, MPI_BYTE, right, (MPI_Aint)disp, (int)len,
                                          MPI_BYTE, MPI_NO_OP, win));
                MPI_OK(MPI_Win_flush(right, win));
                check(buf, len, right, disp, "MPI_Get_accumulate (MPI_NO_OP)", dists[o]);

                /* Put a pattern naming the length and offsets, read it back. */
                int seed = 100 + (int)(l * 64 + t * 8 + o);
                for (size_t i = 0; i < len; i++)
                    buf[i] = pat(seed, i);
                MPI_OK(MPI_Put(buf, (int)len, MPI_BYTE, right, (MPI_Aint)(HALF + disp), (int)len, MPI_BYTE, win));
                MPI_OK(MPI_Win_flush(right, win));
                memset(arena, 0xEE, ARENA);
                MPI_OK(MPI_Get(buf, (int)len, MPI_BYTE, right, (MPI_Aint)(HALF + disp), (int)len, MPI_BYTE, win));
                MPI_OK(MPI_Win_flush(right, win));
                check(buf, len, seed, 0, "MPI_Put then MPI_Get", dists[o]);
            }
        }
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Win_free(&win));

    for (size_t i = 0; i < ARENA; i++)
        src[i] = pat(tu_rank + 7, i);
    int packsz = 2 * MAXLEN + 64;
    unsigned char *packed = malloc(ARENA);
    CHECK(packed != NULL, "malloc");
    for (size_t l = 0; l < NLENS; l++) {
        size_t len = lens[l];
        /* Two blocks 4 KiB + len apart: each block and its packed place at one distance. */
        MPI_Datatype hv;
        MPI_OK(MPI_Type_create_hvector(2, (int)len, (MPI_Aint)(len + 4096), MPI_BYTE, &hv));
        MPI_OK(MPI_Type_commit(&hv));
        for (size_t o = 0; o < NDISTS; o++) {
            size_t d = dists[o];
            const unsigned char *from = src + SLACK;
            memset(packed, 0xEE, ARENA);
            unsigned char *out = at_dist(packed, from, d);
            int pos = 0;
            MPI_OK(MPI_Pack(from, 1, hv, out, packsz, &pos, MPI_COMM_WORLD));
            CHECK(pos == (int)(2 * len), "MPI_Pack position %d, expected %zu", pos, 2 * len);
            check_bytes(out, len, tu_rank + 7, SLACK, "MPI_Pack block 0", d);
            check_bytes(out + len, len, tu_rank + 7, SLACK + len + 4096, "MPI_Pack block 1", d);
            check_around(out, 2 * len, "MPI_Pack", d);

            memset(arena, 0xEE, ARENA);
            unsigned char *back = at_dist(arena, out, d);
            pos = 0;
            MPI_OK(MPI_Unpack(out, packsz, &pos, back, 1, hv, MPI_COMM_WORLD));
            check(back, len, tu_rank + 7, SLACK, "MPI_Unpack block 0", d);
            for (size_t i = 0; i < 4096; i++)
                CHECK(back[len + i] == 0xEE, "MPI_Unpack wrote between the blocks (byte %zu)", i);
            check(back + len + 4096, len, tu_rank + 7, SLACK + len + 4096, "MPI_Unpack block 1", d);
        }
        MPI_OK(MPI_Type_free(&hv));
    }
    free(packed);

    /* Collectives: the own block (allgather) and the send buffer (allreduce) copied into
     * the receive buffer at each distance. Every rank's block of the allgather carries its
     * rank; the allreduce's input is the same on every rank, so MPI_MAX returns it. */
    unsigned char *all = malloc((size_t)n * MAXLEN + 2 * 4096 + 2 * SLACK);
    CHECK(all != NULL, "malloc");
    for (size_t l = 0; l < NLENS; l++) {
        size_t len = lens[l];
        for (size_t o = 0; o < NDISTS; o++) {
            size_t d = dists[o];
            const unsigned char *from = src + SLACK + 100;
            for (size_t i = 0; i < len; i++)
                src[SLACK + 100 + i] = pat(tu_rank + 7, i);
            size_t total = (size_t)n * len + 2 * 4096 + 2 * SLACK;
            memset(all, 0xEE, total);
            /* My block `d` bytes past `from`. */
            unsigned char *recv = at_dist(all, (const void *)((uintptr_t)from - (size_t)tu_rank * len), d);
            MPI_OK(MPI_Allgather(from, (int)len, MPI_BYTE, recv, (int)len, MPI_BYTE, MPI_COMM_WORLD));
            for (int r = 0; r < n; r++)
                check_bytes(recv + (size_t)r * len, len, r + 7, 0, "MPI_Allgather", d);
            check_around(recv, (size_t)n * len, "MPI_Allgather", d);

            for (size_t i = 0; i < len; i++)
                src[SLACK + 100 + i] = pat(3, i);
            memset(all, 0xEE, total);
            recv = at_dist(all, from, d);
            MPI_OK(MPI_Allreduce(from, recv, (int)len, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD));
            check(recv, len, 3, 0, "MPI_Allreduce", d);
        }
    }
    free(all);
    free(src);
    free(arena);
    if (tu_rank == 0)
        printf("copy_distances: OK\n");
    MPI_OK(MPI_Finalize());
    return 0;
}
