/* Argument errors and the handler they run:
 *  - a communicator or window whose handler was never set runs MPI_COMM_WORLD's handler of
 *    the moment (MPICH), so setting MPI_ERRORS_RETURN on MPI_COMM_WORLD also covers
 *    communicators duplicated or split from it earlier, and windows; their
 *    MPI_*_get_errhandler still says MPI_ERRORS_ARE_FATAL. A user handler on
 *    MPI_COMM_WORLD is then called with MPI_COMM_WORLD. A handler set on the object wins. */
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

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    unset_handlers_follow_world();

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("errors_args: OK (%d ranks)\n", size);
    MPI_Finalize();
    return 0;
}
