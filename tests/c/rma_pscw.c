/* rma_pscw: general active-target synchronization (MPI_Win_post / MPI_Win_start /
 * MPI_Win_complete / MPI_Win_wait and MPI_Win_test) with subgroups of WORLD.
 * Window layout (longs, disp_unit sizeof(long)) on every rank:
 *   [0, size)          one put slot per origin rank
 *   [ACC]              an accumulate (MPI_SUM) counter
 *   [RO, RO + NRO)     read-only data for gets (owner * 1000 + k + 100 * round)
 * Patterns, several rounds each (epochs reused):
 *  - even ranks expose to the odd ranks, the odd ranks access every even rank (MPI_Put,
 *    MPI_Get, MPI_Accumulate), exposers end with MPI_Win_wait;
 *  - the reverse (odd ranks expose to even ones), exposers poll MPI_Win_test until true;
 *  - a ring: every rank exposes to and accesses {left, right} at once (both epochs open
 *    on the same window), alternating MPI_Win_wait and MPI_Win_test;
 *  - a gets-only ring round whose post carries MPI_MODE_NOPUT (and NOSTORE);
 *  - groups may be empty (1 rank: nobody is odd), then post/start/complete/wait with
 *    MPI_GROUP_EMPTY must still work.
 * No barriers between rounds: an origin's accesses must wait for the target's post.
 * After each round every exposer checks every slot: written exactly by the members of
 * its exposure group, untouched (sentinel) elsewhere, and the counter is the exact sum. */
#include "testutil.h"

#define NRO 4
#define SENT (-7L)

static int rank, nprocs, ACC, RO, NELEM;
static MPI_Group world_group;

static long slot_val(int origin, int round) { return 1000000L * (round + 1) + origin; }
static long ro_val(int owner, int k, int round) { return owner * 1000L + k + 100L * round; }

static MPI_Group make_group(const int *ranks, int n)
{
    MPI_Group g;
    MPI_OK(MPI_Group_incl(world_group, n, ranks, &g));
    return g;
}

/* Ranks of WORLD with the given parity. */
static int parity_ranks(int parity, int *out)
{
    int n = 0;
    for (int r = 0; r < nprocs; r++)
        if (r % 2 == parity)
            out[n++] = r;
    return n;
}

static void prepare(long *w, int round)
{
    for (int i = 0; i < NELEM; i++)
        w[i] = SENT;
    w[ACC] = 0;
    for (int k = 0; k < NRO; k++)
        w[RO + k] = ro_val(rank, k, round);
}

/* Access epoch on `targets`: put our slot, get their read-only data, add to their counter. */
static void access_ops(MPI_Win win, const int *targets, int nt, int round, long *getbuf)
{
    long mine = slot_val(rank, round), add = rank + 1;
    for (int i = 0; i < nt; i++) {
        int t = targets[i];
        MPI_OK(MPI_Put(&mine, 1, MPI_LONG, t, rank, 1, MPI_LONG, win));
        MPI_OK(MPI_Get(&getbuf[i * NRO], NRO, MPI_LONG, t, RO, NRO, MPI_LONG, win));
        MPI_OK(MPI_Accumulate(&add, 1, MPI_LONG, t, ACC, 1, MPI_LONG, MPI_SUM, win));
    }
}

static void check_gets(const long *getbuf, const int *targets, int nt, int round, const char *what)
{
    for (int i = 0; i < nt; i++)
        for (int k = 0; k < NRO; k++)
            CHECK(getbuf[i * NRO + k] == ro_val(targets[i], k, round),
                  "%s round %d: MPI_Get from rank %d element %d = %ld, expected %ld", what, round,
                  targets[i], k, getbuf[i * NRO + k], ro_val(targets[i], k, round));
}

/* Exposer's check: slots of `origins` written, others untouched, counter exact. */
static void check_exposed(const long *w, const int *origins, int no, int round, int puts,
                          const char *what)
{
    long sum = 0;
    for (int r = 0; r < nprocs; r++) {
        int member = 0;
        for (int i = 0; i < no; i++)
            member |= origins[i] == r;
        long expect = (member && puts) ? slot_val(r, round) : SENT;
        CHECK(w[r] == expect, "%s round %d: slot of rank %d = %ld, expected %ld", what, round, r,
              w[r], expect);
    }
    for (int i = 0; i < no; i++)
        sum += origins[i] + 1;
    if (!puts)
        sum = 0;
    CHECK(w[ACC] == sum, "%s round %d: accumulate counter = %ld, expected %ld", what, round,
          w[ACC], sum);
    for (int k = 0; k < NRO; k++)
        CHECK(w[RO + k] == ro_val(rank, k, round), "%s round %d: read-only element %d changed",
              what, round, k);
}

static void wait_or_test(MPI_Win win, int use_test, const char *what)
{
    if (!use_test) {
        MPI_OK(MPI_Win_wait(win));
        return;
    }
    double t0 = MPI_Wtime();
    long polls = 0;
    int flag = 0;
    for (;;) {
        MPI_OK(MPI_Win_test(win, &flag));
        polls++;
        if (flag)
            break;
        if (MPI_Wtime() - t0 > 30.0)
            FAIL("%s: MPI_Win_test not true after 30 s (%ld polls)", what, polls);
    }
}

/* One parity round: ranks of parity `exp_par` expose to the others, who access them. */
static void parity_round(long *w, MPI_Win win, int exp_par, int round, int use_test)
{
    int exposers[64], accessors[64];
    int ne = parity_ranks(exp_par, exposers), na = parity_ranks(1 - exp_par, accessors);
    long getbuf[64 * NRO];
    const char *what = exp_par == 0 ? "even expose to odd" : "odd expose to even";

    prepare(w, round); /* no barrier: nobody accesses us before our post */
    if (rank % 2 == exp_par) {
        MPI_Group g = make_group(accessors, na);
        MPI_OK(MPI_Win_post(g, 0, win));
        wait_or_test(win, use_test, what);
        MPI_OK(MPI_Group_free(&g));
        check_exposed(w, accessors, na, round, 1, what);
    } else {
        MPI_Group g = make_group(exposers, ne);
        MPI_OK(MPI_Win_start(g, 0, win));
        access_ops(win, exposers, ne, round, getbuf);
        MPI_OK(MPI_Win_complete(win));
        MPI_OK(MPI_Group_free(&g));
        check_gets(getbuf, exposers, ne, round, what);
        /* nobody accessed us */
        check_exposed(w, NULL, 0, round, 1, what);
    }
}

/* Ring round: expose to and access {left, right} (one rank when they coincide). */
static void ring_round(long *w, MPI_Win win, int round, int use_test, int gets_only)
{
    int nb[2], n = 0;
    int left = (rank + nprocs - 1) % nprocs, right = (rank + 1) % nprocs;
    nb[n++] = left;
    if (right != left)
        nb[n++] = right;
    long getbuf[2 * NRO];
    const char *what = gets_only ? "ring (gets only, MPI_MODE_NOPUT)" : "ring";

    prepare(w, round);
    MPI_Group g = make_group(nb, n);
    MPI_OK(MPI_Win_post(g, gets_only ? (MPI_MODE_NOPUT | MPI_MODE_NOSTORE) : 0, win));
    MPI_OK(MPI_Win_start(g, 0, win));
    if (gets_only) {
        for (int i = 0; i < n; i++)
            MPI_OK(MPI_Get(&getbuf[i * NRO], NRO, MPI_LONG, nb[i], RO, NRO, MPI_LONG, win));
    } else {
        access_ops(win, nb, n, round, getbuf);
    }
    MPI_OK(MPI_Win_complete(win));
    wait_or_test(win, use_test, what);
    MPI_OK(MPI_Group_free(&g));
    check_gets(getbuf, nb, n, round, what);
    check_exposed(w, nb, n, round, !gets_only, what);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(nprocs <= 64, "at most 64 ranks");
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    ACC = nprocs;
    RO = nprocs + 1;
    NELEM = nprocs + 1 + NRO;

    long *w = NULL;
    MPI_Win win;
    /* an even number of longs: MPICH 4.0.2 misplaces RMA on MPI_Win_allocate windows
     * whose size is not a multiple of 16 bytes (rma_fence covers odd sizes) */
    MPI_OK(MPI_Win_allocate((MPI_Aint)(NELEM + NELEM % 2) * sizeof(long), sizeof(long), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &w, &win));
    int round = 0;
    for (int rep = 0; rep < 2; rep++) {
        parity_round(w, win, 0, round++, rep);
        parity_round(w, win, 1, round++, !rep);
        ring_round(w, win, round++, rep, 0);
        ring_round(w, win, round++, !rep, 0);
        ring_round(w, win, round++, rep, 1);
    }
    MPI_OK(MPI_Win_free(&win));

    /* The same on a window over user memory (MPI_Win_create). */
    long *u = tu_malloc((size_t)NELEM * sizeof(long));
    MPI_OK(MPI_Win_create(u, (MPI_Aint)NELEM * sizeof(long), sizeof(long), MPI_INFO_NULL,
                          MPI_COMM_WORLD, &win));
    parity_round(u, win, 0, round++, 1);
    ring_round(u, win, round++, 0, 0);
    MPI_OK(MPI_Win_free(&win));
    free(u);

    MPI_OK(MPI_Group_free(&world_group));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("rma_pscw: OK (%d ranks, %d rounds)\n", nprocs, round);
    MPI_Finalize();
    return 0;
}
