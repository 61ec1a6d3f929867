/* sendrecv: MPI_Sendrecv and MPI_Sendrecv_replace around the ring (send right,
 * receive from left), small and large (rendezvous-sized) messages, several
 * laps; a message passed n times with Sendrecv_replace comes back unchanged.
 * Also: Sendrecv receiving with MPI_ANY_SOURCE/MPI_ANY_TAG, different send and
 * receive sizes, and a non-periodic chain whose ends use MPI_PROC_NULL.
 * n == 1: rank 0 exchanges with itself. */
#include "testutil.h"

#define NSIZES 6
static const int sizes[NSIZES] = {0, 1, 1000, 16385, 300000, 4 * 1048576 + 1};
#define MAXSZ (4 * 1048576 + 1)

static uint32_t seed_of(int size, int lap, int origin)
{
    return (uint32_t)size * 13u + (uint32_t)lap * 101u + (uint32_t)origin * 7777u;
}

int main(int argc, char **argv)
{
    int rank, n;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int right = (rank + 1) % n, left = (rank + n - 1) % n;
    unsigned char *sbuf = tu_malloc(MAXSZ), *rbuf = tu_malloc(MAXSZ);
    MPI_Status st;

    /* 1. Sendrecv: send right and receive from the left at once, 3 laps per size. */
    for (int si = 0; si < NSIZES; si++) {
        int size = sizes[si];
        for (int lap = 0; lap < 3; lap++) {
            int tag = 10 + lap;
            tu_fill(sbuf, size, seed_of(size, lap, rank));
            memset(rbuf, 0, size);
            MPI_Sendrecv(sbuf, size, MPI_BYTE, right, tag, rbuf, MAXSZ, MPI_BYTE, left, tag,
                         MPI_COMM_WORLD, &st);
            CHECK_STATUS(&st, left, tag, MPI_BYTE, size);
            CHECK_PATTERN(rbuf, size, seed_of(size, lap, left), "Sendrecv size %d lap %d", size,
                          lap);
        }
        /* wildcards on the receive side */
        tu_fill(sbuf, size, seed_of(size, 9, rank));
        MPI_Sendrecv(sbuf, size, MPI_BYTE, right, 33, rbuf, MAXSZ, MPI_BYTE, MPI_ANY_SOURCE,
                     MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK_STATUS(&st, left, 33, MPI_BYTE, size);
        CHECK_PATTERN(rbuf, size, seed_of(size, 9, left), "Sendrecv wildcard size %d", size);
    }

    /* 2. Sendrecv_replace: after k steps the buffer holds what rank-k started
     * with; after n steps it is our own data again. */
    for (int si = 0; si < NSIZES; si++) {
        int size = sizes[si];
        tu_fill(sbuf, size, seed_of(size, 0, rank));
        for (int step = 1; step <= n; step++) {
            int origin = ((rank - step) % n + n) % n;
            MPI_Sendrecv_replace(sbuf, size, MPI_BYTE, right, 20, left, 20, MPI_COMM_WORLD, &st);
            CHECK_STATUS(&st, left, 20, MPI_BYTE, size);
            CHECK_PATTERN(sbuf, size, seed_of(size, 0, origin),
                          "Sendrecv_replace size %d step %d (data of rank %d)", size, step,
                          origin);
        }
        /* in ints as well */
        int count = size / (int)sizeof(int);
        int *ints = (int *)sbuf;
        for (int i = 0; i < count; i++)
            ints[i] = rank * 100000 + i;
        MPI_Sendrecv_replace(ints, count, MPI_INT, right, 21, MPI_ANY_SOURCE, MPI_ANY_TAG,
                             MPI_COMM_WORLD, &st);
        CHECK_STATUS(&st, left, 21, MPI_INT, count);
        for (int i = 0; i < count; i++)
            CHECK(ints[i] == left * 100000 + i, "Sendrecv_replace ints[%d] = %d, expected %d",
                  i, ints[i], left * 100000 + i);
    }

    /* 3. Chain 0 -> 1 -> ... -> n-1 with MPI_PROC_NULL at both ends; the data
     * sent and received have different sizes. */
    {
        int to = (rank + 1 < n) ? rank + 1 : MPI_PROC_NULL;
        int from = (rank > 0) ? rank - 1 : MPI_PROC_NULL;
        int sendn = 100 + rank, recvn_expected = (from == MPI_PROC_NULL) ? 0 : 100 + from;
        tu_fill(sbuf, sendn, seed_of(sendn, 5, rank));
        memset(rbuf, 0x3C, 200);
        MPI_Sendrecv(sbuf, sendn, MPI_BYTE, to, 40, rbuf, 200, MPI_BYTE, from, 40,
                     MPI_COMM_WORLD, &st);
        if (from == MPI_PROC_NULL) {
            int count = -1;
            CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG,
                  "chain: receive from MPI_PROC_NULL gave source %d tag %d", st.MPI_SOURCE,
                  st.MPI_TAG);
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK(count == 0, "chain: receive from MPI_PROC_NULL gave count %d", count);
            CHECK(rbuf[0] == 0x3C, "chain: receive from MPI_PROC_NULL wrote the buffer");
        } else {
            CHECK_STATUS(&st, from, 40, MPI_BYTE, recvn_expected);
            CHECK_PATTERN(rbuf, recvn_expected, seed_of(recvn_expected, 5, from), "chain");
        }
        /* Sendrecv_replace along the chain the other way */
        int *v = (int *)rbuf;
        v[0] = rank;
        MPI_Sendrecv_replace(v, 1, MPI_INT, from, 41, to, 41, MPI_COMM_WORLD, &st);
        if (to == MPI_PROC_NULL)
            CHECK(v[0] == rank && st.MPI_SOURCE == MPI_PROC_NULL,
                  "chain replace from MPI_PROC_NULL: value %d source %d", v[0], st.MPI_SOURCE);
        else
            CHECK(v[0] == to && st.MPI_SOURCE == to, "chain replace: value %d source %d",
                  v[0], st.MPI_SOURCE);
    }

    free(sbuf);
    free(rbuf);
    if (rank == 0)
        printf("sendrecv: OK (%d ranks)\n", n);
    MPI_Finalize();
    return 0;
}
