/* Info objects: set/get/delete/dup/nkeys/nthkey/valuelen, Info_get_string (MPI-4, when
 * available), MPI_INFO_ENV, and Comm_set_info/get_info. */
#include "testutil.h"

int main(int argc, char **argv)
{
    int rank, flag, n, len;
    char v[MPI_MAX_INFO_VAL + 1], k[MPI_MAX_INFO_KEY + 1];
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Info info, dup;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "alpha", "1"));
    MPI_OK(MPI_Info_set(info, "beta", "two"));
    MPI_OK(MPI_Info_set(info, "alpha", "uno")); /* replaces */
    MPI_OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 2, "nkeys %d", n);
    MPI_OK(MPI_Info_get_nthkey(info, 0, k));
    CHECK(strcmp(k, "alpha") == 0, "nthkey 0 \"%s\"", k);
    MPI_OK(MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, "uno") == 0, "get alpha \"%s\"", v);
    MPI_OK(MPI_Info_get(info, "beta", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, "two") == 0, "get beta \"%s\"", v);
    MPI_OK(MPI_Info_get_valuelen(info, "beta", &len, &flag));
    CHECK(flag && len == 3, "valuelen %d", len);
    MPI_OK(MPI_Info_get(info, "gamma", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(!flag, "missing key found");
#if MPI_VERSION >= 4
    int buflen = 0;
    MPI_OK(MPI_Info_get_string(info, "beta", &buflen, v, &flag));
    CHECK(flag && buflen == 4, "get_string length %d", buflen);
    buflen = sizeof v;
    MPI_OK(MPI_Info_get_string(info, "beta", &buflen, v, &flag));
    CHECK(flag && strcmp(v, "two") == 0, "get_string \"%s\"", v);
#endif
    MPI_OK(MPI_Info_dup(info, &dup));
    MPI_OK(MPI_Info_delete(info, "alpha"));
    MPI_OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 1, "nkeys after delete %d", n);
    MPI_OK(MPI_Info_get(dup, "alpha", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, "uno") == 0, "dup is independent");
    int rc = MPI_Info_delete(info, "alpha"), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_INFO_NOKEY, "delete missing key: class %d", cls);

    /* Comm info: the standard's assertions are kept and reported (default "false"), keys
     * OxMPI does not know are ignored (MPICH's behaviour), on dup_with_info, set_info and
     * through a dup. */
    MPI_Comm c, c2;
    MPI_OK(MPI_Info_set(dup, "mpi_assert_no_any_tag", "true"));
    MPI_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, dup, &c));
    MPI_Info used, hint;
    MPI_OK(MPI_Comm_get_info(c, &used));
    MPI_OK(MPI_Info_get_nkeys(used, &n));
    CHECK(n == 4, "comm get_info: %d keys, expected the 4 assertions", n);
    MPI_OK(MPI_Info_get(used, "beta", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(!flag, "unknown key beta reported by MPI_Comm_get_info");
    MPI_OK(MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, "true") == 0, "mpi_assert_no_any_tag: flag %d value %s", flag, v);
    MPI_OK(MPI_Info_get(used, "mpi_assert_exact_length", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, "false") == 0, "mpi_assert_exact_length default: flag %d value %s", flag, v);
    MPI_Info_free(&used);
    MPI_OK(MPI_Info_create(&hint));
    MPI_OK(MPI_Info_set(hint, "mpi_assert_allow_overtaking", "true"));
    MPI_OK(MPI_Info_set(hint, "invalid_test_key", "true"));
    MPI_OK(MPI_Comm_set_info(c, hint));
    MPI_OK(MPI_Info_free(&hint));
    MPI_OK(MPI_Comm_dup(c, &c2));
    MPI_OK(MPI_Comm_get_info(c2, &used));
    MPI_OK(MPI_Info_get(used, "invalid_test_key", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(!flag, "unknown key set by MPI_Comm_set_info was reported");
    MPI_OK(MPI_Info_get(used, "mpi_assert_allow_overtaking", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, "true") == 0, "set_info hint through a dup: flag %d value %s", flag, v);
    MPI_OK(MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && strcmp(v, "true") == 0, "dup_with_info hint through a dup: flag %d value %s", flag, v);
    MPI_Info_free(&used);
    MPI_Comm_free(&c2);
    MPI_Comm_free(&c);

    /* MPI_INFO_ENV exists and is readable. */
    MPI_OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
    CHECK(n >= 0, "INFO_ENV nkeys");
    for (int i = 0; i < n; i++)
        MPI_OK(MPI_Info_get_nthkey(MPI_INFO_ENV, i, k));

    MPI_OK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL, "free nulls");
    MPI_Info_free(&dup);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("info_basic: OK\n");
    MPI_Finalize();
    return 0;
}
