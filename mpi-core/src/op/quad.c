/* Quad-precision (IEEE binary128, gfortran's REAL(16) / COMPLEX(16), MPI_REAL16 and
 * MPI_COMPLEX32) reduction loops. Written in C because stable Rust has no 128-bit float
 * type; GCC's __float128 arithmetic (libgcc's soft-float routines) is correctly rounded.
 * Buffers may be unaligned: every element goes through memcpy.
 * op: 0 MAX, 1 MIN, 2 SUM, 3 PROD, 4 LAND, 5 LOR, 6 LXOR (complex: SUM and PROD only).
 * Returns 0 when the op does not apply. */
#include <stddef.h>
#include <string.h>

typedef __float128 quad;

int oxmpi_quad_reduce(int op, const void *in, void *inout, size_t n)
{
    const unsigned char *x = in;
    unsigned char *y = inout;
    if (op < 0 || op > 6)
        return 0;
    for (size_t i = 0; i < n; i++) {
        quad a, b;
        memcpy(&a, x + 16 * i, 16);
        memcpy(&b, y + 16 * i, 16);
        switch (op) {
        case 0: b = a > b ? a : b; break;
        case 1: b = a < b ? a : b; break;
        case 2: b = a + b; break;
        case 3: b = a * b; break;
        case 4: b = (a != 0) && (b != 0); break;
        case 5: b = (a != 0) || (b != 0); break;
        default: b = (a != 0) != (b != 0); break;
        }
        memcpy(y + 16 * i, &b, 16);
    }
    return 1;
}

int oxmpi_quad_complex_reduce(int op, const void *in, void *inout, size_t n)
{
    const unsigned char *x = in;
    unsigned char *y = inout;
    if (op != 2 && op != 3)
        return 0;
    for (size_t i = 0; i < n; i++) {
        quad a[2], b[2], r[2];
        memcpy(a, x + 32 * i, 32);
        memcpy(b, y + 32 * i, 32);
        if (op == 2) {
            r[0] = a[0] + b[0];
            r[1] = a[1] + b[1];
        } else {
            r[0] = a[0] * b[0] - a[1] * b[1];
            r[1] = a[0] * b[1] + a[1] * b[0];
        }
        memcpy(y + 32 * i, r, 32);
    }
    return 1;
}
