/* User data representations (MPI_Register_datarep and _c): registration and its errors
 * (a name used twice or predefined, a NULL name or extent function), a view in a
 * registered representation whose conversion functions store each int byte-reversed and
 * XORed with a key. Written collectively and independently, contiguous and through a
 * strided memory type, nonblocking too; the file's raw bytes checked through a native view,
 * read back through the representation (a short read at the end of the file converts
 * only the items read); the extent function consulted by MPI_File_get_type_extent;
 * MPI_CONVERSION_FN_NULL storing native data; a conversion function's error reported as
 * MPI_ERR_CONVERSION; a representation whose file extents differ from the memory sizes
 * refused (OxMPI's limit, docs/limitations.md). argv[1]: a directory for the files. */
#include "testutil.h"
#include <string.h>

#define KEY 0x5a5a5a5au

/* What the callbacks of one representation share: calls counted, behaviour chosen. */
struct rep_state {
    int extent_calls, conversions;
    int wide; /* the extent function doubles every size */
    int fail; /* the conversion functions fail */
};

static unsigned to_file(unsigned v)
{
    return __builtin_bswap32(v) ^ KEY;
}

static unsigned from_file(unsigned f)
{
    return __builtin_bswap32(f ^ KEY);
}

static int extent_fn(MPI_Datatype t, MPI_Aint *extent, void *extra)
{
    struct rep_state *s = extra;
    int size;
    MPI_Type_size(t, &size);
    s->extent_calls++;
    *extent = s->wide ? 2 * size : size;
    return MPI_SUCCESS;
}

/* The int-only user types of this test: `count` ints in the file are whole items of
 * `type` (size/4 ints each) packed, so MPI_Pack/MPI_Unpack place them. */
static int convert(void *userbuf, MPI_Datatype type, MPI_Count count, void *filebuf, MPI_Offset position, void *extra, int reading)
{
    struct rep_state *s = extra;
    int size, pos = 0;
    s->conversions++;
    if (s->fail)
        return MPI_ERR_OTHER;
    MPI_Type_size(type, &size);
    CHECK(position == 0, "conversion asked to start at data item %lld", (long long)position);
    CHECK(count % (size / 4) == 0, "%lld ints are not whole items of %d bytes", (long long)count, size);
    int items = (int)(count / (size / 4));
    unsigned *f = filebuf, *tmp = tu_malloc(count * sizeof(unsigned) + 1);
    if (reading) {
        for (MPI_Count i = 0; i < count; i++)
            tmp[i] = from_file(f[i]);
        MPI_Unpack(tmp, (int)(count * 4), &pos, userbuf, items, type, MPI_COMM_SELF);
    } else {
        MPI_Pack(userbuf, items, type, tmp, (int)(count * 4), &pos, MPI_COMM_SELF);
        for (MPI_Count i = 0; i < count; i++)
            f[i] = to_file(tmp[i]);
    }
    free(tmp);
    return MPI_SUCCESS;
}

static int read_fn(void *u, MPI_Datatype t, int count, void *f, MPI_Offset pos, void *x)
{
    return convert(u, t, count, f, pos, x, 1);
}

static int write_fn(void *u, MPI_Datatype t, int count, void *f, MPI_Offset pos, void *x)
{
    return convert(u, t, count, f, pos, x, 0);
}

static int read_fn_c(void *u, MPI_Datatype t, MPI_Count count, void *f, MPI_Offset pos, void *x)
{
    return convert(u, t, count, f, pos, x, 1);
}

static int write_fn_c(void *u, MPI_Datatype t, MPI_Count count, void *f, MPI_Offset pos, void *x)
{
    return convert(u, t, count, f, pos, x, 0);
}

enum { N = 100 };

/* The N ints of this rank in the file, as stored (through a native view). */
static void raw_ints(MPI_File fh, unsigned *raw)
{
    MPI_Status st;
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_OK(MPI_File_read_at(fh, (MPI_Offset)tu_rank * N, raw, N, MPI_INT, &st));
}

int main(int argc, char **argv)
{
    int size, rc, got;
    char p[600], rep[MPI_MAX_DATAREP_STRING];
    static struct rep_state swap, wide = {.wide = 1}, fail = {.fail = 1}, null_rep, swap_c;
    MPI_File fh;
    MPI_Status st;
    tu_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc > 1, "usage: io_datarep DIR");
    snprintf(p, sizeof p, "%s/datarep", argv[1]);

    /* Registration, and its errors through MPI_FILE_NULL's handler (MPI_ERRORS_RETURN). */
    MPI_OK(MPI_Register_datarep("oxmpi-swap", read_fn, write_fn, extent_fn, &swap));
    rc = MPI_Register_datarep("oxmpi-swap", read_fn, write_fn, extent_fn, &swap);
    CHECK(tu_error_class(rc) == MPI_ERR_DUP_DATAREP, "registered twice: class %d", tu_error_class(rc));
    const char *predefined[] = {"native", "internal", "external32"};
    for (int i = 0; i < 3; i++) {
        rc = MPI_Register_datarep(predefined[i], MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent_fn, NULL);
        CHECK(tu_error_class(rc) == MPI_ERR_DUP_DATAREP, "registering \"%s\": class %d", predefined[i], tu_error_class(rc));
    }
    rc = MPI_Register_datarep("oxmpi-noextent", read_fn, write_fn, NULL, NULL);
    CHECK(tu_error_class(rc) == MPI_ERR_ARG, "NULL extent function: class %d", tu_error_class(rc));
    rc = MPI_Register_datarep("", read_fn, write_fn, extent_fn, NULL);
    CHECK(tu_error_class(rc) == MPI_ERR_ARG, "empty name: class %d", tu_error_class(rc));
    MPI_OK(MPI_Register_datarep("oxmpi-wide", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent_fn, &wide));
    MPI_OK(MPI_Register_datarep("oxmpi-fail", read_fn, write_fn, extent_fn, &fail));
    MPI_OK(MPI_Register_datarep("oxmpi-null", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent_fn, &null_rep));
    MPI_OK(MPI_Register_datarep_c("oxmpi-swap-c", read_fn_c, write_fn_c, extent_fn, &swap_c));
    rc = MPI_Register_datarep_c("oxmpi-swap", read_fn_c, write_fn_c, extent_fn, &swap_c);
    CHECK(tu_error_class(rc) == MPI_ERR_DUP_DATAREP, "_c registering a used name: class %d", tu_error_class(rc));

    MPI_OK(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    unsigned vals[N], raw[N], back[N];
    for (int i = 0; i < N; i++)
        vals[i] = 0x01000000u * (unsigned)(tu_rank + 1) + 0x10000u * (unsigned)i + 0x0203u;

    /* 1. A collective write through the representation: the file holds the converted ints. */
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "oxmpi-swap", MPI_INFO_NULL));
    MPI_Datatype et, ft;
    MPI_OK(MPI_File_get_view(fh, &(MPI_Offset){0}, &et, &ft, rep));
    CHECK(strcmp(rep, "oxmpi-swap") == 0, "get_view gives datarep \"%s\"", rep);
    CHECK(swap.extent_calls > 0, "the extent function was not consulted by MPI_File_set_view");
    MPI_OK(MPI_File_write_at_all(fh, (MPI_Offset)tu_rank * N, vals, N, MPI_INT, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &got));
    CHECK(got == N, "write_at_all: count %d", got);
    CHECK(swap.conversions > 0, "the write conversion function was not called");
    raw_ints(fh, raw);
    for (int i = 0; i < N; i++)
        CHECK(raw[i] == to_file(vals[i]), "file int %d is %#x, expected %#x (converted %#x)", i, raw[i], to_file(vals[i]), vals[i]);

    /* 2. Read back through the representation, contiguous. */
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "oxmpi-swap", MPI_INFO_NULL));
    memset(back, 0, sizeof back);
    MPI_OK(MPI_File_read_at(fh, (MPI_Offset)tu_rank * N, back, N, MPI_INT, &st));
    for (int i = 0; i < N; i++)
        CHECK(back[i] == vals[i], "read back int %d: %#x, expected %#x", i, back[i], vals[i]);
    MPI_Aint fext = 0;
    int calls = swap.extent_calls;
    MPI_OK(MPI_File_get_type_extent(fh, MPI_INT, &fext));
    CHECK(fext == 4 && swap.extent_calls > calls, "get_type_extent(MPI_INT) = %ld (extent function called %d times)", (long)fext, swap.extent_calls - calls);

    /* 3. Through a strided memory type (5 items of 10 blocks of 2 ints, stride 5): read
     * places each int at its spot and leaves the gaps; a nonblocking write the same way. */
    MPI_Datatype vec;
    MPI_Type_vector(10, 2, 5, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    enum { EXT = 47, ITEMS = 5 };
    unsigned strided[ITEMS * EXT];
    for (int i = 0; i < ITEMS * EXT; i++)
        strided[i] = 0xdeadbeefu;
    MPI_OK(MPI_File_read_at(fh, (MPI_Offset)tu_rank * N, strided, ITEMS, vec, &st));
    MPI_OK(MPI_Get_count(&st, vec, &got));
    CHECK(got == ITEMS, "strided read: %d items", got);
    char is_data[ITEMS * EXT] = {0};
    for (int k = 0, e = 0; k < ITEMS; k++)
        for (int b = 0; b < 10; b++)
            for (int w = 0; w < 2; w++, e++) {
                int at = k * EXT + b * 5 + w;
                is_data[at] = 1;
                CHECK(strided[at] == vals[e], "strided read: item %d block %d int %d is %#x, expected %#x", k, b, w, strided[at], vals[e]);
            }
    for (int i = 0; i < ITEMS * EXT; i++)
        CHECK(is_data[i] || strided[i] == 0xdeadbeefu, "strided read wrote gap int %d: %#x", i, strided[i]);
    for (int k = 0, e = 0; k < ITEMS; k++)
        for (int b = 0; b < 10; b++)
            for (int w = 0; w < 2; w++, e++)
                strided[k * EXT + b * 5 + w] = vals[e] ^ 0x00ff00ffu;
    MPI_Request req;
    MPI_OK(MPI_File_iwrite_at(fh, (MPI_Offset)tu_rank * N, strided, ITEMS, vec, &req));
    MPI_OK(MPI_Wait(&req, &st));
    MPI_OK(MPI_File_iread_at(fh, (MPI_Offset)tu_rank * N, back, N, MPI_INT, &req));
    MPI_OK(MPI_Wait(&req, &st));
    for (int i = 0; i < N; i++)
        CHECK(back[i] == (vals[i] ^ 0x00ff00ffu), "after the strided write, int %d: %#x, expected %#x", i, back[i], vals[i] ^ 0x00ff00ffu);
    raw_ints(fh, raw);
    for (int i = 0; i < N; i++)
        CHECK(raw[i] == to_file(vals[i] ^ 0x00ff00ffu), "strided write: file int %d is %#x", i, raw[i]);
    MPI_Type_free(&vec);

    /* 4. A short read at the end of the file: 6 ints there, 10 asked for; the other 4
     * stay as they were. */
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "oxmpi-swap", MPI_INFO_NULL));
    MPI_OK(MPI_File_write_at_all(fh, (MPI_Offset)tu_rank * N, vals, N, MPI_INT, &st));
    for (int i = 0; i < 10; i++)
        back[i] = 7;
    MPI_OK(MPI_File_read_at(fh, (MPI_Offset)size * N - 6, back, 10, MPI_INT, &st));
    MPI_OK(MPI_Get_count(&st, MPI_INT, &got));
    CHECK(got == 6, "short read: %d ints, expected 6", got);
    for (int i = 0; i < 6; i++) {
        unsigned want = 0x01000000u * (unsigned)size + 0x10000u * (unsigned)(N - 6 + i) + 0x0203u;
        CHECK(back[i] == want, "short read int %d: %#x, expected %#x", i, back[i], want);
    }
    for (int i = 6; i < 10; i++)
        CHECK(back[i] == 7, "short read changed int %d past the end: %#x", i, back[i]);

    /* 5. MPI_CONVERSION_FN_NULL: native bytes. */
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "oxmpi-null", MPI_INFO_NULL));
    MPI_OK(MPI_File_write_at(fh, (MPI_Offset)tu_rank * N, vals, N, MPI_INT, &st));
    MPI_OK(MPI_File_read_at(fh, (MPI_Offset)tu_rank * N, back, N, MPI_INT, &st));
    CHECK(memcmp(back, vals, sizeof vals) == 0, "oxmpi-null read back differs");
    MPI_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_OK(MPI_File_sync(fh));
    raw_ints(fh, raw);
    CHECK(memcmp(raw, vals, sizeof vals) == 0, "MPI_CONVERSION_FN_NULL did not store native ints");

    /* 6. A conversion function's error: MPI_ERR_CONVERSION, nothing written. */
    MPI_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "oxmpi-fail", MPI_INFO_NULL));
    rc = MPI_File_write_at(fh, (MPI_Offset)tu_rank * N, back, N, MPI_INT, &st);
    CHECK(tu_error_class(rc) == MPI_ERR_CONVERSION, "failing write conversion: class %d", tu_error_class(rc));
    rc = MPI_File_read_at(fh, (MPI_Offset)tu_rank * N, back, N, MPI_INT, &st);
    CHECK(tu_error_class(rc) == MPI_ERR_CONVERSION, "failing read conversion: class %d", tu_error_class(rc));
    CHECK(fail.conversions == 2, "the failing conversion functions ran %d times", fail.conversions);
    raw_ints(fh, raw);
    CHECK(memcmp(raw, vals, sizeof vals) == 0, "a failed conversion changed the file");

    /* 7. The large-count conversion functions, through the individual file pointer. */
    MPI_OK(MPI_File_set_view(fh, (MPI_Offset)tu_rank * N * 4, MPI_INT, MPI_INT, "oxmpi-swap-c", MPI_INFO_NULL));
    MPI_OK(MPI_File_write_all_c(fh, vals, N, MPI_INT, &st));
    CHECK(swap_c.conversions > 0, "the large-count write conversion was not called");
    raw_ints(fh, raw);
    for (int i = 0; i < N; i++)
        CHECK(raw[i] == to_file(vals[i]), "oxmpi-swap-c: file int %d is %#x", i, raw[i]);

    /* 8. OxMPI's limit: file extents that differ from the memory sizes. */
    rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "oxmpi-wide", MPI_INFO_NULL);
    if (!getenv("IO_LENIENT"))
        CHECK(tu_error_class(rc) == MPI_ERR_UNSUPPORTED_DATAREP, "a representation of 8-byte ints: class %d", tu_error_class(rc));
    rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "oxmpi-unregistered", MPI_INFO_NULL);
    CHECK(tu_error_class(rc) == MPI_ERR_UNSUPPORTED_DATAREP, "an unregistered name: class %d", tu_error_class(rc));

    MPI_OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (tu_rank == 0)
        printf("io_datarep: OK\n");
    MPI_Finalize();
    return 0;
}
