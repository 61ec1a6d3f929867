/* Neighbourhood collectives with non-contiguous datatypes (OSU's -D vect/indx runs of
 * osu_neighbor_*): MPI_Neighbor_allgather, _allgatherv, _alltoall, _alltoallv, _alltoallw,
 * blocking, nonblocking and persistent (_init + MPI_Start twice), on a periodic 1-D ring
 * (sources and destinations: left, right). Send type S = vector(3, 1, 2) of int (extent 5
 * ints), receive type R = resized vector(3, 1, 3) (extent 10 ints): every item carries 3
 * ints, so S and R match. Each int sent is rank * 1000 + slot * 100 + element; receivers
 * check every element they got and that the gaps of R's layout are left alone. */
#include "testutil.h"

#define SLOTS 2   /* left, right */
#define MAXN 3    /* items per block at most */
#define SEXT 5    /* extent of S in ints */
#define REXT 10   /* extent of R in ints */

static int rank, size, nbr[SLOTS];
static MPI_Datatype S, R;
static MPI_Comm ring;

/* Offset (in ints) of element e (0..3*n-1) of n items of S or R. */
static int s_off(int e) { return (e / 3) * SEXT + (e % 3) * 2; }
static int r_off(int e) { return (e / 3) * REXT + (e % 3) * 3; }

/* Fill `n` items of S at `buf` for slot `slot`. */
static void fill(int *buf, int n, int slot)
{
    for (int e = 0; e < 3 * n; e++)
        buf[s_off(e)] = rank * 1000 + slot * 100 + e;
}

/* Check the block of `room` ints at `buf`, received in slot i with `n` items of R: every
 * element from neighbour nbr[i], in order, and the gaps of R's layout untouched. The left
 * neighbour sent from its right slot (1), the right one from its left (0), unless
 * `any_slot` (allgather: all from slot 0; with 1 or 2 ranks both neighbours are one process,
 * so either of its blocks may match either slot). */
static void check_block(const int *buf, int room, int n, int i, int any_slot, const char *what)
{
    int want_slot = any_slot || size < 3 ? -1 : i == 0 ? 1 : 0;
    for (int k = 0; k < room; k++) {
        int e = -1;
        for (int x = 0; x < 3 * n; x++)
            if (r_off(x) == k)
                e = x;
        if (e < 0) {
            CHECK(buf[k] == -1, "%s: slot %d, gap at int %d overwritten (%d)", what, i, k, buf[k]);
            continue;
        }
        int v = buf[k], slot = (v % 1000) / 100;
        CHECK(v / 1000 == nbr[i] && v % 100 == e, "%s: slot %d element %d is %d (expected from rank %d)",
              what, i, e, v, nbr[i]);
        CHECK(want_slot < 0 || slot == want_slot, "%s: slot %d element %d came from slot %d", what, i, e, slot);
    }
}

enum mode { BLOCKING, NONBLOCKING, PERSISTENT };
static const char *mode_name[] = {"blocking", "nonblocking", "persistent"};

static void finish(MPI_Request *rq, enum mode m)
{
    if (m == BLOCKING)
        return;
    if (m == PERSISTENT) {
        MPI_OK(MPI_Start(rq));
        MPI_OK(MPI_Wait(rq, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Start(rq));
    }
    MPI_OK(MPI_Wait(rq, MPI_STATUS_IGNORE));
    if (m == PERSISTENT)
        MPI_OK(MPI_Request_free(rq));
}

static void run(int which, enum mode m)
{
    static const char *names[] = {"allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"};
    char what[64];
    snprintf(what, sizeof what, "neighbor_%s (%s)", names[which], mode_name[m]);
    int sbuf[2 * SLOTS * MAXN * SEXT], rbuf[2 * SLOTS * MAXN * REXT];
    int scounts[SLOTS], rcounts[SLOTS], sdispls[SLOTS], rdispls[SLOTS];
    MPI_Aint sbytes[SLOTS], rbytes[SLOTS];
    MPI_Datatype stypes[SLOTS] = {S, S}, rtypes[SLOTS] = {R, R};
    MPI_Request rq = MPI_REQUEST_NULL;
    for (int k = 0; k < (int)(sizeof sbuf / sizeof *sbuf); k++)
        sbuf[k] = -2;
    for (int k = 0; k < (int)(sizeof rbuf / sizeof *rbuf); k++)
        rbuf[k] = -1;
    int n = 2; /* items per block of the equal-block calls */
    for (int j = 0; j < SLOTS; j++) {
        /* v and w forms: 3 items per block, blocks one block apart (a gap between them);
         * the counts must match pairwise, slot j of the sender against 1 - j */
        scounts[j] = rcounts[j] = MAXN;
        sdispls[j] = j * 2 * MAXN;            /* in extents of S */
        rdispls[j] = j * 2 * MAXN;            /* in extents of R */
        sbytes[j] = (MPI_Aint)sizeof(int) * sdispls[j] * SEXT;
        rbytes[j] = (MPI_Aint)sizeof(int) * rdispls[j] * REXT;
    }
    switch (which) {
    case 0:
        fill(sbuf, n, 0);
        if (m == BLOCKING)
            MPI_OK(MPI_Neighbor_allgather(sbuf, n, S, rbuf, n, R, ring));
        else if (m == NONBLOCKING)
            MPI_OK(MPI_Ineighbor_allgather(sbuf, n, S, rbuf, n, R, ring, &rq));
        else
            MPI_OK(MPI_Neighbor_allgather_init(sbuf, n, S, rbuf, n, R, ring, MPI_INFO_NULL, &rq));
        break;
    case 1:
        fill(sbuf, 3, 0);
        if (m == BLOCKING)
            MPI_OK(MPI_Neighbor_allgatherv(sbuf, 3, S, rbuf, rcounts, rdispls, R, ring));
        else if (m == NONBLOCKING)
            MPI_OK(MPI_Ineighbor_allgatherv(sbuf, 3, S, rbuf, rcounts, rdispls, R, ring, &rq));
        else
            MPI_OK(MPI_Neighbor_allgatherv_init(sbuf, 3, S, rbuf, rcounts, rdispls, R, ring, MPI_INFO_NULL, &rq));
        break;
    case 2:
        for (int j = 0; j < SLOTS; j++)
            fill(sbuf + j * n * SEXT, n, j);
        if (m == BLOCKING)
            MPI_OK(MPI_Neighbor_alltoall(sbuf, n, S, rbuf, n, R, ring));
        else if (m == NONBLOCKING)
            MPI_OK(MPI_Ineighbor_alltoall(sbuf, n, S, rbuf, n, R, ring, &rq));
        else
            MPI_OK(MPI_Neighbor_alltoall_init(sbuf, n, S, rbuf, n, R, ring, MPI_INFO_NULL, &rq));
        break;
    case 3:
    case 4:
        for (int j = 0; j < SLOTS; j++)
            fill(sbuf + sdispls[j] * SEXT, scounts[j], j);
        if (which == 3) {
            if (m == BLOCKING)
                MPI_OK(MPI_Neighbor_alltoallv(sbuf, scounts, sdispls, S, rbuf, rcounts, rdispls, R, ring));
            else if (m == NONBLOCKING)
                MPI_OK(MPI_Ineighbor_alltoallv(sbuf, scounts, sdispls, S, rbuf, rcounts, rdispls, R, ring, &rq));
            else
                MPI_OK(MPI_Neighbor_alltoallv_init(sbuf, scounts, sdispls, S, rbuf, rcounts, rdispls, R, ring, MPI_INFO_NULL, &rq));
        } else {
            if (m == BLOCKING)
                MPI_OK(MPI_Neighbor_alltoallw(sbuf, scounts, sbytes, stypes, rbuf, rcounts, rbytes, rtypes, ring));
            else if (m == NONBLOCKING)
                MPI_OK(MPI_Ineighbor_alltoallw(sbuf, scounts, sbytes, stypes, rbuf, rcounts, rbytes, rtypes, ring, &rq));
            else
                MPI_OK(MPI_Neighbor_alltoallw_init(sbuf, scounts, sbytes, stypes, rbuf, rcounts, rbytes, rtypes, ring, MPI_INFO_NULL, &rq));
        }
        break;
    }
    finish(&rq, m);
    int eq = which == 0 || which == 2; /* equal blocks of n items, one after the other */
    for (int i = 0; i < SLOTS; i++) {
        if (eq)
            check_block(rbuf + i * n * REXT, n * REXT, n, i, which == 0, what);
        else /* the block and the gap after it */
            check_block(rbuf + rdispls[i] * REXT, 2 * MAXN * REXT, MAXN, i, which == 1, what);
    }
    if (eq) /* nothing past the last block */
        for (int k = SLOTS * n * REXT; k < (int)(sizeof rbuf / sizeof *rbuf); k++)
            CHECK(rbuf[k] == -1, "%s: int %d past the blocks overwritten", what, k);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int dims[1] = {size}, periods[1] = {1};
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    MPI_OK(MPI_Cart_shift(ring, 0, 1, &nbr[0], &nbr[1])); /* source = left, dest = right */
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &S));
    MPI_OK(MPI_Type_commit(&S));
    MPI_OK(MPI_Type_vector(3, 1, 3, MPI_INT, &v));
    MPI_OK(MPI_Type_create_resized(v, 0, REXT * (MPI_Aint)sizeof(int), &R));
    MPI_OK(MPI_Type_commit(&R));
    MPI_OK(MPI_Type_free(&v));
    for (int m = BLOCKING; m <= PERSISTENT; m++)
        for (int which = 0; which < 5; which++)
            run(which, (enum mode)m);
    MPI_OK(MPI_Type_free(&S));
    MPI_OK(MPI_Type_free(&R));
    MPI_OK(MPI_Comm_free(&ring));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("neighbor_types: OK\n");
    MPI_Finalize();
    return 0;
}
