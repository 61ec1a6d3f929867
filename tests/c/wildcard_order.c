/* wildcard_order: MPI_ANY_SOURCE / MPI_ANY_TAG receives and MPI's
 * non-overtaking rule. Every rank except 0 (rank 0 itself when alone) sends
 * NMSG messages to rank 0 with increasing sequence numbers, mixed tags and
 * mixed sizes (every 5th message is large enough for a rendezvous protocol).
 * Rank 0 checks, per sender, that messages arrive in sequence order:
 *  A. unexpected messages, received with ANY_SOURCE + ANY_TAG;
 *  B. receives with a specific tag (ANY_SOURCE) skip over other tags: all
 *     tag-B1 messages first, then all tag-B0 ones, each in order;
 *  C. specific source + ANY_TAG, senders taken in decreasing rank order;
 *  D. all receives pre-posted (ANY_SOURCE + ANY_TAG) before the senders start;
 *     they complete in posting order with per-sender increasing sequence.
 * All sends are nonblocking (MPI_Isend + MPI_Waitall) so receiving out of the
 * send order cannot deadlock. Payload: int header {sender, seq, tag, len}
 * followed by pattern bytes. */
#include "testutil.h"

#define NMSG 40
#define SMALL 40
#define LARGE 70000
#define HDR 4
#define TAG_GO 999

static int rank, nprocs;

static int msg_len(int seq) { return (seq % 5 == 4) ? LARGE : SMALL + seq; }
static uint32_t seed_of(int phase, int src, int seq)
{
    return (uint32_t)phase * 7u + (uint32_t)src * 131u + (uint32_t)seq * 8191u;
}

/* tag used for message seq in each phase */
static int tag_of(int phase, int seq)
{
    if (phase == 1)
        return 10 + (seq % 2);      /* B: two tags alternate */
    return 20 * phase + (seq % 3) * (seq % 7); /* A, C, D: irregular mix */
}

static int *make_msg(int phase, int seq)
{
    int len = msg_len(seq);
    int *m = tu_malloc(HDR * sizeof(int) + len);
    m[0] = rank;
    m[1] = seq;
    m[2] = tag_of(phase, seq);
    m[3] = len;
    tu_fill(m + HDR, len, seed_of(phase, rank, seq));
    return m;
}

static void start_sends(int phase, int **msgs, MPI_Request *reqs)
{
    for (int seq = 0; seq < NMSG; seq++) {
        msgs[seq] = make_msg(phase, seq);
        MPI_Isend(msgs[seq], HDR * sizeof(int) + msg_len(seq), MPI_BYTE, 0,
                  tag_of(phase, seq), MPI_COMM_WORLD, &reqs[seq]);
    }
}

static void finish_sends(int **msgs, MPI_Request *reqs)
{
    MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE);
    for (int seq = 0; seq < NMSG; seq++)
        free(msgs[seq]);
}

/* Check a received message; returns its sender. next_seq[src] is the expected
 * sequence number, advanced by step. */
static int check_msg(const char *phase_name, int phase, const int *m, const MPI_Status *st,
                     int *next_seq, int step)
{
    int src = m[0], seq = m[1], count = -1;
    CHECK(src >= 0 && src < nprocs && (src != 0 || nprocs == 1),
          "%s: message header names sender %d", phase_name, src);
    CHECK(st->MPI_SOURCE == src, "%s: status source %d but message from %d", phase_name,
          st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == m[2], "%s: status tag %d but message sent with tag %d", phase_name,
          st->MPI_TAG, m[2]);
    CHECK(seq == next_seq[src],
          "%s: ORDER VIOLATION from rank %d: got seq %d, expected seq %d", phase_name, src,
          seq, next_seq[src]);
    next_seq[src] += step;
    CHECK(m[3] == msg_len(seq), "%s: header length %d", phase_name, m[3]);
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK(count == (int)(HDR * sizeof(int)) + m[3], "%s: MPI_Get_count %d, expected %d",
          phase_name, count, (int)(HDR * sizeof(int)) + m[3]);
    CHECK_PATTERN(m + HDR, m[3], seed_of(phase, src, seq), "%s seq %d from %d", phase_name,
                  seq, src);
    return src;
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int is_sender = (rank != 0 || nprocs == 1);
    int nsenders = (nprocs == 1) ? 1 : nprocs - 1;
    int total = nsenders * NMSG;
    size_t maxmsg = HDR * sizeof(int) + LARGE;
    int *msgs[NMSG];
    MPI_Request sreqs[NMSG];
    int *next_seq = tu_malloc(nprocs * sizeof(int));
    int *buf = tu_malloc(maxmsg);
    MPI_Status st;

    for (int phase = 0; phase < 4; phase++) {
        for (int i = 0; i < nprocs; i++)
            next_seq[i] = 0;
        if (phase == 3) {
            /* D: pre-post everything, then tell the senders to go */
            if (rank == 0) {
                int **rbufs = tu_malloc(total * sizeof(int *));
                MPI_Request *rreqs = tu_malloc(total * sizeof(MPI_Request));
                MPI_Status *sts = tu_malloc(total * sizeof(MPI_Status));
                for (int i = 0; i < total; i++) {
                    rbufs[i] = tu_malloc(maxmsg);
                    MPI_Irecv(rbufs[i], maxmsg, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                              MPI_COMM_WORLD, &rreqs[i]);
                }
                if (nprocs == 1)
                    start_sends(phase, msgs, sreqs);
                for (int i = 1; i < nprocs; i++)
                    MPI_Send(NULL, 0, MPI_BYTE, i, TAG_GO, MPI_COMM_WORLD);
                MPI_Waitall(total, rreqs, sts);
                for (int i = 0; i < total; i++) {
                    check_msg("D (pre-posted ANY_SOURCE/ANY_TAG)", phase, rbufs[i], &sts[i],
                              next_seq, 1);
                    free(rbufs[i]);
                }
                if (nprocs == 1)
                    finish_sends(msgs, sreqs);
                free(rbufs);
                free(rreqs);
                free(sts);
            } else {
                MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                start_sends(phase, msgs, sreqs);
                finish_sends(msgs, sreqs);
            }
            continue;
        }

        if (is_sender)
            start_sends(phase, msgs, sreqs);
        if (rank == 0) {
            if (phase == 0) {
                for (int i = 0; i < total; i++) {
                    MPI_Recv(buf, maxmsg, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                             &st);
                    check_msg("A (ANY_SOURCE/ANY_TAG)", phase, buf, &st, next_seq, 1);
                }
            } else if (phase == 1) {
                /* odd sequence numbers carry tag 11, even ones tag 10 */
                for (int i = 0; i < nprocs; i++)
                    next_seq[i] = 1;
                for (int i = 0; i < total / 2; i++) {
                    MPI_Recv(buf, maxmsg, MPI_BYTE, MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &st);
                    check_msg("B (ANY_SOURCE, tag 11)", phase, buf, &st, next_seq, 2);
                }
                for (int i = 0; i < nprocs; i++)
                    next_seq[i] = 0;
                for (int i = 0; i < total / 2; i++) {
                    MPI_Recv(buf, maxmsg, MPI_BYTE, MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &st);
                    check_msg("B (ANY_SOURCE, tag 10)", phase, buf, &st, next_seq, 2);
                }
            } else {
                int first = (nprocs == 1) ? 0 : nprocs - 1, last = (nprocs == 1) ? 0 : 1;
                for (int src = first; src >= last; src--) {
                    for (int i = 0; i < NMSG; i++) {
                        MPI_Recv(buf, maxmsg, MPI_BYTE, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                        int got = check_msg("C (source, ANY_TAG)", phase, buf, &st, next_seq, 1);
                        CHECK(got == src, "C: receive from %d matched a message from %d", src,
                              got);
                    }
                }
            }
            /* nothing else may be pending */
            int flag = 1;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            CHECK(!flag, "phase %d: unexpected extra message from %d tag %d", phase,
                  st.MPI_SOURCE, st.MPI_TAG);
        }
        if (is_sender)
            finish_sends(msgs, sreqs);
        /* phases are separated: senders wait for rank 0's go for the next phase */
        if (rank == 0)
            for (int i = 1; i < nprocs; i++)
                MPI_Send(NULL, 0, MPI_BYTE, i, TAG_GO + 1, MPI_COMM_WORLD);
        else
            MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_GO + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    free(buf);
    free(next_seq);
    if (rank == 0)
        printf("wildcard_order: OK (%d ranks, %d messages per sender per phase)\n", nprocs,
               NMSG);
    MPI_Finalize();
    return 0;
}
