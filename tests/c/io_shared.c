/* MPI-IO shared file pointer: every rank appends N records with MPI_File_write_shared
 * (the file then holds each record exactly once), ordered writes and reads (rank order),
 * their split forms, read_shared, seek_shared / get_position_shared, and sequential mode
 * (individual pointers refused). argv[1]: a directory for the files. */
#include "testutil.h"

enum { N = 40, W = 4 }; /* records per rank, ints per record */

int main(int argc, char **argv)
{
    int size;
    char p[600];
    MPI_File fh;
    MPI_Status st;
    tu_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc > 1, "usage: io_shared DIR");
    snprintf(p, sizeof p, "%s/shared", argv[1]);
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));

    /* Records of W ints: (rank, index, rank ^ index, magic). */
    MPI_Datatype rec;
    MPI_Type_contiguous(W, MPI_INT, &rec);
    MPI_Type_commit(&rec);
    MPI_OK(MPI_File_set_view(fh, 0, rec, rec, "native", MPI_INFO_NULL));
    for (int i = 0; i < N; i++) {
        int r[W] = {tu_rank, i, tu_rank ^ i, 0x5eed};
        MPI_OK(MPI_File_write_shared(fh, r, 1, rec, &st));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset pos;
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)N * size, "shared position %lld, expected %d", (long long)pos, N * size);
    if (tu_rank == 0) {
        int *all = tu_malloc(sizeof(int) * W * N * size);
        char *seen = calloc(N * size, 1);
        MPI_OK(MPI_File_read_at(fh, 0, all, N * size, rec, &st));
        int got;
        MPI_OK(MPI_Get_count(&st, rec, &got));
        CHECK(got == N * size, "records in the file: %d", got);
        for (int k = 0; k < N * size; k++) {
            int *r = all + W * k;
            CHECK(r[3] == 0x5eed && r[0] >= 0 && r[0] < size && r[1] >= 0 && r[1] < N && r[2] == (r[0] ^ r[1]), "record %d is corrupt", k);
            CHECK(!seen[r[0] * N + r[1]], "record (%d,%d) is in the file twice", r[0], r[1]);
            seen[r[0] * N + r[1]] = 1;
        }
        free(all);
        free(seen);
    }

    /* read_shared: the ranks together read every record once. */
    MPI_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    int count = 0, r[W];
    for (;;) {
        int got;
        MPI_OK(MPI_File_read_shared(fh, r, 1, rec, &st));
        MPI_OK(MPI_Get_count(&st, rec, &got));
        if (got == 0)
            break;
        CHECK(r[3] == 0x5eed, "read_shared record");
        count++;
    }
    int total;
    MPI_Allreduce(&count, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total == N * size, "read_shared read %d records in all", total);

    /* Ordered: rank k's k+1 records follow those of ranks 0..k-1, from the pointer. */
    MPI_OK(MPI_File_seek_shared(fh, 2, MPI_SEEK_SET));
    int ord[W * 64];
    for (int i = 0; i <= tu_rank; i++) {
        int v[W] = {tu_rank, i, -1, 0x0dd};
        memcpy(ord + W * i, v, sizeof v);
    }
    MPI_OK(MPI_File_write_ordered(fh, ord, tu_rank + 1, rec, &st));
    MPI_OK(MPI_File_get_position_shared(fh, &pos));
    int tri = size * (size + 1) / 2;
    CHECK(pos == 2 + tri, "position after ordered write %lld", (long long)pos);
    /* Split form: another round after it. */
    MPI_OK(MPI_File_write_ordered_begin(fh, ord, tu_rank + 1, rec));
    int rc = MPI_File_write_ordered_begin(fh, ord, tu_rank + 1, rec);
    CHECK(tu_error_class(rc) == MPI_ERR_IO, "second split begin: class %d", tu_error_class(rc));
    MPI_OK(MPI_File_write_ordered_end(fh, ord, &st));
    int got;
    MPI_OK(MPI_Get_count(&st, rec, &got));
    CHECK(got == tu_rank + 1, "ordered_end count %d", got);
    if (tu_rank == 0) {
        int *all = tu_malloc(sizeof(int) * W * 2 * tri);
        MPI_OK(MPI_File_read_at(fh, 2, all, 2 * tri, rec, &st));
        int k = 0;
        for (int round = 0; round < 2; round++)
            for (int rk = 0; rk < size; rk++)
                for (int i = 0; i <= rk; i++, k++)
                    CHECK(all[W * k] == rk && all[W * k + 1] == i && all[W * k + 3] == 0x0dd, "ordered record %d: (%d,%d)", k, all[W * k], all[W * k + 1]);
        free(all);
    }
    MPI_OK(MPI_File_seek_shared(fh, 2, MPI_SEEK_SET));
    memset(ord, 0, sizeof ord);
    MPI_OK(MPI_File_read_ordered_begin(fh, ord, tu_rank + 1, rec));
    MPI_OK(MPI_File_read_ordered_end(fh, ord, &st));
    for (int i = 0; i <= tu_rank; i++)
        CHECK(ord[W * i] == tu_rank && ord[W * i + 1] == i, "read_ordered record %d", i);
    MPI_OK(MPI_File_read_ordered(fh, ord, tu_rank + 1, rec, &st));
    for (int i = 0; i <= tu_rank; i++)
        CHECK(ord[W * i] == tu_rank && ord[W * i + 1] == i, "second read_ordered record %d", i);
    rc = MPI_File_read_all_end(fh, ord, &st);
    CHECK(tu_error_class(rc) == MPI_ERR_IO, "end without begin: class %d", tu_error_class(rc));
    MPI_Type_free(&rec);
    MPI_OK(MPI_File_close(&fh));

    /* Sequential mode: only shared pointers; seeking is unsupported. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    rc = MPI_File_seek(fh, 0, MPI_SEEK_SET);
    CHECK(tu_error_class(rc) == MPI_ERR_UNSUPPORTED_OPERATION, "seek in sequential mode: class %d", tu_error_class(rc));
    rc = MPI_File_write_at(fh, 0, r, 1, MPI_INT, &st);
    CHECK(tu_error_class(rc) == MPI_ERR_UNSUPPORTED_OPERATION, "write_at in sequential mode: class %d", tu_error_class(rc));
    MPI_OK(MPI_File_write_ordered(fh, &tu_rank, 1, MPI_INT, &st));
    MPI_OK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(disp == (MPI_Offset)size * sizeof(int), "DISPLACEMENT_CURRENT gave %lld", (long long)disp);
    MPI_OK(MPI_File_close(&fh));

    MPI_Barrier(MPI_COMM_WORLD);
    if (tu_rank == 0)
        printf("io_shared: OK\n");
    MPI_Finalize();
    return 0;
}
