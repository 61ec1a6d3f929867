/* Collectives with derived datatypes: Bcast, Gather, Scatter, Allgather, Alltoall, Gatherv,
 * Allreduce/Reduce/Scan (MPI_SUM on vectors of doubles: a predefined op on a derived type
 * built from one basic type) and Ibcast/Iallgather/Iallreduce, with
 *   vec2  MPI_Type_vector(4, 1, 2, MPI_DOUBLE) resized to 8 doubles (every other double),
 *   vblk  MPI_Type_vector(3, 2, 3, MPI_DOUBLE) at its natural extent (holes at 2 and 5),
 *   col   a column of a row-major double a[R][C]: MPI_Type_vector(R, 1, C, MPI_DOUBLE)
 *         resized to one double, so count k means k adjacent columns (R = 3 and R = 2600),
 *   st    MPI_Type_create_struct {int; double; char[3]} resized to 40 bytes (> sizeof),
 *   dbl   plain MPI_DOUBLE, used on the other side of "mixed" cases (same type signature,
 *         different type maps on sender and receiver).
 * Every buffer starts filled with a sentinel byte; each rank builds the exact expected image
 * of every buffer (data where the type map says, sentinel in every hole, between items and
 * between blocks) and compares all of it, so writes into holes are caught. Sizes: 1 and 3
 * items, > 16 KiB per block, and >= 1 MiB of payload for Bcast/Ibcast, Reduce and
 * Allreduce/Iallreduce. Usage: coll_dtypes [mpich-bugs]
 * "mpich-bugs": MPICH 4.0.2 rejects MPI_SUM on any derived datatype (even a dup of
 * MPI_DOUBLE: "MPI_SUM operation not defined for this datatype"), so the reductions then use
 * an equivalent user-defined sum that walks the type map instead, which still validates the
 * expected values and the hole checks of this program against MPICH. It also skips Gather
 * and Scatter of the struct type at the > 16 KiB count: MPICH 4.0.2's binomial Gather and
 * Scatter fail with "Message truncated" for a struct type whose size (15) differs from its
 * extent, at 1161 items and 4+ ranks (reproduced with a plain 20-line program). */
#include "testutil.h"
#include <stddef.h>

/* Like testutil's MPI_OK, but also print the MPI error string. */
#undef MPI_OK
#define MPI_OK(call)                                                                \
    do {                                                                            \
        int rc_ = (call);                                                           \
        if (rc_ != MPI_SUCCESS) {                                                   \
            char es_[MPI_MAX_ERROR_STRING] = "";                                    \
            int el_ = 0;                                                            \
            MPI_Error_string(rc_, es_, &el_);                                       \
            FAIL("%s returned error code %d: %s", #call, rc_, es_);                 \
        }                                                                           \
    } while (0)

#define SENT 0xA5
static int rank, size, mpich_bugs;
static MPI_Comm comm = MPI_COMM_WORLD;

enum { T_VEC2, T_VBLK, T_COL, T_TALL, T_ST, T_DBL, NKINDS };
static const char *kind_name[NKINDS] = {"vec2", "vblk", "col", "tallcol", "struct", "double"};

typedef struct { MPI_Aint off; char kind; } field;
typedef struct {
    int kind;
    char name[128];
    MPI_Datatype dt;
    MPI_Aint extent; /* extent of one item */
    MPI_Aint ub;     /* end of one item's footprint (lb is 0 for all our types) */
    int nf;          /* basic elements per item, layout below in type-signature order */
    field *f;
    int all_double;
    MPI_Aint rowbytes; /* col types: bytes per row of the 2-D array, for messages */
} tdesc;

static size_t ksize(char k) { return k == 'd' ? 8 : k == 'i' ? 4 : 1; }

typedef struct { int i; double d; char c[3]; } S;

/* Make and commit a type of the given kind. For the column types, C (the number of columns
 * of the 2-D array) is max_items + 1, so count <= max_items columns fit, plus a hole column. */
static tdesc make_type(int kind, long max_items)
{
    tdesc t;
    memset(&t, 0, sizeof t);
    t.kind = kind;
    t.all_double = 1;
    MPI_Datatype tmp;
    switch (kind) {
    case T_VEC2:
        MPI_OK(MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &tmp));
        MPI_OK(MPI_Type_create_resized(tmp, 0, 8 * sizeof(double), &t.dt));
        MPI_OK(MPI_Type_free(&tmp));
        t.extent = 64; t.nf = 4;
        t.f = tu_malloc(4 * sizeof(field));
        for (int j = 0; j < 4; j++) { t.f[j].off = 16 * j; t.f[j].kind = 'd'; }
        snprintf(t.name, sizeof t.name, "vec2[vector(4,1,2,DOUBLE) resized 64]");
        break;
    case T_VBLK:
        MPI_OK(MPI_Type_vector(3, 2, 3, MPI_DOUBLE, &t.dt));
        t.extent = 64; t.nf = 6;
        t.f = tu_malloc(6 * sizeof(field));
        for (int j = 0; j < 6; j++) { t.f[j].off = 8 * (3 * (j / 2) + j % 2); t.f[j].kind = 'd'; }
        snprintf(t.name, sizeof t.name, "vblk[vector(3,2,3,DOUBLE)]");
        break;
    case T_COL:
    case T_TALL: {
        int R = kind == T_COL ? 3 : 2600;
        long C = max_items + 1;
        MPI_OK(MPI_Type_vector(R, 1, (int)C, MPI_DOUBLE, &tmp));
        MPI_OK(MPI_Type_create_resized(tmp, 0, sizeof(double), &t.dt));
        MPI_OK(MPI_Type_free(&tmp));
        t.extent = 8; t.nf = R; t.rowbytes = 8 * C;
        t.f = tu_malloc(R * sizeof(field));
        for (int j = 0; j < R; j++) { t.f[j].off = (MPI_Aint)8 * C * j; t.f[j].kind = 'd'; }
        snprintf(t.name, sizeof t.name, "%s[column of double[%d][%ld]: vector(%d,1,%ld,DOUBLE) resized 8]",
                 kind_name[kind], R, C, R, C);
        break;
    }
    case T_ST: {
        int bl[3] = {1, 1, 3};
        MPI_Aint disp[3] = {offsetof(S, i), offsetof(S, d), offsetof(S, c)};
        MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
        MPI_OK(MPI_Type_create_struct(3, bl, disp, ty, &tmp));
        MPI_OK(MPI_Type_create_resized(tmp, 0, 40, &t.dt));
        MPI_OK(MPI_Type_free(&tmp));
        t.extent = 40; t.nf = 5; t.all_double = 0;
        t.f = tu_malloc(5 * sizeof(field));
        t.f[0].off = offsetof(S, i); t.f[0].kind = 'i';
        t.f[1].off = offsetof(S, d); t.f[1].kind = 'd';
        for (int j = 0; j < 3; j++) { t.f[2 + j].off = offsetof(S, c) + j; t.f[2 + j].kind = 'c'; }
        snprintf(t.name, sizeof t.name, "struct[{int;double;char[3]} resized 40]");
        break;
    }
    case T_DBL:
        MPI_OK(MPI_Type_dup(MPI_DOUBLE, &t.dt));
        t.extent = 8; t.nf = 1;
        t.f = tu_malloc(sizeof(field));
        t.f[0].off = 0; t.f[0].kind = 'd';
        snprintf(t.name, sizeof t.name, "double");
        break;
    }
    MPI_OK(MPI_Type_commit(&t.dt));
    for (int j = 0; j < t.nf; j++)
        if (t.f[j].off + (MPI_Aint)ksize(t.f[j].kind) > t.ub) t.ub = t.f[j].off + ksize(t.f[j].kind);
    /* Sanity: what the MPI says about the type must match our model of it. */
    MPI_Aint lb, ext;
    int tsize, expect_size = 0;
    for (int j = 0; j < t.nf; j++) expect_size += (int)ksize(t.f[j].kind);
    MPI_OK(MPI_Type_get_extent(t.dt, &lb, &ext));
    MPI_OK(MPI_Type_size(t.dt, &tsize));
    CHECK(lb == 0 && ext == t.extent, "%s: MPI_Type_get_extent = (lb %ld, extent %ld), expected (0, %ld)",
          t.name, (long)lb, (long)ext, (long)t.extent);
    CHECK(tsize == expect_size, "%s: MPI_Type_size = %d, expected %d", t.name, tsize, expect_size);
    return t;
}

static void free_type(tdesc *t)
{
    MPI_OK(MPI_Type_free(&t->dt));
    free(t->f);
}

/* Bytes spanned by n consecutive items. */
static size_t span(const tdesc *t, long n) { return n ? (size_t)((n - 1) * t->extent + t->ub) : 0; }
static long payload(const tdesc *t) { long s = 0; for (int j = 0; j < t->nf; j++) s += ksize(t->f[j].kind); return s; }

/* Element k (in type-signature order) of the data identified by seed p. Small integers, so
 * double sums over 8 ranks are exact whatever the order. */
static long long val(long k, int p) { return (k * 131 + (long long)p * 7919 + 17) % 1000003; }
static long long sum_upto(long k, int last) { long long s = 0; for (int r = 0; r <= last; r++) s += val(k, r); return s; }
typedef long long (*vfn)(long k, int p);

/* A buffer under test and its expected image. */
typedef struct {
    unsigned char *got, *exp, *mask; /* mask: 0 = hole, else the element kind covering the byte */
    size_t len;
    const tdesc *t;                  /* layout used for messages (column: row/col) */
} buf;

static buf balloc(const tdesc *t, size_t len)
{
    buf b;
    b.len = len; b.t = t;
    b.got = tu_malloc(len); b.exp = tu_malloc(len); b.mask = tu_malloc(len);
    memset(b.got, SENT, len); memset(b.exp, SENT, len); memset(b.mask, 0, len);
    return b;
}

static void bfree(buf *b) { free(b->got); free(b->exp); free(b->mask); }

/* Write n items of data (values fn(k, p), k counting from 0) at byte offset off of dst. */
static void put_raw(const tdesc *t, unsigned char *dst, size_t off, long n, vfn fn, int p)
{
    for (long i = 0; i < n; i++)
        for (int j = 0; j < t->nf; j++) {
            long long v = fn(i * t->nf + j, p);
            unsigned char *q = dst + off + i * t->extent + t->f[j].off;
            if (t->f[j].kind == 'd') { double d = (double)v; memcpy(q, &d, 8); }
            else if (t->f[j].kind == 'i') { int x = (int)v; memcpy(q, &x, 4); }
            else *q = (unsigned char)(33 + v % 94);
        }
}

/* Expect n items (fn, p) at byte offset off of b; with fill, also put them in b.got. */
static void expect(buf *b, const tdesc *t, size_t off, long n, vfn fn, int p, int fill)
{
    put_raw(t, b->exp, off, n, fn, p);
    if (fill) put_raw(t, b->got, off, n, fn, p);
    for (long i = 0; i < n; i++)
        for (int j = 0; j < t->nf; j++)
            memset(b->mask + off + i * t->extent + t->f[j].off, t->f[j].kind, ksize(t->f[j].kind));
}

static int describe(const buf *b, size_t start, size_t n, char *out, size_t cap)
{
    char where[96] = "";
    if (b->t && b->t->rowbytes)
        snprintf(where, sizeof where, " (row %ld col %ld)", (long)(start / b->t->rowbytes),
                 (long)((start % b->t->rowbytes) / 8));
    else if (b->t)
        snprintf(where, sizeof where, " (item %ld +%ld)", (long)(start / b->t->extent), (long)(start % b->t->extent));
    char k = b->mask[start];
    if (k == 'd') {
        double g, e;
        memcpy(&g, b->got + start, 8); memcpy(&e, b->exp + start, 8);
        return snprintf(out, cap, "double at byte %zu%s = %.17g, expected %.17g; ", start, where, g, e);
    } else if (k == 'i') {
        int g, e;
        memcpy(&g, b->got + start, 4); memcpy(&e, b->exp + start, 4);
        return snprintf(out, cap, "int at byte %zu%s = %d, expected %d; ", start, where, g, e);
    } else if (k == 'c') {
        return snprintf(out, cap, "char at byte %zu%s = 0x%02x, expected 0x%02x; ", start, where, b->got[start], b->exp[start]);
    }
    (void)n;
    return snprintf(out, cap, "HOLE byte %zu%s modified: 0x%02x, expected 0x%02x (untouched); ", start, where,
                    b->got[start], b->exp[start]);
}

/* Compare the whole buffer with its expected image; report up to 6 wrong elements. */
static void verify(const buf *b, const char *fmt, ...)
{
    if (!b->len || !memcmp(b->got, b->exp, b->len))
        return;
    char what[256], msg[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t pos = 0, nbad = 0, nholes = 0;
    msg[0] = 0;
    for (size_t i = 0; i < b->len;) {
        char k = b->mask[i];
        size_t start = k == 'd' ? i & ~(size_t)7 : k == 'i' ? i & ~(size_t)3 : i;
        size_t n = k ? ksize(k) : 1;
        if (memcmp(b->got + start, b->exp + start, n)) {
            nbad++;
            if (!k) nholes++;
            if (nbad <= 6 && pos < sizeof msg - 200)
                pos += describe(b, start, n, msg + pos, sizeof msg - pos);
        }
        i = start + n;
    }
    FAIL("%s: %zu wrong elements/bytes (%zu of them in holes) in a %zu-byte buffer: %s", what, nbad, nholes,
         b->len, msg);
}

static void wait_req(MPI_Request *q) { MPI_OK(MPI_Wait(q, MPI_STATUS_IGNORE)); }

/* ---------------------------------------------------------------------------------------- */

static void t_bcast(const tdesc *t, long n, int root, int nb)
{
    buf b = balloc(t, span(t, n));
    expect(&b, t, 0, n, val, 100 + root, rank == root);
    if (nb) { MPI_Request q; MPI_OK(MPI_Ibcast(b.got, (int)n, t->dt, root, comm, &q)); wait_req(&q); }
    else MPI_OK(MPI_Bcast(b.got, (int)n, t->dt, root, comm));
    verify(&b, "%s %s count=%ld root=%d", nb ? "Ibcast" : "Bcast", t->name, n, root);
    bfree(&b);
}

/* Sender: ns items of ts per block; receiver: nr items of tr (same signature). */
static void t_gather(const tdesc *ts, long ns, const tdesc *tr, long nr, int root)
{
    buf s = balloc(ts, span(ts, ns)), r = balloc(tr, span(tr, size * nr));
    expect(&s, ts, 0, ns, val, rank, 1);
    if (rank == root)
        for (int p = 0; p < size; p++) expect(&r, tr, p * nr * tr->extent, nr, val, p, 0);
    MPI_OK(MPI_Gather(s.got, (int)ns, ts->dt, r.got, (int)nr, tr->dt, root, comm));
    verify(&s, "Gather send buffer %s count=%ld", ts->name, ns);
    if (rank == root) /* the receive buffer is not significant elsewhere */
        verify(&r, "Gather send %d x %s, recv %ld x %s at root %d", (int)ns, ts->name, nr, tr->name, root);
    bfree(&s); bfree(&r);
}

static void t_scatter(const tdesc *ts, long ns, const tdesc *tr, long nr, int root)
{
    buf s = balloc(ts, span(ts, size * ns)), r = balloc(tr, span(tr, nr));
    if (rank == root)
        for (int p = 0; p < size; p++) expect(&s, ts, p * ns * ts->extent, ns, val, 50 + p, 1);
    expect(&r, tr, 0, nr, val, 50 + rank, 0);
    MPI_OK(MPI_Scatter(s.got, (int)ns, ts->dt, r.got, (int)nr, tr->dt, root, comm));
    if (rank == root)
        verify(&s, "Scatter send buffer %s count=%ld", ts->name, ns);
    verify(&r, "Scatter send %ld x %s from root %d, recv %ld x %s", ns, ts->name, root, nr, tr->name);
    bfree(&s); bfree(&r);
}

static void t_allgather(const tdesc *ts, long ns, const tdesc *tr, long nr, int nb)
{
    buf s = balloc(ts, span(ts, ns)), r = balloc(tr, span(tr, size * nr));
    expect(&s, ts, 0, ns, val, 200 + rank, 1);
    for (int p = 0; p < size; p++) expect(&r, tr, p * nr * tr->extent, nr, val, 200 + p, 0);
    if (nb) {
        MPI_Request q;
        MPI_OK(MPI_Iallgather(s.got, (int)ns, ts->dt, r.got, (int)nr, tr->dt, comm, &q));
        wait_req(&q);
    } else
        MPI_OK(MPI_Allgather(s.got, (int)ns, ts->dt, r.got, (int)nr, tr->dt, comm));
    const char *op = nb ? "Iallgather" : "Allgather";
    verify(&s, "%s send buffer %s count=%ld", op, ts->name, ns);
    verify(&r, "%s send %ld x %s, recv %ld x %s", op, ns, ts->name, nr, tr->name);
    bfree(&s); bfree(&r);
}

static void t_alltoall(const tdesc *ts, long ns, const tdesc *tr, long nr)
{
    buf s = balloc(ts, span(ts, size * ns)), r = balloc(tr, span(tr, size * nr));
    for (int p = 0; p < size; p++) {
        expect(&s, ts, p * ns * ts->extent, ns, val, 300 + rank * size + p, 1);
        expect(&r, tr, p * nr * tr->extent, nr, val, 300 + p * size + rank, 0);
    }
    MPI_OK(MPI_Alltoall(s.got, (int)ns, ts->dt, r.got, (int)nr, tr->dt, comm));
    verify(&s, "Alltoall send buffer %s count=%ld", ts->name, ns);
    verify(&r, "Alltoall send %ld x %s, recv %ld x %s", ns, ts->name, nr, tr->name);
    bfree(&s); bfree(&r);
}

/* Rank p contributes n + p % 3 items; blocks land one item apart (holes between blocks). */
static void t_gatherv(const tdesc *t, long n, int root)
{
    int *counts = tu_malloc(size * sizeof(int)), *displs = tu_malloc(size * sizeof(int));
    long total = 0;
    for (int p = 0; p < size; p++) {
        counts[p] = (int)(n + p % 3);
        displs[p] = (int)(total + p + 1);
        total += counts[p];
    }
    long items = total + size + 1;
    buf s = balloc(t, span(t, counts[rank])), r = balloc(t, span(t, items));
    expect(&s, t, 0, counts[rank], val, 400 + rank, 1);
    if (rank == root)
        for (int p = 0; p < size; p++) expect(&r, t, displs[p] * t->extent, counts[p], val, 400 + p, 0);
    MPI_OK(MPI_Gatherv(s.got, counts[rank], t->dt, r.got, counts, displs, t->dt, root, comm));
    verify(&s, "Gatherv send buffer %s count=%d", t->name, counts[rank]);
    if (rank == root)
        verify(&r, "Gatherv %s counts n+p%%3 (n=%ld), displs one item apart, root %d", t->name, n, root);
    bfree(&s); bfree(&r);
    free(counts); free(displs);
}

/* The user-op stand-in for MPI_SUM under "mpich-bugs": sums the doubles of the type map. */
static const tdesc *sum_type;
static void sum_walk(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const tdesc *t = sum_type;
    for (long i = 0; i < *len; i++)
        for (int j = 0; j < t->nf; j++) {
            double a, b;
            size_t off = i * t->extent + t->f[j].off;
            memcpy(&a, (char *)in + off, 8);
            memcpy(&b, (char *)inout + off, 8);
            b += a;
            memcpy((char *)inout + off, &b, 8);
        }
}

/* which: 0 Allreduce, 1 Allreduce in place, 2 Iallreduce, 3 Reduce, 4 Scan. */
static void t_reduce(const tdesc *t, long n, int which, int root)
{
    static const char *names[] = {"Allreduce", "Allreduce(IN_PLACE)", "Iallreduce", "Reduce", "Scan"};
    buf s = balloc(t, span(t, n)), r = balloc(t, span(t, n));
    expect(&s, t, 0, n, val, rank, 1);
    int last = which == 4 ? rank : size - 1;
    if (which == 1) expect(&r, t, 0, n, val, rank, 1); /* input lives in the receive buffer */
    if (which != 3 || rank == root) expect(&r, t, 0, n, sum_upto, last, 0);
    MPI_Op op = MPI_SUM;
    if (mpich_bugs) { sum_type = t; MPI_OK(MPI_Op_create(sum_walk, 1, &op)); }
    switch (which) {
    case 0: MPI_OK(MPI_Allreduce(s.got, r.got, (int)n, t->dt, op, comm)); break;
    case 1: MPI_OK(MPI_Allreduce(MPI_IN_PLACE, r.got, (int)n, t->dt, op, comm)); break;
    case 2: {
        MPI_Request q;
        MPI_OK(MPI_Iallreduce(s.got, r.got, (int)n, t->dt, op, comm, &q));
        wait_req(&q);
        break;
    }
    case 3: MPI_OK(MPI_Reduce(s.got, r.got, (int)n, t->dt, op, root, comm)); break;
    case 4: MPI_OK(MPI_Scan(s.got, r.got, (int)n, t->dt, op, comm)); break;
    }
    if (mpich_bugs) MPI_OK(MPI_Op_free(&op));
    verify(&s, "%s MPI_SUM send buffer %s count=%ld", names[which], t->name, n);
    if (which == 3) {
        if (rank == root)
            verify(&r, "Reduce MPI_SUM %s count=%ld root=%d", t->name, n, root);
    } else
        verify(&r, "%s MPI_SUM %s count=%ld", names[which], t->name, n);
    bfree(&s); bfree(&r);
}

/* ---------------------------------------------------------------------------------------- */

static long count_for_bytes(int kind, long bytes)
{
    tdesc t = make_type(kind, 1);
    long n = (bytes + payload(&t) - 1) / payload(&t);
    free_type(&t);
    return n;
}

/* Every collective with n items per block of the given kind. */
static void all_collectives(int kind, long n)
{
    /* Column types need enough columns for the largest buffer (Gatherv: ~size*(n+3)). */
    tdesc t = make_type(kind, size * (n + 3) + 1);
    tdesc d = make_type(T_DBL, 1);
    long nd = n * t.nf; /* the same data as plain doubles */
    for (int nb = 0; nb < 2; nb++) {
        t_bcast(&t, n, 0, nb);
        t_bcast(&t, n, size - 1, nb);
        t_allgather(&t, n, &t, n, nb);
    }
    if (!(mpich_bugs && kind == T_ST && n > 100)) {
        t_gather(&t, n, &t, n, size - 1);
        t_scatter(&t, n, &t, n, 0);
    }
    t_alltoall(&t, n, &t, n);
    t_gatherv(&t, n, size / 2);
    if (t.all_double) {
        /* Mixed type maps with the same type signature. */
        t_gather(&t, n, &d, nd, 0);
        t_gather(&d, nd, &t, n, size - 1);
        t_scatter(&d, nd, &t, n, size - 1);
        t_scatter(&t, n, &d, nd, 0);
        t_allgather(&t, n, &d, nd, 0);
        t_allgather(&d, nd, &t, n, 1);
        t_alltoall(&t, n, &d, nd);
        t_alltoall(&d, nd, &t, n);
    }
    if (t.all_double) {
        /* Reductions: a column type as narrow as possible (C = n + 1), since the temporary
         * buffers of a reduction may take count x true extent bytes. */
        tdesc u = t.rowbytes ? make_type(kind, n) : t;
        for (int w = 0; w < 5; w++) t_reduce(&u, n, w, size - 1);
        t_reduce(&u, n, 3, 0);
        if (t.rowbytes) free_type(&u);
    }
    free_type(&d);
    free_type(&t);
}

/* >= 1 MiB of payload: Bcast/Ibcast, and for vec2/vblk Allreduce/Iallreduce/Reduce (not for
 * the column types, whose true extent at this count is ~1 MiB: count x true extent is what
 * MPICH allocates for a reduction temporary, hundreds of MiB). */
static void large(int kind)
{
    long n = count_for_bytes(kind, 1L << 20);
    if (kind == T_TALL) n = n < 1 ? 1 : n;
    tdesc t = make_type(kind, n + 1);
    for (int nb = 0; nb < 2; nb++) t_bcast(&t, n, size / 2, nb);
    if (kind == T_VEC2 || kind == T_VBLK)
        for (int w = 0; w < 4; w++) t_reduce(&t, n, w, size > 1 ? 1 : 0);
    free_type(&t);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_OK(MPI_Comm_size(comm, &size));
    rank = tu_rank;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (int a = 1; a < argc; a++)
        if (!strcmp(argv[a], "mpich-bugs")) mpich_bugs = 1;
    const int kinds[] = {T_VEC2, T_VBLK, T_COL, T_TALL, T_ST};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        int kind = kinds[k];
        long med = count_for_bytes(kind, 17 * 1024); /* > 16 KiB per block */
        long counts[3] = {1, 3, med};
        int ncounts = kind == T_TALL ? 2 : 3; /* one tall column is already > 16 KiB */
        if (kind == T_TALL) counts[1] = 2;
        for (int c = 0; c < ncounts; c++)
            all_collectives(kind, counts[c]);
        large(kind);
        if (rank == 0) { printf("%s ok\n", kind_name[kind]); fflush(stdout); }
    }
    if (rank == 0) { printf("coll_dtypes: OK (%d ranks)\n", size); fflush(stdout); }
    MPI_Finalize();
    return 0;
}
