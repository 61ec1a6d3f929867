/* rma_util.h: shared driver of the one-sided (RMA) benchmarks of the suite:
 * put_latency, get_latency, acc_latency, fop_latency, cas_latency, put_bw, get_bw.
 *
 * Methodology of the OSU micro-benchmarks' one-sided tests (osu_put_latency,
 * osu_get_bw, ...): exactly 2 ranks, rank 0 the origin, rank 1 the target;
 * for each size a new window is created (untimed) and freed; the default is
 * MPI_Win_allocate with MPI_Win_flush synchronisation.
 *
 * Options (besides those of osu_util.h: -i, -x, -m, -W, --quick):
 *   -s SYNC    flush (default), flush_local, lock, lock_all, fence, pscw
 *   -w WIN     allocate (default: MPI_Win_allocate), create (malloc +
 *              MPI_Win_create), dynamic (MPI_Win_create_dynamic + MPI_Win_attach,
 *              the target address exchanged with MPI_Sendrecv)
 * As in OSU, -w names the window flavor here (the warm-up count is -x).
 * Default sizes 1 B .. 4 MiB (OSU's one-sided maximum); above 8 KiB the
 * "large" iteration counts apply (latency 10000/100 -> 1000/10, bandwidth
 * 100/10 -> 20/2, window 64).
 *
 * Latency, per iteration (rank 0 timed; figure = time / iterations):
 *   flush        MPI_Win_lock(SHARED) once; op; MPI_Win_flush;  unlock at the end
 *   flush_local  as flush with MPI_Win_flush_local
 *   lock         MPI_Win_lock(SHARED); op; MPI_Win_unlock
 *   lock_all     MPI_Win_lock_all; op; MPI_Win_unlock_all
 * Ping-pong variants, both ranks take turns as origin (figure = time / iterations / 2):
 *   fence        rank 0: fence; op; fence; fence     rank 1: fence; fence; op; fence
 *   pscw         rank 0: start; op; complete; post; wait
 *                rank 1: post; wait; start; op; complete
 * Bandwidth, per iteration `window` ops of `size` bytes at consecutive
 * offsets (origin and target), then the synchronisation (flush, flush_local,
 * unlock, unlock_all; fence: rank 0 fence; ops; fence, rank 1 fence; fence;
 * pscw: rank 0 start; ops; complete, rank 1 post; wait); MB/s = 10^6 B/s.
 *
 * Output as the other benchmarks' (osu_util.h), except that latencies have
 * 3 decimals (shared-memory RMA operations take a few tens of ns).
 *
 * Windows get MPI_ERRORS_RETURN, so a failing call is reported by OSU_CHECK
 * (stderr: "rank N: <call> failed at <file>:<line>: <error string>") and the
 * job aborts with status 3 instead of hanging.
 */
#ifndef RMA_UTIL_H
#define RMA_UTIL_H

#include "osu_util.h"

#define RMA_DEFAULT_MAX_SIZE (4L * 1024 * 1024)

enum rma_sync { RMA_FLUSH, RMA_FLUSH_LOCAL, RMA_LOCK, RMA_LOCK_ALL, RMA_FENCE, RMA_PSCW, RMA_N_SYNC };
enum rma_flavor { RMA_WIN_ALLOCATE, RMA_WIN_CREATE, RMA_WIN_DYNAMIC, RMA_N_FLAVOR };

static const char *const rma_sync_names[RMA_N_SYNC] = {"flush", "flush_local", "lock",
                                                       "lock_all", "fence", "pscw"};
static const char *const rma_sync_calls[RMA_N_SYNC] = {
    "MPI_Win_flush", "MPI_Win_flush_local", "MPI_Win_lock/unlock",
    "MPI_Win_lock_all/unlock_all", "MPI_Win_fence", "MPI_Win_post/start/complete/wait"};
static const char *const rma_flavor_names[RMA_N_FLAVOR] = {"allocate", "create", "dynamic"};
static const char *const rma_flavor_calls[RMA_N_FLAVOR] = {"MPI_Win_allocate", "MPI_Win_create",
                                                           "MPI_Win_create_dynamic"};

struct rma_ctx {
    struct osu_options o;
    enum rma_sync sync;
    enum rma_flavor flavor;
    int rank;
    int nprocs;
    MPI_Group peer_group; /* the other rank (pscw) */
    /* per size */
    long size;            /* bytes per operation */
    int window;           /* operations per iteration (bandwidth), 1 for latencies */
    MPI_Win win;
    char *win_base;       /* this rank's window memory */
    MPI_Aint disp;        /* displacement of the peer's window memory (dynamic: its address) */
    char *obuf;           /* origin buffer: put/acc source, get destination, fop/cas operand */
    char *rbuf;           /* result buffer (fop, cas) */
    char *cbuf;           /* compare buffer (cas) */
};

/* One operation of `c->size` bytes to/from `target`, the j-th of an iteration
 * (bandwidth: offset j * size at origin and target). */
typedef int (*rma_op_fn)(const struct rma_ctx *c, int target, int j);

struct rma_bench {
    const char *test_name;   /* "Put Latency" */
    const char *prog;        /* "put_latency" */
    enum osu_kind kind;      /* OSU_LAT or OSU_BW */
    const char *datatype;    /* header line "# Datatype: ..." or NULL */
    long floor_size;         /* smallest size (element size) */
    long fixed_size;         /* > 0: this size only (fop, cas) */
    rma_op_fn op;
    void (*fill)(struct rma_ctx *c); /* initialise obuf/rbuf/cbuf (NULL: bytes) */
};

static inline void rma_usage(const char *prog, const struct rma_bench *b)
{
    if (osu_rank() != 0)
        return;
    fprintf(stderr,
            "usage: %s [-s sync] [-w win] [-i iterations] [-x warmup]%s%s [--quick] [-h]\n"
            "  -s SYNC       flush (default), flush_local, lock, lock_all, fence, pscw\n"
            "  -w WIN        allocate (default, MPI_Win_allocate), create (MPI_Win_create),\n"
            "                dynamic (MPI_Win_create_dynamic + MPI_Win_attach)\n"
            "  -i N          iterations for small messages (large ones use fewer)\n"
            "  -x N          warm-up iterations for small messages\n"
            "%s%s"
            "  --quick       few iterations and sizes (smoke tests)\n"
            "Exactly 2 ranks: rank 0 is the origin, rank 1 the target.\n",
            prog, b->fixed_size > 0 ? "" : " [-m [min:]max]", b->kind == OSU_BW ? " [-W window]" : "",
            b->fixed_size > 0 ? "" : "  -m [MIN:]MAX  message sizes in bytes (default 1:4194304)\n",
            b->kind == OSU_BW ? "  -W N          operations per synchronisation (default 64)\n" : "");
}

static inline int rma_lookup(const char *s, const char *const *names, int n)
{
    for (int k = 0; k < n; k++)
        if (strcmp(s, names[k]) == 0)
            return k;
    return -1;
}

/* MPI_Init, MPI_ERRORS_RETURN, -s/-w (removed from argv), then the common options. */
static inline void rma_init(int *argc, char ***argv, const struct rma_bench *b, struct rma_ctx *c)
{
    char **av = *argv;
    int n = 0, have_m = 0;
    memset(c, 0, sizeof *c);
    c->sync = RMA_FLUSH;
    c->flavor = RMA_WIN_ALLOCATE;
    c->peer_group = MPI_GROUP_NULL;
    MPI_Init(argc, argv);
    av = *argv;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->nprocs);
    for (int i = 0; i < *argc; i++) {
        const char *a = av[i];
        if (i > 0 && (strcmp(a, "-s") == 0 || strcmp(a, "-w") == 0)) {
            int k = i + 1 < *argc ? (a[1] == 's' ? rma_lookup(av[i + 1], rma_sync_names, RMA_N_SYNC)
                                                 : rma_lookup(av[i + 1], rma_flavor_names, RMA_N_FLAVOR))
                                  : -1;
            if (k < 0) {
                if (c->rank == 0)
                    fprintf(stderr, "%s: bad or missing value for %s\n", b->prog, a);
                rma_usage(av[0], b);
                osu_exit(2);
            }
            if (a[1] == 's')
                c->sync = (enum rma_sync)k;
            else
                c->flavor = (enum rma_flavor)k;
            i++;
            continue;
        }
        if (i > 0 && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)) {
            rma_usage(av[0], b);
            osu_exit(0);
        }
        if (strcmp(a, "-m") == 0)
            have_m = 1;
        av[n++] = av[i];
    }
    osu_parse_options(n, av, b->kind, &c->o);
    if (!have_m && !c->o.quick)
        c->o.max_size = RMA_DEFAULT_MAX_SIZE;
    if (c->nprocs != 2) {
        if (c->rank == 0)
            fprintf(stderr, "%s: needs exactly 2 ranks (got %d)\n", b->prog, c->nprocs);
        osu_exit(2);
    }
    if (c->sync == RMA_PSCW) {
        MPI_Group world;
        int peer = 1 - c->rank;
        OSU_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
        OSU_CHECK(MPI_Group_incl(world, 1, &peer, &c->peer_group));
        OSU_CHECK(MPI_Group_free(&world));
    }
}

/* Window of `bytes` (zeroed) and origin buffers for one size; untimed. */
static inline void rma_window_create(struct rma_ctx *c, const struct rma_bench *b, size_t bytes)
{
    int peer = 1 - c->rank;
    size_t n = bytes > 0 ? bytes : 1;
    MPI_Aint sz = (MPI_Aint)n;
    c->disp = 0;
    switch (c->flavor) {
    case RMA_WIN_ALLOCATE:
        OSU_CHECK(MPI_Win_allocate(sz, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c->win_base, &c->win));
        break;
    case RMA_WIN_CREATE:
        c->win_base = osu_alloc(n, 0);
        OSU_CHECK(MPI_Win_create(c->win_base, sz, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &c->win));
        break;
    default: {
        MPI_Aint mine;
        c->win_base = osu_alloc(n, 0);
        OSU_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &c->win));
        OSU_CHECK(MPI_Win_set_errhandler(c->win, MPI_ERRORS_RETURN)); /* before attach */
        OSU_CHECK(MPI_Win_attach(c->win, c->win_base, sz));
        OSU_CHECK(MPI_Get_address(c->win_base, &mine));
        OSU_CHECK(MPI_Sendrecv(&mine, 1, MPI_AINT, peer, 31000, &c->disp, 1, MPI_AINT, peer, 31000,
                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        break;
    }
    }
    OSU_CHECK(MPI_Win_set_errhandler(c->win, MPI_ERRORS_RETURN));
    /* Zero (and fault in) the window memory: uninitialised doubles could be
     * denormals or NaNs, which would slow MPI_Accumulate down. No RMA epoch is
     * open and the barrier before the timed loop orders this store. */
    memset(c->win_base, 0, n);
    c->obuf = osu_alloc(n, 'a');
    c->rbuf = osu_alloc(64, 0); /* fop/cas: one element */
    c->cbuf = osu_alloc(64, 0);
    if (b->fill)
        b->fill(c);
}

static inline void rma_window_free(struct rma_ctx *c)
{
    if (c->flavor == RMA_WIN_DYNAMIC)
        OSU_CHECK(MPI_Win_detach(c->win, c->win_base));
    OSU_CHECK(MPI_Win_free(&c->win));
    if (c->flavor != RMA_WIN_ALLOCATE)
        free(c->win_base);
    free(c->obuf);
    free(c->rbuf);
    free(c->cbuf);
    c->win_base = c->obuf = c->rbuf = c->cbuf = NULL;
}

/* One latency measurement (us, meaningful on rank 0). */
static inline double rma_latency(struct rma_ctx *c, const struct rma_bench *b, long iters, long skip)
{
    double t0 = 0, t1 = 0, factor = 1.0;
    MPI_Win win = c->win;
    OSU_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    switch (c->sync) {
    case RMA_FLUSH:
    case RMA_FLUSH_LOCAL:
        if (c->rank == 0) {
            OSU_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
            for (long i = 0; i < iters + skip; i++) {
                if (i == skip)
                    t0 = MPI_Wtime();
                OSU_CHECK(b->op(c, 1, 0));
                if (c->sync == RMA_FLUSH)
                    OSU_CHECK(MPI_Win_flush(1, win));
                else
                    OSU_CHECK(MPI_Win_flush_local(1, win));
            }
            t1 = MPI_Wtime();
            OSU_CHECK(MPI_Win_unlock(1, win));
        }
        break;
    case RMA_LOCK:
        if (c->rank == 0) {
            for (long i = 0; i < iters + skip; i++) {
                if (i == skip)
                    t0 = MPI_Wtime();
                OSU_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
                OSU_CHECK(b->op(c, 1, 0));
                OSU_CHECK(MPI_Win_unlock(1, win));
            }
            t1 = MPI_Wtime();
        }
        break;
    case RMA_LOCK_ALL:
        if (c->rank == 0) {
            for (long i = 0; i < iters + skip; i++) {
                if (i == skip)
                    t0 = MPI_Wtime();
                OSU_CHECK(MPI_Win_lock_all(0, win));
                OSU_CHECK(b->op(c, 1, 0));
                OSU_CHECK(MPI_Win_unlock_all(win));
            }
            t1 = MPI_Wtime();
        }
        break;
    case RMA_FENCE:
        factor = 0.5;
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip)
                t0 = MPI_Wtime();
            if (c->rank == 0) {
                OSU_CHECK(MPI_Win_fence(0, win));
                OSU_CHECK(b->op(c, 1, 0));
                OSU_CHECK(MPI_Win_fence(0, win));
                OSU_CHECK(MPI_Win_fence(0, win));
            } else {
                OSU_CHECK(MPI_Win_fence(0, win));
                OSU_CHECK(MPI_Win_fence(0, win));
                OSU_CHECK(b->op(c, 0, 0));
                OSU_CHECK(MPI_Win_fence(0, win));
            }
        }
        t1 = MPI_Wtime();
        break;
    default: /* RMA_PSCW */
        factor = 0.5;
        for (long i = 0; i < iters + skip; i++) {
            if (c->rank == 0) {
                OSU_CHECK(MPI_Win_start(c->peer_group, 0, win));
                if (i == skip)
                    t0 = MPI_Wtime();
                OSU_CHECK(b->op(c, 1, 0));
                OSU_CHECK(MPI_Win_complete(win));
                OSU_CHECK(MPI_Win_post(c->peer_group, 0, win));
                OSU_CHECK(MPI_Win_wait(win));
            } else {
                OSU_CHECK(MPI_Win_post(c->peer_group, 0, win));
                OSU_CHECK(MPI_Win_wait(win));
                OSU_CHECK(MPI_Win_start(c->peer_group, 0, win));
                OSU_CHECK(b->op(c, 0, 0));
                OSU_CHECK(MPI_Win_complete(win));
            }
        }
        t1 = MPI_Wtime();
        break;
    }
    OSU_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    return (t1 - t0) * 1e6 * factor / (double)iters;
}

/* One bandwidth measurement (MB/s, meaningful on rank 0). */
static inline double rma_bandwidth(struct rma_ctx *c, const struct rma_bench *b, long iters, long skip)
{
    double t0 = 0, t1 = 0;
    MPI_Win win = c->win;
    int w = c->window;
    OSU_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (c->rank == 0) {
        if (c->sync == RMA_FLUSH || c->sync == RMA_FLUSH_LOCAL)
            OSU_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        for (long i = 0; i < iters + skip; i++) {
            switch (c->sync) {
            case RMA_LOCK:
                OSU_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
                break;
            case RMA_LOCK_ALL:
                OSU_CHECK(MPI_Win_lock_all(0, win));
                break;
            case RMA_FENCE:
                OSU_CHECK(MPI_Win_fence(0, win));
                break;
            case RMA_PSCW:
                OSU_CHECK(MPI_Win_start(c->peer_group, 0, win));
                break;
            default:
                break;
            }
            if (i == skip) /* after MPI_Win_start for pscw, as OSU; before the epoch otherwise */
                t0 = MPI_Wtime();
            for (int j = 0; j < w; j++)
                OSU_CHECK(b->op(c, 1, j));
            switch (c->sync) {
            case RMA_FLUSH:
                OSU_CHECK(MPI_Win_flush(1, win));
                break;
            case RMA_FLUSH_LOCAL:
                OSU_CHECK(MPI_Win_flush_local(1, win));
                break;
            case RMA_LOCK:
                OSU_CHECK(MPI_Win_unlock(1, win));
                break;
            case RMA_LOCK_ALL:
                OSU_CHECK(MPI_Win_unlock_all(win));
                break;
            case RMA_FENCE:
                OSU_CHECK(MPI_Win_fence(0, win));
                break;
            default:
                OSU_CHECK(MPI_Win_complete(win));
                break;
            }
        }
        t1 = MPI_Wtime();
        if (c->sync == RMA_FLUSH || c->sync == RMA_FLUSH_LOCAL)
            OSU_CHECK(MPI_Win_unlock(1, win));
    } else if (c->sync == RMA_FENCE || c->sync == RMA_PSCW) {
        for (long i = 0; i < iters + skip; i++) {
            if (c->sync == RMA_FENCE) {
                OSU_CHECK(MPI_Win_fence(0, win));
                OSU_CHECK(MPI_Win_fence(0, win));
            } else {
                OSU_CHECK(MPI_Win_post(c->peer_group, 0, win));
                OSU_CHECK(MPI_Win_wait(win));
            }
        }
    }
    OSU_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    return (double)c->size * (double)w * (double)iters / 1e6 / (t1 - t0);
}

static inline int rma_main(int argc, char **argv, const struct rma_bench *b)
{
    struct rma_ctx c;
    char columns[512];
    rma_init(&argc, &argv, b, &c);
    c.window = b->kind == OSU_BW ? c.o.window : 1;
    snprintf(columns, sizeof columns,
             "# Window creation: %s\n# Synchronization: %s\n%s%s%s%s",
             rma_flavor_calls[c.flavor], rma_sync_calls[c.sync],
             b->datatype ? "# Datatype: " : "", b->datatype ? b->datatype : "", b->datatype ? "\n" : "",
             b->kind == OSU_BW ? "# Size      Bandwidth (MB/s)" : "# Size          Latency (us)");
    osu_print_header(b->test_name, columns);

    long first = b->fixed_size > 0 ? b->fixed_size : osu_first_size(&c.o, b->floor_size);
    long last = b->fixed_size > 0 ? b->fixed_size : c.o.max_size;
    for (long size = first; size <= last; size = osu_next_size(&c.o, size)) {
        long iters = osu_iters(&c.o, size), skip = osu_skip(&c.o, size);
        double v;
        c.size = size;
        rma_window_create(&c, b, (size_t)size * (size_t)c.window);
        v = b->kind == OSU_BW ? rma_bandwidth(&c, b, iters, skip) : rma_latency(&c, b, iters, skip);
        if (c.rank == 0) {
            /* Latencies with 3 decimals: shared-memory RMA takes a few tens of ns. */
            if (b->kind == OSU_BW)
                printf("%-10ld%18.2f\n", size, v);
            else
                printf("%-10ld%18.3f\n", size, v);
            fflush(stdout);
        }
        rma_window_free(&c);
        if (b->fixed_size > 0)
            break;
    }
    if (c.peer_group != MPI_GROUP_NULL)
        OSU_CHECK(MPI_Group_free(&c.peer_group));
    MPI_Finalize();
    return 0;
}

#endif /* RMA_UTIL_H */
