/* send_status: what completing a send writes into the user's status. MPI leaves a send's
 * source, tag and count undefined; MPICH sets only the cancelled bit (and MPI_ERROR where
 * the call reports one), and programs rely on it: MPICH's irsendf waits for a receive and
 * a send with MPI_Waitany into one status and reads the receive's fields afterwards,
 * whichever completed last. Checked for every send kind — eager standard (which OxMPI
 * completes when it starts, with no request of its own), rendezvous (1 MiB), MPI_Issend,
 * MPI_Irsend, MPI_Ibsend and a persistent send — and every completion call: MPI_Wait,
 * MPI_Test, MPI_Request_get_status, and MPI_Waitany, Testany, Waitall, Testall, Waitsome
 * and Testsome over {receive, send} with the receive complete first. Each rank sends to
 * its right neighbour and receives from its left one (itself at 1 rank). The status
 * handed in is marked (source -77, tag -88, 4321 elements, cancelled); after a send it
 * must still hold source, tag and count, with the cancelled bit cleared. */
#include "testutil.h"

#define BIG (1 << 20)
#define MARK_SOURCE (-77)
#define MARK_TAG (-88)
#define MARK_COUNT 4321

enum kind { STANDARD, RENDEZVOUS, SYNC, READY, BUFFERED, PERSISTENT, NKINDS };
static const char *kind_name[NKINDS] = {"eager Isend", "1 MiB Isend", "Issend", "Irsend", "Ibsend", "Send_init"};

enum how { WAIT, TEST, GET_STATUS, WAITANY, TESTANY, WAITALL, TESTALL, WAITSOME, TESTSOME, NHOWS };
static const char *how_name[NHOWS] = {"MPI_Wait", "MPI_Test", "MPI_Request_get_status", "MPI_Waitany", "MPI_Testany",
                                      "MPI_Waitall", "MPI_Testall", "MPI_Waitsome", "MPI_Testsome"};

static void mark(MPI_Status *st)
{
    st->MPI_SOURCE = MARK_SOURCE;
    st->MPI_TAG = MARK_TAG;
    MPI_OK(MPI_Status_set_elements(st, MPI_BYTE, MARK_COUNT));
    MPI_OK(MPI_Status_set_cancelled(st, 1));
}

static void expect_marked(const MPI_Status *st, const char *kind, const char *how)
{
    int count, cancelled;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &count));
    MPI_OK(MPI_Test_cancelled(st, &cancelled));
    CHECK(st->MPI_SOURCE == MARK_SOURCE && st->MPI_TAG == MARK_TAG && count == MARK_COUNT,
          "%s completed by %s: status source %d tag %d count %d, expected them left at %d %d %d", kind, how,
          st->MPI_SOURCE, st->MPI_TAG, count, MARK_SOURCE, MARK_TAG, MARK_COUNT);
    CHECK(!cancelled, "%s completed by %s: status says cancelled", kind, how);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    int size;
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int right = (tu_rank + 1) % size, left = (tu_rank + size - 1) % size;
    unsigned char *sbuf = malloc(BIG), *rbuf = malloc(BIG);
    int bsize = 2 * (64 + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc(bsize);
    CHECK(sbuf && rbuf && bbuf, "out of memory");
    MPI_OK(MPI_Buffer_attach(bbuf, bsize));

    for (int k = 0; k < NKINDS; k++) {
        for (int h = 0; h < NHOWS; h++) {
            int tag = 100 + k * NHOWS + h, n = k == RENDEZVOUS ? BIG : 8;
            for (int i = 0; i < n; i++)
                sbuf[i] = tu_pattern_byte((size_t)i, (uint32_t)(tag * 31 + tu_rank));
            memset(rbuf, 0, (size_t)n);
            MPI_Request r[2];
            MPI_OK(MPI_Irecv(rbuf, n, MPI_BYTE, left, tag, MPI_COMM_WORLD, &r[0]));
            /* Every receive is posted before any ready send starts. */
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            switch (k) {
            case STANDARD:
            case RENDEZVOUS: MPI_OK(MPI_Isend(sbuf, n, MPI_BYTE, right, tag, MPI_COMM_WORLD, &r[1])); break;
            case SYNC: MPI_OK(MPI_Issend(sbuf, n, MPI_BYTE, right, tag, MPI_COMM_WORLD, &r[1])); break;
            case READY: MPI_OK(MPI_Irsend(sbuf, n, MPI_BYTE, right, tag, MPI_COMM_WORLD, &r[1])); break;
            case BUFFERED: MPI_OK(MPI_Ibsend(sbuf, n, MPI_BYTE, right, tag, MPI_COMM_WORLD, &r[1])); break;
            case PERSISTENT:
                MPI_OK(MPI_Send_init(sbuf, n, MPI_BYTE, right, tag, MPI_COMM_WORLD, &r[1]));
                MPI_OK(MPI_Start(&r[1]));
                break;
            }
            MPI_Request persistent = r[1];
            /* The receive completes first (its request stays until a wait frees it). */
            int flag = 0;
            while (!flag)
                MPI_OK(MPI_Request_get_status(r[0], &flag, MPI_STATUS_IGNORE));

            MPI_Status st, sts[2];
            mark(&st);
            mark(&sts[0]);
            mark(&sts[1]);
            int idx, outcount, indices[2];
            switch (h) {
            case WAIT: MPI_OK(MPI_Wait(&r[1], &st)); break;
            case TEST:
                do
                    MPI_OK(MPI_Test(&r[1], &flag, &st));
                while (!flag);
                break;
            case GET_STATUS:
                do
                    MPI_OK(MPI_Request_get_status(r[1], &flag, &st));
                while (!flag);
                expect_marked(&st, kind_name[k], how_name[h]);
                mark(&st);
                MPI_OK(MPI_Wait(&r[1], &st));
                break;
            case WAITANY:
                for (int c = 0; c < 2; c++)
                    MPI_OK(MPI_Waitany(2, r, &idx, &sts[0]));
                break;
            case TESTANY:
                for (int c = 0; c < 2; c++) {
                    do
                        MPI_OK(MPI_Testany(2, r, &idx, &flag, &sts[0]));
                    while (!flag);
                }
                break;
            case WAITALL: MPI_OK(MPI_Waitall(2, r, sts)); break;
            case TESTALL:
                do
                    MPI_OK(MPI_Testall(2, r, &flag, sts));
                while (!flag);
                break;
            case WAITSOME:
            case TESTSOME:
                /* Each status lands at the position of its completion, so keep both. */
                for (int done = 0; done < 2;) {
                    MPI_Status got[2];
                    mark(&got[0]);
                    mark(&got[1]);
                    if (h == WAITSOME)
                        MPI_OK(MPI_Waitsome(2, r, &outcount, indices, got));
                    else
                        MPI_OK(MPI_Testsome(2, r, &outcount, indices, got));
                    for (int i = 0; i < outcount; i++)
                        sts[indices[i]] = got[i];
                    done += outcount;
                }
                break;
            }
            const char *kn = kind_name[k], *hn = how_name[h];
            if (h == WAIT || h == TEST || h == GET_STATUS) {
                expect_marked(&st, kn, hn);
                MPI_OK(MPI_Wait(&r[0], &st));
            } else {
                CHECK(r[0] == MPI_REQUEST_NULL, "%s with %s: the receive's request is not freed", kn, hn);
                if (k != PERSISTENT)
                    CHECK(r[1] == MPI_REQUEST_NULL, "%s with %s: the send's request is not freed", kn, hn);
                if (h == WAITANY || h == TESTANY) {
                    /* One status for both: the receive's, whatever the order. */
                    st = sts[0];
                } else {
                    expect_marked(&sts[1], kn, hn);
                    st = sts[0];
                }
            }
            CHECK_STATUS(&st, left, tag, MPI_BYTE, n);
            for (int i = 0; i < n; i++)
                CHECK(rbuf[i] == tu_pattern_byte((size_t)i, (uint32_t)(tag * 31 + left)),
                      "%s with %s: byte %d received wrong", kn, hn, i);
            if (k == PERSISTENT)
                MPI_OK(MPI_Request_free(&persistent));
        }
    }
    int bs;
    MPI_OK(MPI_Buffer_detach(&bbuf, &bs));
    free(bbuf);
    free(sbuf);
    free(rbuf);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (tu_rank == 0)
        printf("send_status: OK (%d send kinds x %d completion calls, %d ranks)\n", NKINDS, NHOWS, size);
    MPI_Finalize();
    return 0;
}
