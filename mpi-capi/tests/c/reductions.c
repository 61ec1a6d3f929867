/* Reductions through the C ABI, run as a singleton: MPI_Reduce_local on predefined ops and
   types (long double, complex, pair types, C bool), a non-commutative user op on a derived
   type, MPI_Op_commutative / MPI_Op_free, and the errors with MPI_ERRORS_RETURN. Built and
   run by mpi-capi/tests/reductions.rs; prints "ok" on success. */
#include <mpi.h>
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CHECK(c)                                                  \
    do {                                                          \
        if (!(c)) {                                               \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);   \
            return 1;                                             \
        }                                                         \
    } while (0)

static MPI_Datatype seen_type;
static int seen_len;

/* inout = in x inout for 2x2 int matrices (row-major): not commutative. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const int *a = in;
    int *b = inout;
    seen_type = *dt;
    seen_len = *len;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int r[4] = { a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3] };
        memcpy(b, r, sizeof r);
    }
}

static int error_class_of(int code)
{
    int class = -1;
    MPI_Error_class(code, &class);
    return class;
}

int main(int argc, char **argv)
{
    CHECK(MPI_Init(&argc, &argv) == MPI_SUCCESS);
    CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) == MPI_SUCCESS);

    /* Integers. */
    int a[4] = { 1, -2, 3, 4 }, b[4] = { 10, 20, -30, 4 };
    CHECK(MPI_Reduce_local(a, b, 4, MPI_INT, MPI_SUM) == MPI_SUCCESS);
    CHECK(b[0] == 11 && b[1] == 18 && b[2] == -27 && b[3] == 8);
    CHECK(MPI_Reduce_local(a, b, 4, MPI_INT, MPI_MAX) == MPI_SUCCESS);
    CHECK(b[0] == 11 && b[1] == 18 && b[2] == 3 && b[3] == 8);
    uint8_t u8a[2] = { 0xf0, 0x0f }, u8b[2] = { 0xff, 0xff };
    CHECK(MPI_Reduce_local(u8a, u8b, 2, MPI_BYTE, MPI_BXOR) == MPI_SUCCESS);
    CHECK(u8b[0] == 0x0f && u8b[1] == 0xf0);
    int64_t la[1] = { INT64_MAX }, lb[1] = { 1 };
    CHECK(MPI_Reduce_local(la, lb, 1, MPI_INT64_T, MPI_SUM) == MPI_SUCCESS && lb[0] == INT64_MIN);

    /* Doubles, unaligned. */
    char raw_in[1 + 3 * sizeof(double)], raw_io[3 + 3 * sizeof(double)];
    double d_in[3] = { 0.5, 1.5, -2.0 }, d_io[3] = { 1.0, 2.0, 3.0 }, d_out[3];
    memcpy(raw_in + 1, d_in, sizeof d_in);
    memcpy(raw_io + 3, d_io, sizeof d_io);
    CHECK(MPI_Reduce_local(raw_in + 1, raw_io + 3, 3, MPI_DOUBLE, MPI_PROD) == MPI_SUCCESS);
    memcpy(d_out, raw_io + 3, sizeof d_out);
    CHECK(d_out[0] == 0.5 && d_out[1] == 3.0 && d_out[2] == -6.0);

    /* long double keeps its 64-bit significand. */
    long double x = 1.0L, y = 0x1p-60L;
    CHECK(MPI_Reduce_local(&x, &y, 1, MPI_LONG_DOUBLE, MPI_SUM) == MPI_SUCCESS);
    CHECK(y - 1.0L == 0x1p-60L);
    long double lmax[2] = { -1.0L, 7.25L }, lmax_io[2] = { 2.0L, 7.0L };
    CHECK(MPI_Reduce_local(lmax, lmax_io, 2, MPI_LONG_DOUBLE, MPI_MAX) == MPI_SUCCESS);
    CHECK(lmax_io[0] == 2.0L && lmax_io[1] == 7.25L);

    /* Complex products. */
    float _Complex fc1 = 1.0f + 2.0f * I, fc2 = 3.0f + 4.0f * I;
    CHECK(MPI_Reduce_local(&fc1, &fc2, 1, MPI_C_FLOAT_COMPLEX, MPI_PROD) == MPI_SUCCESS);
    CHECK(crealf(fc2) == -5.0f && cimagf(fc2) == 10.0f);
    double _Complex dc1 = 1.0 + 2.0 * I, dc2 = 3.0 + 4.0 * I;
    CHECK(MPI_Reduce_local(&dc1, &dc2, 1, MPI_C_DOUBLE_COMPLEX, MPI_PROD) == MPI_SUCCESS);
    CHECK(creal(dc2) == -5.0 && cimag(dc2) == 10.0);
    long double _Complex lc1 = 1.0L + 2.0L * I, lc2 = 3.0L + 4.0L * I;
    CHECK(MPI_Reduce_local(&lc1, &lc2, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_PROD) == MPI_SUCCESS);
    CHECK(creall(lc2) == -5.0L && cimagl(lc2) == 10.0L);

    /* MAXLOC / MINLOC: ties take the lower index. */
    struct { double v; int i; } p[3] = { { 1.0, 3 }, { 2.0, 5 }, { 4.0, 9 } },
                                 q[3] = { { 1.0, 1 }, { 1.0, 0 }, { 4.0, 2 } };
    CHECK(MPI_Reduce_local(p, q, 3, MPI_DOUBLE_INT, MPI_MAXLOC) == MPI_SUCCESS);
    CHECK(q[0].v == 1.0 && q[0].i == 1 && q[1].v == 2.0 && q[1].i == 5 && q[2].i == 2);
    struct { long double v; int i; } lp = { 5.0L, 2 }, lq = { 5.0L, 7 };
    CHECK(sizeof lp == 32);
    CHECK(MPI_Reduce_local(&lp, &lq, 1, MPI_LONG_DOUBLE_INT, MPI_MINLOC) == MPI_SUCCESS);
    CHECK(lq.v == 5.0L && lq.i == 2);
    struct { short v; int i; } sp = { -3, 4 }, sq = { 2, 1 };
    CHECK(MPI_Reduce_local(&sp, &sq, 1, MPI_SHORT_INT, MPI_MINLOC) == MPI_SUCCESS);
    CHECK(sq.v == -3 && sq.i == 4);
    int ip[2] = { 8, 3 }, iq[2] = { 8, 6 };
    CHECK(MPI_Reduce_local(ip, iq, 1, MPI_2INT, MPI_MAXLOC) == MPI_SUCCESS && iq[0] == 8 && iq[1] == 3);

    /* Logical ops on C bool. */
    bool t[3] = { true, true, false }, u[3] = { false, true, false };
    CHECK(MPI_Reduce_local(t, u, 3, MPI_C_BOOL, MPI_LXOR) == MPI_SUCCESS);
    CHECK(u[0] == true && u[1] == false && u[2] == false);

    /* A non-commutative user op on a derived type, called with the handle as given. */
    MPI_Datatype mat;
    CHECK(MPI_Type_contiguous(4, MPI_INT, &mat) == MPI_SUCCESS && MPI_Type_commit(&mat) == MPI_SUCCESS);
    MPI_Op op;
    int commute = -1;
    CHECK(MPI_Op_create(matmul, 0, &op) == MPI_SUCCESS);
    CHECK(MPI_Op_commutative(op, &commute) == MPI_SUCCESS && commute == 0);
    CHECK(MPI_Op_commutative(MPI_SUM, &commute) == MPI_SUCCESS && commute == 1);
    int m1[4] = { 1, 1, 0, 1 }, m2[4] = { 1, 0, 1, 1 };
    CHECK(MPI_Reduce_local(m1, m2, 1, mat, op) == MPI_SUCCESS);
    CHECK(m2[0] == 2 && m2[1] == 1 && m2[2] == 1 && m2[3] == 1);
    CHECK(seen_type == mat && seen_len == 1);
    CHECK(MPI_Op_free(&op) == MPI_SUCCESS && op == MPI_OP_NULL);
    MPI_Op freed = op;
    CHECK(MPI_Op_create(matmul, 1, &op) == MPI_SUCCESS);
    CHECK(MPI_Op_commutative(op, &commute) == MPI_SUCCESS && commute == 1);
    CHECK(MPI_Op_free(&op) == MPI_SUCCESS);
    CHECK(MPI_Type_free(&mat) == MPI_SUCCESS);

    /* Errors. */
    double d1 = 1.0, d2 = 2.0;
    int rc = MPI_Reduce_local(&d1, &d2, 1, MPI_DOUBLE, MPI_BAND);
    CHECK(error_class_of(rc) == MPI_ERR_OP);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    CHECK(MPI_Error_string(rc, msg, &len) == MPI_SUCCESS);
    CHECK(strstr(msg, "MPI_BAND is not defined for MPI_DOUBLE") != NULL);
    CHECK(error_class_of(MPI_Reduce_local(&d1, &d2, 1, MPI_DOUBLE, MPI_MAXLOC)) == MPI_ERR_OP);
    CHECK(error_class_of(MPI_Reduce_local(&d1, &d2, 1, MPI_DOUBLE, freed)) == MPI_ERR_OP);
    CHECK(error_class_of(MPI_Reduce_local(&d1, &d2, 1, MPI_DOUBLE, MPI_OP_NULL)) == MPI_ERR_OP);
    CHECK(error_class_of(MPI_Reduce_local(&d1, &d2, -1, MPI_DOUBLE, MPI_SUM)) == MPI_ERR_COUNT);
    CHECK(error_class_of(MPI_Reduce_local(MPI_IN_PLACE, &d2, 1, MPI_DOUBLE, MPI_SUM)) == MPI_ERR_BUFFER);
    CHECK(error_class_of(MPI_Reduce_local(&d1, &d2, 1, MPI_DATATYPE_NULL, MPI_SUM)) == MPI_ERR_TYPE);
    MPI_Op sum = MPI_SUM;
    CHECK(error_class_of(MPI_Op_free(&sum)) == MPI_ERR_OP && sum == MPI_SUM);
    CHECK(error_class_of(MPI_Op_commutative(freed, &commute)) == MPI_ERR_OP);

    CHECK(MPI_Finalize() == MPI_SUCCESS);
    printf("ok\n");
    return 0;
}
