/* Persistent collectives (MPI-4.0 MPI_X_init): each request started several times with
 * new buffer contents and its result checked every time, blocking and nonblocking
 * collectives in between, Startall over several (started in different orders on
 * different ranks), a non-contiguous datatype, MPI_IN_PLACE, a datatype and a user op
 * freed right after _init, argument arrays freed after _init, free while inactive and
 * while active, and the errors: bad arguments at _init, MPI_Start on an active request. */
#include "testutil.h"

enum { ROUNDS = 4, N = 300 };

/* A user op on pairs of ints (MPI_Type_contiguous(2, MPI_INT)): element-wise sum. */
static void user_sum_pairs(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < 2 * *len; i++)
        ((int *)inout)[i] += ((const int *)in)[i];
}

int main(int argc, char **argv)
{
    int rank, size;
    tu_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank = tu_rank;
    MPI_Comm comm;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));

    int *sb = tu_malloc(N * size * sizeof(int)), *rb = tu_malloc(N * size * sizeof(int));
    int *counts = tu_malloc(size * sizeof(int)), *displs = tu_malloc(size * sizeof(int));
    for (int i = 0; i < size; i++) {
        counts[i] = i + 1;
        displs[i] = i * (size + 1);
    }
    int bval[N], red_in[N], red_out[N], ar_io[N], scan_out[N];
    MPI_Request bcast, reduce, allreduce, gather, alltoall, allgatherv, scan, barrier, rsb;
    int root = size - 1;
    MPI_OK(MPI_Bcast_init(bval, N, MPI_INT, root, comm, MPI_INFO_NULL, &bcast));
    MPI_OK(MPI_Reduce_init(red_in, red_out, N, MPI_INT, MPI_SUM, 0, comm, MPI_INFO_NULL, &reduce));
    MPI_OK(MPI_Allreduce_init(MPI_IN_PLACE, ar_io, N, MPI_INT, MPI_MAX, comm, MPI_INFO_NULL, &allreduce));
    MPI_OK(MPI_Gather_init(sb, 2, MPI_INT, rb, 2, MPI_INT, 0, comm, MPI_INFO_NULL, &gather));
    MPI_OK(MPI_Alltoall_init(sb, 3, MPI_INT, rb + N * size / 2, 3, MPI_INT, comm, MPI_INFO_NULL, &alltoall));
    MPI_OK(MPI_Scan_init(red_in, scan_out, N, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &scan));
    MPI_OK(MPI_Barrier_init(comm, MPI_INFO_NULL, &barrier));
    CHECK(bcast != MPI_REQUEST_NULL && barrier != MPI_REQUEST_NULL, "no request");

    /* Inactive requests: wait/test return at once with an empty status. */
    MPI_Status st;
    int flag = 0;
    MPI_OK(MPI_Wait(&bcast, &st));
    MPI_OK(MPI_Test(&reduce, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && bcast != MPI_REQUEST_NULL && reduce != MPI_REQUEST_NULL, "inactive wait/test");

    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < N; i++) {
            bval[i] = rank == root ? round * 1000 + i : -1;
            red_in[i] = rank + round + i;
            ar_io[i] = (rank * 7 + round + i) % (size + 3);
        }
        for (int i = 0; i < N * size / 2; i++)
            sb[i] = rank * 100000 + round * 1000 + i;

        MPI_OK(MPI_Start(&bcast));
        MPI_OK(MPI_Wait(&bcast, MPI_STATUS_IGNORE));
        CHECK(bcast != MPI_REQUEST_NULL, "a persistent request stays allocated");
        for (int i = 0; i < N; i++)
            CHECK(bval[i] == round * 1000 + i, "round %d bcast[%d] = %d", round, i, bval[i]);

        /* A blocking and a nonblocking collective in between. */
        int one = 1, total = 0;
        MPI_OK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, comm));
        CHECK(total == size, "allreduce in between: %d", total);
        MPI_Request ib;
        MPI_OK(MPI_Ibarrier(comm, &ib));

        /* Several at once; odd ranks list them in another order (any start order). */
        MPI_Request set[6];
        if (rank % 2) {
            MPI_Request s[6] = {scan, alltoall, gather, allreduce, reduce, barrier};
            memcpy(set, s, sizeof s);
        } else {
            MPI_Request s[6] = {reduce, allreduce, gather, alltoall, scan, barrier};
            memcpy(set, s, sizeof s);
        }
        MPI_OK(MPI_Startall(6, set));
        if (round % 2) {
            MPI_OK(MPI_Waitall(6, set, MPI_STATUSES_IGNORE));
        } else {
            int done = 0;
            while (!done)
                MPI_OK(MPI_Testall(6, set, &done, MPI_STATUSES_IGNORE));
        }
        MPI_OK(MPI_Wait(&ib, MPI_STATUS_IGNORE));
        for (int i = 0; i < 6; i++)
            CHECK(set[i] != MPI_REQUEST_NULL, "Waitall freed persistent request %d", i);

        if (rank == 0)
            for (int i = 0; i < N; i++) {
                int want = size * (size - 1) / 2 + size * (round + i);
                CHECK(red_out[i] == want, "round %d reduce[%d] = %d, want %d", round, i, red_out[i], want);
            }
        for (int i = 0; i < N; i++) {
            int want = 0;
            for (int r = 0; r < size; r++)
                want = (r * 7 + round + i) % (size + 3) > want ? (r * 7 + round + i) % (size + 3) : want;
            CHECK(ar_io[i] == want, "round %d allreduce[%d] = %d, want %d", round, i, ar_io[i], want);
            int sc = rank * (rank + 1) / 2 + (rank + 1) * (round + i);
            CHECK(scan_out[i] == sc, "round %d scan[%d] = %d, want %d", round, i, scan_out[i], sc);
        }
        if (rank == 0)
            for (int r = 0; r < size; r++)
                for (int j = 0; j < 2; j++)
                    CHECK(rb[2 * r + j] == r * 100000 + round * 1000 + j, "round %d gather from %d", round, r);
        int *a2a = rb + N * size / 2;
        for (int r = 0; r < size; r++)
            for (int j = 0; j < 3; j++)
                CHECK(a2a[3 * r + j] == r * 100000 + round * 1000 + 3 * rank + j, "round %d alltoall from %d[%d] = %d", round, r, j, a2a[3 * r + j]);
    }

    /* Allgatherv and reduce_scatter_block with a non-contiguous receive type (every other
     * int), re-packed at each start. */
    MPI_Datatype every2;
    MPI_OK(MPI_Type_vector(1, 1, 2, MPI_INT, &every2));
    MPI_Datatype every2r;
    MPI_OK(MPI_Type_create_resized(every2, 0, 2 * sizeof(int), &every2r));
    MPI_OK(MPI_Type_commit(&every2r));
    int tot = displs[size - 1] + counts[size - 1];
    int *agv = tu_malloc(2 * tot * sizeof(int));
    int mine[64];
    MPI_OK(MPI_Allgatherv_init(mine, rank + 1, MPI_INT, agv, counts, displs, every2r, comm, MPI_INFO_NULL, &allgatherv));
    int rsb_in[64], rsb_out[2] = {0, 0};
    MPI_OK(MPI_Reduce_scatter_block_init(rsb_in, rsb_out, 2, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &rsb));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i <= rank; i++)
            mine[i] = rank * 10 + i + round * 100;
        for (int i = 0; i < 2 * tot; i++)
            agv[i] = -7;
        for (int i = 0; i < 2 * size; i++)
            rsb_in[i] = i + round;
        MPI_Request two[2] = {allgatherv, rsb};
        MPI_OK(MPI_Startall(2, two));
        MPI_OK(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
        for (int r = 0; r < size; r++)
            for (int i = 0; i <= r; i++) {
                int at = 2 * (displs[r] + i);
                CHECK(agv[at] == r * 10 + i + round * 100, "round %d allgatherv from %d[%d] = %d", round, r, i, agv[at]);
                CHECK(agv[at + 1] == -7, "allgatherv wrote a gap");
            }
        for (int j = 0; j < 2; j++)
            CHECK(rsb_out[j] == size * (2 * rank + j + round), "round %d reduce_scatter_block[%d] = %d", round, j, rsb_out[j]);
    }
    MPI_Type_free(&every2);
    MPI_Type_free(&every2r);

    /* The argument arrays may be reused or freed after _init (mpi4py passes temporaries):
     * each start uses what _init saw. Counts 1..size, scribbled over and freed at once. */
    {
        int *rc_tmp = tu_malloc(size * sizeof(int)), total = size * (size + 1) / 2;
        for (int r = 0; r < size; r++)
            rc_tmp[r] = r + 1;
        double *rs = tu_malloc(total * sizeof(double));
        MPI_Request rsc;
        MPI_OK(MPI_Reduce_scatter_init(MPI_IN_PLACE, rs, rc_tmp, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL, &rsc));
        for (int r = 0; r < size; r++)
            rc_tmp[r] = 1 << 28;
        free(rc_tmp);
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < total; i++)
                rs[i] = i + rank + round;
            MPI_OK(MPI_Start(&rsc));
            MPI_OK(MPI_Wait(&rsc, MPI_STATUS_IGNORE));
            int first = rank * (rank + 1) / 2; /* my block's offset in the input */
            for (int i = 0; i <= rank; i++)
                CHECK(rs[i] == size * (first + i + round) + size * (size - 1) / 2.0, "round %d reduce_scatter with freed counts [%d] = %g", round, i, rs[i]);
        }
        MPI_OK(MPI_Request_free(&rsc));
        free(rs);
    }

    /* The datatype and op may be freed right after _init (MPI 4.1 §6.13): each start
     * still uses them, and handles made after the request is freed work. */
    {
        MPI_Datatype pair;
        MPI_Op usum;
        MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
        MPI_OK(MPI_Type_commit(&pair));
        MPI_OK(MPI_Op_create(user_sum_pairs, 1, &usum));
        int in[2], out[2];
        MPI_Request ar;
        MPI_OK(MPI_Allreduce_init(in, out, 1, pair, usum, comm, MPI_INFO_NULL, &ar));
        MPI_OK(MPI_Type_free(&pair));
        MPI_OK(MPI_Op_free(&usum));
        CHECK(pair == MPI_DATATYPE_NULL && usum == MPI_OP_NULL, "free did not null the handles");
        for (int round = 0; round < 3; round++) {
            in[0] = rank + round;
            in[1] = 1;
            MPI_OK(MPI_Start(&ar));
            MPI_OK(MPI_Wait(&ar, MPI_STATUS_IGNORE));
            CHECK(out[0] == size * (size - 1) / 2 + size * round && out[1] == size,
                  "round %d allreduce with a freed type and op = {%d, %d}", round, out[0], out[1]);
        }
        MPI_OK(MPI_Request_free(&ar));
        MPI_OK(MPI_Type_contiguous(2, MPI_INT, &pair));
        MPI_OK(MPI_Type_commit(&pair));
        MPI_OK(MPI_Allreduce(MPI_IN_PLACE, in, 1, pair, MPI_SUM, comm));
        MPI_OK(MPI_Type_free(&pair));
    }

    /* Free while inactive. */
    MPI_Request *all[] = {&bcast, &reduce, &allreduce, &gather, &alltoall, &scan, &allgatherv, &rsb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        MPI_OK(MPI_Request_free(all[i]));
        CHECK(*all[i] == MPI_REQUEST_NULL, "Request_free did not null the handle");
    }

    /* Errors, under MPI_ERRORS_RETURN: MPI_Start on an active request (the barrier cannot
     * finish before every rank started it, so it is still active on some rank... on all
     * of them when they start it twice in a row before anyone waits). */
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int cls, rc;
    MPI_OK(MPI_Start(&barrier));
    if (size > 1) {
        rc = MPI_Start(&barrier);
        /* Active unless every peer already started it and it completed: only possible
         * after we synchronised, which we did not. */
        MPI_Error_class(rc, &cls);
        CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_REQUEST, "MPI_Start on an active request: class %d", cls);
    }
    MPI_OK(MPI_Wait(&barrier, MPI_STATUS_IGNORE));
    /* Free while active: completes on its own. */
    MPI_OK(MPI_Start(&barrier));
    MPI_OK(MPI_Request_free(&barrier));
    MPI_OK(MPI_Barrier(comm));

    MPI_Request bad = MPI_REQUEST_NULL;
    rc = MPI_Bcast_init(bval, -1, MPI_INT, 0, comm, MPI_INFO_NULL, &bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT && bad == MPI_REQUEST_NULL, "Bcast_init negative count: class %d", cls);
    rc = MPI_Bcast_init(bval, 1, MPI_INT, size, comm, MPI_INFO_NULL, &bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT, "Bcast_init bad root: class %d", cls);
    rc = MPI_Allreduce_init(red_in, red_out, 1, MPI_INT, MPI_OP_NULL, comm, MPI_INFO_NULL, &bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "Allreduce_init null op: class %d", cls);
    rc = MPI_Reduce_init(red_in, red_out, 1, MPI_DATATYPE_NULL, MPI_SUM, 0, comm, MPI_INFO_NULL, &bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "Reduce_init null type: class %d", cls);
    rc = MPI_Barrier_init(comm, MPI_INFO_NULL, NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "Barrier_init NULL request: class %d", cls);
    rc = MPI_Barrier_init(comm, (MPI_Info)0x12345, &bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_INFO, "Barrier_init bad info: class %d", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Barrier_init(MPI_COMM_NULL, MPI_INFO_NULL, &bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "Barrier_init null comm: class %d", cls);
    CHECK(bad == MPI_REQUEST_NULL, "failed _init wrote a request");

    /* Failed _init calls took no collective tag: the next collectives still match. */
    int v = rank, s = 0;
    MPI_OK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, comm));
    CHECK(s == size * (size - 1) / 2, "allreduce after errors: %d", s);
    MPI_Request ia;
    MPI_OK(MPI_Iallreduce(&v, &s, 1, MPI_INT, MPI_SUM, comm, &ia));
    MPI_OK(MPI_Wait(&ia, MPI_STATUS_IGNORE));
    CHECK(s == size * (size - 1) / 2, "iallreduce after errors: %d", s);

    free(sb);
    free(rb);
    free(counts);
    free(displs);
    free(agv);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    if (rank == 0)
        printf("coll_persistent: OK\n");
    return 0;
}
