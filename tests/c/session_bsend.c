/* MPI 4.1 sessions' buffers for buffered sends: a communicator made from a session's
 * process set (and one duplicated, idup-ed or split from it) uses the session's buffer, the World
 * Model's communicators do not (the process buffer), a communicator's own buffer takes
 * precedence; MPI_Session_detach_buffer returns what was attached after the pending
 * messages left, MPI_Session_flush_buffer / iflush_buffer wait for them,
 * MPI_Session_finalize detaches; errors go to the session's handler (MPI_ERRORS_RETURN). */
#include "testutil.h"

static int rank, size;

/* Buffered-sends `n` ints around the ring of `comm` and receives them: MPI_SUCCESS or the
 * Bsend's error class (the receive is then skipped on every rank: the class must agree). */
static int ring_bsend(MPI_Comm comm, int n, int tag)
{
    int *s = tu_malloc(sizeof(int) * (size_t)n), *r = tu_malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        s[i] = rank * 100000 + tag * 1000 + i;
    int rc = MPI_Bsend(s, n, MPI_INT, (rank + 1) % size, tag, comm);
    int cls = tu_error_class(rc), all = 0;
    MPI_OK(MPI_Allreduce(&cls, &all, 1, MPI_INT, MPI_MAX, comm));
    if (cls == MPI_SUCCESS && all == MPI_SUCCESS) {
        int left = (rank + size - 1) % size;
        MPI_OK(MPI_Recv(r, n, MPI_INT, left, tag, comm, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++)
            CHECK(r[i] == left * 100000 + tag * 1000 + i, "tag %d: element %d is %d", tag, i, r[i]);
    } else if (cls == MPI_SUCCESS) {
        /* another rank's send failed: drain ours */
        MPI_OK(MPI_Recv(r, n, MPI_INT, (rank + size - 1) % size, tag, comm, MPI_STATUS_IGNORE));
    }
    free(s);
    free(r);
    return cls;
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    MPI_Session s;
    MPI_Group g;
    MPI_Comm sc, dup, half;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    MPI_OK(MPI_Comm_create_from_group(g, "oxmpi.test.session_bsend", MPI_INFO_NULL, MPI_ERRORS_RETURN, &sc));
    MPI_OK(MPI_Group_free(&g));

    /* No buffer anywhere: a buffered send fails. */
    CHECK(ring_bsend(sc, 4, 1) == MPI_ERR_BUFFER, "Bsend without any buffer");

    /* The session's buffer: room for one message of 64 ints. */
    int sbytes = 64 * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
    char *sbuf = tu_malloc((size_t)sbytes);
    MPI_OK(MPI_Session_attach_buffer(s, sbuf, sbytes));
    CHECK(tu_error_class(MPI_Session_attach_buffer(s, sbuf, sbytes)) == MPI_ERR_BUFFER,
          "a second MPI_Session_attach_buffer");
    CHECK(ring_bsend(sc, 64, 2) == MPI_SUCCESS, "Bsend of 64 ints through the session buffer");
    int over = sbytes / (int)sizeof(int) + 1; /* ints that cannot fit */
    CHECK(ring_bsend(sc, over, 3) == MPI_ERR_BUFFER, "Bsend larger than the session buffer");
    /* ... also on communicators derived from the session's */
    MPI_OK(MPI_Comm_dup(sc, &dup));
    MPI_OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_split(sc, rank % 2, rank, &half));
    MPI_OK(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
    CHECK(ring_bsend(dup, 64, 4) == MPI_SUCCESS, "Bsend on a duplicate");
    CHECK(ring_bsend(dup, over, 5) == MPI_ERR_BUFFER, "Bsend on a duplicate, too large");
    {
        MPI_Comm idup;
        MPI_Request rq;
        MPI_OK(MPI_Comm_idup(sc, &idup, &rq));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Comm_set_errhandler(idup, MPI_ERRORS_RETURN));
        CHECK(ring_bsend(idup, 64, 14) == MPI_SUCCESS, "Bsend on an MPI_Comm_idup duplicate");
        CHECK(ring_bsend(idup, over, 15) == MPI_ERR_BUFFER, "Bsend on an idup duplicate, too large");
        MPI_OK(MPI_Comm_free(&idup));
    }
    {
        int hs;
        MPI_Comm_size(half, &hs);
        int hr, cls;
        MPI_Comm_rank(half, &hr);
        int x = 7;
        MPI_Request rq;
        MPI_OK(MPI_Irecv(&cls, 1, MPI_INT, (hr + hs - 1) % hs, 6, half, &rq));
        MPI_OK(MPI_Bsend(&x, 1, MPI_INT, (hr + 1) % hs, 6, half));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECK(cls == 7, "Bsend on a split communicator: got %d", cls);
    }
    /* ... but not on the World Model's communicators (no process buffer attached). */
    CHECK(ring_bsend(MPI_COMM_WORLD, 4, 7) == MPI_ERR_BUFFER, "Bsend on MPI_COMM_WORLD used the session buffer");

    /* A communicator's own buffer comes first. */
    MPI_OK(MPI_Comm_attach_buffer(dup, MPI_BUFFER_AUTOMATIC, 0));
    CHECK(ring_bsend(dup, 10000, 8) == MPI_SUCCESS, "Bsend through the duplicate's own automatic buffer");
    CHECK(ring_bsend(sc, over, 9) == MPI_ERR_BUFFER, "the session's communicator kept the session buffer");

    /* Flushes and detach: a message pending in the session buffer until the receive. */
    {
        int x = 42, y = -1, right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_Request fl;
        int flag = 0;
        MPI_OK(MPI_Bsend(&x, 1, MPI_INT, right, 10, sc));
        MPI_OK(MPI_Session_iflush_buffer(s, &fl));
        MPI_OK(MPI_Recv(&y, 1, MPI_INT, left, 10, sc, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&fl, MPI_STATUS_IGNORE));
        CHECK(y == 42, "message through the session buffer: %d", y);
        MPI_OK(MPI_Bsend(&x, 1, MPI_INT, right, 11, sc));
        MPI_OK(MPI_Recv(&y, 1, MPI_INT, left, 11, sc, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Session_flush_buffer(s));
        (void)flag;
    }
    void *addr = NULL;
    int got = -1;
    MPI_OK(MPI_Session_detach_buffer(s, &addr, &got));
    CHECK(addr == sbuf && got == sbytes, "MPI_Session_detach_buffer gave %p, %d (attached %p, %d)",
          addr, got, (void *)sbuf, sbytes);
    MPI_OK(MPI_Session_detach_buffer(s, &addr, &got));
    CHECK(addr == NULL && got == 0, "detach with nothing attached gave %p, %d", addr, got);
    CHECK(ring_bsend(sc, 4, 12) == MPI_ERR_BUFFER, "Bsend after the session buffer was detached");

    /* The _c forms and MPI_BUFFER_AUTOMATIC; MPI_Session_finalize detaches. */
    MPI_OK(MPI_Session_attach_buffer_c(s, MPI_BUFFER_AUTOMATIC, 0));
    CHECK(ring_bsend(sc, 20000, 13) == MPI_SUCCESS, "Bsend through an automatic session buffer");
    MPI_Count gc = -1;
    MPI_OK(MPI_Session_detach_buffer_c(s, &addr, &gc));
    CHECK(addr == MPI_BUFFER_AUTOMATIC && gc == 0, "detach_c of an automatic buffer gave %p, %lld", addr, (long long)gc);
    MPI_OK(MPI_Session_attach_buffer(s, sbuf, sbytes));
    MPI_OK(MPI_Comm_free(&half));
    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Comm_free(&sc));
    MPI_OK(MPI_Session_finalize(&s));

    /* A new session starts without a buffer, even if it reuses the handle. */
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_OK(MPI_Session_detach_buffer(s, &addr, &got));
    CHECK(addr == NULL && got == 0, "a new session had a buffer: %p, %d", addr, got);
    MPI_OK(MPI_Session_finalize(&s));
    free(sbuf);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("session_bsend: OK\n");
    MPI_Finalize();
    return 0;
}
