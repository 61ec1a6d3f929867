/* Error handling: a user error handler is invoked with the right class and can be
 * called explicitly; user error classes/codes/strings; every predefined class has a
 * string. */
#include "testutil.h"

static int calls, last_class, last_code;
static MPI_Comm last_comm;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_comm = *comm;
    last_code = *code;
    MPI_Error_class(*code, &last_class);
}

int main(int argc, char **argv)
{
    int rank, size;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Errhandler eh, got;
    MPI_OK(MPI_Comm_create_errhandler(handler, &eh));
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_OK(MPI_Comm_set_errhandler(d, eh));
    MPI_OK(MPI_Comm_get_errhandler(d, &got));
    MPI_OK(MPI_Errhandler_free(&got));

    /* Invalid rank: handler runs with MPI_ERR_RANK and the call returns the code. */
    int x = 0;
    int rc = MPI_Send(&x, 1, MPI_INT, size + 3, 0, d);
    CHECK(calls == 1 && last_class == MPI_ERR_RANK && last_comm == d && rc == last_code, "invalid rank: calls %d class %d", calls, last_class);
    rc = MPI_Send(&x, 1, MPI_INT, 0, -5, d);
    CHECK(calls == 2 && last_class == MPI_ERR_TAG, "invalid tag: class %d", last_class);

    /* The handler is inherited by dups. */
    MPI_Comm d2;
    MPI_OK(MPI_Comm_dup(d, &d2));
    rc = MPI_Recv(&x, -1, MPI_INT, 0, 0, d2, MPI_STATUS_IGNORE);
    CHECK(calls == 3 && last_class == MPI_ERR_COUNT && last_comm == d2, "inherited handler: class %d", last_class);
    MPI_Comm_free(&d2);

    /* User classes, codes, strings, and Comm_call_errhandler. */
    int cls, code, c2;
    MPI_OK(MPI_Add_error_class(&cls));
    MPI_OK(MPI_Add_error_code(cls, &code));
    MPI_OK(MPI_Add_error_string(code, "my special failure"));
    MPI_OK(MPI_Error_class(code, &c2));
    CHECK(c2 == cls, "class of user code %d != %d", c2, cls);
    char s[MPI_MAX_ERROR_STRING];
    int len;
    MPI_OK(MPI_Error_string(code, s, &len));
    CHECK(strcmp(s, "my special failure") == 0, "user string \"%s\"", s);
    int *last;
    int flag;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= cls, "MPI_LASTUSEDCODE %d < %d", flag ? *last : -1, cls);
    MPI_OK(MPI_Comm_call_errhandler(d, code));
    CHECK(calls == 4 && last_code == code && last_class == cls, "call_errhandler");

    /* User classes and codes lie above MPI_ERR_LASTCODE, have empty strings until one is
       added, MPI_LASTUSEDCODE follows them, and codes may be added to predefined classes. */
    int cls2, ucode, pcode, pcode2;
    MPI_OK(MPI_Add_error_class(&cls2));
    CHECK(cls > MPI_ERR_LASTCODE && cls2 > MPI_ERR_LASTCODE && cls2 != cls, "user classes %d %d not above MPI_ERR_LASTCODE", cls, cls2);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last == cls2, "MPI_LASTUSEDCODE %d after Add_error_class gave %d", *last, cls2);
    s[0] = 'x';
    MPI_OK(MPI_Error_string(cls2, s, &len));
    CHECK(len == 0 && s[0] == 0, "new user class has string \"%s\"", s);
    MPI_OK(MPI_Add_error_code(cls2, &ucode));
    MPI_OK(MPI_Error_string(ucode, s, &len));
    CHECK(len == 0, "new user code has string \"%s\"", s);
    MPI_OK(MPI_Error_class(ucode, &c2));
    CHECK(c2 == cls2, "class of code %d on class %d is %d", ucode, cls2, c2);
    MPI_OK(MPI_Add_error_string(cls2, "class two"));
    MPI_OK(MPI_Error_string(cls2, s, &len));
    CHECK(strcmp(s, "class two") == 0, "class string \"%s\"", s);
    MPI_OK(MPI_Error_string(ucode, s, &len));
    CHECK(len == 0, "code string changed with its class's: \"%s\"", s);
    MPI_OK(MPI_Add_error_code(MPI_ERR_OTHER, &pcode));
    MPI_OK(MPI_Add_error_code(MPI_ERR_OTHER, &pcode2));
    CHECK(pcode > MPI_ERR_LASTCODE && pcode2 != pcode, "codes on MPI_ERR_OTHER: %d %d", pcode, pcode2);
    MPI_OK(MPI_Error_class(pcode, &c2));
    CHECK(c2 == MPI_ERR_OTHER, "class of a code on MPI_ERR_OTHER is %d", c2);
    MPI_OK(MPI_Add_error_string(pcode, "other, specifically"));
    MPI_OK(MPI_Error_string(pcode, s, &len));
    CHECK(strcmp(s, "other, specifically") == 0, "string \"%s\"", s);
    MPI_OK(MPI_Error_string(MPI_ERR_OTHER, s, &len));
    CHECK(strcmp(s, "other, specifically") != 0 && len > 0, "predefined class string changed");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(*last >= pcode2 && *last >= ucode, "MPI_LASTUSEDCODE %d below codes %d %d", *last, ucode, pcode2);
    /* Bad inputs: not a class, MPI_SUCCESS, a predefined class's string. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int bad;
    rc = MPI_Add_error_code(MPI_SUCCESS, &bad);
    MPI_Error_class(rc, &c2);
    CHECK(c2 == MPI_ERR_ARG, "Add_error_code(MPI_SUCCESS): class %d", c2);
    rc = MPI_Add_error_code(cls2 + 40, &bad);
    MPI_Error_class(rc, &c2);
    CHECK(c2 == MPI_ERR_ARG, "Add_error_code(unknown class): class %d", c2);
    rc = MPI_Add_error_code(ucode, &bad);
    MPI_Error_class(rc, &c2);
    CHECK(c2 == MPI_ERR_ARG, "Add_error_code(a code): class %d", c2);
    rc = MPI_Add_error_string(MPI_ERR_OTHER, "nope");
    MPI_Error_class(rc, &c2);
    CHECK(c2 == MPI_ERR_ARG, "Add_error_string(predefined): class %d", c2);
    /* Codes nobody made: MPI_ERR_ARG from MPI_Error_class and MPI_Error_string (they read
     * as an arbitrary class before); user classes and codes and MPI_ERR_LASTCODE are fine. */
#ifndef MPICH_VERSION
    {
        const int junk[3] = {999999, -7, 0x7fff0042};
        for (int j = 0; j < 3; j++) {
            int jc = -1;
            rc = MPI_Error_class(junk[j], &jc);
            MPI_Error_class(rc, &c2);
            CHECK(c2 == MPI_ERR_ARG, "Error_class(%d): class %d", junk[j], c2);
            rc = MPI_Error_string(junk[j], s, &len);
            MPI_Error_class(rc, &c2);
            CHECK(c2 == MPI_ERR_ARG, "Error_string(%d): class %d", junk[j], c2);
        }
        MPI_OK(MPI_Error_class(cls2, &c2));
        CHECK(c2 == cls2, "Error_class of a user class %d: %d", cls2, c2);
        MPI_OK(MPI_Error_class(ucode, &c2));
        CHECK(c2 == cls2, "Error_class of a user code: %d, expected %d", c2, cls2);
        MPI_OK(MPI_Error_string(MPI_ERR_LASTCODE, s, &len));
        /* a bare class number beyond ours (mpi4py's wheel passes its ABI's, 80 and up)
         * reads as itself */
        MPI_OK(MPI_Error_class(80, &c2));
        CHECK(c2 == 80, "Error_class(80): %d", c2);
        /* a code of OxMPI's form that another process made (class MPI_ERR_RANK, message
         * slot 250): its class, and a string */
        const int foreign = MPI_ERR_RANK | (250 << 7);
        MPI_OK(MPI_Error_class(foreign, &c2));
        CHECK(c2 == MPI_ERR_RANK, "Error_class of another process's code: %d", c2);
        MPI_OK(MPI_Error_string(foreign, s, &len));
        CHECK(len > 0, "Error_string of another process's code is empty");
    }
#endif

    /* MPICH 4's MPIX_Delete_error_*: a class goes only once its codes are gone (not
     * checked against MPICH itself, whose argument checks differ). */
#ifndef MPICH_VERSION
/* CALL fails with class MPI_ERR_ARG. */
#define EXPECT_ARG_ERROR(call, what)                                 \
    do {                                                             \
        MPI_Error_class((call), &c2);                                \
        CHECK(c2 == MPI_ERR_ARG, what ": class %d", c2);            \
    } while (0)
    int dcls, dcode;
    MPI_OK(MPI_Add_error_class(&dcls));
    MPI_OK(MPI_Add_error_code(dcls, &dcode));
    MPI_OK(MPI_Add_error_string(dcode, "to be deleted"));
    EXPECT_ARG_ERROR(MPIX_Delete_error_class(dcls), "Delete_error_class with a code left");
    EXPECT_ARG_ERROR(MPIX_Delete_error_code(dcls), "Delete_error_code of a class");
    MPI_OK(MPIX_Delete_error_string(dcode));
    MPI_OK(MPI_Error_string(dcode, s, &len));
    CHECK(len == 0, "string after Delete_error_string: '%s'", s);
    MPI_OK(MPIX_Delete_error_code(dcode));
    rc = MPI_Add_error_code(dcls, &bad); /* the class is still there */
    CHECK(rc == MPI_SUCCESS, "Add_error_code after deleting the class's code: %d", rc);
    MPI_OK(MPIX_Delete_error_code(bad));
    MPI_OK(MPIX_Delete_error_class(dcls));
    EXPECT_ARG_ERROR(MPI_Add_error_code(dcls, &bad), "Add_error_code to a deleted class");
    EXPECT_ARG_ERROR(MPIX_Delete_error_code(dcode), "Delete_error_code twice");
    EXPECT_ARG_ERROR(MPIX_Delete_error_class(MPI_ERR_OTHER), "Delete_error_class(predefined)");
#endif
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    /* MPI_ERRORS_RETURN: no handler call, code returned. */
    MPI_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    rc = MPI_Send(&x, 1, MPI_INT, size + 3, 0, d);
    MPI_Error_class(rc, &c2);
    CHECK(calls == 4 && c2 == MPI_ERR_RANK, "ERRORS_RETURN: class %d", c2);
    MPI_OK(MPI_Comm_call_errhandler(d, code));

    /* Every predefined class has a non-empty string. */
    for (int c = MPI_SUCCESS; c <= MPI_ERR_RMA_SHARED; c++) {
        s[0] = 0;
        MPI_OK(MPI_Error_string(c, s, &len));
        CHECK(len > 0 && (int)strlen(s) == len, "class %d: empty string", c);
        MPI_OK(MPI_Error_class(c, &c2));
        CHECK(c2 == c, "Error_class(%d) = %d", c, c2);
    }

    MPI_Comm_free(&d);
    MPI_OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free nulls");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("errh_user: OK\n");
    MPI_Finalize();
    return 0;
}
