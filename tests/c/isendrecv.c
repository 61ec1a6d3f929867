/* MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.0): ring exchanges of every protocol
 * size, a non-contiguous replace, MPI_PROC_NULL, Test polling, truncation and argument
 * errors. Any number of ranks (1 included: a rank exchanges with itself). */
#include "testutil.h"

int main(int argc, char **argv)
{
    int rank, size;
    tu_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank = tu_rank;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    static const size_t sizes[] = {0, 1, 100, 8192, 70000, 1 << 20, 4 << 20};

    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        char *out = tu_malloc(n + 1), *in = tu_malloc(n + 1);
        tu_fill(out, n, 1000 * rank + k);
        memset(in, 0, n + 1);
        MPI_Request req;
        MPI_Status st;
        MPI_OK(MPI_Isendrecv(out, (int)n, MPI_BYTE, right, 7, in, (int)n + 1, MPI_BYTE, left, 7, MPI_COMM_WORLD, &req));
        CHECK(req != MPI_REQUEST_NULL, "no request");
        if (k % 2) {
            int flag = 0;
            while (!flag)
                MPI_OK(MPI_Test(&req, &flag, &st));
        } else {
            MPI_OK(MPI_Wait(&req, &st));
        }
        CHECK(req == MPI_REQUEST_NULL, "request not freed by completion");
        CHECK_STATUS(&st, left, 7, MPI_BYTE, (int)n);
        CHECK_PATTERN(in, n, 1000 * left + k, "Isendrecv of %zu bytes", n);

        /* In place: the buffer gets the left neighbour's data. */
        tu_fill(out, n, 77 * rank + k);
        MPI_OK(MPI_Isendrecv_replace(out, (int)n, MPI_BYTE, right, 8, left, MPI_ANY_TAG, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, &st));
        CHECK_STATUS(&st, left, 8, MPI_BYTE, (int)n);
        CHECK_PATTERN(out, n, 77 * left + k, "Isendrecv_replace of %zu bytes", n);
        free(out);
        free(in);
    }

    /* Non-contiguous replace: every other int of 2*N. */
    enum { N = 5000 };
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    int *v = tu_malloc(2 * N * sizeof(int));
    for (int i = 0; i < 2 * N; i++)
        v[i] = (i % 2) ? -1 : rank * 100000 + i;
    MPI_Request req;
    MPI_Status st;
    MPI_OK(MPI_Isendrecv_replace(v, 1, vec, right, 9, left, 9, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, &st));
    CHECK_STATUS(&st, left, 9, vec, 1);
    for (int i = 0; i < 2 * N; i++)
        CHECK(v[i] == ((i % 2) ? -1 : left * 100000 + i), "vector replace: v[%d] = %d", i, v[i]);
    free(v);
    MPI_Type_free(&vec);

    /* MPI_PROC_NULL on both sides completes at once with the PROC_NULL status. */
    int x = 5, y = 6;
    MPI_OK(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, &y, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && y == 6, "PROC_NULL status");
    /* Send only (receive from PROC_NULL) paired with a plain receive. */
    MPI_OK(MPI_Isendrecv(&rank, 1, MPI_INT, right, 3, &y, 1, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Recv(&x, 1, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(x == left, "send half: got %d", x);

    /* Several outstanding at once, completed by Waitall. */
    int a[4], b[4];
    MPI_Request rs[4];
    for (int i = 0; i < 4; i++) {
        a[i] = rank * 10 + i;
        MPI_OK(MPI_Isendrecv(&a[i], 1, MPI_INT, right, 20 + i, &b[i], 1, MPI_INT, left, 20 + i, MPI_COMM_WORLD, &rs[i]));
    }
    MPI_Status sts[4];
    MPI_OK(MPI_Waitall(4, rs, sts));
    for (int i = 0; i < 4; i++)
        CHECK(b[i] == left * 10 + i && sts[i].MPI_TAG == 20 + i, "waitall %d: %d", i, b[i]);

    /* Errors, raised by the call, under MPI_ERRORS_RETURN. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls, rc;
    rc = MPI_Isendrecv(&x, 1, MPI_INT, right, -5, &y, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &req);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TAG, "bad send tag: class %d", cls);
    rc = MPI_Isendrecv(&x, 1, MPI_INT, size, 1, &y, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &req);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "bad dest: class %d", cls);
    rc = MPI_Isendrecv(&x, 1, MPI_INT, right, 1, &y, 1, MPI_INT, -7, 1, MPI_COMM_WORLD, &req);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "bad source: class %d", cls);
    rc = MPI_Isendrecv(&x, -1, MPI_INT, right, 1, &y, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &req);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "negative count: class %d", cls);
    rc = MPI_Isendrecv(&x, 1, MPI_DATATYPE_NULL, right, 1, &y, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &req);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "null type: class %d", cls);
    rc = MPI_Isendrecv(&x, 1, MPI_INT, right, 1, &y, 1, MPI_INT, left, 1, MPI_COMM_NULL, &req);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "null comm: class %d", cls);
    rc = MPI_Isendrecv(&x, 1, MPI_INT, right, 1, &y, 1, MPI_INT, left, 1, MPI_COMM_WORLD, NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "null request: class %d", cls);
    rc = MPI_Isendrecv_replace(&x, 1, MPI_INT, right, 1, left, MPI_ANY_TAG - 1, MPI_COMM_WORLD, &req);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TAG, "replace, bad recv tag: class %d", cls);

    /* Truncation: reported by the wait, with the receive's status. */
    int two[2] = {1, 2}, one = 0;
    MPI_OK(MPI_Isendrecv(two, 2, MPI_INT, right, 30, &one, 1, MPI_INT, left, 30, MPI_COMM_WORLD, &req));
    rc = MPI_Wait(&req, &st);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "truncation: class %d", cls);

    /* Freed while pending: still completes, the program goes on. */
    MPI_OK(MPI_Isendrecv(&rank, 1, MPI_INT, right, 40, &y, 1, MPI_INT, left, 40, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Request_free(&req));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Isendrecv(&rank, 1, MPI_INT, right, 41, &x, 1, MPI_INT, left, 41, MPI_COMM_WORLD, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(x == left && y == left, "after free: %d %d", x, y);

    MPI_Finalize();
    if (rank == 0)
        printf("isendrecv: OK\n");
    return 0;
}
