/* Shared helpers for the OxMPI C test programs in tests/c.
 * Plain C99 + mpi.h only, so every program also builds with any other MPI. */
#ifndef OXMPI_TESTUTIL_H
#define OXMPI_TESTUTIL_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tu_rank = -1;

/* Print a failure message naming the rank, then abort the whole job with code 1. */
static inline void tu_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "[rank %d] FAIL %s:%d: ", tu_rank, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1); /* not reached with a working MPI_Abort */
}

#define FAIL(...) tu_fail(__FILE__, __LINE__, __VA_ARGS__)
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond))                                                           \
            FAIL(__VA_ARGS__);                                                 \
    } while (0)
/* Check that an MPI call returned MPI_SUCCESS (meaningful under MPI_ERRORS_RETURN). */
#define MPI_OK(call)                                                           \
    do {                                                                       \
        int tu_rc_ = (call);                                                   \
        if (tu_rc_ != MPI_SUCCESS)                                             \
            FAIL("%s returned error code %d", #call, tu_rc_);                  \
    } while (0)

static inline void tu_init(int *argc, char ***argv)
{
    MPI_OK(MPI_Init(argc, argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &tu_rank));
}

/* The error class of an MPI return code. */
static inline int tu_error_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

/* Check the fields of a receive status. count is in units of dtype. */
static inline void tu_check_status(const char *file, int line, const MPI_Status *st,
                            int source, int tag, MPI_Datatype dtype, int count)
{
    int got = -12345;
    if (st->MPI_SOURCE != source)
        tu_fail(file, line, "status.MPI_SOURCE = %d, expected %d", st->MPI_SOURCE, source);
    if (st->MPI_TAG != tag)
        tu_fail(file, line, "status.MPI_TAG = %d, expected %d", st->MPI_TAG, tag);
    MPI_OK(MPI_Get_count(st, dtype, &got));
    if (got != count)
        tu_fail(file, line, "MPI_Get_count = %d, expected %d", got, count);
}
#define CHECK_STATUS(st, source, tag, dtype, count)                            \
    tu_check_status(__FILE__, __LINE__, (st), (source), (tag), (dtype), (count))

/* Deterministic byte pattern: byte i of a buffer identified by seed. */
static inline unsigned char tu_pattern_byte(size_t i, uint32_t seed)
{
    uint32_t x = (uint32_t)i * 2654435761u + seed * 40503u + (uint32_t)(i >> 16) * 97u;
    x ^= x >> 15;
    return (unsigned char)(x ^ (x >> 8));
}

static inline void tu_fill(void *buf, size_t len, uint32_t seed)
{
    unsigned char *p = (unsigned char *)buf;
    for (size_t i = 0; i < len; i++)
        p[i] = tu_pattern_byte(i, seed);
}

/* Returns the index of the first wrong byte, or (size_t)-1 when all match. */
static inline size_t tu_verify(const void *buf, size_t len, uint32_t seed)
{
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t i = 0; i < len; i++)
        if (p[i] != tu_pattern_byte(i, seed))
            return i;
    return (size_t)-1;
}

#define CHECK_PATTERN(buf, len, seed, ...)                                     \
    do {                                                                       \
        size_t tu_bad_ = tu_verify((buf), (len), (seed));                      \
        if (tu_bad_ != (size_t)-1) {                                           \
            char tu_what_[256];                                                \
            snprintf(tu_what_, sizeof tu_what_, __VA_ARGS__);                  \
            FAIL("%s: data mismatch at byte %zu of %zu: got 0x%02x, expected 0x%02x", \
                 tu_what_, tu_bad_, (size_t)(len),                             \
                 ((const unsigned char *)(buf))[tu_bad_],                      \
                 tu_pattern_byte(tu_bad_, (seed)));                            \
        }                                                                      \
    } while (0)

/* Wait for a request, but fail (instead of hanging) after `seconds`. */
static inline void tu_wait_deadline(const char *file, int line, MPI_Request *req,
                             MPI_Status *st, double seconds, const char *what)
{
    double t0 = MPI_Wtime();
    int flag = 0;
    for (;;) {
        MPI_OK(MPI_Test(req, &flag, st));
        if (flag)
            return;
        if (MPI_Wtime() - t0 > seconds)
            tu_fail(file, line, "%s did not complete within %.0f s", what, seconds);
    }
}
#define WAIT_DEADLINE(req, st, seconds, what)                                  \
    tu_wait_deadline(__FILE__, __LINE__, (req), (st), (seconds), (what))

static inline void *tu_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        FAIL("out of memory allocating %zu bytes", n);
    return p;
}

/* An intercommunicator of two unequal groups of WORLD (size >= 2): A = the first
 * max(1, (size-1)/2) ranks, B = the rest, joined through their rank 0s with tag `tag`.
 * Sets *na (size of A), *in_b, and *half (the caller's group, to free with the result). */
static inline MPI_Comm tu_intercomm(int tag, int *na, int *in_b, MPI_Comm *half)
{
    int size;
    MPI_Comm ic;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    *na = (size - 1) / 2 > 1 ? (size - 1) / 2 : 1;
    *in_b = tu_rank >= *na;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, *in_b, tu_rank, half));
    MPI_OK(MPI_Intercomm_create(*half, 0, MPI_COMM_WORLD, *in_b ? 0 : *na, tag, &ic));
    return ic;
}

#endif
