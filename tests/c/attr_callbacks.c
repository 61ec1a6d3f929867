/* Attribute caching: copy/delete callbacks counted on dup/free, MPI_COMM_DUP_FN and the
 * NULL callbacks, datatype attributes, predefined attributes, failing callbacks (the call
 * returns the callback's own error code, user classes and codes included, as MPICH does;
 * a failed dup gives MPI_COMM_NULL (MPI_DATATYPE_NULL) and deletes what it had copied; a
 * failed delete keeps the attribute), and MPI_COMM_SELF delete callbacks running first in
 * MPI_Finalize (checked after it returns). */
#include "testutil.h"

static int copies, deletes, self_deletes, self_state_ok;

static int copy_fn(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    (void)c; (void)k;
    copies++;
    CHECK(*(int *)extra == 42, "extra_state lost");
    *(void **)out = (char *)in + 1; /* the copy's value is the original + 1 */
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm c, int k, void *v, void *extra)
{
    (void)c; (void)k; (void)v; (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static int self_delete(MPI_Comm c, int k, void *v, void *extra)
{
    (void)k; (void)extra;
    int fin = 1;
    MPI_Finalized(&fin);
    /* Runs inside MPI_Finalize, before anything is torn down. */
    self_state_ok = c == MPI_COMM_SELF && v == (void *)&self_deletes && !fin;
    self_deletes++;
    return MPI_SUCCESS;
}

static int type_deletes;
static int type_delete(MPI_Datatype t, int k, void *v, void *extra)
{
    (void)t; (void)k; (void)v; (void)extra;
    type_deletes++;
    return MPI_SUCCESS;
}

static int fail_code, ok_copies, ok_deletes;

static int copy_ok(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    (void)c; (void)k; (void)extra;
    ok_copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_ok(MPI_Comm c, int k, void *v, void *extra)
{
    (void)c; (void)k; (void)v; (void)extra;
    ok_deletes++;
    return MPI_SUCCESS;
}

static int copy_fail(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag)
{
    (void)c; (void)k; (void)extra;
    *(void **)out = in;
    *flag = 1;
    return fail_code;
}

static int delete_fail(MPI_Comm c, int k, void *v, void *extra)
{
    (void)c; (void)k; (void)v; (void)extra;
    return fail_code;
}

static int type_copy_fail(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag)
{
    (void)t; (void)k; (void)extra;
    *(void **)out = in;
    *flag = 1;
    return fail_code;
}

static void failing_callbacks(void)
{
    int cls, code, rc, got, flag, kok, kfail;
    char val[2];
    void *v;
    MPI_Comm c, d;

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Add_error_class(&cls));
    MPI_OK(MPI_Add_error_code(cls, &code));
    MPI_OK(MPI_Comm_create_keyval(copy_ok, delete_ok, &kok, NULL));
    MPI_OK(MPI_Comm_create_keyval(copy_fail, delete_fail, &kfail, NULL));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_attr(c, kok, &val[0]));
    MPI_OK(MPI_Comm_set_attr(c, kfail, &val[1]));

    /* The copy of kok succeeds, then kfail's fails: the dup fails with the user class. */
    fail_code = cls;
    d = MPI_COMM_WORLD;
    rc = MPI_Comm_dup(c, &d);
    MPI_Error_class(rc, &got);
    CHECK(rc == cls && got == cls, "dup with a failing copy callback: code %d class %d, expected user class %d", rc, got, cls);
    CHECK(d == MPI_COMM_NULL, "a failed dup left %#x", (unsigned)d);
    CHECK(ok_copies == 1 && ok_deletes == 1, "a failed dup kept its copies: %d copies, %d deletes", ok_copies, ok_deletes);
    fail_code = code;
    rc = MPI_Comm_dup(c, &d);
    MPI_Error_class(rc, &got);
    CHECK(rc == code && got == cls, "dup: code %d class %d, expected user code %d of class %d", rc, got, code, cls);

    /* A failing delete: the same code, and the attribute stays. */
    fail_code = cls;
    rc = MPI_Comm_delete_attr(c, kfail);
    CHECK(rc == cls, "delete_attr: code %d, expected user class %d", rc, cls);
    MPI_OK(MPI_Comm_get_attr(c, kfail, &v, &flag));
    CHECK(flag && v == &val[1], "a failed delete removed the attribute");
    rc = MPI_Comm_set_attr(c, kfail, &val[0]);
    CHECK(rc == cls, "set_attr over a failing delete: code %d, expected %d", rc, cls);
    MPI_OK(MPI_Comm_get_attr(c, kfail, &v, &flag));
    CHECK(flag && v == &val[1], "a failed replacement changed the value");
    rc = MPI_Comm_free(&c);
    CHECK(rc == cls && c != MPI_COMM_NULL, "free with a failing delete: code %d", rc);
    fail_code = MPI_SUCCESS;
    MPI_OK(MPI_Comm_free(&c));

    /* The same for a datatype duplicate: the code, and MPI_DATATYPE_NULL. */
    MPI_Datatype t, t2 = MPI_INT;
    int tk;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &t));
    MPI_OK(MPI_Type_create_keyval(type_copy_fail, MPI_TYPE_NULL_DELETE_FN, &tk, NULL));
    MPI_OK(MPI_Type_set_attr(t, tk, &val[0]));
    fail_code = code;
    rc = MPI_Type_dup(t, &t2);
    CHECK(rc == code && t2 == MPI_DATATYPE_NULL, "type dup with a failing copy callback: code %d (expected %d), newtype %#x", rc, code, (unsigned)t2);
    fail_code = MPI_SUCCESS;
    MPI_OK(MPI_Type_free(&t));
    MPI_OK(MPI_Type_free_keyval(&tk));
    MPI_OK(MPI_Comm_free_keyval(&kok));
    MPI_OK(MPI_Comm_free_keyval(&kfail));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    int rank, size, flag;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    static int extra = 42;
    int kv, kv_nocopy, kv_dupfn;
    MPI_OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &kv, &extra));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv_nocopy, NULL));
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv_dupfn, NULL));

    MPI_Comm a;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    char base[4];
    MPI_OK(MPI_Comm_set_attr(a, kv, base));
    MPI_OK(MPI_Comm_set_attr(a, kv_nocopy, base));
    MPI_OK(MPI_Comm_set_attr(a, kv_dupfn, base + 2));
    void *v;
    MPI_OK(MPI_Comm_get_attr(a, kv, &v, &flag));
    CHECK(flag && v == base, "get_attr");

    /* dup: one copy callback; NULL_COPY_FN not copied; DUP_FN copies the value. */
    MPI_Comm b;
    MPI_OK(MPI_Comm_dup(a, &b));
    CHECK(copies == 1, "copies after dup: %d", copies);
    MPI_OK(MPI_Comm_get_attr(b, kv, &v, &flag));
    CHECK(flag && v == base + 1, "copied value");
    MPI_OK(MPI_Comm_get_attr(b, kv_nocopy, &v, &flag));
    CHECK(!flag, "NULL_COPY_FN attribute was copied");
    MPI_OK(MPI_Comm_get_attr(b, kv_dupfn, &v, &flag));
    CHECK(flag && v == base + 2, "DUP_FN value");

    /* Replacing a value calls delete on the old one; delete_attr too; free deletes the rest. */
    MPI_OK(MPI_Comm_set_attr(b, kv, base + 3));
    CHECK(deletes == 1, "deletes after replace: %d", deletes);
    MPI_OK(MPI_Comm_delete_attr(b, kv));
    CHECK(deletes == 2, "deletes after delete_attr: %d", deletes);
    MPI_OK(MPI_Comm_get_attr(b, kv, &v, &flag));
    CHECK(!flag, "deleted attribute still there");
    MPI_OK(MPI_Comm_free(&b));
    CHECK(deletes == 2, "no kv attribute left on b: %d", deletes);
    MPI_OK(MPI_Comm_free(&a));
    CHECK(deletes == 3, "free runs delete: %d", deletes);
    /* Many dups of a communicator with an attribute: copies and deletes balance. */
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
    MPI_OK(MPI_Comm_set_attr(a, kv, base));
    for (int i = 0; i < 50; i++) {
        MPI_OK(MPI_Comm_dup(a, &b));
        MPI_OK(MPI_Comm_free(&b));
    }
    MPI_OK(MPI_Comm_free(&a));
    CHECK(copies == 51 && deletes == 54, "balance: %d copies %d deletes", copies, deletes);
    MPI_OK(MPI_Comm_free_keyval(&kv));
    CHECK(kv == MPI_KEYVAL_INVALID, "free_keyval nulls");
    MPI_Comm_free_keyval(&kv_nocopy);
    MPI_Comm_free_keyval(&kv_dupfn);

    /* Predefined attributes. */
    int *pv;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &pv, &flag));
    CHECK(flag && *pv >= 32767, "MPI_TAG_UB %d", flag ? *pv : -1);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &pv, &flag));
    CHECK(flag && (*pv == MPI_PROC_NULL || (*pv >= 0 && *pv < size)), "MPI_HOST");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &pv, &flag));
    CHECK(flag && (*pv == MPI_ANY_SOURCE || *pv == MPI_PROC_NULL || (*pv >= 0 && *pv < size)), "MPI_IO");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &pv, &flag));
    CHECK(!flag || *pv == 0 || *pv == 1, "MPI_WTIME_IS_GLOBAL");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &pv, &flag));
    CHECK(!flag || *pv >= size, "MPI_UNIVERSE_SIZE");
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &pv, &flag));
    CHECK(!flag || *pv == 0, "MPI_APPNUM");

    /* Datatype attributes. */
    int tk;
    MPI_Datatype t;
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete, &tk, NULL));
    MPI_OK(MPI_Type_set_attr(t, tk, base));
    MPI_OK(MPI_Type_get_attr(t, tk, &v, &flag));
    CHECK(flag && v == base, "type attr");
    MPI_OK(MPI_Type_delete_attr(t, tk));
    CHECK(type_deletes == 1, "type delete callback");
    MPI_Type_free(&t);
    MPI_Type_free_keyval(&tk);

    failing_callbacks();

    /* MPI_COMM_SELF: delete callback at finalize. */
    int sk;
    MPI_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &sk, NULL));
    MPI_OK(MPI_Comm_set_attr(MPI_COMM_SELF, sk, &self_deletes));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    if (self_deletes != 1 || !self_state_ok) {
        fprintf(stderr, "[rank %d] FAIL: MPI_COMM_SELF delete callback ran %d times (state ok %d)\n", rank, self_deletes, self_state_ok);
        return 1;
    }
    if (rank == 0)
        printf("attr_callbacks: OK\n");
    return 0;
}
