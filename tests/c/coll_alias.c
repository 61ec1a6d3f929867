/* Aliased send and receive buffers in collectives (the same memory passed twice instead
 * of MPI_IN_PLACE) are MPI_ERR_BUFFER, as MPICH reports them, and the error is raised
 * before any traffic: a rank whose call failed then makes the correct call, and the job
 * goes on with checked results (no hang, no mismatched collective).
 *  - every rank aliased: Allreduce, Iallreduce, Scan, Exscan, Reduce_scatter_block,
 *    Reduce_scatter, Allgather (own block), Allgatherv (own block), Alltoall,
 *    Alltoallv, Alltoallw, and the nonblocking forms;
 *  - root only (the others pass correct buffers and wait): Reduce, Gather (own block),
 *    Gatherv, Scatter (own block), Scatterv, Ireduce, Igather;
 *  - what is not aliasing stays accepted: the same pointer with nothing to move, and
 *    MPI_IN_PLACE.
 * Then mismatched lengths (MPICH's errors/coll/bcastlength): a Bcast (and Ibcast, and a
 * large one that goes by rendezvous) where the root sends fewer items than the others
 * expect is an error on every non-root (MPI_ERR_OTHER), more items MPI_ERR_TRUNCATE;
 * every rank still returns (a failed transfer does not stop the broadcast's forwarding)
 * and a correct Bcast follows. */
#include "testutil.h"
#include <stdlib.h>
#include <string.h>

static int rank, size;

static void expect_buffer_error(int rc, const char *what)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_BUFFER, "%s: rc %d class %d, expected MPI_ERR_BUFFER", what, rc, cls);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    CHECK(len > 0, "%s: empty error string", what);
}

/* Blocking or nonblocking (`req` non-NULL: wait for it) call result. */
static int done(int rc, MPI_Request *req)
{
    if (rc == MPI_SUCCESS && req)
        MPI_OK(MPI_Wait(req, MPI_STATUS_IGNORE));
    return rc;
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int n = size;
    int *buf = malloc(n * 4 * sizeof(int)), *out = malloc(n * 4 * sizeof(int));
    int *cnts = malloc(n * sizeof(int)), *displs = malloc(n * sizeof(int));
    MPI_Datatype *types = malloc(n * sizeof(MPI_Datatype));
    for (int i = 0; i < n; i++) {
        cnts[i] = 1;
        displs[i] = i;
        types[i] = MPI_INT;
    }

    for (int nb = 0; nb < 2; nb++) {
        MPI_Request r, *req = nb ? &r : NULL;
        const char *kind = nb ? "nonblocking" : "blocking";
#define ALL_ALIASED(call_b, call_nb, name)                                                   \
    do {                                                                                     \
        for (int i = 0; i < 4 * n; i++)                                                      \
            buf[i] = i;                                                                      \
        int rc_ = nb ? done(call_nb, req) : (call_b);                                        \
        char what_[96];                                                                      \
        snprintf(what_, sizeof what_, "%s %s", kind, name);                                  \
        expect_buffer_error(rc_, what_);                                                     \
    } while (0)
        ALL_ALIASED(MPI_Allreduce(buf, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                    MPI_Iallreduce(buf, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, req), "allreduce");
        ALL_ALIASED(MPI_Scan(buf, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                    MPI_Iscan(buf, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, req), "scan");
        ALL_ALIASED(MPI_Exscan(buf, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                    MPI_Iexscan(buf, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, req), "exscan");
        ALL_ALIASED(MPI_Reduce_scatter_block(buf, buf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                    MPI_Ireduce_scatter_block(buf, buf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, req), "reduce_scatter_block");
        ALL_ALIASED(MPI_Reduce_scatter(buf, buf, cnts, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                    MPI_Ireduce_scatter(buf, buf, cnts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, req), "reduce_scatter");
        ALL_ALIASED(MPI_Allgather(&buf[rank], 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD),
                    MPI_Iallgather(&buf[rank], 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD, req), "allgather");
        ALL_ALIASED(MPI_Allgatherv(&buf[rank], 1, MPI_INT, buf, cnts, displs, MPI_INT, MPI_COMM_WORLD),
                    MPI_Iallgatherv(&buf[rank], 1, MPI_INT, buf, cnts, displs, MPI_INT, MPI_COMM_WORLD, req), "allgatherv");
        ALL_ALIASED(MPI_Alltoall(buf, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD),
                    MPI_Ialltoall(buf, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD, req), "alltoall");
        ALL_ALIASED(MPI_Alltoallv(buf, cnts, displs, MPI_INT, buf, cnts, displs, MPI_INT, MPI_COMM_WORLD),
                    MPI_Ialltoallv(buf, cnts, displs, MPI_INT, buf, cnts, displs, MPI_INT, MPI_COMM_WORLD, req), "alltoallv");
        {
            int *bd = malloc(n * sizeof(int));
            for (int i = 0; i < n; i++)
                bd[i] = i * (int)sizeof(int);
            ALL_ALIASED(MPI_Alltoallw(buf, cnts, bd, types, buf, cnts, bd, types, MPI_COMM_WORLD),
                        MPI_Ialltoallw(buf, cnts, bd, types, buf, cnts, bd, types, MPI_COMM_WORLD, req), "alltoallw");
            free(bd);
        }

        /* Every rank failed identically; the next correct collective must match up. */
        int v = rank + 1, sum = 0;
        MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(sum == n * (n + 1) / 2, "%s: allreduce after the aliased calls gave %d", kind, sum);

        /* Root-only aliasing: the root fails, then makes the correct call. */
        for (int root = 0; root < n; root++) {
            for (int which = 0; which < 5; which++) {
                const char *names[] = {"reduce", "gather", "gatherv", "scatter", "scatterv"};
                for (int i = 0; i < 4 * n; i++) {
                    buf[i] = 100 * rank + i;
                    out[i] = -1;
                }
                int rc = MPI_SUCCESS;
                if (rank == root) {
                    if (which == 0)
                        rc = nb ? done(MPI_Ireduce(buf, buf, 2, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, req), req)
                                : MPI_Reduce(buf, buf, 2, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
                    else if (which == 1)
                        rc = nb ? done(MPI_Igather(&buf[root], 1, MPI_INT, buf, 1, MPI_INT, root, MPI_COMM_WORLD, req), req)
                                : MPI_Gather(&buf[root], 1, MPI_INT, buf, 1, MPI_INT, root, MPI_COMM_WORLD);
                    else if (which == 2)
                        rc = MPI_Gatherv(&buf[root], 1, MPI_INT, buf, cnts, displs, MPI_INT, root, MPI_COMM_WORLD);
                    else if (which == 3)
                        rc = MPI_Scatter(buf, 1, MPI_INT, &buf[root], 1, MPI_INT, root, MPI_COMM_WORLD);
                    else
                        rc = MPI_Scatterv(buf, cnts, displs, MPI_INT, &buf[root], 1, MPI_INT, root, MPI_COMM_WORLD);
                    char what[96];
                    snprintf(what, sizeof what, "%s %s at root %d", kind, names[which], root);
                    expect_buffer_error(rc, what);
                }
                /* The correct call, everywhere. */
                if (which == 0) {
                    MPI_OK(MPI_Reduce(buf, out, 2, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
                    if (rank == root)
                        CHECK(out[0] == 100 * n * (n - 1) / 2 && out[1] == out[0] + n, "reduce: %d %d", out[0], out[1]);
                } else if (which == 1 || which == 2) {
                    int x = 7 * rank + 1;
                    if (which == 1)
                        MPI_OK(MPI_Gather(&x, 1, MPI_INT, out, 1, MPI_INT, root, MPI_COMM_WORLD));
                    else
                        MPI_OK(MPI_Gatherv(&x, 1, MPI_INT, out, cnts, displs, MPI_INT, root, MPI_COMM_WORLD));
                    if (rank == root)
                        for (int i = 0; i < n; i++)
                            CHECK(out[i] == 7 * i + 1, "%s: block %d is %d", names[which], i, out[i]);
                } else {
                    int x = -1;
                    if (which == 3)
                        MPI_OK(MPI_Scatter(buf, 1, MPI_INT, &x, 1, MPI_INT, root, MPI_COMM_WORLD));
                    else
                        MPI_OK(MPI_Scatterv(buf, cnts, displs, MPI_INT, &x, 1, MPI_INT, root, MPI_COMM_WORLD));
                    CHECK(x == 100 * root + rank, "%s: got %d, expected %d", names[which], x, 100 * root + rank);
                }
            }
        }
    }

    /* Mismatched lengths. */
    for (int big = 0; big < 2; big++) {
        int unit = big ? 100000 : 1; /* large: rendezvous transfers */
        int *b = malloc(10 * unit * sizeof(int));
        for (int nb = 0; nb < 2; nb++) {
            for (int root = 0; root < n; root++) {
                for (int longer = 0; longer < 2; longer++) {
                    /* longer: the others expect 10 units and the root sends 1, else the reverse */
                    int cnt = (rank == root) == (longer == 1) ? unit : 10 * unit;
                    MPI_Request r;
                    int rc = nb ? MPI_Ibcast(b, cnt, MPI_INT, root, MPI_COMM_WORLD, &r) : MPI_Bcast(b, cnt, MPI_INT, root, MPI_COMM_WORLD);
                    if (nb && rc == MPI_SUCCESS)
                        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
                    int cls = -1;
                    MPI_Error_class(rc, &cls);
                    if (rank != root && n > 1)
                        CHECK(cls == (longer ? MPI_ERR_OTHER : MPI_ERR_TRUNCATE), "%s%s bcast from %d, %s message: class %d", big ? "large " : "", nb ? "nonblocking" : "blocking", root, longer ? "short" : "long", cls);
                    for (int i = 0; i < 10 * unit; i++)
                        b[i] = rank == root ? i : -1;
                    MPI_OK(MPI_Bcast(b, 10 * unit, MPI_INT, root, MPI_COMM_WORLD));
                    for (int i = 0; i < 10 * unit; i += unit)
                        CHECK(b[i] == i, "bcast after a mismatch: item %d is %d", i, b[i]);
                }
            }
        }
        free(b);
    }

    /* Not aliasing: same pointer with nothing to move, and MPI_IN_PLACE. */
    MPI_OK(MPI_Allreduce(buf, buf, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    {
        /* (mpi4py's zero-length arrays share one address) */
        int *zeros = calloc(n, sizeof(int));
        MPI_Request r;
        MPI_OK(MPI_Alltoallv(buf, zeros, displs, MPI_INT, buf, zeros, displs, MPI_INT, MPI_COMM_WORLD));
        MPI_OK(MPI_Ialltoallv(buf, zeros, displs, MPI_INT, buf, zeros, displs, MPI_INT, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Alltoallw(buf, zeros, displs, types, buf, zeros, displs, types, MPI_COMM_WORLD));
        free(zeros);
    }
    for (int i = 0; i < n; i++)
        buf[i] = (i == rank) ? 5 * rank : -1;
    MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++)
        CHECK(buf[i] == 5 * i, "in-place allgather: block %d is %d", i, buf[i]);

    free(buf);
    free(out);
    free(cnts);
    free(displs);
    free(types);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_alias: OK\n");
    MPI_Finalize();
    return 0;
}
