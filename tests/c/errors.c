/* errors: with MPI_ERRORS_RETURN on MPI_COMM_WORLD, erroneous calls return
 * the right error class instead of aborting, MPI_Error_string describes each,
 * and communication still works afterwards:
 *  - truncation (receive count smaller than the message), eager-sized and
 *    large, with MPI_Recv, MPI_Irecv + MPI_Wait, and MPI_Waitall
 *    (MPI_ERR_IN_STATUS, status.MPI_ERROR = MPI_ERR_TRUNCATE);
 *  - invalid rank (size, -5), invalid tag (negative), negative count,
 *    NULL buffer with a positive count, MPI_DATATYPE_NULL, MPI_COMM_NULL;
 *  - MPI_Waitall/MPI_Testall on an array holding a handle that is not a request
 *    (MPI_ERR_REQUEST), leaving the valid entries alone; every multiple-completion call
 *    (and MPI_Startall) with a negative count (MPI_ERR_COUNT) or a NULL array
 *    (MPI_ERR_ARG);
 *  - MPI_Waitall, Waitsome, Testall, Testsome, Request_get_status_all and _some return
 *    exactly the code MPI_ERR_IN_STATUS (not merely a code of that class) when a request
 *    failed, with the failed and the successful request's MPI_ERROR fields set.
 * Truncations go around the ring (send right, receive from left). */
#include "testutil.h"

static int rank, nprocs, right, left;

static void expect_class(int rc, int expected, const char *expected_name, const char *what)
{
    int cls = -1, len = -1;
    char msg[MPI_MAX_ERROR_STRING];
    CHECK(rc != MPI_SUCCESS, "%s returned MPI_SUCCESS, expected %s", what, expected_name);
    MPI_OK(MPI_Error_class(rc, &cls));
    memset(msg, 0, sizeof msg);
    MPI_OK(MPI_Error_string(rc, msg, &len));
    CHECK(cls == expected, "%s: error class %d, expected %s (%d); message: %s", what, cls,
          expected_name, expected, msg);
    CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(msg) == len,
          "%s: MPI_Error_string gave length %d for \"%s\"", what, len, msg);
    /* the class itself also has a description */
    memset(msg, 0, sizeof msg);
    MPI_OK(MPI_Error_string(cls, msg, &len));
    CHECK(len > 0 && (int)strlen(msg) == len, "%s: MPI_Error_string(class %d) is empty", what,
          cls);
}
#define EXPECT(call, cls) expect_class((call), cls, #cls, #call)

/* Send `size` bytes right; receive from the left with room for only `room`. */
static void truncation(int size, int room, int variant)
{
    unsigned char *sbuf = tu_malloc(size), *rbuf = tu_malloc(size);
    MPI_Request sreq, rreq;
    MPI_Status st;
    int tag = 100 + variant;
    tu_fill(sbuf, size, (uint32_t)(size + rank));
    MPI_OK(MPI_Isend(sbuf, size, MPI_BYTE, right, tag, MPI_COMM_WORLD, &sreq));
    if (variant == 0) {
        EXPECT(MPI_Recv(rbuf, room, MPI_BYTE, left, tag, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
    } else if (variant == 1) {
        MPI_OK(MPI_Irecv(rbuf, room, MPI_BYTE, left, tag, MPI_COMM_WORLD, &rreq));
        EXPECT(MPI_Wait(&rreq, &st), MPI_ERR_TRUNCATE);
    } else {
        MPI_Request reqs[2];
        MPI_Status sts[2];
        MPI_OK(MPI_Irecv(rbuf, room, MPI_BYTE, left, tag, MPI_COMM_WORLD, &reqs[0]));
        MPI_OK(MPI_Irecv(rbuf + room, 0, MPI_BYTE, MPI_PROC_NULL, tag, MPI_COMM_WORLD,
                         &reqs[1]));
        sts[0].MPI_ERROR = sts[1].MPI_ERROR = -1;
        EXPECT(MPI_Waitall(2, reqs, sts), MPI_ERR_IN_STATUS);
        int cls = -1;
        MPI_Error_class(sts[0].MPI_ERROR, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "Waitall: status[0].MPI_ERROR class %d, expected "
              "MPI_ERR_TRUNCATE", cls);
        CHECK(sts[1].MPI_ERROR == MPI_SUCCESS || sts[1].MPI_ERROR == MPI_ERR_PENDING,
              "Waitall: status[1].MPI_ERROR = %d for a successful request", sts[1].MPI_ERROR);
    }
    /* the sender is not affected by the receiver's truncation */
    MPI_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    free(sbuf);
    free(rbuf);
}

/* MPI 4.1's MPI_Request_get_status_all/_some (OxMPI has them; MPICH from 4.1). */
#if defined(OXMPI) || MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
#define IN_STATUS_CALLS 6
#else
#define IN_STATUS_CALLS 4
#endif

/* Two receives from this rank itself: reqs[0] truncated (room for 1 of 3 ints), reqs[1]
 * fine; then the multiple-completion call `which` must return MPI_ERR_IN_STATUS itself. */
static void in_status_exact(int which)
{
    static const char *names[] = {"MPI_Waitall", "MPI_Waitsome", "MPI_Testall",
                                  "MPI_Testsome", "MPI_Request_get_status_all",
                                  "MPI_Request_get_status_some"};
    int sbuf[3] = {1, 2, 3}, rbuf[4] = {-1, -1, -1, -1};
    MPI_Request reqs[2], sreqs[2];
    MPI_Status sts[2];
    int idx[2] = {-1, -1}, outcount = -1, flag = 0, rc = MPI_SUCCESS;
    MPI_OK(MPI_Irecv(rbuf, 1, MPI_INT, rank, 900, MPI_COMM_WORLD, &reqs[0]));
    MPI_OK(MPI_Irecv(rbuf + 1, 3, MPI_INT, rank, 901, MPI_COMM_WORLD, &reqs[1]));
    MPI_OK(MPI_Isend(sbuf, 3, MPI_INT, rank, 900, MPI_COMM_WORLD, &sreqs[0]));
    MPI_OK(MPI_Isend(sbuf, 3, MPI_INT, rank, 901, MPI_COMM_WORLD, &sreqs[1]));
    MPI_OK(MPI_Waitall(2, sreqs, MPI_STATUSES_IGNORE));
    sts[0].MPI_ERROR = sts[1].MPI_ERROR = -1;
    switch (which) {
    case 0: rc = MPI_Waitall(2, reqs, sts); outcount = 2; break;
    case 1: rc = MPI_Waitsome(2, reqs, &outcount, idx, sts); break;
    case 2:
        do rc = MPI_Testall(2, reqs, &flag, sts); while (rc == MPI_SUCCESS && !flag);
        outcount = 2;
        break;
    case 3:
        do rc = MPI_Testsome(2, reqs, &outcount, idx, sts); while (rc == MPI_SUCCESS && outcount == 0);
        break;
#if IN_STATUS_CALLS > 4
    case 4:
        do rc = MPI_Request_get_status_all(2, reqs, &flag, sts); while (rc == MPI_SUCCESS && !flag);
        outcount = 2;
        break;
    case 5:
        do rc = MPI_Request_get_status_some(2, reqs, &outcount, idx, sts);
        while (rc == MPI_SUCCESS && outcount == 0);
        break;
#endif
    }
    CHECK(rc == MPI_ERR_IN_STATUS, "%s returned %d, expected the code MPI_ERR_IN_STATUS (%d)",
          names[which], rc, MPI_ERR_IN_STATUS);
    CHECK(outcount == 2, "%s: outcount %d, expected 2", names[which], outcount);
    for (int i = 0; i < 2; i++) {
        int r = (which == 1 || which == 3 || which == 5) ? idx[i] : i; /* request of sts[i] */
        CHECK(r == 0 || r == 1, "%s: index %d", names[which], r);
        int cls = -1;
        MPI_OK(MPI_Error_class(sts[i].MPI_ERROR, &cls));
        /* a request the call did not get to may be left pending (MPICH does) */
        CHECK(r == 0 ? cls == MPI_ERR_TRUNCATE : cls == MPI_SUCCESS || cls == MPI_ERR_PENDING,
              "%s: status of request %d has MPI_ERROR %d (class %d)", names[which], r,
              sts[i].MPI_ERROR, cls);
        if (cls == MPI_ERR_PENDING)
            MPI_OK(MPI_Wait(&reqs[r], MPI_STATUS_IGNORE));
    }
    if (which >= 4) /* the get_status calls leave the requests alone */
        for (int i = 0; i < 2; i++)
            MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
    /* (what a truncated receive leaves in its buffer is not defined: MPICH writes nothing) */
    CHECK(rbuf[1] == 1 && rbuf[2] == 2 && rbuf[3] == 3, "%s: received data", names[which]);
}

/* after errors, normal traffic must still work */
static void ring_check(int round)
{
    int out = 1000 * round + rank, in = -1;
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, right, 7, &in, 1, MPI_INT, left, 7, MPI_COMM_WORLD,
                        &st));
    CHECK(in == 1000 * round + left, "after errors (round %d): got %d from rank %d", round, in,
          left);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    right = (rank + 1) % nprocs;
    left = (rank + nprocs - 1) % nprocs;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    /* MPI_SUCCESS and the classes themselves */
    int cls = -1, len = -1;
    char msg[MPI_MAX_ERROR_STRING];
    MPI_OK(MPI_Error_class(MPI_SUCCESS, &cls));
    CHECK(cls == MPI_SUCCESS, "MPI_Error_class(MPI_SUCCESS) = %d", cls);
    MPI_OK(MPI_Error_string(MPI_SUCCESS, msg, &len));
    CHECK(len > 0 && (int)strlen(msg) == len, "MPI_Error_string(MPI_SUCCESS) is empty");
    int classes[] = {MPI_ERR_TRUNCATE, MPI_ERR_RANK, MPI_ERR_TAG, MPI_ERR_COUNT, MPI_ERR_TYPE,
                     MPI_ERR_COMM, MPI_ERR_OTHER, MPI_ERR_IN_STATUS};
    for (unsigned i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        MPI_OK(MPI_Error_class(classes[i], &cls));
        CHECK(cls == classes[i], "MPI_Error_class(%d) = %d", classes[i], cls);
        CHECK(classes[i] > MPI_SUCCESS && classes[i] <= MPI_ERR_LASTCODE,
              "error class %d outside 1..MPI_ERR_LASTCODE", classes[i]);
    }

    for (int which = 0; which < IN_STATUS_CALLS; which++)
        in_status_exact(which);

    /* truncation: eager-sized and large, three ways each */
    for (int variant = 0; variant < 3; variant++) {
        truncation(64, 16, variant);
        truncation(2 * 1048576, 1000, variant);
        ring_check(variant);
    }

    int buf[4] = {0, 0, 0, 0};
    MPI_Request req;
    MPI_Status st;
    /* invalid rank */
    EXPECT(MPI_Send(buf, 1, MPI_INT, nprocs, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Send(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Recv(buf, 1, MPI_INT, nprocs, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    EXPECT(MPI_Recv(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    EXPECT(MPI_Isend(buf, 1, MPI_INT, nprocs + 3, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK);
    EXPECT(MPI_Irecv(buf, 1, MPI_INT, nprocs, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK);
    EXPECT(MPI_Ssend(buf, 1, MPI_INT, nprocs, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    /* invalid tag */
    EXPECT(MPI_Send(buf, 1, MPI_INT, right, -7, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT(MPI_Send(buf, 1, MPI_INT, right, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT(MPI_Recv(buf, 1, MPI_INT, left, -7, MPI_COMM_WORLD, &st), MPI_ERR_TAG);
    EXPECT(MPI_Isend(buf, 1, MPI_INT, right, -100, MPI_COMM_WORLD, &req), MPI_ERR_TAG);
    /* negative count */
    EXPECT(MPI_Send(buf, -1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Recv(buf, -3, MPI_INT, left, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    EXPECT(MPI_Irecv(buf, -3, MPI_INT, left, 0, MPI_COMM_WORLD, &req), MPI_ERR_COUNT);
    /* NULL buffer with a positive count */
    EXPECT(MPI_Send(NULL, 2, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Irecv(NULL, 2, MPI_INT, left, 0, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER);
    /* a handle that is not a request, next to a valid one */
    {
        MPI_Request reqs[2];
        int flag = -1;
        MPI_OK(MPI_Irecv(buf, 1, MPI_INT, MPI_ANY_SOURCE, 55, MPI_COMM_WORLD, &reqs[0]));
        reqs[1] = (MPI_Request)0x12345;
        EXPECT(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
        EXPECT(MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
        CHECK(reqs[0] != MPI_REQUEST_NULL, "a failed MPI_Waitall released a valid request");
        MPI_OK(MPI_Send(&rank, 1, MPI_INT, right, 55, MPI_COMM_WORLD));
        MPI_OK(MPI_Wait(&reqs[0], &st));
        CHECK(buf[0] == left && st.MPI_SOURCE == left, "MPI_ANY_SOURCE receive got %d from %d",
              buf[0], st.MPI_SOURCE);
    }
    /* the multiple-completion calls: a negative count, and a NULL array with a positive
     * count (MPICH: MPI_ERR_COUNT, MPI_ERR_ARG); a NULL array with count 0 is fine */
    {
        MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        int flag, idx, out, ind[2];
        MPI_Status sts[2];
        EXPECT(MPI_Waitall(-1, reqs, MPI_STATUSES_IGNORE), MPI_ERR_COUNT);
        EXPECT(MPI_Testall(-1, reqs, &flag, MPI_STATUSES_IGNORE), MPI_ERR_COUNT);
        EXPECT(MPI_Waitany(-1, reqs, &idx, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
        EXPECT(MPI_Testany(-1, reqs, &idx, &flag, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
        EXPECT(MPI_Waitsome(-1, reqs, &out, ind, sts), MPI_ERR_COUNT);
        EXPECT(MPI_Testsome(-1, reqs, &out, ind, sts), MPI_ERR_COUNT);
        EXPECT(MPI_Startall(-1, reqs), MPI_ERR_COUNT);
        EXPECT(MPI_Waitall(2, NULL, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
        EXPECT(MPI_Testany(2, NULL, &idx, &flag, MPI_STATUS_IGNORE), MPI_ERR_ARG);
        EXPECT(MPI_Startall(2, NULL), MPI_ERR_ARG);
        MPI_OK(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));
        MPI_OK(MPI_Startall(0, NULL));
    }
    /* null datatype */
    EXPECT(MPI_Send(buf, 1, MPI_DATATYPE_NULL, right, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Recv(buf, 1, MPI_DATATYPE_NULL, left, 0, MPI_COMM_WORLD, &st), MPI_ERR_TYPE);
    /* null communicator (reported through MPI_COMM_WORLD's handler) */
    EXPECT(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM);
    EXPECT(MPI_Comm_rank(MPI_COMM_NULL, &cls), MPI_ERR_COMM);

    ring_check(10);
    if (rank == 0)
        printf("errors: OK (%d ranks)\n", nprocs);
    MPI_Finalize();
    return 0;
}
