/* datatypes_p2p: point-to-point with derived (non-contiguous) datatypes, small (packed
 * through a staging buffer) and large (streamed: packed straight into the transport and
 * unpacked straight out of it). Sender and receiver use different type maps with the same
 * type signature; holes must stay untouched; blocking, synchronous, persistent, matched
 * probe and truncation paths. Pairs (0,1), (2,3), ...; an odd last rank talks to itself. */
#include "testutil.h"

#define HOLE (-7.0)

/* Expected value of element i of message `tag`. */
static double val(int tag, long i) { return tag * 1000003.0 + (double)i; }

/* A strided array: n doubles with stride `stride`, holes set to HOLE. */
static double *strided(long n, int stride, int tag, int fill)
{
    double *a = malloc(sizeof(double) * (size_t)(n * stride));
    for (long k = 0; k < n * stride; k++)
        a[k] = HOLE;
    if (fill)
        for (long i = 0; i < n; i++)
            a[i * stride] = val(tag, i);
    return a;
}

static void check_strided(const double *a, long n, int stride, int tag, long upto, const char *what)
{
    for (long k = 0; k < n * stride; k++) {
        double want = (k % stride == 0 && k / stride < upto) ? val(tag, k / stride) : HOLE;
        CHECK(a[k] == want, "%s tag %d: element %ld is %g, expected %g", what, tag, k, a[k], want);
    }
}

static void exchange(int me, int peer, long n, int tag)
{
    int send_first = me <= peer;
    MPI_Datatype vec2, vec3;
    MPI_OK(MPI_Type_vector((int)n, 1, 2, MPI_DOUBLE, &vec2));
    MPI_OK(MPI_Type_vector((int)n, 1, 3, MPI_DOUBLE, &vec3));
    MPI_OK(MPI_Type_commit(&vec2));
    MPI_OK(MPI_Type_commit(&vec3));
    MPI_Status st;
    int count;

    /* 1. vector (stride 2) -> vector (stride 3) */
    double *s2 = strided(n, 2, tag, 1), *r3 = strided(n, 3, tag, 0);
    MPI_Request rq;
    MPI_OK(MPI_Irecv(r3, 1, vec3, peer, tag, MPI_COMM_WORLD, &rq));
    MPI_OK(MPI_Send(s2, 1, vec2, peer, tag, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&rq, &st));
    MPI_OK(MPI_Get_count(&st, vec3, &count));
    CHECK(count == 1, "vec->vec count %d", count);
    MPI_OK(MPI_Get_elements(&st, vec3, &count));
    CHECK(count == n, "vec->vec elements %d, expected %ld", count, n);
    check_strided(r3, n, 3, tag, n, "vec->vec");
    check_strided(s2, n, 2, tag, n, "send buffer after send");

    /* 2. vector -> contiguous and contiguous -> vector, synchronous mode */
    double *c = malloc(sizeof(double) * (size_t)n);
    for (long i = 0; i < n; i++)
        c[i] = val(tag + 1, i);
    double *r2 = strided(n, 2, tag + 1, 0);
    double *cr = malloc(sizeof(double) * (size_t)n);
    if (peer == me) {
        MPI_OK(MPI_Issend(c, (int)n, MPI_DOUBLE, peer, tag + 1, MPI_COMM_WORLD, &rq));
        MPI_OK(MPI_Recv(r2, 1, vec2, peer, tag + 1, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else if (send_first) {
        MPI_OK(MPI_Ssend(c, (int)n, MPI_DOUBLE, peer, tag + 1, MPI_COMM_WORLD));
        MPI_OK(MPI_Recv(r2, 1, vec2, peer, tag + 1, MPI_COMM_WORLD, &st));
    } else {
        MPI_OK(MPI_Recv(r2, 1, vec2, peer, tag + 1, MPI_COMM_WORLD, &st));
        MPI_OK(MPI_Ssend(c, (int)n, MPI_DOUBLE, peer, tag + 1, MPI_COMM_WORLD));
    }
    check_strided(r2, n, 2, tag + 1, n, "contig->vec");
    double *s2b = strided(n, 2, tag + 2, 1);
    MPI_OK(MPI_Sendrecv(s2b, 1, vec2, peer, tag + 2, cr, (int)n, MPI_DOUBLE, peer, tag + 2, MPI_COMM_WORLD, &st));
    for (long i = 0; i < n; i++)
        CHECK(cr[i] == val(tag + 2, i), "vec->contig element %ld is %g", i, cr[i]);

    /* 3. persistent requests with a vector type, three rounds */
    MPI_Request pr[2];
    double *ps = strided(n, 2, tag + 3, 1), *precv = strided(n, 3, tag + 3, 0);
    MPI_OK(MPI_Recv_init(precv, 1, vec3, peer, tag + 3, MPI_COMM_WORLD, &pr[0]));
    MPI_OK(MPI_Send_init(ps, 1, vec2, peer, tag + 3, MPI_COMM_WORLD, &pr[1]));
    for (int round = 0; round < 3; round++) {
        MPI_OK(MPI_Startall(2, pr));
        MPI_Status sts[2];
        MPI_OK(MPI_Waitall(2, pr, sts));
        check_strided(precv, n, 3, tag + 3, n, "persistent");
        for (long k = 0; k < n * 3; k++)
            if (k % 3 == 0)
                precv[k] = HOLE;
    }
    MPI_OK(MPI_Request_free(&pr[0]));
    MPI_OK(MPI_Request_free(&pr[1]));

    /* 4. matched probe + Mrecv into a vector */
    MPI_Message msg;
    double *mr = strided(n, 3, tag + 4, 0);
    double *ms = strided(n, 2, tag + 4, 1);
    MPI_OK(MPI_Isend(ms, 1, vec2, peer, tag + 4, MPI_COMM_WORLD, &rq));
    MPI_OK(MPI_Mprobe(peer, tag + 4, MPI_COMM_WORLD, &msg, &st));
    MPI_OK(MPI_Get_count(&st, MPI_DOUBLE, &count));
    CHECK(count == n, "mprobe count %d, expected %ld", count, n);
    MPI_OK(MPI_Mrecv(mr, 1, vec3, &msg, &st));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    check_strided(mr, n, 3, tag + 4, n, "mrecv");

    /* 5. truncation: n doubles into a vector of n/2 */
    MPI_Datatype half;
    long h = n / 2;
    MPI_OK(MPI_Type_vector((int)h, 1, 3, MPI_DOUBLE, &half));
    MPI_OK(MPI_Type_commit(&half));
    double *tr = strided(n, 3, tag + 5, 0);
    double *ts = strided(n, 2, tag + 5, 1);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Irecv(tr, 1, half, peer, tag + 5, MPI_COMM_WORLD, &rq));
    MPI_OK(MPI_Send(ts, 1, vec2, peer, tag + 5, MPI_COMM_WORLD));
    int rc = MPI_Wait(&rq, &st), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "truncated receive: error class %d, expected MPI_ERR_TRUNCATE", cls);
    /* What lands in a truncated receive buffer is up to the implementation; holes beyond
     * the type map must stay untouched. */
    for (long k = 0; k < n * 3; k++)
        if (k % 3 != 0 || k / 3 >= h)
            CHECK(tr[k] == HOLE, "truncated receive wrote outside its type map at %ld", k);

    /* 6. a different type signature: bytes that end inside an int of a non-contiguous
     * receive type are MPI_ERR_TRUNCATE (as MPICH); whole ints are fine; a contiguous
     * receive takes any bytes and MPI_Get_count says MPI_UNDEFINED (as MPICH) */
    MPI_Datatype ivec;
    MPI_OK(MPI_Type_vector((int)n, 1, 2, MPI_INT, &ivec));
    MPI_OK(MPI_Type_commit(&ivec));
    int *ir = malloc(n * 2 * sizeof(int));
    char *bs = malloc(n * 4);
    for (long k = 0; k < n * 4; k++)
        bs[k] = (char)k;
    for (int whole = 0; whole < 2; whole++) {
        long nb = whole ? n * 4 : n * 4 - 2;
        MPI_OK(MPI_Irecv(ir, 1, ivec, peer, tag + 6, MPI_COMM_WORLD, &rq));
        MPI_OK(MPI_Send(bs, (int)nb, MPI_BYTE, peer, tag + 6, MPI_COMM_WORLD));
        rc = MPI_Wait(&rq, &st);
        cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        /* (a vector of one int is contiguous) */
        CHECK(cls == (whole || n == 1 ? MPI_SUCCESS : MPI_ERR_TRUNCATE), "%ld bytes into a "
              "vector of %ld ints: error class %d", nb, n, cls);
        if (whole) {
            MPI_OK(MPI_Get_elements(&st, MPI_INT, &count));
            CHECK(count == n, "bytes into a vector of ints: %d elements, expected %ld", count, n);
        }
    }
    MPI_OK(MPI_Irecv(ir, (int)n, MPI_INT, peer, tag + 7, MPI_COMM_WORLD, &rq));
    MPI_OK(MPI_Send(bs, (int)(n * 4 - 2), MPI_BYTE, peer, tag + 7, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&rq, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == MPI_UNDEFINED, "partial int into MPI_INT: count %d, expected MPI_UNDEFINED", count);
    MPI_OK(MPI_Type_free(&ivec));
    free(ir);
    free(bs);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    MPI_OK(MPI_Type_free(&vec2));
    MPI_OK(MPI_Type_free(&vec3));
    MPI_OK(MPI_Type_free(&half));
    free(s2); free(r3); free(c); free(r2); free(cr); free(s2b); free(ps); free(precv);
    free(mr); free(ms); free(tr); free(ts);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int peer = rank ^ 1;
    if (peer >= size)
        peer = rank;
    long sizes[] = {1, 5, 1000, 2049, 5000, 140000};
    for (int k = 0; k < 6; k++)
        exchange(rank, peer, sizes[k], 10 * k);
    if (rank == 0)
        printf("datatypes_p2p: OK (%d ranks)\n", size);
    MPI_Finalize();
    return 0;
}
