/* rma_dynamic: MPI_Win_create_dynamic with MPI_Win_attach / MPI_Win_detach.
 *  - every rank attaches a malloc'd region A (NA ints); addresses are exchanged with
 *    MPI_Get_address + MPI_Allgather(MPI_AINT); displacements are absolute addresses
 *    (MPI_Aint_add), disp_unit 1;
 *  - lock_all epoch: MPI_Put into slot [rank] of every rank's A, MPI_Get of every rank's
 *    read-only part, MPI_Accumulate(MPI_SUM) into A's counter, MPI_Fetch_and_op and
 *    MPI_Compare_and_swap; owners check after unlock_all + barrier;
 *  - everyone detaches A (after a barrier: nobody targets it any more) and frees it, then
 *    attaches two new regions B (a different size) and C at the same time and uses both
 *    with fence synchronization (allowed on dynamic windows), including a derived
 *    (vector) target type inside B;
 *  - a region attached, detached and attached again (same memory) works;
 *  - an array attached as two halves: a put, an accumulate and a get spanning both;
 *  - flavor attribute is MPI_WIN_FLAVOR_DYNAMIC, size 0.
 * Any RMA to memory that is not attached is erroneous, so none is tried here (see
 * rma_errors). */
#include "testutil.h"

#define NA 64 /* A: [0, nprocs) put slots, [CNT] counter, [RO, RO+8) read-only */
#define NB 200
#define NC 16

static int rank, nprocs;

static MPI_Aint *exchange(void *p)
{
    MPI_Aint a, *all = tu_malloc((size_t)nprocs * sizeof(MPI_Aint));
    MPI_OK(MPI_Get_address(p, &a));
    MPI_OK(MPI_Allgather(&a, 1, MPI_AINT, all, 1, MPI_AINT, MPI_COMM_WORLD));
    return all;
}

static MPI_Aint at(MPI_Aint base, MPI_Aint nints) { return MPI_Aint_add(base, nints * (MPI_Aint)sizeof(int)); }

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    CHECK(nprocs <= 40, "at most 40 ranks");
    const int CNT = 48, RO = 50, CAS = 60;

    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int *flavor = NULL, flag = 0;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_DYNAMIC, "flavor of a dynamic window: %d",
          flag ? *flavor : -1);
    MPI_Aint *wsize = NULL;
    MPI_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag));
    CHECK(flag && *wsize == 0, "MPI_WIN_SIZE of a dynamic window = %ld, expected 0",
          flag ? (long)*wsize : -1L);

    /* ---- region A ---- */
    int *A = tu_malloc(NA * sizeof(int));
    for (int i = 0; i < NA; i++)
        A[i] = -1;
    A[CNT] = 0;
    A[CAS] = 0;
    for (int k = 0; k < 8; k++)
        A[RO + k] = rank * 10 + k;
    MPI_OK(MPI_Win_attach(win, A, NA * sizeof(int)));
    MPI_Aint *addrA = exchange(A); /* a collective: everyone has attached */

    int mine = rank * 7 + 1, one = 1, got[40 * 8], fetched[40], swapped[40];
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < nprocs; k++) {
        int t = (rank + k) % nprocs;
        MPI_OK(MPI_Put(&mine, 1, MPI_INT, t, at(addrA[t], rank), 1, MPI_INT, win));
        MPI_OK(MPI_Get(&got[t * 8], 8, MPI_INT, t, at(addrA[t], RO), 8, MPI_INT, win));
        MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, t, at(addrA[t], CNT), 1, MPI_INT, MPI_SUM, win));
        MPI_OK(MPI_Fetch_and_op(&one, &fetched[t], MPI_INT, t, at(addrA[t], CNT + 1), MPI_SUM,
                                win));
        int want = rank + 1, zero = 0;
        MPI_OK(MPI_Compare_and_swap(&want, &zero, &swapped[t], MPI_INT, t, at(addrA[t], CAS),
                                    win));
        MPI_OK(MPI_Win_flush(t, win));
    }
    MPI_OK(MPI_Win_unlock_all(win));
    for (int t = 0; t < nprocs; t++)
        for (int k = 0; k < 8; k++)
            CHECK(got[t * 8 + k] == t * 10 + k, "A: MPI_Get from rank %d element %d = %d, "
                  "expected %d", t, k, got[t * 8 + k], t * 10 + k);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* everyone added 1 to A[CNT + 1] (initially -1), so fetch results lie in -1..size-2 */
    for (int t = 0; t < nprocs; t++)
        CHECK(fetched[t] >= -1 && fetched[t] < nprocs - 1, "A: MPI_Fetch_and_op on rank %d "
              "returned %d", t, fetched[t]);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (int o = 0; o < nprocs; o++)
        CHECK(A[o] == o * 7 + 1, "A: slot of rank %d = %d, expected %d", o, A[o], o * 7 + 1);
    CHECK(A[CNT] == nprocs, "A: counter = %d, expected %d", A[CNT], nprocs);
    CHECK(A[CNT + 1] == nprocs - 1, "A: fetch-and-op counter = %d, expected %d", A[CNT + 1],
          nprocs - 1);
    CHECK(A[CAS] >= 1 && A[CAS] <= nprocs, "A: compare-and-swap word = %d", A[CAS]);
    for (int i = nprocs; i < CNT; i++)
        CHECK(A[i] == -1, "A: unused element %d changed to %d", i, A[i]);
    MPI_OK(MPI_Win_unlock(rank, win));
    /* exactly one compare-and-swap succeeded per target */
    int wins = 0, total = 0;
    for (int t = 0; t < nprocs; t++)
        wins += swapped[t] == 0;
    MPI_OK(MPI_Allreduce(&wins, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(total == nprocs, "A: %d successful compare-and-swaps over all targets, expected %d",
          total, nprocs);

    /* ---- detach A, attach B and C ---- */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* nobody accesses A any more */
    MPI_OK(MPI_Win_detach(win, A));
    free(A);
    free(addrA);
    int *B = tu_malloc(NB * sizeof(int)), *C = tu_malloc(NC * sizeof(int));
    for (int i = 0; i < NB; i++)
        B[i] = -2;
    for (int i = 0; i < NC; i++)
        C[i] = 0;
    MPI_OK(MPI_Win_attach(win, B, NB * sizeof(int)));
    MPI_OK(MPI_Win_attach(win, C, NC * sizeof(int)));
    MPI_Aint *addrB = exchange(B), *addrC = exchange(C);

    /* B: rank o writes 4 ints, 5 apart, at B[o] (a vector target); C: SUM into C[0..3] */
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(4, 1, 5 * 8, MPI_INT, &vec)); /* 40 ints apart: 4 * 40 < NB */
    MPI_OK(MPI_Type_commit(&vec));
    int src[4], add[4], cget[40 * 4];
    for (int j = 0; j < 4; j++) {
        src[j] = rank * 100 + j;
        add[j] = (rank + 1) << j;
    }
    MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    for (int k = 0; k < nprocs; k++) {
        int t = (rank + k) % nprocs;
        MPI_OK(MPI_Put(src, 4, MPI_INT, t, at(addrB[t], rank), 1, vec, win));
        MPI_OK(MPI_Accumulate(add, 4, MPI_INT, t, addrC[t], 4, MPI_INT, MPI_SUM, win));
    }
    MPI_OK(MPI_Win_fence(0, win));
    for (int k = 0; k < nprocs; k++) {
        int t = (rank + k) % nprocs;
        MPI_OK(MPI_Get(&cget[t * 4], 4, MPI_INT, t, addrC[t], 4, MPI_INT, win));
    }
    MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int t = 0; t < nprocs; t++)
        for (int j = 0; j < 4; j++) {
            int e = (nprocs * (nprocs + 1) / 2) << j;
            CHECK(cget[t * 4 + j] == e, "C: MPI_Get of rank %d's sum %d = %d, expected %d", t, j,
                  cget[t * 4 + j], e);
        }
    for (int i = 0; i < NB; i++) {
        int e = -2;
        if (i % 40 < nprocs && i / 40 < 4)
            e = (i % 40) * 100 + i / 40;
        CHECK(B[i] == e, "B: element %d = %d, expected %d", i, B[i], e);
    }
    for (int j = 0; j < 4; j++)
        CHECK(C[j] == (nprocs * (nprocs + 1) / 2) << j, "C: element %d = %d", j, C[j]);
    for (int j = 4; j < NC; j++)
        CHECK(C[j] == 0, "C: element %d changed to %d", j, C[j]);

    /* ---- C detached and attached again (same memory), B detached ---- */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_detach(win, B));
    MPI_OK(MPI_Win_detach(win, C));
    MPI_OK(MPI_Win_attach(win, C, NC * sizeof(int)));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD)); /* everyone re-attached C (same address) */
    MPI_OK(MPI_Win_lock_all(0, win));
    int right = (rank + 1) % nprocs, v = 1000 + rank, back = -1;
    MPI_OK(MPI_Put(&v, 1, MPI_INT, right, at(addrC[right], 8), 1, MPI_INT, win));
    MPI_OK(MPI_Win_flush(right, win));
    MPI_OK(MPI_Get(&back, 1, MPI_INT, right, at(addrC[right], 8), 1, MPI_INT, win));
    MPI_OK(MPI_Win_flush(right, win));
    CHECK(back == v, "C re-attached: read back %d, expected %d", back, v);
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int left = (rank + nprocs - 1) % nprocs;
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK(C[8] == 1000 + left, "C re-attached: element 8 = %d, expected %d", C[8], 1000 + left);
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Win_detach(win, C));

    /* ---- D: one array attached as two halves; accesses that span both ---- */
    {
        enum { ND = 64 };
        int *D = tu_malloc(2 * ND * sizeof(int));
        for (int i = 0; i < 2 * ND; i++)
            D[i] = -1;
        MPI_OK(MPI_Win_attach(win, D, ND * sizeof(int)));
        MPI_OK(MPI_Win_attach(win, D + ND, ND * sizeof(int)));
        MPI_Aint *addrD = exchange(D);
        int src[ND], got[ND];
        for (int i = 0; i < ND; i++)
            src[i] = rank * 1000 + i;
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
        MPI_OK(MPI_Put(src, ND, MPI_INT, right, at(addrD[right], ND / 2), ND, MPI_INT, win));
        MPI_OK(MPI_Win_flush(right, win));
        MPI_OK(MPI_Accumulate(src, 4, MPI_INT, right, at(addrD[right], ND - 2), 4, MPI_INT, MPI_SUM, win));
        MPI_OK(MPI_Get(got, ND, MPI_INT, right, at(addrD[right], ND / 2), ND, MPI_INT, win));
        MPI_OK(MPI_Win_unlock(right, win));
        for (int i = 0; i < ND; i++) {
            int j = ND / 2 + i, e = src[i];
            if (j >= ND - 2 && j < ND + 2)
                e += src[j - (ND - 2)];
            CHECK(got[i] == e, "D: read back across the two halves [%d] = %d, expected %d", i, got[i], e);
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
        for (int i = 0; i < 2 * ND; i++) {
            int k = i - ND / 2, e = (k >= 0 && k < ND) ? left * 1000 + k : -1;
            if (i >= ND - 2 && i < ND + 2)
                e += left * 1000 + (i - (ND - 2));
            CHECK(D[i] == e, "D: element %d = %d, expected %d", i, D[i], e);
        }
        MPI_OK(MPI_Win_unlock(rank, win));
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Win_detach(win, D));
        MPI_OK(MPI_Win_detach(win, D + ND));
        free(D);
        free(addrD);
    }

    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Win_free(&win));
    free(B);
    free(C);
    free(addrB);
    free(addrC);
    if (rank == 0)
        printf("rma_dynamic: OK (%d ranks)\n", nprocs);
    MPI_Finalize();
    return 0;
}
