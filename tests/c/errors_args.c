/* Argument errors and the handler they run (and, below, NULL statuses and the one-sided
 * ops in reductions):
 *  - a communicator or window whose handler was never set runs MPI_COMM_WORLD's handler of
 *    the moment (MPICH), so setting MPI_ERRORS_RETURN on MPI_COMM_WORLD also covers
 *    communicators duplicated or split from it earlier, and windows; their
 *    MPI_*_get_errhandler still says MPI_ERRORS_ARE_FATAL. A user handler on
 *    MPI_COMM_WORLD is then called with MPI_COMM_WORLD. A handler set on the object wins;
 *  - a NULL output argument of a communicator, group or topology constructor is
 *    MPI_ERR_ARG even when other arguments are bad too (MPICH checks it first), and makes
 *    no communicator (2100 such calls do not use up the context ids); a NULL or negative
 *    list argument is MPI_ERR_ARG (groups, and the topology calls' input lists); a failed
 *    communicator constructor stores
 *    MPI_COMM_NULL;
 *  - a collective whose send buffer is (this process's block of) its receive buffer, and
 *    MPI_Reduce_local with the same buffer twice, fail with MPI_ERR_BUFFER before any
 *    communication (rooted ones at the root only; here on MPI_COMM_SELF), while
 *    MPI_IN_PLACE still works. */
#include "testutil.h"

static int rank, size;
static int calls;
static MPI_Comm called_with;

static void world_handler(MPI_Comm *comm, int *code, ...)
{
    (void)code;
    calls++;
    called_with = *comm;
}

static void expect_class(int rc, int expected, const char *expected_name, const char *what)
{
    int cls = -1;
    CHECK(rc != MPI_SUCCESS, "%s returned MPI_SUCCESS, expected %s", what, expected_name);
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == expected, "%s: error class %d, expected %s (%d)", what, cls, expected_name, expected);
}
#define EXPECT(call, cls) expect_class((call), cls, #cls, #call)

static void unset_handlers_follow_world(void)
{
    MPI_Comm dup, half, own;
    MPI_Win win;
    MPI_Errhandler eh, got;
    int x = 0, comm_key;

    /* Made while MPI_COMM_WORLD still has its initial handler. */
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &own));
    MPI_OK(MPI_Comm_set_errhandler(own, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_create(&x, sizeof x, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &comm_key, NULL));

    MPI_OK(MPI_Comm_get_errhandler(dup, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "unset handler of a dup reported as %#x", (unsigned)got);
    MPI_OK(MPI_Win_get_errhandler(win, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "unset handler of a window reported as %#x", (unsigned)got);

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT(MPI_Send(&x, 1, MPI_INT, size + 1, 0, dup), MPI_ERR_RANK);
    EXPECT(MPI_Send(&x, 1, MPI_INT, 0, -3, half), MPI_ERR_TAG);
    EXPECT(MPI_Win_set_attr(win, comm_key, &x), MPI_ERR_KEYVAL);
    /* ...and so are copies of them. */
    MPI_Comm dup2;
    MPI_OK(MPI_Comm_dup(dup, &dup2));
    EXPECT(MPI_Recv(&x, -1, MPI_INT, 0, 0, dup2, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    MPI_OK(MPI_Comm_free(&dup2));

    /* A user handler on MPI_COMM_WORLD runs, with MPI_COMM_WORLD, for the unset ones only. */
    MPI_OK(MPI_Comm_create_errhandler(world_handler, &eh));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    EXPECT(MPI_Send(&x, 1, MPI_INT, size + 1, 0, dup), MPI_ERR_RANK);
    CHECK(calls == 1 && called_with == MPI_COMM_WORLD, "world's user handler: %d calls", calls);
    EXPECT(MPI_Win_set_attr(win, comm_key, &x), MPI_ERR_KEYVAL);
    CHECK(calls == 2 && called_with == MPI_COMM_WORLD, "window error through world's handler: %d calls", calls);
    EXPECT(MPI_Send(&x, 1, MPI_INT, size + 1, 0, own), MPI_ERR_RANK);
    CHECK(calls == 2, "a communicator with its own MPI_ERRORS_RETURN ran world's handler");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Errhandler_free(&eh));

    MPI_OK(MPI_Comm_free_keyval(&comm_key));
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Comm_free(&own));
    MPI_OK(MPI_Comm_free(&half));
    MPI_OK(MPI_Comm_free(&dup));
}

static void null_outputs(void)
{
    MPI_Comm c = MPI_COMM_WORLD, cart;
    MPI_Group world_group, g = MPI_GROUP_NULL;
    int one = 1, zero = 0, bad_rank = size + 3, r;
    int big[2] = {size, size + 1}, periods[2] = {0, 0};
    int range[1][3] = {{0, size + 4, 1}};

    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
    EXPECT(MPI_Comm_dup(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_split(MPI_COMM_WORLD, -7, 0, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_create(MPI_COMM_WORLD, world_group, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_create_group(MPI_COMM_WORLD, world_group, -1, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, size + 5, 7, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Cart_create(MPI_COMM_WORLD, 2, big, periods, 0, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Graph_create(MPI_COMM_WORLD, 1, &one, &zero, 0, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Cart_map(MPI_COMM_WORLD, 2, big, periods, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Comm_group(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Group_incl(world_group, 1, &bad_rank, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Group_excl(world_group, 1, &bad_rank, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Group_range_incl(world_group, 1, range, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Group_range_excl(world_group, 1, range, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Group_union(world_group, world_group, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Group_incl(world_group, 1, NULL, &g), MPI_ERR_ARG);
    EXPECT(MPI_Group_range_excl(world_group, 1, NULL, &g), MPI_ERR_ARG);
    EXPECT(MPI_Group_incl(world_group, -1, &zero, &g), MPI_ERR_ARG);
    EXPECT(MPI_Group_translate_ranks(world_group, 1, NULL, world_group, &r), MPI_ERR_ARG);
    CHECK(g == MPI_GROUP_NULL, "a failed group constructor wrote its output");
    /* NULL input lists of the topology calls (Cart_rank and Dist_graph_create aborted on
     * them; Dist_graph_create_adjacent and Graph_map read an empty list) */
    {
        int dims1[1] = {size}, per1[1] = {1}, deg1[1] = {1}, nr;
        MPI_Comm c1 = MPI_COMM_NULL, bad = MPI_COMM_NULL;
        MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims1, per1, 0, &c1));
        EXPECT(MPI_Cart_rank(c1, NULL, &nr), MPI_ERR_ARG);
        EXPECT(MPI_Graph_map(MPI_COMM_WORLD, 1, NULL, NULL, &nr), MPI_ERR_ARG);
        EXPECT(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, NULL, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &bad), MPI_ERR_ARG);
        EXPECT(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 1, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &bad), MPI_ERR_ARG);
        EXPECT(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, NULL, deg1, &zero, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &bad), MPI_ERR_ARG);
        EXPECT(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &zero, NULL, &zero, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &bad), MPI_ERR_ARG);
        EXPECT(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &zero, deg1, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &bad), MPI_ERR_ARG);
        CHECK(bad == MPI_COMM_NULL, "a failed MPI_Dist_graph_create left %#x", (unsigned)bad);
        MPI_OK(MPI_Comm_free(&c1));
    }

    /* No communicator is made for a NULL output: the context ids (2048 for blocking
     * constructors) do not run out. */
    for (int i = 0; i < 2100; i++)
        EXPECT(MPI_Comm_dup(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_OK(MPI_Comm_free(&c));

    /* A failed constructor stores MPI_COMM_NULL. */
    cart = MPI_COMM_WORLD;
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, big, periods, 0, &cart) != MPI_SUCCESS, "MPI_Cart_create accepted a grid larger than the communicator");
    CHECK(cart == MPI_COMM_NULL, "failed MPI_Cart_create left %#x", (unsigned)cart);
    c = MPI_COMM_WORLD;
    EXPECT(MPI_Comm_split(MPI_COMM_WORLD, -7, 0, &c), MPI_ERR_ARG);
    CHECK(c == MPI_COMM_NULL, "failed MPI_Comm_split left %#x", (unsigned)c);
    c = MPI_COMM_WORLD;
    EXPECT(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c), MPI_ERR_GROUP);
    CHECK(c == MPI_COMM_NULL, "failed MPI_Comm_create left %#x", (unsigned)c);
    c = MPI_COMM_WORLD;
    EXPECT(MPI_Comm_dup(MPI_COMM_NULL, &c), MPI_ERR_COMM);
    CHECK(c == MPI_COMM_NULL, "failed MPI_Comm_dup left %#x", (unsigned)c);
    MPI_OK(MPI_Group_free(&world_group));
}

static void aliased_buffers(void)
{
    int *buf = tu_malloc(2 * (size_t)size * sizeof(int)), *other = tu_malloc(2 * (size_t)size * sizeof(int));
    int counts[64], displs[64];
    MPI_Datatype types[64];
    MPI_Request req;
    for (int i = 0; i < size; i++) {
        counts[i] = 2;
        displs[i] = 2 * i;
        types[i] = MPI_INT;
        buf[2 * i] = buf[2 * i + 1] = i;
    }
    MPI_Comm w = MPI_COMM_WORLD, self = MPI_COMM_SELF;
    EXPECT(MPI_Reduce_local(buf, buf, 2, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    EXPECT(MPI_Allreduce(buf, buf, 2, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    EXPECT(MPI_Iallreduce(buf, buf, 2, MPI_INT, MPI_SUM, w, &req), MPI_ERR_BUFFER);
    EXPECT(MPI_Scan(buf, buf, 2, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    EXPECT(MPI_Exscan(buf, buf, 2, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    EXPECT(MPI_Reduce_scatter(buf, buf, counts, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    EXPECT(MPI_Reduce_scatter_block(buf, buf, 2, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    /* The send block is this process's block of the receive buffer. */
    EXPECT(MPI_Allgather(buf + 2 * rank, 2, MPI_INT, buf, 2, MPI_INT, w), MPI_ERR_BUFFER);
    EXPECT(MPI_Iallgather(buf + 2 * rank, 2, MPI_INT, buf, 2, MPI_INT, w, &req), MPI_ERR_BUFFER);
    EXPECT(MPI_Allgatherv(buf + 2 * rank, 2, MPI_INT, buf, counts, displs, MPI_INT, w), MPI_ERR_BUFFER);
    EXPECT(MPI_Alltoall(buf, 2, MPI_INT, buf, 2, MPI_INT, w), MPI_ERR_BUFFER);
    EXPECT(MPI_Alltoallv(buf, counts, displs, MPI_INT, buf, counts, displs, MPI_INT, w), MPI_ERR_BUFFER);
    EXPECT(MPI_Alltoallw(buf, counts, displs, types, buf, counts, displs, types, w), MPI_ERR_BUFFER);
    EXPECT(MPI_Reduce(buf, buf, 2, MPI_INT, MPI_SUM, 0, self), MPI_ERR_BUFFER);
    EXPECT(MPI_Ireduce(buf, buf, 2, MPI_INT, MPI_SUM, 0, self, &req), MPI_ERR_BUFFER);
    EXPECT(MPI_Gather(buf, 2, MPI_INT, buf, 2, MPI_INT, 0, self), MPI_ERR_BUFFER);
    EXPECT(MPI_Gatherv(buf, 2, MPI_INT, buf, counts, displs, MPI_INT, 0, self), MPI_ERR_BUFFER);
    EXPECT(MPI_Scatter(buf, 2, MPI_INT, buf, 2, MPI_INT, 0, self), MPI_ERR_BUFFER);
    EXPECT(MPI_Scatterv(buf, counts, displs, MPI_INT, buf, 2, MPI_INT, 0, self), MPI_ERR_BUFFER);

    /* Per-rank argument arrays of the v-collectives: a negative count (the first and the
     * last rank's) is MPI_ERR_COUNT, a NULL array MPI_ERR_ARG, on every rank before
     * anything is sent. */
    counts[0] = counts[size - 1] = -1;
    EXPECT(MPI_Alltoallv(buf, counts, displs, MPI_INT, other, counts, displs, MPI_INT, w), MPI_ERR_COUNT);
    EXPECT(MPI_Alltoallw(buf, counts, displs, types, other, counts, displs, types, w), MPI_ERR_COUNT);
    EXPECT(MPI_Allgatherv(buf, 2, MPI_INT, other, counts, displs, MPI_INT, w), MPI_ERR_COUNT);
    EXPECT(MPI_Gatherv(buf, 2, MPI_INT, other, counts, displs, MPI_INT, 0, self), MPI_ERR_COUNT);
    EXPECT(MPI_Scatterv(buf, counts, displs, MPI_INT, other, 2, MPI_INT, 0, self), MPI_ERR_COUNT);
    counts[0] = counts[size - 1] = 2;
    EXPECT(MPI_Alltoallv(buf, counts, NULL, MPI_INT, other, counts, displs, MPI_INT, w), MPI_ERR_ARG);
    EXPECT(MPI_Alltoallv(buf, counts, displs, MPI_INT, other, NULL, displs, MPI_INT, w), MPI_ERR_ARG);
    EXPECT(MPI_Alltoallw(buf, counts, displs, types, other, counts, displs, NULL, w), MPI_ERR_ARG);

    /* Nothing was sent: correct calls still match up, and MPI_IN_PLACE is no aliasing. */
    buf[0] = rank;
    buf[1] = 1;
    MPI_OK(MPI_Allreduce(MPI_IN_PLACE, buf, 2, MPI_INT, MPI_SUM, w));
    CHECK(buf[0] == size * (size - 1) / 2 && buf[1] == size, "in-place allreduce after aliasing errors: %d %d", buf[0], buf[1]);
    buf[2 * rank] = buf[2 * rank + 1] = rank * rank;
    MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, 2, MPI_INT, w));
    CHECK(buf[2 * size - 1] == (size - 1) * (size - 1), "in-place allgather: %d", buf[2 * size - 1]);
    buf[0] = buf[1] = rank;
    MPI_OK(MPI_Reduce(rank == 0 ? MPI_IN_PLACE : buf, buf, 2, MPI_INT, MPI_MAX, 0, w));
    if (rank == 0)
        CHECK(buf[1] == size - 1, "in-place reduce: %d", buf[1]);
    MPI_OK(MPI_Allreduce(buf, other, 2, MPI_INT, MPI_SUM, w));
    MPI_OK(MPI_Reduce_local(buf, other, 2, MPI_INT, MPI_SUM));
    free(buf);
    free(other);
}

/* A NULL status (MPI_STATUS_IGNORE is not NULL in the MPICH ABI) is MPI_ERR_ARG before
 * anything happens, as MPICH reports it; MPI_REPLACE and MPI_NO_OP in a reduction are
 * MPI_ERR_OP (they are for the one-sided accumulate calls). MPI-CorrBench's ArgError cases
 * found both accepted silently. */
static void null_status_and_rma_ops(void)
{
    MPI_Comm self = MPI_COMM_SELF;
    MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
    int x = 1, y = 0, flag, idx, out, ids[1];
    MPI_Request req;
    MPI_Message msg;
    MPI_OK(MPI_Isend(&x, 1, MPI_INT, 0, 4, self, &req));
    EXPECT(MPI_Recv(&y, 1, MPI_INT, 0, 4, self, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Probe(0, 4, self, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Iprobe(0, 4, self, &flag, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Mprobe(0, 4, self, &msg, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Improbe(0, 4, self, &flag, &msg, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Sendrecv(&x, 1, MPI_INT, 0, 5, &y, 1, MPI_INT, 0, 5, self, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Sendrecv_replace(&x, 1, MPI_INT, 0, 5, 0, 5, self, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Test(&req, &flag, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Wait(&req, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Waitany(1, &req, &idx, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Testany(1, &req, &idx, &flag, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Waitall(1, &req, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Testall(1, &req, &flag, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Waitsome(1, &req, &out, ids, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Testsome(1, &req, &out, ids, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Request_get_status(req, &flag, NULL), MPI_ERR_ARG);
    /* None of them touched the message or the request. */
    MPI_OK(MPI_Recv(&y, 1, MPI_INT, 0, 4, self, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(y == 1, "the message after the NULL-status calls: %d", y);
    MPI_OK(MPI_Waitall(0, NULL, NULL));

    int v[2] = {3, 4}, r[2];
    EXPECT(MPI_Allreduce(v, r, 2, MPI_INT, MPI_REPLACE, MPI_COMM_WORLD), MPI_ERR_OP);
    EXPECT(MPI_Reduce(v, r, 2, MPI_INT, MPI_NO_OP, 0, self), MPI_ERR_OP);
    EXPECT(MPI_Iallreduce(v, r, 2, MPI_INT, MPI_NO_OP, self, &req), MPI_ERR_OP);
    EXPECT(MPI_Scan(v, r, 2, MPI_INT, MPI_REPLACE, self), MPI_ERR_OP);
    EXPECT(MPI_Reduce_local(v, r, 2, MPI_INT, MPI_REPLACE), MPI_ERR_OP);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    unset_handlers_follow_world();
    null_outputs();
    if (size <= 64)
        aliased_buffers();
    null_status_and_rma_ops();

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("errors_args: OK (%d ranks)\n", size);
    MPI_Finalize();
    return 0;
}
