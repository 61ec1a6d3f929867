/* Quad precision reductions: MPI_REAL16 (IEEE binary128, gfortran's REAL(16), C __float128)
 * with SUM/PROD/MAX/MIN and MPI_COMPLEX32 with SUM/PROD, in Allreduce, Reduce, Scan and
 * Reduce_local, at counts 1, odd and large (> 1 MiB, the large-message algorithms). Values
 * carry a bit only quad precision holds (2^-100), so a reduction done in double or long
 * double would lose it. */
#include "testutil.h"
#include <string.h>

typedef __float128 quad;
static const quad TINY = 1.0Q / 1267650600228229401496703205376.0Q; /* 2^-100 */

int main(int argc, char **argv)
{
    int rank, size;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int counts[] = {1, 7, 70001};
    for (int c = 0; c < 3; c++) {
        int n = counts[c];
        quad *x = tu_malloc(n * sizeof *x), *r = tu_malloc(n * sizeof *r);
        for (int i = 0; i < n; i++)
            x[i] = 1 + (rank + 1) * TINY + (i % 5);
        MPI_OK(MPI_Allreduce(x, r, n, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) {
            quad want = size * (1 + (quad)(i % 5)) + (quad)size * (size + 1) / 2 * TINY;
            CHECK(r[i] == want, "REAL16 SUM count %d [%d]: off by %g ulps of 2^-100", n, i, (double)((r[i] - want) / TINY));
        }
        MPI_OK(MPI_Allreduce(x, r, n, MPI_REAL16, MPI_MAX, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            CHECK(r[i] == 1 + size * TINY + (i % 5), "REAL16 MAX count %d [%d]", n, i);
        MPI_OK(MPI_Reduce(x, r, n, MPI_REAL16, MPI_MIN, size - 1, MPI_COMM_WORLD));
        if (rank == size - 1)
            for (int i = 0; i < n; i++)
                CHECK(r[i] == 1 + TINY + (i % 5), "REAL16 MIN count %d [%d]", n, i);
        MPI_OK(MPI_Scan(x, r, n, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) {
            quad want = (rank + 1) * (1 + (quad)(i % 5)) + (quad)(rank + 1) * (rank + 2) / 2 * TINY;
            CHECK(r[i] == want, "REAL16 SCAN count %d [%d]", n, i);
        }
        free(x);
        free(r);
    }
    quad two = 2, p;
    MPI_OK(MPI_Allreduce(&two, &p, 1, MPI_REAL16, MPI_PROD, MPI_COMM_WORLD));
    CHECK(p == (quad)(1 << size), "REAL16 PROD");

    /* COMPLEX32: (1 + TINY) + i per rank; product of (1 + i) over ranks = (1+i)^size. */
    quad z[2] = {1 + TINY, 1}, s[2];
    MPI_OK(MPI_Allreduce(z, s, 1, MPI_COMPLEX32, MPI_SUM, MPI_COMM_WORLD));
    CHECK(s[0] == size * (1 + TINY) && s[1] == size, "COMPLEX32 SUM");
    quad w[2] = {1, 1}, pr[2], want[2] = {1, 0};
    for (int k = 0; k < size; k++) {
        quad re = want[0] - want[1], im = want[0] + want[1];
        want[0] = re;
        want[1] = im;
    }
    MPI_OK(MPI_Allreduce(w, pr, 1, MPI_COMPLEX32, MPI_PROD, MPI_COMM_WORLD));
    CHECK(pr[0] == want[0] && pr[1] == want[1], "COMPLEX32 PROD (%g, %g)", (double)pr[0], (double)pr[1]);

    quad a[3] = {1, 2, 3}, b[3] = {TINY, TINY, TINY};
    MPI_OK(MPI_Reduce_local(a, b, 3, MPI_REAL16, MPI_SUM));
    CHECK(b[0] == 1 + TINY && b[2] == 3 + TINY, "Reduce_local");
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int cls, rc = MPI_Allreduce(z, s, 1, MPI_COMPLEX32, MPI_MAX, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "MAX on COMPLEX32: class %d", cls);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("reduce_quad: OK\n");
    MPI_Finalize();
    return 0;
}
