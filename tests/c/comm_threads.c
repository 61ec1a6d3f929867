/* Communicator constructors from several threads at MPI_THREAD_MULTIPLE (MPI 4.1 §11.6:
 * concurrent collectives on distinct communicators are allowed). Each of THREADS threads
 * owns a duplicate of MPI_COMM_WORLD. First, each thread makes MPI_Comm_idup of its
 * communicator and waits for it, but on even ranks the even-numbered threads start only
 * after the odd-numbered ones finished theirs: the odd ranks' agreements for the even
 * threads' communicators are then in flight, waiting for peers that have not started
 * them, and must not keep the odd threads' agreements from completing (MPICH's
 * idup_deadlock). Then, ROUNDS times, MPICH's comm_dup_deadlock
 * pattern: the thread whose number is this rank's (mod THREADS) sleeps, then each thread
 * makes MPI_Comm_dup(MPI_COMM_SELF) under a lock shared by the process's threads and
 * then MPI_Comm_dup of its own communicator. Then, ITERS times:
 *  1. the thread whose number is this rank's (mod THREADS) sleeps first, so every rank
 *     reaches the constructors of step 2 in another thread order;
 *  2. MPI_Comm_create_group on its communicator (tag = thread number), MPI_Comm_dup of it
 *     and MPI_Comm_split of it into singletons; traffic on each result is checked;
 *  3. under a lock shared by the process's threads (as MPICH's threads/comm tests do),
 *     MPI_Comm_dup(MPI_COMM_SELF): a constructor of this process alone, which must not
 *     wait for the other threads' agreements that are still waiting for peers (those
 *     peers may be blocked on their own lock); a self-message on it is checked.
 * A hang (the job's --timeout) or a wrong value fails the test. */
#include "testutil.h"
#include <pthread.h>
#include <unistd.h>

#define THREADS 4
#define ITERS 20
#define ROUNDS 3

static MPI_Comm comms[THREADS];
static int odd_done; /* odd-numbered threads whose idup finished (atomic builtins) */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int rank, size;

/* Ring exchange on `c`: each rank sends base + its rank to the right, checks the left's. */
static void ring(MPI_Comm c, int base, const char *what)
{
    int r, n, got = -1;
    MPI_OK(MPI_Comm_rank(c, &r));
    MPI_OK(MPI_Comm_size(c, &n));
    int v = base + r;
    MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, (r + 1) % n, 3, &got, 1, MPI_INT, (r + n - 1) % n, 3, c,
                        MPI_STATUS_IGNORE));
    CHECK(got == base + (r + n - 1) % n, "%s: got %d, expected %d", what, got, base + (r + n - 1) % n);
}

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    {
        MPI_Comm d;
        MPI_Request r;
        if (t % 2 == 0 && rank % 2 == 0)
            while (__atomic_load_n(&odd_done, __ATOMIC_ACQUIRE) < THREADS / 2)
                usleep(1000);
        MPI_OK(MPI_Comm_idup(comms[t], &d, &r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (t % 2 == 1)
            __atomic_add_fetch(&odd_done, 1, __ATOMIC_RELEASE);
        ring(d, 6000 * t, "idup ordered by threads");
        MPI_OK(MPI_Comm_free(&d));
    }
    for (int i = 0; i < ROUNDS; i++) {
        MPI_Comm self_dup, d;
        if (t == rank % THREADS)
            usleep(200000);
        pthread_mutex_lock(&lock);
        MPI_OK(MPI_Comm_dup(MPI_COMM_SELF, &self_dup));
        pthread_mutex_unlock(&lock);
        MPI_OK(MPI_Comm_free(&self_dup));
        MPI_OK(MPI_Comm_dup(comms[t], &d));
        ring(d, 5000 * t + i, "dup after a self dup");
        MPI_OK(MPI_Comm_free(&d));
    }
    for (int i = 0; i < ITERS; i++) {
        MPI_Group g;
        MPI_Comm cg, d, single, self_dup;
        if (t == rank % THREADS && i % 5 == 0)
            usleep(50000);
        MPI_OK(MPI_Comm_group(comms[t], &g));
        MPI_OK(MPI_Comm_create_group(comms[t], g, t, &cg));
        MPI_OK(MPI_Group_free(&g));
        ring(cg, 1000 * t + i, "create_group");
        MPI_OK(MPI_Comm_dup(comms[t], &d));
        ring(d, 2000 * t + i, "dup");
        MPI_OK(MPI_Comm_split(comms[t], rank, 0, &single));
        int ss = -1;
        MPI_OK(MPI_Comm_size(single, &ss));
        CHECK(ss == 1, "split into singletons: size %d", ss);
        ring(single, 3000 * t + i, "singleton");

        pthread_mutex_lock(&lock);
        MPI_OK(MPI_Comm_dup(MPI_COMM_SELF, &self_dup));
        pthread_mutex_unlock(&lock);
        ring(self_dup, 4000 * t + i, "self dup");

        MPI_OK(MPI_Comm_free(&self_dup));
        MPI_OK(MPI_Comm_free(&single));
        MPI_OK(MPI_Comm_free(&d));
        MPI_OK(MPI_Comm_free(&cg));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tu_rank = rank;
    for (int t = 0; t < THREADS; t++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++)
        MPI_OK(MPI_Comm_free(&comms[t]));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("comm_threads: OK\n");
    MPI_Finalize();
    return 0;
}
