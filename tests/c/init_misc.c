/* init_misc: MPI_Initialized/MPI_Finalized before, during and after; MPI_Init_thread
 * (provided level reported and in range); MPI_Get_processor_name,
 * MPI_Get_version, MPI_Get_library_version; MPI_Wtime monotonic and advancing,
 * MPI_Wtick > 0; MPI_Comm_rank/size on MPI_COMM_WORLD and MPI_COMM_SELF,
 * messages to self on MPI_COMM_SELF that do not match receives on
 * MPI_COMM_WORLD; a token around MPI_COMM_WORLD; MPI_Comm_get_parent gives
 * MPI_COMM_NULL (not spawned) and MPI_ERR_ARG for NULL. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <time.h>

static const char *level_name(int level)
{
    if (level == MPI_THREAD_SINGLE) return "MPI_THREAD_SINGLE";
    if (level == MPI_THREAD_FUNNELED) return "MPI_THREAD_FUNNELED";
    if (level == MPI_THREAD_SERIALIZED) return "MPI_THREAD_SERIALIZED";
    if (level == MPI_THREAD_MULTIPLE) return "MPI_THREAD_MULTIPLE";
    return "unknown";
}

int main(int argc, char **argv)
{
    int flag = -1, provided = -1, rank = -1, size = -1;
    MPI_Initialized(&flag);
    if (flag != 0) {
        fprintf(stderr, "FAIL: MPI_Initialized before MPI_Init_thread gave %d\n", flag);
        return 1;
    }
    MPI_Finalized(&flag);
    if (flag != 0) {
        fprintf(stderr, "FAIL: MPI_Finalized before MPI_Init_thread gave %d\n", flag);
        return 1;
    }
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &tu_rank);
    CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
          MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE, "thread level constants are not ordered");
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE,
          "MPI_Init_thread provided = %d, not a thread level", provided);
    MPI_Initialized(&flag);
    CHECK(flag == 1, "MPI_Initialized after MPI_Init_thread gave %d", flag);
    MPI_Finalized(&flag);
    CHECK(flag == 0, "MPI_Finalized before MPI_Finalize gave %d", flag);

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 1 && rank >= 0 && rank < size, "COMM_WORLD rank %d size %d", rank, size);
    int srank = -1, ssize = -1;
    MPI_Comm_rank(MPI_COMM_SELF, &srank);
    MPI_Comm_size(MPI_COMM_SELF, &ssize);
    CHECK(srank == 0 && ssize == 1, "COMM_SELF rank %d size %d", srank, ssize);

    /* Not started by MPI_Comm_spawn: no parent (MPI 4.1 11.8.2). */
    MPI_Comm parent = MPI_COMM_WORLD;
    MPI_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "MPI_Comm_get_parent gave a communicator, expected MPI_COMM_NULL");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls = -1;
    MPI_Error_class(MPI_Comm_get_parent(NULL), &cls);
    CHECK(cls == MPI_ERR_ARG, "MPI_Comm_get_parent(NULL): class %d, expected MPI_ERR_ARG", cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    char name[MPI_MAX_PROCESSOR_NAME];
    int len = -1;
    memset(name, 0, sizeof name);
    MPI_Get_processor_name(name, &len);
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME && (int)strlen(name) == len,
          "MPI_Get_processor_name: length %d for \"%s\"", len, name);

    int version = -1, subversion = -1;
    MPI_Get_version(&version, &subversion);
    CHECK(version == MPI_VERSION && subversion == MPI_SUBVERSION,
          "MPI_Get_version = %d.%d but mpi.h says %d.%d", version, subversion, MPI_VERSION,
          MPI_SUBVERSION);
    CHECK(version >= 3, "MPI_Get_version = %d.%d, expected at least 3.x", version, subversion);

    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    memset(lib, 0, sizeof lib);
    MPI_Get_library_version(lib, &len);
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (int)strlen(lib) == len,
          "MPI_Get_library_version: length %d for \"%s\"", len, lib);

    /* clocks */
    double tick = MPI_Wtick();
    CHECK(tick > 0 && tick < 1, "MPI_Wtick = %g", tick);
    double prev = MPI_Wtime(), start = prev;
    for (int i = 0; i < 100000; i++) {
        double now = MPI_Wtime();
        CHECK(now >= prev, "MPI_Wtime went backwards: %.9f after %.9f", now, prev);
        prev = now;
    }
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    double slept = MPI_Wtime() - start;
    CHECK(slept >= 0.019 && slept < 60, "MPI_Wtime advanced %.6f s over a 20 ms sleep", slept);

    /* COMM_SELF traffic is separate from COMM_WORLD traffic */
    int world_in = -1, self_in = -1, world_out = 1000 + rank, self_out = 2000 + rank;
    MPI_Request wreq, sreq, wsreq;
    MPI_Status st;
    MPI_Irecv(&world_in, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &wreq);
    MPI_Isend(&self_out, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &sreq);
    MPI_Recv(&self_in, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &st);
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    CHECK_STATUS(&st, 0, 5, MPI_INT, 1);
    CHECK(self_in == 2000 + rank, "COMM_SELF message: %d", self_in);
    flag = 1;
    MPI_Test(&wreq, &flag, &st);
    CHECK(!flag, "a COMM_WORLD receive matched a message sent on COMM_SELF");
    MPI_Isend(&world_out, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &wsreq);
    MPI_Wait(&wreq, &st);
    MPI_Wait(&wsreq, MPI_STATUS_IGNORE);
    CHECK_STATUS(&st, rank, 5, MPI_INT, 1);
    CHECK(world_in == 1000 + rank, "COMM_WORLD message to self: %d", world_in);
    /* blocking Sendrecv with self on COMM_SELF */
    MPI_Sendrecv(&self_out, 1, MPI_INT, 0, 6, &self_in, 1, MPI_INT, MPI_ANY_SOURCE, 6,
                 MPI_COMM_SELF, &st);
    CHECK_STATUS(&st, 0, 6, MPI_INT, 1);

    /* a token around COMM_WORLD */
    int token = 0;
    if (size > 1) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, size - 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(token == size - 1, "token %d after a lap of %d ranks", token, size);
        } else {
            MPI_Recv(&token, 1, MPI_INT, rank - 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 9, MPI_COMM_WORLD);
        }
    }

    lib[strcspn(lib, "\r\n")] = '\0'; /* first line only */
    if (rank == 0)
        printf("init_misc: provided %s, MPI %d.%d, processor \"%s\", Wtick %g, library \"%.60s\"\n",
               level_name(provided), version, subversion, name, tick, lib);

    MPI_OK(MPI_Finalize());
    MPI_Initialized(&flag);
    if (flag != 1) {
        fprintf(stderr, "FAIL: MPI_Initialized after MPI_Finalize gave %d\n", flag);
        return 1;
    }
    MPI_Finalized(&flag);
    if (flag != 1) {
        fprintf(stderr, "FAIL: MPI_Finalized after MPI_Finalize gave %d\n", flag);
        return 1;
    }
    if (rank == 0)
        printf("init_misc: OK (%d ranks)\n", size);
    return 0;
}
