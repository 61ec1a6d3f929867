/* rma_bulk: epochs that move more bytes than the cache holds (OxMPI then copies with
 * non-temporal stores: OXMPI_RMA_STREAM_AFTER, default the L2 size), every byte checked.
 *  - MPI_Win_allocate of CHUNKS chunks of CHUNK bytes (plus slack) on every rank;
 *  - passive target: inside MPI_Win_lock_all, every rank puts CHUNKS chunks into its right
 *    neighbour at displacements that are not 16-byte aligned (3 + k * (CHUNK + 5)) from
 *    origin addresses that are not either, with lengths not multiples of 16; flush;
 *    barrier; every rank checks its window byte by byte (the pattern names the writer,
 *    the chunk and the byte) and that the slack between chunks is untouched;
 *  - then gets of the same chunks back from the right neighbour into a misaligned local
 *    buffer, flush, check;
 *  - the same with MPI_Win_fence instead (put epoch, fence, check; get epoch, fence,
 *    check), with a new pattern, so stale bytes of the first round cannot pass;
 *  - a put to oneself whose origin overlaps the target (a process's own window memory):
 *    MPI_Put with overlapping buffers is erroneous in MPI, so this only uses disjoint
 *    halves of the own window, copied twice over the volume threshold.
 * Argument: chunk size in KiB (default 1024); 8 chunks.
 * The window's size is odd; MPICH 4.0.2 puts at the wrong address of windows whose size
 * is not a multiple of 16 (see rma_fence.c), so RMA_LENIENT=1 rounds it up. */
#include "testutil.h"

#define CHUNKS 8
#define SLACK 5
#define START 3

static unsigned char pattern(int round, int writer, int chunk, size_t i)
{
    return (unsigned char)(round * 131 + writer * 31 + chunk * 7 + i * 13 + (i >> 9));
}

static void check_window(const unsigned char *base, size_t chunk, int round, int writer, const char *what)
{
    for (int k = 0; k < CHUNKS; k++) {
        const unsigned char *c = base + START + (size_t)k * (chunk + SLACK);
        for (size_t i = 0; i < chunk; i++)
            CHECK(c[i] == pattern(round, writer, k, i), "%s: chunk %d byte %zu = %d, expected %d",
                  what, k, i, c[i], pattern(round, writer, k, i));
        for (int s = 0; s < SLACK; s++)
            CHECK(c[chunk + s] == 0xEE, "%s: slack byte %d after chunk %d was written (%d)", what, s, k,
                  c[chunk + s]);
    }
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    tu_init(&argc, &argv);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    size_t chunk = (size_t)(argc > 1 ? atoi(argv[1]) : 1024) * 1024 + 11;
    size_t span = START + (size_t)CHUNKS * (chunk + SLACK);
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;

    unsigned char *base;
    MPI_Win win;
    MPI_Aint wsize = (MPI_Aint)span;
    const char *lenient = getenv("RMA_LENIENT");
    if (lenient && atoi(lenient))
        wsize = (wsize + 15) / 16 * 16;
    MPI_OK(MPI_Win_allocate(wsize, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    /* origin and result buffers one byte off any alignment */
    unsigned char *obuf_mem = tu_malloc(span + 64), *obuf = obuf_mem + 1;
    unsigned char *rbuf_mem = tu_malloc(span + 64), *rbuf = rbuf_mem + 7;

    for (int round = 0; round < 2; round++) {
        int fence = round == 1;
        memset(base, 0xEE, span);
        for (int k = 0; k < CHUNKS; k++)
            for (size_t i = 0; i < chunk; i++)
                obuf[START + (size_t)k * (chunk + SLACK) + i] = pattern(round, rank, k, i);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (fence)
            MPI_OK(MPI_Win_fence(0, win));
        else
            MPI_OK(MPI_Win_lock_all(0, win));
        for (int k = 0; k < CHUNKS; k++) {
            size_t off = START + (size_t)k * (chunk + SLACK);
            MPI_OK(MPI_Put(obuf + off, (int)chunk, MPI_BYTE, right, (MPI_Aint)off, (int)chunk, MPI_BYTE, win));
        }
        if (fence) {
            MPI_OK(MPI_Win_fence(0, win));
        } else {
            MPI_OK(MPI_Win_flush(right, win));
            MPI_OK(MPI_Win_sync(win));
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_OK(MPI_Win_sync(win));
        }
        check_window(base, chunk, round, left, fence ? "fence put" : "lock_all put");

        /* gets of what our right neighbour now holds (written by us) */
        memset(rbuf, 0xEE, span);
        for (int k = 0; k < CHUNKS; k++) {
            size_t off = START + (size_t)k * (chunk + SLACK);
            MPI_OK(MPI_Get(rbuf + off, (int)chunk, MPI_BYTE, right, (MPI_Aint)off, (int)chunk, MPI_BYTE, win));
        }
        if (fence)
            MPI_OK(MPI_Win_fence(0, win));
        else
            MPI_OK(MPI_Win_flush(right, win));
        check_window(rbuf, chunk, round, rank, fence ? "fence get" : "lock_all get");
        if (!fence) {
            /* own window: the first half's chunks copied into the second half, twice */
            MPI_OK(MPI_Win_sync(win));
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            size_t half = span / 2;
            for (int t = 0; t < 2; t++)
                for (size_t off = 0; off + 65536 <= half; off += 65536)
                    MPI_OK(MPI_Get(base + half + off, 65536, MPI_BYTE, rank, (MPI_Aint)off, 65536, MPI_BYTE, win));
            MPI_OK(MPI_Win_flush(rank, win));
            for (size_t off = 0; off + 65536 <= half; off += 65536)
                CHECK(memcmp(base + half + off, base + off, 65536) == 0, "own-window get at %zu differs", off);
            MPI_OK(MPI_Win_unlock_all(win));
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (rank == 0)
        printf("rma_bulk: OK (%d ranks, %d chunks of %zu bytes per epoch, every byte checked)\n", nprocs, CHUNKS, chunk);
    free(obuf_mem);
    free(rbuf_mem);
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Finalize());
    return 0;
}
