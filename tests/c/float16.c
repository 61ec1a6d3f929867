/* MPIX_C_FLOAT16 (IEEE binary16, C _Float16; MPICH's extension handle 0x4c000246, which
 * binaries built with MPICH >= 4.1 headers, e.g. mpi4py's PyPI wheel, use): size, name,
 * envelope, point-to-point, pack/unpack, and the floating-point reductions (SUM, PROD, MAX,
 * MIN) at counts 1, odd and large; other ops are refused with MPI_ERR_OP. */
#include "testutil.h"
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, sz, len, ni, na, nd, comb;
    char name[MPI_MAX_OBJECT_NAME];
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_OK(MPI_Type_size(MPIX_C_FLOAT16, &sz));
    CHECK(sz == 2 && sizeof(_Float16) == 2, "size %d", sz);
    MPI_Aint lb, ext;
    MPI_OK(MPI_Type_get_extent(MPIX_C_FLOAT16, &lb, &ext));
    CHECK(lb == 0 && ext == 2, "extent %ld", (long)ext);
    MPI_OK(MPI_Type_get_name(MPIX_C_FLOAT16, name, &len));
    CHECK(strcmp(name, "MPIX_C_FLOAT16") == 0, "name %s", name);
    MPI_OK(MPI_Type_get_envelope(MPIX_C_FLOAT16, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED, "combiner %d", comb);
    MPI_Datatype d;
    MPI_OK(MPI_Type_dup(MPIX_C_FLOAT16, &d));
    MPI_OK(MPI_Type_size(d, &sz));
    CHECK(sz == 2, "dup size %d", sz);
    MPI_OK(MPI_Type_free(&d));

    /* Point-to-point around a ring, through a vector type (every other element). */
    enum { N = 9 };
    _Float16 out[2 * N], in[2 * N];
    for (int i = 0; i < 2 * N; i++) {
        out[i] = (_Float16)(rank + i * 0.25f);
        in[i] = (_Float16)-1.0f;
    }
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(N, 1, 2, MPIX_C_FLOAT16, &v));
    MPI_OK(MPI_Type_commit(&v));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_OK(MPI_Sendrecv(out, 1, v, right, 1, in, 1, v, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2 * N; i++) {
        float want = i % 2 ? -1.0f : (float)(_Float16)(left + i * 0.25f);
        CHECK((float)in[i] == want, "ring element %d: %g, expected %g", i, (double)in[i], (double)want);
    }
    char packed[64];
    int pos = 0;
    MPI_OK(MPI_Pack(out, 1, v, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == 2 * N, "packed %d bytes", pos);
    MPI_OK(MPI_Type_free(&v));

    /* Reductions: values exactly representable, so sums are exact. */
    int counts[] = {1, 7, 300001};
    for (int c = 0; c < 3; c++) {
        int n = counts[c];
        _Float16 *x = tu_malloc(n * sizeof *x), *s = tu_malloc(n * sizeof *s);
        for (int i = 0; i < n; i++)
            x[i] = (_Float16)((rank + 1) * 0.5f + (i % 4));
        MPI_OK(MPI_Allreduce(x, s, n, MPIX_C_FLOAT16, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) {
            float want = 0.5f * size * (size + 1) / 2 + size * (i % 4);
            CHECK((float)s[i] == want, "SUM count %d [%d]: %g, expected %g", n, i, (double)s[i], (double)want);
        }
        MPI_OK(MPI_Allreduce(x, s, n, MPIX_C_FLOAT16, MPI_MAX, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            CHECK((float)s[i] == size * 0.5f + (i % 4), "MAX count %d [%d]: %g", n, i, (double)s[i]);
        MPI_OK(MPI_Reduce(x, s, n, MPIX_C_FLOAT16, MPI_MIN, 0, MPI_COMM_WORLD));
        if (rank == 0)
            for (int i = 0; i < n; i++)
                CHECK((float)s[i] == 0.5f + (i % 4), "MIN count %d [%d]: %g", n, i, (double)s[i]);
        free(x);
        free(s);
    }
    _Float16 two = (_Float16)2.0f, prod;
    MPI_OK(MPI_Allreduce(&two, &prod, 1, MPIX_C_FLOAT16, MPI_PROD, MPI_COMM_WORLD));
    CHECK((float)prod == (float)(1 << size), "PROD %g", (double)prod);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPI_Allreduce(&two, &prod, 1, MPIX_C_FLOAT16, MPI_BAND, MPI_COMM_WORLD), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "BAND on MPIX_C_FLOAT16: class %d", cls);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("float16: OK\n");
    MPI_Finalize();
    return 0;
}
