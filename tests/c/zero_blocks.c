/* zero_blocks: blocks of length 0 place nothing, so their displacements may be anything,
 * even ones that would overflow if placed (LLONG_MAX bytes, INT_MAX extents of a 2^40-byte
 * type). Indexed, hindexed, hindexed_block, struct, vector and hvector types with empty
 * blocks first, in the middle, last, or only: construction succeeds, and size, bounds,
 * true bounds, pack/unpack and a ring exchange see only the non-empty blocks. */
#include "testutil.h"

#include <limits.h>

static int rank, nprocs;

static void expect_bounds(MPI_Datatype t, const char *what, int size, MPI_Aint lb, MPI_Aint extent,
                          MPI_Aint true_lb, MPI_Aint true_extent)
{
    int s = -1;
    MPI_Aint l, e, tl, te;
    MPI_OK(MPI_Type_size(t, &s));
    MPI_OK(MPI_Type_get_extent(t, &l, &e));
    MPI_OK(MPI_Type_get_true_extent(t, &tl, &te));
    CHECK(s == size, "%s: size %d, expected %d", what, s, size);
    CHECK(l == lb && e == extent, "%s: lb %ld extent %ld, expected %ld %ld", what, (long) l,
          (long) e, (long) lb, (long) extent);
    CHECK(tl == true_lb && te == true_extent, "%s: true lb %ld extent %ld, expected %ld %ld", what,
          (long) tl, (long) te, (long) true_lb, (long) true_extent);
}

/* Packs one item of t from ints 0..15 and unpacks it into a zeroed buffer: exactly the ints
 * at indices `want` (n of them, in this order in the packed stream) come back. */
static void expect_ints(MPI_Datatype t, const char *what, const int *want, int n)
{
    int src[16], dst[16], packed[16];
    for (int i = 0; i < 16; i++)
        src[i] = 100 + i;
    int pos = 0, psize = -1;
    MPI_OK(MPI_Pack_size(1, t, MPI_COMM_WORLD, &psize));
    CHECK(psize == n * (int) sizeof(int), "%s: MPI_Pack_size %d, expected %d", what, psize,
          n * (int) sizeof(int));
    MPI_OK(MPI_Pack(src, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == n * (int) sizeof(int), "%s: packed %d bytes, expected %d", what, pos,
          n * (int) sizeof(int));
    for (int i = 0; i < n; i++)
        CHECK(packed[i] == 100 + want[i], "%s: packed int %d is %d, expected %d", what, i,
              packed[i], 100 + want[i]);
    memset(dst, 0, sizeof dst);
    pos = 0;
    MPI_OK(MPI_Unpack(packed, sizeof packed, &pos, dst, 1, t, MPI_COMM_WORLD));
    for (int i = 0; i < 16; i++) {
        int in = 0;
        for (int j = 0; j < n; j++)
            in |= want[j] == i;
        CHECK(dst[i] == (in ? 100 + i : 0), "%s: unpacked int %d is %d", what, i, dst[i]);
    }

    /* Around the ring: rank r sends ints 1000r + i, receives from the left. */
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    for (int i = 0; i < 16; i++)
        src[i] = 1000 * rank + i;
    memset(dst, 0, sizeof dst);
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(src, 1, t, right, 5, dst, 1, t, left, 5, MPI_COMM_WORLD, &st));
    int got = -1;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &got));
    CHECK(got == n, "%s: received %d ints, expected %d", what, got, n);
    for (int j = 0; j < n; j++)
        CHECK(dst[want[j]] == 1000 * left + want[j], "%s: ring: int %d is %d", what, want[j],
              dst[want[j]]);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const int I = sizeof(int);
    MPI_Datatype t;

    /* hindexed: empty blocks at LLONG_MAX around one block of 4 ints at byte 8. */
    {
        int bl[3] = {0, 4, 0};
        MPI_Aint d[3] = {LLONG_MAX, 2 * I, LLONG_MAX};
        MPI_OK(MPI_Type_create_hindexed(3, bl, d, MPI_INT, &t));
        MPI_OK(MPI_Type_commit(&t));
        expect_bounds(t, "hindexed, empty blocks at LLONG_MAX", 4 * I, 2 * I, 4 * I, 2 * I, 4 * I);
        const int want[] = {2, 3, 4, 5};
        expect_ints(t, "hindexed, empty blocks at LLONG_MAX", want, 4);
        MPI_Type_free(&t);
    }
    /* hindexed, empty blocks first and last at LLONG_MIN / LLONG_MAX, two data blocks. */
    {
        int bl[4] = {0, 1, 2, 0};
        MPI_Aint d[4] = {LLONG_MIN, 9 * I, 1 * I, LLONG_MAX};
        MPI_OK(MPI_Type_create_hindexed(4, bl, d, MPI_INT, &t));
        MPI_OK(MPI_Type_commit(&t));
        expect_bounds(t, "hindexed, two data blocks", 3 * I, I, 9 * I, I, 9 * I);
        const int want[] = {9, 1, 2};
        expect_ints(t, "hindexed, two data blocks", want, 3);
        MPI_Type_free(&t);
    }
    /* indexed over a 2^40-byte type: an empty block at INT_MAX extents would overflow. */
    {
        MPI_Datatype big, v;
        MPI_OK(MPI_Type_create_resized(MPI_INT, 0, (MPI_Aint) 1 << 40, &big));
        int bl[3] = {0, 1, 0};
        int d[3] = {INT_MAX, 0, INT_MIN};
        MPI_OK(MPI_Type_indexed(3, bl, d, big, &v));
        /* resized back to 16 ints so a pack of one item reads 1 int at 0 */
        MPI_OK(MPI_Type_create_resized(v, 0, 16 * I, &t));
        MPI_OK(MPI_Type_commit(&t));
        expect_bounds(v, "indexed over a huge type", I, 0, (MPI_Aint) 1 << 40, 0, I);
        const int want[] = {0};
        expect_ints(t, "indexed over a huge type", want, 1);
        MPI_Type_free(&t);
        MPI_Type_free(&v);
        MPI_Type_free(&big);
    }
    /* indexed with leading empty blocks at INT_MAX elements (plain ints). */
    {
        int bl[4] = {0, 0, 3, 1};
        int d[4] = {INT_MAX, INT_MIN, 4, 12};
        MPI_OK(MPI_Type_indexed(4, bl, d, MPI_INT, &t));
        MPI_OK(MPI_Type_commit(&t));
        expect_bounds(t, "indexed, leading empty blocks", 4 * I, 4 * I, 9 * I, 4 * I, 9 * I);
        const int want[] = {4, 5, 6, 12};
        expect_ints(t, "indexed, leading empty blocks", want, 4);
        MPI_Type_free(&t);
    }
    /* struct: an empty block of doubles at LLONG_MAX, then ints. */
    {
        int bl[3] = {0, 2, 0};
        MPI_Aint d[3] = {LLONG_MAX, 3 * I, LLONG_MIN};
        MPI_Datatype ts[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR};
        MPI_OK(MPI_Type_create_struct(3, bl, d, ts, &t));
        MPI_OK(MPI_Type_commit(&t));
        /* only ints are placed: alignment 4, no padding beyond the data */
        expect_bounds(t, "struct with empty blocks", 2 * I, 3 * I, 2 * I, 3 * I, 2 * I);
        const int want[] = {3, 4};
        expect_ints(t, "struct with empty blocks", want, 2);
        MPI_Type_free(&t);
    }
    /* Types with only empty blocks: no data, bounds 0. */
    {
        int bl[2] = {0, 0};
        MPI_Aint d[2] = {LLONG_MAX, LLONG_MIN};
        MPI_Aint hd[1] = {LLONG_MAX};
        MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE};
        MPI_Datatype all[5];
        MPI_OK(MPI_Type_create_hindexed(2, bl, d, MPI_INT, &all[0]));
        MPI_OK(MPI_Type_create_struct(2, bl, d, ts, &all[1]));
        MPI_OK(MPI_Type_create_hindexed_block(1, 0, hd, MPI_INT, &all[2]));
        MPI_OK(MPI_Type_vector(3, 0, INT_MAX, MPI_DOUBLE, &all[3]));
        MPI_OK(MPI_Type_create_hvector(2, 0, LLONG_MAX, MPI_INT, &all[4]));
        for (int i = 0; i < 5; i++) {
            char what[64];
            snprintf(what, sizeof what, "all-empty type %d", i);
            MPI_OK(MPI_Type_commit(&all[i]));
            expect_bounds(all[i], what, 0, 0, 0, 0, 0);
            expect_ints(all[i], what, NULL, 0);
            MPI_Type_free(&all[i]);
        }
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("zero_blocks: OK\n");
    MPI_Finalize();
    return 0;
}
