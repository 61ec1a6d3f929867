/* MPI-4.0 sessions without MPI_Init at all: two sessions at once, the process-set queries
 * ("mpi://WORLD", "mpi://SELF", case-insensitive names), a communicator from mpi://WORLD
 * doing point-to-point and collectives with checked values, one from mpi://SELF, the
 * World model staying uninitialised throughout; the `mpi_memory_alloc_kinds` each session
 * reports (MPI 4.1). */
#include "testutil.h"

/* A communicator over process set `pset` of session `s`, made with `tag`. */
static MPI_Comm comm_of_pset(MPI_Session s, const char *pset, const char *tag)
{
    MPI_Group g;
    MPI_Comm c;
    MPI_OK(MPI_Group_from_session_pset(s, pset, &g));
    MPI_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_OK(MPI_Group_free(&g));
    CHECK(c != MPI_COMM_NULL, "MPI_Comm_create_from_group gave MPI_COMM_NULL");
    return c;
}

/* Ring exchange, allreduce and bcast on `c`, every value checked. */
static void exercise(MPI_Comm c, int round)
{
    int rank, size;
    MPI_OK(MPI_Comm_rank(c, &rank));
    MPI_OK(MPI_Comm_size(c, &size));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[3] = {rank, round, 7 * rank + round}, in[3] = {-1, -1, -1};
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(out, 3, MPI_INT, right, 5, in, 3, MPI_INT, left, 5, c, &st));
    CHECK(in[0] == left && in[1] == round && in[2] == 7 * left + round, "ring: got %d %d %d from %d", in[0], in[1], in[2], left);
    CHECK_STATUS(&st, left, 5, MPI_INT, 3);
    long v = rank + 1, sum = 0;
    MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, c));
    CHECK(sum == (long)size * (size + 1) / 2, "allreduce: %ld, expected %ld", sum, (long)size * (size + 1) / 2);
    double b[4] = {0, 0, 0, 0};
    if (rank == size - 1)
        for (int i = 0; i < 4; i++)
            b[i] = 1.5 * i + round;
    MPI_OK(MPI_Bcast(b, 4, MPI_DOUBLE, size - 1, c));
    for (int i = 0; i < 4; i++)
        CHECK(b[i] == 1.5 * i + round, "bcast: b[%d] = %g", i, b[i]);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int flag = -1;
    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag == 0, "MPI_Initialized before anything: %d", flag);

    MPI_Info want;
    MPI_Session s1 = MPI_SESSION_NULL, s2 = MPI_SESSION_NULL;
    MPI_OK(MPI_Info_create(&want));
    MPI_OK(MPI_Info_set(want, "thread_level", "MPI_THREAD_MULTIPLE"));
    /* memory allocation kinds (MPI 4.1 §11.4.3): a supported one with restrictors, an
     * unsupported one */
    MPI_OK(MPI_Info_set(want, "mpi_memory_alloc_kinds", "mpi:win_allocate:alloc_mem,cuda:device"));
    MPI_OK(MPI_Session_init(want, MPI_ERRORS_RETURN, &s1));
    MPI_OK(MPI_Info_free(&want));
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    CHECK(s1 != MPI_SESSION_NULL && s2 != MPI_SESSION_NULL && s1 != s2, "session handles %#x %#x", (unsigned)s1, (unsigned)s2);
    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag == 0, "MPI_Initialized answers for the World model only: %d", flag);
    CHECK(MPI_Session_f2c(MPI_Session_c2f(s1)) == s1, "MPI_Session_c2f/f2c do not round-trip");

    /* The thread level asked for is provided. */
    MPI_Info used;
    char val[MPI_MAX_INFO_VAL];
    MPI_OK(MPI_Session_get_info(s1, &used));
    MPI_OK(MPI_Info_get(used, "thread_level", MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(flag && strcmp(val, "MPI_THREAD_MULTIPLE") == 0, "thread_level %s", flag ? val : "(none)");
    /* The kinds supported: mpi and system always, then those asked for that are supported. */
    MPI_OK(MPI_Info_get(used, "mpi_memory_alloc_kinds", MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(flag && strcmp(val, "mpi,system,mpi:win_allocate:alloc_mem") == 0,
          "mpi_memory_alloc_kinds of a session that asked for some: %s", flag ? val : "(none)");
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Session_get_info(s2, &used));
    MPI_OK(MPI_Info_get(used, "mpi_memory_alloc_kinds", MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(flag && strcmp(val, "mpi,system") == 0, "mpi_memory_alloc_kinds of a session: %s",
          flag ? val : "(none)");
    MPI_OK(MPI_Info_free(&used));

    /* Process sets: at least WORLD and SELF, with their sizes. */
    int n = 0, world_size = -1, got_world = 0, got_self = 0;
    MPI_OK(MPI_Session_get_num_psets(s2, MPI_INFO_NULL, &n));
    CHECK(n >= 2, "%d process sets", n);
    for (int i = 0; i < n; i++) {
        int len = 0;
        MPI_OK(MPI_Session_get_nth_pset(s2, MPI_INFO_NULL, i, &len, NULL));
        char *name = tu_malloc(len);
        int len2 = len;
        MPI_OK(MPI_Session_get_nth_pset(s2, MPI_INFO_NULL, i, &len2, name));
        CHECK((int)strlen(name) + 1 == len && len2 == len, "pset %d: \"%s\" len %d/%d", i, name, len, len2);
        MPI_Info pi;
        MPI_OK(MPI_Session_get_pset_info(s2, name, &pi));
        MPI_OK(MPI_Info_get(pi, "mpi_size", MPI_MAX_INFO_VAL - 1, val, &flag));
        CHECK(flag && atoi(val) > 0, "mpi_size of %s: %s", name, flag ? val : "(none)");
        if (strcmp(name, "mpi://WORLD") == 0) {
            got_world = 1;
            world_size = atoi(val);
        }
        if (strcmp(name, "mpi://SELF") == 0) {
            got_self = 1;
            CHECK(atoi(val) == 1, "mpi_size of mpi://SELF: %s", val);
        }
        MPI_OK(MPI_Info_free(&pi));
        free(name);
    }
    CHECK(got_world && got_self, "WORLD %d SELF %d", got_world, got_self);
    /* A name cut to the buffer given. */
    char shortname[5];
    int slen = sizeof shortname;
    MPI_OK(MPI_Session_get_nth_pset(s2, MPI_INFO_NULL, 0, &slen, shortname));
    CHECK(strlen(shortname) == 4 && strncmp(shortname, "mpi:", 4) == 0, "cut name \"%s\"", shortname);

    /* Groups from the process sets (names are case-insensitive). */
    MPI_Group wg, sg;
    int gsize, grank;
    MPI_OK(MPI_Group_from_session_pset(s1, "mpi://WORLD", &wg));
    MPI_OK(MPI_Group_size(wg, &gsize));
    MPI_OK(MPI_Group_rank(wg, &grank));
    CHECK(gsize == world_size && grank >= 0 && grank < gsize, "world group: size %d rank %d", gsize, grank);
    tu_rank = grank;
    MPI_OK(MPI_Group_from_session_pset(s1, "mpi://self", &sg));
    MPI_OK(MPI_Group_size(sg, &gsize));
    CHECK(gsize == 1, "self group size %d", gsize);
    MPI_OK(MPI_Group_free(&sg));
    MPI_OK(MPI_Group_free(&wg));

    /* Communicators from each session. */
    MPI_Comm world = comm_of_pset(s1, "mpi://WORLD", "org.oxmpi.test.session_basic.world");
    MPI_Comm self = comm_of_pset(s2, "MPI://SELF", "org.oxmpi.test.session_basic.self");
    int r, sz;
    MPI_OK(MPI_Comm_rank(world, &r));
    MPI_OK(MPI_Comm_size(world, &sz));
    CHECK(r == tu_rank && sz == world_size, "world comm: rank %d size %d", r, sz);
    MPI_OK(MPI_Comm_size(self, &sz));
    CHECK(sz == 1, "self comm size %d", sz);
    exercise(world, 1);
    exercise(self, 2);
    int x = 42, y = 0;
    MPI_Request req;
    MPI_OK(MPI_Irecv(&y, 1, MPI_INT, 0, 3, self, &req));
    MPI_OK(MPI_Send(&x, 1, MPI_INT, 0, 3, self));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(y == 42, "self send: %d", y);

    /* The second session ends while the first one's communicator works on. */
    MPI_OK(MPI_Comm_free(&self));
    MPI_OK(MPI_Session_finalize(&s2));
    CHECK(s2 == MPI_SESSION_NULL, "MPI_Session_finalize did not null the handle");
    exercise(world, 3);
    MPI_OK(MPI_Comm_free(&world));
    MPI_OK(MPI_Session_finalize(&s1));

    MPI_OK(MPI_Initialized(&flag));
    CHECK(flag == 0, "MPI_Initialized after sessions: %d", flag);
    MPI_OK(MPI_Finalized(&flag));
    CHECK(flag == 0, "MPI_Finalized after sessions: %d", flag);
    if (tu_rank == 0)
        printf("session_basic: OK\n");
    return 0;
}
