/* Every collective, blocking and nonblocking, with and without MPI_IN_PLACE, at message
 * sizes 0, 1, small, above the 16 KiB eager threshold and >= 1 MiB. Each rank checks its
 * results against values it computes locally. Usage: coll_all [max_count] [mpich-bugs] [alt|alt2] */
#include "testutil.h"

static int rank, size;
/* "mpich-bugs" argument: skip the cases the system MPICH 4.0.2 gets wrong, to validate this
 * test against it (in-place Reduce at a root other than 0 crashes for counts >= ~1000;
 * Allgatherv on one rank leaves the receive buffer untouched; in-place Reduce_scatter with
 * large counts fails an internal assertion). */
static int mpich_bugs;

/* Contribution of rank r at element i. Small, so sums over 8 ranks stay exact. */
static int val(int r, long i) { return (int)((r * 31 + i * 7) % 1000) + r; }

static void check_int(const int *buf, long i, int expect, const char *what, long count, int nb, int inplace)
{
    if (buf[i] != expect)
        FAIL("%s count=%ld nb=%d inplace=%d: element %ld = %d, expected %d", what, count, nb, inplace, i, buf[i], expect);
}

static void wait_nb(MPI_Request *req)
{
    MPI_OK(MPI_Wait(req, MPI_STATUS_IGNORE));
}

#define RUN(nb, blocking_call, nonblocking_call)                                 \
    do {                                                                         \
        if (nb) {                                                                \
            MPI_Request req_ = MPI_REQUEST_NULL;                                 \
            MPI_OK(nonblocking_call);                                            \
            wait_nb(&req_);                                                      \
        } else {                                                                 \
            MPI_OK(blocking_call);                                               \
        }                                                                        \
    } while (0)

static void test_bcast(long n, int root, int nb)
{
    int *b = tu_malloc(n * sizeof(int));
    for (long i = 0; i < n; i++)
        b[i] = rank == root ? val(root, i) : -1;
    RUN(nb, MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD),
        MPI_Ibcast(b, n, MPI_INT, root, MPI_COMM_WORLD, &req_));
    for (long i = 0; i < n; i++)
        check_int(b, i, val(root, i), "bcast", n, nb, 0);
    free(b);
}

static int sum_all(long i) { int s = 0; for (int r = 0; r < size; r++) s += val(r, i); return s; }
static int sum_upto(long i, int last) { int s = 0; for (int r = 0; r <= last; r++) s += val(r, i); return s; }

static void test_reduce(long n, int root, int inplace, int nb)
{
    if (mpich_bugs && inplace && root != 0)
        return;
    int *s = tu_malloc(n * sizeof(int)), *r = tu_malloc(n * sizeof(int));
    for (long i = 0; i < n; i++) { s[i] = val(rank, i); r[i] = (inplace && rank == root) ? val(rank, i) : -1; }
    const void *sb = (inplace && rank == root) ? MPI_IN_PLACE : s;
    RUN(nb, MPI_Reduce(sb, r, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD),
        MPI_Ireduce(sb, r, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &req_));
    if (rank == root)
        for (long i = 0; i < n; i++) check_int(r, i, sum_all(i), "reduce", n, nb, inplace);
    free(s); free(r);
}

static void test_allreduce(long n, int inplace, int nb)
{
    int *s = tu_malloc(n * sizeof(int)), *r = tu_malloc(n * sizeof(int));
    for (long i = 0; i < n; i++) { s[i] = val(rank, i); r[i] = inplace ? val(rank, i) : -1; }
    const void *sb = inplace ? MPI_IN_PLACE : s;
    RUN(nb, MPI_Allreduce(sb, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
        MPI_Iallreduce(sb, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req_));
    for (long i = 0; i < n; i++) check_int(r, i, sum_all(i), "allreduce", n, nb, inplace);
    /* MAX on doubles, too. */
    double *d = tu_malloc(n * sizeof(double)), *e = tu_malloc(n * sizeof(double));
    for (long i = 0; i < n; i++) d[i] = (double)((rank * 17 + i) % size) + 0.5;
    RUN(nb, MPI_Allreduce(d, e, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
        MPI_Iallreduce(d, e, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &req_));
    for (long i = 0; i < n; i++) {
        double m = 0;
        for (int q = 0; q < size; q++) { double v = (double)((q * 17 + i) % size) + 0.5; if (v > m) m = v; }
        if (e[i] != m) FAIL("allreduce MAX double count=%ld nb=%d: element %ld = %g, expected %g", n, nb, i, e[i], m);
    }
    free(s); free(r); free(d); free(e);
}

static void test_scan(long n, int inplace, int nb, int exclusive)
{
    int *s = tu_malloc(n * sizeof(int)), *r = tu_malloc(n * sizeof(int));
    for (long i = 0; i < n; i++) { s[i] = val(rank, i); r[i] = inplace ? val(rank, i) : -1; }
    const void *sb = inplace ? MPI_IN_PLACE : s;
    if (exclusive)
        RUN(nb, MPI_Exscan(sb, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
            MPI_Iexscan(sb, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req_));
    else
        RUN(nb, MPI_Scan(sb, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
            MPI_Iscan(sb, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req_));
    if (!exclusive || rank > 0)
        for (long i = 0; i < n; i++)
            check_int(r, i, sum_upto(i, exclusive ? rank - 1 : rank), exclusive ? "exscan" : "scan", n, nb, inplace);
    free(s); free(r);
}

static void test_gather(long n, int root, int inplace, int nb)
{
    int *s = tu_malloc(n * sizeof(int)), *r = tu_malloc(n * size * sizeof(int));
    for (long i = 0; i < n; i++) s[i] = val(rank, i);
    for (long i = 0; i < n * size; i++) r[i] = -1;
    if (inplace && rank == root) for (long i = 0; i < n; i++) r[rank * n + i] = val(rank, i);
    const void *sb = (inplace && rank == root) ? MPI_IN_PLACE : s;
    RUN(nb, MPI_Gather(sb, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD),
        MPI_Igather(sb, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD, &req_));
    if (rank == root)
        for (int q = 0; q < size; q++) for (long i = 0; i < n; i++) check_int(r, q * n + i, val(q, i), "gather", n, nb, inplace);
    /* Gatherv: rank q sends n + q elements (n > 0 only), placed in reverse rank order with gaps. */
    int *cnts = tu_malloc(size * sizeof(int)), *displs = tu_malloc(size * sizeof(int));
    long total = 0;
    for (int q = size - 1; q >= 0; q--) { cnts[q] = n ? (int)n + q : 0; displs[q] = (int)total + 1; total += cnts[q] + 1; }
    int *sv = tu_malloc((n + size) * sizeof(int)), *rv = tu_malloc((total + 1) * sizeof(int));
    for (long i = 0; i < cnts[rank]; i++) sv[i] = val(rank, i);
    for (long i = 0; i <= total; i++) rv[i] = -1;
    if (inplace && rank == root) for (long i = 0; i < cnts[rank]; i++) rv[displs[rank] + i] = val(rank, i);
    sb = (inplace && rank == root) ? MPI_IN_PLACE : sv;
    RUN(nb, MPI_Gatherv(sb, cnts[rank], MPI_INT, rv, cnts, displs, MPI_INT, root, MPI_COMM_WORLD),
        MPI_Igatherv(sb, cnts[rank], MPI_INT, rv, cnts, displs, MPI_INT, root, MPI_COMM_WORLD, &req_));
    if (rank == root)
        for (int q = 0; q < size; q++) {
            for (long i = 0; i < cnts[q]; i++) check_int(rv, displs[q] + i, val(q, i), "gatherv", n, nb, inplace);
            check_int(rv, displs[q] - 1, -1, "gatherv gap", n, nb, inplace);
        }
    free(s); free(r); free(cnts); free(displs); free(sv); free(rv);
}

static void test_scatter(long n, int root, int inplace, int nb)
{
    int *s = tu_malloc(n * size * sizeof(int)), *r = tu_malloc(n * sizeof(int));
    for (int q = 0; q < size; q++) for (long i = 0; i < n; i++) s[q * n + i] = val(q, i) + 5;
    for (long i = 0; i < n; i++) r[i] = -1;
    void *rb = (inplace && rank == root) ? MPI_IN_PLACE : r;
    RUN(nb, MPI_Scatter(s, n, MPI_INT, rb, n, MPI_INT, root, MPI_COMM_WORLD),
        MPI_Iscatter(s, n, MPI_INT, rb, n, MPI_INT, root, MPI_COMM_WORLD, &req_));
    const int *got = (inplace && rank == root) ? s + rank * n : r;
    for (long i = 0; i < n; i++) check_int(got, i, val(rank, i) + 5, "scatter", n, nb, inplace);
    /* Scatterv: rank q gets n + q elements from reverse-ordered, gapped displacements. */
    int *cnts = tu_malloc(size * sizeof(int)), *displs = tu_malloc(size * sizeof(int));
    long total = 0;
    for (int q = size - 1; q >= 0; q--) { cnts[q] = n ? (int)n + q : 0; displs[q] = (int)total + 1; total += cnts[q] + 1; }
    int *sv = tu_malloc((total + 1) * sizeof(int)), *rv = tu_malloc((n + size) * sizeof(int));
    for (int q = 0; q < size; q++) for (long i = 0; i < cnts[q]; i++) sv[displs[q] + i] = val(q, i) + 9;
    for (long i = 0; i < n + size; i++) rv[i] = -1;
    rb = (inplace && rank == root) ? MPI_IN_PLACE : rv;
    RUN(nb, MPI_Scatterv(sv, cnts, displs, MPI_INT, rb, cnts[rank], MPI_INT, root, MPI_COMM_WORLD),
        MPI_Iscatterv(sv, cnts, displs, MPI_INT, rb, cnts[rank], MPI_INT, root, MPI_COMM_WORLD, &req_));
    got = (inplace && rank == root) ? sv + displs[rank] : rv;
    for (long i = 0; i < cnts[rank]; i++) check_int(got, i, val(rank, i) + 9, "scatterv", n, nb, inplace);
    if (!(inplace && rank == root)) check_int(rv, cnts[rank], -1, "scatterv overrun", n, nb, inplace);
    free(s); free(r); free(cnts); free(displs); free(sv); free(rv);
}

static void test_allgather(long n, int inplace, int nb)
{
    int *s = tu_malloc(n * sizeof(int)), *r = tu_malloc(n * size * sizeof(int));
    for (long i = 0; i < n; i++) s[i] = val(rank, i);
    for (long i = 0; i < n * size; i++) r[i] = -1;
    if (inplace) for (long i = 0; i < n; i++) r[rank * n + i] = val(rank, i);
    const void *sb = inplace ? MPI_IN_PLACE : s;
    RUN(nb, MPI_Allgather(sb, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD),
        MPI_Iallgather(sb, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD, &req_));
    for (int q = 0; q < size; q++) for (long i = 0; i < n; i++) check_int(r, q * n + i, val(q, i), "allgather", n, nb, inplace);
    int *cnts = tu_malloc(size * sizeof(int)), *displs = tu_malloc(size * sizeof(int));
    long total = 0;
    for (int q = size - 1; q >= 0; q--) { cnts[q] = n ? (int)n + q : 0; displs[q] = (int)total + 1; total += cnts[q] + 1; }
    if (mpich_bugs && size == 1) { free(s); free(r); free(cnts); free(displs); return; }
    int *rv = tu_malloc((total + 1) * sizeof(int));
    for (long i = 0; i <= total; i++) rv[i] = -1;
    if (inplace) for (long i = 0; i < cnts[rank]; i++) rv[displs[rank] + i] = val(rank, i);
    int *sv = tu_malloc((n + size) * sizeof(int));
    for (long i = 0; i < cnts[rank]; i++) sv[i] = val(rank, i);
    sb = inplace ? MPI_IN_PLACE : sv;
    RUN(nb, MPI_Allgatherv(sb, cnts[rank], MPI_INT, rv, cnts, displs, MPI_INT, MPI_COMM_WORLD),
        MPI_Iallgatherv(sb, cnts[rank], MPI_INT, rv, cnts, displs, MPI_INT, MPI_COMM_WORLD, &req_));
    for (int q = 0; q < size; q++) {
        for (long i = 0; i < cnts[q]; i++) check_int(rv, displs[q] + i, val(q, i), "allgatherv", n, nb, inplace);
        check_int(rv, displs[q] - 1, -1, "allgatherv gap", n, nb, inplace);
    }
    free(s); free(r); free(cnts); free(displs); free(rv); free(sv);
}

/* Element i of the block rank `from` sends to rank `to`. */
static int a2a(int from, int to, long i) { return val(from, i) * 10 + to; }

static void test_alltoall(long n, int inplace, int nb)
{
    int *s = tu_malloc(n * size * sizeof(int)), *r = tu_malloc(n * size * sizeof(int));
    for (int q = 0; q < size; q++) for (long i = 0; i < n; i++) { s[q * n + i] = a2a(rank, q, i); r[q * n + i] = inplace ? a2a(rank, q, i) : -1; }
    const void *sb = inplace ? MPI_IN_PLACE : s;
    RUN(nb, MPI_Alltoall(sb, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD),
        MPI_Ialltoall(sb, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD, &req_));
    for (int q = 0; q < size; q++) for (long i = 0; i < n; i++) check_int(r, q * n + i, a2a(q, rank, i), "alltoall", n, nb, inplace);
    free(s); free(r);
    /* Alltoallv: rank a sends (n ? n/size + a + b : 0) elements to b (symmetric in a, b, so
     * in-place works), in reverse peer order with a gap. */
    int *sc = tu_malloc(size * sizeof(int)), *sd = tu_malloc(size * sizeof(int));
    int *rc = tu_malloc(size * sizeof(int)), *rd = tu_malloc(size * sizeof(int));
    long stot = 0, rtot = 0;
    for (int q = size - 1; q >= 0; q--) {
        sc[q] = n ? (int)(n / size) + rank + q : 0; sd[q] = (int)stot + 1; stot += sc[q] + 1;
        rc[q] = n ? (int)(n / size) + q + rank : 0; rd[q] = (int)rtot + 1; rtot += rc[q] + 1;
    }
    int *sv = tu_malloc((stot + 1) * sizeof(int)), *rv = tu_malloc((rtot + 1) * sizeof(int));
    for (long i = 0; i <= rtot; i++) rv[i] = -1;
    for (int q = 0; q < size; q++) for (long i = 0; i < sc[q]; i++) sv[sd[q] + i] = a2a(rank, q, i);
    if (inplace) for (int q = 0; q < size; q++) for (long i = 0; i < rc[q]; i++) rv[rd[q] + i] = a2a(rank, q, i);
    sb = inplace ? MPI_IN_PLACE : sv;
    RUN(nb, MPI_Alltoallv(sb, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, MPI_COMM_WORLD),
        MPI_Ialltoallv(sb, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, MPI_COMM_WORLD, &req_));
    for (int q = 0; q < size; q++) {
        for (long i = 0; i < rc[q]; i++) check_int(rv, rd[q] + i, a2a(q, rank, i), "alltoallv", n, nb, inplace);
        check_int(rv, rd[q] - 1, -1, "alltoallv gap", n, nb, inplace);
    }
    /* Alltoallw: same layout, byte displacements, MPI_INT everywhere. */
    MPI_Datatype *types = tu_malloc(size * sizeof(MPI_Datatype));
    for (int q = 0; q < size; q++) { types[q] = MPI_INT; sd[q] *= (int)sizeof(int); rd[q] *= (int)sizeof(int); }
    for (long i = 0; i <= rtot; i++) rv[i] = -1;
    if (inplace) for (int q = 0; q < size; q++) for (long i = 0; i < rc[q]; i++) rv[rd[q] / 4 + i] = a2a(rank, q, i);
    RUN(nb, MPI_Alltoallw(sb, sc, sd, types, rv, rc, rd, types, MPI_COMM_WORLD),
        MPI_Ialltoallw(sb, sc, sd, types, rv, rc, rd, types, MPI_COMM_WORLD, &req_));
    for (int q = 0; q < size; q++)
        for (long i = 0; i < rc[q]; i++) check_int(rv, rd[q] / 4 + i, a2a(q, rank, i), "alltoallw", n, nb, inplace);
    free(sc); free(sd); free(rc); free(rd); free(sv); free(rv); free(types);
}

static void test_reduce_scatter(long n, int inplace, int nb)
{
    /* Block: n elements per rank; Reduce_scatter: rank q gets n + q (n > 0). */
    int *s = tu_malloc(n * size * sizeof(int)), *r = tu_malloc(n * size * sizeof(int));
    for (long i = 0; i < n * size; i++) { s[i] = val(rank, i); r[i] = inplace ? val(rank, i) : -1; }
    const void *sb = inplace ? MPI_IN_PLACE : s;
    RUN(nb, MPI_Reduce_scatter_block(sb, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
        MPI_Ireduce_scatter_block(sb, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req_));
    for (long i = 0; i < n; i++) check_int(r, i, sum_all(rank * n + i), "reduce_scatter_block", n, nb, inplace);
    free(s); free(r);
    if (mpich_bugs && inplace && n > 1000)
        return;
    int *cnts = tu_malloc(size * sizeof(int));
    long total = 0, before = 0;
    for (int q = 0; q < size; q++) { cnts[q] = n ? (int)n + q : 0; if (q < rank) before += cnts[q]; total += cnts[q]; }
    s = tu_malloc(total * sizeof(int)); r = tu_malloc(total * sizeof(int));
    for (long i = 0; i < total; i++) { s[i] = val(rank, i); r[i] = inplace ? val(rank, i) : -1; }
    sb = inplace ? MPI_IN_PLACE : s;
    RUN(nb, MPI_Reduce_scatter(sb, r, cnts, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
        MPI_Ireduce_scatter(sb, r, cnts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req_));
    for (long i = 0; i < cnts[rank]; i++) check_int(r, i, sum_all(before + i), "reduce_scatter", n, nb, inplace);
    free(s); free(r); free(cnts);
}

/* OxMPI algorithm-selection tunables that make every collective take its other algorithm
 * ("alt": long-message/large-rank-count algorithms everywhere, and trees rather than the
 * flat collectives of oversubscribed runs (3+ ranks on this 2-core machine); "alt2": the remaining
 * alltoall/allgather variants, small blocking collectives through schedules rather than the
 * direct path, and no schedule reuse). Set before MPI_Init; other MPIs ignore them. */
static void alt_tuning(const char *which)
{
    if (!strcmp(which, "alt")) {
        const char *kv[][2] = {{"OXMPI_ALLREDUCE_SHORT_MSG", "0"}, {"OXMPI_BCAST_MIN_PROCS", "1"},
                               {"OXMPI_BCAST_SHORT_MSG", "0"}, {"OXMPI_ALLTOALL_MIN_PROCS", "1"},
                               {"OXMPI_ALLTOALL_SHORT_MSG", "100000000"}, {"OXMPI_GATHER_SHORT_MSG", "0"},
                               {"OXMPI_REDUCE_SCATTER_SHORT_MSG", "0"}, {"OXMPI_ALLGATHER_SHORT_MSG", "100000000"},
                               {"OXMPI_ALLGATHER_LONG_MSG", "0"}, {"OXMPI_OSUB_FLAT_PROCS", "0"}};
        for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) setenv(kv[i][0], kv[i][1], 1);
    } else if (!strcmp(which, "alt2")) {
        const char *kv[][2] = {{"OXMPI_ALLTOALL_SHORT_MSG", "0"}, {"OXMPI_ALLTOALL_MEDIUM_MSG", "0"},
                               {"OXMPI_ALLGATHER_SHORT_MSG", "0"}, {"OXMPI_ALLGATHER_LONG_MSG", "0"},
                               {"OXMPI_COLL_DIRECT_MAX", "0"}, {"OXMPI_COLL_SPARE_SCHEDULES", "0"}};
        for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) setenv(kv[i][0], kv[i][1], 1);
    }
}

int main(int argc, char **argv)
{
    for (int a = 1; a < argc; a++) alt_tuning(argv[a]);
    tu_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank = tu_rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    long maxcount = 262147;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "mpich-bugs")) mpich_bugs = 1;
        else if (!strncmp(argv[a], "alt", 3)) continue;
        else maxcount = atol(argv[a]);
    }
    /* 0, 1, small, just above 16 KiB, >= 1 MiB (ints). */
    long counts[] = {0, 1, 7, 4100, 262147};
    for (int c = 0; c < 5; c++) {
        long n = counts[c];
        if (n > maxcount) continue;
        /* Per-rank blocks of the rooted/all-to-all collectives: keep total volume modest. */
        long nb_blk = n > 100000 ? n / size + 1 : n;
        for (int nb = 0; nb < 2; nb++) {
            int root = (int)((c + nb) % size);
            test_bcast(n, root, nb);
            for (int inplace = 0; inplace < 2; inplace++) {
                test_reduce(n, root, inplace, nb);
                test_allreduce(n, inplace, nb);
                test_scan(n, inplace, nb, 0);
                test_scan(n, inplace, nb, 1);
                test_gather(nb_blk, root, inplace, nb);
                test_scatter(nb_blk, root, inplace, nb);
                test_allgather(nb_blk, inplace, nb);
                test_alltoall(nb_blk, inplace, nb);
                test_reduce_scatter(nb_blk, inplace, nb);
            }
        }
        if (rank == 0) { printf("count %ld ok\n", n); fflush(stdout); }
    }
    if (rank == 0) { printf("coll_all: OK (%d ranks)\n", size); fflush(stdout); }
    MPI_Finalize();
    return 0;
}
