/* Partitioned communication at MPI_THREAD_MULTIPLE: on the sending rank 4 threads fill
 * and mark their own partitions ready (MPI_Pready, MPI_Pready_range) concurrently; on the
 * receiving rank 2 threads poll MPI_Parrived for their partitions and check each one's
 * data as soon as it arrives, while the main thread waits in MPI_Wait. Pairs 0-1, 2-3;
 * rank 2k sends, 2k+1 receives (an odd last rank sits out). */
#include "testutil.h"
#include <pthread.h>

/* A poller may call MPI_Parrived after the main thread's MPI_Wait made the request
 * inactive: MPI 4.1 gives flag = true then, MPI 4.0 (MPICH 4.0.2) an error. */
#if defined(OXMPI) || MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
#define WAIT_WHILE_POLLING 1
#else
#define WAIT_WHILE_POLLING 0
#endif

enum { SPARTS = 64, RPARTS = 32, TOTAL = 64 * 1024, ROUNDS = 10, STHREADS = 4, RTHREADS = 2 };

static double *buf;
static MPI_Request req;
static int round_no;
static int bad;

static double val(int round, int i) { return round * 1e6 + i; }

static void *sender(void *arg)
{
    int t = (int) (long) arg, per = SPARTS / STHREADS, each = TOTAL / SPARTS;
    for (int p = t * per; p < (t + 1) * per; p++) {
        for (int i = p * each; i < (p + 1) * each; i++)
            buf[i] = val(round_no, i);
        if (p % 2 == 0) {
            if (MPI_Pready(p, req) != MPI_SUCCESS)
                bad = 1;
        } else if (MPI_Pready_range(p, p, req) != MPI_SUCCESS) {
            bad = 1;
        }
    }
    return NULL;
}

static void *receiver(void *arg)
{
    int t = (int) (long) arg, per = RPARTS / RTHREADS, each = TOTAL / RPARTS;
    int seen[RPARTS] = {0}, left = per;
    while (left > 0) {
        for (int p = t * per; p < (t + 1) * per; p++) {
            int flag = 0;
            if (seen[p])
                continue;
            if (MPI_Parrived(req, p, &flag) != MPI_SUCCESS)
                bad = 1;
            if (!flag)
                continue;
            seen[p] = 1;
            left--;
            for (int i = p * each; i < (p + 1) * each; i++)
                if (buf[i] != val(round_no, i)) {
                    fprintf(stderr, "round %d partition %d: buf[%d] = %g\n", round_no, p, i, buf[i]);
                    bad = 1;
                    break;
                }
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tu_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    buf = malloc(sizeof(double) * TOTAL);
    int peer = rank ^ 1;
    if (peer < size) {
        int send = rank % 2 == 0;
        if (send)
            MPI_OK(MPI_Psend_init(buf, SPARTS, TOTAL / SPARTS, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        else
            MPI_OK(MPI_Precv_init(buf, RPARTS, TOTAL / RPARTS, MPI_DOUBLE, peer, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        for (round_no = 0; round_no < ROUNDS; round_no++) {
            int n = send ? STHREADS : RTHREADS;
            pthread_t th[STHREADS];
            if (!send)
                for (int i = 0; i < TOTAL; i++)
                    buf[i] = -1;
            MPI_OK(MPI_Start(&req));
            for (long t = 0; t < n; t++)
                CHECK(pthread_create(&th[t], NULL, send ? sender : receiver, (void *) t) == 0, "pthread_create");
            if (!send && WAIT_WHILE_POLLING) /* the main thread waits while the others poll */
                MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            for (int t = 0; t < n; t++)
                pthread_join(th[t], NULL);
            if (send || !WAIT_WHILE_POLLING)
                MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            CHECK(!bad, "round %d failed", round_no);
            for (int i = 0; i < TOTAL; i++)
                CHECK(buf[i] == val(round_no, i), "round %d: buf[%d] = %g", round_no, i, buf[i]);
            /* the sender refills its buffer next round: wait until the receiver checked */
            MPI_OK(MPI_Sendrecv(NULL, 0, MPI_INT, peer, 1, NULL, 0, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        MPI_OK(MPI_Request_free(&req));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("partitioned_threads: OK\n");
    free(buf);
    MPI_Finalize();
    return 0;
}
