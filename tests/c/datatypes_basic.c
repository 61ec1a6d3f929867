/* datatypes_basic: every predefined C datatype, used contiguously, sent right
 * around the ring and received from the left, with a short (7) and a long
 * (rendezvous-sized) count. Checks every element's value and MPI_Get_count in
 * the datatype's units (and that a smaller receive count is not reported).
 * Pair types (MPI_2INT, MPI_FLOAT_INT, ...) are checked field by field since
 * their C structs contain padding. n == 1: rank 0 sends to itself. */
#include "testutil.h"

#include <complex.h>
#include <float.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

static int rank, nprocs, right, left;
static int ntypes_tested;

#define SHORT_N 7
#define LONG_N 20000

/* Exchange `count` elements of `type`: send sbuf right, receive rbuf from the
 * left (rbuf has room for count + 1 elements), check the count. */
static void exchange(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                     const char *name)
{
    MPI_Request req;
    MPI_Status st;
    int got = -1;
    MPI_Isend(sbuf, count, type, right, 77, MPI_COMM_WORLD, &req);
    MPI_Recv(rbuf, count + 1, type, left, 77, MPI_COMM_WORLD, &st);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 77, "%s: status source %d tag %d", name,
          st.MPI_SOURCE, st.MPI_TAG);
    MPI_Get_count(&st, type, &got);
    CHECK(got == count, "%s: MPI_Get_count = %d, expected %d", name, got, count);
    /* basic types: one element per item. (Not asked of the pair types, whose
     * MPI_Get_elements crashes MPICH 4.0.) */
    if (type != MPI_FLOAT_INT && type != MPI_DOUBLE_INT && type != MPI_LONG_INT &&
        type != MPI_2INT && type != MPI_SHORT_INT && type != MPI_LONG_DOUBLE_INT) {
        MPI_Get_elements(&st, type, &got);
        CHECK(got == count, "%s: MPI_Get_elements = %d, expected %d", name, got, count);
    }
}

/* VAL(i, r) gives element i of rank r's data; EQ compares two elements. */
#define TEST_TYPE(ctype, mpitype, VAL, EQ)                                     \
    do {                                                                       \
        for (int pass = 0; pass < 2; pass++) {                                 \
            int n_ = pass ? LONG_N : SHORT_N;                                  \
            ctype *s_ = tu_malloc((n_ + 1) * sizeof(ctype));                   \
            ctype *r_ = tu_malloc((n_ + 1) * sizeof(ctype));                   \
            memset(r_, 0, (n_ + 1) * sizeof(ctype));                           \
            for (int i = 0; i < n_; i++) {                                     \
                int r = rank;                                                  \
                s_[i] = VAL;                                                   \
            }                                                                  \
            exchange(s_, r_, n_, mpitype, #mpitype);                           \
            for (int i = 0; i < n_; i++) {                                     \
                int r = left;                                                  \
                ctype e_ = VAL;                                                \
                if (!(EQ(r_[i], e_)))                                          \
                    FAIL("%s: element %d of %d from rank %d is wrong", #mpitype, \
                         i, n_, left);                                         \
            }                                                                  \
            free(s_);                                                          \
            free(r_);                                                          \
        }                                                                      \
        ntypes_tested++;                                                       \
    } while (0)

#define EQ_PLAIN(a, b) ((a) == (b))
#define EQ_PAIR(a, b) ((a).v == (b).v && (a).k == (b).k)

struct float_int { float v; int k; };
struct double_int { double v; int k; };
struct long_int { long v; int k; };
struct two_int { int v; int k; };
struct short_int { short v; int k; };
struct long_double_int { long double v; int k; };

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    right = (rank + 1) % nprocs;
    left = (rank + nprocs - 1) % nprocs;

    /* integers: values cover both signs, the extremes and all bytes */
    TEST_TYPE(char, MPI_CHAR, (char)('A' + (i + r) % 26), EQ_PLAIN);
    TEST_TYPE(signed char, MPI_SIGNED_CHAR, (signed char)(i % 2 ? -(i % 128) : (i + r) % 128),
              EQ_PLAIN);
    TEST_TYPE(unsigned char, MPI_UNSIGNED_CHAR, (unsigned char)(i * 7 + r), EQ_PLAIN);
    TEST_TYPE(short, MPI_SHORT, (short)(i == 0 ? SHRT_MIN : i == 1 ? SHRT_MAX : i * 3 - r * 1000),
              EQ_PLAIN);
    TEST_TYPE(unsigned short, MPI_UNSIGNED_SHORT, (unsigned short)(i == 0 ? USHRT_MAX : i * 5 + r),
              EQ_PLAIN);
    TEST_TYPE(int, MPI_INT, (i == 0 ? INT_MIN : i == 1 ? INT_MAX : i * 100003 - r * 7), EQ_PLAIN);
    TEST_TYPE(unsigned, MPI_UNSIGNED, (i == 0 ? UINT_MAX : (unsigned)i * 2654435761u + r),
              EQ_PLAIN);
    TEST_TYPE(long, MPI_LONG, (i == 0 ? LONG_MIN : i == 1 ? LONG_MAX : (long)i * 1000000007L - r),
              EQ_PLAIN);
    TEST_TYPE(unsigned long, MPI_UNSIGNED_LONG,
              (i == 0 ? ULONG_MAX : (unsigned long)i * 0x9E3779B97F4A7C15UL + r), EQ_PLAIN);
    TEST_TYPE(long long, MPI_LONG_LONG_INT,
              (i == 0 ? LLONG_MIN : i == 1 ? LLONG_MAX : (long long)i * -123456789012LL + r),
              EQ_PLAIN);
    TEST_TYPE(long long, MPI_LONG_LONG, (long long)i * 987654321987LL - r, EQ_PLAIN);
    TEST_TYPE(unsigned long long, MPI_UNSIGNED_LONG_LONG,
              (i == 0 ? ULLONG_MAX : (unsigned long long)i * 0xC2B2AE3D27D4EB4FULL + r),
              EQ_PLAIN);
    TEST_TYPE(wchar_t, MPI_WCHAR, (wchar_t)(0x3B1 + (i + r) % 64), EQ_PLAIN);
    TEST_TYPE(int8_t, MPI_INT8_T, (int8_t)(i == 0 ? INT8_MIN : (i * 13 + r) % 128 - 64), EQ_PLAIN);
    TEST_TYPE(int16_t, MPI_INT16_T, (int16_t)(i == 0 ? INT16_MIN : i * 311 - r), EQ_PLAIN);
    TEST_TYPE(int32_t, MPI_INT32_T, (int32_t)(i == 0 ? INT32_MIN : i * 70001 - r), EQ_PLAIN);
    TEST_TYPE(int64_t, MPI_INT64_T, (i == 0 ? INT64_MIN : (int64_t)i * -5000000011LL + r),
              EQ_PLAIN);
    TEST_TYPE(uint8_t, MPI_UINT8_T, (uint8_t)(i * 17 + r), EQ_PLAIN);
    TEST_TYPE(uint16_t, MPI_UINT16_T, (uint16_t)(i == 0 ? UINT16_MAX : i * 4099 + r), EQ_PLAIN);
    TEST_TYPE(uint32_t, MPI_UINT32_T, (i == 0 ? UINT32_MAX : (uint32_t)i * 2246822519u + r),
              EQ_PLAIN);
    TEST_TYPE(uint64_t, MPI_UINT64_T,
              (i == 0 ? UINT64_MAX : (uint64_t)i * 0x9E3779B97F4A7C15ULL + r), EQ_PLAIN);
    TEST_TYPE(_Bool, MPI_C_BOOL, (bool)((i + r) % 3 == 0), EQ_PLAIN);
    TEST_TYPE(MPI_Aint, MPI_AINT, (MPI_Aint)i * 4096 - r, EQ_PLAIN);
    TEST_TYPE(MPI_Offset, MPI_OFFSET, (MPI_Offset)i * 10000000000LL + r, EQ_PLAIN);
    TEST_TYPE(MPI_Count, MPI_COUNT, (MPI_Count)i * -3000000000LL + r, EQ_PLAIN);
    TEST_TYPE(unsigned char, MPI_BYTE, (unsigned char)(i * 29 + r * 3), EQ_PLAIN);
    TEST_TYPE(unsigned char, MPI_PACKED, (unsigned char)(i * 31 + r * 5), EQ_PLAIN);

    /* floating point: values that need every mantissa bit */
    TEST_TYPE(float, MPI_FLOAT, (i == 0 ? FLT_MAX : i == 1 ? -FLT_MIN : (float)(i + r) / 3.0f),
              EQ_PLAIN);
    TEST_TYPE(double, MPI_DOUBLE, (i == 0 ? DBL_MAX : i == 1 ? -DBL_MIN : (double)(i + r) / 7.0),
              EQ_PLAIN);
    TEST_TYPE(long double, MPI_LONG_DOUBLE,
              (i == 0 ? LDBL_MAX : 1.0L + LDBL_EPSILON * (i + r) + (long double)i / 3.0L),
              EQ_PLAIN);
    TEST_TYPE(float _Complex, MPI_C_COMPLEX, ((float)i + r) + ((float)i / 3.0f) * I, EQ_PLAIN);
    TEST_TYPE(float _Complex, MPI_C_FLOAT_COMPLEX, ((float)i / 7.0f) - ((float)r + i) * I,
              EQ_PLAIN);
    TEST_TYPE(double _Complex, MPI_C_DOUBLE_COMPLEX, ((double)i / 3.0 + r) + ((double)i / 9.0) * I,
              EQ_PLAIN);
    TEST_TYPE(long double _Complex, MPI_C_LONG_DOUBLE_COMPLEX,
              ((long double)i / 3.0L + LDBL_EPSILON) + ((long double)r / 7.0L - i) * I, EQ_PLAIN);

    /* pair types, for MINLOC/MAXLOC */
    TEST_TYPE(struct float_int, MPI_FLOAT_INT, ((struct float_int){(float)i / 3.0f, i - r}),
              EQ_PAIR);
    TEST_TYPE(struct double_int, MPI_DOUBLE_INT, ((struct double_int){(double)i / 7.0, -i + r}),
              EQ_PAIR);
    TEST_TYPE(struct long_int, MPI_LONG_INT, ((struct long_int){(long)i * 1000000007L, r + i}),
              EQ_PAIR);
    TEST_TYPE(struct two_int, MPI_2INT, ((struct two_int){i * 3 + r, (int)(INT_MIN + i)}), EQ_PAIR);
    TEST_TYPE(struct short_int, MPI_SHORT_INT, ((struct short_int){(short)(i - r), i * 11}),
              EQ_PAIR);
    TEST_TYPE(struct long_double_int, MPI_LONG_DOUBLE_INT,
              ((struct long_double_int){1.0L + LDBL_EPSILON * i, r - i}), EQ_PAIR);

    /* a receive count in a smaller type: the byte count must still be right */
    {
        double d[5] = {1, 2, 3, 4, 5};
        unsigned char raw[64];
        MPI_Request req;
        MPI_Status st;
        int got = -1;
        MPI_Isend(d, 5, MPI_DOUBLE, right, 78, MPI_COMM_WORLD, &req);
        MPI_Recv(raw, 64, MPI_BYTE, left, 78, MPI_COMM_WORLD, &st);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Get_count(&st, MPI_BYTE, &got);
        CHECK(got == 5 * (int)sizeof(double), "5 doubles received as bytes: count %d", got);
        MPI_Get_count(&st, MPI_DOUBLE, &got);
        CHECK(got == 5, "5 doubles received as bytes, counted as MPI_DOUBLE: %d", got);
        MPI_Get_count(&st, MPI_INT, &got);
        CHECK(got == 10, "5 doubles received as bytes, counted as MPI_INT: %d", got);
        CHECK(memcmp(raw, d, sizeof d) == 0, "5 doubles received as bytes: data differs");
    }

    if (rank == 0)
        printf("datatypes_basic: OK (%d ranks, %d datatypes)\n", nprocs, ntypes_tested);
    MPI_Finalize();
    return 0;
}
