/* MPI-IO nonblocking and split collective access: iwrite_at / iread_at / iwrite / iread
 * / iwrite_all / iread_at_all / iwrite_shared completed by MPI_Waitall, MPI_Test and
 * MPI_Request_free; split collectives with explicit offsets and the individual pointer;
 * ROMIO's MPIO_Request / MPIO_Wait / MPIO_Test names (MPICH's mpio.h, used by older
 * programs). argv[1]: a directory for the files. */
#include "testutil.h"

enum { N = 256, K = 4 };

int main(int argc, char **argv)
{
    int size;
    char p[600];
    MPI_File fh;
    MPI_Status st, sts[K];
    MPI_Request req[K];
    tu_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc > 1, "usage: io_nonblocking DIR");
    snprintf(p, sizeof p, "%s/nonblocking", argv[1]);
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));

    /* K chunks of N doubles per rank, rank-major, written and read with requests. */
    double out[K][N], in[K][N];
    for (int k = 0; k < K; k++)
        for (int i = 0; i < N; i++)
            out[k][i] = tu_rank * 1e6 + k * 1e3 + i;
    MPI_OK(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL));
    for (int k = 0; k < K; k++)
        MPI_OK(MPI_File_iwrite_at(fh, (MPI_Offset)(tu_rank * K + k) * N, out[k], N, MPI_DOUBLE, &req[k]));
    MPI_OK(MPI_Waitall(K, req, sts));
    for (int k = 0; k < K; k++) {
        int got;
        CHECK(req[k] == MPI_REQUEST_NULL, "request %d not freed", k);
        MPI_OK(MPI_Get_count(&sts[k], MPI_DOUBLE, &got));
        CHECK(got == N, "iwrite_at count %d", got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int other = (tu_rank + 1) % size;
    for (int k = 0; k < K; k++)
        MPI_OK(MPI_File_iread_at(fh, (MPI_Offset)(other * K + k) * N, in[k], N, MPI_DOUBLE, &req[k]));
    MPI_OK(MPI_Waitall(K, req, sts));
    for (int k = 0; k < K; k++)
        for (int i = 0; i < N; i++)
            CHECK(in[k][i] == other * 1e6 + k * 1e3 + i, "iread_at chunk %d [%d] = %g", k, i, in[k][i]);

    /* Individual pointer: iread advances it; MPI_Test completes; Request_free is fine. */
    MPI_OK(MPI_File_seek(fh, (MPI_Offset)other * K * N, MPI_SEEK_SET));
    MPI_OK(MPI_File_iread(fh, in[0], N, MPI_DOUBLE, &req[0]));
    WAIT_DEADLINE(&req[0], &st, 30, "MPI_File_iread");
    MPI_OK(MPI_File_iread(fh, in[1], N, MPI_DOUBLE, &req[1]));
    MPI_OK(MPI_Request_free(&req[1]));
    MPI_Offset pos;
    MPI_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)other * K * N + 2 * N, "position after two ireads %lld", (long long)pos);
    for (int i = 0; i < N; i++)
        CHECK(in[0][i] == other * 1e6 + i && in[1][i] == other * 1e6 + 1e3 + i, "iread [%d]", i);

    /* Collective nonblocking: each rank's chunk 0 at the end region, read back. */
    MPI_Offset base = (MPI_Offset)size * K * N;
    MPI_OK(MPI_File_seek(fh, base + (MPI_Offset)tu_rank * N, MPI_SEEK_SET));
    MPI_OK(MPI_File_iwrite_all(fh, out[0], N, MPI_DOUBLE, &req[0]));
    MPI_OK(MPI_Wait(&req[0], &st));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_File_iread_at_all(fh, base + (MPI_Offset)other * N, in[2], N, MPI_DOUBLE, &req[0]));
    MPI_OK(MPI_Wait(&req[0], &st));
    for (int i = 0; i < N; i++)
        CHECK(in[2][i] == other * 1e6 + i, "iread_at_all [%d]", i);

    /* Split collectives. */
    MPI_OK(MPI_File_write_at_all_begin(fh, base + (MPI_Offset)tu_rank * N, out[3], N, MPI_DOUBLE));
    MPI_OK(MPI_File_write_at_all_end(fh, out[3], &st));
    int got;
    MPI_OK(MPI_Get_count(&st, MPI_DOUBLE, &got));
    CHECK(got == N, "write_at_all_end count %d", got);
    MPI_OK(MPI_File_seek(fh, base + (MPI_Offset)other * N, MPI_SEEK_SET));
    MPI_OK(MPI_File_read_all_begin(fh, in[3], N, MPI_DOUBLE));
    MPI_OK(MPI_File_read_all_end(fh, in[3], &st));
    for (int i = 0; i < N; i++)
        CHECK(in[3][i] == other * 1e6 + 3e3 + i, "read_all split [%d]", i);
    MPI_OK(MPI_File_read_at_all_begin(fh, base + (MPI_Offset)tu_rank * N, in[0], N, MPI_DOUBLE));
    MPI_OK(MPI_File_read_at_all_end(fh, in[0], &st));
    MPI_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    MPI_OK(MPI_File_write_all_begin(fh, out[1], 1, MPI_DOUBLE));
    MPI_OK(MPI_File_write_all_end(fh, out[1], &st));

    /* Shared pointer, nonblocking. */
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    MPI_OK(MPI_File_iwrite_shared(fh, out[2], N, MPI_DOUBLE, &req[0]));
    MPI_OK(MPI_Wait(&req[0], &st));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)size * N, "shared position %lld", (long long)pos);
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    MPI_OK(MPI_File_iread_shared(fh, in[2], N, MPI_DOUBLE, &req[0]));
    MPI_OK(MPI_Wait(&req[0], &st));
    int r = (int)(in[2][0] / 1e6);
    for (int i = 0; i < N; i++)
        CHECK(in[2][i] == r * 1e6 + 2e3 + i, "iread_shared [%d] = %g", i, in[2][i]);

    /* The MPIO_ names of ROMIO-era programs (mpi.h gives them, as MPICH's does). */
#if !defined(MPIO_USES_MPI_REQUEST) || !defined(MPIO_REQUEST_DEFINED) || !defined(HAVE_MPI_GREQUEST)
#error "mpi.h lacks MPICH's MPIO_ macros"
#endif
    MPI_Barrier(MPI_COMM_WORLD); /* every shared-pointer read is done before these writes */
    {
        MPIO_Request mr = MPIO_REQUEST_NULL;
        int done = 0;
        MPI_OK(MPI_File_iwrite_at(fh, (MPI_Offset)tu_rank * N, out[3], N, MPI_DOUBLE, &mr));
        MPI_OK(MPIO_Wait(&mr, &st));
        MPI_OK(MPI_File_iread_at(fh, (MPI_Offset)tu_rank * N, in[3], N, MPI_DOUBLE, &mr));
        while (!done)
            MPI_OK(MPIO_Test(&mr, &done, &st));
        CHECK(mr == MPI_REQUEST_NULL, "MPIO_Test left the request %#x", (unsigned)mr);
        for (int i = 0; i < N; i++)
            CHECK(in[3][i] == out[3][i], "MPIO_ iread [%d] = %g", i, in[3][i]);
    }

    MPI_OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (tu_rank == 0)
        printf("io_nonblocking: OK\n");
    MPI_Finalize();
    return 0;
}
