/* attr_errors: attribute copy and delete callbacks that fail, on communicators, datatypes
 * and windows.
 *  - A failing copy callback fails MPI_Comm_dup / MPI_Type_dup with an error of class
 *    MPI_ERR_OTHER, the new handle is MPI_COMM_NULL / MPI_DATATYPE_NULL, and the copies
 *    already made for it are deleted again (their delete callbacks run).
 *  - A failing delete callback fails MPI_*_delete_attr and a replacing MPI_*_set_attr, and
 *    the attribute keeps its value.
 *  - MPI_*_free runs the delete callbacks; when one fails, the free fails (class
 *    MPI_ERR_OTHER), the object stays usable without its attributes, and freeing it again
 *    succeeds without calling them again.
 * Values are counted live: every value a copy callback makes must be deleted once. */
#include "testutil.h"

static int copy_fail, delete_fail;
static int copies, deletes, live;

/* Values are small integers cast to pointers; a copy is the original + 100. */
static int copy_fn(int h, int k, void *extra, void *in, void *out, int *flag)
{
    (void) h; (void) k; (void) extra;
    if (copy_fail && (intptr_t) extra == 1) {
        *flag = 1; /* set, but the error must win */
        return MPI_ERR_OTHER;
    }
    copies++;
    live++;
    *(void **) out = (void *) ((intptr_t) in + 100);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(int h, int k, void *v, void *extra)
{
    (void) h; (void) k; (void) v; (void) extra;
    deletes++;
    if (delete_fail)
        return MPI_ERR_OTHER;
    if ((intptr_t) v >= 100)
        live--;
    return MPI_SUCCESS;
}

static void expect_other(int rc, const char *what)
{
    int cls = -1;
    CHECK(rc != MPI_SUCCESS, "%s succeeded", what);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER, "%s: error class %d, expected MPI_ERR_OTHER (%d)", what, cls,
          MPI_ERR_OTHER);
}

/* The three object kinds behind one set of operations. */
enum kind { COMM, TYPE, WIN };
static const char *kname[] = {"communicator", "datatype", "window"};

static int create_keyval(enum kind k, int *kv, intptr_t extra)
{
    switch (k) {
    case COMM: return MPI_Comm_create_keyval(copy_fn, delete_fn, kv, (void *) extra);
    case TYPE: return MPI_Type_create_keyval(copy_fn, delete_fn, kv, (void *) extra);
    default:   return MPI_Win_create_keyval(copy_fn, delete_fn, kv, (void *) extra);
    }
}
static int free_keyval(enum kind k, int *kv)
{
    return k == COMM ? MPI_Comm_free_keyval(kv) : k == TYPE ? MPI_Type_free_keyval(kv) : MPI_Win_free_keyval(kv);
}
static int set_attr(enum kind k, int h, int kv, intptr_t v)
{
    return k == COMM ? MPI_Comm_set_attr(h, kv, (void *) v)
           : k == TYPE ? MPI_Type_set_attr(h, kv, (void *) v)
                       : MPI_Win_set_attr((MPI_Win) h, kv, (void *) v);
}
static intptr_t get_attr(enum kind k, int h, int kv)
{
    void *v = NULL;
    int flag = 0;
    if (k == COMM)
        MPI_OK(MPI_Comm_get_attr(h, kv, &v, &flag));
    else if (k == TYPE)
        MPI_OK(MPI_Type_get_attr(h, kv, &v, &flag));
    else
        MPI_OK(MPI_Win_get_attr((MPI_Win) h, kv, &v, &flag));
    return flag ? (intptr_t) v : -1;
}
static int delete_attr(enum kind k, int h, int kv)
{
    return k == COMM ? MPI_Comm_delete_attr(h, kv) : k == TYPE ? MPI_Type_delete_attr(h, kv) : MPI_Win_delete_attr((MPI_Win) h, kv);
}

static int win_buf[4];

static int make(enum kind k)
{
    if (k == COMM) {
        MPI_Comm c;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MPI_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
        return (int) c;
    }
    if (k == TYPE) {
        MPI_Datatype t;
        MPI_OK(MPI_Type_contiguous(2, MPI_INT, &t));
        return (int) t;
    }
    MPI_Win w;
    MPI_OK(MPI_Win_create(win_buf, sizeof win_buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    MPI_OK(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
    return (int) w;
}
static int free_obj(enum kind k, int *h)
{
    if (k == COMM) {
        MPI_Comm c = *h;
        int rc = MPI_Comm_free(&c);
        *h = c;
        return rc;
    }
    if (k == TYPE) {
        MPI_Datatype t = *h;
        int rc = MPI_Type_free(&t);
        *h = t;
        return rc;
    }
    MPI_Win w = (MPI_Win) *h;
    int rc = MPI_Win_free(&w);
    *h = (int) w;
    return rc;
}
static int null_of(enum kind k)
{
    return k == COMM ? (int) MPI_COMM_NULL : k == TYPE ? (int) MPI_DATATYPE_NULL : (int) MPI_WIN_NULL;
}
/* Still usable: a call that needs a live object. */
static void use(enum kind k, int h, const char *what)
{
    if (k == COMM) {
        MPI_OK(MPI_Barrier(h));
    } else if (k == TYPE) {
        int s = 0;
        MPI_OK(MPI_Type_size(h, &s));
        CHECK(s == 2 * (int) sizeof(int), "%s: size %d", what, s);
    } else {
        MPI_OK(MPI_Win_fence(0, (MPI_Win) h));
        MPI_OK(MPI_Win_fence(0, (MPI_Win) h));
    }
}

static void run(enum kind k)
{
    const char *n = kname[k];
    int good, bad, h = make(k);
    MPI_OK(create_keyval(k, &good, 0));
    MPI_OK(create_keyval(k, &bad, 1)); /* its copy fails when copy_fail is set */
    MPI_OK(set_attr(k, h, good, 1));
    MPI_OK(set_attr(k, h, bad, 2));

    /* dup with a failing copy (windows cannot be duplicated) */
    if (k != WIN) {
        copy_fail = 1;
        copies = deletes = 0;
        int d = 12345, rc;
        if (k == COMM) {
            MPI_Comm c = MPI_COMM_WORLD;
            rc = MPI_Comm_dup(h, &c);
            d = c;
        } else {
            MPI_Datatype t = MPI_INT;
            rc = MPI_Type_dup(h, &t);
            d = t;
        }
        char what[80];
        snprintf(what, sizeof what, "dup of a %s with a failing copy callback", n);
        expect_other(rc, what);
        CHECK(d == null_of(k), "%s: new handle %#x, expected the null handle", what, d);
        CHECK(copies == 1 && deletes == 1 && live == 0,
              "%s: %d copies, %d deletes, %d live values (the good copy must be deleted again)",
              what, copies, deletes, live);
        CHECK(get_attr(k, h, good) == 1 && get_attr(k, h, bad) == 2, "%s: original changed", what);
        copy_fail = 0;

        /* a dup that works copies both */
        if (k == COMM) {
            MPI_Comm c;
            MPI_OK(MPI_Comm_dup(h, &c));
            d = c;
        } else {
            MPI_Datatype t;
            MPI_OK(MPI_Type_dup(h, &t));
            d = t;
        }
        CHECK(get_attr(k, d, good) == 101 && get_attr(k, d, bad) == 102 && live == 2,
              "good dup of a %s: copies %ld %ld, %d live", n, (long) get_attr(k, d, good),
              (long) get_attr(k, d, bad), live);
        deletes = 0;
        MPI_OK(free_obj(k, &d));
        CHECK(d == null_of(k) && deletes == 2 && live == 0,
              "free of the good dup of a %s: %d deletes, %d live", n, deletes, live);
    }

    /* failing deletes keep the attribute */
    delete_fail = 1;
    deletes = 0;
    char what[80];
    snprintf(what, sizeof what, "%s delete_attr with a failing delete callback", n);
    expect_other(delete_attr(k, h, good), what);
    CHECK(get_attr(k, h, good) == 1, "%s: the attribute went", what);
    snprintf(what, sizeof what, "%s set_attr replacing with a failing delete callback", n);
    expect_other(set_attr(k, h, good, 7), what);
    CHECK(get_attr(k, h, good) == 1, "%s: the value changed", what);
    CHECK(deletes == 2, "%s: %d delete calls, expected 2", n, deletes);

    /* a failing free: every delete callback runs, the object stays, without attributes */
    deletes = 0;
    int keep = h;
    snprintf(what, sizeof what, "free of a %s with failing delete callbacks", n);
    expect_other(free_obj(k, &h), what);
    CHECK(h == keep, "%s: the handle changed to %#x", what, h);
    CHECK(deletes == 2, "%s: %d delete calls, expected 2", what, deletes);
    use(k, h, what);
    CHECK(get_attr(k, h, good) == -1 && get_attr(k, h, bad) == -1, "%s: attributes left", what);
    delete_fail = 0;
    deletes = 0;
    MPI_OK(free_obj(k, &h));
    CHECK(h == null_of(k) && deletes == 0, "second free of a %s: handle %#x, %d deletes", n, h,
          deletes);

    /* and a free that works runs each delete callback once */
    h = make(k);
    MPI_OK(set_attr(k, h, good, 3));
    MPI_OK(set_attr(k, h, bad, 4));
    MPI_OK(delete_attr(k, h, bad));
    deletes = 0;
    MPI_OK(free_obj(k, &h));
    CHECK(deletes == 1, "free of a %s with one attribute: %d deletes", n, deletes);

    MPI_OK(free_keyval(k, &good));
    MPI_OK(free_keyval(k, &bad));
    CHECK(live == 0, "%s: %d copied values never deleted", n, live);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    run(COMM);
    run(TYPE);
    run(WIN);
    MPI_Barrier(MPI_COMM_WORLD);
    if (tu_rank == 0)
        printf("attr_errors: OK\n");
    MPI_Finalize();
    return 0;
}
