/* ring: a token travels around MPI_COMM_WORLD several laps (MPI_Send/MPI_Recv).
 * Small laps carry 2 ints; big laps also carry a payload large enough for the
 * rendezvous path. Every hop checks data and status (source, tag, count).
 * n == 1: rank 0 is its own neighbour (MPI_Isend to self + MPI_Recv). */
#include "testutil.h"

#define LAPS 12
#define BIG_INTS (300 * 1024) /* 1.2 MB */

int main(int argc, char **argv)
{
    int rank, size;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *buf = tu_malloc((BIG_INTS + 2) * sizeof(int));

    for (int lap = 0; lap < LAPS; lap++) {
        int big = (lap % 3 == 2);
        int count = big ? BIG_INTS + 2 : 2;
        int tag = 100 + lap;
        MPI_Status st;
        if (rank == 0) {
            MPI_Request req;
            buf[0] = lap;
            buf[1] = 0; /* hop counter */
            for (int i = 2; i < count; i++)
                buf[i] = lap * 1000003 + i;
            int *sendbuf = tu_malloc(count * sizeof(int));
            memcpy(sendbuf, buf, count * sizeof(int));
            MPI_Isend(sendbuf, count, MPI_INT, right, tag, MPI_COMM_WORLD, &req);
            memset(buf, 0xff, count * sizeof(int));
            MPI_Recv(buf, count, MPI_INT, left, tag, MPI_COMM_WORLD, &st);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            free(sendbuf);
            CHECK_STATUS(&st, left, tag, MPI_INT, count);
            CHECK(buf[0] == lap, "lap %d: token says lap %d", lap, buf[0]);
            CHECK(buf[1] == size - 1, "lap %d: token made %d hops, expected %d", lap,
                  buf[1], size - 1);
        } else {
            /* receive with a larger count than sent: status must give the real count */
            memset(buf, 0xff, count * sizeof(int));
            MPI_Recv(buf, BIG_INTS + 2, MPI_INT, left, tag, MPI_COMM_WORLD, &st);
            CHECK_STATUS(&st, left, tag, MPI_INT, count);
            CHECK(buf[0] == lap, "lap %d: token says lap %d", lap, buf[0]);
            CHECK(buf[1] == rank - 1, "lap %d: token has %d hops at rank %d, expected %d",
                  lap, buf[1], rank, rank - 1);
            buf[1]++;
            MPI_Send(buf, count, MPI_INT, right, tag, MPI_COMM_WORLD);
        }
        for (int i = 2; i < count; i++)
            CHECK(buf[i] == lap * 1000003 + i, "lap %d: payload[%d] = %d, expected %d",
                  lap, i, buf[i], lap * 1000003 + i);
    }
    free(buf);
    if (rank == 0)
        printf("ring: OK (%d ranks, %d laps)\n", size, LAPS);
    MPI_Finalize();
    return 0;
}
