/* MPI_THREAD_MULTIPLE: 4 threads per rank hammer point-to-point with their partner
 * thread on rank^1 for N seconds (argument, default 10): threads 0-1 share
 * MPI_COMM_WORLD (told apart by tag), threads 2-3 use their own duplicates; bursts of
 * nonblocking sends/receives with concurrent waits, every message checked for loss and
 * order. Then collectives on per-thread duplicates, concurrently. */
#include "testutil.h"
#include <pthread.h>

#define THREADS 4
#define BURST 8

static int rank, size, partner;
static double seconds;
static MPI_Comm comms[THREADS];
static long exchanged[THREADS];

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    MPI_Comm c = comms[t];
    int tag = t;
    int leader = rank % 2 == 0;
    double start = MPI_Wtime();
    for (int i = 0;; i++) {
        int cont = leader ? (MPI_Wtime() - start < seconds) : 1;
        int out[BURST][3], in[BURST][3];
        MPI_Request rq[2 * BURST];
        for (int k = 0; k < BURST; k++)
            MPI_OK(MPI_Irecv(in[k], 3, MPI_INT, partner, tag, c, &rq[k]));
        for (int k = 0; k < BURST; k++) {
            out[k][0] = i; out[k][1] = k; out[k][2] = cont;
            MPI_OK(MPI_Isend(out[k], 3, MPI_INT, partner, tag, c, &rq[BURST + k]));
        }
        MPI_Status st[2 * BURST];
        MPI_OK(MPI_Waitall(2 * BURST, rq, st));
        for (int k = 0; k < BURST; k++)
            CHECK(in[k][0] == i && in[k][1] == k, "thread %d: iteration %d message %d carries (%d,%d)", t, i, k, in[k][0], in[k][1]);
        exchanged[t] += BURST;
        if (!leader)
            cont = in[0][2];
        if (!cont)
            break;
    }
    /* A collective on this thread's own communicator while the others do theirs. */
    int one = 1, sum = 0;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comms[t] == MPI_COMM_WORLD ? MPI_COMM_SELF : comms[t]));
    CHECK(sum >= 1, "allreduce in thread %d", t);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tu_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    seconds = argc > 1 ? atof(argv[1]) : 10.0;
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    int q, main_thread;
    MPI_Query_thread(&q);
    MPI_Is_thread_main(&main_thread);
    CHECK(q == MPI_THREAD_MULTIPLE && main_thread, "query_thread %d, is_thread_main %d", q, main_thread);
    partner = rank ^ 1;
    /* Pairs (0,1), (2,3), ...; the last rank of an odd count sits out. */
    MPI_Comm pairs;
    MPI_Comm_split(MPI_COMM_WORLD, partner < size ? 0 : MPI_UNDEFINED, rank, &pairs);
    for (int t = 0; t < THREADS; t++) {
        if (t < 2)
            comms[t] = MPI_COMM_WORLD;
        else
            MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    }
    if (partner < size) {
        pthread_t th[THREADS];
        for (long t = 0; t < THREADS; t++)
            pthread_create(&th[t], NULL, worker, (void *)t);
        for (int t = 0; t < THREADS; t++) {
            pthread_join(th[t], NULL);
            CHECK(exchanged[t] > 0, "thread %d exchanged nothing", t);
        }
        MPI_Comm_free(&pairs);
    }
    for (int t = 2; t < THREADS; t++)
        MPI_Comm_free(&comms[t]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long total = 0;
        for (int t = 0; t < THREADS; t++)
            total += exchanged[t];
        printf("threads_hammer: %ld messages per rank\n", total);
        printf("threads_hammer: OK\n");
    }
    MPI_Finalize();
    return 0;
}
