/* MPI-4.0 large-count (_c) functions of point-to-point, datatypes, pack/unpack, status
 * queries, the buffered-send buffer and user ops: every call checked against the values
 * the int forms give, plus types, statuses and sizes beyond INT_MAX (without allocating
 * them). With argument "big" (run at 2 ranks), rank 0 also sends rank 1 a real message of
 * more than INT_MAX bytes with MPI_Send_c. Runs at any rank count: messages go round a ring.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>

static int rank, size, right, left;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "rank %d, line %d: ", rank, __LINE__);                         \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fprintf(stderr, "\n");                                                         \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                  \
        }                                                                                  \
    } while (0)

#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

static int err_class(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

#define N 1000

static void fill(int *b, int seed)
{
    for (int i = 0; i < N; i++)
        b[i] = seed * 100000 + i;
}

/* The message from `left` arrived whole: values and the counts of its status. */
static void check_recv(const int *b, MPI_Status *st, const char *what)
{
    for (int i = 0; i < N; i++)
        CHECK(b[i] == left * 100000 + i, "%s: item %d is %d", what, i, b[i]);
    if (st != MPI_STATUS_IGNORE) {
        MPI_Count c = -1, e = -1;
        int ci = -1;
        OK(MPI_Get_count_c(st, MPI_INT, &c));
        OK(MPI_Get_elements_c(st, MPI_INT, &e));
        OK(MPI_Get_count(st, MPI_INT, &ci));
        CHECK(c == N && e == N && ci == N, "%s: counts %lld %lld %d", what, (long long) c, (long long) e, ci);
        CHECK(st->MPI_SOURCE == left, "%s: source %d", what, st->MPI_SOURCE);
    }
}

static void pt2pt(void)
{
    int sbuf[N], rbuf[N];
    MPI_Request r[2];
    MPI_Status st;
    MPI_Count n = N;
    fill(sbuf, rank);

    /* Blocking send modes against a posted MPI_Irecv_c. */
    for (int mode = 0; mode < 4; mode++) {
        memset(rbuf, 0, sizeof rbuf);
        OK(MPI_Irecv_c(rbuf, n, MPI_INT, left, mode, MPI_COMM_WORLD, &r[0]));
        MPI_Barrier(MPI_COMM_WORLD); /* every receive posted: MPI_Rsend_c is legal */
        if (mode == 0)
            OK(MPI_Send_c(sbuf, n, MPI_INT, right, mode, MPI_COMM_WORLD));
        else if (mode == 1)
            OK(MPI_Ssend_c(sbuf, n, MPI_INT, right, mode, MPI_COMM_WORLD));
        else if (mode == 2)
            OK(MPI_Rsend_c(sbuf, n, MPI_INT, right, mode, MPI_COMM_WORLD));
        else {
            MPI_Count bsize = sizeof sbuf + MPI_BSEND_OVERHEAD;
            char *bbuf = malloc(bsize);
            OK(MPI_Buffer_attach_c(bbuf, bsize));
            OK(MPI_Bsend_c(sbuf, n, MPI_INT, right, mode, MPI_COMM_WORLD));
            OK(MPI_Wait(&r[0], &st));
            void *back;
            MPI_Count bback = 0;
            OK(MPI_Buffer_detach_c(&back, &bback));
            CHECK(back == bbuf && bback == bsize, "Buffer_detach_c gave %p %lld", back, (long long) bback);
            free(bbuf);
            check_recv(rbuf, &st, "Bsend_c");
            continue;
        }
        OK(MPI_Wait(&r[0], &st));
        check_recv(rbuf, &st, "blocking send _c");
    }

    /* Nonblocking send modes against MPI_Recv_c. */
    for (int mode = 0; mode < 4; mode++) {
        char *bbuf = NULL;
        memset(rbuf, 0, sizeof rbuf);
        if (mode == 2) {
            OK(MPI_Irecv_c(rbuf, n, MPI_INT, left, 10, MPI_COMM_WORLD, &r[1]));
            MPI_Barrier(MPI_COMM_WORLD);
        }
        if (mode == 0)
            OK(MPI_Isend_c(sbuf, n, MPI_INT, right, 10, MPI_COMM_WORLD, &r[0]));
        else if (mode == 1)
            OK(MPI_Issend_c(sbuf, n, MPI_INT, right, 10, MPI_COMM_WORLD, &r[0]));
        else if (mode == 2)
            OK(MPI_Irsend_c(sbuf, n, MPI_INT, right, 10, MPI_COMM_WORLD, &r[0]));
        else {
            bbuf = malloc(sizeof sbuf + MPI_BSEND_OVERHEAD);
            OK(MPI_Buffer_attach_c(bbuf, sizeof sbuf + MPI_BSEND_OVERHEAD));
            OK(MPI_Ibsend_c(sbuf, n, MPI_INT, right, 10, MPI_COMM_WORLD, &r[0]));
        }
        if (mode == 2)
            OK(MPI_Wait(&r[1], &st));
        else
            OK(MPI_Recv_c(rbuf, n, MPI_INT, left, 10, MPI_COMM_WORLD, &st));
        OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        check_recv(rbuf, &st, "nonblocking send _c");
        if (bbuf) {
            void *back;
            int bback;
            OK(MPI_Buffer_detach(&back, &bback));
            CHECK(back == bbuf && bback == (int) (sizeof sbuf + MPI_BSEND_OVERHEAD), "Buffer_detach gave %d", bback);
            free(bbuf);
        }
    }

    /* Persistent requests, each started twice. */
    char *bbuf = malloc(sizeof sbuf + MPI_BSEND_OVERHEAD);
    OK(MPI_Buffer_attach_c(bbuf, sizeof sbuf + MPI_BSEND_OVERHEAD));
    for (int mode = 0; mode < 4; mode++) {
        if (mode == 0)
            OK(MPI_Send_init_c(sbuf, n, MPI_INT, right, 20, MPI_COMM_WORLD, &r[0]));
        else if (mode == 1)
            OK(MPI_Ssend_init_c(sbuf, n, MPI_INT, right, 20, MPI_COMM_WORLD, &r[0]));
        else if (mode == 2)
            OK(MPI_Rsend_init_c(sbuf, n, MPI_INT, right, 20, MPI_COMM_WORLD, &r[0]));
        else
            OK(MPI_Bsend_init_c(sbuf, n, MPI_INT, right, 20, MPI_COMM_WORLD, &r[0]));
        OK(MPI_Recv_init_c(rbuf, n, MPI_INT, left, 20, MPI_COMM_WORLD, &r[1]));
        for (int round = 0; round < 2; round++) {
            memset(rbuf, 0, sizeof rbuf);
            OK(MPI_Start(&r[1]));
            MPI_Barrier(MPI_COMM_WORLD);
            OK(MPI_Start(&r[0]));
            MPI_Status sts[2];
            OK(MPI_Waitall(2, r, sts));
            check_recv(rbuf, &sts[1], "persistent _c");
        }
        OK(MPI_Request_free(&r[0]));
        OK(MPI_Request_free(&r[1]));
    }
    void *back;
    MPI_Count bback;
    OK(MPI_Buffer_detach_c(&back, &bback));
    free(bbuf);

    /* Sendrecv and its nonblocking and replace forms. */
    memset(rbuf, 0, sizeof rbuf);
    OK(MPI_Sendrecv_c(sbuf, n, MPI_INT, right, 30, rbuf, n, MPI_INT, left, 30, MPI_COMM_WORLD, &st));
    check_recv(rbuf, &st, "Sendrecv_c");
    memset(rbuf, 0, sizeof rbuf);
    OK(MPI_Isendrecv_c(sbuf, n, MPI_INT, right, 31, rbuf, n, MPI_INT, left, 31, MPI_COMM_WORLD, &r[0]));
    OK(MPI_Wait(&r[0], &st));
    check_recv(rbuf, &st, "Isendrecv_c");
    memcpy(rbuf, sbuf, sizeof rbuf);
    OK(MPI_Sendrecv_replace_c(rbuf, n, MPI_INT, right, 32, left, 32, MPI_COMM_WORLD, &st));
    check_recv(rbuf, &st, "Sendrecv_replace_c");
    memcpy(rbuf, sbuf, sizeof rbuf);
    OK(MPI_Isendrecv_replace_c(rbuf, n, MPI_INT, right, 33, left, 33, MPI_COMM_WORLD, &r[0]));
    OK(MPI_Wait(&r[0], &st));
    check_recv(rbuf, &st, "Isendrecv_replace_c");

    /* Matched receives. */
    MPI_Message msg;
    memset(rbuf, 0, sizeof rbuf);
    OK(MPI_Isend_c(sbuf, n, MPI_INT, right, 40, MPI_COMM_WORLD, &r[0]));
    OK(MPI_Mprobe(left, 40, MPI_COMM_WORLD, &msg, &st));
    OK(MPI_Mrecv_c(rbuf, n, MPI_INT, &msg, &st));
    OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    check_recv(rbuf, &st, "Mrecv_c");
    memset(rbuf, 0, sizeof rbuf);
    OK(MPI_Isend_c(sbuf, n, MPI_INT, right, 41, MPI_COMM_WORLD, &r[0]));
    OK(MPI_Mprobe(left, 41, MPI_COMM_WORLD, &msg, &st));
    OK(MPI_Imrecv_c(rbuf, n, MPI_INT, &msg, &r[1]));
    OK(MPI_Wait(&r[1], &st));
    OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    check_recv(rbuf, &st, "Imrecv_c");

    /* A derived type made with a _c constructor: every other int of 2*N. */
    int wide[2 * N];
    MPI_Datatype vec;
    OK(MPI_Type_vector_c(N, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    for (int i = 0; i < 2 * N; i++)
        wide[i] = (i % 2) ? -1 : rank * 100000 + i / 2;
    memset(rbuf, 0, sizeof rbuf);
    OK(MPI_Sendrecv_c(wide, 1, vec, right, 50, rbuf, n, MPI_INT, left, 50, MPI_COMM_WORLD, &st));
    check_recv(rbuf, &st, "vector_c send");
    MPI_Count c;
    OK(MPI_Get_count_c(&st, vec, &c));
    CHECK(c == 1, "Get_count_c of one vector: %lld", (long long) c);
    OK(MPI_Type_free(&vec));

    /* Argument errors. */
    int rc = MPI_Send_c(sbuf, -1, MPI_INT, right, 0, MPI_COMM_WORLD);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Send_c with count -1: class %d", err_class(rc));
}

/* Envelope and contents of `t` must be (ni, na, nc, nd, combiner) with the given values. */
static void check_decode(MPI_Datatype t, int combiner, int ni, const int *ints, int na, const MPI_Aint *addrs, int nc, const MPI_Count *large, int nd)
{
    MPI_Count ci, ca, cc, cd;
    int comb;
    OK(MPI_Type_get_envelope_c(t, &ci, &ca, &cc, &cd, &comb));
    CHECK(comb == combiner && ci == ni && ca == na && cc == nc && cd == nd, "envelope_c: combiner %d (want %d), %lld %lld %lld %lld (want %d %d %d %d)", comb, combiner,
          (long long) ci, (long long) ca, (long long) cc, (long long) cd, ni, na, nc, nd);
    int gi[16];
    MPI_Aint ga[16];
    MPI_Count gc[16];
    MPI_Datatype gd[4];
    OK(MPI_Type_get_contents_c(t, 16, 16, 16, 4, gi, ga, gc, gd));
    for (int i = 0; i < ni; i++)
        CHECK(gi[i] == ints[i], "contents_c integer %d: %d, want %d", i, gi[i], ints[i]);
    for (int i = 0; i < na; i++)
        CHECK(ga[i] == addrs[i], "contents_c address %d: %ld, want %ld", i, (long) ga[i], (long) addrs[i]);
    for (int i = 0; i < nc; i++)
        CHECK(gc[i] == large[i], "contents_c large count %d: %lld, want %lld", i, (long long) gc[i], (long long) large[i]);
    for (int i = 0; i < nd; i++) {
        int ni2, na2, nd2, c2;
        MPI_Type_get_envelope(gd[i], &ni2, &na2, &nd2, &c2);
        if (c2 != MPI_COMBINER_NAMED)
            MPI_Type_free(&gd[i]);
    }
    if (nc > 0) {
        /* The int forms cannot return large counts. */
        int a, b, d, e;
        int rc = MPI_Type_get_envelope(t, &a, &b, &d, &e);
        CHECK(err_class(rc) == MPI_ERR_TYPE, "int get_envelope of a _c type: class %d", err_class(rc));
        rc = MPI_Type_get_contents(t, 16, 16, 4, gi, ga, gd);
        CHECK(err_class(rc) == MPI_ERR_TYPE, "int get_contents of a _c type: class %d", err_class(rc));
    }
}

/* Size, extent and true extent of `t`, in the _c and int forms. */
static void check_bounds(MPI_Datatype t, MPI_Count sz, MPI_Count lb, MPI_Count ext, MPI_Count tlb, MPI_Count text)
{
    MPI_Count s, l, e;
    OK(MPI_Type_size_c(t, &s));
    CHECK(s == sz, "Type_size_c %lld, want %lld", (long long) s, (long long) sz);
    int si;
    OK(MPI_Type_size(t, &si));
    CHECK(si == (sz > INT_MAX ? MPI_UNDEFINED : (int) sz), "Type_size %d for size %lld", si, (long long) sz);
    OK(MPI_Type_get_extent_c(t, &l, &e));
    CHECK(l == lb && e == ext, "Type_get_extent_c %lld %lld, want %lld %lld", (long long) l, (long long) e, (long long) lb, (long long) ext);
    MPI_Aint la, ea;
    OK(MPI_Type_get_extent(t, &la, &ea));
    CHECK(la == lb && ea == ext, "Type_get_extent %ld %ld", (long) la, (long) ea);
    OK(MPI_Type_get_true_extent_c(t, &l, &e));
    CHECK(l == tlb && e == text, "Type_get_true_extent_c %lld %lld, want %lld %lld", (long long) l, (long long) e, (long long) tlb, (long long) text);
}

static void datatypes(void)
{
    MPI_Datatype t, u;
    const MPI_Count big = 5000000000LL; /* > INT_MAX */

    OK(MPI_Type_contiguous_c(3, MPI_INT, &t));
    check_bounds(t, 12, 0, 12, 0, 12);
    check_decode(t, MPI_COMBINER_CONTIGUOUS, 0, NULL, 0, NULL, 1, (MPI_Count[]) {3}, 1);
    MPI_Type_free(&t);
    /* An int constructor's type reports integers, also through the _c decoders. */
    OK(MPI_Type_contiguous(3, MPI_INT, &t));
    check_decode(t, MPI_COMBINER_CONTIGUOUS, 1, (int[]) {3}, 0, NULL, 0, NULL, 1);
    MPI_Type_free(&t);

    OK(MPI_Type_vector_c(2, 3, 5, MPI_INT, &t));
    check_bounds(t, 24, 0, 32, 0, 32);
    check_decode(t, MPI_COMBINER_VECTOR, 0, NULL, 0, NULL, 3, (MPI_Count[]) {2, 3, 5}, 1);
    MPI_Type_free(&t);

    OK(MPI_Type_create_hvector_c(2, 3, 40, MPI_INT, &t));
    check_bounds(t, 24, 0, 52, 0, 52);
    check_decode(t, MPI_COMBINER_HVECTOR, 0, NULL, 0, NULL, 3, (MPI_Count[]) {2, 3, 40}, 1);
    MPI_Type_free(&t);

    OK(MPI_Type_indexed_c(2, (MPI_Count[]) {1, 2}, (MPI_Count[]) {4, 0}, MPI_INT, &t));
    check_bounds(t, 12, 0, 20, 0, 20);
    check_decode(t, MPI_COMBINER_INDEXED, 0, NULL, 0, NULL, 5, (MPI_Count[]) {2, 1, 2, 4, 0}, 1);
    MPI_Type_free(&t);

    OK(MPI_Type_create_hindexed_c(2, (MPI_Count[]) {1, 2}, (MPI_Count[]) {16, 0}, MPI_INT, &t));
    check_bounds(t, 12, 0, 20, 0, 20);
    check_decode(t, MPI_COMBINER_HINDEXED, 0, NULL, 0, NULL, 5, (MPI_Count[]) {2, 1, 2, 16, 0}, 1);
    MPI_Type_free(&t);

    OK(MPI_Type_create_indexed_block_c(2, 2, (MPI_Count[]) {3, 0}, MPI_INT, &t));
    check_bounds(t, 16, 0, 20, 0, 20);
    check_decode(t, MPI_COMBINER_INDEXED_BLOCK, 0, NULL, 0, NULL, 4, (MPI_Count[]) {2, 2, 3, 0}, 1);
    MPI_Type_free(&t);

    OK(MPI_Type_create_hindexed_block_c(2, 2, (MPI_Count[]) {0, 16}, MPI_INT, &t));
    check_bounds(t, 16, 0, 24, 0, 24);
    check_decode(t, MPI_COMBINER_HINDEXED_BLOCK, 0, NULL, 0, NULL, 4, (MPI_Count[]) {2, 2, 0, 16}, 1);
    MPI_Type_free(&t);

    OK(MPI_Type_create_struct_c(2, (MPI_Count[]) {1, 2}, (MPI_Count[]) {0, 8}, (MPI_Datatype[]) {MPI_INT, MPI_DOUBLE}, &t));
    check_bounds(t, 20, 0, 24, 0, 24);
    check_decode(t, MPI_COMBINER_STRUCT, 0, NULL, 0, NULL, 5, (MPI_Count[]) {2, 1, 2, 0, 8}, 2);
    MPI_Type_free(&t);

    OK(MPI_Type_create_subarray_c(2, (MPI_Count[]) {4, 5}, (MPI_Count[]) {2, 3}, (MPI_Count[]) {1, 1}, MPI_ORDER_C, MPI_INT, &t));
    check_bounds(t, 24, 0, 80, 24, 32);
    check_decode(t, MPI_COMBINER_SUBARRAY, 2, (int[]) {2, MPI_ORDER_C}, 0, NULL, 6, (MPI_Count[]) {4, 5, 2, 3, 1, 1}, 1);
    MPI_Type_free(&t);

    OK(MPI_Type_create_darray_c(1, 0, 2, (MPI_Count[]) {8, 8}, (int[]) {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, (int[]) {MPI_DISTRIBUTE_DFLT_DARG, 2}, (int[]) {1, 1}, MPI_ORDER_C, MPI_INT, &t));
    check_bounds(t, 256, 0, 256, 0, 256);
    check_decode(t, MPI_COMBINER_DARRAY, 10,
                 (int[]) {1, 0, 2, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_DFLT_DARG, 2, 1, 1, MPI_ORDER_C}, 0, NULL, 2, (MPI_Count[]) {8, 8}, 1);
    MPI_Type_free(&t);

    OK(MPI_Type_create_resized_c(MPI_INT, -4, 16, &t));
    check_bounds(t, 4, -4, 16, 0, 4);
    check_decode(t, MPI_COMBINER_RESIZED, 0, NULL, 0, NULL, 2, (MPI_Count[]) {-4, 16}, 1);
    MPI_Type_free(&t);

    /* Beyond INT_MAX, never allocated: 5e9 bytes, and 3 blocks of 2^31 bytes 2^32 apart. */
    OK(MPI_Type_contiguous_c(big, MPI_CHAR, &t));
    OK(MPI_Type_commit(&t));
    check_bounds(t, big, 0, big, 0, big);
    check_decode(t, MPI_COMBINER_CONTIGUOUS, 0, NULL, 0, NULL, 1, (MPI_Count[]) {big}, 1);
    MPI_Count ps;
    int psi;
    OK(MPI_Pack_size_c(1, t, MPI_COMM_WORLD, &ps));
    CHECK(ps == big, "Pack_size_c %lld", (long long) ps);
    int rc = MPI_Pack_size(1, t, MPI_COMM_WORLD, &psi);
    CHECK(err_class(rc) == MPI_ERR_VALUE_TOO_LARGE, "int Pack_size of 5e9 bytes: class %d", err_class(rc));
    OK(MPI_Pack_external_size_c("external32", 2, t, &ps));
    CHECK(ps == 2 * big, "Pack_external_size_c %lld", (long long) ps);
    MPI_Status st;
    OK(MPI_Status_set_elements_x(&st, MPI_CHAR, 2 * big));
    MPI_Count c;
    int ci;
    OK(MPI_Get_count_c(&st, t, &c));
    CHECK(c == 2, "Get_count_c of 1e10 bytes in 5e9-byte items: %lld", (long long) c);
    OK(MPI_Get_count(&st, t, &ci));
    CHECK(ci == 2, "Get_count: %d", ci);
    OK(MPI_Get_elements_c(&st, t, &c));
    CHECK(c == 2 * big, "Get_elements_c: %lld", (long long) c);
    OK(MPI_Get_elements(&st, t, &ci));
    CHECK(ci == MPI_UNDEFINED, "Get_elements beyond INT_MAX: %d", ci);
    OK(MPI_Get_count_c(&st, MPI_CHAR, &c));
    CHECK(c == 2 * big, "Get_count_c chars: %lld", (long long) c);
    OK(MPI_Get_count(&st, MPI_CHAR, &ci));
    CHECK(ci == MPI_UNDEFINED, "Get_count beyond INT_MAX: %d", ci);
    /* 2^61+2 doubles: the byte count wraps 2^64, so the status cannot hold it (a wrapped
     * product read back as 2 elements); the status keeps its previous count. */
    rc = MPI_Status_set_elements_x(&st, MPI_DOUBLE, ((MPI_Count)1 << 61) + 2);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Status_set_elements_x of 2^61+2 doubles: class %d", err_class(rc));
    OK(MPI_Get_count_c(&st, MPI_CHAR, &c));
    CHECK(c == 2 * big, "Get_count_c after a refused Status_set_elements_x: %lld", (long long) c);
    MPI_Type_free(&t);
    /* A buffer of 3e9 bytes (malloc maps it lazily; only what MPI touches gets memory):
     * the int detach cannot report its size and leaves it attached; the _c detach can. */
    char *token = malloc(3000000000LL);
    CHECK(token != NULL, "no address space for 3e9 bytes");
    OK(MPI_Buffer_attach_c(token, 3000000000LL));
    void *back;
    int bsi;
    rc = MPI_Buffer_detach(&back, &bsi);
    CHECK(err_class(rc) == MPI_ERR_VALUE_TOO_LARGE, "int Buffer_detach of 3e9 bytes: class %d", err_class(rc));
    MPI_Count bs;
    OK(MPI_Buffer_detach_c(&back, &bs));
    CHECK(back == token && bs == 3000000000LL, "Buffer_detach_c: %p %lld", back, (long long) bs);
    free(token);
    const MPI_Count g = (MPI_Count) 1 << 31;
    OK(MPI_Type_vector_c(3, g, 2 * g, MPI_BYTE, &u));
    check_bounds(u, 3 * g, 0, 5 * g, 0, 5 * g);
    MPI_Type_free(&u);
}

static void pack(void)
{
    int src[2 * N], dst[2 * N];
    MPI_Datatype vec;
    OK(MPI_Type_vector_c(N, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    for (int i = 0; i < 2 * N; i++)
        src[i] = i;
    MPI_Count need;
    OK(MPI_Pack_size_c(2, MPI_INT, MPI_COMM_WORLD, &need));
    CHECK(need == 8, "Pack_size_c of 2 ints: %lld", (long long) need);
    OK(MPI_Pack_size_c(1, vec, MPI_COMM_WORLD, &need));
    char *buf = malloc(need + 8);
    MPI_Count pos = 0;
    OK(MPI_Pack_c(src, 1, vec, buf, need + 8, &pos, MPI_COMM_WORLD));
    OK(MPI_Pack_c(src, 2, MPI_INT, buf, need + 8, &pos, MPI_COMM_WORLD));
    CHECK(pos == need + 8, "Pack_c position %lld", (long long) pos);
    memset(dst, 0, sizeof dst);
    pos = 0;
    OK(MPI_Unpack_c(buf, need + 8, &pos, dst, N, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Unpack_c(buf, need + 8, &pos, dst + N, 2, MPI_INT, MPI_COMM_WORLD));
    CHECK(pos == need + 8, "Unpack_c position %lld", (long long) pos);
    for (int i = 0; i < N; i++)
        CHECK(dst[i] == 2 * i, "Unpack_c item %d: %d", i, dst[i]);
    CHECK(dst[N] == 0 && dst[N + 1] == 1, "Unpack_c tail %d %d", dst[N], dst[N + 1]);
    pos = 0;
    int rc = MPI_Pack_c(src, 2, vec, buf, need + 8, &pos, MPI_COMM_WORLD);
    CHECK(err_class(rc) == MPI_ERR_TRUNCATE, "Pack_c past the end: class %d", err_class(rc));
    free(buf);

    /* external32: big-endian ints. */
    MPI_Count xs;
    OK(MPI_Pack_external_size_c("external32", 1, vec, &xs));
    CHECK(xs == 4 * N, "Pack_external_size_c %lld", (long long) xs);
    unsigned char *xb = malloc(xs);
    pos = 0;
    OK(MPI_Pack_external_c("external32", src, 1, vec, xb, xs, &pos));
    CHECK(pos == xs, "Pack_external_c position %lld", (long long) pos);
    CHECK(xb[4 * 3 + 3] == 6 && xb[4 * 3] == 0, "external32 is not big-endian");
    memset(dst, 0, sizeof dst);
    pos = 0;
    OK(MPI_Unpack_external_c("external32", xb, xs, &pos, dst, 1, vec));
    for (int i = 0; i < N; i++)
        CHECK(dst[2 * i] == 2 * i && dst[2 * i + 1] == 0, "Unpack_external_c item %d: %d", i, dst[2 * i]);
    free(xb);
    MPI_Type_free(&vec);
}

/* A large-count user op: composition of affine maps x -> m*x + c, each a pair of ints
 * (m, c): associative, not commutative. b = a o b. */
static MPI_Count calls_len;
static void compose(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    if (*dt != MPI_INT || *len % 2)
        MPI_Abort(MPI_COMM_WORLD, 2);
    calls_len += *len;
    for (MPI_Count i = 0; i < *len; i += 2) {
        b[i + 1] = a[i] * b[i + 1] + a[i + 1];
        b[i] = a[i] * b[i];
    }
}

static void user_ops(void)
{
    MPI_Op op;
    OK(MPI_Op_create_c(compose, 0, &op));
    int a[4] = {2, 1, 3, 4}, b[4] = {5, 6, 7, 8};
    calls_len = 0;
    OK(MPI_Reduce_local_c(a, b, 4, MPI_INT, op));
    CHECK(b[0] == 10 && b[1] == 13 && b[2] == 21 && b[3] == 28 && calls_len == 4, "Reduce_local_c: %d %d %d %d", b[0], b[1], b[2], b[3]);
    /* Predefined ops through Reduce_local_c. */
    OK(MPI_Reduce_local_c(a, b, 4, MPI_INT, MPI_SUM));
    CHECK(b[0] == 12 && b[3] == 32, "Reduce_local_c MPI_SUM: %d %d", b[0], b[3]);
    /* A count whose byte size wraps around 2^64 is MPI_ERR_COUNT (it ran the kernel past
     * the buffers once), with a basic and with a derived type; b is untouched. */
    const MPI_Count wrap = ((MPI_Count)1 << 62) + 1;
    MPI_Datatype two;
    OK(MPI_Type_contiguous(2, MPI_INT, &two));
    OK(MPI_Type_commit(&two));
    int rc = MPI_Reduce_local_c(a, b, wrap, MPI_INT, MPI_SUM);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Reduce_local_c of 2^62+1 ints: class %d", err_class(rc));
    rc = MPI_Reduce_local_c(a, b, wrap, two, MPI_SUM);
    CHECK(err_class(rc) == MPI_ERR_COUNT, "Reduce_local_c of 2^62+1 pairs of ints: class %d", err_class(rc));
    CHECK(b[0] == 12 && b[3] == 32, "Reduce_local_c with a wrapping count changed the buffer: %d %d", b[0], b[3]);
    OK(MPI_Type_free(&two));

    /* In collectives, folded in rank order: v0 o (v1 o (... o v(n-1))). */
    int v[4], out[4], expect[4];
    for (int i = 0; i < 2; i++) {
        v[2 * i] = 1 + (rank + i) % 2;
        v[2 * i + 1] = rank + i;
    }
    for (int i = 0; i < 2; i++) {
        int m = 1 + (size - 1 + i) % 2, c = size - 1 + i;
        for (int r = size - 2; r >= 0; r--) {
            int rm = 1 + (r + i) % 2, rc = r + i;
            c = rm * c + rc;
            m = rm * m;
        }
        expect[2 * i] = m;
        expect[2 * i + 1] = c;
    }
    OK(MPI_Allreduce(v, out, 4, MPI_INT, op, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        CHECK(out[i] == expect[i], "Allreduce with a _c op: item %d is %d, want %d", i, out[i], expect[i]);
    MPI_Request r;
    memset(out, 0, sizeof out);
    OK(MPI_Ireduce(v, out, 4, MPI_INT, op, 0, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    if (rank == 0)
        for (int i = 0; i < 4; i++)
            CHECK(out[i] == expect[i], "Ireduce with a _c op: item %d is %d, want %d", i, out[i], expect[i]);
    int comm_flag;
    OK(MPI_Op_commutative(op, &comm_flag));
    CHECK(!comm_flag, "Op_commutative");
    OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL, "Op_free");
}

/* Rank 0 sends rank 1 2^31 + 8 bytes (more than INT_MAX elements) with MPI_Send_c. */
static void big_message(void)
{
    const MPI_Count n = ((MPI_Count) 1 << 31) + 8;
    if (rank > 1)
        return;
    unsigned char *b = malloc(n);
    CHECK(b != NULL, "no memory for %lld bytes", (long long) n);
    if (rank == 0) {
        for (MPI_Count i = 0; i < n; i += 4096)
            b[i] = (unsigned char) (i / 4096);
        b[n - 1] = 0xab;
        OK(MPI_Send_c(b, n, MPI_BYTE, 1, 99, MPI_COMM_WORLD));
    } else {
        memset(b, 0, n);
        MPI_Status st;
        OK(MPI_Recv_c(b, n, MPI_BYTE, 0, 99, MPI_COMM_WORLD, &st));
        for (MPI_Count i = 0; i < n - 1; i += 4096)
            CHECK(b[i] == (unsigned char) (i / 4096), "big message byte %lld", (long long) i);
        CHECK(b[n - 1] == 0xab, "big message last byte");
        MPI_Count c;
        int ci;
        OK(MPI_Get_count_c(&st, MPI_BYTE, &c));
        OK(MPI_Get_count(&st, MPI_BYTE, &ci));
        CHECK(c == n && ci == MPI_UNDEFINED, "big message counts %lld %d", (long long) c, ci);
    }
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    pt2pt();
    datatypes();
    pack();
    user_ops();
    if (argc > 1 && strcmp(argv[1], "big") == 0 && size >= 2)
        big_message();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("large_count: OK\n");
    MPI_Finalize();
    return 0;
}
