/* Error classes of erroneous partitioned calls (under MPI_ERRORS_RETURN), and the failed
 * receive of a sender whose total size differs (MPI_ERR_TRUNCATE when larger, MPI_ERR_OTHER
 * when smaller, whose data still arrive; the sender completes and the pair after it
 * works). Ranks 0 and 1. */
#include "testutil.h"

static int rank;

/* Erroneous calls have no standard error class: the classes are OxMPI's (validating
 * against MPICH, only the failure is checked; it reports most as MPI_ERR_OTHER). */
#if defined(MPICH_VERSION) && !defined(OXMPI)
#define EXACT_CLASSES 0
#else
#define EXACT_CLASSES 1
#endif

#define EXPECT(call, cls)                                                                  \
    do {                                                                                   \
        int rc_ = (call);                                                                  \
        CHECK(rc_ != MPI_SUCCESS, "%s succeeded, expected class %s", #call, #cls);         \
        CHECK(!EXACT_CLASSES || tu_error_class(rc_) == (cls), "%s: class %d, expected %s (%d)", \
              #call, tu_error_class(rc_), #cls, cls);                                      \
    } while (0)

static void argument_errors(void)
{
    int buf[16];
    MPI_Request q = MPI_REQUEST_NULL;
    EXPECT(MPI_Psend_init(buf, -1, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_ARG);
    EXPECT(MPI_Psend_init(buf, 1, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_COUNT);
    EXPECT(MPI_Psend_init(buf, 1, 1, MPI_INT, 99, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_RANK);
    EXPECT(MPI_Psend_init(buf, 1, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_TAG);
    EXPECT(MPI_Psend_init(buf, 1, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_TYPE);
    EXPECT(MPI_Psend_init(buf, 1, 1, MPI_INT, 0, 0, MPI_COMM_NULL, MPI_INFO_NULL, &q), MPI_ERR_COMM);
    EXPECT(MPI_Precv_init(buf, 1, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_RANK);
    EXPECT(MPI_Precv_init(buf, 1, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &q), MPI_ERR_TAG);
    CHECK(q == MPI_REQUEST_NULL, "a failed init wrote a request");
#if defined(OXMPI) || MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    int flag = 0; /* MPI 4.1: flag = true for a null request (MPI 4.0 left it undefined) */
    MPI_OK(MPI_Parrived(MPI_REQUEST_NULL, 0, &flag));
    CHECK(flag, "MPI_Parrived(MPI_REQUEST_NULL) gave false");
#endif
    EXPECT(MPI_Pready(0, MPI_REQUEST_NULL), MPI_ERR_REQUEST);
}

static void state_errors(void)
{
    enum { P = 4, C = 4 };
    int buf[P * C];
    MPI_Request q;
    if (rank == 0) {
        for (int i = 0; i < P * C; i++)
            buf[i] = 7 * i;
        MPI_OK(MPI_Psend_init(buf, P, C, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        EXPECT(MPI_Pready(0, q), MPI_ERR_REQUEST); /* not started */
        MPI_OK(MPI_Start(&q));
        EXPECT(MPI_Pready(P, q), MPI_ERR_ARG);
        EXPECT(MPI_Pready(-1, q), MPI_ERR_ARG);
        MPI_OK(MPI_Pready(1, q));
        EXPECT(MPI_Pready(1, q), MPI_ERR_ARG); /* twice in one round */
        EXPECT(MPI_Pready_range(3, 2, q), MPI_ERR_ARG);
        EXPECT(MPI_Pready_range(2, P, q), MPI_ERR_ARG);
        int dup[2] = {0, 0};
        EXPECT(MPI_Pready_list(2, dup, q), MPI_ERR_ARG); /* marks nothing */
        int neg[2] = {2, -2};
        EXPECT(MPI_Pready_list(2, neg, q), MPI_ERR_ARG); /* marks nothing either */
        int flag;
        EXPECT(MPI_Parrived(q, 0, &flag), MPI_ERR_REQUEST); /* a send request */
        EXPECT(MPI_Start(&q), MPI_ERR_REQUEST);             /* active */
        EXPECT(MPI_Request_free(&q), MPI_ERR_REQUEST);      /* active */
        EXPECT(MPI_Cancel(&q), MPI_ERR_REQUEST);            /* active */
        MPI_OK(MPI_Pready_range(2, 3, q));
        MPI_OK(MPI_Pready(0, q));
        /* Every partition marked (and maybe sent), the request not completed yet: still
         * index errors, not "not started". */
        EXPECT(MPI_Pready(P, q), MPI_ERR_ARG);
        EXPECT(MPI_Pready(2, q), MPI_ERR_ARG);
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        EXPECT(MPI_Pready(0, q), MPI_ERR_REQUEST); /* inactive again */
        MPI_OK(MPI_Request_free(&q));
        /* To MPI_PROC_NULL (its rounds complete at MPI_Start): the same state checks. */
        MPI_OK(MPI_Psend_init(buf, P, C, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        EXPECT(MPI_Pready(0, q), MPI_ERR_REQUEST); /* not started */
        MPI_OK(MPI_Start(&q));
        EXPECT(MPI_Pready(P, q), MPI_ERR_ARG);
        MPI_OK(MPI_Pready(0, q));
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        EXPECT(MPI_Pready(0, q), MPI_ERR_REQUEST); /* inactive again */
        MPI_OK(MPI_Request_free(&q));
    } else if (rank == 1) {
        for (int i = 0; i < P * C; i++)
            buf[i] = -1;
        MPI_OK(MPI_Precv_init(buf, P, C, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        MPI_OK(MPI_Start(&q));
        EXPECT(MPI_Pready(0, q), MPI_ERR_REQUEST); /* a receive request */
        int flag;
        EXPECT(MPI_Parrived(q, P, &flag), MPI_ERR_ARG);
        EXPECT(MPI_Parrived(q, -1, &flag), MPI_ERR_ARG);
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        for (int i = 0; i < P * C; i++)
            CHECK(buf[i] == 7 * i, "buf[%d] = %d", i, buf[i]);
        MPI_OK(MPI_Request_free(&q));
    }
}

/* Sender total `sn` ints, receiver `rn`: the receive fails with `cls`, then a matching
 * pair on the same tag works. */
static void mismatch(int sn, int rn, int cls)
{
    int sbuf[64], rbuf[64];
    MPI_Request q;
    for (int i = 0; i < 64; i++) {
        sbuf[i] = i + 1;
        rbuf[i] = -1;
    }
    if (rank == 0) {
        MPI_OK(MPI_Psend_init(sbuf, 2, sn / 2, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        MPI_OK(MPI_Start(&q));
        MPI_OK(MPI_Pready_range(0, 1, q));
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Request_free(&q));
        MPI_OK(MPI_Psend_init(sbuf, 1, 8, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        MPI_OK(MPI_Start(&q));
        MPI_OK(MPI_Pready(0, q));
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Request_free(&q));
    } else if (rank == 1) {
        MPI_OK(MPI_Precv_init(rbuf, 2, rn / 2, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        MPI_OK(MPI_Start(&q));
        MPI_Status st;
        EXPECT(MPI_Wait(&q, &st), cls);
        if (EXACT_CLASSES) { /* the status counts what the buffer holds */
            int n = -1;
            MPI_Get_count(&st, MPI_INT, &n);
            CHECK(n == (sn < rn ? sn : rn), "mismatch %d/%d: status count %d", sn, rn, n);
        }
        MPI_OK(MPI_Request_free(&q));
        for (int i = 0; i < (sn < rn ? sn : 0); i++) /* a smaller sender's data arrive */
            CHECK(rbuf[i] == i + 1, "smaller sender: rbuf[%d] = %d", i, rbuf[i]);
        for (int i = 0; i < 64; i++)
            rbuf[i] = -1;
        MPI_OK(MPI_Precv_init(rbuf, 2, 4, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        MPI_OK(MPI_Start(&q));
        MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Request_free(&q));
        for (int i = 0; i < 8; i++)
            CHECK(rbuf[i] == i + 1, "after a mismatch: rbuf[%d] = %d", i, rbuf[i]);
    }
}

int main(int argc, char **argv)
{
    int size;
    tu_init(&argc, &argv);
    rank = tu_rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs 2 ranks");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    argument_errors();
    if (EXACT_CLASSES) /* MPICH 4.0.2 lets some through (a partition marked twice, ...) */
        state_errors();
    mismatch(20, 16, MPI_ERR_TRUNCATE);
    mismatch(8, 16, MPI_ERR_OTHER);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("partitioned_errors: OK\n");
    MPI_Finalize();
    return 0;
}
