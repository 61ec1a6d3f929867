/* A non-commutative user op (2x2 matrix product mod a prime, MPI_Op_create with
 * commute=0) in Reduce, Allreduce, Scan, Exscan and Reduce_scatter_block, blocking and
 * nonblocking, in place and not: the results must equal the product in rank order. */
#include "testutil.h"

#define P 1000003u
typedef struct { unsigned a, b, c, d; } mat;

static int rank, size;

static mat mul(mat x, mat y)
{
    mat z;
    z.a = (unsigned)(((unsigned long long)x.a * y.a + (unsigned long long)x.b * y.c) % P);
    z.b = (unsigned)(((unsigned long long)x.a * y.b + (unsigned long long)x.b * y.d) % P);
    z.c = (unsigned)(((unsigned long long)x.c * y.a + (unsigned long long)x.d * y.c) % P);
    z.d = (unsigned)(((unsigned long long)x.c * y.b + (unsigned long long)x.d * y.d) % P);
    return z;
}

/* inout[i] = in[i] * inout[i] (MPI: inoutvec = invec op inoutvec). */
static void matmul_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    mat *x = in, *y = inout;
    for (int i = 0; i < *len; i++)
        y[i] = mul(x[i], y[i]);
}

static mat elem(int r, long i)
{
    mat m = {1u + (unsigned)((r + i) % 3), (unsigned)((r * 7 + i) % 5), (unsigned)((r + 2 * i) % 7), 1u + (unsigned)(r % 2)};
    return m;
}

/* Product of ranks [lo, hi] at element i, in rank order. */
static mat prod(long i, int lo, int hi)
{
    mat m = {1, 0, 0, 1};
    for (int r = lo; r <= hi; r++)
        m = mul(m, elem(r, i));
    return m;
}

static void check(const mat *got, long n, int lo, int hi, const char *what, int nb, int inplace)
{
    for (long i = 0; i < n; i++) {
        mat e = prod(i, lo, hi);
        if (memcmp(&got[i], &e, sizeof e))
            FAIL("%s n=%ld nb=%d inplace=%d: element %ld = [%u %u; %u %u], expected [%u %u; %u %u] (product of ranks %d..%d)",
                 what, n, nb, inplace, i, got[i].a, got[i].b, got[i].c, got[i].d, e.a, e.b, e.c, e.d, lo, hi);
    }
}

static void wait(MPI_Request *r) { MPI_OK(MPI_Wait(r, MPI_STATUS_IGNORE)); }

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rank = tu_rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype mt;
    MPI_Op op;
    MPI_OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mt));
    MPI_OK(MPI_Type_commit(&mt));
    MPI_OK(MPI_Op_create(matmul_op, 0, &op));
    long counts[] = {1, 3, 1100, 70000}; /* 16 B .. 1.1 MiB */
    for (int c = 0; c < 4; c++) {
        long n = counts[c];
        mat *s = tu_malloc(n * size * sizeof(mat)), *r = tu_malloc(n * size * sizeof(mat));
        for (int nb = 0; nb < 2; nb++)
            for (int inplace = 0; inplace < 2; inplace++) {
                MPI_Request q;
                for (long i = 0; i < n; i++) s[i] = r[i] = elem(rank, i);
                /* Reduce, at every root. */
                for (int root = 0; root < size; root++) {
                    for (long i = 0; i < n; i++) s[i] = r[i] = elem(rank, i);
                    const void *sb = (inplace && rank == root) ? MPI_IN_PLACE : s;
                    if (nb) { MPI_OK(MPI_Ireduce(sb, r, n, mt, op, root, MPI_COMM_WORLD, &q)); wait(&q); }
                    else MPI_OK(MPI_Reduce(sb, r, n, mt, op, root, MPI_COMM_WORLD));
                    if (rank == root) check(r, n, 0, size - 1, "reduce", nb, inplace);
                }
                const void *sb = inplace ? MPI_IN_PLACE : s;
                for (long i = 0; i < n; i++) s[i] = r[i] = elem(rank, i);
                if (nb) { MPI_OK(MPI_Iallreduce(sb, r, n, mt, op, MPI_COMM_WORLD, &q)); wait(&q); }
                else MPI_OK(MPI_Allreduce(sb, r, n, mt, op, MPI_COMM_WORLD));
                check(r, n, 0, size - 1, "allreduce", nb, inplace);
                for (long i = 0; i < n; i++) s[i] = r[i] = elem(rank, i);
                if (nb) { MPI_OK(MPI_Iscan(sb, r, n, mt, op, MPI_COMM_WORLD, &q)); wait(&q); }
                else MPI_OK(MPI_Scan(sb, r, n, mt, op, MPI_COMM_WORLD));
                check(r, n, 0, rank, "scan", nb, inplace);
                for (long i = 0; i < n; i++) s[i] = r[i] = elem(rank, i);
                if (nb) { MPI_OK(MPI_Iexscan(sb, r, n, mt, op, MPI_COMM_WORLD, &q)); wait(&q); }
                else MPI_OK(MPI_Exscan(sb, r, n, mt, op, MPI_COMM_WORLD));
                if (rank > 0) check(r, n, 0, rank - 1, "exscan", nb, inplace);
                /* Reduce_scatter_block: element i of the full vector is elem(rank, i). */
                long bn = n > 1000 ? n / size : n;
                for (long i = 0; i < bn * size; i++) s[i] = r[i] = elem(rank, i);
                if (nb) { MPI_OK(MPI_Ireduce_scatter_block(sb, r, bn, mt, op, MPI_COMM_WORLD, &q)); wait(&q); }
                else MPI_OK(MPI_Reduce_scatter_block(sb, r, bn, mt, op, MPI_COMM_WORLD));
                for (long i = 0; i < bn; i++) {
                    mat e = prod(rank * bn + i, 0, size - 1);
                    if (memcmp(&r[i], &e, sizeof e))
                        FAIL("reduce_scatter_block n=%ld nb=%d inplace=%d: element %ld wrong", bn, nb, inplace, i);
                }
            }
        free(s); free(r);
        if (rank == 0) { printf("count %ld ok\n", n); fflush(stdout); }
    }
    MPI_OK(MPI_Op_free(&op));
    MPI_OK(MPI_Type_free(&mt));
    if (rank == 0) { printf("coll_noncomm: OK (%d ranks)\n", size); fflush(stdout); }
    MPI_Finalize();
    return 0;
}
