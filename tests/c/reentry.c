/* reentry: a user reduction function calls MPI from inside MPI_Allreduce.
 *   reentry abort  - it calls MPI_Abort(MPI_COMM_WORLD, 9), which the standard
 *                    allows there: the job must exit with status 9.
 *   reentry call   - it calls MPI_Comm_rank, which the standard does not allow
 *                    there: OxMPI must stop the job with a message naming the
 *                    problem instead of deadlocking on itself.
 * A second argument "multiple" initialises with MPI_THREAD_MULTIPLE (where the
 * runtime is behind a mutex) instead of MPI_Init. */
#include "testutil.h"

static int mode_abort;

static void op_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    if (mode_abort) {
        fprintf(stderr, "reentry: user op calls MPI_Abort(MPI_COMM_WORLD, 9)\n");
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 9);
    } else {
        int r;
        fprintf(stderr, "reentry: user op calls MPI_Comm_rank\n");
        fflush(stderr);
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    }
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv)
{
    int rank, in, out = 0;
    MPI_Op op;
    if (argc > 2 && strcmp(argv[2], "multiple") == 0) {
        int provided = -1;
        MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
        if (provided != MPI_THREAD_MULTIPLE) {
            fprintf(stderr, "reentry: UNEXPECTED: provided thread level %d\n", provided);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    } else {
        tu_init(&argc, &argv);
    }
    mode_abort = argc > 1 && strcmp(argv[1], "abort") == 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    in = rank;
    MPI_Op_create(op_fn, 1, &op);
    MPI_Allreduce(&in, &out, 1, MPI_INT, op, MPI_COMM_WORLD);
    fprintf(stderr, "reentry: UNEXPECTED: MPI_Allreduce returned %d on rank %d\n", out, rank);
    MPI_Op_free(&op);
    MPI_Finalize();
    return 0;
}
