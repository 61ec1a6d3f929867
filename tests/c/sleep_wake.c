/* sleep_wake: blocked waits that sleep on the shared-memory doorbell, and the senders
 * that must wake them. The test runs it with every wait sleeping at once
 * (OXMPI_SPIN_COUNT=0, OXMPI_YIELD_COUNT=0) and a sleep bound far beyond the launcher
 * timeout (OXMPI_SLEEP_MAX_US), so one missed wake-up hangs the job instead of costing a
 * millisecond; thousands of rounds give a race between a sender's message store and a
 * sleeper's last look its chances.
 *  1. ping-pong between rank pairs (0-1, 2-3, ...; an odd last rank idles), sizes 0 B to
 *     64 KiB (eager and rendezvous), every byte checked;
 *  2. every other rank sends to rank 0, which receives with MPI_ANY_SOURCE;
 *  3. MPI_Allreduce (sum) in a loop, result checked. */
#include "testutil.h"

#define ROUNDS 9000
#define FANIN_ROUNDS 2000
#define ALLREDUCE_ROUNDS 2000

static const int sizes[] = {0, 1, 8, 16, 17, 100, 1024, 8192, 65536};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

int main(int argc, char **argv)
{
    int size;
    tu_init(&argc, &argv);
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    unsigned char *buf = tu_malloc(65536);
    MPI_Status st;

    /* 1 */
    int peer = tu_rank ^ 1;
    if (peer < size) {
        for (int r = 0; r < ROUNDS; r++) {
            int len = sizes[r % NSIZES];
            uint32_t seed = (uint32_t)r;
            if (tu_rank % 2 == 0) {
                tu_fill(buf, len, seed);
                MPI_OK(MPI_Send(buf, len, MPI_BYTE, peer, r % 7, MPI_COMM_WORLD));
                MPI_OK(MPI_Recv(buf, 65536, MPI_BYTE, peer, r % 7, MPI_COMM_WORLD, &st));
                CHECK_STATUS(&st, peer, r % 7, MPI_BYTE, len);
                CHECK_PATTERN(buf, len, seed + 1, "pong %d of %d bytes", r, len);
            } else {
                MPI_OK(MPI_Recv(buf, 65536, MPI_BYTE, peer, r % 7, MPI_COMM_WORLD, &st));
                CHECK_STATUS(&st, peer, r % 7, MPI_BYTE, len);
                CHECK_PATTERN(buf, len, seed, "ping %d of %d bytes", r, len);
                tu_fill(buf, len, seed + 1);
                MPI_OK(MPI_Send(buf, len, MPI_BYTE, peer, r % 7, MPI_COMM_WORLD));
            }
        }
    }

    /* 2 */
    for (int r = 0; r < FANIN_ROUNDS; r++) {
        if (tu_rank == 0) {
            int seen = 0;
            for (int i = 1; i < size; i++) {
                int v = -1;
                MPI_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &st));
                CHECK(v == r * size + st.MPI_SOURCE, "fan-in round %d: got %d from %d", r, v, st.MPI_SOURCE);
                seen++;
            }
            CHECK(seen == size - 1, "fan-in round %d: %d messages", r, seen);
            MPI_OK(MPI_Bcast(&r, 1, MPI_INT, 0, MPI_COMM_WORLD));
        } else {
            int v = r * size + tu_rank, echo = -1;
            MPI_OK(MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
            MPI_OK(MPI_Bcast(&echo, 1, MPI_INT, 0, MPI_COMM_WORLD));
            CHECK(echo == r, "fan-in round %d: bcast gave %d", r, echo);
        }
    }

    /* 3 */
    for (int r = 0; r < ALLREDUCE_ROUNDS; r++) {
        long v = tu_rank + r, sum = -1;
        MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
        long want = (long)size * (size - 1) / 2 + (long)size * r;
        CHECK(sum == want, "allreduce round %d: %ld, expected %ld", r, sum, want);
    }

    free(buf);
    MPI_OK(MPI_Finalize());
    if (tu_rank == 0)
        printf("sleep_wake: OK\n");
    return 0;
}
