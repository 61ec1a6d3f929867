/* Communicator construction: split by colour/key ordering, split_type shared and the
 * MPI 4 hardware types (guided by mpi_hw_resource_type=mpi_shared_memory: the shared
 * split; no or an unknown resource: MPI_COMM_NULL; unguided: MPI_COMM_NULL or a strict
 * subset of ranks on my host, tagged with mpi_hw_resource_type), create,
 * create_group, compare, names, dup/idup, intercommunicators (create, merge,
 * point-to-point across). */
#include "testutil.h"

int main(int argc, char **argv)
{
    int rank, size;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* Split: colour rank % 3, key -rank (reverse order inside each colour). */
    MPI_Comm sub;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 3, -rank, &sub));
    int srank, ssize, expect_size = 0, expect_rank = 0;
    for (int r = 0; r < size; r++)
        if (r % 3 == rank % 3) {
            expect_size++;
            if (r > rank)
                expect_rank++;
        }
    MPI_Comm_rank(sub, &srank);
    MPI_Comm_size(sub, &ssize);
    CHECK(ssize == expect_size && srank == expect_rank, "split: rank %d size %d, expected %d/%d", srank, ssize, expect_rank, expect_size);
    /* Traffic inside the split: everyone sums world ranks of its colour. */
    int sum = 0, esum = 0;
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, sub));
    for (int r = rank % 3; r < size; r += 3)
        esum += r;
    CHECK(sum == esum, "allreduce on split: %d != %d", sum, esum);
    int cmp;
    MPI_OK(MPI_Comm_compare(sub, sub, &cmp));
    CHECK(cmp == MPI_IDENT, "compare self: %d", cmp);
    MPI_OK(MPI_Comm_free(&sub));
    CHECK(sub == MPI_COMM_NULL, "free did not null the handle");

    /* MPI_UNDEFINED gives MPI_COMM_NULL. */
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &sub));
    CHECK((rank == 0) == (sub != MPI_COMM_NULL), "undefined colour");
    if (sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);

    /* Split type shared: every rank on my node (by processor name) is in my communicator. */
    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int len;
    MPI_Get_processor_name(name, &len);
    char *names = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
    MPI_OK(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD));
    int same = 0;
    for (int r = 0; r < size; r++)
        same += strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME, name) == 0;
    int nsize;
    MPI_Comm_size(node, &nsize);
    CHECK(nsize == same, "split_type shared: size %d, %d ranks share my host", nsize, same);
    MPI_Comm_free(&node);

    /* Hardware-guided: "mpi_shared_memory" is the shared split (MPI 4.1 reserves it);
     * without the hint, or with a resource nobody has, every rank gets MPI_COMM_NULL. */
    MPI_Info hint;
    char val[MPI_MAX_INFO_VAL];
    int flag;
    MPI_OK(MPI_Info_create(&hint));
    MPI_OK(MPI_Info_set(hint, "mpi_hw_resource_type", "mpi_shared_memory"));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, hint, &node));
    CHECK(node != MPI_COMM_NULL, "hw_guided mpi_shared_memory gave MPI_COMM_NULL");
    MPI_Comm_size(node, &nsize);
    CHECK(nsize == same, "hw_guided mpi_shared_memory: size %d, %d ranks share my host", nsize, same);
    MPI_Comm_free(&node);
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, MPI_INFO_NULL, &node));
    CHECK(node == MPI_COMM_NULL, "hw_guided without mpi_hw_resource_type gave a communicator");
    MPI_OK(MPI_Info_set(hint, "mpi_hw_resource_type", "oxmpi_no_such_resource"));
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, hint, &node));
    CHECK(node == MPI_COMM_NULL, "hw_guided with an unknown resource gave a communicator");
    MPI_OK(MPI_Info_free(&hint));
    /* Hardware-unguided: a strict subset of the parent sharing some hardware (so within my
     * host), named in the info hint; MPI_COMM_NULL when nothing finer exists. */
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, rank, MPI_INFO_NULL, &node));
    if (node != MPI_COMM_NULL) {
        MPI_Comm_size(node, &nsize);
        CHECK(nsize < size && nsize <= same, "hw_unguided: size %d of %d, %d ranks share my host", nsize, size, same);
        MPI_OK(MPI_Comm_get_info(node, &hint));
        MPI_OK(MPI_Info_get(hint, "mpi_hw_resource_type", MPI_MAX_INFO_VAL - 1, val, &flag));
        CHECK(flag, "hw_unguided: no mpi_hw_resource_type on the new communicator");
        MPI_OK(MPI_Info_free(&hint));
        MPI_Comm_free(&node);
    } else {
        /* OxMPI knows no level below the host: NULL exactly when all ranks share it. */
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        MPI_Get_library_version(lib, &len);
        CHECK(!strstr(lib, "OxMPI") || same == size, "hw_unguided gave MPI_COMM_NULL across %d hosts' ranks", size);
    }
    free(names);

    /* Dup: congruent, separate traffic; names. */
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_OK(MPI_Comm_compare(MPI_COMM_WORLD, d, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "dup compare: %d", cmp);
    MPI_OK(MPI_Comm_set_name(d, "my dup"));
    char cname[MPI_MAX_OBJECT_NAME];
    MPI_OK(MPI_Comm_get_name(d, cname, &len));
    CHECK(strcmp(cname, "my dup") == 0 && len == 6, "name \"%s\" %d", cname, len);
    MPI_OK(MPI_Comm_get_name(MPI_COMM_WORLD, cname, &len));
    CHECK(strcmp(cname, "MPI_COMM_WORLD") == 0, "world name \"%s\"", cname);
    if (size > 1) {
        /* A message on the dup must not match a receive on world. */
        int a = 1, b = 2, x = -1, y = -1;
        if (rank == 0) {
            MPI_OK(MPI_Send(&a, 1, MPI_INT, 1, 5, d));
            MPI_OK(MPI_Send(&b, 1, MPI_INT, 1, 5, MPI_COMM_WORLD));
        } else if (rank == 1) {
            MPI_OK(MPI_Recv(&y, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Recv(&x, 1, MPI_INT, 0, 5, d, MPI_STATUS_IGNORE));
            CHECK(x == 1 && y == 2, "dup traffic crossed: %d %d", x, y);
        }
    }
    int inter;
    MPI_OK(MPI_Comm_test_inter(d, &inter));
    CHECK(!inter, "dup is not an intercomm");
    MPI_Comm_free(&d);

    MPI_Request req;
    MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Barrier(d));
    MPI_Comm_free(&d);

    /* Comm_create with the even ranks in reverse order. */
    MPI_Group wg, eg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int ne = (size + 1) / 2, evens[64];
    for (int i = 0; i < ne; i++)
        evens[i] = 2 * (ne - 1 - i);
    MPI_Group_incl(wg, ne, evens, &eg);
    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, eg, &sub));
    if (rank % 2 == 0) {
        MPI_Comm_rank(sub, &srank);
        CHECK(srank == ne - 1 - rank / 2, "create: rank %d", srank);
        MPI_Comm_free(&sub);
    } else
        CHECK(sub == MPI_COMM_NULL, "create: odd rank got a communicator");
    /* Comm_create_group: only the evens call it. */
    if (rank % 2 == 0) {
        MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, eg, 7, &sub));
        MPI_Comm_rank(sub, &srank);
        CHECK(srank == ne - 1 - rank / 2, "create_group: rank %d", srank);
        int one = 1, n = 0;
        MPI_OK(MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, sub));
        CHECK(n == ne, "create_group allreduce %d", n);
        MPI_Comm_free(&sub);
    }
    MPI_Group_free(&eg);
    MPI_Group_free(&wg);

    /* Intercommunicator between the lower and upper halves. */
    if (size >= 2) {
        int low = rank < size / 2;
        MPI_Comm half, ic, merged;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half));
        int remote_leader = low ? size / 2 : 0;
        MPI_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 99, &ic));
        MPI_OK(MPI_Comm_test_inter(ic, &inter));
        CHECK(inter, "intercomm test_inter");
        int lsize, rsize, irank;
        MPI_Comm_size(ic, &lsize);
        MPI_Comm_remote_size(ic, &rsize);
        MPI_Comm_rank(ic, &irank);
        int elsize = low ? size / 2 : size - size / 2;
        CHECK(lsize == elsize && rsize == size - elsize, "intercomm sizes %d %d", lsize, rsize);
        MPI_Group rg;
        MPI_OK(MPI_Comm_remote_group(ic, &rg));
        int rgs;
        MPI_Group_size(rg, &rgs);
        CHECK(rgs == rsize, "remote group size %d", rgs);
        MPI_Group_free(&rg);
        /* Point-to-point across: local rank i sends to remote rank i % rsize. */
        int token = rank * 10, got = -1;
        MPI_Request rq[2];
        int nrecv = 0;
        for (int i = 0; i < rsize; i++)
            if (i % lsize == irank) nrecv++;
        /* Each remote i with i % lsize == irank sends to me. */
        MPI_OK(MPI_Isend(&token, 1, MPI_INT, irank % rsize, 3, ic, &rq[0]));
        for (int i = 0; i < rsize; i++)
            if (i % lsize == irank) {
                MPI_Status st;
                MPI_OK(MPI_Recv(&got, 1, MPI_INT, i, 3, ic, &st));
                int remote_world = low ? size / 2 + i : i;
                CHECK(got == remote_world * 10 && st.MPI_SOURCE == i, "intercomm recv %d from %d", got, st.MPI_SOURCE);
            }
        MPI_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        (void)nrecv;
        /* Dup of an intercomm, then merge: low group first (high = !low). */
        MPI_Comm icd;
        MPI_OK(MPI_Comm_dup(ic, &icd));
        MPI_OK(MPI_Intercomm_merge(icd, !low, &merged));
        int mrank, msize;
        MPI_Comm_rank(merged, &mrank);
        MPI_Comm_size(merged, &msize);
        CHECK(msize == size && mrank == rank, "merge: rank %d size %d", mrank, msize);
        int s2 = 0;
        MPI_OK(MPI_Allreduce(&rank, &s2, 1, MPI_INT, MPI_SUM, merged));
        CHECK(s2 == size * (size - 1) / 2, "allreduce on merged %d", s2);
        MPI_Comm_free(&merged);
        /* Merge with high reversed: the upper half comes first. */
        MPI_OK(MPI_Intercomm_merge(ic, low, &merged));
        MPI_Comm_rank(merged, &mrank);
        int em = low ? (size - size / 2) + rank : rank - size / 2;
        CHECK(mrank == em, "merge reversed: rank %d expected %d", mrank, em);
        MPI_Comm_free(&merged);
        MPI_Comm_free(&icd);
        MPI_Comm_free(&ic);
        MPI_Comm_free(&half);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("comm_split: OK\n");
    MPI_Finalize();
    return 0;
}
