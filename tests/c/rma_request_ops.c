/* rma_request_ops: request-based RMA (MPI_Rput, MPI_Rget, MPI_Raccumulate,
 * MPI_Rget_accumulate) inside MPI_Win_lock_all, every rank to every rank.
 * Window (ints, disp_unit sizeof(int)) on every rank:
 *   [0, 4*size)            put slots: 4 ints per origin
 *   [ACC, ACC+4)           MPI_SUM target of MPI_Raccumulate (+ (origin + 1) * (j + 1))
 *   [GACC, GACC+4)         MPI_SUM target of MPI_Rget_accumulate (+1 each), old values back
 *   [RO, RO+NRO)           read-only data for MPI_Rget
 * Checks:
 *  - after MPI_Waitall, MPI_Rget buffers hold the target's data and MPI_Rget_accumulate
 *    result buffers hold old values in range (local completion is enough for results);
 *  - MPI_Rput / MPI_Raccumulate completion is local only: the origin buffers are then
 *    overwritten (must not matter), and after MPI_Win_flush an MPI_Rget reads back what
 *    the MPI_Rput wrote at the target;
 *  - a second round completes its requests with an MPI_Test loop (deadline 30 s), a third
 *    with MPI_Wait one by one in reverse order and MPI_Waitany; MPI_Rget into a
 *    non-contiguous (vector) origin buffer;
 *  - requests of MPI_Rput to MPI_PROC_NULL complete at once;
 *  - at the end every owner checks its slots and counters exactly, and each target
 *    gathers the old values returned by MPI_Rget_accumulate: for every element they are
 *    exactly init + 0 .. (size * rounds - 1). */
#include "testutil.h"

#define NRO 8
#define ROUNDS 3
#define GINIT 500

static int rank, nprocs, ACC, GACC, RO, NELEM;

static int ro_val(int owner, int k) { return owner * 100 + k * 3 + 1; }
static int put_val(int origin, int round, int j) { return origin * 1000 + round * 10 + j; }

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    ACC = 4 * nprocs;
    GACC = ACC + 4;
    RO = GACC + 4;
    NELEM = RO + NRO;
    NELEM += (4 - NELEM % 4) % 4; /* a multiple of 16 bytes */

    int *w = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate((MPI_Aint)NELEM * sizeof(int), sizeof(int), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &w, &win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (int i = 0; i < NELEM; i++)
        w[i] = -1;
    for (int j = 0; j < 4; j++) {
        w[ACC + j] = 0;
        w[GACC + j] = GINIT;
    }
    for (int k = 0; k < NRO; k++)
        w[RO + k] = ro_val(rank, k);
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    MPI_Datatype every_other; /* NRO ints, every other int of a 2*NRO buffer */
    MPI_OK(MPI_Type_vector(NRO, 1, 2, MPI_INT, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));

    /* per target t and round r: */
    int nreq = 4 * nprocs;
    MPI_Request *req = tu_malloc((size_t)(nreq + 1) * sizeof(MPI_Request));
    int *pbuf = tu_malloc((size_t)nprocs * 4 * sizeof(int));       /* Rput origin */
    int *abuf = tu_malloc((size_t)nprocs * 4 * sizeof(int));       /* Raccumulate origin */
    int *gbuf = tu_malloc((size_t)nprocs * 2 * NRO * sizeof(int)); /* Rget result */
    int *old = tu_malloc((size_t)ROUNDS * nprocs * 4 * sizeof(int)); /* Rget_accumulate */
    int *back = tu_malloc((size_t)nprocs * 4 * sizeof(int));
    int ones[4] = {1, 1, 1, 1};
    MPI_Status *sts = tu_malloc((size_t)(nreq + 1) * sizeof(MPI_Status));

    MPI_OK(MPI_Win_lock_all(0, win));
    for (int round = 0; round < ROUNDS; round++) {
        int n = 0;
        for (int i = 0; i < nprocs * 2 * NRO; i++)
            gbuf[i] = -7;
        for (int k = 0; k < nprocs; k++) {
            int t = (rank + k) % nprocs;
            for (int j = 0; j < 4; j++) {
                pbuf[t * 4 + j] = put_val(rank, round, j);
                abuf[t * 4 + j] = (rank + 1) * (j + 1);
                old[(round * nprocs + t) * 4 + j] = -9;
            }
            MPI_OK(MPI_Rput(&pbuf[t * 4], 4, MPI_INT, t, 4 * rank, 4, MPI_INT, win, &req[n++]));
            if (round == 2) /* a vector origin: every other int */
                MPI_OK(MPI_Rget(&gbuf[t * 2 * NRO], 1, every_other, t, RO, NRO, MPI_INT, win,
                                &req[n++]));
            else
                MPI_OK(MPI_Rget(&gbuf[t * 2 * NRO], NRO, MPI_INT, t, RO, NRO, MPI_INT, win,
                                &req[n++]));
            MPI_OK(MPI_Raccumulate(&abuf[t * 4], 4, MPI_INT, t, ACC, 4, MPI_INT, MPI_SUM, win,
                                   &req[n++]));
            MPI_OK(MPI_Rget_accumulate(ones, 4, MPI_INT, &old[(round * nprocs + t) * 4], 4,
                                       MPI_INT, t, GACC, 4, MPI_INT, MPI_SUM, win, &req[n++]));
        }
        CHECK(n == nreq, "request count");
        for (int i = 0; i < n; i++)
            CHECK(req[i] != MPI_REQUEST_NULL, "request %d is MPI_REQUEST_NULL", i);

        if (round == 0) {
            MPI_OK(MPI_Waitall(n, req, sts));
        } else if (round == 1) {
            double t0 = MPI_Wtime();
            int done = 0;
            while (done < n) {
                done = 0;
                for (int i = 0; i < n; i++) {
                    int flag = 0;
                    if (req[i] != MPI_REQUEST_NULL)
                        MPI_OK(MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE));
                    else
                        flag = 1;
                    done += flag;
                }
                if (MPI_Wtime() - t0 > 30.0)
                    FAIL("round 1: %d of %d RMA requests complete after 30 s of MPI_Test", done,
                         n);
            }
        } else {
            /* half with MPI_Wait in reverse order, the rest with MPI_Waitany */
            for (int i = n - 1; i >= n / 2; i--)
                MPI_OK(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
            for (int left = n / 2; left > 0; left--) {
                int idx = -1;
                MPI_OK(MPI_Waitany(n, req, &idx, MPI_STATUS_IGNORE));
                CHECK(idx >= 0 && idx < n / 2, "MPI_Waitany returned index %d", idx);
            }
            int idx = -2;
            MPI_OK(MPI_Waitany(n, req, &idx, MPI_STATUS_IGNORE));
            CHECK(idx == MPI_UNDEFINED, "MPI_Waitany on all-null requests gave index %d", idx);
        }
        for (int i = 0; i < n; i++)
            CHECK(req[i] == MPI_REQUEST_NULL, "round %d: request %d not freed by completion",
                  round, i);

        /* local completion: results are here */
        for (int t = 0; t < nprocs; t++) {
            for (int k = 0; k < NRO; k++) {
                int got = gbuf[t * 2 * NRO + (round == 2 ? 2 * k : k)];
                CHECK(got == ro_val(t, k), "round %d: MPI_Rget from rank %d element %d = %d, "
                      "expected %d", round, t, k, got, ro_val(t, k));
                if (round == 2)
                    CHECK(gbuf[t * 2 * NRO + 2 * k + 1] == -7, "round 2: MPI_Rget into a "
                          "vector wrote the gap after element %d", k);
            }
            for (int j = 0; j < 4; j++) {
                int o = old[(round * nprocs + t) * 4 + j];
                CHECK(o >= GINIT && o < GINIT + ROUNDS * nprocs, "round %d: MPI_Rget_accumulate "
                      "from rank %d element %d returned %d, outside %d..%d", round, t, j, o,
                      GINIT, GINIT + ROUNDS * nprocs - 1);
            }
        }
        /* origin buffers of completed Rput/Raccumulate may be reused at once */
        for (int i = 0; i < nprocs * 4; i++)
            pbuf[i] = abuf[i] = -12345;
        /* remote completion, then read back what our Rput wrote */
        MPI_OK(MPI_Win_flush_all(win));
        n = 0;
        for (int t = 0; t < nprocs; t++) {
            for (int j = 0; j < 4; j++)
                back[t * 4 + j] = -3;
            MPI_OK(MPI_Rget(&back[t * 4], 4, MPI_INT, t, 4 * rank, 4, MPI_INT, win, &req[n++]));
        }
        MPI_OK(MPI_Rput(pbuf, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, win, &req[n++]));
        MPI_OK(MPI_Waitall(n, req, sts));
        for (int t = 0; t < nprocs; t++)
            for (int j = 0; j < 4; j++)
                CHECK(back[t * 4 + j] == put_val(rank, round, j), "round %d: after "
                      "MPI_Win_flush_all, rank %d's slot %d reads %d, expected %d", round, t, j,
                      back[t * 4 + j], put_val(rank, round, j));
    }
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* owners check their windows */
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (int o = 0; o < nprocs; o++)
        for (int j = 0; j < 4; j++)
            CHECK(w[4 * o + j] == put_val(o, ROUNDS - 1, j), "slot of rank %d element %d = %d, "
                  "expected %d", o, j, w[4 * o + j], put_val(o, ROUNDS - 1, j));
    for (int j = 0; j < 4; j++) {
        int e = ROUNDS * (j + 1) * nprocs * (nprocs + 1) / 2;
        CHECK(w[ACC + j] == e, "MPI_Raccumulate counter %d = %d, expected %d", j, w[ACC + j], e);
        CHECK(w[GACC + j] == GINIT + ROUNDS * nprocs, "MPI_Rget_accumulate counter %d = %d, "
              "expected %d", j, w[GACC + j], GINIT + ROUNDS * nprocs);
    }
    for (int k = 0; k < NRO; k++)
        CHECK(w[RO + k] == ro_val(rank, k), "read-only element %d changed to %d", k, w[RO + k]);
    MPI_OK(MPI_Win_unlock(rank, win));

    /* old values of Rget_accumulate, per target: a permutation for every element */
    int *mine = tu_malloc((size_t)ROUNDS * 4 * sizeof(int));
    int *all = tu_malloc((size_t)nprocs * ROUNDS * 4 * sizeof(int));
    for (int t = 0; t < nprocs; t++) {
        for (int r = 0; r < ROUNDS; r++)
            for (int j = 0; j < 4; j++)
                mine[r * 4 + j] = old[(r * nprocs + t) * 4 + j];
        MPI_OK(MPI_Gather(mine, ROUNDS * 4, MPI_INT, all, ROUNDS * 4, MPI_INT, t,
                          MPI_COMM_WORLD));
    }
    int total = nprocs * ROUNDS;
    int *col = tu_malloc((size_t)total * sizeof(int));
    for (int j = 0; j < 4; j++) {
        for (int i = 0; i < total; i++)
            col[i] = all[i * 4 + j];
        qsort(col, total, sizeof(int), cmp_int);
        for (int i = 0; i < total; i++)
            CHECK(col[i] == GINIT + i, "MPI_Rget_accumulate old values of element %d: sorted "
                  "[%d] = %d, expected %d", j, i, col[i], GINIT + i);
    }

    MPI_OK(MPI_Type_free(&every_other));
    MPI_OK(MPI_Win_free(&win));
    free(req); free(pbuf); free(abuf); free(gbuf); free(old); free(back);
    free(mine); free(all); free(col); free(sts);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("rma_request_ops: OK (%d ranks)\n", nprocs);
    MPI_Finalize();
    return 0;
}
