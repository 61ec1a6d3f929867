/* mpmd PART LAYOUT: one program of an MPMD job (`mpirun -n 2 mpmd 0 L : -n 3 mpmd 1 L`).
 * PART is the index of the command-line part this rank runs; LAYOUT lists every rank's
 * part ("0,0,1,1,1"). Checks: MPI_APPNUM is PART, the part's own -env variable MPMD_PART is
 * PART and the job's -genv MPMD_JOB is "all", the ranks of one MPI_COMM_WORLD follow the
 * layout (gathered on rank 0), and a message crosses from every part to every other. */
#include "testutil.h"

#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, *appnum, flag;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc == 3, "usage: mpmd PART LAYOUT");
    int part = atoi(argv[1]);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
    CHECK(flag && *appnum == part, "MPI_APPNUM %d (flag %d), expected %d", flag ? *appnum : -1, flag, part);
    const char *mine = getenv("MPMD_PART"), *job = getenv("MPMD_JOB");
    CHECK(mine && atoi(mine) == part, "MPMD_PART=%s in part %d", mine ? mine : "(unset)", part);
    CHECK(job && strcmp(job, "all") == 0, "MPMD_JOB=%s", job ? job : "(unset)");

    int want[64], n = 0;
    for (char *s = strtok(argv[2], ","); s && n < 64; s = strtok(NULL, ","))
        want[n++] = atoi(s);
    CHECK(n == size, "layout of %d ranks in a world of %d", n, size);
    CHECK(want[rank] == part, "rank %d runs part %d, the layout says %d", rank, part, want[rank]);
    int parts[64];
    MPI_OK(MPI_Gather(&part, 1, MPI_INT, parts, 1, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int r = 0; r < size; r++)
            CHECK(parts[r] == want[r], "rank %d gathered part %d, expected %d", r, parts[r], want[r]);
    /* Every rank sends its part to the next rank around the ring: parts talk to parts. */
    int got = -1;
    MPI_OK(MPI_Sendrecv(&part, 1, MPI_INT, (rank + 1) % size, 5, &got, 1, MPI_INT, (rank + size - 1) % size, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == want[(rank + size - 1) % size], "from the left neighbour: part %d", got);
    int total = 0;
    MPI_OK(MPI_Allreduce(&part, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    int expect = 0;
    for (int r = 0; r < size; r++)
        expect += want[r];
    CHECK(total == expect, "sum of parts %d, expected %d", total, expect);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpmd: OK (%d ranks)\n", size);
    MPI_Finalize();
    return 0;
}
