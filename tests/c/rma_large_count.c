/* rma_large_count: the MPI-4.0 large-count one-sided calls (MPI_Count counts, MPI_Aint
 * displacement units), each with a checked result.
 *  - MPI_Win_allocate_c (disp_unit sizeof(int) as MPI_Aint): in a fence epoch every rank
 *    MPI_Put_c's a block to its right neighbour, MPI_Get_c's its left neighbour's block,
 *    MPI_Accumulate_c(MPI_SUM)'s into the right neighbour, MPI_Get_accumulate_c(MPI_SUM)'s
 *    into the left one (the old values come back); a strided MPI_Put_c with a vector type;
 *  - lock epochs (MPI_Win_lock_all, and MPI_Win_lock exclusive): MPI_Rput_c, MPI_Rget_c,
 *    MPI_Raccumulate_c, MPI_Rget_accumulate_c, each request waited and the values checked;
 *  - MPI_Win_create_c over a local array with disp_unit 8 (MPI_Aint): MPI_Put_c of doubles
 *    at displacement 3 lands at element 3; MPI_WIN_DISP_UNIT reads 8;
 *  - MPI_Win_allocate_shared_c per node: MPI_Win_shared_query_c gives every rank's size,
 *    disp_unit and a pointer that loads what that rank stored; the int MPI_Win_shared_query
 *    agrees;
 *  - counts above INT_MAX are not truncated: a put/get of 2^32+4 bytes to a 64-byte window
 *    is MPI_ERR_RMA_RANGE, and origin 2^32+4 bytes against target 4 bytes is MPI_ERR_TYPE
 *    (a count cut to 32 bits would be 4 and succeed); a negative count is MPI_ERR_COUNT
 *    (OxMPI; skipped with RMA_LENIENT: MPICH 4.0.2 does not check target ranges), and
 *    so is a count whose byte size wraps around 2^64 (put, get, accumulate,
 *    get-accumulate);
 *  - a shared window with disp_unit INT_MAX + 8: MPI_Win_shared_query_c returns it; the int
 *    MPI_Win_shared_query and the MPI_WIN_DISP_UNIT attribute cannot hold it and raise
 *    MPI_ERR_VALUE_TOO_LARGE (OxMPI; skipped with RMA_LENIENT set, for another MPI). */
#include "testutil.h"
#include <limits.h>

#define N 16

static int rank, nprocs, right, left;

static int val(int owner, int i) { return owner * 1000 + i; }

static void fence_ops(void)
{
    int *base = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate_c((MPI_Aint)(2 * N * sizeof(int)), (MPI_Aint)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    int *du = NULL, flag = 0;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag));
    CHECK(flag && *du == (int)sizeof(int), "MPI_WIN_DISP_UNIT of MPI_Win_allocate_c: flag %d value %d", flag, flag ? *du : -1);
    for (int i = 0; i < 2 * N; i++)
        base[i] = val(rank, i);
    int src[N], got[N], res[N];
    for (int i = 0; i < N; i++)
        src[i] = val(rank, i) + 500;
    MPI_OK(MPI_Win_fence(0, win));
    /* put my block into the right neighbour's first half; read the left one's second half */
    MPI_OK(MPI_Put_c(src, (MPI_Count)N, MPI_INT, right, 0, (MPI_Count)N, MPI_INT, win));
    MPI_OK(MPI_Get_c(got, (MPI_Count)N, MPI_INT, left, N, (MPI_Count)N, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++) {
        CHECK(base[i] == val(left, i) + 500, "MPI_Put_c: element %d is %d, expected %d", i, base[i], val(left, i) + 500);
        CHECK(got[i] == val(left, N + i), "MPI_Get_c: element %d is %d, expected %d", i, got[i], val(left, N + i));
    }
    /* accumulate into the right neighbour's second half; fetch-and-add the left one's first */
    int one[N];
    for (int i = 0; i < N; i++)
        one[i] = i + 1;
    MPI_OK(MPI_Accumulate_c(one, (MPI_Count)N, MPI_INT, right, N, (MPI_Count)N, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++) {
        int want = val(rank, N + i) + i + 1;
        CHECK(base[N + i] == want, "MPI_Accumulate_c: element %d is %d, expected %d", N + i, base[N + i], want);
    }
    MPI_OK(MPI_Get_accumulate_c(one, (MPI_Count)N, MPI_INT, res, (MPI_Count)N, MPI_INT, left, 0, (MPI_Count)N, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++) {
        /* the left neighbour's first half held what its own left neighbour put */
        int ll = ((left - 1) % nprocs + nprocs) % nprocs;
        CHECK(res[i] == val(ll, i) + 500, "MPI_Get_accumulate_c: old element %d is %d, expected %d", i, res[i], val(ll, i) + 500);
        CHECK(base[i] == val(left, i) + 500 + i + 1, "MPI_Get_accumulate_c: element %d is %d, expected %d", i, base[i], val(left, i) + 500 + i + 1);
    }
    /* the fence opened the next epoch: no put may land here before everyone has checked */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* a strided put: every other int of src into consecutive target ints */
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    MPI_OK(MPI_Put_c(src, 1, vec, right, 0, (MPI_Count)(N / 2), MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N / 2; i++)
        CHECK(base[i] == val(left, 2 * i) + 500, "MPI_Put_c (vector): element %d is %d, expected %d", i, base[i], val(left, 2 * i) + 500);
    MPI_OK(MPI_Type_free(&vec));

    /* counts above INT_MAX reach the checks whole (MPICH 4.0.2 checks no target range:
     * skipped with RMA_LENIENT) */
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    if (getenv("RMA_LENIENT")) {
        MPI_OK(MPI_Win_fence(0, win));
        MPI_OK(MPI_Win_free(&win));
        return;
    }
    const MPI_Count big = ((MPI_Count)1 << 32) + 4;
    char small[8] = {0};
    int rc = MPI_Put_c(small, big, MPI_BYTE, right, 0, big, MPI_BYTE, win);
    CHECK(tu_error_class(rc) == MPI_ERR_RMA_RANGE, "MPI_Put_c of 2^32+4 bytes into a %d-byte window: class %d, expected MPI_ERR_RMA_RANGE", (int)(2 * N * sizeof(int)), tu_error_class(rc));
    rc = MPI_Get_c(small, big, MPI_BYTE, right, 0, big, MPI_BYTE, win);
    CHECK(tu_error_class(rc) == MPI_ERR_RMA_RANGE, "MPI_Get_c of 2^32+4 bytes: class %d, expected MPI_ERR_RMA_RANGE", tu_error_class(rc));
    rc = MPI_Put_c(small, big, MPI_BYTE, right, 0, 4, MPI_BYTE, win);
    CHECK(tu_error_class(rc) == MPI_ERR_TYPE, "MPI_Put_c of 2^32+4 origin bytes against 4 target bytes: class %d, expected MPI_ERR_TYPE", tu_error_class(rc));
    rc = MPI_Accumulate_c(small, 1, MPI_INT, right, 0, big, MPI_INT, MPI_SUM, win);
    CHECK(tu_error_class(rc) == MPI_ERR_RMA_RANGE, "MPI_Accumulate_c of 2^32+4 target ints: class %d, expected MPI_ERR_RMA_RANGE", tu_error_class(rc));
    rc = MPI_Put_c(small, -1, MPI_BYTE, right, 0, 1, MPI_BYTE, win);
    CHECK(tu_error_class(rc) == MPI_ERR_COUNT, "MPI_Put_c with origin count -1: class %d, expected MPI_ERR_COUNT", tu_error_class(rc));
    rc = MPI_Get_c(small, 1, MPI_BYTE, right, 0, -1, MPI_BYTE, win);
    CHECK(tu_error_class(rc) == MPI_ERR_COUNT, "MPI_Get_c with target count -1: class %d, expected MPI_ERR_COUNT", tu_error_class(rc));
    /* counts whose byte size wraps around 2^64 (2^61 + 2 doubles = 16 bytes mod 2^64)
     * are errors, not 16-byte transfers (a fast path multiplied without a check once,
     * and the accumulate then ran 2^61 elements into the window) */
    const MPI_Count wrap = ((MPI_Count)1 << 61) + 2;
    double dw[2] = {1, 2}, dr[2];
    rc = MPI_Put_c(dw, wrap, MPI_DOUBLE, right, 0, wrap, MPI_DOUBLE, win);
    CHECK(tu_error_class(rc) == MPI_ERR_COUNT, "MPI_Put_c of 2^61+2 doubles: class %d, expected MPI_ERR_COUNT", tu_error_class(rc));
    rc = MPI_Get_c(dr, wrap, MPI_DOUBLE, right, 0, wrap, MPI_DOUBLE, win);
    CHECK(tu_error_class(rc) == MPI_ERR_COUNT, "MPI_Get_c of 2^61+2 doubles: class %d, expected MPI_ERR_COUNT", tu_error_class(rc));
    rc = MPI_Accumulate_c(dw, wrap, MPI_DOUBLE, right, 0, wrap, MPI_DOUBLE, MPI_SUM, win);
    CHECK(tu_error_class(rc) == MPI_ERR_COUNT, "MPI_Accumulate_c of 2^61+2 doubles: class %d, expected MPI_ERR_COUNT", tu_error_class(rc));
    rc = MPI_Get_accumulate_c(dw, wrap, MPI_DOUBLE, dr, wrap, MPI_DOUBLE, right, 0, wrap, MPI_DOUBLE, MPI_SUM, win);
    CHECK(tu_error_class(rc) == MPI_ERR_COUNT, "MPI_Get_accumulate_c of 2^61+2 doubles: class %d, expected MPI_ERR_COUNT", tu_error_class(rc));
    rc = MPI_Accumulate_c(dw, wrap, MPI_INT, right, 0, wrap, MPI_INT, MPI_MAX, win);
    CHECK(tu_error_class(rc) == MPI_ERR_COUNT, "MPI_Accumulate_c(MPI_MAX) of 2^61+2 ints: class %d, expected MPI_ERR_COUNT", tu_error_class(rc));
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Win_free(&win));
}

static void lock_ops(void)
{
    long *base = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate_c((MPI_Aint)(2 * N * sizeof(long)), (MPI_Aint)sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    for (int i = 0; i < 2 * N; i++)
        base[i] = 0;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    long src[N], got[N], res[N];
    for (int i = 0; i < N; i++)
        src[i] = (long)rank * 100 + i;
    MPI_Request req;
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Rput_c(src, (MPI_Count)N, MPI_LONG, right, 0, (MPI_Count)N, MPI_LONG, win, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Win_flush(right, win));
    MPI_OK(MPI_Rget_c(got, (MPI_Count)N, MPI_LONG, right, 0, (MPI_Count)N, MPI_LONG, win, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        CHECK(got[i] == src[i], "MPI_Rget_c after MPI_Rput_c: element %d is %ld, expected %ld", i, got[i], src[i]);
    /* every rank adds rank+1 to element i of every target's second half */
    long add[N];
    for (int i = 0; i < N; i++)
        add[i] = rank + 1;
    for (int t = 0; t < nprocs; t++) {
        MPI_OK(MPI_Raccumulate_c(add, (MPI_Count)N, MPI_LONG, t, N, (MPI_Count)N, MPI_LONG, MPI_SUM, win, &req));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    long total = (long)nprocs * (nprocs + 1) / 2;
    for (int i = 0; i < N; i++)
        CHECK(base[N + i] == total, "MPI_Raccumulate_c: element %d is %ld, expected %ld", N + i, base[N + i], total);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* MPI_Rget_accumulate_c under an exclusive lock: the old values come back */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, left, 0, win));
    MPI_OK(MPI_Rget_accumulate_c(add, (MPI_Count)N, MPI_LONG, res, (MPI_Count)N, MPI_LONG, left, N, (MPI_Count)N, MPI_LONG, MPI_SUM, win, &req));
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Win_unlock(left, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* each target gets one MPI_Rget_accumulate_c, from its right neighbour: the old values
     * are the sums above, and our own second half got our right neighbour's add */
    for (int i = 0; i < N; i++)
        CHECK(res[i] == total, "MPI_Rget_accumulate_c: old element %d is %ld, expected %ld", i, res[i], total);
    long want = total + right + 1;
    for (int i = 0; i < N; i++)
        CHECK(base[N + i] == want, "MPI_Rget_accumulate_c: element %d is %ld, expected %ld", N + i, base[N + i], want);
    MPI_OK(MPI_Win_free(&win));
}

static void create_ops(void)
{
    double mem[8];
    for (int i = 0; i < 8; i++)
        mem[i] = -1.0;
    MPI_Win win;
    MPI_OK(MPI_Win_create_c(mem, (MPI_Aint)sizeof mem, (MPI_Aint)sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int *du = NULL, flag = 0;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag));
    CHECK(flag && *du == 8, "MPI_WIN_DISP_UNIT of MPI_Win_create_c: %d, expected 8", flag ? *du : -1);
    double two[2] = {rank + 0.25, rank + 0.5};
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put_c(two, 2, MPI_DOUBLE, right, 3, 2, MPI_DOUBLE, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(mem[3] == left + 0.25 && mem[4] == left + 0.5 && mem[2] == -1.0 && mem[5] == -1.0,
          "MPI_Put_c at displacement 3 (disp_unit 8): mem[2..5] = %g %g %g %g", mem[2], mem[3], mem[4], mem[5]);
    MPI_OK(MPI_Win_free(&win));
}

static void shared_ops(MPI_Comm shm, int srank, int ssize)
{
    int *base = NULL;
    MPI_Win win;
    MPI_Aint mysize = (MPI_Aint)(srank + 1) * 4 * sizeof(int);
    MPI_OK(MPI_Win_allocate_shared_c(mysize, (MPI_Aint)sizeof(int), MPI_INFO_NULL, shm, &base, &win));
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    for (int i = 0; i < (srank + 1) * 4; i++)
        base[i] = srank * 100 + i;
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(shm));
    MPI_OK(MPI_Win_sync(win));
    for (int r = 0; r < ssize; r++) {
        MPI_Aint sz = -1, du = -1, sz2 = -1;
        int du2 = -1;
        int *p = NULL, *p2 = NULL;
        MPI_OK(MPI_Win_shared_query_c(win, r, &sz, &du, &p));
        CHECK(sz == (MPI_Aint)(r + 1) * 4 * (MPI_Aint)sizeof(int) && du == (MPI_Aint)sizeof(int),
              "MPI_Win_shared_query_c(%d): size %ld disp_unit %ld", r, (long)sz, (long)du);
        MPI_OK(MPI_Win_shared_query(win, r, &sz2, &du2, &p2));
        CHECK(sz2 == sz && du2 == (int)du && p2 == p, "MPI_Win_shared_query(%d) disagrees with the _c form", r);
        for (int i = 0; i < (r + 1) * 4; i++)
            CHECK(p[i] == r * 100 + i, "load through MPI_Win_shared_query_c(%d) pointer: element %d is %d", r, i, p[i]);
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Win_free(&win));

    if (getenv("RMA_LENIENT"))
        return;
    /* a displacement unit no int holds */
    const MPI_Aint hugeunit = (MPI_Aint)INT_MAX + 8;
    MPI_OK(MPI_Win_allocate_shared_c(64, hugeunit, MPI_INFO_NULL, shm, &base, &win));
    MPI_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Aint sz = -1, du = -1;
    void *p = NULL;
    MPI_OK(MPI_Win_shared_query_c(win, srank, &sz, &du, &p));
    CHECK(sz == 64 && du == hugeunit && p == (void *)base, "MPI_Win_shared_query_c: size %ld disp_unit %ld (expected 64 and %ld)", (long)sz, (long)du, (long)hugeunit);
    int idu = -1;
    int rc = MPI_Win_shared_query(win, srank, &sz, &idu, &p);
    CHECK(tu_error_class(rc) == MPI_ERR_VALUE_TOO_LARGE, "MPI_Win_shared_query of disp_unit INT_MAX+8: class %d, expected MPI_ERR_VALUE_TOO_LARGE", tu_error_class(rc));
    int *a = NULL, flag = 0;
    rc = MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &a, &flag);
    CHECK(tu_error_class(rc) == MPI_ERR_VALUE_TOO_LARGE, "MPI_WIN_DISP_UNIT of disp_unit INT_MAX+8: class %d, expected MPI_ERR_VALUE_TOO_LARGE", tu_error_class(rc));
    MPI_OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    right = (rank + 1) % nprocs;
    left = (rank + nprocs - 1) % nprocs;
    fence_ops();
    lock_ops();
    create_ops();
    MPI_Comm shm;
    int srank, ssize;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm));
    MPI_OK(MPI_Comm_rank(shm, &srank));
    MPI_OK(MPI_Comm_size(shm, &ssize));
    shared_ops(shm, srank, ssize);
    MPI_OK(MPI_Comm_free(&shm));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("rma_large_count: OK\n");
    MPI_OK(MPI_Finalize());
    return 0;
}
