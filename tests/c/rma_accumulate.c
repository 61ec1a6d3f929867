/* rma_accumulate: MPI_Accumulate, MPI_Get_accumulate and MPI_Fetch_and_op, exact results.
 * Every test sends from all ranks to all ranks (the same target elements from every
 * origin: accumulates are element-wise atomic) unless said otherwise.
 *  1. MPI_SUM on MPI_INT, MPI_LONG (beyond 2^53: not done in double), MPI_DOUBLE,
 *     MPI_FLOAT, MPI_UNSIGNED_LONG_LONG (wrapping past 2^64-1), MPI_INT64_T;
 *  2. MPI_MAX and MPI_MIN on MPI_INT and MPI_DOUBLE, MPI_PROD, MPI_BAND, MPI_BOR,
 *     MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR on MPI_INT, MPI_BXOR on MPI_UNSIGNED_LONG_LONG;
 *  3. MPI_MAXLOC / MPI_MINLOC on MPI_2INT and MPI_DOUBLE_INT with ties (lowest index wins);
 *  4. derived types: contiguous origin -> vector target, vector origin -> indexed target
 *     (MPI_SUM on MPI_INT), vector target of MPI_2INT (MPI_MAXLOC), indexed origin ->
 *     vector target of doubles with MPI_REPLACE, each origin into its own region; the
 *     gaps between target blocks are checked untouched;
 *  5. MPI_REPLACE from every origin onto the same elements: each element ends equal to
 *     one origin's value;
 *  6. MPI_Get_accumulate: MPI_SUM returning the old values (gathered per target: element
 *     j's old values over all origins are exactly init_j + 0 .. size-1), MPI_NO_OP as an
 *     atomic read (target unchanged), MPI_REPLACE as an atomic swap (old values plus the
 *     final value are exactly {init} + {every origin's value});
 *  7. ordering (default accumulate_ordering rar,raw,war,waw): from one origin to one
 *     target in one lock epoch, K times MPI_Accumulate(MPI_REPLACE, i) followed by
 *     MPI_Get_accumulate(MPI_NO_OP), a single flush at the end: the i-th read returns i;
 *     the same with MPI_Fetch_and_op(MPI_REPLACE) chains (each returns the previous
 *     value) and MPI_Accumulate(MPI_SUM) followed by MPI_Fetch_and_op(MPI_NO_OP);
 *  8. MPI_Fetch_and_op with MPI_SUM, MPI_NO_OP and MPI_REPLACE on MPI_INT, MPI_LONG,
 *     MPI_DOUBLE, MPI_FLOAT, MPI_UNSIGNED_LONG_LONG, MPI_UNSIGNED (wrapping past
 *     UINT_MAX), MPI_INT64_T, MPI_AINT and MPI_SHORT;
 *  9. a large MPI_Accumulate (SUM of 40000 doubles) from every rank onto rank 0;
 * 10. runs of 2-300 elements (around the vectorised loops' thresholds) of MPI_CHAR (as
 *     OSU's osu_acc_latency), MPI_UNSIGNED_CHAR (wrapping), MPI_SHORT, MPI_INT,
 *     MPI_UNSIGNED (wrapping), MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG (wrapping),
 *     MPI_FLOAT and MPI_DOUBLE at an odd byte offset in target and origin: MPI_SUM from every rank,
 *     then MPI_Get_accumulate with MPI_REPLACE, MPI_NO_OP and MPI_SUM from one origin per
 *     target (exact old values returned), the bytes around the run checked untouched.
 * MPI_NO_OP is only used where the standard allows it (MPI_Get_accumulate,
 * MPI_Fetch_and_op). Epochs: fences for 1-6 and 9, MPI_Win_lock / lock_all for 7-8. */
#include "testutil.h"

#include <limits.h>

#define NA 6
#define WBYTES 4096
#define NBIG 40000

static int rank, nprocs;
static MPI_Win win;
static unsigned char *wbuf; /* our window, WBYTES, disp_unit 1 */

/* Open an epoch in which the owner initialises its window first. */
static void fence(void) { MPI_OK(MPI_Win_fence(0, win)); }

#define PR(x) ((long double)(x))

/* 1. MPI_SUM on basic types, NA elements at byte 0, a sentinel element after them. */
#define SUM_TEST(NAME, CT, MT, INIT, VAL)                                                 \
    static void sum_##NAME(void)                                                          \
    {                                                                                     \
        CT *w = (CT *)wbuf, src[NA];                                                      \
        fence();                                                                          \
        for (int i = 0; i < NA; i++)                                                      \
            w[i] = INIT(i);                                                               \
        w[NA] = (CT)77;                                                                   \
        fence();                                                                          \
        for (int i = 0; i < NA; i++)                                                      \
            src[i] = VAL(rank, i);                                                        \
        for (int k = 0; k < nprocs; k++)                                                  \
            MPI_OK(MPI_Accumulate(src, NA, MT, (rank + k) % nprocs, 0, NA, MT, MPI_SUM,   \
                                  win));                                                  \
        fence();                                                                          \
        for (int i = 0; i < NA; i++) {                                                    \
            CT e = INIT(i);                                                               \
            for (int o = 0; o < nprocs; o++)                                              \
                e += VAL(o, i);                                                           \
            CHECK(w[i] == e, "MPI_SUM on " #MT ": element %d = %.21Lg, expected %.21Lg", i, \
                  PR(w[i]), PR(e));                                                       \
        }                                                                                 \
        CHECK(w[NA] == (CT)77, "MPI_SUM on " #MT ": element after the target changed");   \
    }

#define I_INIT(i) (-1000 + (i))
#define I_VAL(o, i) ((o + 1) * (i + 1) - 3)
#define L_INIT(i) ((1L << 60) + (i))
#define L_VAL(o, i) ((long)(o + 1) * (1L << 33) + (i) + 1)
#define D_INIT(i) (0.5 + (i))
#define D_VAL(o, i) ((o) * 0.25 + (i) - 2.0)
#define F_INIT(i) (1.5f + (float)(i))
#define F_VAL(o, i) ((float)(o) + 0.5f * (float)(i))
#define U_INIT(i) (ULLONG_MAX - 5ULL + (unsigned long long)(i))
#define U_VAL(o, i) ((unsigned long long)(o) * 1000ULL + (unsigned long long)(i) + 1ULL)
#define Q_INIT(i) ((int64_t)INT64_MIN + 7 + (i))
#define Q_VAL(o, i) ((int64_t)(o) * -3 + (i))
SUM_TEST(int, int, MPI_INT, I_INIT, I_VAL)
SUM_TEST(long, long, MPI_LONG, L_INIT, L_VAL)
SUM_TEST(double, double, MPI_DOUBLE, D_INIT, D_VAL)
SUM_TEST(float, float, MPI_FLOAT, F_INIT, F_VAL)
SUM_TEST(ull, unsigned long long, MPI_UNSIGNED_LONG_LONG, U_INIT, U_VAL)
SUM_TEST(i64, int64_t, MPI_INT64_T, Q_INIT, Q_VAL)

/* 2. other predefined operations on MPI_INT: fold the origins' values in C. */
static int c_op(MPI_Op op, int a, int b)
{
    if (op == MPI_MAX) return a > b ? a : b;
    if (op == MPI_MIN) return a < b ? a : b;
    if (op == MPI_PROD) return a * b;
    if (op == MPI_BAND) return a & b;
    if (op == MPI_BOR) return a | b;
    if (op == MPI_BXOR) return a ^ b;
    if (op == MPI_LAND) return (a && b);
    if (op == MPI_LOR) return (a || b);
    if (op == MPI_LXOR) return (!a != !b);
    FAIL("unknown op");
    return 0;
}

static int op_val(MPI_Op op, int o, int i)
{
    if (op == MPI_PROD) /* 1, 2 or -1: stays small */
        return ((o + i) % 3 == 0) ? 2 : ((o * i) % 4 == 1 ? -1 : 1);
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        return ((o * 5 + i * 3) % 4 == 0) ? 0 : (o + i + 1);
    if (op == MPI_BAND)
        return ~(1 << ((o + i) % 9)) & 0x3ff;
    return ((o * 7 + i * 3) % 11) - 5 + (o << (4 + i % 3)) * (i % 2 ? 1 : -1);
}

static int op_init(MPI_Op op, int i)
{
    if (op == MPI_PROD) return i - 2; /* includes 0 */
    if (op == MPI_LAND) return i % 3 ? 5 : 0;
    if (op == MPI_LOR || op == MPI_LXOR) return i % 2;
    if (op == MPI_BAND) return 0x3ff - i;
    if (op == MPI_MIN) return 100 - i;
    if (op == MPI_MAX) return -100 + i;
    return 0x5a5a + i;
}

static void int_op(MPI_Op op, const char *name)
{
    int *w = (int *)wbuf, src[NA];
    fence();
    for (int i = 0; i < NA; i++)
        w[i] = op_init(op, i);
    fence();
    for (int i = 0; i < NA; i++)
        src[i] = op_val(op, rank, i);
    for (int k = 0; k < nprocs; k++)
        MPI_OK(MPI_Accumulate(src, NA, MPI_INT, (nprocs - k + rank) % nprocs, 0, NA, MPI_INT,
                              op, win));
    fence();
    for (int i = 0; i < NA; i++) {
        int e = op_init(op, i);
        for (int o = 0; o < nprocs; o++)
            e = c_op(op, e, op_val(op, o, i));
        CHECK(w[i] == e, "%s on MPI_INT: element %d = %d (0x%x), expected %d (0x%x)", name, i,
              w[i], (unsigned)w[i], e, (unsigned)e);
    }
}

static void double_minmax(void)
{
    double *w = (double *)wbuf, src[2 * NA];
    fence();
    for (int i = 0; i < NA; i++) {
        w[i] = -1e300;     /* MAX target */
        w[NA + i] = 1e300; /* MIN target */
    }
    fence();
    for (int i = 0; i < NA; i++)
        src[i] = ((rank * 7 + i * 3) % 11) - 5.5;
    for (int k = 0; k < nprocs; k++) {
        int t = (rank + k) % nprocs;
        MPI_OK(MPI_Accumulate(src, NA, MPI_DOUBLE, t, 0, NA, MPI_DOUBLE, MPI_MAX, win));
        MPI_OK(MPI_Accumulate(src, NA, MPI_DOUBLE, t, NA * sizeof(double), NA, MPI_DOUBLE,
                              MPI_MIN, win));
    }
    fence();
    for (int i = 0; i < NA; i++) {
        double mx = -1e300, mn = 1e300;
        for (int o = 0; o < nprocs; o++) {
            double v = ((o * 7 + i * 3) % 11) - 5.5;
            mx = v > mx ? v : mx;
            mn = v < mn ? v : mn;
        }
        CHECK(w[i] == mx, "MPI_MAX on MPI_DOUBLE: element %d = %g, expected %g", i, w[i], mx);
        CHECK(w[NA + i] == mn, "MPI_MIN on MPI_DOUBLE: element %d = %g, expected %g", i,
              w[NA + i], mn);
    }
}

static void ull_bxor(void)
{
    unsigned long long *w = (unsigned long long *)wbuf, src[NA];
    fence();
    for (int i = 0; i < NA; i++)
        w[i] = 0xF0F0F0F0F0F0F0F0ULL >> i;
    fence();
    for (int i = 0; i < NA; i++)
        src[i] = (0x9E3779B97F4A7C15ULL * (unsigned long long)(rank + 1)) << i;
    for (int k = 0; k < nprocs; k++)
        MPI_OK(MPI_Accumulate(src, NA, MPI_UNSIGNED_LONG_LONG, (rank + k) % nprocs, 0, NA,
                              MPI_UNSIGNED_LONG_LONG, MPI_BXOR, win));
    fence();
    for (int i = 0; i < NA; i++) {
        unsigned long long e = 0xF0F0F0F0F0F0F0F0ULL >> i;
        for (int o = 0; o < nprocs; o++)
            e ^= (0x9E3779B97F4A7C15ULL * (unsigned long long)(o + 1)) << i;
        CHECK(w[i] == e, "MPI_BXOR on MPI_UNSIGNED_LONG_LONG: element %d = %llx, expected %llx",
              i, w[i], e);
    }
}

/* 3. MAXLOC / MINLOC with ties: value(o, i) = ((o + i) / 2) % 2, index = o * 10 + i. */
typedef struct { int v, loc; } int2_t;
typedef struct { double v; int loc; } dint_t;

static void loc_ops(void)
{
    CHECK(sizeof(dint_t) == 16, "struct {double; int} is not 16 bytes here");
    MPI_Aint lb, ext;
    MPI_OK(MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &ext));
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(dint_t), "MPI_DOUBLE_INT extent %ld, expected %zu",
          (long)ext, sizeof(dint_t));
    /* layout: MAXLOC 2INT [0, NA), MINLOC 2INT [NA, 2NA) in int2_t units at byte 0;
     * MAXLOC DOUBLE_INT and MINLOC DOUBLE_INT at byte 1024 */
    int2_t *wi = (int2_t *)wbuf;
    dint_t *wd = (dint_t *)(wbuf + 1024);
    int2_t si[NA];
    dint_t sd[NA];
    fence();
    for (int i = 0; i < NA; i++) {
        wi[i] = (int2_t){-1, 99999};
        wi[NA + i] = (int2_t){1000, 99999};
        wd[i] = (dint_t){-1.0, 99999};
        wd[NA + i] = (dint_t){1000.0, 99999};
    }
    fence();
    for (int i = 0; i < NA; i++) {
        si[i] = (int2_t){((rank + i) / 2) % 2, rank * 10 + i};
        sd[i] = (dint_t){(double)(((rank + i) / 2) % 2) + 0.5, rank * 10 + i};
    }
    for (int k = 0; k < nprocs; k++) {
        int t = (rank + k) % nprocs;
        MPI_OK(MPI_Accumulate(si, NA, MPI_2INT, t, 0, NA, MPI_2INT, MPI_MAXLOC, win));
        MPI_OK(MPI_Accumulate(si, NA, MPI_2INT, t, NA * sizeof(int2_t), NA, MPI_2INT,
                              MPI_MINLOC, win));
        MPI_OK(MPI_Accumulate(sd, NA, MPI_DOUBLE_INT, t, 1024, NA, MPI_DOUBLE_INT, MPI_MAXLOC,
                              win));
        MPI_OK(MPI_Accumulate(sd, NA, MPI_DOUBLE_INT, t, 1024 + NA * sizeof(dint_t), NA,
                              MPI_DOUBLE_INT, MPI_MINLOC, win));
    }
    fence();
    for (int i = 0; i < NA; i++) {
        int mx = -1, mxloc = 99999, mn = 1000, mnloc = 99999;
        for (int o = 0; o < nprocs; o++) {
            int v = ((o + i) / 2) % 2, loc = o * 10 + i;
            if (v > mx || (v == mx && loc < mxloc)) { mx = v; mxloc = loc; }
            if (v < mn || (v == mn && loc < mnloc)) { mn = v; mnloc = loc; }
        }
        CHECK(wi[i].v == mx && wi[i].loc == mxloc, "MPI_MAXLOC on MPI_2INT: element %d = (%d, "
              "%d), expected (%d, %d)", i, wi[i].v, wi[i].loc, mx, mxloc);
        CHECK(wi[NA + i].v == mn && wi[NA + i].loc == mnloc, "MPI_MINLOC on MPI_2INT: element "
              "%d = (%d, %d), expected (%d, %d)", i, wi[NA + i].v, wi[NA + i].loc, mn, mnloc);
        CHECK(wd[i].v == mx + 0.5 && wd[i].loc == mxloc, "MPI_MAXLOC on MPI_DOUBLE_INT: element "
              "%d = (%g, %d), expected (%g, %d)", i, wd[i].v, wd[i].loc, mx + 0.5, mxloc);
        CHECK(wd[NA + i].v == mn + 0.5 && wd[NA + i].loc == mnloc, "MPI_MINLOC on "
              "MPI_DOUBLE_INT: element %d = (%g, %d), expected (%g, %d)", i, wd[NA + i].v,
              wd[NA + i].loc, mn + 0.5, mnloc);
    }
}

/* 4. derived datatypes */
static void derived(void)
{
    int *w = (int *)wbuf;
    const int NV = 5, SENT = -424242;
    MPI_Datatype vec3, idx_t, ovec, vec2int, dvec, didx;
    /* target vector: NV ints 3 apart, at int 0 */
    MPI_OK(MPI_Type_vector(NV, 1, 3, MPI_INT, &vec3));
    MPI_OK(MPI_Type_commit(&vec3));
    /* target indexed: 2 @ 0, 1 @ 5, 3 @ 9 (6 ints), at int 100; origin vector(3, 2, 4) */
    int bl[3] = {2, 1, 3}, dp[3] = {0, 5, 9};
    MPI_OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &idx_t));
    MPI_OK(MPI_Type_commit(&idx_t));
    MPI_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &ovec));
    MPI_OK(MPI_Type_commit(&ovec));
    /* vector of MPI_2INT: 3 pairs, every other pair, at byte 800 */
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_2INT, &vec2int));
    MPI_OK(MPI_Type_commit(&vec2int));
    /* REPLACE: origin indexed doubles (1 @ 0, 2 @ 3), target vector(3, 1, 2) of doubles,
     * origin o writes into its own 6-double region at byte 1024 + o * 48 */
    int dbl[2] = {1, 2}, ddp[2] = {0, 3};
    MPI_OK(MPI_Type_indexed(2, dbl, ddp, MPI_DOUBLE, &didx));
    MPI_OK(MPI_Type_commit(&didx));
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &dvec));
    MPI_OK(MPI_Type_commit(&dvec));
    CHECK(1024 + nprocs * 48 <= WBYTES, "window too small");

    int2_t *w2 = (int2_t *)(wbuf + 800);
    double *wd = (double *)(wbuf + 1024);
    fence();
    for (int i = 0; i < 200; i++)
        w[i] = SENT;
    for (int i = 0; i < 6; i++)
        w2[i] = (int2_t){-5, -5};
    for (int i = 0; i < 6 * nprocs; i++)
        wd[i] = -1.0;
    fence();
    int csrc[NV], vsrc[12];
    for (int i = 0; i < NV; i++)
        csrc[i] = (rank + 1) * (i + 1);
    for (int i = 0; i < 12; i++)
        vsrc[i] = (i % 4 < 2) ? rank * 100 + i : -99999; /* gaps must not be sent */
    int2_t p2[3];
    for (int i = 0; i < 3; i++)
        p2[i] = (int2_t){(rank * 5 + i) % 4, rank};
    double dsrc[5] = {rank + 0.25, -1e9, -1e9, rank + 0.5, rank + 0.75};
    for (int k = 0; k < nprocs; k++) {
        int t = (rank + k) % nprocs;
        MPI_OK(MPI_Accumulate(csrc, NV, MPI_INT, t, 0, 1, vec3, MPI_SUM, win));
        MPI_OK(MPI_Accumulate(vsrc, 1, ovec, t, 100 * sizeof(int), 1, idx_t, MPI_SUM, win));
        MPI_OK(MPI_Accumulate(p2, 3, MPI_2INT, t, 800, 1, vec2int, MPI_MAXLOC, win));
        MPI_OK(MPI_Accumulate(dsrc, 1, didx, t, 1024 + rank * 48, 1, dvec, MPI_REPLACE, win));
    }
    fence();
    /* vector target */
    for (int i = 0; i < 100; i++) {
        int e = SENT;
        if (i % 3 == 0 && i / 3 < NV) {
            e = SENT;
            for (int o = 0; o < nprocs; o++)
                e += (o + 1) * (i / 3 + 1);
        }
        CHECK(w[i] == e, "MPI_SUM contiguous origin -> vector target: int %d = %d, expected %d",
              i, w[i], e);
    }
    /* indexed target: element k of the type signature sits at target int 100 + tpos[k],
     * and comes from origin int opos[k] */
    int tpos[6] = {0, 1, 5, 9, 10, 11}, opos[6] = {0, 1, 4, 5, 8, 9};
    for (int i = 100; i < 200; i++) {
        int e = SENT;
        for (int k = 0; k < 6; k++)
            if (i - 100 == tpos[k])
                for (int o = 0; o < nprocs; o++)
                    e += o * 100 + opos[k];
        CHECK(w[i] == e, "MPI_SUM vector origin -> indexed target: int %d = %d, expected %d",
              i - 100, w[i], e);
    }
    /* vector of MPI_2INT, MAXLOC: pairs 0, 2, 4 written */
    for (int i = 0; i < 6; i++) {
        int2_t e = {-5, -5};
        if (i % 2 == 0)
            for (int o = 0; o < nprocs; o++) {
                int v = (o * 5 + i / 2) % 4;
                if (v > e.v || (v == e.v && o < e.loc)) e = (int2_t){v, o};
            }
        CHECK(w2[i].v == e.v && w2[i].loc == e.loc, "MPI_MAXLOC vector of MPI_2INT: pair %d = "
              "(%d, %d), expected (%d, %d)", i, w2[i].v, w2[i].loc, e.v, e.loc);
    }
    /* REPLACE, indexed origin -> vector target, one region per origin */
    for (int o = 0; o < nprocs; o++)
        for (int i = 0; i < 6; i++) {
            double e = -1.0;
            if (i % 2 == 0)
                e = o + 0.25 * (i / 2 + 1);
            CHECK(wd[o * 6 + i] == e, "MPI_REPLACE indexed origin -> vector target: region of "
                  "rank %d double %d = %g, expected %g", o, i, wd[o * 6 + i], e);
        }
    MPI_Type_free(&vec3);
    MPI_Type_free(&idx_t);
    MPI_Type_free(&ovec);
    MPI_Type_free(&vec2int);
    MPI_Type_free(&didx);
    MPI_Type_free(&dvec);
}

/* 4b. Derived types on one side, the same elements under another name on the other: a
 * derived type knows its items by representation (MPICH accepts these too) */
static void named_elements(void)
{
    MPI_Datatype two_integer, two_ll;
    MPI_OK(MPI_Type_contiguous(2, MPI_INTEGER, &two_integer));
    MPI_OK(MPI_Type_commit(&two_integer));
    MPI_OK(MPI_Type_contiguous(2, MPI_LONG_LONG, &two_ll));
    MPI_OK(MPI_Type_commit(&two_ll));
    memset(wbuf, 0, 64);
    fence();
    int o[2] = {rank + 1, 10 * (rank + 1)};
    long long l[2] = {rank + 1, 100LL * (rank + 1)};
    for (int t = 0; t < nprocs; t++) {
        /* origin contiguous MPI_INTEGERs, target MPI_INTEGER at byte 0 */
        MPI_OK(MPI_Accumulate(o, 1, two_integer, t, 0, 2, MPI_INTEGER, MPI_SUM, win));
        /* origin MPI_LONG_LONG, target contiguous MPI_LONG_LONGs at byte 16 */
        MPI_OK(MPI_Accumulate(l, 2, MPI_LONG_LONG, t, 16, 1, two_ll, MPI_SUM, win));
    }
    fence();
    int s = nprocs * (nprocs + 1) / 2;
    int *wi = (int *)wbuf;
    long long *wl = (long long *)(wbuf + 16);
    CHECK(wi[0] == s && wi[1] == 10 * s, "contiguous MPI_INTEGER origin onto MPI_INTEGER: %d %d, "
          "expected %d %d", wi[0], wi[1], s, 10 * s);
    CHECK(wl[0] == s && wl[1] == 100LL * s, "MPI_LONG_LONG origin onto contiguous MPI_LONG_LONG: "
          "%lld %lld, expected %d %lld", wl[0], wl[1], s, 100LL * s);
    fence();
    MPI_Type_free(&two_integer);
    MPI_Type_free(&two_ll);
}

/* 5. MPI_REPLACE on the same elements from everyone */
static void replace_same(void)
{
    long *w = (long *)wbuf, src[4];
    fence();
    for (int i = 0; i < 4; i++)
        w[i] = -1;
    fence();
    for (int i = 0; i < 4; i++)
        src[i] = (rank + 1) * 1000L + i;
    for (int k = 0; k < nprocs; k++)
        MPI_OK(MPI_Accumulate(src, 4, MPI_LONG, (rank + k) % nprocs, 0, 4, MPI_LONG,
                              MPI_REPLACE, win));
    fence();
    for (int i = 0; i < 4; i++) {
        long v = w[i];
        CHECK(v % 1000 == i && v / 1000 >= 1 && v / 1000 <= nprocs,
              "MPI_REPLACE from all ranks: element %d = %ld, not any origin's value", i, v);
    }
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* 6. MPI_Get_accumulate */
static void get_accumulate(void)
{
    long *w = (long *)wbuf;
    long *res = tu_malloc((size_t)nprocs * 3 * sizeof(long));
    long *all = tu_malloc((size_t)nprocs * 3 * sizeof(long));
    long ones[3] = {1, 1, 1}, dummy[3] = {0, 0, 0};
    /* SUM returning old values: 3 longs at long 0; init 10, 20, 30 */
    fence();
    for (int j = 0; j < 3; j++)
        w[j] = 10 * (j + 1);
    w[3] = 555;           /* swap target */
    fence();
    for (int k = 0; k < nprocs; k++) {
        int t = (rank + k) % nprocs;
        MPI_OK(MPI_Get_accumulate(ones, 3, MPI_LONG, &res[t * 3], 3, MPI_LONG, t, 0, 3,
                                  MPI_LONG, MPI_SUM, win));
    }
    fence();
    for (int t = 0; t < nprocs; t++)
        MPI_OK(MPI_Gather(&res[t * 3], 3, MPI_LONG, all, 3, MPI_LONG, t, MPI_COMM_WORLD));
    for (int j = 0; j < 3; j++) {
        long col[64];
        for (int o = 0; o < nprocs; o++)
            col[o] = all[o * 3 + j];
        qsort(col, nprocs, sizeof(long), cmp_long);
        for (int o = 0; o < nprocs; o++)
            CHECK(col[o] == 10 * (j + 1) + o, "MPI_Get_accumulate(MPI_SUM): sorted old values "
                  "of element %d: [%d] = %ld, expected %d", j, o, col[o], 10 * (j + 1) + o);
        CHECK(w[j] == 10 * (j + 1) + nprocs, "MPI_Get_accumulate(MPI_SUM): element %d = %ld, "
              "expected %d", j, w[j], 10 * (j + 1) + nprocs);
    }
    /* NO_OP: atomic read, target unchanged; REPLACE: atomic swap on long 3 */
    long got[64 * 3];
    long mine = 1000 + rank;
    for (int k = 0; k < nprocs; k++) {
        int t = (rank + k) % nprocs;
        MPI_OK(MPI_Get_accumulate(dummy, 3, MPI_LONG, &got[t * 3], 3, MPI_LONG, t, 0, 3,
                                  MPI_LONG, MPI_NO_OP, win));
    }
    fence();
    for (int t = 0; t < nprocs; t++)
        for (int j = 0; j < 3; j++)
            CHECK(got[t * 3 + j] == 10 * (j + 1) + nprocs, "MPI_Get_accumulate(MPI_NO_OP) from "
                  "rank %d element %d = %ld, expected %d", t, j, got[t * 3 + j],
                  10 * (j + 1) + nprocs);
    for (int j = 0; j < 3; j++)
        CHECK(w[j] == 10 * (j + 1) + nprocs, "MPI_NO_OP changed element %d to %ld", j, w[j]);
    for (int k = 0; k < nprocs; k++) {
        int t = (rank + k) % nprocs;
        MPI_OK(MPI_Get_accumulate(&mine, 1, MPI_LONG, &res[t], 1, MPI_LONG, t, 3 * sizeof(long),
                                  1, MPI_LONG, MPI_REPLACE, win));
    }
    fence();
    for (int t = 0; t < nprocs; t++)
        MPI_OK(MPI_Gather(&res[t], 1, MPI_LONG, all, 1, MPI_LONG, t, MPI_COMM_WORLD));
    all[nprocs] = w[3];
    qsort(all, nprocs + 1, sizeof(long), cmp_long);
    /* {555, 1000, 1001, ..., 1000 + size - 1} exactly */
    CHECK(all[0] == 555, "swap chain lost the initial value (smallest is %ld)", all[0]);
    for (int o = 1; o <= nprocs; o++)
        CHECK(all[o] == 1000 + o - 1, "MPI_Get_accumulate(MPI_REPLACE) swap chain: sorted "
              "value [%d] = %ld, expected %d", o, all[o], 1000 + o - 1);
    free(res);
    free(all);
}

/* 7. ordering within one lock epoch, one origin -> one target, own slot */
#define K 20
static void ordering(void)
{
    int t = (rank + 1) % nprocs;
    MPI_Aint slot = 2048 + rank * 16; /* a long and an int per origin */
    long seq[K + 1], res[K + 1], fo[K];
    long dummy = 0;
    /* end the fence epochs: no RMA follows this fence */
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    for (int i = 1; i <= K; i++) {
        seq[i] = i;
        res[i] = -1;
        MPI_OK(MPI_Accumulate(&seq[i], 1, MPI_LONG, t, slot, 1, MPI_LONG, MPI_REPLACE, win));
        MPI_OK(MPI_Get_accumulate(&dummy, 1, MPI_LONG, &res[i], 1, MPI_LONG, t, slot, 1,
                                  MPI_LONG, MPI_NO_OP, win));
    }
    MPI_OK(MPI_Win_flush(t, win));
    for (int i = 1; i <= K; i++)
        CHECK(res[i] == i, "ordering: MPI_Get_accumulate(MPI_NO_OP) after MPI_Accumulate("
              "MPI_REPLACE, %d) returned %ld (reads not ordered after writes)", i, res[i]);
    /* Fetch_and_op REPLACE chain: each returns its predecessor */
    long nv[K];
    for (int i = 0; i < K; i++) {
        nv[i] = 100 + i;
        MPI_OK(MPI_Fetch_and_op(&nv[i], &fo[i], MPI_LONG, t, slot, MPI_REPLACE, win));
    }
    MPI_OK(MPI_Win_flush(t, win));
    for (int i = 0; i < K; i++)
        CHECK(fo[i] == (i == 0 ? K : 100 + i - 1), "ordering: MPI_Fetch_and_op(MPI_REPLACE, "
              "%d) returned %ld, expected %d", 100 + i, fo[i], i == 0 ? K : 100 + i - 1);
    /* Accumulate(SUM) then Fetch_and_op(NO_OP), on an int */
    int one = 1, ires[K], idummy = 0, zero = 0;
    MPI_OK(MPI_Accumulate(&zero, 1, MPI_INT, t, slot + 8, 1, MPI_INT, MPI_REPLACE, win));
    for (int i = 0; i < K; i++) {
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, t, slot + 8, 1, MPI_INT, MPI_SUM, win));
        MPI_OK(MPI_Fetch_and_op(&idummy, &ires[i], MPI_INT, t, slot + 8, MPI_NO_OP, win));
    }
    MPI_OK(MPI_Win_unlock(t, win));
    for (int i = 0; i < K; i++)
        CHECK(ires[i] == i + 1, "ordering: MPI_Fetch_and_op(MPI_NO_OP) after %d MPI_SUM "
              "accumulates returned %d", i + 1, ires[i]);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* 8. Fetch_and_op with SUM, NO_OP, REPLACE on each basic type, own slot at the neighbour */
#define FOP_TEST(NAME, CT, MT, A, B)                                                      \
    static void fop_##NAME(int t, MPI_Aint slot)                                          \
    {                                                                                     \
        CT init = (A), add = (B), r1 = 0, r2 = 0, r3 = 0, r4 = 0, dummy = 0;              \
        CT repl = (CT)(A) - (CT)(B);                                                      \
        MPI_OK(MPI_Fetch_and_op(&init, &r1, MT, t, slot, MPI_REPLACE, win));              \
        MPI_OK(MPI_Fetch_and_op(&add, &r2, MT, t, slot, MPI_SUM, win));                   \
        MPI_OK(MPI_Fetch_and_op(&dummy, &r3, MT, t, slot, MPI_NO_OP, win));               \
        MPI_OK(MPI_Fetch_and_op(&repl, &r4, MT, t, slot, MPI_REPLACE, win));              \
        MPI_OK(MPI_Win_flush(t, win));                                                    \
        CT want3 = init + add;                                                            \
        CHECK(r2 == init, "MPI_Fetch_and_op(MPI_SUM) on " #MT " returned %.21Lg, "        \
              "expected %.21Lg", PR(r2), PR(init));                                       \
        CHECK(r3 == want3, "MPI_Fetch_and_op(MPI_NO_OP) on " #MT " returned %.21Lg, "     \
              "expected %.21Lg", PR(r3), PR(want3));                                      \
        CHECK(r4 == want3, "MPI_Fetch_and_op(MPI_REPLACE) on " #MT " returned %.21Lg, "   \
              "expected %.21Lg", PR(r4), PR(want3));                                      \
        CT fin = 0;                                                                       \
        MPI_OK(MPI_Get(&fin, 1, MT, t, slot, 1, MT, win));                                \
        MPI_OK(MPI_Win_flush(t, win));                                                    \
        CHECK(fin == repl, "MPI_Fetch_and_op(MPI_REPLACE) on " #MT " left %.21Lg, "       \
              "expected %.21Lg", PR(fin), PR(repl));                                      \
        (void)r1;                                                                         \
    }
FOP_TEST(int, int, MPI_INT, -7, 123456)
FOP_TEST(long, long, MPI_LONG, (1L << 55) + 3, (1L << 54) + 1)
FOP_TEST(double, double, MPI_DOUBLE, 0.125, 1e10)
FOP_TEST(float, float, MPI_FLOAT, 2.5f, -0.75f)
FOP_TEST(ull, unsigned long long, MPI_UNSIGNED_LONG_LONG, ULLONG_MAX - 1ULL, 3ULL)
FOP_TEST(uint, unsigned, MPI_UNSIGNED, UINT_MAX - 1u, 5u)
FOP_TEST(i64, int64_t, MPI_INT64_T, -((int64_t)1 << 60), ((int64_t)1 << 59) + 7)
FOP_TEST(aint, MPI_Aint, MPI_AINT, (MPI_Aint)1 << 40, -3)
FOP_TEST(short, short, MPI_SHORT, -300, 77)

static void fetch_and_op(void)
{
    int t = (rank + nprocs - 1) % nprocs;
    MPI_Aint slot = 3072 + rank * 16;
    MPI_OK(MPI_Win_lock_all(0, win));
    fop_int(t, slot);
    fop_long(t, slot);
    fop_double(t, slot);
    fop_float(t, slot);
    fop_ull(t, slot);
    fop_uint(t, slot);
    fop_i64(t, slot);
    fop_aint(t, slot);
    fop_short(t, slot);
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* 10. runs at an odd byte offset: RUN_OFF in the window and in the origin buffers. */
#define RUN_OFF 3
#define RUN_GUARD 0xA5

#define RUN_TEST(NAME, CT, MT, INIT, VAL)                                                   \
    static void run_##NAME(int n)                                                         \
    {                                                                                     \
        static unsigned char sbuf[RUN_OFF + 300 * 8], rbuf[RUN_OFF + 300 * 8];             \
        size_t len = (size_t)n * sizeof(CT);                                              \
        CT v, e;                                                                          \
        int t = (rank + 1) % nprocs, from = (rank + nprocs - 1) % nprocs;                  \
        CHECK(RUN_OFF + len + 8 <= WBYTES && n <= 300, "run too long");                   \
        fence();                                                                          \
        memset(wbuf, RUN_GUARD, RUN_OFF + len + 8);                                       \
        for (int i = 0; i < n; i++) {                                                     \
            v = INIT(i);                                                                  \
            memcpy(wbuf + RUN_OFF + i * sizeof(CT), &v, sizeof(CT));                      \
        }                                                                                 \
        fence();                                                                          \
        for (int i = 0; i < n; i++) {                                                     \
            v = VAL(rank, i);                                                             \
            memcpy(sbuf + RUN_OFF + i * sizeof(CT), &v, sizeof(CT));                      \
        }                                                                                 \
        for (int k = 0; k < nprocs; k++)                                                  \
            MPI_OK(MPI_Accumulate(sbuf + RUN_OFF, n, MT, (rank + k) % nprocs, RUN_OFF, n, \
                                  MT, MPI_SUM, win));                                     \
        fence();                                                                          \
        for (int i = 0; i < n; i++) {                                                     \
            e = INIT(i);                                                                  \
            for (int o = 0; o < nprocs; o++)                                              \
                e += VAL(o, i);                                                           \
            memcpy(&v, wbuf + RUN_OFF + i * sizeof(CT), sizeof(CT));                      \
            CHECK(v == e, "%d-element MPI_SUM on " #MT ": element %d = %.21Lg, expected "   \
                  "%.21Lg", n, i, PR(v), PR(e));                                          \
        }                                                                                 \
        for (size_t b = 0; b < RUN_OFF + len + 8; b += b + 1 == RUN_OFF ? len + 1 : 1)    \
            CHECK(wbuf[b] == RUN_GUARD, "%d-element MPI_SUM on " #MT ": byte %zu outside " \
                  "the run changed", n, b);                                               \
        fence(); /* checked before anyone writes again */                                 \
        /* REPLACE, then NO_OP, then SUM from one origin per target, each returning the   \
         * values before it. */                                                           \
        MPI_Op ops[3] = {MPI_REPLACE, MPI_NO_OP, MPI_SUM};                                \
        for (int s = 0; s < 3; s++) {                                                     \
            for (int i = 0; i < n; i++) {                                                 \
                v = VAL(rank + 7 + s, i);                                                 \
                memcpy(sbuf + RUN_OFF + i * sizeof(CT), &v, sizeof(CT));                  \
            }                                                                             \
            memset(rbuf, 0, sizeof rbuf);                                                 \
            MPI_OK(MPI_Get_accumulate(sbuf + RUN_OFF, n, MT, rbuf + RUN_OFF, n, MT, t,    \
                                      RUN_OFF, n, MT, ops[s], win));                      \
            fence();                                                                      \
            for (int i = 0; i < n; i++) {                                                 \
                /* old value at target t: the sum, then from-origin's REPLACE value */    \
                CT old = INIT(i), now;                                                    \
                if (s == 0)                                                               \
                    for (int o = 0; o < nprocs; o++)                                      \
                        old += VAL(o, i);                                                 \
                else                                                                      \
                    old = VAL(rank + 7, i);                                               \
                memcpy(&v, rbuf + RUN_OFF + i * sizeof(CT), sizeof(CT));                  \
                CHECK(v == old, "%d-element MPI_Get_accumulate step %d on " #MT           \
                      ": returned element %d = %.21Lg, expected %.21Lg", n, s, i, PR(v),   \
                      PR(old));                                                           \
                now = VAL(from + 7, i);                                                   \
                if (s == 2)                                                               \
                    now += VAL(from + 7 + 2, i);                                          \
                memcpy(&v, wbuf + RUN_OFF + i * sizeof(CT), sizeof(CT));                  \
                CHECK(v == now, "%d-element MPI_Get_accumulate step %d on " #MT           \
                      ": element %d = %.21Lg, expected %.21Lg", n, s, i, PR(v), PR(now)); \
            }                                                                             \
            CHECK(rbuf[RUN_OFF - 1] == 0 && rbuf[RUN_OFF + len] == 0,                      \
                  "%d-element MPI_Get_accumulate on " #MT ": wrote outside the result", n); \
            fence();                                                                      \
        }                                                                                 \
    }

#define UI_INIT(i) (UINT_MAX - 3U + (unsigned)(i))
#define UI_VAL(o, i) ((unsigned)(o) * 7U + (unsigned)(i) * 3U + 1U)
#define LL_INIT(i) ((long long)(i) * -5LL + (1LL << 50))
#define LL_VAL(o, i) ((long long)(o + 1) * (1LL << 34) - (long long)(i))
#define C_INIT(i) ((char)((i) % 50 - 25))
#define C_VAL(o, i) ((char)(((o) + (i)) % 3 - 1))
#define UC_INIT(i) ((unsigned char)(250 + (i)))
#define UC_VAL(o, i) ((unsigned char)((o) * 5 + (i) * 3 + 1))
#define S_INIT(i) ((short)(-300 + (i)))
#define S_VAL(o, i) ((short)(((o) + 1) * 3 + (i) % 100))
RUN_TEST(char, char, MPI_CHAR, C_INIT, C_VAL)
RUN_TEST(uchar, unsigned char, MPI_UNSIGNED_CHAR, UC_INIT, UC_VAL)
RUN_TEST(short, short, MPI_SHORT, S_INIT, S_VAL)
RUN_TEST(int, int, MPI_INT, I_INIT, I_VAL)
RUN_TEST(unsigned, unsigned, MPI_UNSIGNED, UI_INIT, UI_VAL)
RUN_TEST(ll, long long, MPI_LONG_LONG, LL_INIT, LL_VAL)
RUN_TEST(ull, unsigned long long, MPI_UNSIGNED_LONG_LONG, U_INIT, U_VAL)
RUN_TEST(float, float, MPI_FLOAT, F_INIT, F_VAL)
RUN_TEST(double, double, MPI_DOUBLE, D_INIT, D_VAL)

static void runs(void)
{
    static const int counts[] = {2, 3, 15, 16, 17, 127, 128, 129, 300};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        run_char(counts[c]);
        run_uchar(counts[c]);
        run_short(counts[c]);
        run_int(counts[c]);
        run_unsigned(counts[c]);
        run_ll(counts[c]);
        run_ull(counts[c]);
        run_float(counts[c]);
        run_double(counts[c]);
    }
}

/* 9. a large accumulate onto rank 0 from everyone */
static void big(void)
{
    double *b = NULL, *src = tu_malloc(NBIG * sizeof(double));
    MPI_Win bw;
    MPI_Aint sz = rank == 0 ? NBIG * sizeof(double) : 0;
    MPI_OK(MPI_Win_allocate(sz, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &b, &bw));
    if (rank == 0)
        for (int i = 0; i < NBIG; i++)
            b[i] = i;
    MPI_OK(MPI_Win_fence(0, bw));
    for (int i = 0; i < NBIG; i++)
        src[i] = (double)((rank + 1) * (i % 1000));
    MPI_OK(MPI_Accumulate(src, NBIG, MPI_DOUBLE, 0, 0, NBIG, MPI_DOUBLE, MPI_SUM, bw));
    MPI_OK(MPI_Win_fence(0, bw));
    if (rank == 0) {
        double f = (double)nprocs * (nprocs + 1) / 2;
        for (int i = 0; i < NBIG; i++)
            CHECK(b[i] == i + f * (i % 1000), "large MPI_Accumulate: element %d = %g, expected "
                  "%g", i, b[i], i + f * (i % 1000));
    }
    MPI_OK(MPI_Win_free(&bw));
    free(src);
}

/* Zero-size accumulates move nothing, so an op that is not defined on the type is not an
 * error (mpi4py probes MPI_Get_accumulate this way: 0 MPI_BYTEs with MPI_SUM), nor are
 * origin and target types that differ when either side is empty: zero counts or a
 * zero-size derived type on one side (MPICH's rma/badrma); and MPI_NO_OP takes no origin
 * (MPICH's rma/atomic_get_*). */
static void zero_count(void)
{
    char none = 0, res = 0;
    int t = (rank + 1) % nprocs;
    MPI_Datatype empty;
    MPI_OK(MPI_Type_contiguous(0, MPI_INT, &empty));
    MPI_OK(MPI_Type_commit(&empty));
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Accumulate(&none, 0, MPI_BYTE, t, 0, 0, MPI_BYTE, MPI_SUM, win));
    MPI_OK(MPI_Get_accumulate(&none, 0, MPI_BYTE, &res, 0, MPI_BYTE, t, 0, 0,
                              MPI_BYTE, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(&none, 0, MPI_INT, t, 0, 0, MPI_DOUBLE, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(&none, 1, empty, t, 0, 0, MPI_DOUBLE, MPI_SUM, win));
    MPI_OK(MPI_Accumulate(&none, 0, MPI_DOUBLE, t, 0, 2, empty, MPI_SUM, win));
    MPI_OK(MPI_Get_accumulate(&none, 0, MPI_INT, &res, 0, MPI_DOUBLE, t, 0, 0, MPI_DOUBLE, MPI_SUM, win));
    MPI_OK(MPI_Get_accumulate(NULL, 2, empty, NULL, 1, empty, t, 0, 1, empty, MPI_SUM, win));
    MPI_OK(MPI_Put(NULL, 0, MPI_INT, t, 0, 0, MPI_DOUBLE, win));
    MPI_OK(MPI_Get(NULL, 1, empty, t, 0, 0, MPI_INT, win));
    /* MPI_NO_OP ignores the origin arguments: NULL and MPI_DATATYPE_NULL are fine. */
    MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, &res, 1, MPI_CHAR, t, 0, 1, MPI_CHAR, MPI_NO_OP, win));
    MPI_OK(MPI_Fetch_and_op(NULL, &res, MPI_CHAR, t, 0, MPI_NO_OP, win));
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Type_free(&empty));
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(nprocs <= 64, "at most 64 ranks");

    MPI_OK(MPI_Win_allocate(WBYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wbuf, &win));
    MPI_OK(MPI_Win_fence(0, win));

    sum_int();
    sum_long();
    sum_double();
    sum_float();
    sum_ull();
    sum_i64();

    int_op(MPI_MAX, "MPI_MAX");
    int_op(MPI_MIN, "MPI_MIN");
    int_op(MPI_PROD, "MPI_PROD");
    int_op(MPI_BAND, "MPI_BAND");
    int_op(MPI_BOR, "MPI_BOR");
    int_op(MPI_BXOR, "MPI_BXOR");
    int_op(MPI_LAND, "MPI_LAND");
    int_op(MPI_LOR, "MPI_LOR");
    int_op(MPI_LXOR, "MPI_LXOR");
    double_minmax();
    ull_bxor();

    loc_ops();
    derived();
    named_elements();
    replace_same();
    get_accumulate();
    ordering();
    fetch_and_op();
    zero_count();
    runs();
    MPI_OK(MPI_Win_free(&win));

    big();

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("rma_accumulate: OK (%d ranks)\n", nprocs);
    MPI_Finalize();
    return 0;
}
