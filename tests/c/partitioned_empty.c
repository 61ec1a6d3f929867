/* Partitioned communication with empty and small partitions (counts 0, 1, 2; 1 to 3
 * partitions), as mpi4py's test_p2p_buf_part does: a receive partition must not be
 * reported arrived before the sender marks the matching send partition ready, even when
 * it holds no bytes. Each rank sends to itself (Parrived checked after every Pready) and
 * round a ring (barriers order the sender's start after the receiver's checks). */
#include "testutil.h"

static void exchange(int dest, int src, int self)
{
    for (int cnt = 0; cnt < 3; cnt++)
        for (int p = 1; p < 4; p++) {
            int sbuf[8], rbuf[8], flag;
            for (int i = 0; i < 8; i++) {
                sbuf[i] = 100 * tu_rank + i;
                rbuf[i] = -1;
            }
            MPI_Request s, r;
            MPI_OK(MPI_Psend_init(sbuf, p, cnt, MPI_INT, dest, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
            MPI_OK(MPI_Precv_init(rbuf, p, cnt, MPI_INT, src, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
            for (int round = 0; round < 3; round++) {
                if (!self)
                    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
                MPI_OK(MPI_Start(&r));
                for (int i = 0; i < p; i++) {
                    MPI_OK(MPI_Parrived(r, i, &flag));
                    CHECK(!flag, "count %d, %d partitions: partition %d arrived before the send started", cnt, p, i);
                }
                if (!self)
                    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
                MPI_OK(MPI_Start(&s));
                for (int i = 0; i < p; i++) {
                    MPI_OK(MPI_Pready(i, s));
                    for (int j = i + 1; self && j < p; j++) {
                        MPI_OK(MPI_Parrived(r, j, &flag));
                        CHECK(!flag, "count %d, %d partitions: partition %d arrived before its Pready", cnt, p, j);
                    }
                }
                for (int i = 0; i < p; i++)
                    do
                        MPI_OK(MPI_Parrived(r, i, &flag));
                    while (!flag);
                MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
                MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
                for (int i = 0; i < 8; i++) {
                    int want = i < cnt * p ? 100 * src + i : -1;
                    CHECK(rbuf[i] == want, "count %d, %d partitions: rbuf[%d] = %d, expected %d", cnt, p, i, rbuf[i], want);
                }
            }
            MPI_OK(MPI_Request_free(&r));
            MPI_OK(MPI_Request_free(&s));
        }
}

int main(int argc, char **argv)
{
    int size;
    tu_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    exchange(tu_rank, tu_rank, 1);
    exchange((tu_rank + 1) % size, (tu_rank + size - 1) % size, 0);
    MPI_Finalize();
    if (tu_rank == 0)
        printf("partitioned_empty: OK\n");
    return 0;
}
