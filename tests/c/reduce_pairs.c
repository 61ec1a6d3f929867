/* MINLOC/MAXLOC on every predefined pair type in every reduction entry point, predefined
 * ops on derived types built from a pair type, and a non-commutative user op on a
 * non-contiguous (vector) type in every reducing collective.
 *
 * Pair values repeat across ranks so ties are common; the indices run against rank
 * order, so "ties take the lowest index" is visible. Input padding holds per-rank garbage
 * (it must never count as data) and output padding and holes hold a mark that must
 * survive. Counts: 0, 1, odd, and >= 1 MiB of data (the large-message algorithms). */
#include "testutil.h"
#include <stddef.h>

static int rank, size;

/* ------------------------------------------------------------ pair type descriptions */

enum kind { K_FLOAT, K_DOUBLE, K_LONG, K_SHORT, K_INT, K_LDOUBLE };

struct ptype {
    MPI_Datatype dt;
    const char *name;
    enum kind v, i;      /* value and index kinds */
    size_t extent, ioff; /* C struct layout */
    size_t vsize, isize;
};

static size_t ksize(enum kind k)
{
    switch (k) {
    case K_FLOAT: return sizeof(float);
    case K_DOUBLE: return sizeof(double);
    case K_LONG: return sizeof(long);
    case K_SHORT: return sizeof(short);
    case K_INT: return sizeof(int);
    case K_LDOUBLE: return sizeof(long double);
    }
    return 0;
}

static void kput(enum kind k, unsigned char *p, long x)
{
    float f = (float)x; double d = (double)x; long l = x; short s = (short)x; int i = (int)x;
    long double ld = (long double)x;
    switch (k) {
    case K_FLOAT: memcpy(p, &f, sizeof f); break;
    case K_DOUBLE: memcpy(p, &d, sizeof d); break;
    case K_LONG: memcpy(p, &l, sizeof l); break;
    case K_SHORT: memcpy(p, &s, sizeof s); break;
    case K_INT: memcpy(p, &i, sizeof i); break;
    case K_LDOUBLE: memcpy(p, &ld, 10); break; /* x87: 10 significant bytes */
    }
}

static long kget(enum kind k, const unsigned char *p)
{
    float f; double d; long l; short s; int i; long double ld = 0;
    switch (k) {
    case K_FLOAT: memcpy(&f, p, sizeof f); return (long)f;
    case K_DOUBLE: memcpy(&d, p, sizeof d); return (long)d;
    case K_LONG: memcpy(&l, p, sizeof l); return l;
    case K_SHORT: memcpy(&s, p, sizeof s); return s;
    case K_INT: memcpy(&i, p, sizeof i); return i;
    case K_LDOUBLE: memcpy(&ld, p, 10); return (long)ld;
    }
    return 0;
}

struct fi { float v; int i; };
struct di { double v; int i; };
struct li { long v; int i; };
struct si { short v; int i; };
struct ii { int v; int i; };
struct ldi { long double v; int i; };
struct ff { float v, i; };
struct dd { double v, i; };

#define PT(dt, name, vk, ik, st) { dt, name, vk, ik, sizeof(struct st), offsetof(struct st, i), 0, 0 }
static struct ptype types[] = {
    PT(MPI_FLOAT_INT, "MPI_FLOAT_INT", K_FLOAT, K_INT, fi),
    PT(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", K_DOUBLE, K_INT, di),
    PT(MPI_LONG_INT, "MPI_LONG_INT", K_LONG, K_INT, li),
    PT(MPI_SHORT_INT, "MPI_SHORT_INT", K_SHORT, K_INT, si),
    PT(MPI_2INT, "MPI_2INT", K_INT, K_INT, ii),
    PT(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", K_LDOUBLE, K_INT, ldi),
    PT(MPI_2REAL, "MPI_2REAL", K_FLOAT, K_FLOAT, ff),
    PT(MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", K_DOUBLE, K_DOUBLE, dd),
    PT(MPI_2INTEGER, "MPI_2INTEGER", K_INT, K_INT, ii),
};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

/* Value and index rank r contributes at element k: few distinct values (ties), indices
 * falling with the rank and never equal between ranks for one element. */
static long val(int r, long k) { return (k * 7 + (r / 2) * 5) % 3 - 1; }
static long idx(int r, long k) { return (long)(size - r) * 3 + k % 5; }

static const unsigned char MARK = 0xC3;

/* Fills n pairs at buf (struct layout) with rank r's data; padding gets garbage. */
static void fill(const struct ptype *t, unsigned char *buf, long n, int r)
{
    memset(buf, 0x5A ^ r, (size_t)n * t->extent);
    for (long k = 0; k < n; k++) {
        kput(t->v, buf + k * t->extent, val(r, k));
        kput(t->i, buf + k * t->extent + t->ioff, idx(r, k));
    }
}

/* Whether byte b of a pair is padding (the long double's own unused bytes are not). */
static int is_padding(const struct ptype *t, size_t b)
{
    if (b < t->vsize || (b >= t->ioff && b < t->ioff + t->isize))
        return 0;
    return !(t->v == K_LDOUBLE && b < 16);
}

/* As fill, with MARK in the padding: an in-place output buffer. */
static void fill_marked(const struct ptype *t, unsigned char *buf, long n, int r)
{
    fill(t, buf, n, r);
    for (long k = 0; k < n; k++)
        for (size_t b = 0; b < t->extent; b++)
            if (is_padding(t, b))
                buf[k * t->extent + b] = MARK;
}

/* The MINLOC/MAXLOC fold of ranks lo..hi-1 at element k. */
static void expect(long k, int lo, int hi, int maxloc, long *v, long *i)
{
    *v = val(lo, k);
    *i = idx(lo, k);
    for (int r = lo + 1; r < hi; r++) {
        long x = val(r, k), j = idx(r, k);
        if (maxloc ? x > *v : x < *v) {
            *v = x;
            *i = j;
        } else if (x == *v && j < *i) {
            *i = j;
        }
    }
}

/* Checks n pairs at buf (element k0 + k at position k) against the fold of ranks lo..hi-1,
 * and that their padding still holds MARK. */
static void check(const struct ptype *t, const unsigned char *buf, long n, long k0, int lo, int hi, int maxloc, const char *what, long count)
{
    for (long k = 0; k < n; k++) {
        const unsigned char *p = buf + k * t->extent;
        long v, i, gv = kget(t->v, p), gi = kget(t->i, p + t->ioff);
        expect(k0 + k, lo, hi, maxloc, &v, &i);
        CHECK(gv == v && gi == i, "%s %s %s count %ld: element %ld is (%ld, %ld), expected (%ld, %ld)", what, t->name,
              maxloc ? "MAXLOC" : "MINLOC", count, k0 + k, gv, gi, v, i);
        for (size_t b = 0; b < t->extent; b++) {
            if (!is_padding(t, b))
                continue;
            CHECK(p[b] == MARK, "%s %s count %ld: padding byte %zu of element %ld was written", what, t->name, count, b, k0 + k);
        }
    }
}

enum entry { E_REDUCE, E_IREDUCE, E_REDUCE_INPLACE, E_ALLREDUCE, E_IALLREDUCE, E_ALLREDUCE_INPLACE, E_RS, E_IRS,
             E_RSB, E_IRSB, E_SCAN, E_ISCAN, E_EXSCAN, E_IEXSCAN, E_LOCAL, E_COUNT };
static const char *entry_name[E_COUNT] = {
    "MPI_Reduce", "MPI_Ireduce", "MPI_Reduce(IN_PLACE)", "MPI_Allreduce", "MPI_Iallreduce", "MPI_Allreduce(IN_PLACE)",
    "MPI_Reduce_scatter", "MPI_Ireduce_scatter", "MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block", "MPI_Scan",
    "MPI_Iscan", "MPI_Exscan", "MPI_Iexscan", "MPI_Reduce_local",
};

static void wait(MPI_Request *rq) { MPI_OK(MPI_Wait(rq, MPI_STATUS_IGNORE)); }

/* One (type, op, entry, count) case. */
static void run_pair(const struct ptype *t, MPI_Op op, enum entry e, long count)
{
    int maxloc = op == MPI_MAXLOC;
    const char *what = entry_name[e];
    size_t bytes = (size_t)(count ? count : 1) * t->extent;
    unsigned char *in = malloc(bytes), *out = malloc(bytes);
    CHECK(in && out, "out of memory");
    fill(t, in, count, rank);
    memset(out, MARK, bytes);
    MPI_Request rq;
    int c = (int)count, root = (int)(count % size);
    /* Reduce_scatter: rank r gets blk or 2 blk elements, the rest to the last rank. */
    int *rc = malloc(sizeof(int) * size);
    long blk = count / (2 * size), off = 0, mine = 0, total = 0;
    for (int r = 0; r < size; r++) {
        rc[r] = (int)(blk * (1 + r % 2));
        total += rc[r];
    }
    rc[size - 1] += (int)(count - total);
    for (int r = 0; r < rank; r++)
        off += rc[r];
    mine = rc[rank];
    switch (e) {
    case E_REDUCE: MPI_OK(MPI_Reduce(in, out, c, t->dt, op, root, MPI_COMM_WORLD)); break;
    case E_IREDUCE: MPI_OK(MPI_Ireduce(in, out, c, t->dt, op, root, MPI_COMM_WORLD, &rq)); wait(&rq); break;
    case E_REDUCE_INPLACE:
        if (rank == root) {
            fill_marked(t, out, count, rank);
            MPI_OK(MPI_Reduce(MPI_IN_PLACE, out, c, t->dt, op, root, MPI_COMM_WORLD));
        } else {
            MPI_OK(MPI_Reduce(in, NULL, c, t->dt, op, root, MPI_COMM_WORLD));
        }
        break;
    case E_ALLREDUCE: MPI_OK(MPI_Allreduce(in, out, c, t->dt, op, MPI_COMM_WORLD)); break;
    case E_IALLREDUCE: MPI_OK(MPI_Iallreduce(in, out, c, t->dt, op, MPI_COMM_WORLD, &rq)); wait(&rq); break;
    case E_ALLREDUCE_INPLACE:
        fill_marked(t, out, count, rank);
        MPI_OK(MPI_Allreduce(MPI_IN_PLACE, out, c, t->dt, op, MPI_COMM_WORLD));
        break;
    case E_RS: MPI_OK(MPI_Reduce_scatter(in, out, rc, t->dt, op, MPI_COMM_WORLD)); break;
    case E_IRS: MPI_OK(MPI_Ireduce_scatter(in, out, rc, t->dt, op, MPI_COMM_WORLD, &rq)); wait(&rq); break;
    case E_RSB: MPI_OK(MPI_Reduce_scatter_block(in, out, c / size, t->dt, op, MPI_COMM_WORLD)); break;
    case E_IRSB: MPI_OK(MPI_Ireduce_scatter_block(in, out, c / size, t->dt, op, MPI_COMM_WORLD, &rq)); wait(&rq); break;
    case E_SCAN: MPI_OK(MPI_Scan(in, out, c, t->dt, op, MPI_COMM_WORLD)); break;
    case E_ISCAN: MPI_OK(MPI_Iscan(in, out, c, t->dt, op, MPI_COMM_WORLD, &rq)); wait(&rq); break;
    case E_EXSCAN: MPI_OK(MPI_Exscan(in, out, c, t->dt, op, MPI_COMM_WORLD)); break;
    case E_IEXSCAN: MPI_OK(MPI_Iexscan(in, out, c, t->dt, op, MPI_COMM_WORLD, &rq)); wait(&rq); break;
    case E_LOCAL: {
        /* out = in(rank + 1) op out(rank): a two-rank fold computed locally. */
        unsigned char *other = malloc(bytes);
        fill(t, other, count, (rank + 1) % size);
        fill_marked(t, out, count, rank);
        MPI_OK(MPI_Reduce_local(other, out, c, t->dt, op));
        free(other);
        break;
    }
    case E_COUNT: break;
    }
    switch (e) {
    case E_REDUCE: case E_IREDUCE: case E_REDUCE_INPLACE:
        if (rank == root)
            check(t, out, count, 0, 0, size, maxloc, what, count);
        break;
    case E_ALLREDUCE: case E_IALLREDUCE: case E_ALLREDUCE_INPLACE:
        check(t, out, count, 0, 0, size, maxloc, what, count);
        break;
    case E_RS: case E_IRS: check(t, out, mine, off, 0, size, maxloc, what, count); break;
    case E_RSB: case E_IRSB: check(t, out, c / size, (long)rank * (c / size), 0, size, maxloc, what, count); break;
    case E_SCAN: case E_ISCAN: check(t, out, count, 0, 0, rank + 1, maxloc, what, count); break;
    case E_EXSCAN: case E_IEXSCAN:
        if (rank > 0)
            check(t, out, count, 0, 0, rank, maxloc, what, count);
        break;
    case E_LOCAL:
        if (size == 1) {
            check(t, out, count, 0, 0, 1, maxloc, what, count);
        } else {
            /* The fold of {rank, rank + 1}, in whatever rank order: MINLOC/MAXLOC commute. */
            for (long k = 0; k < count; k++) {
                int a = rank, b = (rank + 1) % size;
                long v = val(a, k), i = idx(a, k), x = val(b, k), j = idx(b, k);
                if (maxloc ? x > v : x < v) { v = x; i = j; } else if (x == v && j < i) { i = j; }
                const unsigned char *p = out + k * t->extent;
                CHECK(kget(t->v, p) == v && kget(t->i, p + t->ioff) == i, "MPI_Reduce_local %s count %ld: element %ld is (%ld, %ld), expected (%ld, %ld)",
                      t->name, count, k, kget(t->v, p), kget(t->i, p + t->ioff), v, i);
            }
        }
        break;
    case E_COUNT: break;
    }
    free(rc);
    free(in);
    free(out);
}

/* ------------------------------------------------------------ predefined op on a vector of pairs */

/* A vector of 3 MPI_DOUBLE_INT taking every other pair; holes in the output keep MARK. */
static void pair_vector(void)
{
    const struct ptype *t = &types[1];
    MPI_Datatype vt;
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_DOUBLE_INT, &vt));
    MPI_OK(MPI_Type_commit(&vt));
    MPI_Aint lb, ext;
    MPI_OK(MPI_Type_get_extent(vt, &lb, &ext));
    for (int count = 0; count <= 5; count += 5) {
        long pairs = (long)count * ext / (long)t->extent + 2; /* room for the last item's span */
        unsigned char *in = malloc(pairs * t->extent), *out = malloc(pairs * t->extent);
        for (int which = 0; which < 4; which++) {
            fill(t, in, pairs, rank);
            memset(out, MARK, pairs * t->extent);
            MPI_Request rq;
            const char *what = "?";
            int lo = 0, hi = size;
            switch (which) {
            case 0: what = "MPI_Allreduce(vector of MPI_DOUBLE_INT)"; MPI_OK(MPI_Allreduce(in, out, count, vt, MPI_MAXLOC, MPI_COMM_WORLD)); break;
            case 1: what = "MPI_Iallreduce(vector of MPI_DOUBLE_INT)"; MPI_OK(MPI_Iallreduce(in, out, count, vt, MPI_MAXLOC, MPI_COMM_WORLD, &rq)); wait(&rq); break;
            case 2: what = "MPI_Reduce(vector of MPI_DOUBLE_INT)"; MPI_OK(MPI_Reduce(in, out, count, vt, MPI_MAXLOC, 0, MPI_COMM_WORLD)); break;
            case 3: what = "MPI_Scan(vector of MPI_DOUBLE_INT)"; MPI_OK(MPI_Scan(in, out, count, vt, MPI_MAXLOC, MPI_COMM_WORLD)); hi = rank + 1; break;
            }
            if (which == 2 && rank != 0)
                continue;
            /* Item q's pairs sit at pair positions q * ext/extent + 0, 2, 4. */
            for (long k = 0; k < pairs; k++) {
                long q = k / (ext / (long)t->extent), pos = k % (ext / (long)t->extent);
                int data = q < count && pos % 2 == 0 && pos <= 4;
                const unsigned char *p = out + k * t->extent;
                if (data) {
                    check(t, p, 1, k, lo, hi, 1, what, count);
                } else {
                    for (size_t b = 0; b < t->extent; b++)
                        CHECK(p[b] == MARK, "%s count %d: byte %zu of the hole at pair %ld was written", what, count, b, k);
                }
            }
        }
        free(in);
        free(out);
    }
    /* A predefined op the pair type does not admit: MPI_ERR_OP, not a crash. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    struct di a[6], b[6];
    memset(a, 0, sizeof a);
    int rc = MPI_Allreduce(a, b, 1, vt, MPI_SUM, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_SUM on a vector of MPI_DOUBLE_INT gave class %d, expected MPI_ERR_OP", cls);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_OK(MPI_Type_free(&vt));
}

/* ------------------------------------------------------------ user op on a vector type */

/* The user type: 4 blocks of 2 doubles (a, b) with stride 3, so 1 double of hole after
 * each block; extent 11 doubles. An element (a, b) is the affine map x -> a x + b, and
 * the op composes maps, which is associative and not commutative:
 * (a1, b1) o (a2, b2) = (a1 a2, a1 b2 + b1). */
#define UBLK 4
#define USTRIDE 3
#define UEXT ((UBLK - 1) * USTRIDE + 2)
static MPI_Datatype utype;

static void compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    CHECK(*dt == utype, "the user function got datatype %#x, not the user's type", (unsigned)*dt);
    double *x = in, *y = inout;
    for (int q = 0; q < *len; q++)
        for (int j = 0; j < UBLK; j++) {
            double *p = x + q * UEXT + j * USTRIDE, *r = y + q * UEXT + j * USTRIDE;
            double a = p[0] * r[0], b = p[0] * r[1] + p[1];
            r[0] = a;
            r[1] = b;
        }
}

static double ua(int r, long q, int j) { return 1 + (r + j + q) % 2; }
static double ub(int r, long q, int j) { return (r * 3 + j + q) % 7; }
static const double HOLE = -7777.0;

static void ufill(double *buf, long n, int r)
{
    for (long i = 0; i < n * UEXT; i++)
        buf[i] = HOLE;
    for (long q = 0; q < n; q++)
        for (int j = 0; j < UBLK; j++) {
            buf[q * UEXT + j * USTRIDE] = ua(r, q, j);
            buf[q * UEXT + j * USTRIDE + 1] = ub(r, q, j);
        }
}

/* Checks n items at buf (item q0 + q at position q) against the composition of ranks
 * lo..hi-1 in rank order, and that the holes keep HOLE. */
static void ucheck(const double *buf, long n, long q0, int lo, int hi, const char *what, long count)
{
    for (long q = 0; q < n; q++)
        for (int j = 0; j < UBLK; j++) {
            double a = ua(lo, q0 + q, j), b = ub(lo, q0 + q, j);
            for (int r = lo + 1; r < hi; r++) {
                double a2 = ua(r, q0 + q, j), b2 = ub(r, q0 + q, j);
                b = a * b2 + b;
                a = a * a2;
            }
            const double *p = buf + q * UEXT + j * USTRIDE;
            CHECK(p[0] == a && p[1] == b, "%s (user op on a vector type) count %ld: item %ld block %d is (%g, %g), expected (%g, %g)",
                  what, count, q0 + q, j, p[0], p[1], a, b);
            if (j < UBLK - 1)
                CHECK(p[2] == HOLE, "%s (user op on a vector type) count %ld: hole after item %ld block %d was written", what, count, q0 + q, j);
        }
}

static void user_vector(void)
{
    MPI_Op op;
    MPI_OK(MPI_Type_vector(UBLK, 2, USTRIDE, MPI_DOUBLE, &utype));
    MPI_OK(MPI_Type_commit(&utype));
    MPI_OK(MPI_Op_create(compose, 0, &op));
    long large = (1L << 20) / (UBLK * 2 * sizeof(double)) + 1;
    long counts[] = {0, 1, 3, large};
    for (int ci = 0; ci < 4; ci++) {
        long count = counts[ci];
        int c = (int)count;
        size_t n = (size_t)(count ? count : 1) * UEXT;
        double *in = malloc(n * sizeof(double)), *out = malloc(n * sizeof(double));
        int *rc = malloc(sizeof(int) * size);
        long off = 0;
        for (int r = 0; r < size; r++)
            rc[r] = (int)(count / size) + (r == size - 1 ? (int)(count % size) : 0);
        for (int r = 0; r < rank; r++)
            off += rc[r];
        for (int e = 0; e < E_COUNT; e++) {
            MPI_Request rq;
            ufill(in, count, rank);
            for (size_t i = 0; i < n; i++)
                out[i] = HOLE;
            const char *what = entry_name[e];
            switch ((enum entry)e) {
            case E_REDUCE: MPI_OK(MPI_Reduce(in, out, c, utype, op, size - 1, MPI_COMM_WORLD)); break;
            case E_IREDUCE: MPI_OK(MPI_Ireduce(in, out, c, utype, op, size - 1, MPI_COMM_WORLD, &rq)); wait(&rq); break;
            case E_REDUCE_INPLACE:
                if (rank == size - 1) {
                    ufill(out, count, rank);
                    MPI_OK(MPI_Reduce(MPI_IN_PLACE, out, c, utype, op, size - 1, MPI_COMM_WORLD));
                } else {
                    MPI_OK(MPI_Reduce(in, NULL, c, utype, op, size - 1, MPI_COMM_WORLD));
                }
                break;
            case E_ALLREDUCE: MPI_OK(MPI_Allreduce(in, out, c, utype, op, MPI_COMM_WORLD)); break;
            case E_IALLREDUCE: MPI_OK(MPI_Iallreduce(in, out, c, utype, op, MPI_COMM_WORLD, &rq)); wait(&rq); break;
            case E_ALLREDUCE_INPLACE: ufill(out, count, rank); MPI_OK(MPI_Allreduce(MPI_IN_PLACE, out, c, utype, op, MPI_COMM_WORLD)); break;
            case E_RS: MPI_OK(MPI_Reduce_scatter(in, out, rc, utype, op, MPI_COMM_WORLD)); break;
            case E_IRS: MPI_OK(MPI_Ireduce_scatter(in, out, rc, utype, op, MPI_COMM_WORLD, &rq)); wait(&rq); break;
            case E_RSB: MPI_OK(MPI_Reduce_scatter_block(in, out, c / size, utype, op, MPI_COMM_WORLD)); break;
            case E_IRSB: MPI_OK(MPI_Ireduce_scatter_block(in, out, c / size, utype, op, MPI_COMM_WORLD, &rq)); wait(&rq); break;
            case E_SCAN: MPI_OK(MPI_Scan(in, out, c, utype, op, MPI_COMM_WORLD)); break;
            case E_ISCAN: MPI_OK(MPI_Iscan(in, out, c, utype, op, MPI_COMM_WORLD, &rq)); wait(&rq); break;
            case E_EXSCAN: MPI_OK(MPI_Exscan(in, out, c, utype, op, MPI_COMM_WORLD)); break;
            case E_IEXSCAN: MPI_OK(MPI_Iexscan(in, out, c, utype, op, MPI_COMM_WORLD, &rq)); wait(&rq); break;
            case E_LOCAL: /* out = in(rank) o out(rank + 1) */
                ufill(out, count, rank + 1);
                MPI_OK(MPI_Reduce_local(in, out, c, utype, op));
                break;
            case E_COUNT: break;
            }
            switch ((enum entry)e) {
            case E_REDUCE: case E_IREDUCE: case E_REDUCE_INPLACE:
                if (rank == size - 1)
                    ucheck(out, count, 0, 0, size, what, count);
                break;
            case E_ALLREDUCE: case E_IALLREDUCE: case E_ALLREDUCE_INPLACE: ucheck(out, count, 0, 0, size, what, count); break;
            case E_RS: case E_IRS: ucheck(out, rc[rank], off, 0, size, what, count); break;
            case E_RSB: case E_IRSB: ucheck(out, c / size, (long)rank * (c / size), 0, size, what, count); break;
            case E_SCAN: case E_ISCAN: ucheck(out, count, 0, 0, rank + 1, what, count); break;
            case E_EXSCAN: case E_IEXSCAN:
                if (rank > 0)
                    ucheck(out, count, 0, 0, rank, what, count);
                break;
            case E_LOCAL:
                /* ranks rank and rank + 1 composed: the fill functions take any rank number. */
                for (long q = 0; q < count; q++)
                    for (int j = 0; j < UBLK; j++) {
                        double a = ua(rank, q, j) * ua(rank + 1, q, j), b = ua(rank, q, j) * ub(rank + 1, q, j) + ub(rank, q, j);
                        const double *p = out + q * UEXT + j * USTRIDE;
                        CHECK(p[0] == a && p[1] == b, "MPI_Reduce_local (user op on a vector type): item %ld block %d is (%g, %g), expected (%g, %g)", q, j, p[0], p[1], a, b);
                    }
                break;
            case E_COUNT: break;
            }
        }
        free(rc);
        free(in);
        free(out);
    }
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Type_free(&utype));
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int ti = 0; ti < NTYPES; ti++) {
        struct ptype *t = &types[ti];
        t->vsize = ksize(t->v);
        t->isize = ksize(t->i);
        MPI_Aint lb, ext;
        int sz;
        MPI_OK(MPI_Type_get_extent(t->dt, &lb, &ext));
        MPI_OK(MPI_Type_size(t->dt, &sz));
        CHECK(ext == (MPI_Aint)t->extent && sz == (int)(t->vsize + t->isize), "%s: extent %ld size %d, expected %zu and %zu", t->name,
              (long)ext, sz, t->extent, t->vsize + t->isize);
        long large = (long)((1 << 20) / (t->vsize + t->isize)) | 1;
        long counts[] = {0, 1, 7, 2 * size + 1, large};
        for (int ci = 0; ci < 5; ci++)
            for (int e = 0; e < E_COUNT; e++)
                for (int m = 0; m < 2; m++)
                    run_pair(t, m ? MPI_MAXLOC : MPI_MINLOC, (enum entry)e, counts[ci]);
    }
    pair_vector();
    user_vector();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d pair types x 2 ops x %d entry points x 5 counts, pair vectors, user op on a vector type\nreduce_pairs: OK\n", NTYPES, E_COUNT);
    MPI_Finalize();
    return 0;
}
