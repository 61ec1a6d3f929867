/* MPI-4.0 sessions started again after the last one ended, without MPI_Init (MPI 4.0
 * §11.3.1: "multiple sessions can be created and destroyed during the lifetime of an MPI
 * process"), each time with a communicator from mpi://WORLD carrying checked traffic.
 * MPICH 4.0.2 crashes in the second MPI_Session_init. */
#include "testutil.h"

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    for (int round = 0; round < 3; round++) {
        MPI_Session s;
        MPI_Group g;
        MPI_Comm c;
        int rank, size;
        MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
        MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
        MPI_OK(MPI_Comm_create_from_group(g, "org.oxmpi.test.session_reinit", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
        MPI_OK(MPI_Group_free(&g));
        MPI_OK(MPI_Comm_rank(c, &rank));
        MPI_OK(MPI_Comm_size(c, &size));
        tu_rank = rank;
        int out = round * 100 + rank, in = -1, left = (rank + size - 1) % size;
        MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, (rank + 1) % size, 0, &in, 1, MPI_INT, left, 0, c, MPI_STATUS_IGNORE));
        CHECK(in == round * 100 + left, "round %d: got %d from %d", round, in, left);
        int sum = -1;
        MPI_OK(MPI_Allreduce(&round, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK(sum == round * size, "round %d: allreduce %d", round, sum);
        MPI_OK(MPI_Comm_free(&c));
        MPI_OK(MPI_Session_finalize(&s));
        int flag = -1;
        MPI_OK(MPI_Initialized(&flag));
        CHECK(flag == 0, "MPI_Initialized between sessions: %d", flag);
        if (rank == 0 && round == 2)
            printf("session_reinit: OK\n");
    }
    return 0;
}
