/* binding: where OxMPI binds the local ranks (OXMPI_BIND, default 1). Every rank reads its
 * CPU mask after MPI_Init_thread; rank 0 gathers them and checks, with C the CPUs of all
 * masks together and n the ranks (all on this host):
 *  - n = 1: not bound (the mask is all of C);
 *  - n <= |C|: disjoint masks that cover C, each |C|/n CPUs (one more for the first
 *    ranks when n does not divide |C|): the threads of a hybrid rank get CPUs of their own;
 *  - n > |C|, MPI_THREAD_SINGLE: one CPU each;
 *  - n > |C|, threads asked for (argv[1] = "multiple"): not bound (each mask is all of C).
 * Usage: binding [single|multiple]. Needs Linux's sched_getaffinity. */
#define _GNU_SOURCE
#include <sched.h>
#include "testutil.h"

enum { MAXCPU = 1024 };

int main(int argc, char **argv)
{
    int multiple = argc > 1 && strcmp(argv[1], "multiple") == 0, provided;
    MPI_OK(MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided));
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    tu_rank = rank;

    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity failed");
    unsigned char mine[MAXCPU];
    for (int c = 0; c < MAXCPU; c++)
        mine[c] = c < CPU_SETSIZE && CPU_ISSET(c, &set);
    unsigned char *all = rank == 0 ? tu_malloc((size_t)n * MAXCPU) : NULL;
    MPI_OK(MPI_Gather(mine, MAXCPU, MPI_UNSIGNED_CHAR, all, MAXCPU, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD));

    if (rank == 0) {
        int total = 0, covered[MAXCPU] = {0};
        for (int r = 0; r < n; r++)
            for (int c = 0; c < MAXCPU; c++)
                covered[c] += all[r * MAXCPU + c];
        for (int c = 0; c < MAXCPU; c++)
            total += covered[c] > 0;
        for (int r = 0; r < n; r++) {
            int count = 0;
            for (int c = 0; c < MAXCPU; c++)
                count += all[r * MAXCPU + c];
            if (n == 1 || (n > total && multiple)) {
                CHECK(count == total, "rank %d of %d (%s) is bound to %d of the %d CPUs, expected unbound",
                      r, n, multiple ? "multiple" : "single", count, total);
            } else if (n <= total) {
                int want = (r + 1) * total / n - r * total / n;
                CHECK(count == want, "rank %d of %d has %d CPUs, expected its share %d of %d", r, n, count, want, total);
            } else {
                CHECK(count == 1, "rank %d of %d (more ranks than the %d CPUs) has %d CPUs, expected 1", r, n, total, count);
            }
        }
        if (n > 1 && n <= total)
            for (int c = 0; c < MAXCPU; c++)
                CHECK(covered[c] <= 1, "CPU %d is in %d ranks' masks: the shares overlap", c, covered[c]);
        printf("binding: OK (%d ranks, %d CPUs, %s)\n", n, total, multiple ? "multiple" : "single");
        free(all);
    }
    MPI_Finalize();
    return 0;
}
