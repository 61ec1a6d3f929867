/* pack_external32: MPI_Pack_external / MPI_Unpack_external / MPI_Pack_external_size
 * against the external32 table of the standard (MPI-3.1 table 13.2): every predefined
 * type's size, the exact big-endian bytes of known values (C long and wchar_t are
 * narrower in external32 than in memory on LP64: 4 and 2 bytes), round trips, a pair
 * type and a derived struct mixing sizes, and consecutive packs sharing one position.
 * Each rank checks on its own. */
#include "testutil.h"

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

static const struct {
    MPI_Datatype t;
    const char *name;
    MPI_Aint ext;
} sizes[] = {
    {MPI_PACKED, "MPI_PACKED", 1}, {MPI_BYTE, "MPI_BYTE", 1}, {MPI_CHAR, "MPI_CHAR", 1},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1}, {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1},
    {MPI_WCHAR, "MPI_WCHAR", 2}, {MPI_SHORT, "MPI_SHORT", 2},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", 2}, {MPI_INT, "MPI_INT", 4},
    {MPI_UNSIGNED, "MPI_UNSIGNED", 4}, {MPI_LONG, "MPI_LONG", 4},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 4}, {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", 8},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 8}, {MPI_FLOAT, "MPI_FLOAT", 4},
    {MPI_DOUBLE, "MPI_DOUBLE", 8}, {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 16},
    {MPI_C_BOOL, "MPI_C_BOOL", 1}, {MPI_INT8_T, "MPI_INT8_T", 1}, {MPI_INT16_T, "MPI_INT16_T", 2},
    {MPI_INT32_T, "MPI_INT32_T", 4}, {MPI_INT64_T, "MPI_INT64_T", 8},
    {MPI_UINT8_T, "MPI_UINT8_T", 1}, {MPI_UINT16_T, "MPI_UINT16_T", 2},
    {MPI_UINT32_T, "MPI_UINT32_T", 4}, {MPI_UINT64_T, "MPI_UINT64_T", 8},
    {MPI_AINT, "MPI_AINT", 8}, {MPI_COUNT, "MPI_COUNT", 8}, {MPI_OFFSET, "MPI_OFFSET", 8},
    {MPI_C_COMPLEX, "MPI_C_COMPLEX", 8}, {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", 8},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 32},
    {MPI_CHARACTER, "MPI_CHARACTER", 1}, {MPI_LOGICAL, "MPI_LOGICAL", 4},
    {MPI_INTEGER, "MPI_INTEGER", 4}, {MPI_REAL, "MPI_REAL", 4},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8}, {MPI_COMPLEX, "MPI_COMPLEX", 8},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16}, {MPI_INTEGER1, "MPI_INTEGER1", 1},
    {MPI_INTEGER2, "MPI_INTEGER2", 2}, {MPI_INTEGER4, "MPI_INTEGER4", 4},
    {MPI_INTEGER8, "MPI_INTEGER8", 8}, {MPI_REAL4, "MPI_REAL4", 4}, {MPI_REAL8, "MPI_REAL8", 8},
    {MPI_REAL16, "MPI_REAL16", 16}, {MPI_COMPLEX8, "MPI_COMPLEX8", 8},
    {MPI_COMPLEX16, "MPI_COMPLEX16", 16}, {MPI_COMPLEX32, "MPI_COMPLEX32", 32},
    {MPI_CXX_BOOL, "MPI_CXX_BOOL", 1}, {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", 8},
    {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", 16},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", 32},
    /* pairs: the sum of their members */
    {MPI_FLOAT_INT, "MPI_FLOAT_INT", 8}, {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 12},
    {MPI_LONG_INT, "MPI_LONG_INT", 8}, {MPI_SHORT_INT, "MPI_SHORT_INT", 6},
    {MPI_2INT, "MPI_2INT", 8}, {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", 20},
};

/* Packs n items of t from in, checks the bytes against want (len bytes), unpacks into out. */
static void check_bytes(const char *what, const void *in, int n, MPI_Datatype t,
                        const unsigned char *want, int len, void *out)
{
    unsigned char buf[256];
    MPI_Aint size = -1, pos = 0;
    MPI_OK(MPI_Pack_external_size("external32", n, t, &size));
    CHECK(size == len, "%s: MPI_Pack_external_size = %ld, expected %d", what, (long) size, len);
    MPI_OK(MPI_Pack_external("external32", in, n, t, buf, sizeof buf, &pos));
    CHECK(pos == len, "%s: MPI_Pack_external advanced the position to %ld, expected %d", what,
          (long) pos, len);
    for (int i = 0; i < len; i++)
        CHECK(buf[i] == want[i], "%s: packed byte %d is 0x%02x, expected 0x%02x", what, i, buf[i],
              want[i]);
    pos = 0;
    MPI_OK(MPI_Unpack_external("external32", buf, sizeof buf, &pos, out, n, t));
    CHECK(pos == len, "%s: MPI_Unpack_external advanced the position to %ld, expected %d",
          what, (long) pos, len);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        MPI_Aint s = -1;
        MPI_OK(MPI_Pack_external_size("external32", 3, sizes[i].t, &s));
        CHECK(s == 3 * sizes[i].ext, "MPI_Pack_external_size(3, %s) = %ld, expected %ld",
              sizes[i].name, (long) s, (long) (3 * sizes[i].ext));
    }

    {
        long in[3] = {1, -2, 0x7fffffffL}, out[3] = {0};
        const unsigned char want[] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0x7f, 0xff, 0xff, 0xff};
        check_bytes("MPI_LONG", in, 3, MPI_LONG, want, sizeof want, out);
        for (int i = 0; i < 3; i++)
            CHECK(out[i] == in[i], "MPI_LONG: unpacked %ld, expected %ld", out[i], in[i]);
    }
    {
        unsigned long in[2] = {0xfffffffeUL, 3}, out[2] = {0};
        const unsigned char want[] = {0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 3};
        check_bytes("MPI_UNSIGNED_LONG", in, 2, MPI_UNSIGNED_LONG, want, sizeof want, out);
        CHECK(out[0] == 0xfffffffeUL && out[1] == 3,
              "MPI_UNSIGNED_LONG: unpacked %lx %lx (must not be sign-extended)", out[0], out[1]);
    }
    {
        wchar_t in[2] = {L'A', 0xac00}, out[2] = {0};
        const unsigned char want[] = {0, 0x41, 0xac, 0};
        check_bytes("MPI_WCHAR", in, 2, MPI_WCHAR, want, sizeof want, out);
        CHECK(out[0] == in[0] && out[1] == in[1], "MPI_WCHAR: unpacked %x %x", (unsigned) out[0],
              (unsigned) out[1]);
    }
    {
        long long in[1] = {-2}, out[1] = {0};
        const unsigned char want[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};
        check_bytes("MPI_LONG_LONG_INT", in, 1, MPI_LONG_LONG_INT, want, sizeof want, out);
        CHECK(out[0] == -2, "MPI_LONG_LONG_INT: unpacked %lld", out[0]);
    }
    {
        short in[1] = {0x0102};
        short out[1] = {0};
        const unsigned char want[] = {1, 2};
        check_bytes("MPI_SHORT", in, 1, MPI_SHORT, want, sizeof want, out);
        CHECK(out[0] == 0x0102, "MPI_SHORT: unpacked %x", out[0]);
    }
    {
        double in[1] = {1.0}, out[1] = {0};
        const unsigned char want[] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
        check_bytes("MPI_DOUBLE", in, 1, MPI_DOUBLE, want, sizeof want, out);
        CHECK(out[0] == 1.0, "MPI_DOUBLE: unpacked %g", out[0]);
    }
    {
        float _Complex in[1] = {1.0f + 2.0f * I}, out[1] = {0};
        const unsigned char want[] = {0x3f, 0x80, 0, 0, 0x40, 0, 0, 0};
        check_bytes("MPI_C_FLOAT_COMPLEX", in, 1, MPI_C_FLOAT_COMPLEX, want, sizeof want, out);
        CHECK(out[0] == in[0], "MPI_C_FLOAT_COMPLEX: round trip");
    }
    {
        long double in[1] = {-2.0L}, out[1] = {0};
        unsigned char want[16] = {0xc0, 0};
        check_bytes("MPI_LONG_DOUBLE", in, 1, MPI_LONG_DOUBLE, want, sizeof want, out);
        CHECK(out[0] == -2.0L, "MPI_LONG_DOUBLE: unpacked %Lg", out[0]);
    }
    {
        bool in[2] = {true, false}, out[2] = {false, true};
        const unsigned char want[] = {1, 0};
        check_bytes("MPI_C_BOOL", in, 2, MPI_C_BOOL, want, sizeof want, out);
        CHECK(out[0] && !out[1], "MPI_C_BOOL: round trip");
    }
    {
        struct {
            long v;
            int i;
        } in[2] = {{-3, 5}, {4, -6}}, out[2];
        memset(out, 0, sizeof out);
        const unsigned char want[] = {0xff, 0xff, 0xff, 0xfd, 0, 0, 0, 5,
                                      0,    0,    0,    4,    0xff, 0xff, 0xff, 0xfa};
        check_bytes("MPI_LONG_INT", in, 2, MPI_LONG_INT, want, sizeof want, out);
        CHECK(out[0].v == -3 && out[0].i == 5 && out[1].v == 4 && out[1].i == -6,
              "MPI_LONG_INT: round trip");
    }

    /* A struct { char c; long l; wchar_t w; double d } with a vector of it: 1 + 4 + 2 + 8
     * bytes an item in external32, in type-map order, whatever the padding in memory. */
    {
        struct S {
            char c;
            long l;
            wchar_t w;
            double d;
        } in[2] = {{'x', -1, L'z', 0.5}, {'y', 65536, 0x263a, -4.0}}, out[2];
        int bl[4] = {1, 1, 1, 1};
        MPI_Aint d[4] = {offsetof(struct S, c), offsetof(struct S, l), offsetof(struct S, w),
                         offsetof(struct S, d)};
        MPI_Datatype ts[4] = {MPI_CHAR, MPI_LONG, MPI_WCHAR, MPI_DOUBLE}, st, v;
        MPI_OK(MPI_Type_create_struct(4, bl, d, ts, &st));
        MPI_OK(MPI_Type_contiguous(2, st, &v));
        MPI_OK(MPI_Type_commit(&v));
        const unsigned char want[] = {'x', 0xff, 0xff, 0xff, 0xff, 0, 'z', 0x3f, 0xe0, 0, 0, 0, 0, 0, 0,
                                      'y', 0, 1, 0, 0, 0x26, 0x3a, 0xc0, 0x10, 0, 0, 0, 0, 0, 0};
        memset(out, 0, sizeof out);
        check_bytes("struct of char, long, wchar_t, double", in, 1, v, want, sizeof want, out);
        for (int i = 0; i < 2; i++)
            CHECK(out[i].c == in[i].c && out[i].l == in[i].l && out[i].w == in[i].w &&
                      out[i].d == in[i].d,
                  "struct item %d: round trip", i);

        /* Two packs into one buffer: positions in external32 bytes. */
        unsigned char buf[128];
        MPI_Aint pos = 0;
        long l3[3] = {7, 8, 9};
        MPI_OK(MPI_Pack_external("external32", l3, 3, MPI_LONG, buf, sizeof buf, &pos));
        MPI_OK(MPI_Pack_external("external32", in, 1, v, buf, sizeof buf, &pos));
        CHECK(pos == 12 + 30, "two packs: position %ld, expected 42", (long) pos);
        CHECK(memcmp(buf + 12, want, sizeof want) == 0, "two packs: second pack's bytes differ");
        /* A buffer one byte short is an error (MPI_ERR_TRUNCATE in MPICH), not a short pack. */
        pos = 0;
        int rc = MPI_Pack_external("external32", l3, 3, MPI_LONG, buf, 11, &pos);
        CHECK(rc != MPI_SUCCESS, "packing 12 bytes into 11 succeeded");
        long back[3] = {0};
        pos = 0;
        MPI_OK(MPI_Unpack_external("external32", buf, 12, &pos, back, 3, MPI_LONG));
        CHECK(pos == 12 && back[0] == 7 && back[2] == 9, "unpack of three longs from 12 bytes");
        MPI_Type_free(&v);
        MPI_Type_free(&st);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (tu_rank == 0)
        printf("pack_external32: OK\n");
    MPI_Finalize();
    return 0;
}
