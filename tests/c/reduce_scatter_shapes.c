/* MPI_Reduce_scatter and MPI_Reduce_scatter_block over every block shape the algorithms
 * treat differently: equal blocks, growing blocks (an in-place output then overlaps the
 * input blocks after it), zero-length blocks between non-empty ones, everything on one
 * rank, at lengths on both sides of the short/long switch; out of place (the bytes after
 * this rank's block must stay untouched) and MPI_IN_PLACE; blocking, nonblocking and
 * persistent; MPI_SUM on int, a commutative user op on doubles and a non-commutative user
 * op (rank order must be kept). Element g of rank r's vector is v(r, g).
 * Argument "mpich-bugs": skip in-place cases that MPICH 4.0.2 aborts on ("memcpy argument
 * memory ranges overlap" in its yaksa pack for in-place long vectors). */
#include "testutil.h"

static int rank, size;

static int v(int r, long g) { return (int)((g * 7 + r * 13) % 1000) - 300; }

/* Commutative user op: sum of doubles. */
static void dsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++) ((double *)inout)[i] += ((double *)in)[i];
}

/* Non-commutative: 2x2 integer matrix product mod 1009 kept as 4 ints, inout = in * inout. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += 4, b += 4) {
        int c[4] = {(a[0] * b[0] + a[1] * b[2]) % 1009, (a[0] * b[1] + a[1] * b[3]) % 1009,
                    (a[2] * b[0] + a[3] * b[2]) % 1009, (a[2] * b[1] + a[3] * b[3]) % 1009};
        memcpy(b, c, sizeof c);
    }
}

static void mat_of(int r, long g, int *m)
{
    m[0] = (int)((r + g) % 7) + 1; m[1] = r % 3; m[2] = (int)(g % 5); m[3] = 1 + r % 2;
}

enum { SUM_INT, USER_DSUM, USER_MATMUL };
enum { BLOCKING, NONBLOCKING, PERSISTENT };

static void run(int kind, const void *sb, void *rb, const int *cnts, int block, MPI_Datatype dt, MPI_Op op)
{
    MPI_Request req;
    if (block) {
        if (kind == BLOCKING) MPI_OK(MPI_Reduce_scatter_block(sb, rb, cnts[0], dt, op, MPI_COMM_WORLD));
        else if (kind == NONBLOCKING) MPI_OK(MPI_Ireduce_scatter_block(sb, rb, cnts[0], dt, op, MPI_COMM_WORLD, &req));
        else MPI_OK(MPI_Reduce_scatter_block_init(sb, rb, cnts[0], dt, op, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    } else {
        if (kind == BLOCKING) MPI_OK(MPI_Reduce_scatter(sb, rb, cnts, dt, op, MPI_COMM_WORLD));
        else if (kind == NONBLOCKING) MPI_OK(MPI_Ireduce_scatter(sb, rb, cnts, dt, op, MPI_COMM_WORLD, &req));
        else MPI_OK(MPI_Reduce_scatter_init(sb, rb, cnts, dt, op, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    }
    if (kind == PERSISTENT) MPI_OK(MPI_Start(&req));
    if (kind != BLOCKING) MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (kind == PERSISTENT) MPI_OK(MPI_Request_free(&req));
}

static void one(long n, int shape, int what, int inplace, int kind, MPI_Datatype mat, MPI_Op dsum_op, MPI_Op mat_op)
{
    int *cnts = tu_malloc(size * sizeof(int));
    for (int q = 0; q < size; q++) {
        switch (shape) {
        case 0: cnts[q] = (int)n; break;                       /* equal (also as _block) */
        case 1: cnts[q] = (int)n + q * (int)(n / 2 + 1); break; /* growing */
        case 2: cnts[q] = q % 2 ? 0 : (int)n; break;            /* zeros between */
        default: cnts[q] = q == size - 1 ? (int)n : 0; break;   /* all on the last rank */
        }
    }
    long total = 0, before = 0;
    for (int q = 0; q < size; q++) { if (q < rank) before += cnts[q]; total += cnts[q]; }
    long mine = cnts[rank];
    size_t esz = what == SUM_INT ? sizeof(int) : what == USER_DSUM ? sizeof(double) : 4 * sizeof(int);
    unsigned char *s = tu_malloc(total * esz + 1), *r = tu_malloc(total * esz + 64);
    for (long g = 0; g < total; g++) {
        if (what == SUM_INT) ((int *)s)[g] = v(rank, g);
        else if (what == USER_DSUM) ((double *)s)[g] = v(rank, g) * 0.5;
        else mat_of(rank, g, (int *)s + 4 * g);
    }
    memset(r, 0xA5, total * esz + 64);
    if (inplace) memcpy(r, s, total * esz);
    MPI_Datatype dt = what == SUM_INT ? MPI_INT : what == USER_DSUM ? MPI_DOUBLE : mat;
    MPI_Op op = what == SUM_INT ? MPI_SUM : what == USER_DSUM ? dsum_op : mat_op;
    run(kind, inplace ? MPI_IN_PLACE : s, r, cnts, shape == 0 && n % 2 == 0, dt, op);
    for (long i = 0; i < mine; i++) {
        long g = before + i;
        if (what == SUM_INT) {
            int want = 0;
            for (int q = 0; q < size; q++) want += v(q, g);
            CHECK(((int *)r)[i] == want, "n %ld shape %d int inplace %d kind %d: element %ld is %d, want %d", n, shape, inplace, kind, i, ((int *)r)[i], want);
        } else if (what == USER_DSUM) {
            double want = 0;
            for (int q = 0; q < size; q++) want += v(q, g) * 0.5;
            CHECK(((double *)r)[i] == want, "n %ld shape %d dsum inplace %d kind %d: element %ld is %g, want %g", n, shape, inplace, kind, i, ((double *)r)[i], want);
        } else {
            int want[4], m[4];
            mat_of(size - 1, g, want);
            for (int q = size - 2; q >= 0; q--) { mat_of(q, g, m); int l = 1; matmul(m, want, &l, NULL); }
            CHECK(!memcmp((int *)r + 4 * i, want, sizeof want), "n %ld shape %d matmul inplace %d kind %d: element %ld out of rank order", n, shape, inplace, kind, i);
        }
    }
    if (!inplace)
        for (size_t b = mine * esz; b < total * esz + 64; b++)
            CHECK(r[b] == 0xA5, "n %ld shape %d what %d kind %d: byte %zu after the %ld-element result was written", n, shape, what, kind, b, mine);
    free(s); free(r); free(cnts);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Datatype mat;
    MPI_OK(MPI_Type_contiguous(4, MPI_INT, &mat));
    MPI_OK(MPI_Type_commit(&mat));
    MPI_Op dsum_op, mat_op;
    MPI_OK(MPI_Op_create(dsum, 1, &dsum_op));
    MPI_OK(MPI_Op_create(matmul, 0, &mat_op));
    /* Lengths: empty, tiny, odd, and long enough (per rank) for the long-vector ring. */
    long lens[] = {0, 1, 3, 100, 5000, 40000};
    int mpich_bugs = argc > 1 && !strcmp(argv[1], "mpich-bugs");
    int checks = 0;
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (int shape = 0; shape < 4; shape++)
            for (int what = 0; what < 3; what++)
                for (int inplace = 0; inplace < 2; inplace++)
                    for (int kind = 0; kind < 3; kind++) {
                        if (what == USER_MATMUL && lens[li] > 5000) continue; /* slow op, same paths */
                        if (mpich_bugs && inplace && lens[li] >= 5000) continue;
                        one(lens[li], shape, what, inplace, kind, mat, dsum_op, mat_op);
                        checks++;
                    }
    MPI_OK(MPI_Op_free(&dsum_op));
    MPI_OK(MPI_Op_free(&mat_op));
    MPI_OK(MPI_Type_free(&mat));
    if (rank == 0) printf("reduce_scatter_shapes: %d cases on %d ranks\nreduce_scatter_shapes: OK\n", checks, size);
    MPI_Finalize();
    return 0;
}
