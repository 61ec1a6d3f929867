/* Nonblocking collectives overlapped with point-to-point traffic on the same communicator
 * (collective traffic must never match user receives, even with MPI_ANY_SOURCE/ANY_TAG),
 * several nonblocking collectives in flight at once, and 1000+ back-to-back collectives
 * of mixed kinds without deadlock. */
#include "testutil.h"

static int rank, size;

static void overlap(long n)
{
    int *a = tu_malloc(n * sizeof(int)), *b = tu_malloc(n * sizeof(int));
    int *g = tu_malloc(n * size * sizeof(int)), *bc = tu_malloc(n * sizeof(int));
    int *pin = tu_malloc(n * sizeof(int)), *pout = tu_malloc(n * sizeof(int));
    for (long i = 0; i < n; i++) { a[i] = rank + (int)i; bc[i] = rank == 0 ? (int)i * 3 : -1; pout[i] = rank * 100000 + (int)i; }
    MPI_Request r[5];
    MPI_OK(MPI_Iallreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]));
    /* User traffic with wildcards while collectives are in flight. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_OK(MPI_Irecv(pin, n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[1]));
    MPI_OK(MPI_Ibcast(bc, n, MPI_INT, 0, MPI_COMM_WORLD, &r[2]));
    MPI_OK(MPI_Iallgather(a, n, MPI_INT, g, n, MPI_INT, MPI_COMM_WORLD, &r[3]));
    /* Compute a little while the engine progresses the collectives. */
    volatile double x = 0;
    for (int i = 0; i < 100000; i++) x += i * 0.5;
    MPI_OK(MPI_Isend(pout, n, MPI_INT, right, 7, MPI_COMM_WORLD, &r[4]));
    MPI_Status st[5];
    MPI_OK(MPI_Waitall(5, r, st));
    if (st[1].MPI_SOURCE != left || st[1].MPI_TAG != 7)
        FAIL("n=%ld: wildcard receive matched source %d tag %d, expected %d tag 7", n, st[1].MPI_SOURCE, st[1].MPI_TAG, left);
    for (long i = 0; i < n; i++) {
        int sum = 0;
        for (int q = 0; q < size; q++) sum += q + (int)i;
        if (b[i] != sum) FAIL("iallreduce n=%ld: [%ld] = %d, expected %d", n, i, b[i], sum);
        if (bc[i] != (int)i * 3) FAIL("ibcast n=%ld: [%ld] = %d", n, i, bc[i]);
        if (pin[i] != left * 100000 + (int)i) FAIL("p2p n=%ld: [%ld] = %d", n, i, pin[i]);
        for (int q = 0; q < size; q++)
            if (g[q * n + i] != q + (int)i) FAIL("iallgather n=%ld: block %d [%ld] = %d", n, q, i, g[q * n + i]);
    }
    free(a); free(b); free(g); free(bc); free(pin); free(pout);
}

/* Iterations of mixed collectives; returns a checksum that every rank verifies. */
static void back_to_back(int iters)
{
    int v[4], w[4 * 64], x[64];
    for (int it = 0; it < iters; it++) {
        switch (it % 6) {
        case 0:
            v[0] = rank + it;
            MPI_OK(MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            if (v[0] != size * (size - 1) / 2 + size * it) FAIL("iteration %d: allreduce %d", it, v[0]);
            break;
        case 1:
            v[0] = rank == it % size ? it : -1;
            MPI_OK(MPI_Bcast(v, 1, MPI_INT, it % size, MPI_COMM_WORLD));
            if (v[0] != it) FAIL("iteration %d: bcast %d", it, v[0]);
            break;
        case 2:
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            break;
        case 3:
            for (int q = 0; q < size; q++) x[q] = rank * 1000 + q + it;
            MPI_OK(MPI_Alltoall(x, 1, MPI_INT, w, 1, MPI_INT, MPI_COMM_WORLD));
            for (int q = 0; q < size; q++)
                if (w[q] != q * 1000 + rank + it) FAIL("iteration %d: alltoall from %d = %d", it, q, w[q]);
            break;
        case 4: {
            MPI_Request r[2];
            v[0] = rank; v[1] = it;
            MPI_OK(MPI_Iallgather(v, 2, MPI_INT, w, 2, MPI_INT, MPI_COMM_WORLD, &r[0]));
            v[2] = rank;
            MPI_OK(MPI_Iscan(&v[2], &v[3], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[1]));
            MPI_Status sts[2];
            MPI_OK(MPI_Waitall(2, r, sts));
            for (int q = 0; q < size; q++)
                if (w[2 * q] != q || w[2 * q + 1] != it) FAIL("iteration %d: iallgather", it);
            if (v[3] != rank * (rank + 1) / 2) FAIL("iteration %d: iscan %d", it, v[3]);
            break;
        }
        case 5:
            v[0] = rank + 1;
            MPI_OK(MPI_Reduce(v, &v[1], 1, MPI_INT, MPI_PROD, it % size, MPI_COMM_WORLD));
            if (rank == it % size) {
                int f = 1;
                for (int q = 1; q <= size; q++) f *= q;
                if (v[1] != f) FAIL("iteration %d: reduce %d", it, v[1]);
            }
            break;
        }
    }
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank = tu_rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    long sizes[] = {0, 1, 100, 5000, 300000};
    for (int i = 0; i < 5; i++)
        overlap(sizes[i]);
    if (rank == 0) { printf("overlap ok\n"); fflush(stdout); }
    back_to_back(argc > 1 ? atoi(argv[1]) : 1200);
    /* Many nonblocking collectives in flight at once, completed in reverse order. */
    enum { K = 32 };
    MPI_Request r[K];
    int in[K], out[K];
    for (int k = 0; k < K; k++) {
        in[k] = rank * k;
        MPI_OK(MPI_Iallreduce(&in[k], &out[k], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &r[k]));
    }
    for (int k = K - 1; k >= 0; k--) {
        MPI_OK(MPI_Wait(&r[k], MPI_STATUS_IGNORE));
        if (out[k] != (size - 1) * k) FAIL("in-flight iallreduce %d = %d", k, out[k]);
    }
    if (rank == 0) { printf("back-to-back ok\n"); fflush(stdout); }
    if (rank == 0) { printf("coll_overlap: OK (%d ranks)\n", size); fflush(stdout); }
    MPI_Finalize();
    return 0;
}
