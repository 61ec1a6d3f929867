/* grequest: generalized requests (MPI_Grequest_start/complete) through every way a
 * request ends, each callback's calls counted:
 *  - MPI_Test before and after MPI_Grequest_complete; the status is query_fn's
 *    (MPI_Status_set_elements: 5 MPI_INTs; source/tag it sets), free_fn after it, the
 *    handle becomes MPI_REQUEST_NULL;
 *  - MPI_Request_get_status: flag 0 while pending, then query_fn's status, the request
 *    still alive (free_fn not yet); then MPI_Wait;
 *  - MPI_Waitall over a receive from the left neighbour and a generalized request;
 *    MPI_Waitany and MPI_Waitsome over two generalized requests;
 *  - MPI_Cancel: cancel_fn gets complete = 0, completes the request itself, and
 *    query_fn reports it cancelled (MPI_Test_cancelled);
 *  - MPI_Request_free while pending: free_fn runs at MPI_Grequest_complete, no query;
 *  - MPI_Wait in the main thread while a second thread completes the request 50 ms
 *    later (MPI_THREAD_MULTIPLE; a missed wake-up hangs: the launcher's timeout);
 *  - errors under MPI_ERRORS_RETURN: query_fn returning MPI_ERR_ARG makes MPI_Wait
 *    return class MPI_ERR_ARG and MPI_Waitall MPI_ERR_IN_STATUS with MPI_ERR_ARG in the
 *    status; MPI_Grequest_complete twice or on a receive request: MPI_ERR_REQUEST;
 *    MPI_Grequest_start with a NULL request: MPI_ERR_ARG. */
#include "testutil.h"

#include <pthread.h>
#include <time.h>

struct op {
    int queries, frees, cancels;
    int cancelled;  /* what query_fn reports */
    int query_rc;   /* what query_fn returns */
    MPI_Request self; /* for cancel_fn to complete */
};

static int query_fn(void *extra, MPI_Status *status)
{
    struct op *o = extra;
    o->queries++;
    MPI_Status_set_elements(status, MPI_INT, 5);
    MPI_Status_set_cancelled(status, o->cancelled);
    status->MPI_SOURCE = 77;
    status->MPI_TAG = 88;
    return o->query_rc;
}

static int free_fn(void *extra)
{
    ((struct op *)extra)->frees++;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    struct op *o = extra;
    o->cancels++;
    CHECK(!complete, "cancel_fn: complete = %d for a pending request", complete);
    o->cancelled = 1;
    return MPI_Grequest_complete(o->self);
}

static void start(struct op *o, MPI_Request *req)
{
    memset(o, 0, sizeof *o);
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, o, req));
    o->self = *req;
}

static void check_status(const MPI_Status *st, const char *what)
{
    int count = -1, cancelled = -1;
    MPI_OK(MPI_Get_count(st, MPI_INT, &count));
    MPI_OK(MPI_Test_cancelled(st, &cancelled));
    CHECK(count == 5 && st->MPI_SOURCE == 77 && st->MPI_TAG == 88 && !cancelled,
          "%s: count %d source %d tag %d cancelled %d, expected 5 77 88 0", what, count,
          st->MPI_SOURCE, st->MPI_TAG, cancelled);
}

static void *complete_later(void *arg)
{
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    MPI_OK(MPI_Grequest_complete(*(MPI_Request *)arg));
    return NULL;
}

static int error_class(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

int main(int argc, char **argv)
{
    int provided = -1, rank, nprocs, flag = -1;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    tu_rank = rank;
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d", provided);
    struct op a, b;
    MPI_Request r, rs[2];
    MPI_Status st, sts[2];

    /* Test before and after completion. */
    start(&a, &r);
    MPI_OK(MPI_Test(&r, &flag, &st));
    CHECK(flag == 0 && a.queries == 0 && a.frees == 0, "Test of a pending request: flag %d", flag);
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Test(&r, &flag, &st));
    CHECK(flag == 1 && r == MPI_REQUEST_NULL, "Test after completion: flag %d", flag);
    CHECK(a.queries == 1 && a.frees == 1, "Test: %d queries, %d frees", a.queries, a.frees);
    check_status(&st, "MPI_Test");

    /* Request_get_status leaves the request alive. */
    start(&a, &r);
    MPI_OK(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag == 0, "Request_get_status of a pending request: flag %d", flag);
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag == 1 && a.queries == 1 && a.frees == 0 && r != MPI_REQUEST_NULL,
          "Request_get_status: flag %d, %d queries, %d frees", flag, a.queries, a.frees);
    check_status(&st, "MPI_Request_get_status");
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(a.queries == 2 && a.frees == 1 && r == MPI_REQUEST_NULL, "Wait: %d queries, %d frees",
          a.queries, a.frees);
    check_status(&st, "MPI_Wait");

    /* Waitall with a real receive beside it. */
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs, in = -1;
    MPI_OK(MPI_Irecv(&in, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &rs[0]));
    start(&a, &rs[1]);
    MPI_OK(MPI_Send(&rank, 1, MPI_INT, right, 3, MPI_COMM_WORLD));
    MPI_OK(MPI_Grequest_complete(rs[1]));
    MPI_OK(MPI_Waitall(2, rs, sts));
    CHECK(in == left && sts[0].MPI_SOURCE == left, "Waitall: received %d from %d", in, sts[0].MPI_SOURCE);
    CHECK(a.queries == 1 && a.frees == 1 && rs[1] == MPI_REQUEST_NULL, "Waitall: %d queries, %d frees",
          a.queries, a.frees);
    check_status(&sts[1], "MPI_Waitall");

    /* Waitany, then Waitsome. */
    int idx = -1, outcount = -1, indices[2];
    start(&a, &rs[0]);
    start(&b, &rs[1]);
    MPI_OK(MPI_Grequest_complete(rs[1]));
    MPI_OK(MPI_Waitany(2, rs, &idx, &st));
    CHECK(idx == 1 && b.queries == 1 && b.frees == 1 && a.queries == 0, "Waitany: index %d", idx);
    check_status(&st, "MPI_Waitany");
    MPI_OK(MPI_Grequest_complete(rs[0]));
    MPI_OK(MPI_Waitsome(2, rs, &outcount, indices, sts));
    CHECK(outcount == 1 && indices[0] == 0 && a.queries == 1 && a.frees == 1,
          "Waitsome: %d completed, first index %d", outcount, indices[0]);
    check_status(&sts[0], "MPI_Waitsome");

    /* Cancel: the callback completes the request; the status says cancelled. */
    start(&a, &r);
    MPI_OK(MPI_Cancel(&r));
    CHECK(a.cancels == 1, "cancel_fn ran %d times", a.cancels);
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1 && a.frees == 1, "after MPI_Cancel: Test_cancelled %d, %d frees", flag, a.frees);

    /* Freed while pending: free_fn at completion, no query. */
    start(&a, &r);
    MPI_Request keep = r;
    MPI_OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL && a.frees == 0, "Request_free of a pending request: %d frees", a.frees);
    MPI_OK(MPI_Grequest_complete(keep));
    CHECK(a.frees == 1 && a.queries == 0, "completion of a freed request: %d frees, %d queries",
          a.frees, a.queries);

    /* Another thread completes it while this one waits (possibly asleep). */
    pthread_t th;
    start(&a, &r);
    MPI_Request shared = r;
    CHECK(pthread_create(&th, NULL, complete_later, &shared) == 0, "pthread_create failed");
    MPI_OK(MPI_Wait(&r, &st));
    pthread_join(th, NULL);
    CHECK(a.queries == 1 && a.frees == 1, "Wait for another thread: %d queries, %d frees",
          a.queries, a.frees);
    check_status(&st, "MPI_Wait (other thread)");

    /* Errors. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    start(&a, &r);
    a.query_rc = MPI_ERR_ARG;
    MPI_OK(MPI_Grequest_complete(r));
    int cls = error_class(MPI_Grequest_complete(r));
    CHECK(cls == MPI_ERR_REQUEST, "second MPI_Grequest_complete: class %d", cls);
    cls = error_class(MPI_Wait(&r, &st));
    CHECK(cls == MPI_ERR_ARG && a.frees == 1, "Wait with query_fn failing: class %d", cls);
    start(&a, &rs[0]);
    start(&b, &rs[1]);
    b.query_rc = MPI_ERR_ARG;
    MPI_OK(MPI_Grequest_complete(rs[0]));
    MPI_OK(MPI_Grequest_complete(rs[1]));
    cls = error_class(MPI_Waitall(2, rs, sts));
    CHECK(cls == MPI_ERR_IN_STATUS && sts[0].MPI_ERROR == MPI_SUCCESS && sts[1].MPI_ERROR == MPI_ERR_ARG,
          "Waitall with one query failing: class %d, errors %d %d", cls, sts[0].MPI_ERROR,
          sts[1].MPI_ERROR);
    MPI_OK(MPI_Irecv(&in, 1, MPI_INT, left, 4, MPI_COMM_WORLD, &r));
    cls = error_class(MPI_Grequest_complete(r));
    CHECK(cls == MPI_ERR_REQUEST, "MPI_Grequest_complete of a receive: class %d", cls);
    MPI_OK(MPI_Send(&rank, 1, MPI_INT, right, 4, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    cls = error_class(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &a, NULL));
    CHECK(cls == MPI_ERR_ARG, "MPI_Grequest_start(NULL request): class %d", cls);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("grequest: OK\n");
    MPI_Finalize();
    return 0;
}
