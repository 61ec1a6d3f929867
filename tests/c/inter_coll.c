/* Collectives on an intercommunicator (MPI 4.1 §6.2.2): WORLD is split into two unequal
 * groups (A = the first max(1, (size-1)/2) ranks, B = the rest) joined by
 * MPI_Intercomm_create. Every collective runs blocking and nonblocking, rooted ones with
 * each group as the root's group (root = its last rank, so not the leader), at a small
 * and a large (rendezvous) size; each process checks the values it receives from the
 * other group. Then several nonblocking collectives in flight at once (Waitall), a
 * non-commutative user op, and the errors: Scan/Exscan (MPI_ERR_COMM), MPI_IN_PLACE,
 * a bad root. Needs at least 2 ranks (prints OK and exits at 1). */
#include "testutil.h"

static int w, size, na, g, lr, ln, rn;

/* World rank of rank j of the remote group. */
static int rw(int j) { return g == 0 ? na + j : j; }

/* The `root` argument of this process when the root is the last rank of group rg. */
static int root_arg(int rg)
{
    int rsize = rg == 0 ? na : size - na;
    if (g == rg)
        return lr == rsize - 1 ? MPI_ROOT : MPI_PROC_NULL;
    return rsize - 1;
}

/* World rank of that root. */
static int root_world(int rg) { return rg == 0 ? na - 1 : size - 1; }

#define RUN(nb, B, I)                                                          \
    do {                                                                       \
        if (nb) {                                                              \
            MPI_Request r_;                                                    \
            MPI_OK(I);                                                         \
            MPI_OK(MPI_Waitall(1, &r_, MPI_STATUSES_IGNORE));                  \
        } else {                                                               \
            MPI_OK(B);                                                         \
        }                                                                      \
    } while (0)

static int *ints(size_t n, int fill)
{
    int *p = malloc((n ? n : 1) * sizeof(int));
    for (size_t i = 0; i < n; i++)
        p[i] = fill;
    return p;
}

static void t_bcast(MPI_Comm ic, int rg, int n, int nb)
{
    int root = root_arg(rg), *b = ints(n, -1);
    if (root == MPI_ROOT)
        for (int i = 0; i < n; i++)
            b[i] = w * 7 + i;
    RUN(nb, MPI_Bcast(b, n, MPI_INT, root, ic), MPI_Ibcast(b, n, MPI_INT, root, ic, &r_));
    for (int i = 0; i < n; i++) {
        int e = root == MPI_ROOT ? w * 7 + i : root == MPI_PROC_NULL ? -1 : root_world(rg) * 7 + i;
        CHECK(b[i] == e, "bcast rg %d n %d nb %d: b[%d] = %d, expected %d", rg, n, nb, i, b[i], e);
    }
    free(b);
}

static void t_reduce(MPI_Comm ic, int rg, int n, int nb)
{
    int root = root_arg(rg), *s = ints(n, 0), *r = ints(n, -1);
    for (int i = 0; i < n; i++)
        s[i] = w + i;
    RUN(nb, MPI_Reduce(s, r, n, MPI_INT, MPI_SUM, root, ic), MPI_Ireduce(s, r, n, MPI_INT, MPI_SUM, root, ic, &r_));
    if (root == MPI_ROOT)
        for (int i = 0; i < n; i++) {
            int e = 0;
            for (int j = 0; j < rn; j++)
                e += rw(j) + i;
            CHECK(r[i] == e, "reduce rg %d n %d nb %d: r[%d] = %d, expected %d", rg, n, nb, i, r[i], e);
        }
    else
        CHECK(n == 0 || r[0] == -1, "reduce: a non-root's recvbuf was written");
    free(s);
    free(r);
}

static void t_gather(MPI_Comm ic, int rg, int n, int nb, int v)
{
    int root = root_arg(rg), *s = ints(n + lr, 0), *r = NULL;
    int *cnt = ints(rn, 0), *dis = ints(rn, 0), total = 0;
    for (int j = 0; j < rn; j++) {
        cnt[j] = v ? n + j : n;
        dis[j] = total + (v ? 2 : 0); /* gaps between the blocks of Gatherv */
        total = dis[j] + cnt[j];
    }
    int mine = v ? n + lr : n;
    for (int i = 0; i < mine; i++)
        s[i] = w * 100 + i;
    if (root == MPI_ROOT)
        r = ints(total, -1);
    if (v)
        RUN(nb, MPI_Gatherv(s, mine, MPI_INT, r, cnt, dis, MPI_INT, root, ic), MPI_Igatherv(s, mine, MPI_INT, r, cnt, dis, MPI_INT, root, ic, &r_));
    else
        RUN(nb, MPI_Gather(s, n, MPI_INT, r, n, MPI_INT, root, ic), MPI_Igather(s, n, MPI_INT, r, n, MPI_INT, root, ic, &r_));
    if (root == MPI_ROOT)
        for (int j = 0; j < rn; j++)
            for (int i = 0; i < cnt[j]; i++)
                CHECK(r[dis[j] + i] == rw(j) * 100 + i, "gather%s rg %d n %d nb %d: block %d [%d] = %d", v ? "v" : "", rg, n, nb, j, i, r[dis[j] + i]);
    free(s);
    free(r);
    free(cnt);
    free(dis);
}

static void t_scatter(MPI_Comm ic, int rg, int n, int nb, int v)
{
    int root = root_arg(rg), *s = NULL, *r = ints(n + lr, -1);
    int *cnt = ints(rn, 0), *dis = ints(rn, 0), total = 0;
    for (int j = 0; j < rn; j++) {
        cnt[j] = v ? n + j : n;
        dis[j] = total + (v ? 3 : 0);
        total = dis[j] + cnt[j];
    }
    if (root == MPI_ROOT) {
        s = ints(total, 0);
        for (int j = 0; j < rn; j++)
            for (int i = 0; i < cnt[j]; i++)
                s[dis[j] + i] = rw(j) * 100 + i;
    }
    int mine = v ? n + lr : n;
    if (v)
        RUN(nb, MPI_Scatterv(s, cnt, dis, MPI_INT, r, mine, MPI_INT, root, ic), MPI_Iscatterv(s, cnt, dis, MPI_INT, r, mine, MPI_INT, root, ic, &r_));
    else
        RUN(nb, MPI_Scatter(s, n, MPI_INT, r, n, MPI_INT, root, ic), MPI_Iscatter(s, n, MPI_INT, r, n, MPI_INT, root, ic, &r_));
    if (root != MPI_ROOT && root != MPI_PROC_NULL)
        for (int i = 0; i < mine; i++)
            CHECK(r[i] == w * 100 + i, "scatter%s rg %d n %d nb %d: r[%d] = %d", v ? "v" : "", rg, n, nb, i, r[i]);
    free(s);
    free(r);
    free(cnt);
    free(dis);
}

static void t_allgather(MPI_Comm ic, int n, int v, int nb)
{
    int mine = v ? n + lr % 3 : n, *s = ints(mine, 0);
    int *cnt = ints(rn, 0), *dis = ints(rn, 0), total = 0;
    for (int j = 0; j < rn; j++) {
        cnt[j] = v ? n + j % 3 : n;
        dis[j] = total + (v ? 1 : 0);
        total = dis[j] + cnt[j];
    }
    for (int i = 0; i < mine; i++)
        s[i] = w * 10 + i;
    int *r = ints(total, -1);
    if (v)
        RUN(nb, MPI_Allgatherv(s, mine, MPI_INT, r, cnt, dis, MPI_INT, ic), MPI_Iallgatherv(s, mine, MPI_INT, r, cnt, dis, MPI_INT, ic, &r_));
    else
        RUN(nb, MPI_Allgather(s, n, MPI_INT, r, n, MPI_INT, ic), MPI_Iallgather(s, n, MPI_INT, r, n, MPI_INT, ic, &r_));
    for (int j = 0; j < rn; j++)
        for (int i = 0; i < cnt[j]; i++)
            CHECK(r[dis[j] + i] == rw(j) * 10 + i, "allgather%s n %d nb %d: block %d [%d] = %d", v ? "v" : "", n, nb, j, i, r[dis[j] + i]);
    free(s);
    free(r);
    free(cnt);
    free(dis);
}

/* Elements world rank a sends to world rank b in Alltoallv/w. */
static int a2a_count(int n, int a, int b) { return n + (a + 2 * b) % 3; }
static int a2a_val(int a, int b, int i) { return a * 10000 + b * 100 + i; }

static void t_alltoall(MPI_Comm ic, int n, int kind, int nb)
{
    int *sc = ints(rn, 0), *sd = ints(rn, 0), *rc = ints(rn, 0), *rd = ints(rn, 0);
    int st = 0, rt = 0;
    for (int j = 0; j < rn; j++) {
        sc[j] = kind ? a2a_count(n, w, rw(j)) : n;
        rc[j] = kind ? a2a_count(n, rw(j), w) : n;
        sd[j] = st + (kind ? 1 : 0);
        rd[j] = rt + (kind ? 2 : 0);
        st = sd[j] + sc[j];
        rt = rd[j] + rc[j];
    }
    int *s = ints(st, 0), *r = ints(rt, -1);
    for (int j = 0; j < rn; j++)
        for (int i = 0; i < sc[j]; i++)
            s[sd[j] + i] = a2a_val(w, rw(j), i);
    if (kind == 0) {
        RUN(nb, MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, ic), MPI_Ialltoall(s, n, MPI_INT, r, n, MPI_INT, ic, &r_));
    } else if (kind == 1) {
        RUN(nb, MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, ic), MPI_Ialltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, ic, &r_));
    } else {
        MPI_Datatype *ty = malloc(rn * sizeof(MPI_Datatype));
        int *sdb = ints(rn, 0), *rdb = ints(rn, 0);
        for (int j = 0; j < rn; j++) {
            ty[j] = MPI_INT;
            sdb[j] = sd[j] * (int)sizeof(int);
            rdb[j] = rd[j] * (int)sizeof(int);
        }
        RUN(nb, MPI_Alltoallw(s, sc, sdb, ty, r, rc, rdb, ty, ic), MPI_Ialltoallw(s, sc, sdb, ty, r, rc, rdb, ty, ic, &r_));
        free(ty);
        free(sdb);
        free(rdb);
    }
    for (int j = 0; j < rn; j++)
        for (int i = 0; i < rc[j]; i++)
            CHECK(r[rd[j] + i] == a2a_val(rw(j), w, i), "alltoall kind %d n %d nb %d: from %d [%d] = %d", kind, n, nb, j, i, r[rd[j] + i]);
    free(s);
    free(r);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

static void t_allreduce(MPI_Comm ic, int n, int nb)
{
    int *s = ints(n, 0), *r = ints(n, -1);
    for (int i = 0; i < n; i++)
        s[i] = w * 3 + i;
    RUN(nb, MPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, ic), MPI_Iallreduce(s, r, n, MPI_INT, MPI_SUM, ic, &r_));
    for (int i = 0; i < n; i++) {
        int e = 0;
        for (int j = 0; j < rn; j++)
            e += rw(j) * 3 + i;
        CHECK(r[i] == e, "allreduce n %d nb %d: r[%d] = %d, expected %d", n, nb, i, r[i], e);
    }
    free(s);
    free(r);
}

/* Reduce_scatter: both groups reduce vectors of T elements; group sizes differ, so the
 * blocks do too: T/ln each (Reduce_scatter: one more for rank 0, one less for the last). */
static void t_reduce_scatter(MPI_Comm ic, int scale, int block, int nb)
{
    int T = na * (size - na) * scale;
    int *cnt = ints(ln, 0), off = 0, mine_off = 0;
    for (int i = 0; i < ln; i++) {
        cnt[i] = T / ln + (!block && ln > 1 ? (i == 0) - (i == ln - 1) : 0);
        if (i == lr)
            mine_off = off;
        off += cnt[i];
    }
    int *s = ints(T, 0), *r = ints(cnt[lr], -1);
    for (int k = 0; k < T; k++)
        s[k] = w + k;
    if (block)
        RUN(nb, MPI_Reduce_scatter_block(s, r, T / ln, MPI_INT, MPI_SUM, ic), MPI_Ireduce_scatter_block(s, r, T / ln, MPI_INT, MPI_SUM, ic, &r_));
    else
        RUN(nb, MPI_Reduce_scatter(s, r, cnt, MPI_INT, MPI_SUM, ic), MPI_Ireduce_scatter(s, r, cnt, MPI_INT, MPI_SUM, ic, &r_));
    for (int i = 0; i < cnt[lr]; i++) {
        int e = 0;
        for (int j = 0; j < rn; j++)
            e += rw(j) + mine_off + i;
        CHECK(r[i] == e, "reduce_scatter%s T %d nb %d: r[%d] = %d, expected %d", block ? "_block" : "", T, nb, i, r[i], e);
    }
    free(s);
    free(r);
    free(cnt);
}

/* Non-commutative "keep the left operand": a reduction over ranks gives rank 0's value,
 * which the (rotated) commutative tree would not. */
static void keep_left(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] = ((int *)in)[i];
}

static void t_noncommutative(MPI_Comm ic, int nb)
{
    MPI_Op op;
    MPI_OK(MPI_Op_create(keep_left, 0, &op));
    int s[2] = {w, w + 1}, r[2] = {-1, -1};
    RUN(nb, MPI_Allreduce(s, r, 2, MPI_INT, op, ic), MPI_Iallreduce(s, r, 2, MPI_INT, op, ic, &r_));
    CHECK(r[0] == rw(0) && r[1] == rw(0) + 1, "non-commutative allreduce: %d %d, expected %d", r[0], r[1], rw(0));
    for (int rg = 0; rg < 2; rg++) {
        int root = root_arg(rg);
        r[0] = -1;
        RUN(nb, MPI_Reduce(s, r, 2, MPI_INT, op, root, ic), MPI_Ireduce(s, r, 2, MPI_INT, op, root, ic, &r_));
        if (root == MPI_ROOT)
            CHECK(r[0] == rw(0), "non-commutative reduce: %d, expected %d", r[0], rw(0));
    }
    MPI_Op_free(&op);
}

/* Several collectives in flight at once, completed by one Waitall. */
static void t_many(MPI_Comm ic)
{
    enum { N = 1000 };
    MPI_Request req[6];
    int *b = ints(N, -1), *ars = ints(N, w), *arr = ints(N, -1);
    int *ags = ints(3, w), *agr = ints(3 * rn, -1), *a2s = ints(rn, 0), *a2r = ints(rn, -1);
    int root = root_arg(1);
    if (root == MPI_ROOT)
        for (int i = 0; i < N; i++)
            b[i] = i;
    for (int j = 0; j < rn; j++)
        a2s[j] = a2a_val(w, rw(j), 0);
    MPI_OK(MPI_Ibarrier(ic, &req[0]));
    MPI_OK(MPI_Ibcast(b, N, MPI_INT, root, ic, &req[1]));
    MPI_OK(MPI_Iallreduce(ars, arr, N, MPI_INT, MPI_MAX, ic, &req[2]));
    MPI_OK(MPI_Iallgather(ags, 3, MPI_INT, agr, 3, MPI_INT, ic, &req[3]));
    MPI_OK(MPI_Ialltoall(a2s, 1, MPI_INT, a2r, 1, MPI_INT, ic, &req[4]));
    MPI_OK(MPI_Ibarrier(ic, &req[5]));
    MPI_OK(MPI_Waitall(6, req, MPI_STATUSES_IGNORE));
    int maxw = rw(rn - 1);
    for (int i = 0; i < N; i++) {
        if (root != MPI_ROOT && root != MPI_PROC_NULL)
            CHECK(b[i] == i, "many: ibcast b[%d] = %d", i, b[i]);
        CHECK(arr[i] == maxw, "many: iallreduce max %d, expected %d", arr[i], maxw);
    }
    for (int j = 0; j < rn; j++) {
        CHECK(agr[3 * j] == rw(j) && agr[3 * j + 2] == rw(j), "many: iallgather block %d = %d", j, agr[3 * j]);
        CHECK(a2r[j] == a2a_val(rw(j), w, 0), "many: ialltoall from %d = %d", j, a2r[j]);
    }
    free(b);
    free(ars);
    free(arr);
    free(ags);
    free(agr);
    free(a2s);
    free(a2r);
}

static void t_errors(MPI_Comm ic)
{
    int s = 1, r = 0, cls;
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    int rc = MPI_Scan(&s, &r, 1, MPI_INT, MPI_SUM, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "MPI_Scan on an intercomm: class %d, expected MPI_ERR_COMM", cls);
    MPI_Request q;
    rc = MPI_Iexscan(&s, &r, 1, MPI_INT, MPI_SUM, ic, &q);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "MPI_Iexscan on an intercomm: class %d", cls);
    rc = MPI_Allreduce(MPI_IN_PLACE, &r, 1, MPI_INT, MPI_SUM, ic);
    CHECK(rc != MPI_SUCCESS, "MPI_IN_PLACE on an intercomm allreduce was accepted");
    rc = MPI_Bcast(&r, 1, MPI_INT, rn, ic); /* one past the remote group */
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT, "bad root: class %d, expected MPI_ERR_ROOT", cls);
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    w = tu_rank;
    if (size < 2) {
        printf("inter_coll: OK\n");
        MPI_Finalize();
        return 0;
    }
    MPI_Comm half, ic = tu_intercomm(77, &na, &g, &half);
    MPI_Comm_rank(ic, &lr);
    MPI_Comm_size(ic, &ln);
    MPI_Comm_remote_size(ic, &rn);
    CHECK(ln == (g == 0 ? na : size - na) && rn == size - ln, "intercomm sizes %d %d", ln, rn);

    const int sizes[] = {0, 3, 40000}; /* 40000 ints: above every eager limit */
    for (int nb = 0; nb < 2; nb++) {
        RUN(nb, MPI_Barrier(ic), MPI_Ibarrier(ic, &r_));
        for (int k = 0; k < 3; k++) {
            int n = sizes[k];
            for (int rg = 0; rg < 2; rg++) {
                t_bcast(ic, rg, n, nb);
                t_reduce(ic, rg, n, nb);
                t_gather(ic, rg, n, nb, 0);
                t_gather(ic, rg, n, nb, 1);
                t_scatter(ic, rg, n, nb, 0);
                t_scatter(ic, rg, n, nb, 1);
            }
            t_allgather(ic, n, 0, nb);
            t_allgather(ic, n, 1, nb);
            for (int kind = 0; kind < 3; kind++)
                t_alltoall(ic, n, kind, nb);
            t_allreduce(ic, n, nb);
        }
        t_reduce_scatter(ic, 1, 0, nb);
        t_reduce_scatter(ic, 1, 1, nb);
        t_reduce_scatter(ic, 5000, 0, nb);
        t_reduce_scatter(ic, 5000, 1, nb);
        t_noncommutative(ic, nb);
    }
    for (int i = 0; i < 20; i++)
        t_many(ic);
    t_errors(ic);
    MPI_OK(MPI_Barrier(ic));

    MPI_Comm_free(&ic);
    MPI_Comm_free(&half);
    MPI_Barrier(MPI_COMM_WORLD);
    if (w == 0)
        printf("inter_coll: OK\n");
    MPI_Finalize();
    return 0;
}
