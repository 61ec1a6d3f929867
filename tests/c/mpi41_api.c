/* mpi41_api: the MPI-4.1 additions OxMPI has, at any number of ranks (pairs (0,1),
 * (2,3), ... exchange; a rank without a partner does the local parts only).
 *  1. MPI_Status_get/set_source/_tag/_error.
 *  2. MPI_Request_get_status_any/_all/_some: they report completion without freeing or
 *     deactivating; null requests; a receive that is pending until the partner sends.
 *  3. MPI_Type_get_value_index: the predefined pair types, MPI_DATATYPE_NULL otherwise.
 *  4. MPI_Remove_error_class/_code/_string.
 *  5. MPI_Get_hw_resource_info: a valid info object.
 *  6. Buffered-send buffers: a communicator's buffer takes precedence over the process's;
 *     MPI_BUFFER_AUTOMATIC (messages far larger than any attached space); MPI_Buffer_flush,
 *     MPI_Comm_flush_buffer, MPI_Comm_iflush_buffer; detach reports MPI_BUFFER_AUTOMATIC;
 *     MPI_Comm_free of a communicator with a buffer and messages in flight.
 *  7. Bad arguments: error classes. */
#include "testutil.h"

#define BIG (1 << 20)
#define NBIG 6

static int rank, nprocs, partner;

static void status_fields(void)
{
    MPI_Status st;
    int v = -1;
    MPI_OK(MPI_Status_set_source(&st, 7));
    MPI_OK(MPI_Status_set_tag(&st, 1234));
    MPI_OK(MPI_Status_set_error(&st, MPI_ERR_TAG));
    CHECK(st.MPI_SOURCE == 7 && st.MPI_TAG == 1234 && st.MPI_ERROR == MPI_ERR_TAG, "set_* did not set the fields");
    MPI_OK(MPI_Status_get_source(&st, &v));
    CHECK(v == 7, "get_source %d", v);
    MPI_OK(MPI_Status_get_tag(&st, &v));
    CHECK(v == 1234, "get_tag %d", v);
    MPI_OK(MPI_Status_get_error(&st, &v));
    CHECK(v == MPI_ERR_TAG, "get_error %d", v);
    /* A real receive's status reads back through the getters. */
    int x = 41, y = 0;
    MPI_Sendrecv(&x, 1, MPI_INT, 0, 77, &y, 1, MPI_INT, 0, 77, MPI_COMM_SELF, &st);
    MPI_OK(MPI_Status_get_source(&st, &v));
    CHECK(v == 0 && y == 41, "self sendrecv: source %d value %d", v, y);
    MPI_OK(MPI_Status_get_tag(&st, &v));
    CHECK(v == 77, "self sendrecv: tag %d", v);
}

static void get_status_forms(void)
{
    MPI_Request reqs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status sts[3];
    int idx = -5, flag = -5, out = -5, ind[3];

    /* Only null requests: empty statuses (MPI_ERROR too, as MPICH sets it). */
    sts[0].MPI_ERROR = sts[1].MPI_ERROR = MPI_ERR_OTHER;
    MPI_OK(MPI_Request_get_status_any(3, reqs, &idx, &flag, &sts[0]));
    CHECK(flag == 1 && idx == MPI_UNDEFINED, "any of nulls: flag %d index %d", flag, idx);
    CHECK(sts[0].MPI_SOURCE == MPI_ANY_SOURCE && sts[0].MPI_TAG == MPI_ANY_TAG && sts[0].MPI_ERROR == MPI_SUCCESS,
          "any of nulls: status %d/%d/%d is not empty", sts[0].MPI_SOURCE, sts[0].MPI_TAG, sts[0].MPI_ERROR);
    MPI_OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
    CHECK(flag == 1, "all of nulls: flag %d", flag);
    CHECK(sts[1].MPI_SOURCE == MPI_ANY_SOURCE && sts[1].MPI_TAG == MPI_ANY_TAG && sts[1].MPI_ERROR == MPI_SUCCESS,
          "all of nulls: status %d/%d/%d is not empty", sts[1].MPI_SOURCE, sts[1].MPI_TAG, sts[1].MPI_ERROR);
    MPI_OK(MPI_Request_get_status_some(3, reqs, &out, ind, sts));
    CHECK(out == MPI_UNDEFINED, "some of nulls: outcount %d", out);
    MPI_OK(MPI_Request_get_status_all(0, NULL, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag == 1, "all of none: flag %d", flag);

    if (partner < 0)
        return;
    /* reqs[1]: a receive the partner satisfies only after a "go" from us. */
    int got = -1, go = 1, value = 1000 + partner;
    MPI_OK(MPI_Irecv(&got, 1, MPI_INT, partner, 11, MPI_COMM_WORLD, &reqs[1]));
    MPI_OK(MPI_Request_get_status_any(3, reqs, &idx, &flag, &sts[0]));
    CHECK(flag == 0, "any: pending receive reported complete (index %d)", idx);
    MPI_OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
    CHECK(flag == 0, "all: pending receive reported complete");
    MPI_OK(MPI_Request_get_status_some(3, reqs, &out, ind, sts));
    CHECK(out == 0, "some: outcount %d with the receive pending", out);

    int other_go;
    MPI_Sendrecv(&go, 1, MPI_INT, partner, 10, &other_go, 1, MPI_INT, partner, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int mine = 1000 + rank;
    MPI_OK(MPI_Send(&mine, 1, MPI_INT, partner, 11, MPI_COMM_WORLD));

    do {
        MPI_OK(MPI_Request_get_status_any(3, reqs, &idx, &flag, &sts[0]));
    } while (!flag);
    CHECK(idx == 1, "any: index %d, expected 1", idx);
    CHECK(sts[0].MPI_SOURCE == partner && sts[0].MPI_TAG == 11, "any: status source %d tag %d", sts[0].MPI_SOURCE, sts[0].MPI_TAG);
    CHECK(reqs[1] != MPI_REQUEST_NULL, "get_status_any freed the request");
    /* Still there: the other forms see it complete too, repeatedly. */
    MPI_OK(MPI_Request_get_status_some(3, reqs, &out, ind, sts));
    CHECK(out == 1 && ind[0] == 1 && sts[0].MPI_SOURCE == partner, "some: outcount %d index %d", out, ind[0]);
    MPI_OK(MPI_Request_get_status_all(3, reqs, &flag, sts));
    CHECK(flag == 1 && sts[1].MPI_SOURCE == partner && sts[1].MPI_TAG == 11, "all: flag %d status %d/%d", flag, sts[1].MPI_SOURCE, sts[1].MPI_TAG);
    int count = -1;
    MPI_OK(MPI_Get_count(&sts[1], MPI_INT, &count));
    CHECK(count == 1, "all: count %d", count);
    CHECK(reqs[1] != MPI_REQUEST_NULL, "get_status_all freed the request");
    MPI_Status st;
    MPI_OK(MPI_Wait(&reqs[1], &st));
    CHECK(reqs[1] == MPI_REQUEST_NULL && got == value && st.MPI_SOURCE == partner, "wait after get_status: value %d", got);
}

static void value_index(void)
{
    struct { MPI_Datatype v, i, want; } t[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},   {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},     {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},   {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_CHAR, MPI_INT, MPI_DATATYPE_NULL}, {MPI_INT, MPI_DOUBLE, MPI_DATATYPE_NULL},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        MPI_Datatype p = MPI_BYTE;
        MPI_OK(MPI_Type_get_value_index(t[k].v, t[k].i, &p));
        CHECK(p == t[k].want, "value_index case %zu: got %#x", k, (unsigned)p);
    }
}

static void remove_errors(void)
{
    int cls, code, rc, len;
    char s[MPI_MAX_ERROR_STRING];
    MPI_OK(MPI_Add_error_class(&cls));
    MPI_OK(MPI_Add_error_code(cls, &code));
    MPI_OK(MPI_Add_error_string(code, "a user code"));
    rc = MPI_Remove_error_code(code);
    CHECK(tu_error_class(rc) == MPI_ERR_ARG, "removing a code that still has a string: %d", rc);
    rc = MPI_Remove_error_class(cls);
    CHECK(tu_error_class(rc) == MPI_ERR_ARG, "removing a class that still has a code: %d", rc);
    rc = MPI_Remove_error_code(cls);
    CHECK(tu_error_class(rc) == MPI_ERR_ARG, "MPI_Remove_error_code of a class: %d", rc);
    MPI_OK(MPI_Remove_error_string(code));
    MPI_OK(MPI_Error_string(code, s, &len));
    CHECK(len == 0, "string after MPI_Remove_error_string: \"%s\"", s);
    MPI_OK(MPI_Remove_error_code(code));
    MPI_OK(MPI_Remove_error_class(cls));
    rc = MPI_Remove_error_class(cls);
    CHECK(tu_error_class(rc) == MPI_ERR_ARG, "removing a class twice: %d", rc);
    rc = MPI_Remove_error_class(MPI_ERR_TAG);
    CHECK(tu_error_class(rc) == MPI_ERR_ARG, "removing a predefined class: %d", rc);
}

static void hw_info(void)
{
    MPI_Info info = MPI_INFO_NULL;
    int n = -1;
    MPI_OK(MPI_Get_hw_resource_info(&info));
    CHECK(info != MPI_INFO_NULL, "no info object");
    MPI_OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n >= 0, "nkeys %d", n);
    MPI_OK(MPI_Info_free(&info));
}

static void fill(unsigned char *b, int n, uint32_t seed)
{
    for (int i = 0; i < n; i++)
        b[i] = tu_pattern_byte(i, seed);
}

static void expect(const unsigned char *b, int n, uint32_t seed, const char *what)
{
    for (int i = 0; i < n; i++)
        if (b[i] != tu_pattern_byte(i, seed))
            FAIL("%s: byte %d is %d, expected %d", what, i, b[i], tu_pattern_byte(i, seed));
}

/* Receives NBIG messages of BIG bytes from the partner on comm, checked. */
static void recv_bigs(MPI_Comm comm, uint32_t seed, unsigned char *buf)
{
    for (int k = 0; k < NBIG; k++) {
        MPI_Status st;
        MPI_OK(MPI_Recv(buf, BIG, MPI_BYTE, partner, 20 + k, comm, &st));
        CHECK_STATUS(&st, partner, 20 + k, MPI_BYTE, BIG);
        expect(buf, BIG, seed + k, "big buffered message");
    }
}

static void buffers(void)
{
    static unsigned char small[64];
    unsigned char *msg = malloc(BIG), *in = malloc(BIG);
    void *addr;
    int size, rc, flag;
    CHECK(msg && in, "out of memory");
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);

    /* A small process buffer and an automatic one on dup. */
    MPI_OK(MPI_Buffer_attach(small, sizeof small));
    MPI_OK(MPI_Comm_attach_buffer(dup, MPI_BUFFER_AUTOMATIC, 0));
    rc = MPI_Comm_attach_buffer(dup, small, sizeof small);
    CHECK(tu_error_class(rc) == MPI_ERR_BUFFER, "second buffer on a communicator: %d", rc);
    rc = MPI_Bsend(msg, 1000, MPI_BYTE, rank, 1, MPI_COMM_WORLD);
    CHECK(tu_error_class(rc) == MPI_ERR_BUFFER, "1000 bytes through a 64-byte process buffer: %d", rc);

    if (partner >= 0) {
        /* Six 1 MiB buffered sends on dup complete at once although nothing is received yet. */
        for (int k = 0; k < NBIG; k++) {
            fill(msg, BIG, 100 * rank + k);
            MPI_OK(MPI_Bsend(msg, BIG, MPI_BYTE, partner, 20 + k, dup));
        }
        memset(msg, 0, BIG); /* the copies are the library's */
        MPI_Request fl;
        MPI_OK(MPI_Comm_iflush_buffer(dup, &fl));
        recv_bigs(dup, 100 * partner, in);
        MPI_OK(MPI_Wait(&fl, MPI_STATUS_IGNORE));
        CHECK(fl == MPI_REQUEST_NULL, "iflush request not freed by MPI_Wait");
        /* Again with the blocking flush. */
        for (int k = 0; k < NBIG; k++) {
            fill(msg, BIG, 200 * rank + k);
            MPI_OK(MPI_Bsend(msg, BIG, MPI_BYTE, partner, 20 + k, dup));
        }
        recv_bigs(dup, 200 * partner, in);
        MPI_OK(MPI_Comm_flush_buffer(dup));
        /* Small messages go through the process buffer on MPI_COMM_WORLD. */
        int v = 5000 + rank, w = -1;
        MPI_OK(MPI_Bsend(&v, 1, MPI_INT, partner, 30, MPI_COMM_WORLD));
        MPI_OK(MPI_Buffer_flush());
        MPI_OK(MPI_Recv(&w, 1, MPI_INT, partner, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(w == 5000 + partner, "small buffered message: %d", w);
    }
    /* Nothing pending: an iflush completes at once. */
    MPI_Request fl;
    MPI_OK(MPI_Buffer_iflush(&fl));
    MPI_OK(MPI_Test(&fl, &flag, MPI_STATUS_IGNORE));
    CHECK(flag, "MPI_Buffer_iflush with nothing pending did not complete");

    MPI_OK(MPI_Comm_detach_buffer(dup, &addr, &size));
    CHECK(addr == MPI_BUFFER_AUTOMATIC && size == 0, "detach of the automatic buffer: %p %d", addr, size);
    MPI_OK(MPI_Comm_detach_buffer(dup, &addr, &size));
    CHECK(addr == NULL && size == 0, "detach with nothing attached: %p %d", addr, size);
    MPI_OK(MPI_Buffer_detach(&addr, &size));
    CHECK(addr == small && size == (int)sizeof small, "process buffer detach: %p %d", addr, size);

    /* A communicator freed with buffered messages in flight: they still arrive, and a
     * later communicator (possibly on the same context id) has no buffer. */
    MPI_Comm d2;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d2));
    MPI_OK(MPI_Comm_attach_buffer_c(d2, MPI_BUFFER_AUTOMATIC, 0));
    if (partner >= 0 && rank < partner) {
        /* The lower rank sends and frees at once (the free waits for the deliveries); the
         * higher one receives on its d2, then frees it. */
        for (int k = 0; k < NBIG; k++) {
            fill(msg, BIG, 300 * rank + k);
            MPI_OK(MPI_Bsend(msg, BIG, MPI_BYTE, partner, 20 + k, d2));
        }
        MPI_OK(MPI_Comm_free(&d2));
    } else {
        if (partner >= 0)
            recv_bigs(d2, 300 * partner, in);
        MPI_OK(MPI_Comm_free(&d2));
    }
    MPI_Comm d3;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d3));
    MPI_Comm_set_errhandler(d3, MPI_ERRORS_RETURN);
    rc = MPI_Bsend(msg, 10, MPI_BYTE, rank, 1, d3);
    CHECK(tu_error_class(rc) == MPI_ERR_BUFFER, "buffered send on a new communicator with no buffer anywhere: %d", rc);
    MPI_OK(MPI_Comm_free(&d3));
    MPI_OK(MPI_Comm_free(&dup));
    free(msg);
    free(in);
}

static void bad_arguments(void)
{
    int rc, v, idx, flag;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Status_get_source(NULL, &v);
    CHECK(tu_error_class(rc) == MPI_ERR_ARG, "get_source(NULL): %d", rc);
    rc = MPI_Status_set_tag(MPI_STATUS_IGNORE, 1);
    CHECK(tu_error_class(rc) == MPI_ERR_ARG, "set_tag(MPI_STATUS_IGNORE): %d", rc);
    rc = MPI_Request_get_status_any(-1, &r, &idx, &flag, MPI_STATUS_IGNORE);
    CHECK(tu_error_class(rc) == MPI_ERR_COUNT, "get_status_any count -1: %d", rc);
    rc = MPI_Request_get_status_all(2, NULL, &flag, MPI_STATUSES_IGNORE);
    CHECK(tu_error_class(rc) == MPI_ERR_ARG, "get_status_all NULL array: %d", rc);
    MPI_Request bogus = (MPI_Request)0x12345;
    rc = MPI_Request_get_status_some(1, &bogus, &v, &idx, MPI_STATUSES_IGNORE);
    CHECK(tu_error_class(rc) == MPI_ERR_REQUEST, "get_status_some of a bogus handle: %d", rc);
    rc = MPI_Comm_attach_buffer(MPI_COMM_NULL, MPI_BUFFER_AUTOMATIC, 0);
    CHECK(tu_error_class(rc) == MPI_ERR_COMM, "attach to MPI_COMM_NULL: %d", rc);
    rc = MPI_Comm_attach_buffer(MPI_COMM_WORLD, NULL, 100);
    CHECK(tu_error_class(rc) == MPI_ERR_BUFFER, "attach NULL of 100 bytes: %d", rc);
    rc = MPI_Comm_flush_buffer(MPI_COMM_NULL);
    CHECK(tu_error_class(rc) == MPI_ERR_COMM, "flush on MPI_COMM_NULL: %d", rc);
    rc = MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &bogus);
    CHECK(tu_error_class(rc) == MPI_ERR_TYPE, "value_index of MPI_DATATYPE_NULL: %d", rc);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    /* Errors are checked by class below (calls without a communicator report on
     * MPI_COMM_WORLD in OxMPI and MPICH, on MPI_COMM_SELF by MPI 4.1). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    partner = (rank % 2 == 0) ? rank + 1 : rank - 1;
    if (partner >= nprocs)
        partner = -1;
    status_fields();
    get_status_forms();
    value_index();
    remove_errors();
    hw_info();
    buffers();
    bad_arguments();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi41_api: OK (%d ranks)\n", nprocs);
    MPI_Finalize();
    return 0;
}
