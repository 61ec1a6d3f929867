/* rma_attrs: window attributes, names, keyvals, info, error handlers and handles.
 *  - predefined attributes for every flavor (MPI_Win_create, MPI_Win_allocate,
 *    MPI_Win_allocate_shared, MPI_Win_create_dynamic): MPI_WIN_BASE (the base pointer
 *    itself; MPI_BOTTOM for dynamic), MPI_WIN_SIZE (MPI_Aint *), MPI_WIN_DISP_UNIT (int *),
 *    MPI_WIN_CREATE_FLAVOR (int *), MPI_WIN_MODEL (int *, MPI_WIN_UNIFIED);
 *  - MPI_Win_get_group is MPI_IDENT to the communicator's group;
 *  - MPI_Win_get_name: any default, then exactly what MPI_Win_set_name stored (also a
 *    name of MPI_MAX_OBJECT_NAME - 1 characters);
 *  - MPI_Win_create_keyval with copy and delete callbacks: set / get / replace (delete
 *    called for the old value) / MPI_Win_delete_attr (delete called) / MPI_Win_free
 *    (delete called for what is still attached, with the right window, keyval, value
 *    and extra_state) / MPI_Win_free_keyval; the copy callback is never called; an unset
 *    keyval reads flag = 0;
 *  - MPI_Win_set_info / MPI_Win_get_info: a valid info object back, freed; info at
 *    creation (no_locks = false, accumulate_ordering) accepted;
 *  - error handlers: the default is MPI_ERRORS_ARE_FATAL; MPI_Win_create_errhandler +
 *    MPI_Win_set_errhandler + MPI_Win_call_errhandler calls the function with the
 *    window and the code (a user code from MPI_Add_error_code, and MPI_ERR_OTHER);
 *    MPI_Win_get_errhandler returns it; MPI_ERRORS_RETURN set and got back;
 *  - MPI_Win_c2f / MPI_Win_f2c round trips (and of MPI_WIN_NULL). */
#include "testutil.h"

static int rank, nprocs;

static int copy_calls, delete_calls, last_deleted_val;
static MPI_Win last_deleted_win;
static int extra_token = 4242;

static int copy_fn(MPI_Win oldwin, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldwin; (void)keyval; (void)extra; (void)in; (void)out;
    copy_calls++;
    *flag = 0;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Win win, int keyval, void *val, void *extra)
{
    (void)keyval;
    CHECK(extra == &extra_token, "delete callback: extra_state %p, expected %p", extra,
          (void *)&extra_token);
    delete_calls++;
    last_deleted_val = *(int *)val;
    last_deleted_win = win;
    return MPI_SUCCESS;
}

static int errh_calls, errh_code;
static MPI_Win errh_win;
static void errh_fn(MPI_Win *win, int *code, ...)
{
    errh_calls++;
    errh_win = *win;
    errh_code = *code;
}

static void check_attrs(MPI_Win win, void *base, MPI_Aint size, int disp_unit, int flavor,
                        const char *kind)
{
    void *b = (void *)1;
    MPI_Aint *sz = NULL;
    int *du = NULL, *fl = NULL, *model = NULL, flag = 0;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag));
    CHECK(flag && b == base, "%s: MPI_WIN_BASE flag %d value %p, expected %p", kind, flag, b,
          base);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
    CHECK(flag && sz && *sz == size, "%s: MPI_WIN_SIZE = %ld, expected %ld", kind,
          flag && sz ? (long)*sz : -1L, (long)size);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag));
    CHECK(flag && du && *du == disp_unit, "%s: MPI_WIN_DISP_UNIT = %d, expected %d", kind,
          flag && du ? *du : -1, disp_unit);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
    CHECK(flag && fl && *fl == flavor, "%s: MPI_WIN_CREATE_FLAVOR = %d, expected %d", kind,
          flag && fl ? *fl : -1, flavor);
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && model && *model == MPI_WIN_UNIFIED, "%s: MPI_WIN_MODEL = %d, expected "
          "MPI_WIN_UNIFIED (%d)", kind, flag && model ? *model : -1, MPI_WIN_UNIFIED);
}

static void check_group(MPI_Win win, MPI_Comm comm, const char *kind)
{
    MPI_Group wg, cg;
    int res = -1, n = -1;
    MPI_OK(MPI_Win_get_group(win, &wg));
    MPI_OK(MPI_Comm_group(comm, &cg));
    MPI_OK(MPI_Group_compare(wg, cg, &res));
    CHECK(res == MPI_IDENT, "%s: MPI_Win_get_group vs communicator group: %d, expected "
          "MPI_IDENT", kind, res);
    MPI_OK(MPI_Group_size(wg, &n));
    int csize;
    MPI_Comm_size(comm, &csize);
    CHECK(n == csize, "%s: window group size %d", kind, n);
    MPI_OK(MPI_Group_free(&wg));
    MPI_OK(MPI_Group_free(&cg));
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    /* ---- flavors and predefined attributes ---- */
    MPI_Win win;
    char *mem = tu_malloc(100);
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "no_locks", "false"));
    MPI_OK(MPI_Info_set(info, "accumulate_ordering", "rar,raw,war,waw"));
    MPI_OK(MPI_Win_create(mem, 100, 4, info, MPI_COMM_WORLD, &win));
    check_attrs(win, mem, 100, 4, MPI_WIN_FLAVOR_CREATE, "MPI_Win_create");
    check_group(win, MPI_COMM_WORLD, "MPI_Win_create");
    MPI_OK(MPI_Win_free(&win));
    /* a zero-size window over NULL */
    MPI_OK(MPI_Win_create(NULL, 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    {
        MPI_Aint *sz = NULL;
        int flag = 0;
        MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag));
        CHECK(flag && *sz == 0, "zero-size MPI_Win_create: MPI_WIN_SIZE %ld", (long)*sz);
    }
    MPI_OK(MPI_Win_free(&win));

    void *abase = NULL;
    MPI_OK(MPI_Win_allocate(64 * (rank + 1), 8, info, MPI_COMM_WORLD, &abase, &win));
    check_attrs(win, abase, 64 * (rank + 1), 8, MPI_WIN_FLAVOR_ALLOCATE, "MPI_Win_allocate");
    check_group(win, MPI_COMM_WORLD, "MPI_Win_allocate");
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Info_free(&info));

    MPI_Comm shm;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    void *sbase = NULL;
    MPI_OK(MPI_Win_allocate_shared(48, 2, MPI_INFO_NULL, shm, &sbase, &win));
    check_attrs(win, sbase, 48, 2, MPI_WIN_FLAVOR_SHARED, "MPI_Win_allocate_shared");
    check_group(win, shm, "MPI_Win_allocate_shared");
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Comm_free(&shm));

    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    check_attrs(win, MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, "MPI_Win_create_dynamic");
    check_group(win, MPI_COMM_WORLD, "MPI_Win_create_dynamic");
    MPI_OK(MPI_Win_free(&win));

    /* the rest on one MPI_Win_create window */
    MPI_OK(MPI_Win_create(mem, 100, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));

    /* ---- names ---- */
    char name[MPI_MAX_OBJECT_NAME + 8];
    int len = -1;
    memset(name, 'x', sizeof name);
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(len >= 0 && len < MPI_MAX_OBJECT_NAME && memchr(name, '\0', MPI_MAX_OBJECT_NAME) &&
              (int)strlen(name) == len,
          "default window name: length %d, not a terminated string of that length", len);
    MPI_OK(MPI_Win_set_name(win, "halo window"));
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 11 && strcmp(name, "halo window") == 0, "MPI_Win_get_name: \"%s\" (%d)", name,
          len);
    char longname[MPI_MAX_OBJECT_NAME];
    memset(longname, 'n', sizeof longname);
    longname[MPI_MAX_OBJECT_NAME - 1] = '\0';
    MPI_OK(MPI_Win_set_name(win, longname));
    MPI_OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && strcmp(name, longname) == 0,
          "a %d-character window name came back with length %d", MPI_MAX_OBJECT_NAME - 1, len);

    /* ---- keyvals ---- */
    int key = MPI_KEYVAL_INVALID, key2 = MPI_KEYVAL_INVALID, flag = -1;
    static int v1 = 11, v2 = 22, v3 = 33, v4 = 44;
    int *got = NULL;
    MPI_OK(MPI_Win_create_keyval(copy_fn, delete_fn, &key, &extra_token));
    MPI_OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &key2, NULL));
    CHECK(key != MPI_KEYVAL_INVALID && key2 != MPI_KEYVAL_INVALID && key != key2,
          "MPI_Win_create_keyval gave %d and %d", key, key2);
    MPI_OK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag == 0, "an unset keyval reads flag %d", flag);
    MPI_OK(MPI_Win_set_attr(win, key, &v1));
    MPI_OK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag && got == &v1, "MPI_Win_get_attr after set: flag %d, %p, expected %p", flag,
          (void *)got, (void *)&v1);
    CHECK(delete_calls == 0, "delete callback called %d times before any delete", delete_calls);
    MPI_OK(MPI_Win_set_attr(win, key, &v2)); /* replaces: delete called for v1 */
    CHECK(delete_calls == 1 && last_deleted_val == 11 && last_deleted_win == win,
          "replacing an attribute: %d delete calls, last value %d", delete_calls,
          last_deleted_val);
    MPI_OK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag && got == &v2, "MPI_Win_get_attr after replace: %p", (void *)got);
    MPI_OK(MPI_Win_delete_attr(win, key));
    CHECK(delete_calls == 2 && last_deleted_val == 22 && last_deleted_win == win,
          "MPI_Win_delete_attr: %d delete calls, last value %d", delete_calls,
          last_deleted_val);
    MPI_OK(MPI_Win_get_attr(win, key, &got, &flag));
    CHECK(flag == 0, "attribute still there after MPI_Win_delete_attr");
    MPI_OK(MPI_Win_set_attr(win, key, &v3));
    MPI_OK(MPI_Win_set_attr(win, key2, &v4));
    MPI_OK(MPI_Win_get_attr(win, key2, &got, &flag));
    CHECK(flag && got == &v4, "second keyval: %p", (void *)got);
    /* freeing the keyval leaves the attribute in place until the window goes */
    MPI_OK(MPI_Win_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval did not reset the keyval");

    /* ---- info ---- */
    MPI_Info in, out = MPI_INFO_NULL;
    MPI_OK(MPI_Info_create(&in));
    MPI_OK(MPI_Info_set(in, "no_locks", "false"));
    MPI_OK(MPI_Info_set(in, "oxmpi_test_key", "value"));
    MPI_OK(MPI_Win_set_info(win, in));
    MPI_OK(MPI_Info_free(&in));
    MPI_OK(MPI_Win_get_info(win, &out));
    CHECK(out != MPI_INFO_NULL, "MPI_Win_get_info returned MPI_INFO_NULL");
    int nkeys = -1, iflag;
    char ival[MPI_MAX_INFO_VAL + 1];
    MPI_OK(MPI_Info_get_nkeys(out, &nkeys));
    CHECK(nkeys >= 0, "MPI_Info_get_nkeys on the window's info: %d", nkeys);
    for (int i = 0; i < nkeys; i++) {
        char k[MPI_MAX_INFO_KEY + 1];
        MPI_OK(MPI_Info_get_nthkey(out, i, k));
    }
    /* The standard's window hints are reported, with their defaults when never set
     * (MPI 4.1 §12.2.1); keys OxMPI does not know are ignored, as in MPICH. */
    MPI_OK(MPI_Info_get(out, "oxmpi_test_key", MPI_MAX_INFO_VAL, ival, &iflag));
    CHECK(!iflag, "an unknown key set by MPI_Win_set_info was reported");
    MPI_OK(MPI_Info_get(out, "no_locks", MPI_MAX_INFO_VAL, ival, &iflag));
    CHECK(iflag && strcmp(ival, "false") == 0, "no_locks: flag %d value %s", iflag, ival);
    MPI_OK(MPI_Info_get(out, "accumulate_ordering", MPI_MAX_INFO_VAL, ival, &iflag));
    CHECK(iflag && strcmp(ival, "rar,raw,war,waw") == 0, "accumulate_ordering default: flag %d value %s", iflag, ival);
    MPI_OK(MPI_Info_get(out, "accumulate_ops", MPI_MAX_INFO_VAL, ival, &iflag));
    CHECK(iflag && strcmp(ival, "same_op_no_op") == 0, "accumulate_ops default: flag %d value %s", iflag, ival);
    MPI_OK(MPI_Info_free(&out));
    MPI_OK(MPI_Info_create(&in));
    MPI_OK(MPI_Info_set(in, "accumulate_ordering", "rar,waw"));
    MPI_OK(MPI_Info_set(in, "same_size", "true"));
    MPI_OK(MPI_Win_set_info(win, in));
    MPI_OK(MPI_Info_free(&in));
    MPI_OK(MPI_Win_get_info(win, &out));
    MPI_OK(MPI_Info_get(out, "accumulate_ordering", MPI_MAX_INFO_VAL, ival, &iflag));
    CHECK(iflag && strcmp(ival, "rar,waw") == 0, "accumulate_ordering set: flag %d value %s", iflag, ival);
    MPI_OK(MPI_Info_get(out, "same_size", MPI_MAX_INFO_VAL, ival, &iflag));
    CHECK(iflag && strcmp(ival, "true") == 0, "same_size set: flag %d value %s", iflag, ival);
    MPI_OK(MPI_Info_free(&out));
    CHECK(out == MPI_INFO_NULL, "MPI_Info_free did not reset the handle");

    /* ---- error handlers ---- */
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got_eh = MPI_ERRHANDLER_NULL;
    MPI_OK(MPI_Win_get_errhandler(win, &got_eh));
    CHECK(got_eh == MPI_ERRORS_ARE_FATAL, "default window error handler is not "
          "MPI_ERRORS_ARE_FATAL");
    MPI_OK(MPI_Win_create_errhandler(errh_fn, &eh));
    CHECK(eh != MPI_ERRHANDLER_NULL, "MPI_Win_create_errhandler gave MPI_ERRHANDLER_NULL");
    MPI_OK(MPI_Win_set_errhandler(win, eh));
    MPI_OK(MPI_Win_get_errhandler(win, &got_eh));
    CHECK(got_eh == eh, "MPI_Win_get_errhandler does not return the handler set");
    MPI_OK(MPI_Errhandler_free(&got_eh));
    int ucls = -1, ucode = -1;
    MPI_OK(MPI_Add_error_class(&ucls));
    MPI_OK(MPI_Add_error_code(ucls, &ucode));
    MPI_OK(MPI_Win_call_errhandler(win, ucode));
    CHECK(errh_calls == 1 && errh_win == win && errh_code == ucode,
          "MPI_Win_call_errhandler: %d calls, window %s, code %d (expected %d)", errh_calls,
          errh_win == win ? "right" : "wrong", errh_code, ucode);
    MPI_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(errh_calls == 2 && errh_code == MPI_ERR_OTHER, "second MPI_Win_call_errhandler: %d "
          "calls, code %d", errh_calls, errh_code);
    MPI_OK(MPI_Errhandler_free(&eh)); /* still attached to the window: stays usable */
    CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not reset the handle");
    MPI_OK(MPI_Win_call_errhandler(win, MPI_ERR_OTHER));
    CHECK(errh_calls == 3, "the handler freed while attached was not called");
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Win_get_errhandler(win, &got_eh));
    CHECK(got_eh == MPI_ERRORS_RETURN, "MPI_Win_get_errhandler after setting "
          "MPI_ERRORS_RETURN");
    /* MPI_ERRORS_RETURN: the call returns the code, nothing is called */
    int rc = MPI_Win_call_errhandler(win, ucode);
    CHECK(rc == ucode || rc == MPI_SUCCESS, "MPI_Win_call_errhandler with MPI_ERRORS_RETURN "
          "returned %d", rc);
    CHECK(errh_calls == 3, "user handler called after MPI_ERRORS_RETURN was set");

    /* ---- Fortran handles ---- */
    MPI_Fint f = MPI_Win_c2f(win);
    CHECK(MPI_Win_f2c(f) == win, "MPI_Win_f2c(MPI_Win_c2f(win)) != win");
    CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL, "MPI_WIN_NULL round trip");

    /* ---- free: the delete callback runs for the remaining attribute ---- */
    MPI_Win old = win;
    MPI_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free did not reset the handle");
    CHECK(delete_calls == 3 && last_deleted_val == 33 && last_deleted_win == old,
          "MPI_Win_free: %d delete calls (expected 3), last value %d (expected 33)",
          delete_calls, last_deleted_val);
    CHECK(copy_calls == 0, "the copy callback was called %d times", copy_calls);
    MPI_OK(MPI_Win_free_keyval(&key2));
    free(mem);

    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("rma_attrs: OK (%d ranks)\n", nprocs);
    MPI_Finalize();
    return 0;
}
