/* MPI_Comm_idup does not block (MPI 4.1 §7.4.2): its context agreement progresses while
 * the process does other communication, several may be outstanding on one communicator
 * (also beside nonblocking and blocking collectives on it), and each duplicate gets its
 * own context, the parent's attributes and topology-free copy of the group.
 *
 *  1. Rank 0 starts an idup and then receives a synchronous send that rank 1 makes
 *     *before* its own idup: a blocking idup deadlocks here.
 *  2. Four idups on WORLD interleaved with an Ibarrier and an Iallreduce, completed in
 *     reverse order with Test loops; then traffic on each duplicate with the same tag must
 *     not cross between them or with WORLD.
 *  3. An idup followed by a blocking Comm_dup of the same communicator before the idup is
 *     waited for.
 *  4. Attributes with a copy callback reach the duplicate; an idup of an intercommunicator.
 *  5. 300 idup/free cycles (context slots are reused; a leak would show later).
 *  6. Errors: MPI_COMM_NULL -> MPI_ERR_COMM, NULL request -> MPI_ERR_ARG.
 *  7. Blocking and nonblocking collectives ordered differently on different ranks (one
 *     rank starts an Iallreduce / Comm_idup before a Barrier, the others after it), as
 *     mpi4py's ULFM fallbacks do: erroneous by MPI 4.1 §6.12, but MPICH and Open MPI keep
 *     the two kinds apart and so does OxMPI.
 *  8. Odd ranks start an idup and then call a blocking constructor (Comm_create_group,
 *     Comm_dup, Comm_split, Comm_create) on WORLD; even ranks call the blocking one first
 *     and start their idup after it. Legal (the idup is nonblocking), and the odd ranks'
 *     idup cannot finish before the even ranks start it, so the blocking constructor must
 *     get a context while that idup's agreement is in flight (MPICH's
 *     comm_create_group_idup hung here).
 */
#include "testutil.h"
#include <string.h>

static int copies;
static int copy_fn(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag)
{
    (void)old; (void)key; (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static void test_until_done(MPI_Request *r, const char *what)
{
    WAIT_DEADLINE(r, MPI_STATUS_IGNORE, 60.0, what);
    CHECK(*r == MPI_REQUEST_NULL, "%s: request not nulled", what);
}

/* Every rank sends its rank to the right neighbour on `c` with tag 7, receives from the
 * left one, and checks it. */
static void ring_check(MPI_Comm c, int base, const char *what)
{
    int rank, size, got = -1;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int v = base + rank;
    MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT, (rank + size - 1) % size, 7, c, MPI_STATUS_IGNORE));
    CHECK(got == base + (rank + size - 1) % size, "%s: got %d", what, got);
}

int main(int argc, char **argv)
{
    int rank, size;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* 1. */
    if (size >= 2) {
        MPI_Comm d;
        MPI_Request r;
        int x = -1, y = 42;
        if (rank == 0) {
            MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &r));
            MPI_OK(MPI_Recv(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(x == 42, "receive during idup: %d", x);
        } else {
            if (rank == 1)
                MPI_OK(MPI_Ssend(&y, 1, MPI_INT, 0, 3, MPI_COMM_WORLD));
            MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &r));
        }
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        ring_check(d, 100, "case 1 duplicate");
        MPI_OK(MPI_Comm_free(&d));
    }

    /* 2. */
    {
        MPI_Comm d[4];
        MPI_Request r[6];
        int one = 1, sum = 0;
        MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d[0], &r[0]));
        MPI_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r[1]));
        MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d[1], &r[2]));
        MPI_OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[3]));
        MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d[2], &r[4]));
        MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d[3], &r[5]));
        for (int i = 5; i >= 0; i--)
            test_until_done(&r[i], "case 2 request");
        CHECK(sum == size, "iallreduce among idups: %d", sum);
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++) {
                int cmp;
                MPI_OK(MPI_Comm_compare(d[i], d[j], &cmp));
                CHECK(cmp == MPI_CONGRUENT, "duplicates %d and %d compare %d", i, j, cmp);
            }
        /* Same tag, same peers, on all five communicators at once: each message must
         * arrive on the communicator it was sent on. */
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int got[5], sent[5];
        MPI_Request q[10];
        MPI_Comm all[5] = {MPI_COMM_WORLD, d[0], d[1], d[2], d[3]};
        for (int i = 0; i < 5; i++)
            MPI_OK(MPI_Irecv(&got[4 - i], 1, MPI_INT, left, 9, all[4 - i], &q[i]));
        for (int i = 0; i < 5; i++) {
            sent[i] = 1000 * i + rank;
            MPI_OK(MPI_Isend(&sent[i], 1, MPI_INT, right, 9, all[i], &q[5 + i]));
        }
        MPI_OK(MPI_Waitall(10, q, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 5; i++)
            CHECK(got[i] == 1000 * i + left, "communicator %d received %d", i, got[i]);
        for (int i = 0; i < 4; i++) {
            int dr, ds;
            MPI_Comm_rank(d[i], &dr);
            MPI_Comm_size(d[i], &ds);
            CHECK(dr == rank && ds == size, "duplicate %d: rank %d size %d", i, dr, ds);
            int b = i, all_b = -1;
            MPI_OK(MPI_Allreduce(&b, &all_b, 1, MPI_INT, MPI_MAX, d[i]));
            CHECK(all_b == i, "allreduce on duplicate %d", i);
            MPI_OK(MPI_Comm_free(&d[i]));
        }
    }

    /* 3. */
    {
        MPI_Comm a, b;
        MPI_Request r;
        MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &a, &r));
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &b));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        ring_check(a, 300, "idup before dup");
        ring_check(b, 400, "dup after idup");
        MPI_OK(MPI_Comm_free(&a));
        MPI_OK(MPI_Comm_free(&b));
    }

    /* 4. */
    {
        int key, val = 77, *got, flag;
        MPI_Comm c, d;
        MPI_Request r;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MPI_OK(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL));
        MPI_OK(MPI_Comm_set_attr(c, key, &val));
        MPI_OK(MPI_Comm_idup(c, &d, &r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Comm_get_attr(d, key, &got, &flag));
        CHECK(flag && got == &val && copies == 1, "attribute on the duplicate: flag %d copies %d", flag, copies);
        MPI_OK(MPI_Comm_free(&d));
        MPI_OK(MPI_Comm_free(&c));
        MPI_OK(MPI_Comm_free_keyval(&key));
    }
    if (size >= 2) {
        int na, in_b;
        MPI_Comm half, d[2];
        MPI_Request r[2];
        MPI_Comm ic = tu_intercomm(5, &na, &in_b, &half);
        MPI_OK(MPI_Comm_idup(ic, &d[0], &r[0]));
        MPI_OK(MPI_Comm_idup(ic, &d[1], &r[1]));
        MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 2; i++) {
            int flag, rs, v = rank, total = -1;
            MPI_OK(MPI_Comm_test_inter(d[i], &flag));
            MPI_OK(MPI_Comm_remote_size(d[i], &rs));
            CHECK(flag && rs == (in_b ? na : size - na), "inter duplicate %d: inter %d remote size %d", i, flag, rs);
            /* Allreduce on an intercommunicator: each group gets the other's sum. */
            MPI_OK(MPI_Allreduce(&v, &total, 1, MPI_INT, MPI_SUM, d[i]));
            int expect = in_b ? na * (na - 1) / 2 : (size * (size - 1) - na * (na - 1)) / 2;
            CHECK(total == expect, "inter duplicate %d allreduce %d, expected %d", i, total, expect);
            MPI_OK(MPI_Comm_free(&d[i]));
        }
        MPI_OK(MPI_Comm_free(&ic));
        MPI_OK(MPI_Comm_free(&half));
    }

    /* 5. */
    for (int i = 0; i < 300; i++) {
        MPI_Comm d;
        MPI_Request r;
        MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (i % 50 == 0)
            ring_check(d, 500 + i, "cycle");
        MPI_OK(MPI_Comm_free(&d));
    }

    /* 6. */
    {
        MPI_Comm d;
        MPI_Request r;
        int cls;
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        int rc = MPI_Comm_idup(MPI_COMM_NULL, &d, &r);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_COMM, "idup(MPI_COMM_NULL): class %d", cls);
        rc = MPI_Comm_idup(MPI_COMM_WORLD, &d, NULL);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_ARG, "idup(request NULL): class %d", cls);
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    }

    /* 7. */
    for (int root = 0; root < size; root++) {
        int flag = rank == root ? 0xb : 0xd, got = 0;
        MPI_Request r[2];
        MPI_Comm d;
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == root) {
            MPI_OK(MPI_Iallreduce(&flag, &got, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD, &r[0]));
            MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &r[1]));
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        } else {
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            MPI_OK(MPI_Iallreduce(&flag, &got, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD, &r[0]));
            MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &r[1]));
        }
        MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        CHECK(got == (size > 1 ? 0x9 : 0xb), "root %d: band %#x", root, got);
        ring_check(d, 700 + root, "idup ordered after a barrier elsewhere");
        MPI_OK(MPI_Comm_free(&d));
    }

    /* 8. */
    for (int kind = 0; kind < 4; kind++) {
        MPI_Group wg;
        MPI_Comm d, b;
        MPI_Request r;
        MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        for (int phase = 0; phase < 2; phase++) {
            if (phase == rank % 2)
                MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &r));
            if (phase == 1 - rank % 2) {
                if (kind == 0)
                    MPI_OK(MPI_Comm_create_group(MPI_COMM_WORLD, wg, 3, &b));
                else if (kind == 1)
                    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &b));
                else if (kind == 2)
                    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &b));
                else
                    MPI_OK(MPI_Comm_create(MPI_COMM_WORLD, wg, &b));
            }
        }
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        ring_check(b, 800 + kind, "blocking constructor beside an idup in flight");
        ring_check(d, 900 + kind, "idup beside a blocking constructor");
        MPI_OK(MPI_Comm_free(&b));
        MPI_OK(MPI_Comm_free(&d));
        MPI_OK(MPI_Group_free(&wg));
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("comm_idup: OK\n");
    MPI_Finalize();
    return 0;
}
