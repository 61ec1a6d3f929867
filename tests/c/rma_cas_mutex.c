/* rma_cas_mutex: a spin mutex built on MPI_Compare_and_swap protects a critical section
 * made of plain, non-atomic MPI_Get / MPI_Put on another rank.
 *  - first, MPI_Compare_and_swap semantics on MPI_INT, MPI_LONG, MPI_UNSIGNED_LONG_LONG,
 *    MPI_INT64_T, MPI_SHORT and MPI_SIGNED_CHAR: a mismatching compare leaves the target
 *    alone and returns the current value, a matching one swaps and returns the old value;
 *    also with the compare and result arguments pointing at one variable;
 *  - the mutex word (MPI_INT) lives on rank 0: 0 = free, r + 1 = held by rank r.
 *    Acquire: MPI_Compare_and_swap(0 -> rank + 1) + MPI_Win_flush until it returns 0.
 *    Release: MPI_Fetch_and_op(0, MPI_REPLACE), which must return rank + 1;
 *  - the protected data are two longs {counter, inside} on the last rank. In the critical
 *    section: get both, they must read inside == 0; put inside = rank + 1; get again,
 *    inside must still be rank + 1; put counter + 1 and inside = 0; flush. Any overlap of
 *    two critical sections shows as inside != 0 on entry, a changed owner, or a lost
 *    increment;
 *  - the whole run is one MPI_Win_lock_all epoch; a second pass takes MPI_Win_lock
 *    (shared) per target for every step instead.
 * Final: counter == ITERS * size, inside == 0, mutex free. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <time.h>

static int rank, nprocs, ITERS;

enum { MUTEX = 0 };               /* the int at byte 0 of rank 0 */
enum { COUNTER = 1, INSIDE = 2 }; /* longs at bytes 8 and 16 of the last rank */

/* Put `val` (of `type`, `len` bytes) at byte displacement `disp` of our own window. */
static void put_self(MPI_Win win, const void *val, MPI_Datatype type, MPI_Aint disp)
{
    MPI_OK(MPI_Put(val, 1, type, rank, disp, 1, type, win));
    MPI_OK(MPI_Win_flush(rank, win));
}

static void get_self(MPI_Win win, void *val, MPI_Datatype type, MPI_Aint disp)
{
    MPI_OK(MPI_Get(val, 1, type, rank, disp, 1, type, win));
    MPI_OK(MPI_Win_flush(rank, win));
}

static void cas_self(MPI_Win win, const void *origin, const void *compare, void *result,
                     MPI_Datatype type, MPI_Aint disp)
{
    MPI_OK(MPI_Compare_and_swap(origin, compare, result, type, rank, disp, win));
    MPI_OK(MPI_Win_flush(rank, win));
}

/* MPI_Compare_and_swap on our own window's scratch slots (byte 24..63). */
static void cas_semantics(MPI_Win win)
{
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));

    int iinit = 7, ic = 5, iv = 9, ires = -1, iget = -1;
    long lget0 = 0;
    put_self(win, &iinit, MPI_INT, 24);
    cas_self(win, &iv, &ic, &ires, MPI_INT, 24);
    get_self(win, &iget, MPI_INT, 24);
    CHECK(ires == 7 && iget == 7, "CAS MPI_INT mismatch: returned %d, target %d; expected 7, 7",
          ires, iget);
    ic = 7;
    cas_self(win, &iv, &ic, &ires, MPI_INT, 24);
    get_self(win, &iget, MPI_INT, 24);
    CHECK(ires == 7 && iget == 9, "CAS MPI_INT match: returned %d, target %d; expected 7, 9",
          ires, iget);
    /* compare and result in one buffer (the expected value updated in place, as C11's
     * atomic_compare_exchange does): the compare is read before the old value lands */
    int expect = 9, nv = 11;
    cas_self(win, &nv, &expect, &expect, MPI_INT, 24);
    get_self(win, &iget, MPI_INT, 24);
    CHECK(expect == 9 && iget == 11, "CAS MPI_INT match, compare == result buffer: returned "
          "%d, target %d; expected 9, 11", expect, iget);
    expect = 5, nv = 13;
    cas_self(win, &nv, &expect, &expect, MPI_INT, 24);
    get_self(win, &iget, MPI_INT, 24);
    CHECK(expect == 11 && iget == 11, "CAS MPI_INT mismatch, compare == result buffer: "
          "returned %d, target %d; expected 11, 11", expect, iget);
    long lexpect = 11, lnv = -1;
    put_self(win, &lexpect, MPI_LONG, 32);
    lexpect = 12;
    cas_self(win, &lnv, &lexpect, &lexpect, MPI_LONG, 32);
    get_self(win, &lget0, MPI_LONG, 32);
    CHECK(lexpect == 11 && lget0 == 11, "CAS MPI_LONG mismatch, compare == result buffer: "
          "returned %ld, target %ld; expected 11, 11", lexpect, lget0);

    long linit = -7, lc = 5, lv = 1L << 40, lres = -1, lget = -1;
    put_self(win, &linit, MPI_LONG, 32);
    cas_self(win, &lv, &lc, &lres, MPI_LONG, 32);
    get_self(win, &lget, MPI_LONG, 32);
    CHECK(lres == -7 && lget == -7, "CAS MPI_LONG mismatch: returned %ld, target %ld; "
          "expected -7, -7", lres, lget);
    lc = -7;
    cas_self(win, &lv, &lc, &lres, MPI_LONG, 32);
    get_self(win, &lget, MPI_LONG, 32);
    CHECK(lres == -7 && lget == lv, "CAS MPI_LONG match: returned %ld, target %ld; "
          "expected -7, %ld", lres, lget, lv);

    /* the compare is on all 64 bits: a value equal in its low half does not match */
    unsigned long long uinit = 0xFFFFFFFF00000001ULL, uc = 0x0000000000000001ULL,
                       uv = 0x8000000000000000ULL, ures = 0, uget = 0;
    put_self(win, &uinit, MPI_UNSIGNED_LONG_LONG, 40);
    cas_self(win, &uv, &uc, &ures, MPI_UNSIGNED_LONG_LONG, 40);
    get_self(win, &uget, MPI_UNSIGNED_LONG_LONG, 40);
    CHECK(ures == uinit && uget == uinit, "CAS MPI_UNSIGNED_LONG_LONG mismatch: returned %llx, "
          "target %llx; expected %llx twice", ures, uget, uinit);
    uc = uinit;
    cas_self(win, &uv, &uc, &ures, MPI_UNSIGNED_LONG_LONG, 40);
    get_self(win, &uget, MPI_UNSIGNED_LONG_LONG, 40);
    CHECK(ures == uinit && uget == uv, "CAS MPI_UNSIGNED_LONG_LONG match: returned %llx, "
          "target %llx; expected %llx, %llx", ures, uget, uinit, uv);

    int64_t qinit = -4, qc = -3, qv = INT64_MIN, qres = 0, qget = 0;
    put_self(win, &qinit, MPI_INT64_T, 48);
    cas_self(win, &qv, &qc, &qres, MPI_INT64_T, 48);
    get_self(win, &qget, MPI_INT64_T, 48);
    CHECK(qres == -4 && qget == -4, "CAS MPI_INT64_T mismatch: returned %lld, target %lld",
          (long long)qres, (long long)qget);
    qc = -4;
    cas_self(win, &qv, &qc, &qres, MPI_INT64_T, 48);
    get_self(win, &qget, MPI_INT64_T, 48);
    CHECK(qres == -4 && qget == INT64_MIN, "CAS MPI_INT64_T match: returned %lld, target %lld",
          (long long)qres, (long long)qget);

    /* 2- and 1-byte types (not the 4- and 8-byte typed path); the neighbouring bytes of
     * the slot must survive */
    short sinit[2] = {-300, 1234}, sc = -299, sv = 77, sres = 0, sget[2] = {0, 0};
    put_self(win, sinit, MPI_SHORT, 56);
    put_self(win, &sinit[1], MPI_SHORT, 58);
    cas_self(win, &sv, &sc, &sres, MPI_SHORT, 56);
    get_self(win, &sget[0], MPI_SHORT, 56);
    CHECK(sres == -300 && sget[0] == -300, "CAS MPI_SHORT mismatch: returned %d, target %d",
          sres, sget[0]);
    sc = -300;
    cas_self(win, &sv, &sc, &sres, MPI_SHORT, 56);
    get_self(win, &sget[0], MPI_SHORT, 56);
    get_self(win, &sget[1], MPI_SHORT, 58);
    CHECK(sres == -300 && sget[0] == 77 && sget[1] == 1234,
          "CAS MPI_SHORT match: returned %d, target %d, next %d; expected -300, 77, 1234", sres,
          sget[0], sget[1]);
    signed char binit = -5, bc = -5, bv = 100, bres = 0, bget = 0;
    put_self(win, &binit, MPI_SIGNED_CHAR, 60);
    cas_self(win, &bv, &bc, &bres, MPI_SIGNED_CHAR, 60);
    get_self(win, &bget, MPI_SIGNED_CHAR, 60);
    CHECK(bres == -5 && bget == 100, "CAS MPI_SIGNED_CHAR match: returned %d, target %d", bres,
          bget);

    MPI_OK(MPI_Win_unlock(rank, win));
}

/* lock_each: take a shared lock on the target around every step (else lock_all is held) */
static void lk(MPI_Win win, int t, int lock_each)
{
    if (lock_each)
        MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
}
static void unlk(MPI_Win win, int t, int lock_each)
{
    if (lock_each)
        MPI_OK(MPI_Win_unlock(t, win));
    else
        MPI_OK(MPI_Win_flush(t, win));
}

static void backoff(long spins)
{
    long us = spins < 5 ? 0 : spins < 10 ? 20 : 100;
    if (us) {
        struct timespec ts = {0, us * 1000L};
        nanosleep(&ts, NULL);
    }
}

static long acquire(MPI_Win win, int lock_each)
{
    int want = rank + 1, zero = 0, old = -1;
    long spins = 0;
    double t0 = MPI_Wtime();
    for (;;) {
        lk(win, 0, lock_each);
        MPI_OK(MPI_Compare_and_swap(&want, &zero, &old, MPI_INT, 0, MUTEX, win));
        unlk(win, 0, lock_each);
        if (old == 0)
            return spins;
        CHECK(old >= 1 && old <= nprocs, "mutex word holds %d: not 0 or an owner 1..%d", old,
              nprocs);
        CHECK(old != want, "mutex already held by myself");
        spins++;
        /* back off (bounded, growing to 100 us) so that the holder gets a core when the
         * job is oversubscribed */
        backoff(spins);
        if (MPI_Wtime() - t0 > 60.0)
            FAIL("could not acquire the mutex within 60 s (held by rank %d)", old - 1);
    }
}

static void release(MPI_Win win, int lock_each)
{
    int zero = 0, old = -1;
    lk(win, 0, lock_each);
    MPI_OK(MPI_Fetch_and_op(&zero, &old, MPI_INT, 0, MUTEX, MPI_REPLACE, win));
    unlk(win, 0, lock_each);
    CHECK(old == rank + 1, "release: mutex word was %d, expected %d (mine)", old, rank + 1);
}

static void critical(MPI_Win win, int lock_each, int iter)
{
    int t = nprocs - 1;
    long v[2] = {-1, -1};
    lk(win, t, lock_each);
    MPI_OK(MPI_Get(v, 2, MPI_LONG, t, COUNTER * 8, 2, MPI_LONG, win));
    unlk(win, t, lock_each);
    CHECK(v[1] == 0, "iteration %d: entered the critical section while rank %ld is inside",
          iter, v[1] - 1);
    CHECK(v[0] >= 0 && v[0] < (long)ITERS * nprocs * 2, "counter reads %ld", v[0]);
    long me = rank + 1;
    lk(win, t, lock_each);
    MPI_OK(MPI_Put(&me, 1, MPI_LONG, t, INSIDE * 8, 1, MPI_LONG, win));
    unlk(win, t, lock_each);
    long w[2] = {-1, -1};
    lk(win, t, lock_each);
    MPI_OK(MPI_Get(w, 2, MPI_LONG, t, COUNTER * 8, 2, MPI_LONG, win));
    unlk(win, t, lock_each);
    CHECK(w[1] == me && w[0] == v[0],
          "iteration %d: inside the critical section {counter, inside} changed from {%ld, %ld} "
          "to {%ld, %ld}", iter, v[0], me, w[0], w[1]);
    long nv[2] = {v[0] + 1, 0};
    lk(win, t, lock_each);
    MPI_OK(MPI_Put(nv, 2, MPI_LONG, t, COUNTER * 8, 2, MPI_LONG, win));
    unlk(win, t, lock_each); /* remote completion before the release */
}

static void run_pass(MPI_Win win, long *base, int lock_each, long expect)
{
    if (!lock_each)
        MPI_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ITERS; i++) {
        acquire(win, lock_each);
        critical(win, lock_each, i);
        release(win, lock_each);
    }
    if (!lock_each)
        MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    if (rank == nprocs - 1) {
        volatile long *l = (volatile long *)base;
        CHECK(l[COUNTER] == expect && l[INSIDE] == 0,
              "%s: {counter, inside} = {%ld, %ld}, expected {%ld, 0}",
              lock_each ? "MPI_Win_lock per step" : "MPI_Win_lock_all", l[COUNTER], l[INSIDE],
              expect);
    }
    if (rank == 0)
        CHECK(((volatile int *)base)[MUTEX] == 0, "mutex not free at the end: %d",
              ((volatile int *)base)[MUTEX]);
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    /* small defaults: every lock round trip costs a time slice when oversubscribed */
    ITERS = argc > 1 ? atoi(argv[1]) : (nprocs <= 2 ? 50 : nprocs <= 4 ? 5 : 1);
    CHECK(ITERS > 0, "usage: rma_cas_mutex [iterations]");

    /* 8 slots of 8 bytes, byte displacements: the mutex int at 0 (rank 0), the counter
     * and inside flag at 8 and 16 (last rank), scratch for CAS semantics at 24.. */
    void *base = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    memset(base, 0, 64);
    MPI_OK(MPI_Win_unlock(rank, win));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    cas_semantics(win);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    run_pass(win, base, 0, (long)ITERS * nprocs);
    run_pass(win, base, 1, 2L * ITERS * nprocs);

    MPI_OK(MPI_Win_free(&win));
    if (rank == 0)
        printf("rma_cas_mutex: OK (%d ranks, %d iterations each pass)\n", nprocs, ITERS);
    MPI_Finalize();
    return 0;
}
