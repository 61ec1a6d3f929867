/* osu_util.h: shared helpers of the OSU-style benchmark suite (benches/<name>.c).
 *
 * Written against mpi.h only (C99), so the same sources build with any MPI's
 * mpicc: OxMPI, MPICH, Open MPI.
 *
 * Conventions follow the OSU micro-benchmarks:
 *  - sizes double from the minimum to the maximum (default 1 B .. 16 MiB);
 *  - messages larger than LARGE_MESSAGE_SIZE (8 KiB) use the "large"
 *    iteration and warm-up counts;
 *  - default counts per kind of benchmark:
 *        latency:     10000 iterations / 100 warm-up,  large: 1000 / 10
 *        bandwidth:     100 iterations /  10 warm-up,  large:   20 / 2 (window 64)
 *        collectives:  1000 iterations / 200 warm-up,  large:  100 / 10
 *  - output: "# ..." header lines, then one line per size: the size left
 *    aligned in 10 columns, each value right aligned in 18 columns, 2 decimals.
 *
 * Common options (every benchmark):
 *   -i N         iterations for small messages (large messages: N/10, at least 1;
 *                bandwidth benchmarks: N/5)
 *   -x N         warm-up iterations for small messages (large: N/10, at least 1)
 *   -m [MIN:]MAX message sizes in bytes (MAX up to 1 GiB)
 *   -W N         window size (bandwidth benchmarks; default 64)
 *   --quick      smoke-test mode: few iterations and the sizes 1, 8, 64, 1K, 8K,
 *                64K, 1M only (explicit -i/-x/-m still apply)
 *   -h, --help   usage
 */
#ifndef OSU_UTIL_H
#define OSU_UTIL_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OSU_SUITE_VERSION "oxmpi-benches 1.0"
#define LARGE_MESSAGE_SIZE 8192L
#define DEFAULT_MAX_SIZE (16L * 1024 * 1024)
#define QUICK_MAX_SIZE (1L << 20)
#define MAX_ALLOWED_SIZE (1L << 30)
#define DEFAULT_WINDOW 64

enum osu_kind { OSU_LAT, OSU_BW, OSU_COLL, OSU_MATCH };

struct osu_options {
    long iterations;       /* small messages */
    long iterations_large; /* messages > LARGE_MESSAGE_SIZE */
    long skip;             /* warm-up, small messages */
    long skip_large;
    long min_size;
    long max_size;
    int window;
    int quick;
};

/* Sizes visited in --quick mode (the summary targets' sizes are among them). */
static const long osu_quick_sizes[] = {1, 8, 64, 1024, 8192, 65536, 1048576};
#define OSU_N_QUICK_SIZES ((int)(sizeof osu_quick_sizes / sizeof osu_quick_sizes[0]))

static inline int osu_rank(void)
{
    int rank = 0, initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

/* Print on rank 0 only. */
#define OSU_PRINTF0(...)                 \
    do {                                 \
        if (osu_rank() == 0) {           \
            printf(__VA_ARGS__);         \
            fflush(stdout);              \
        }                                \
    } while (0)

static inline void osu_usage(const char *prog, enum osu_kind kind)
{
    if (osu_rank() != 0)
        return;
    fprintf(stderr,
            "usage: %s [-i iterations] [-x warmup] [-m [min:]max]%s [--quick] [-h]\n"
            "  -i N          iterations for small messages (large ones use fewer)\n"
            "  -x N          warm-up iterations for small messages (-w is accepted too)\n"
            "  -m [MIN:]MAX  %s\n"
            "%s"
            "  --quick       few iterations and sizes (smoke tests)\n",
            prog, kind == OSU_BW ? " [-W window]" : "",
            kind == OSU_MATCH ? "queue depths (default 1:10000)"
                              : "message sizes in bytes (default 1:16777216)",
            kind == OSU_BW ? "  -W N          messages in flight per iteration (default 64)\n" : "");
}

static inline int osu_parse_long(const char *s, long *out)
{
    char *end;
    long v;
    if (!s || !*s)
        return -1;
    v = strtol(s, &end, 10);
    if (*end != '\0' || v < 0)
        return -1;
    *out = v;
    return 0;
}

/* Abort the whole job cleanly (all ranks parse the same arguments, so all
 * ranks reach this together). */
static inline void osu_exit(int code)
{
    MPI_Finalize();
    exit(code);
}

/* Fill *o with the defaults of `kind`, then apply the command line. On a bad
 * option prints usage and exits with status 2; on -h exits with status 0. */
static inline void osu_parse_options(int argc, char **argv, enum osu_kind kind, struct osu_options *o)
{
    long iters = -1, skip = -1, min_size = -1, max_size = -1, window = DEFAULT_WINDOW;
    int quick = 0;
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--quick") == 0) {
            quick = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            osu_usage(argv[0], kind);
            osu_exit(0);
        } else if ((strcmp(a, "-i") == 0 || strcmp(a, "-x") == 0 || strcmp(a, "-w") == 0 ||
                    strcmp(a, "-W") == 0) && i + 1 < argc) {
            long v;
            if (osu_parse_long(argv[i + 1], &v) != 0) {
                osu_usage(argv[0], kind);
                osu_exit(2);
            }
            if (a[1] == 'i')
                iters = v;
            else if (a[1] == 'W')
                window = v;
            else
                skip = v;
            i++;
        } else if (strcmp(a, "-m") == 0 && i + 1 < argc) {
            char buf[64];
            char *colon;
            strncpy(buf, argv[i + 1], sizeof buf - 1);
            buf[sizeof buf - 1] = '\0';
            colon = strchr(buf, ':');
            if (colon) {
                *colon = '\0';
                if (osu_parse_long(buf, &min_size) != 0 || osu_parse_long(colon + 1, &max_size) != 0) {
                    osu_usage(argv[0], kind);
                    osu_exit(2);
                }
            } else if (osu_parse_long(buf, &max_size) != 0) {
                osu_usage(argv[0], kind);
                osu_exit(2);
            }
            i++;
        } else {
            if (osu_rank() == 0)
                fprintf(stderr, "%s: unknown or incomplete option '%s'\n", argv[0], a);
            osu_usage(argv[0], kind);
            osu_exit(2);
        }
    }

    switch (kind) {
    case OSU_LAT:
        o->iterations = 10000, o->skip = 100, o->iterations_large = 1000, o->skip_large = 10;
        break;
    case OSU_BW:
        o->iterations = 100, o->skip = 10, o->iterations_large = 20, o->skip_large = 2;
        break;
    case OSU_COLL:
        o->iterations = 1000, o->skip = 200, o->iterations_large = 100, o->skip_large = 10;
        break;
    case OSU_MATCH: /* repetitions of a whole queue of messages, scaled by depth in the program */
        o->iterations = 200, o->skip = 20, o->iterations_large = 200, o->skip_large = 20;
        break;
    }
    o->min_size = 1;
    o->max_size = kind == OSU_MATCH ? 10000 : DEFAULT_MAX_SIZE;
    o->window = (int)window;
    o->quick = quick;
    if (quick) {
        o->iterations = kind == OSU_LAT ? 100 : 10;
        o->iterations_large = kind == OSU_LAT ? 10 : 2;
        o->skip = 2;
        o->skip_large = 1;
        o->max_size = kind == OSU_MATCH ? 1000 : QUICK_MAX_SIZE;
    }
    if (iters >= 0) {
        long div = kind == OSU_BW ? 5 : 10;
        o->iterations = iters > 0 ? iters : 1;
        o->iterations_large = kind == OSU_MATCH ? o->iterations
                                                : (iters / div > 0 ? iters / div : 1);
    }
    if (skip >= 0) {
        o->skip = skip;
        o->skip_large = kind == OSU_MATCH ? skip : (skip / 10 > 0 ? skip / 10 : (skip > 0));
    }
    if (min_size >= 0)
        o->min_size = min_size;
    if (max_size >= 0)
        o->max_size = max_size;
    if (o->max_size > MAX_ALLOWED_SIZE || o->min_size > o->max_size || window < 1) {
        if (osu_rank() == 0)
            fprintf(stderr, "%s: bad size range %ld:%ld or window %ld\n", argv[0], o->min_size,
                    o->max_size, window);
        osu_exit(2);
    }
}

/* First size to measure, at least `floor_size` (e.g. 4 for float reductions). */
static inline long osu_first_size(const struct osu_options *o, long floor_size)
{
    long s = o->min_size > floor_size ? o->min_size : floor_size;
    if (o->quick) {
        int k;
        for (k = 0; k < OSU_N_QUICK_SIZES; k++)
            if (osu_quick_sizes[k] >= s)
                return osu_quick_sizes[k];
        return o->max_size + 1; /* nothing to do */
    }
    if (s == 0)
        return 0;
    return s;
}

static inline long osu_next_size(const struct osu_options *o, long s)
{
    if (o->quick) {
        int k;
        for (k = 0; k < OSU_N_QUICK_SIZES; k++)
            if (osu_quick_sizes[k] > s)
                return osu_quick_sizes[k];
        return o->max_size + 1;
    }
    return s == 0 ? 1 : 2 * s;
}

static inline long osu_iters(const struct osu_options *o, long size)
{
    return size > LARGE_MESSAGE_SIZE ? o->iterations_large : o->iterations;
}

static inline long osu_skip(const struct osu_options *o, long size)
{
    return size > LARGE_MESSAGE_SIZE ? o->skip_large : o->skip;
}

/* Zero-initialised buffer of n bytes (at least 1); aborts the job on failure. */
static inline void *osu_alloc(size_t n, char fill)
{
    void *p = malloc(n > 0 ? n : 1);
    if (!p) {
        fprintf(stderr, "rank %d: out of memory allocating %zu bytes\n", osu_rank(), n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(p, fill, n > 0 ? n : 1);
    return p;
}

/* Header: test name, suite version, MPI library (first line), then the
 * column titles, e.g. "# Size          Latency (us)". */
static inline void osu_print_header(const char *test_name, const char *columns)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0, nprocs = 0;
    if (osu_rank() != 0)
        return;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\r\n")] = '\0';
    for (char *p = lib; *p; p++)
        if (*p == '\t')
            *p = ' ';
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    printf("# OSU-style MPI %s Test (%s)\n", test_name, OSU_SUITE_VERSION);
    printf("# MPI library: %s\n", lib);
    printf("# Ranks: %d\n", nprocs);
    printf("%s\n", columns);
    fflush(stdout);
}

/* Every rank calls this; rank 0 reports and all ranks exit with status 2. */
static inline void osu_require_ranks(int nprocs, int needed, int even, const char *prog)
{
    if (nprocs < needed || (even && nprocs % 2 != 0)) {
        if (osu_rank() == 0)
            fprintf(stderr, "%s: needs %s%d ranks (got %d)\n", prog,
                    even ? "an even number of, at least " : "at least ", needed, nprocs);
        osu_exit(2);
    }
}

/* Fail the job if an MPI call returned an error (benchmarks run with
 * MPI_ERRORS_RETURN on MPI_COMM_WORLD so failures are reported, not hung). */
#define OSU_CHECK(call)                                                              \
    do {                                                                             \
        int osu_rc_ = (call);                                                        \
        if (osu_rc_ != MPI_SUCCESS) {                                                \
            char osu_msg_[MPI_MAX_ERROR_STRING];                                     \
            int osu_len_ = 0;                                                        \
            MPI_Error_string(osu_rc_, osu_msg_, &osu_len_);                          \
            fprintf(stderr, "rank %d: %s failed at %s:%d: %s\n", osu_rank(), #call,  \
                    __FILE__, __LINE__, osu_msg_);                                   \
            fflush(stderr);                                                          \
            MPI_Abort(MPI_COMM_WORLD, 3);                                            \
        }                                                                            \
    } while (0)

/* MPI_Init + error handler + options; returns rank and size. */
static inline void osu_init(int *argc, char ***argv, enum osu_kind kind, struct osu_options *o,
                     int *rank, int *nprocs)
{
    MPI_Init(argc, argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nprocs);
    osu_parse_options(*argc, *argv, kind, o);
}

/* Maximum of `v` over all ranks, at rank 0, with point-to-point messages
 * only (so point-to-point benchmarks do not depend on collectives). */
static inline double osu_max_at_root(double v)
{
    int rank, nprocs, r;
    double other, max = v;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (rank != 0) {
        OSU_CHECK(MPI_Send(&v, 1, MPI_DOUBLE, 0, 32000, MPI_COMM_WORLD));
        return v;
    }
    for (r = 1; r < nprocs; r++) {
        OSU_CHECK(MPI_Recv(&other, 1, MPI_DOUBLE, r, 32000, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (other > max)
            max = other;
    }
    return max;
}

/* Collective timing: per-rank average latency (us) -> min/avg/max over ranks. */
static inline void osu_coll_stats(double local_us, int nprocs, double *min_us, double *avg_us,
                           double *max_us)
{
    double sum = 0;
    OSU_CHECK(MPI_Reduce(&local_us, min_us, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD));
    OSU_CHECK(MPI_Reduce(&local_us, max_us, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    OSU_CHECK(MPI_Reduce(&local_us, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    *avg_us = sum / nprocs;
}

#define OSU_COLL_COLUMNS "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations"

static inline void osu_print_coll_line(long size, double avg, double min, double max, long iters)
{
    if (osu_rank() == 0) {
        printf("%-10ld%18.2f%18.2f%18.2f%12ld\n", size, avg, min, max, iters);
        fflush(stdout);
    }
}

/* ---- collective benchmark driver (osu_<collective> conventions) ----
 * For each size: MPI_Barrier, then iterations + warm-up rounds of
 *   t = MPI_Wtime(); <collective>; t_total += MPI_Wtime() - t; MPI_Barrier
 * (warm-up rounds untimed). Each rank's average goes through MPI_Reduce
 * (min, max, sum) to rank 0, which prints avg/min/max over ranks. */
struct osu_coll_ctx {
    long size;     /* bytes per rank (per peer for alltoall) */
    void *sbuf;
    void *rbuf;
    int rank;
    int nprocs;
};

typedef int (*osu_coll_fn)(const struct osu_coll_ctx *c);

/* sfactor/rfactor: buffer sizes in units of max_size; a negative factor means
 * "times the number of ranks". floor_size: smallest size (4 for float reductions). */
static inline int osu_coll_main(int argc, char **argv, const char *test_name, const char *prog,
                         long floor_size, int sfactor, int rfactor, osu_coll_fn fn)
{
    struct osu_options o;
    struct osu_coll_ctx c;
    osu_init(&argc, &argv, OSU_COLL, &o, &c.rank, &c.nprocs);
    osu_require_ranks(c.nprocs, 1, 0, prog);
    size_t sbytes = (size_t)o.max_size * (size_t)(sfactor < 0 ? -sfactor * c.nprocs : sfactor);
    size_t rbytes = (size_t)o.max_size * (size_t)(rfactor < 0 ? -rfactor * c.nprocs : rfactor);
    c.sbuf = osu_alloc(sbytes, 1);
    c.rbuf = osu_alloc(rbytes, 0);
    osu_print_header(test_name, OSU_COLL_COLUMNS);

    for (long size = osu_first_size(&o, floor_size); size <= o.max_size; size = osu_next_size(&o, size)) {
        long iters = osu_iters(&o, size), skip = osu_skip(&o, size);
        double total = 0, min_us, avg_us, max_us;
        c.size = size;
        OSU_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        for (long i = 0; i < iters + skip; i++) {
            double t = MPI_Wtime();
            OSU_CHECK(fn(&c));
            t = MPI_Wtime() - t;
            if (i >= skip)
                total += t;
            OSU_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        }
        osu_coll_stats(total * 1e6 / iters, c.nprocs, &min_us, &avg_us, &max_us);
        osu_print_coll_line(size, avg_us, min_us, max_us, iters);
    }
    free(c.sbuf);
    free(c.rbuf);
    MPI_Finalize();
    return 0;
}

#endif /* OSU_UTIL_H */
