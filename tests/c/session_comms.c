/* MPI-4.0 communicators from groups, without MPI_Init: two threads create communicators
 * at once over overlapping groups (all processes, and all but the first) with different
 * string tags, in opposite orders on even and odd processes, and use them at once with
 * checked values. */
#include "testutil.h"
#include <pthread.h>

static MPI_Session session;
static int rank, size;

struct job {
    MPI_Group group;
    const char *tag;
    int seed;
    int ok;
};

/* Creates a communicator over the job's group (if a member) and reduces on it. */
static void *run_job(void *p)
{
    struct job *j = p;
    int grank;
    MPI_OK(MPI_Group_rank(j->group, &grank));
    if (grank == MPI_UNDEFINED) {
        j->ok = 1;
        return NULL;
    }
    MPI_Comm c;
    MPI_OK(MPI_Comm_create_from_group(j->group, j->tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    int n, r;
    MPI_OK(MPI_Comm_size(c, &n));
    MPI_OK(MPI_Comm_rank(c, &r));
    CHECK(r == grank, "%s: rank %d, group rank %d", j->tag, r, grank);
    for (int it = 0; it < 20; it++) {
        long v = j->seed * 1000 + r + it, sum = 0;
        MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, c));
        long want = (long)n * (j->seed * 1000 + it) + (long)n * (n - 1) / 2;
        CHECK(sum == want, "%s: iteration %d sum %ld, expected %ld", j->tag, it, sum, want);
    }
    MPI_OK(MPI_Comm_free(&c));
    j->ok = 1;
    return NULL;
}

static void concurrent_creations(MPI_Group world)
{
    MPI_Group rest;
    int first = 0;
    MPI_OK(MPI_Group_excl(world, 1, &first, &rest));
    struct job jobs[2] = {{world, "org.oxmpi.test.all", 3, 0}, {rest, "org.oxmpi.test.rest", 5, 0}};
    if (size == 1)
        jobs[1].group = world; /* MPI_GROUP_EMPTY has no communicator; overlap with all */
    pthread_t t[2];
    /* Opposite start orders on even and odd processes. */
    int o = rank % 2;
    CHECK(pthread_create(&t[0], NULL, run_job, &jobs[o]) == 0, "pthread_create");
    CHECK(pthread_create(&t[1], NULL, run_job, &jobs[1 - o]) == 0, "pthread_create");
    pthread_join(t[0], NULL);
    pthread_join(t[1], NULL);
    CHECK(jobs[0].ok && jobs[1].ok, "a thread failed");
    if (rest != MPI_GROUP_EMPTY)
        MPI_OK(MPI_Group_free(&rest));
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
#if defined(MPICH_VERSION) && !defined(OXMPI)
    /* MPICH 4.0.2 asserts in MPI_Comm_create_from_group on a group other than mpi://WORLD
     * or mpi://SELF when only sessions are up: give it the World model. */
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
#endif
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE"));
    MPI_OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &session));
    MPI_OK(MPI_Info_free(&info));
    MPI_Group world;
    MPI_OK(MPI_Group_from_session_pset(session, "mpi://WORLD", &world));
    MPI_OK(MPI_Group_rank(world, &rank));
    MPI_OK(MPI_Group_size(world, &size));
    tu_rank = rank;
    CHECK(size <= 64, "at most 64 processes");

    concurrent_creations(world);

    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Session_finalize(&session));
#if defined(MPICH_VERSION) && !defined(OXMPI)
    MPI_Finalize();
#endif
    if (rank == 0)
        printf("session_comms: OK\n");
    return 0;
}
