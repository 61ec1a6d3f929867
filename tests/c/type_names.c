/* type_names: MPI_Type_get_name of every predefined datatype is its MPI name; a handle
 * with two names reports the one MPICH reports (MPI_C_COMPLEX for the handle shared with
 * MPI_C_FLOAT_COMPLEX, MPI_LONG_LONG_INT for the one shared with MPI_LONG_LONG). Then
 * names set on predefined and derived types, a derived type's empty default name (also
 * after MPI_Type_dup), and truncation to MPI_MAX_OBJECT_NAME - 1 characters. */
#include "testutil.h"

#define N(t) {t, #t}
static const struct {
    MPI_Datatype t;
    const char *name;
} names[] = {
    N(MPI_CHAR), N(MPI_SIGNED_CHAR), N(MPI_UNSIGNED_CHAR), N(MPI_BYTE), N(MPI_WCHAR),
    N(MPI_SHORT), N(MPI_UNSIGNED_SHORT), N(MPI_INT), N(MPI_UNSIGNED), N(MPI_LONG),
    N(MPI_UNSIGNED_LONG), N(MPI_FLOAT), N(MPI_DOUBLE), N(MPI_LONG_DOUBLE),
    N(MPI_LONG_LONG_INT), N(MPI_UNSIGNED_LONG_LONG), N(MPI_PACKED), N(MPI_LB), N(MPI_UB),
    N(MPI_FLOAT_INT), N(MPI_DOUBLE_INT), N(MPI_LONG_INT), N(MPI_SHORT_INT), N(MPI_2INT),
    N(MPI_LONG_DOUBLE_INT), N(MPI_INT8_T), N(MPI_INT16_T), N(MPI_INT32_T), N(MPI_INT64_T),
    N(MPI_UINT8_T), N(MPI_UINT16_T), N(MPI_UINT32_T), N(MPI_UINT64_T), N(MPI_C_BOOL),
    N(MPI_C_COMPLEX), N(MPI_C_DOUBLE_COMPLEX), N(MPI_C_LONG_DOUBLE_COMPLEX), N(MPI_AINT),
    N(MPI_OFFSET), N(MPI_COUNT), N(MPI_COMPLEX), N(MPI_DOUBLE_COMPLEX), N(MPI_LOGICAL),
    N(MPI_REAL), N(MPI_DOUBLE_PRECISION), N(MPI_INTEGER), N(MPI_2INTEGER), N(MPI_2REAL),
    N(MPI_2DOUBLE_PRECISION), N(MPI_CHARACTER), N(MPI_REAL4), N(MPI_REAL8), N(MPI_REAL16),
    N(MPI_COMPLEX8), N(MPI_COMPLEX16), N(MPI_COMPLEX32), N(MPI_INTEGER1), N(MPI_INTEGER2),
    N(MPI_INTEGER4), N(MPI_INTEGER8), N(MPI_CXX_BOOL), N(MPI_CXX_FLOAT_COMPLEX),
    N(MPI_CXX_DOUBLE_COMPLEX), N(MPI_CXX_LONG_DOUBLE_COMPLEX),
    /* the second names of shared handles */
    {MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX"}, {MPI_LONG_LONG, "MPI_LONG_LONG_INT"},
};

static void expect_name(MPI_Datatype t, const char *want, const char *what)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    memset(name, 'x', sizeof name);
    MPI_OK(MPI_Type_get_name(t, name, &len));
    CHECK(strcmp(name, want) == 0, "%s: name \"%s\", expected \"%s\"", what, name, want);
    CHECK(len == (int) strlen(want), "%s: resultlen %d, expected %d", what, len,
          (int) strlen(want));
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        expect_name(names[i].t, names[i].name, names[i].name);

    /* A name set on a predefined type replaces its MPI name. */
    MPI_OK(MPI_Type_set_name(MPI_SHORT, "my short"));
    expect_name(MPI_SHORT, "my short", "renamed MPI_SHORT");
    expect_name(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", "MPI_UNSIGNED_SHORT after a rename");

    MPI_Datatype v, d;
    MPI_OK(MPI_Type_vector(2, 1, 3, MPI_INT, &v));
    expect_name(v, "", "new vector");
    MPI_OK(MPI_Type_set_name(v, "columns"));
    expect_name(v, "columns", "named vector");
    MPI_OK(MPI_Type_dup(v, &d));
    expect_name(d, "", "dup of a named vector");

    char longname[MPI_MAX_OBJECT_NAME + 20];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    MPI_OK(MPI_Type_set_name(d, longname));
    longname[MPI_MAX_OBJECT_NAME - 1] = 0;
    expect_name(d, longname, "over-long name");

    MPI_Type_free(&d);
    MPI_Type_free(&v);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tu_rank == 0)
        printf("type_names: OK\n");
    MPI_Finalize();
    return 0;
}
