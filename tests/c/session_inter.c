/* MPI_Intercomm_create_from_groups between the two halves of mpi://WORLD (leaders: the
 * last of the low half, the first of the high half), with point-to-point, a collective and
 * a merge on the result; a bad leader. With MPI_Init too: MPICH 4.0.2 crashes in
 * MPI_Intercomm_create_from_groups when only sessions are up (OxMPI does not care). */
#include "testutil.h"

static int rank, size;

static void intercomm(MPI_Group world)
{
    int half = size / 2;
    int lo[64], hi[64], nlo = 0, nhi = 0;
    for (int i = 0; i < size; i++) {
        if (i < half)
            lo[nlo++] = i;
        else
            hi[nhi++] = i;
    }
    MPI_Group glo, ghi;
    MPI_OK(MPI_Group_incl(world, nlo, lo, &glo));
    MPI_OK(MPI_Group_incl(world, nhi, hi, &ghi));
    int in_hi = rank >= half;
    MPI_Comm ic;
    /* Leaders: the last of the low half, the first of the high half. */
    MPI_OK(MPI_Intercomm_create_from_groups(in_hi ? ghi : glo, in_hi ? 0 : nlo - 1, in_hi ? glo : ghi, in_hi ? nlo - 1 : 0,
                                            "org.oxmpi.test.inter", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    int inter = 0, lsize, rsize, lrank;
    MPI_OK(MPI_Comm_test_inter(ic, &inter));
    MPI_OK(MPI_Comm_size(ic, &lsize));
    MPI_OK(MPI_Comm_remote_size(ic, &rsize));
    MPI_OK(MPI_Comm_rank(ic, &lrank));
    CHECK(inter && lsize == (in_hi ? nhi : nlo) && rsize == (in_hi ? nlo : nhi) && lrank == (in_hi ? rank - half : rank),
          "intercomm: inter %d size %d remote %d rank %d", inter, lsize, rsize, lrank);
    /* Rank i of each group exchanges with rank i of the other, if it exists. */
    if (lrank < rsize) {
        int out = 100 + rank, in = -1;
        MPI_OK(MPI_Sendrecv(&out, 1, MPI_INT, lrank, 1, &in, 1, MPI_INT, lrank, 1, ic, MPI_STATUS_IGNORE));
        int peer = in_hi ? lrank : half + lrank;
        CHECK(in == 100 + peer, "intercomm exchange: %d from %d", in, peer);
    }
    /* Allreduce on an intercommunicator: each group gets the other's sum. */
    long v = rank + 1, sum = 0, lo_sum = (long)nlo * (nlo + 1) / 2, all = (long)size * (size + 1) / 2;
    MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, ic));
    CHECK(sum == (in_hi ? lo_sum : all - lo_sum), "intercomm allreduce: %ld", sum);
    MPI_Comm merged;
    int mrank;
    MPI_OK(MPI_Intercomm_merge(ic, in_hi, &merged));
    MPI_OK(MPI_Comm_rank(merged, &mrank));
    CHECK(mrank == rank, "merged rank %d", mrank);
    MPI_OK(MPI_Comm_free(&merged));
    MPI_OK(MPI_Comm_free(&ic));

#if !(defined(MPICH_VERSION) && !defined(OXMPI))
    /* A bad leader (MPICH 4.0.2 does not check it and crashes). */
    MPI_Comm bad;
    int rc = MPI_Intercomm_create_from_groups(in_hi ? ghi : glo, 1000, in_hi ? glo : ghi, 0, "org.oxmpi.test.bad",
                                              MPI_INFO_NULL, MPI_ERRORS_RETURN, &bad);
    CHECK(tu_error_class(rc) == MPI_ERR_RANK, "local_leader 1000: class %d", rc == MPI_SUCCESS ? 0 : tu_error_class(rc));
#endif
    MPI_OK(MPI_Group_free(&glo));
    MPI_OK(MPI_Group_free(&ghi));
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Session session;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session));
    MPI_Group world;
    MPI_OK(MPI_Group_from_session_pset(session, "mpi://WORLD", &world));
    MPI_OK(MPI_Group_rank(world, &rank));
    MPI_OK(MPI_Group_size(world, &size));
    CHECK(size <= 64, "at most 64 processes");
    if (size >= 2)
        intercomm(world);
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Session_finalize(&session));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("session_inter: OK\n");
    return 0;
}
