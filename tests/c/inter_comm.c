/* Communicator constructors on an intercommunicator (MPI 4.1 §7.4.2): WORLD split into
 * two unequal groups joined by MPI_Intercomm_create, then
 *  1. MPI_Comm_split by color (w % 2, the last world rank MPI_UNDEFINED) and key (-w: the
 *     new ranks run in reverse world order): an intercomm of the same-color processes of
 *     both groups, MPI_COMM_NULL where a side is empty; sizes, ranks and the remote group
 *     checked, then an Allreduce over it;
 *  2. MPI_Comm_create with a subgroup of each side's local group;
 *  3. MPI_Comm_idup of the intercomm overlapped with a Sendrecv on WORLD, the duplicate
 *     used after the wait.
 * Needs at least 2 ranks (prints OK and exits at 1). */
#include "testutil.h"

static int w, size, na, g;

/* World ranks of the processes of group gr (0 = A, 1 = B) with color c, in descending
 * order (key -w); returns how many. */
static int members(int gr, int c, int *out)
{
    int n = 0;
    for (int x = size - 1; x >= 0; x--) {
        int xc = x == size - 1 ? MPI_UNDEFINED : x % 2;
        if ((x >= na) == gr && xc == c)
            out[n++] = x;
    }
    return n;
}

/* World rank of each rank of comm's remote group. */
static void remote_world(MPI_Comm comm, int n, int *out)
{
    MPI_Group rg, wg;
    int *r = malloc(n * sizeof(int));
    MPI_OK(MPI_Comm_remote_group(comm, &rg));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    for (int j = 0; j < n; j++)
        r[j] = j;
    MPI_OK(MPI_Group_translate_ranks(rg, n, r, wg, out));
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);
    free(r);
}

/* Checks an intercomm whose local and remote groups should be loc[nl] and rem[nr] (world
 * ranks, in rank order), then sums the remote world ranks with Allreduce. */
static void check_inter(MPI_Comm c, const int *loc, int nl, const int *rem, int nr, const char *what)
{
    int flag, ls, rs, rank, *rw = malloc(nr * sizeof(int));
    MPI_OK(MPI_Comm_test_inter(c, &flag));
    CHECK(flag, "%s: not an intercommunicator", what);
    MPI_Comm_size(c, &ls);
    MPI_Comm_remote_size(c, &rs);
    MPI_Comm_rank(c, &rank);
    CHECK(ls == nl && rs == nr, "%s: sizes %d/%d, expected %d/%d", what, ls, rs, nl, nr);
    CHECK(loc[rank] == w, "%s: rank %d is world %d, expected %d", what, rank, loc[rank], w);
    remote_world(c, nr, rw);
    int sum = 0, got = -1;
    for (int j = 0; j < nr; j++) {
        CHECK(rw[j] == rem[j], "%s: remote rank %d is world %d, expected %d", what, j, rw[j], rem[j]);
        sum += rem[j];
    }
    MPI_OK(MPI_Allreduce(&w, &got, 1, MPI_INT, MPI_SUM, c));
    CHECK(got == sum, "%s: allreduce %d, expected %d", what, got, sum);
    free(rw);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    w = tu_rank;
    if (size < 2) {
        printf("inter_comm: OK\n");
        MPI_Finalize();
        return 0;
    }
    MPI_Comm half, ic = tu_intercomm(5, &na, &g, &half);
    int *loc = malloc(size * sizeof(int)), *rem = malloc(size * sizeof(int));

    /* 1. Split. */
    int color = w == size - 1 ? MPI_UNDEFINED : w % 2;
    MPI_Comm sc;
    MPI_OK(MPI_Comm_split(ic, color, -w, &sc));
    if (color == MPI_UNDEFINED) {
        CHECK(sc == MPI_COMM_NULL, "split: MPI_UNDEFINED gave a communicator");
    } else {
        int nl = members(g, color, loc), nr = members(!g, color, rem);
        if (nr == 0)
            CHECK(sc == MPI_COMM_NULL, "split: empty remote side gave a communicator");
        else
            check_inter(sc, loc, nl, rem, nr, "split");
        if (sc != MPI_COMM_NULL)
            MPI_OK(MPI_Comm_free(&sc));
    }

    /* 2. Create: A keeps all its ranks but the last (all if it has one), B its even local
     * ranks. */
    MPI_Group lg, sub;
    int ln, lr;
    MPI_Comm_size(ic, &ln);
    MPI_Comm_rank(ic, &lr);
    MPI_OK(MPI_Comm_group(ic, &lg));
    int *inc = malloc(ln * sizeof(int)), ni = 0;
    for (int i = 0; i < ln; i++)
        if (g == 0 ? (ln == 1 || i < ln - 1) : i % 2 == 0)
            inc[ni++] = i;
    MPI_OK(MPI_Group_incl(lg, ni, inc, &sub));
    MPI_Comm cc;
    MPI_OK(MPI_Comm_create(ic, sub, &cc));
    int in = g == 0 ? (ln == 1 || lr < ln - 1) : lr % 2 == 0;
    if (!in) {
        CHECK(cc == MPI_COMM_NULL, "create: a process outside the group got a communicator");
    } else {
        int nl = 0, nr = 0, nb = size - na;
        if (g == 0) {
            for (int i = 0; i < ni; i++)
                loc[nl++] = inc[i];
            for (int i = 0; i < nb; i += 2)
                rem[nr++] = na + i;
        } else {
            for (int i = 0; i < ni; i++)
                loc[nl++] = na + inc[i];
            for (int i = 0; i < na; i++)
                if (na == 1 || i < na - 1)
                    rem[nr++] = i;
        }
        check_inter(cc, loc, nl, rem, nr, "create");
        MPI_OK(MPI_Comm_free(&cc));
    }
    MPI_Group_free(&sub);
    MPI_Group_free(&lg);
    free(inc);

    /* 3. Idup overlapped with point-to-point traffic on WORLD. */
    MPI_Comm dup;
    MPI_Request rq;
    MPI_OK(MPI_Comm_idup(ic, &dup, &rq));
    int out = w, got = -1, right = (w + 1) % size, left = (w + size - 1) % size;
    MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, right, 9, &got, 1, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == left, "sendrecv during idup: %d, expected %d", got, left);
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    {
        int nl = 0, nr = 0;
        for (int x = 0; x < size; x++) {
            if ((x >= na) == g)
                loc[nl++] = x;
            else
                rem[nr++] = x;
        }
        check_inter(dup, loc, nl, rem, nr, "idup");
    }
    MPI_OK(MPI_Comm_free(&dup));

    free(loc);
    free(rem);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&half);
    MPI_Barrier(MPI_COMM_WORLD);
    if (w == 0)
        printf("inter_comm: OK\n");
    MPI_Finalize();
    return 0;
}
