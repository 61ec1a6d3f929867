/* The MPI-4.0 large-count collectives (MPI_X_c: MPI_Count counts, MPI_Aint displacements):
 * every blocking, nonblocking (MPI_IX_c) and persistent (MPI_X_init_c, started twice with
 * new data) form, on MPI_COMM_WORLD; the v/w variants with uneven counts and displacements
 * in reverse order with gaps (the gaps must stay untouched); the neighbourhood ones on a
 * Cartesian and a distributed-graph communicator; negative and huge counts must give
 * MPI_ERR_COUNT. Argument "big": also an MPI_Bcast_c and an MPI_Allreduce_c of 2^31 + 77
 * bytes (2 GiB per rank);
 * "mpich-bugs": skip what MPICH 4.0.2 gets wrong (its _c functions check no count: a
 * negative one crashes it; a second start of a persistent collective sends stale
 * data, as with its int MPI_Gather_init; Allgatherv on one rank copies nothing).
 * Usage: mpirun -n N ./coll_large_count [big] [mpich-bugs] */
#include "testutil.h"

enum { BLOCKING, NONBLOCKING, PERSISTENT };
static const char *mode_name[] = { "blocking", "nonblocking", "persistent" };
static int rank, size;
static MPI_Datatype pair; /* two ints, contiguous */
static int mpich_bugs; /* skip what MPICH 4.0.2 gets wrong (see the usage) */

#define GAP (-7) /* the value of receive-buffer elements no block covers */

/* Runs one form of a collective: the blocking call, the nonblocking one then a wait, or
 * (persistent) the _init call on the first iteration, then start + wait. Uses `mode`,
 * `it` and `req` of the caller. */
#define RUN3(BLK, NB, INIT)                                                    \
    do {                                                                       \
        if (mode == BLOCKING) {                                                \
            MPI_OK(BLK);                                                       \
        } else if (mode == NONBLOCKING) {                                      \
            MPI_OK(NB);                                                        \
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));                         \
        } else {                                                               \
            if (it == 0)                                                       \
                MPI_OK(INIT);                                                  \
            MPI_OK(MPI_Start(&req));                                           \
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));                         \
        }                                                                      \
    } while (0)

#define ITERS (mode == PERSISTENT && !mpich_bugs ? 2 : 1)
#define DONE()                                                                 \
    do {                                                                       \
        if (mode == PERSISTENT)                                                \
            MPI_OK(MPI_Request_free(&req));                                    \
    } while (0)

/* The value element i of the block rank `from` sends to rank `to` in iteration it. */
static int val(int from, int to, int i, int it)
{
    return from * 100000 + to * 1000 + i * 7 + it * 3;
}

static void fill(int *b, MPI_Count n, int v)
{
    for (MPI_Count i = 0; i < n; i++)
        b[i] = v;
}

/* Uneven block lengths: what rank a exchanges with rank b (symmetric). */
static MPI_Count vcount(int a, int b)
{
    return (MPI_Count)((a + b) % 3 + 1);
}

/* Displacements of n blocks of counts c[] placed in reverse order with a gap of one
 * element before each; returns the buffer length. */
static MPI_Count reverse_displs(int n, const MPI_Count *c, MPI_Aint *d)
{
    MPI_Count at = 0;
    for (int j = n - 1; j >= 0; j--) {
        at += 1;
        d[j] = (MPI_Aint)at;
        at += c[j];
    }
    return at + 1;
}

static void check_gaps(const char *what, const int *b, MPI_Count len, int n, const MPI_Count *c, const MPI_Aint *d, int unit)
{
    char *covered = calloc((size_t)len + 1, 1);
    for (int j = 0; j < n; j++)
        for (MPI_Count i = 0; i < c[j] * unit; i++)
            covered[d[j] * unit + i] = 1;
    for (MPI_Count i = 0; i < len; i++)
        if (!covered[i])
            CHECK(b[i] == GAP, "%s: gap element %lld overwritten (%d)", what, (long long)i, b[i]);
    free(covered);
}

static void test_bcast(int mode)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int buf[5];
    int root = size - 1;
    for (int it = 0; it < ITERS; it++) {
        for (int i = 0; i < 5; i++)
            buf[i] = rank == root ? val(root, 0, i, it) : GAP;
        RUN3(MPI_Bcast_c(buf, 5, MPI_INT, root, MPI_COMM_WORLD), MPI_Ibcast_c(buf, 5, MPI_INT, root, MPI_COMM_WORLD, &req),
             MPI_Bcast_init_c(buf, 5, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        for (int i = 0; i < 5; i++)
            CHECK(buf[i] == val(root, 0, i, it), "bcast %s it %d: buf[%d] = %d", mode_name[mode], it, i, buf[i]);
    }
    DONE();
}

/* Reduce, Allreduce, Scan, Exscan with MPI_SUM: element i of rank r is val(r, 0, i, it). */
static int sum_upto(int last, int i, int it)
{
    int s = 0;
    for (int r = 0; r <= last; r++)
        s += val(r, 0, i, it);
    return s;
}

static void test_reductions(int mode)
{
    MPI_Request req = MPI_REQUEST_NULL;
    enum { N = 6 };
    int in[N], out[N];
    int root = size / 2;
    for (int which = 0; which < 4; which++) {
        for (int it = 0; it < ITERS; it++) {
            for (int i = 0; i < N; i++) {
                in[i] = val(rank, 0, i, it);
                out[i] = GAP;
            }
            const char *name = "";
            int expect_upto = size - 1, check = 1;
            switch (which) {
            case 0:
                name = "reduce";
                RUN3(MPI_Reduce_c(in, out, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD),
                     MPI_Ireduce_c(in, out, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &req),
                     MPI_Reduce_init_c(in, out, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                check = rank == root;
                break;
            case 1:
                name = "allreduce";
                RUN3(MPI_Allreduce_c(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                     MPI_Iallreduce_c(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req),
                     MPI_Allreduce_init_c(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                break;
            case 2:
                name = "scan";
                RUN3(MPI_Scan_c(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                     MPI_Iscan_c(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req),
                     MPI_Scan_init_c(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                expect_upto = rank;
                break;
            case 3:
                name = "exscan";
                RUN3(MPI_Exscan_c(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                     MPI_Iexscan_c(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req),
                     MPI_Exscan_init_c(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                expect_upto = rank - 1;
                check = rank > 0; /* undefined at rank 0 */
                break;
            }
            for (int i = 0; check && i < N; i++)
                CHECK(out[i] == sum_upto(expect_upto, i, it), "%s %s it %d: out[%d] = %d, expected %d", name, mode_name[mode], it, i, out[i],
                      sum_upto(expect_upto, i, it));
        }
        DONE();
    }
}

/* Reduce_scatter with uneven counts and Reduce_scatter_block: element g of the whole
 * vector is sum over ranks of (r + g + it). */
static void test_reduce_scatter(int mode)
{
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Count *rc = malloc(size * sizeof *rc), total = 0, before = 0;
    for (int j = 0; j < size; j++) {
        rc[j] = j % 3 + 1;
        if (j < rank)
            before += rc[j];
        total += rc[j];
    }
    int *in = malloc((total + 3 * size) * sizeof(int)), out[4];
    for (int block = 0; block < 2; block++) {
        for (int it = 0; it < ITERS; it++) {
            MPI_Count n = block ? 3 * size : total, mine = block ? 3 : rc[rank], first = block ? 3 * rank : before;
            for (MPI_Count g = 0; g < n; g++)
                in[g] = rank + (int)g + it;
            fill(out, 4, GAP);
            if (block)
                RUN3(MPI_Reduce_scatter_block_c(in, out, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                     MPI_Ireduce_scatter_block_c(in, out, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req),
                     MPI_Reduce_scatter_block_init_c(in, out, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
            else
                RUN3(MPI_Reduce_scatter_c(in, out, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                     MPI_Ireduce_scatter_c(in, out, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req),
                     MPI_Reduce_scatter_init_c(in, out, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
            for (MPI_Count k = 0; k < 4; k++) {
                int expect = k < mine ? size * (size - 1) / 2 + size * ((int)(first + k) + it) : GAP;
                CHECK(out[k] == expect, "reduce_scatter%s %s it %d: out[%lld] = %d, expected %d", block ? "_block" : "", mode_name[mode], it,
                      (long long)k, out[k], expect);
            }
        }
        DONE();
    }
    free(rc);
    free(in);
}

/* Gather, Scatter, Allgather, Alltoall: 3 ints per rank. */
static void test_fixed(int mode)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int *sb = malloc(3 * size * sizeof(int)), *rb = malloc(3 * size * sizeof(int));
    int root = (size + 1) / 2 % size;
    for (int which = 0; which < 4; which++) {
        for (int it = 0; it < ITERS; it++) {
            fill(rb, 3 * size, GAP);
            for (int j = 0; j < size; j++)
                for (int i = 0; i < 3; i++)
                    sb[3 * j + i] = val(rank, which == 1 || which == 3 ? j : 0, i, it);
            const char *name = "";
            switch (which) {
            case 0:
                name = "gather";
                RUN3(MPI_Gather_c(sb, 3, MPI_INT, rb, 3, MPI_INT, root, MPI_COMM_WORLD),
                     MPI_Igather_c(sb, 3, MPI_INT, rb, 3, MPI_INT, root, MPI_COMM_WORLD, &req),
                     MPI_Gather_init_c(sb, 3, MPI_INT, rb, 3, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                break;
            case 1:
                name = "scatter";
                RUN3(MPI_Scatter_c(sb, 3, MPI_INT, rb, 3, MPI_INT, root, MPI_COMM_WORLD),
                     MPI_Iscatter_c(sb, 3, MPI_INT, rb, 3, MPI_INT, root, MPI_COMM_WORLD, &req),
                     MPI_Scatter_init_c(sb, 3, MPI_INT, rb, 3, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                break;
            case 2:
                name = "allgather";
                RUN3(MPI_Allgather_c(sb, 3, MPI_INT, rb, 3, MPI_INT, MPI_COMM_WORLD),
                     MPI_Iallgather_c(sb, 3, MPI_INT, rb, 3, MPI_INT, MPI_COMM_WORLD, &req),
                     MPI_Allgather_init_c(sb, 3, MPI_INT, rb, 3, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                break;
            case 3:
                name = "alltoall";
                RUN3(MPI_Alltoall_c(sb, 3, MPI_INT, rb, 3, MPI_INT, MPI_COMM_WORLD),
                     MPI_Ialltoall_c(sb, 3, MPI_INT, rb, 3, MPI_INT, MPI_COMM_WORLD, &req),
                     MPI_Alltoall_init_c(sb, 3, MPI_INT, rb, 3, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                break;
            }
            for (int j = 0; j < size; j++)
                for (int i = 0; i < 3; i++) {
                    int e = GAP, got = rb[3 * j + i];
                    if (which == 0 && rank == root)
                        e = val(j, 0, i, it);
                    else if (which == 1 && j == 0)
                        e = val(root, rank, i, it);
                    else if (which == 2)
                        e = val(j, 0, i, it);
                    else if (which == 3)
                        e = val(j, rank, i, it);
                    CHECK(got == e, "%s %s it %d: block %d [%d] = %d, expected %d", name, mode_name[mode], it, j, i, got, e);
                }
        }
        DONE();
    }
    free(sb);
    free(rb);
}

/* Gatherv, Scatterv, Allgatherv: rank r's block holds vcount(r, r) ints; blocks in reverse
 * order with gaps. */
static void test_v(int mode)
{
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Count *c = malloc(size * sizeof *c);
    MPI_Aint *d = malloc(size * sizeof *d);
    for (int j = 0; j < size; j++)
        c[j] = vcount(j, j);
    MPI_Count len = reverse_displs(size, c, d);
    int *vb = malloc(len * sizeof(int)), one[3];
    int root = size - 1 - size / 3;
    for (int which = 0; which < 3; which++) {
        for (int it = 0; it < ITERS; it++) {
            fill(vb, len, GAP);
            fill(one, 3, GAP);
            const char *name = "";
            if (which == 1) {
                for (int j = 0; j < size; j++)
                    for (int i = 0; i < c[j]; i++)
                        vb[d[j] + i] = val(root, j, i, it);
            } else {
                for (int i = 0; i < c[rank]; i++)
                    one[i] = val(rank, 0, i, it);
            }
            switch (which) {
            case 0:
                name = "gatherv";
                RUN3(MPI_Gatherv_c(one, c[rank], MPI_INT, vb, c, d, MPI_INT, root, MPI_COMM_WORLD),
                     MPI_Igatherv_c(one, c[rank], MPI_INT, vb, c, d, MPI_INT, root, MPI_COMM_WORLD, &req),
                     MPI_Gatherv_init_c(one, c[rank], MPI_INT, vb, c, d, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                break;
            case 1:
                name = "scatterv";
                RUN3(MPI_Scatterv_c(vb, c, d, MPI_INT, one, c[rank], MPI_INT, root, MPI_COMM_WORLD),
                     MPI_Iscatterv_c(vb, c, d, MPI_INT, one, c[rank], MPI_INT, root, MPI_COMM_WORLD, &req),
                     MPI_Scatterv_init_c(vb, c, d, MPI_INT, one, c[rank], MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                break;
            case 2:
                name = "allgatherv";
                RUN3(MPI_Allgatherv_c(one, c[rank], MPI_INT, vb, c, d, MPI_INT, MPI_COMM_WORLD),
                     MPI_Iallgatherv_c(one, c[rank], MPI_INT, vb, c, d, MPI_INT, MPI_COMM_WORLD, &req),
                     MPI_Allgatherv_init_c(one, c[rank], MPI_INT, vb, c, d, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
                break;
            }
            if (which == 1) {
                for (int i = 0; i < 3; i++) {
                    int e = i < c[rank] ? val(root, rank, i, it) : GAP;
                    CHECK(one[i] == e, "scatterv %s it %d: [%d] = %d, expected %d", mode_name[mode], it, i, one[i], e);
                }
            } else if ((which == 2 || rank == root) && !(mpich_bugs && which == 2 && size == 1)) {
                for (int j = 0; j < size; j++)
                    for (int i = 0; i < c[j]; i++)
                        CHECK(vb[d[j] + i] == val(j, 0, i, it), "%s %s it %d: block %d [%d] = %d, expected %d", name, mode_name[mode], it, j, i,
                              vb[d[j] + i], val(j, 0, i, it));
                check_gaps(name, vb, len, size, c, d, 1);
            }
        }
        DONE();
    }
    free(c);
    free(d);
    free(vb);
}

/* The send side of an all-to-all with uneven blocks: block j (to rank j) holds
 * vcount(rank, j) ints at forward displacements with gaps; the receive side: block j
 * (from rank j) vcount(j, rank) ints in reverse order with gaps. */
struct vsides {
    MPI_Count *sc, *rc, slen, rlen;
    MPI_Aint *sd, *rd;
    int *sb, *rb;
};

static struct vsides vsides_new(int n, const int *peers)
{
    struct vsides v;
    v.sc = malloc(n * sizeof(MPI_Count));
    v.rc = malloc(n * sizeof(MPI_Count));
    v.sd = malloc(n * sizeof(MPI_Aint));
    v.rd = malloc(n * sizeof(MPI_Aint));
    v.slen = 0;
    for (int j = 0; j < n; j++) {
        v.sc[j] = v.rc[j] = vcount(rank, peers[j]);
        v.slen += 2;
        v.sd[j] = (MPI_Aint)v.slen;
        v.slen += v.sc[j];
    }
    v.rlen = reverse_displs(n, v.rc, v.rd);
    v.sb = malloc(v.slen * 2 * sizeof(int));
    v.rb = malloc(v.rlen * 2 * sizeof(int));
    return v;
}

static void vsides_free(struct vsides *v)
{
    free(v->sc);
    free(v->rc);
    free(v->sd);
    free(v->rd);
    free(v->sb);
    free(v->rb);
}

/* Alltoallv (unit = 1 int) or Alltoallw (unit = 2 ints: blocks of `pair`s sent, received as
 * ints or pairs alternately, displacements in bytes). peers[j]: the rank of block j. */
static void fill_vsides(struct vsides *v, int n, const int *peers, int unit, int it)
{
    fill(v->sb, v->slen * unit, GAP);
    fill(v->rb, v->rlen * unit, GAP);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < v->sc[j] * unit; i++)
            v->sb[v->sd[j] * unit + i] = val(rank, peers[j], i, it);
}

static void check_vsides(const char *name, int mode, const struct vsides *v, int n, const int *peers, int unit, int it)
{
    for (int j = 0; j < n; j++)
        for (int i = 0; i < v->rc[j] * unit; i++) {
            int got = v->rb[v->rd[j] * unit + i];
            CHECK(got == val(peers[j], rank, i, it), "%s %s it %d: block %d [%d] = %d, expected %d", name, mode_name[mode], it, j, i, got,
                  val(peers[j], rank, i, it));
        }
    check_gaps(name, v->rb, v->rlen * unit, n, v->rc, v->rd, unit);
}

/* Per-block datatypes and byte displacements of the w variants (blocks of `unit` = 2 ints). */
struct wsides {
    MPI_Count *sc, *rc;
    MPI_Aint *sd, *rd;
    MPI_Datatype *st, *rt;
};

static struct wsides wsides_new(int n, const struct vsides *v)
{
    struct wsides w;
    w.sc = malloc(n * sizeof(MPI_Count));
    w.rc = malloc(n * sizeof(MPI_Count));
    w.sd = malloc(n * sizeof(MPI_Aint));
    w.rd = malloc(n * sizeof(MPI_Aint));
    w.st = malloc(n * sizeof(MPI_Datatype));
    w.rt = malloc(n * sizeof(MPI_Datatype));
    for (int j = 0; j < n; j++) {
        /* Pairs to odd blocks, ints to even ones; received the other way round. */
        w.st[j] = j % 2 ? pair : MPI_INT;
        w.sc[j] = j % 2 ? v->sc[j] : 2 * v->sc[j];
        w.rt[j] = j % 2 ? MPI_INT : pair;
        w.rc[j] = j % 2 ? 2 * v->rc[j] : v->rc[j];
        w.sd[j] = v->sd[j] * 2 * (MPI_Aint)sizeof(int);
        w.rd[j] = v->rd[j] * 2 * (MPI_Aint)sizeof(int);
    }
    return w;
}

static void wsides_free(struct wsides *w)
{
    free(w->sc);
    free(w->rc);
    free(w->sd);
    free(w->rd);
    free(w->st);
    free(w->rt);
}

/* Alltoallv and Alltoallw on MPI_COMM_WORLD, or (neighbor) their neighbourhood forms on a
 * graph communicator (same arguments); peers[j]: the rank of block j. */
static void test_alltoallvw(int mode, MPI_Comm comm, const int *peers, int neighbor)
{
    MPI_Request req = MPI_REQUEST_NULL;
    struct vsides v = vsides_new(size, peers);
    struct wsides w = wsides_new(size, &v);
    for (int it = 0; it < ITERS; it++) {
        fill_vsides(&v, size, peers, 1, it);
        RUN3((neighbor ? MPI_Neighbor_alltoallv_c : MPI_Alltoallv_c)(v.sb, v.sc, v.sd, MPI_INT, v.rb, v.rc, v.rd, MPI_INT, comm),
             (neighbor ? MPI_Ineighbor_alltoallv_c : MPI_Ialltoallv_c)(v.sb, v.sc, v.sd, MPI_INT, v.rb, v.rc, v.rd, MPI_INT, comm, &req),
             (neighbor ? MPI_Neighbor_alltoallv_init_c : MPI_Alltoallv_init_c)(v.sb, v.sc, v.sd, MPI_INT, v.rb, v.rc, v.rd, MPI_INT, comm, MPI_INFO_NULL, &req));
        check_vsides(neighbor ? "neighbor_alltoallv" : "alltoallv", mode, &v, size, peers, 1, it);
    }
    DONE();
    for (int it = 0; it < ITERS; it++) {
        fill_vsides(&v, size, peers, 2, it);
        RUN3((neighbor ? MPI_Neighbor_alltoallw_c : MPI_Alltoallw_c)(v.sb, w.sc, w.sd, w.st, v.rb, w.rc, w.rd, w.rt, comm),
             (neighbor ? MPI_Ineighbor_alltoallw_c : MPI_Ialltoallw_c)(v.sb, w.sc, w.sd, w.st, v.rb, w.rc, w.rd, w.rt, comm, &req),
             (neighbor ? MPI_Neighbor_alltoallw_init_c : MPI_Alltoallw_init_c)(v.sb, w.sc, w.sd, w.st, v.rb, w.rc, w.rd, w.rt, comm, MPI_INFO_NULL, &req));
        check_vsides(neighbor ? "neighbor_alltoallw" : "alltoallw", mode, &v, size, peers, 2, it);
    }
    DONE();
    wsides_free(&w);
    vsides_free(&v);
}

/* Neighbourhood collectives. On a non-periodic 1-D Cartesian communicator (neighbours
 * rank-1 and rank+1, MPI_PROC_NULL at the ends): allgather and alltoall. On a distributed
 * graph where every rank's neighbours are all ranks in a rotated order: the v and w forms. */
static void test_neighbor_cart(int mode, MPI_Comm cart)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int nb[2] = { rank - 1, rank + 1 };
    int sb[6], rb[6];
    for (int which = 0; which < 2; which++) {
        for (int it = 0; it < ITERS; it++) {
            fill(rb, 6, GAP);
            for (int k = 0; k < 2; k++)
                for (int i = 0; i < 3; i++)
                    sb[3 * k + i] = val(rank, which ? nb[k] : 0, i, it);
            if (which == 0)
                RUN3(MPI_Neighbor_allgather_c(sb, 3, MPI_INT, rb, 3, MPI_INT, cart),
                     MPI_Ineighbor_allgather_c(sb, 3, MPI_INT, rb, 3, MPI_INT, cart, &req),
                     MPI_Neighbor_allgather_init_c(sb, 3, MPI_INT, rb, 3, MPI_INT, cart, MPI_INFO_NULL, &req));
            else
                RUN3(MPI_Neighbor_alltoall_c(sb, 3, MPI_INT, rb, 3, MPI_INT, cart),
                     MPI_Ineighbor_alltoall_c(sb, 3, MPI_INT, rb, 3, MPI_INT, cart, &req),
                     MPI_Neighbor_alltoall_init_c(sb, 3, MPI_INT, rb, 3, MPI_INT, cart, MPI_INFO_NULL, &req));
            for (int k = 0; k < 2; k++)
                for (int i = 0; i < 3; i++) {
                    int e = nb[k] < 0 || nb[k] >= size ? GAP : val(nb[k], which ? rank : 0, i, it);
                    CHECK(rb[3 * k + i] == e, "neighbor_%s %s it %d: block %d [%d] = %d, expected %d", which ? "alltoall" : "allgather",
                          mode_name[mode], it, k, i, rb[3 * k + i], e);
                }
        }
        DONE();
    }
}

static void test_neighbor_graph(int mode, MPI_Comm graph, const int *peers)
{
    MPI_Request req = MPI_REQUEST_NULL;
    /* Allgatherv: rank r's block of vcount(r, r) ints, from every neighbour. */
    MPI_Count *c = malloc(size * sizeof *c);
    MPI_Aint *d = malloc(size * sizeof *d);
    for (int j = 0; j < size; j++)
        c[j] = vcount(peers[j], peers[j]);
    MPI_Count len = reverse_displs(size, c, d);
    int *vb = malloc(len * sizeof(int)), one[3];
    for (int it = 0; it < ITERS; it++) {
        fill(vb, len, GAP);
        for (int i = 0; i < 3; i++)
            one[i] = val(rank, 0, i, it);
        RUN3(MPI_Neighbor_allgatherv_c(one, vcount(rank, rank), MPI_INT, vb, c, d, MPI_INT, graph),
             MPI_Ineighbor_allgatherv_c(one, vcount(rank, rank), MPI_INT, vb, c, d, MPI_INT, graph, &req),
             MPI_Neighbor_allgatherv_init_c(one, vcount(rank, rank), MPI_INT, vb, c, d, MPI_INT, graph, MPI_INFO_NULL, &req));
        for (int j = 0; j < size; j++)
            for (int i = 0; i < c[j]; i++)
                CHECK(vb[d[j] + i] == val(peers[j], 0, i, it), "neighbor_allgatherv %s it %d: block %d [%d] = %d", mode_name[mode], it, j, i,
                      vb[d[j] + i]);
        check_gaps("neighbor_allgatherv", vb, len, size, c, d, 1);
    }
    DONE();
    free(c);
    free(d);
    free(vb);
    test_alltoallvw(mode, graph, peers, 1);
}

/* Bad counts are MPI_ERR_COUNT on every rank before any communication. */
static void test_errors(MPI_Comm comm_graph)
{
    MPI_Comm comm;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    int buf[4] = { 0 }, *out = calloc(4 * size, sizeof(int));
    MPI_Request req;
    MPI_Count *c = malloc(size * sizeof *c);
    MPI_Aint *d = calloc(size, sizeof *d);
    for (int j = 0; j < size; j++)
        c[j] = j == size - 1 ? -2 : 0;
    /* MPICH 4.0.2 checks none of these counts (it crashes on them). */
    if (!mpich_bugs) {
        int rc = MPI_Bcast_c(buf, -1, MPI_INT, 0, comm);
        CHECK(tu_error_class(rc) == MPI_ERR_COUNT, "bcast_c count -1: class %d", tu_error_class(rc));
        rc = MPI_Allreduce_c(buf, out, -5, MPI_INT, MPI_SUM, comm);
        CHECK(tu_error_class(rc) == MPI_ERR_COUNT, "allreduce_c count -5: class %d", tu_error_class(rc));
        rc = MPI_Iallgather_c(buf, (MPI_Count)-3000000000LL, MPI_INT, out, 1, MPI_INT, comm, &req);
        CHECK(tu_error_class(rc) == MPI_ERR_COUNT, "iallgather_c count -3e9: class %d", tu_error_class(rc));
        rc = MPI_Reduce_init_c(buf, out, -1, MPI_INT, MPI_SUM, 0, comm, MPI_INFO_NULL, &req);
        CHECK(tu_error_class(rc) == MPI_ERR_COUNT, "reduce_init_c count -1: class %d", tu_error_class(rc));
        rc = MPI_Alltoallv_c(buf, c, d, MPI_INT, out, c, d, MPI_INT, comm);
        CHECK(tu_error_class(rc) == MPI_ERR_COUNT, "alltoallv_c count -2: class %d", tu_error_class(rc));
        /* A count no process can hold. */
        rc = MPI_Bcast_c(buf, (MPI_Count)1 << 61, MPI_INT, 0, comm);
        CHECK(tu_error_class(rc) == MPI_ERR_COUNT, "bcast_c count 2^61: class %d", tu_error_class(rc));
        MPI_OK(MPI_Comm_set_errhandler(comm_graph, MPI_ERRORS_RETURN));
        rc = MPI_Neighbor_alltoall_c(buf, -4, MPI_INT, out, 1, MPI_INT, comm_graph);
        CHECK(tu_error_class(rc) == MPI_ERR_COUNT, "neighbor_alltoall_c count -4: class %d", tu_error_class(rc));
    }
    /* The failed calls took no collective slot: the next one still matches. */
    MPI_Count one = rank;
    MPI_Count sum = -1;
    MPI_OK(MPI_Allreduce_c(&one, &sum, 1, MPI_COUNT, MPI_SUM, comm));
    CHECK(sum == (MPI_Count)size * (size - 1) / 2, "allreduce_c after errors: %lld", (long long)sum);
    free(c);
    free(d);
    free(out);
    MPI_Comm_free(&comm);
}

/* A broadcast and an allreduce of more than INT_MAX bytes (2^31 + 77), checked at a
 * spread of offsets. */
static void test_big(void)
{
    MPI_Count n = ((MPI_Count)1 << 31) + 77;
    unsigned char *b = malloc((size_t)n);
    CHECK(b != NULL, "cannot allocate %lld bytes", (long long)n);
    for (MPI_Count i = 0; i < n; i += 4096)
        b[i] = rank == 0 ? (unsigned char)(i / 4096 * 31 + 5) : 0;
    b[n - 1] = rank == 0 ? 0xa5 : 0;
    MPI_OK(MPI_Bcast_c(b, n, MPI_BYTE, 0, MPI_COMM_WORLD));
    for (MPI_Count i = 0; i < n; i += 4096)
        CHECK(b[i] == (unsigned char)(i / 4096 * 31 + 5), "big bcast: byte %lld = %d", (long long)i, b[i]);
    CHECK(b[n - 1] == 0xa5, "big bcast: last byte %d", b[n - 1]);
    /* In place, bitwise or: each rank sets its own bit in the sampled bytes. */
    unsigned char all = 0;
    for (int r = 0; r < size; r++)
        all |= (unsigned char)(1 << (r % 8));
    for (MPI_Count i = 0; i < n; i += 4096)
        b[i] = (unsigned char)(1 << (rank % 8));
    b[n - 1] = (unsigned char)(1 << (rank % 8));
    MPI_OK(MPI_Allreduce_c(MPI_IN_PLACE, b, n, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD));
    for (MPI_Count i = 0; i < n; i += 4096)
        CHECK(b[i] == all, "big allreduce: byte %lld = %d, expected %d", (long long)i, b[i], all);
    CHECK(b[n - 1] == all, "big allreduce: last byte %d, expected %d", b[n - 1], all);
    free(b);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    int big = 0;
    for (int i = 1; i < argc; i++) {
        big |= strcmp(argv[i], "big") == 0;
        mpich_bugs |= strcmp(argv[i], "mpich-bugs") == 0;
    }
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    MPI_OK(MPI_Type_commit(&pair));

    int dims[1] = { size }, periods[1] = { 0 };
    MPI_Comm cart, graph;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    int *peers = malloc(size * sizeof(int)), *world = malloc(size * sizeof(int));
    for (int j = 0; j < size; j++) {
        peers[j] = (rank + j + 1) % size;
        world[j] = j;
    }
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, size, peers, MPI_UNWEIGHTED, size, peers, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph));

    for (int mode = BLOCKING; mode <= PERSISTENT; mode++) {
        test_bcast(mode);
        test_reductions(mode);
        test_reduce_scatter(mode);
        test_fixed(mode);
        test_v(mode);
        test_alltoallvw(mode, MPI_COMM_WORLD, world, 0);
        test_neighbor_cart(mode, cart);
        test_neighbor_graph(mode, graph, peers);
    }
    test_errors(graph);
    if (big)
        test_big();

    free(peers);
    free(world);
    MPI_OK(MPI_Comm_free(&cart));
    MPI_OK(MPI_Comm_free(&graph));
    MPI_OK(MPI_Type_free(&pair));
    MPI_Finalize();
    if (rank == 0)
        printf("coll_large_count: OK\n");
    return 0;
}
