/* Group algebra checked against a local model (arrays of world ranks). */
#include "testutil.h"

static int model_rank(const int *g, int n, int w)
{
    for (int i = 0; i < n; i++)
        if (g[i] == w)
            return i;
    return MPI_UNDEFINED;
}

/* The members of group g as world ranks. */
static int members(MPI_Group g, MPI_Group world, int *out)
{
    int n;
    MPI_Group_size(g, &n);
    int idx[64];
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_OK(MPI_Group_translate_ranks(g, n, idx, world, out));
    return n;
}

static void expect(MPI_Group g, MPI_Group world, const int *want, int nwant, const char *what)
{
    int got[64];
    int n = members(g, world, got);
    CHECK(n == nwant, "%s: size %d, expected %d", what, n, nwant);
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: member %d is %d, expected %d", what, i, got[i], want[i]);
}

int main(int argc, char **argv)
{
    int rank, size;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Group world, a, b, u, x, d, e;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int n, r;
    MPI_Group_size(world, &n);
    MPI_Group_rank(world, &r);
    CHECK(n == size && r == rank, "world group %d/%d", r, n);

    /* a = reverse of world; b = even world ranks. */
    int ra[64], rb[64], nb = 0;
    for (int i = 0; i < size; i++)
        ra[i] = size - 1 - i;
    for (int i = 0; i < size; i += 2)
        rb[nb++] = i;
    MPI_OK(MPI_Group_incl(world, size, ra, &a));
    MPI_OK(MPI_Group_incl(world, nb, rb, &b));
    expect(a, world, ra, size, "incl reverse");
    expect(b, world, rb, nb, "incl evens");
    MPI_Group_rank(b, &r);
    CHECK(r == (rank % 2 ? MPI_UNDEFINED : rank / 2), "rank in evens %d", r);

    /* union(b, a) = evens then odds in a's (descending) order. */
    int mu[64], nu = 0;
    for (int i = 0; i < nb; i++) mu[nu++] = rb[i];
    for (int i = 0; i < size; i++)
        if (model_rank(rb, nb, ra[i]) == MPI_UNDEFINED) mu[nu++] = ra[i];
    MPI_OK(MPI_Group_union(b, a, &u));
    expect(u, world, mu, nu, "union");
    /* intersection(a, b): evens in a's order (descending). */
    int mx[64], nx = 0;
    for (int i = 0; i < size; i++)
        if (ra[i] % 2 == 0) mx[nx++] = ra[i];
    MPI_OK(MPI_Group_intersection(a, b, &x));
    expect(x, world, mx, nx, "intersection");
    /* difference(a, b): odds in a's order. */
    int md[64], nd = 0;
    for (int i = 0; i < size; i++)
        if (ra[i] % 2) md[nd++] = ra[i];
    MPI_OK(MPI_Group_difference(a, b, &d));
    if (nd == 0)
        CHECK(d == MPI_GROUP_EMPTY, "empty difference is MPI_GROUP_EMPTY");
    expect(d, world, md, nd, "difference");

    /* excl and ranges. */
    int one = 0;
    MPI_OK(MPI_Group_excl(world, 1, &one, &e));
    int me[64];
    for (int i = 1; i < size; i++) me[i - 1] = i;
    expect(e, world, me, size - 1, "excl 0");
    MPI_Group_free(&e);
    int ranges[2][3] = {{size - 1, 0, -2}, {0, 0, 1}};
    int mr[64], nr = 0;
    for (int i = size - 1; i >= 0; i -= 2) mr[nr++] = i;
    int nranges = 1;
    if ((size - 1) % 2 == 1) { mr[nr++] = 0; nranges = 2; }
    MPI_OK(MPI_Group_range_incl(world, nranges, ranges, &e));
    expect(e, world, mr, nr, "range_incl");
    MPI_Group_free(&e);
    int rex[1][3] = {{0, size - 1, 2}};
    int mre[64], nre = 0;
    for (int i = 1; i < size; i += 2) mre[nre++] = i;
    MPI_OK(MPI_Group_range_excl(world, 1, rex, &e));
    expect(e, world, mre, nre, "range_excl");
    MPI_Group_free(&e);

    /* compare */
    int c;
    MPI_OK(MPI_Group_compare(world, world, &c));
    CHECK(c == MPI_IDENT, "compare ident %d", c);
    MPI_OK(MPI_Group_compare(world, a, &c));
    CHECK(c == (size == 1 ? MPI_IDENT : MPI_SIMILAR), "compare similar %d", c);
    MPI_OK(MPI_Group_compare(world, b, &c));
    CHECK(c == (size == 1 ? MPI_IDENT : MPI_UNEQUAL), "compare unequal %d", c);

    /* MPI_GROUP_EMPTY */
    MPI_Group_size(MPI_GROUP_EMPTY, &n);
    MPI_Group_rank(MPI_GROUP_EMPTY, &r);
    CHECK(n == 0 && r == MPI_UNDEFINED, "empty group %d %d", n, r);
    MPI_Group ee;
    MPI_OK(MPI_Group_intersection(b, MPI_GROUP_EMPTY, &ee));
    MPI_Group_size(ee, &n);
    CHECK(n == 0, "intersection with empty: %d", n);
    MPI_OK(MPI_Group_compare(ee, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_IDENT, "empty compare %d", c);
    if (ee != MPI_GROUP_EMPTY)
        MPI_Group_free(&ee);

    /* translate with MPI_PROC_NULL and a non-member. */
    int in[2] = {MPI_PROC_NULL, 0}, outr[2];
    MPI_OK(MPI_Group_translate_ranks(a, 2, in, b, outr));
    CHECK(outr[0] == MPI_PROC_NULL, "translate proc_null");
    CHECK(outr[1] == ((size - 1) % 2 == 0 ? (size - 1) / 2 : MPI_UNDEFINED), "translate a[0]=%d -> %d", size - 1, outr[1]);

    /* errors (checked on OxMPI only: MPICH builds may skip argument checks) */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen;
    MPI_Get_library_version(lib, &liblen);
    int dup2[2] = {0, 0};
    if (strstr(lib, "OxMPI")) {
    CHECK(MPI_Group_incl(world, 2, dup2, &e) != MPI_SUCCESS, "duplicate ranks accepted");
    int big = size;
    int rc = MPI_Group_incl(world, 1, &big, &e), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "out-of-range rank: class %d", cls);
    }

    MPI_Group g2[] = {a, b, u, x, world};
    for (int i = 0; i < 5; i++) {
        MPI_OK(MPI_Group_free(&g2[i]));
        CHECK(g2[i] == MPI_GROUP_NULL, "free nulls the handle");
    }
    if (d != MPI_GROUP_EMPTY)
        MPI_Group_free(&d);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("group_algebra: OK\n");
    MPI_Finalize();
    return 0;
}
