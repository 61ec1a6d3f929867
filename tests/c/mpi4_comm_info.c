/* MPI-4.0 MPI_Comm_idup_with_info (the duplicate gets the info's hints, not the parent's,
 * and works as a communicator) and MPI_Info_create_env (before MPI_Init, after it, and
 * after MPI_Finalize: the keys of MPI_INFO_ENV); MPI 4.1's `mpi_memory_alloc_kinds` on
 * MPI_COMM_WORLD and MPI_COMM_SELF. */
#include "testutil.h"

static void get(MPI_Info info, const char *key, char *val, int *flag)
{
    int len = MPI_MAX_INFO_VAL;
    MPI_OK(MPI_Info_get_string(info, key, &len, val, flag));
}

int main(int argc, char **argv)
{
    char v1[MPI_MAX_INFO_VAL], v2[MPI_MAX_INFO_VAL];
    int f1, f2;
    MPI_Info before, after, penv;
    MPI_OK(MPI_Info_create_env(argc, argv, &before));
    get(before, "command", v1, &f1);
    CHECK(f1 && strstr(v1, "mpi4_comm_info"), "command before MPI_Init: %s", f1 ? v1 : "(absent)");

    tu_init(&argc, &argv);
    int rank = tu_rank, size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_OK(MPI_Info_create_env(0, NULL, &after));
    static const char *keys[] = {"command", "argv", "maxprocs", "arch", "wdir", "host", "thread_level"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        get(before, keys[i], v1, &f1);
        get(after, keys[i], v2, &f2);
        CHECK(f1 == f2 && (!f1 || !strcmp(v1, v2)), "key %s differs: %s / %s", keys[i], v1, v2);
        int len = MPI_MAX_INFO_VAL;
        MPI_OK(MPI_Info_get_string(MPI_INFO_ENV, keys[i], &len, v2, &f2));
        CHECK(f1 == f2 && (!f1 || !strcmp(v1, v2)), "key %s differs from MPI_INFO_ENV", keys[i]);
    }
    /* A normal, writable info. */
    MPI_OK(MPI_Info_set(after, "mine", "1"));
    MPI_OK(MPI_Info_free(&after));

    /* Parent with no_any_tag=true; the idup_with_info duplicate says no_any_source only. */
    MPI_Info pinfo, dinfo, got;
    MPI_OK(MPI_Info_create(&pinfo));
    MPI_OK(MPI_Info_set(pinfo, "mpi_assert_no_any_tag", "true"));
    MPI_Comm parent, dup;
    MPI_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, pinfo, &parent));
    MPI_OK(MPI_Info_create(&dinfo));
    MPI_OK(MPI_Info_set(dinfo, "mpi_assert_no_any_source", "true"));
    MPI_Request req;
    MPI_OK(MPI_Comm_idup_with_info(parent, dinfo, &dup, &req));
    MPI_OK(MPI_Info_free(&dinfo)); /* may be freed at once */
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    /* MPI 4.1 §11.4.3: the World Model's communicators report the memory kinds supported */
    MPI_Comm worlds[2] = {MPI_COMM_WORLD, MPI_COMM_SELF};
    for (int i = 0; i < 2; i++) {
        MPI_OK(MPI_Comm_get_info(worlds[i], &got));
        get(got, "mpi_memory_alloc_kinds", v1, &f1);
        CHECK(f1 && !strcmp(v1, "mpi,system"), "mpi_memory_alloc_kinds of %s: %s",
              i ? "MPI_COMM_SELF" : "MPI_COMM_WORLD", f1 ? v1 : "(absent)");
        MPI_OK(MPI_Info_free(&got));
    }
    MPI_OK(MPI_Comm_get_info(dup, &got));
    get(got, "mpi_assert_no_any_source", v1, &f1);
    CHECK(f1 && !strcmp(v1, "true"), "dup lost the info's hint");
    get(got, "mpi_assert_no_any_tag", v1, &f1);
    CHECK(!f1 || !strcmp(v1, "false"), "dup kept the parent's hint: %s", v1);
    MPI_OK(MPI_Info_free(&got));
    int sum = 0;
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup));
    CHECK(sum == size * (size - 1) / 2, "allreduce on the duplicate: %d", sum);
    int res;
    MPI_OK(MPI_Comm_compare(dup, parent, &res));
    CHECK(res == MPI_CONGRUENT, "compare: %d", res);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    int cls, rc = MPI_Comm_idup_with_info(parent, (MPI_Info)0x7777, &dup, &req);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_INFO, "bad info: class %d", cls);
    rc = MPI_Info_create_env(0, NULL, NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "NULL info: class %d", cls);

    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Comm_free(&parent));
    MPI_OK(MPI_Info_free(&pinfo));
    MPI_Finalize();
    MPI_OK(MPI_Info_create_env(argc, argv, &penv));
    get(penv, "command", v2, &f2);
    get(before, "command", v1, &f1);
    CHECK(f2 && !strcmp(v1, v2), "command after MPI_Finalize");
    MPI_OK(MPI_Info_free(&penv));
    MPI_OK(MPI_Info_free(&before));
    if (rank == 0)
        printf("mpi4_comm_info: OK\n");
    return 0;
}
