/* MPI-IO file views: each rank writes its interleaved part of a file collectively through
 * a filetype with holes (resized vector, subarray, darray), and rank 0 reads the whole
 * file back through the default byte view and checks every value's place. Also: reading
 * through a view into a non-contiguous memory type, MPI_File_get_view, byte offsets
 * under a view, MPI_DISPLACEMENT_CURRENT refused outside sequential mode, type maps a
 * view may not have, datareps ("external32" converting ints to big-endian). Collective
 * writes through views with holes on a file opened MPI_MODE_WRONLY (the holes cannot be
 * read to fill them), by every collective write call. Views whose filetype holds no data
 * on some ranks (HDF5 gives them to ranks without data): the others' views still apply.
 * argv[1]: a directory for the files. */
#include "testutil.h"

/* Rank 0 reads `n` ints of the whole file through a plain view; returns them. */
static int *read_whole(MPI_File fh, int n)
{
    int *all = tu_malloc(n * sizeof(int));
    MPI_Status st;
    int got;
    MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    if (tu_rank == 0) {
        MPI_OK(MPI_File_read_at(fh, 0, all, n, MPI_INT, &st));
        MPI_OK(MPI_Get_count(&st, MPI_INT, &got));
        CHECK(got == n, "whole file: %d ints, expected %d", got, n);
    }
    return all;
}

int main(int argc, char **argv)
{
    int size;
    char p[600];
    MPI_File fh;
    MPI_Status st;
    tu_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc > 1, "usage: io_views DIR");
    snprintf(p, sizeof p, "%s/views", argv[1]);
    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));

    /* 1. Blocks of B ints, round robin over the ranks: a vector resized to a whole round. */
    enum { B = 3, NB = 50 };
    MPI_Datatype vec, ftype;
    MPI_Type_vector(NB, B, B * size, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)NB * B * size * sizeof(int), &ftype);
    MPI_Type_commit(&ftype);
    MPI_Type_free(&vec);
    int mine[2 * NB * B];
    for (int i = 0; i < 2 * NB * B; i++)
        mine[i] = tu_rank * 1000000 + i;
    MPI_OK(MPI_File_set_view(fh, (MPI_Offset)tu_rank * B * sizeof(int), MPI_INT, ftype, "native", MPI_INFO_NULL));
    MPI_Type_free(&ftype); /* the view keeps its own copy */
    /* Two tiles: the second write goes through the individual pointer. */
    MPI_OK(MPI_File_write_all(fh, mine, NB * B, MPI_INT, &st));
    MPI_OK(MPI_File_write_all(fh, mine + NB * B, NB * B, MPI_INT, &st));
    /* Only even ranks rewrite their first tile: the odd ranks' blocks between theirs are
     * holes of that collective write and must keep their data. */
    int even = tu_rank % 2 == 0;
    for (int i = 0; i < NB * B; i++)
        mine[i] += even ? 500000 : 0;
    MPI_OK(MPI_File_write_at_all(fh, 0, mine, even ? NB * B : 0, MPI_INT, &st));
    MPI_Offset off;
    MPI_OK(MPI_File_get_byte_offset(fh, B + 1, &off));
    CHECK(off == (MPI_Offset)(tu_rank * B + B * size + 1) * sizeof(int), "byte offset %lld", (long long)off);
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    int tsize;
    MPI_Type_size(ft, &tsize);
    CHECK(disp == (MPI_Offset)tu_rank * B * sizeof(int) && et == MPI_INT && tsize == NB * B * (int)sizeof(int) && strcmp(rep, "native") == 0,
          "get_view: disp %lld size %d rep %s", (long long)disp, tsize, rep);
    MPI_Type_free(&ft);
    /* Read back through the view into every other int of memory. */
    MPI_Datatype strided;
    MPI_Type_vector(NB * B, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    int back[4 * NB * B];
    memset(back, 0xff, sizeof back);
    MPI_OK(MPI_File_read_at_all(fh, NB * B, back, 1, strided, &st));
    int got;
    MPI_OK(MPI_Get_count(&st, strided, &got));
    CHECK(got == 1, "strided read count %d", got);
    MPI_OK(MPI_Get_elements(&st, MPI_INT, &got));
    CHECK(got == NB * B, "strided read elements %d", got);
    for (int i = 0; i < NB * B; i++) {
        CHECK(back[2 * i] == mine[NB * B + i], "strided read [%d] = %d", i, back[2 * i]);
        CHECK(back[2 * i + 1] == -1, "strided read wrote a hole at %d", 2 * i + 1);
    }
    MPI_Type_free(&strided);
    int n = 2 * NB * B * size;
    int *all = read_whole(fh, n);
    if (tu_rank == 0)
        for (int j = 0; j < n; j++) {
            int k = j / B, r = k % size, i = (k / size) * B + j % B;
            int want = r * 1000000 + i + (r % 2 == 0 && i < NB * B ? 500000 : 0);
            CHECK(all[j] == want, "vector view: file int %d = %d, expected %d", j, all[j], want);
        }
    free(all);

    /* 2. A 2-D array of R x (C * size) ints, column block per rank (subarray). */
    enum { R = 7, C = 5 };
    int gsizes[2] = {R, C * size}, lsizes[2] = {R, C}, starts[2] = {0, C * tu_rank};
    MPI_Type_create_subarray(2, gsizes, lsizes, starts, MPI_ORDER_C, MPI_INT, &ftype);
    MPI_Type_commit(&ftype);
    int local[R * C];
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            local[r * C + c] = r * 1000 + C * tu_rank + c;
    MPI_OK(MPI_File_set_size(fh, 0));
    /* Collective buffering off (the hint ROMIO reads), then on for the darray below:
     * both paths must give the same file. */
    MPI_Info cb;
    MPI_Info_create(&cb);
    MPI_Info_set(cb, "romio_cb_write", "disable");
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, ftype, "native", cb));
    MPI_OK(MPI_File_write_all(fh, local, R * C, MPI_INT, &st));
    memset(local, 0, sizeof local);
    MPI_OK(MPI_File_read_at_all(fh, 0, local, R * C, MPI_INT, &st));
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            CHECK(local[r * C + c] == r * 1000 + C * tu_rank + c, "subarray read back (%d,%d)", r, c);
    MPI_Type_free(&ftype);
    all = read_whole(fh, R * C * size);
    if (tu_rank == 0)
        for (int r = 0; r < R; r++)
            for (int c = 0; c < C * size; c++)
                CHECK(all[r * C * size + c] == r * 1000 + c, "subarray view: (%d,%d) = %d", r, c, all[r * C * size + c]);
    free(all);

    /* 3. A cyclic(2) distribution of N ints (darray): the file holds 0..N-1. */
    enum { N = 101 };
    int gs = N, distrib = MPI_DISTRIBUTE_CYCLIC, darg = 2, psize = size;
    MPI_Type_create_darray(size, tu_rank, 1, &gs, &distrib, &darg, &psize, MPI_ORDER_C, MPI_INT, &ftype);
    MPI_Type_commit(&ftype);
    int vals[N], nv = 0;
    for (int e = 0; e < N; e++)
        if ((e / 2) % size == tu_rank)
            vals[nv++] = e;
    MPI_OK(MPI_File_set_size(fh, 0));
    MPI_Info_set(cb, "romio_cb_write", "enable");
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, ftype, "native", cb));
    MPI_Info_free(&cb);
    MPI_OK(MPI_File_write_at_all(fh, 0, vals, nv, MPI_INT, &st));
    MPI_Type_free(&ftype);
    all = read_whole(fh, N);
    if (tu_rank == 0)
        for (int e = 0; e < N; e++)
            CHECK(all[e] == e, "darray view: file int %d = %d", e, all[e]);
    free(all);

    /* Data representations and argument errors (collective: every rank gets them). */
    int rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL);
    CHECK(tu_error_class(rc) == MPI_ERR_UNSUPPORTED_DATAREP, "unknown datarep: class %d", tu_error_class(rc));
    rc = MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    CHECK(tu_error_class(rc) == MPI_ERR_ARG, "DISPLACEMENT_CURRENT: class %d", tu_error_class(rc));
    MPI_OK(MPI_File_set_view(fh, 4, MPI_INT, MPI_INT, "internal", MPI_INFO_NULL));
    rc = MPI_File_write_at(fh, 0, vals, 3, MPI_SHORT, &st);
    CHECK(tu_error_class(rc) == MPI_ERR_IO, "data not a whole number of etypes: class %d", tu_error_class(rc));
    MPI_OK(MPI_File_read_at(fh, 0, vals, 2, MPI_INT, &st));
    CHECK(vals[0] == 1 && vals[1] == 2, "disp 4: %d %d", vals[0], vals[1]);

    /* Type maps a view may not have (MPI_ERR_IO, as ROMIO). */
    int bl[2] = {1, 1}, dd[2] = {3, 0};
    MPI_Type_indexed(2, bl, dd, MPI_INT, &ftype);
    MPI_Type_commit(&ftype);
    rc = MPI_File_set_view(fh, 0, MPI_INT, ftype, "native", MPI_INFO_NULL);
    CHECK(tu_error_class(rc) == MPI_ERR_IO, "decreasing filetype: class %d", tu_error_class(rc));
    MPI_Type_free(&ftype);

    /* external32: big-endian ints in the file, native ones in memory. */
    MPI_OK(MPI_File_set_size(fh, 0));
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    int x = 0x01020304 + tu_rank, y = 0;
    MPI_OK(MPI_File_write_at_all(fh, tu_rank, &x, 1, MPI_INT, &st));
    MPI_OK(MPI_File_read_at(fh, tu_rank, &y, 1, MPI_INT, &st));
    CHECK(y == x, "external32 read back %#x, expected %#x", y, x);
    MPI_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    unsigned char raw[4];
    MPI_OK(MPI_File_read_at(fh, 4 * tu_rank, raw, 4, MPI_BYTE, &st));
    CHECK(raw[0] == 1 && raw[1] == 2 && raw[2] == 3 && raw[3] == 4 + tu_rank, "external32 bytes %02x %02x %02x %02x", raw[0], raw[1], raw[2], raw[3]);
    /* OxMPI's limit (docs/limitations.md): external32 of types that change size. */
    rc = MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL);
    if (!getenv("IO_LENIENT"))
        CHECK(tu_error_class(rc) == MPI_ERR_UNSUPPORTED_DATAREP, "external32 of C long: class %d", tu_error_class(rc));

    MPI_OK(MPI_File_close(&fh));

    /* Write-only: one int every 2 ints per rank (holes nobody writes), by each collective
     * write form in turn, on a file that had other bytes before; read back afterwards. */
    {
        char q[640];
        snprintf(q, sizeof q, "%s.wronly", p);
        enum { K = 64 };
        /* A tile: K ints with one-int holes, then the other ranks' tiles. */
        MPI_Datatype every2, hole;
        MPI_Type_vector(K, 1, 2, MPI_INT, &every2);
        MPI_Type_create_resized(every2, 0, (MPI_Aint)size * 2 * K * sizeof(int), &hole);
        MPI_Type_commit(&hole);
        MPI_Type_free(&every2);
        if (tu_rank == 0) {
            MPI_File pre;
            int fill[2 * K * 4 * 16];
            for (int i = 0; i < 2 * K * 4 * 16; i++)
                fill[i] = -7;
            MPI_OK(MPI_File_open(MPI_COMM_SELF, q, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &pre));
            MPI_OK(MPI_File_write_at(pre, 0, fill, 2 * K * 4 * size < 2 * K * 4 * 16 ? 2 * K * 4 * size : 2 * K * 4 * 16, MPI_INT, &st));
            MPI_OK(MPI_File_close(&pre));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_OK(MPI_File_open(MPI_COMM_WORLD, q, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
        /* Rank r's part: 4 tiles of 2K ints (K of its ints, K holes), tiles in rank order. */
        MPI_OK(MPI_File_set_view(fh, (MPI_Offset)tu_rank * 2 * K * sizeof(int), MPI_INT, hole, "native", MPI_INFO_NULL));
        MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
        int w[4 * K];
        for (int i = 0; i < 4 * K; i++)
            w[i] = tu_rank * 10000 + i;
        /* Tile t of rank r (ints [(t * size + r) * 2K, +2K)) holds its etypes tK..tK+K-1. */
        MPI_OK(MPI_File_write_at_all(fh, 0, w, K, MPI_INT, &st));
        MPI_OK(MPI_File_seek(fh, K, MPI_SEEK_SET));
        MPI_OK(MPI_File_write_all(fh, w + K, K, MPI_INT, &st));
        MPI_OK(MPI_File_write_at_all_begin(fh, 2 * K, w + 2 * K, K, MPI_INT));
        MPI_OK(MPI_File_write_at_all_end(fh, w + 2 * K, &st));
        MPI_Request wr;
        MPI_OK(MPI_File_iwrite_at_all(fh, 3 * K, w + 3 * K, K, MPI_INT, &wr));
        MPI_OK(MPI_Wait(&wr, &st));
        MPI_OK(MPI_File_close(&fh));
        MPI_Type_free(&hole);
        MPI_Barrier(MPI_COMM_WORLD);
        if (tu_rank == 0) {
            int n = 4 * size * 2 * K, *all = tu_malloc(n * sizeof(int));
            MPI_File rd;
            MPI_OK(MPI_File_open(MPI_COMM_SELF, q, MPI_MODE_RDONLY, MPI_INFO_NULL, &rd));
            MPI_OK(MPI_File_read_at(rd, 0, all, n, MPI_INT, &st));
            MPI_OK(MPI_File_close(&rd));
            /* The layout: tile t of rank r = ints [(t*size+r)*2K, +2K): its ints at even places. */
            for (int t = 0; t < 4; t++)
                for (int r = 0; r < size; r++)
                    for (int i = 0; i < 2 * K; i++) {
                        int at = (t * size + r) * 2 * K + i;
                        int want = i % 2 ? (at < 2 * K * 4 * 16 ? -7 : 0) : r * 10000 + t * K + i / 2;
                        CHECK(all[at] == want, "write-only file: int %d is %d, expected %d", at, all[at], want);
                    }
            free(all);
            MPI_OK(MPI_File_delete(q, MPI_INFO_NULL));
        }
    }
    /* Odd ranks have an empty filetype (hindexed of no blocks); even ranks write 100
     * bytes at 1000 + 100 * rank through a one-block filetype, collectively. */
    {
        char q[640];
        snprintf(q, sizeof q, "%s.empty", p);
        MPI_OK(MPI_File_open(MPI_COMM_WORLD, q, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
        MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
        int odd = tu_rank % 2, bl = 100, rc;
        MPI_Aint d0 = 0;
        MPI_Datatype ft;
        MPI_OK(MPI_Type_create_hindexed(odd ? 0 : 1, &bl, &d0, MPI_BYTE, &ft));
        MPI_OK(MPI_Type_commit(&ft));
        MPI_Offset disp = 1000 + 100 * tu_rank;
        MPI_OK(MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL));
        MPI_Type_free(&ft);
        MPI_Offset off = -1;
        MPI_OK(MPI_File_get_byte_offset(fh, 0, &off));
        CHECK(off == disp, "byte offset 0 of the view: %lld, expected %lld", (long long)off, (long long)disp);
        unsigned char b[100];
        memset(b, 'a' + tu_rank, sizeof b);
        MPI_OK(MPI_File_write_at_all(fh, 0, b, odd ? 0 : 100, MPI_BYTE, &st));
        if (odd && !getenv("IO_LENIENT")) {
            /* OxMPI's answers; erroneous by the standard (MPICH reads and writes file bytes
             * somewhere for them). */
            rc = MPI_File_write_at(fh, 0, b, 1, MPI_BYTE, &st);
            CHECK(tu_error_class(rc) == MPI_ERR_IO, "a byte written through an empty view: class %d", tu_error_class(rc));
            int got = -1;
            MPI_OK(MPI_File_read_at(fh, 0, b, 10, MPI_BYTE, &st));
            MPI_OK(MPI_Get_count(&st, MPI_BYTE, &got));
            CHECK(got == 0, "read through an empty view: %d bytes", got);
        }
        MPI_OK(MPI_File_close(&fh));
        MPI_Barrier(MPI_COMM_WORLD);
        if (tu_rank == 0) {
            MPI_File rd;
            int n = 1000 + 100 * size;
            unsigned char *all = tu_malloc(n);
            MPI_OK(MPI_File_open(MPI_COMM_SELF, q, MPI_MODE_RDONLY, MPI_INFO_NULL, &rd));
            MPI_OK(MPI_File_read_at(rd, 0, all, n, MPI_BYTE, &st));
            int got;
            MPI_OK(MPI_Get_count(&st, MPI_BYTE, &got));
            int last_even = (size - 1) / 2 * 2;
            CHECK(got == 1000 + 100 * (last_even + 1), "file of %d bytes, expected %d", got, 1000 + 100 * (last_even + 1));
            for (int i = 1000; i < got; i++) {
                int r = (i - 1000) / 100;
                unsigned char want = r % 2 ? 0 : (unsigned char)('a' + r);
                CHECK(all[i] == want, "byte %d is %d, expected %d", i, all[i], want);
            }
            free(all);
            MPI_OK(MPI_File_close(&rd));
            MPI_OK(MPI_File_delete(q, MPI_INFO_NULL));
        }
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (tu_rank == 0) {
        MPI_OK(MPI_File_delete(p, MPI_INFO_NULL));
        printf("io_views: OK\n");
    }
    MPI_Finalize();
    return 0;
}
