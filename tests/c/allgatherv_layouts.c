/* allgatherv_layouts: MPI_Allgatherv (and MPI_Iallgatherv) with equal counts, where each
 * rank lays out its receive buffer its own way. OxMPI runs an allgatherv of equal counts
 * with the allgather's algorithms (a rank whose blocks lie end to end runs the allgather
 * itself, possibly its direct small-message path), so ranks that mix layouts and datatypes
 * in one call must still agree on the messages. Per rank (rank % 5):
 *   0: MPI_INT blocks end to end;
 *   1: MPI_INT blocks in reverse order with gaps (not an allgather's layout);
 *   2: one contiguous type of `items` ints per block, end to end;
 *   3: a non-contiguous type (every other int) end to end;
 *   4: MPI_IN_PLACE, MPI_INT blocks end to end.
 * Odd ranks send one contiguous type of `items` ints, even ranks `items` MPI_INTs. Blocks
 * of 1, 3, 64 and 3000 ints (from the direct path to the ring), every received int and
 * every gap checked, at each rank count of the test runner. */
#include "testutil.h"

static int value(int from, int i, int round)
{
    return from * 100000 + i * 7 + round;
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    int size;
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int sizes[] = {1, 3, 64, 3000};
    int variant = tu_rank % 5, round = 0;
    int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    for (int si = 0; si < 4; si++) {
        int items = sizes[si];
        for (int nb = 0; nb < 2; nb++, round++) {
            /* Room for every layout: reversed with gaps, or every other int. */
            size_t cap = (size_t)size * (items + 2) * 2 + 8;
            int *rbuf = malloc(cap * sizeof(int)), *sbuf = malloc(items * sizeof(int));
            for (size_t i = 0; i < cap; i++)
                rbuf[i] = -1;
            for (int i = 0; i < items; i++)
                sbuf[i] = value(tu_rank, i, round);
            MPI_Datatype block, every_other, sendtype = MPI_INT, recvtype = MPI_INT;
            MPI_OK(MPI_Type_contiguous(items, MPI_INT, &block));
            MPI_OK(MPI_Type_commit(&block));
            MPI_Datatype strided;
            MPI_OK(MPI_Type_vector(1, 1, 2, MPI_INT, &strided));
            MPI_OK(MPI_Type_create_resized(strided, 0, 2 * sizeof(int), &every_other));
            MPI_OK(MPI_Type_commit(&every_other));
            MPI_OK(MPI_Type_free(&strided));
            int sendcount = items;
            if (tu_rank % 2) {
                sendtype = block;
                sendcount = 1;
            }
            /* Where int i of rank j's block lands, in ints from rbuf. */
            int stride = 1;
            for (int j = 0; j < size; j++) {
                counts[j] = items;
                displs[j] = j * items;
            }
            if (variant == 1) {
                for (int j = 0; j < size; j++)
                    displs[j] = (size - 1 - j) * (items + 2) + 1;
            } else if (variant == 2) {
                recvtype = block;
                for (int j = 0; j < size; j++) {
                    counts[j] = 1;
                    displs[j] = j;
                }
            } else if (variant == 3) {
                recvtype = every_other;
                stride = 2;
            }
            const void *send = sbuf;
            if (variant == 4) {
                send = MPI_IN_PLACE;
                for (int i = 0; i < items; i++)
                    rbuf[tu_rank * items + i] = sbuf[i];
            }
            if (nb) {
                MPI_Request r;
                MPI_OK(MPI_Iallgatherv(send, sendcount, sendtype, rbuf, counts, displs, recvtype, MPI_COMM_WORLD, &r));
                MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            } else {
                MPI_OK(MPI_Allgatherv(send, sendcount, sendtype, rbuf, counts, displs, recvtype, MPI_COMM_WORLD));
            }
            char *expected = calloc(cap, 1);
            for (int j = 0; j < size; j++) {
                int base = variant == 2 ? j * items : displs[j] * stride;
                for (int i = 0; i < items; i++) {
                    int at = base + i * stride;
                    expected[at] = 1;
                    CHECK(rbuf[at] == value(j, i, round), "variant %d, %d ints per block, %s: int %d from rank %d is %d, expected %d",
                          variant, items, nb ? "Iallgatherv" : "Allgatherv", i, j, rbuf[at], value(j, i, round));
                }
            }
            for (size_t i = 0; i < cap; i++)
                CHECK(expected[i] || rbuf[i] == -1, "variant %d, %d ints per block: int %zu outside every block was written (%d)",
                      variant, items, i, rbuf[i]);
            free(expected);
            MPI_OK(MPI_Type_free(&block));
            MPI_OK(MPI_Type_free(&every_other));
            free(rbuf);
            free(sbuf);
        }
    }
    free(counts);
    free(displs);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0)
        printf("allgatherv_layouts: OK\n");
    MPI_Finalize();
    return 0;
}
