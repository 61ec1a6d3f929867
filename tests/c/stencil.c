/* A stencil code: 1-D domain decomposition of a 2-D grid by columns. Each rank owns a block
 * of columns of a row-major double u[NY][nx+2] (columns 0 and nx+1 are halos, or the fixed
 * physical boundary at the ends) and exchanges halo COLUMNS with
 * MPI_Type_vector(NY, 1, nx+2, MPI_DOUBLE) (its stride differs between ranks when the split
 * is uneven: same type signature, different type maps), then runs pure Jacobi sweeps (with a
 * copy). Halo exchange variants:
 *   sendrecv  two MPI_Sendrecv with the column type on both sides,
 *   isend     MPI_Irecv/MPI_Isend of the column type + MPI_Waitall,
 *   mixed     MPI_Sendrecv sending the column type, receiving NY contiguous MPI_DOUBLEs.
 * Every rank repeats the computation serially on the whole grid (with the same sweep code, so
 * results are bit-identical) and checks its block, halos included, for exact equality; the
 * residual max|u_new - u| is combined with MPI_Allreduce(MPI_MAX) (exact) and the residual
 * sum with MPI_Allreduce(MPI_SUM) (compared with a relative tolerance: summation order).
 * Grids: 41 x 37 (several columns per rank) and 2100 x (size + 3) (one or two columns per
 * rank, 16.8 KB halo columns: above the 16 KiB eager threshold). */
#include "testutil.h"
#include <math.h>

#define ITERS 50
enum { V_SENDRECV, V_ISEND, V_MIXED, NVARIANTS };
static const char *vname[NVARIANTS] = {"sendrecv", "isend", "mixed"};
static int rank, size;

/* Initial value at row i, global column g (0 and NXG+1 are the physical boundary columns). */
static double init(int i, int g, int ny, int nxg)
{
    if (g == 0) return 1.0 + 0.01 * i;
    if (g == nxg + 1) return -0.5 + 0.003 * i * i / ny;
    if (i == 0) return 2.0 - 0.02 * g;
    if (i == ny - 1) return 0.25 * ((g * 7) % 11);
    return ((i * 31 + g * 17) % 23) / 23.0;
}

/* One Jacobi sweep of the interior rows, columns [1, nx] of a grid with row stride ld:
 * v = average of the 4 neighbours in u. The same code for the serial and parallel runs.
 * Returns the residual max|v - u| and adds sum|v - u| to *sum. */
static double sweep(const double *u, double *v, int ny, int ld, int nx, double *sum)
{
    double mx = 0, s = 0;
    for (int i = 1; i < ny - 1; i++)
        for (int j = 1; j <= nx; j++) {
            double x = 0.25 * ((u[(i - 1) * ld + j] + u[(i + 1) * ld + j]) + (u[i * ld + j - 1] + u[i * ld + j + 1]));
            double d = fabs(x - u[i * ld + j]);
            v[i * ld + j] = x;
            if (d > mx) mx = d;
            s += d;
        }
    *sum = s;
    return mx;
}

static void copy_interior(double *u, const double *v, int ny, int ld, int nx)
{
    for (int i = 1; i < ny - 1; i++)
        memcpy(&u[i * ld + 1], &v[i * ld + 1], nx * sizeof(double));
}

static void check_neighbour_status(const MPI_Status *st, int src, int tag, int ny, MPI_Datatype col, int as_col)
{
    if (src == MPI_PROC_NULL) {
        CHECK(st->MPI_SOURCE == MPI_PROC_NULL, "receive from MPI_PROC_NULL: status.MPI_SOURCE = %d", st->MPI_SOURCE);
        return;
    }
    if (as_col) CHECK_STATUS(st, src, tag, col, 1);
    CHECK_STATUS(st, src, tag, MPI_DOUBLE, ny);
}

/* Exchange the halo columns of u[ny][nx+2]. */
static void exchange(double *u, int ny, int nx, MPI_Datatype col, int variant, double *tmp)
{
    int ld = nx + 2;
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    MPI_Status st[4];
    switch (variant) {
    case V_SENDRECV:
        /* First owned column to the left, right halo from the right; then the mirror. */
        MPI_OK(MPI_Sendrecv(&u[1], 1, col, left, 10, &u[nx + 1], 1, col, right, 10, MPI_COMM_WORLD, &st[0]));
        check_neighbour_status(&st[0], right, 10, ny, col, 1);
        MPI_OK(MPI_Sendrecv(&u[nx], 1, col, right, 11, &u[0], 1, col, left, 11, MPI_COMM_WORLD, &st[1]));
        check_neighbour_status(&st[1], left, 11, ny, col, 1);
        break;
    case V_ISEND: {
        MPI_Request rq[4];
        MPI_OK(MPI_Irecv(&u[0], 1, col, left, 20, MPI_COMM_WORLD, &rq[0]));
        MPI_OK(MPI_Irecv(&u[nx + 1], 1, col, right, 21, MPI_COMM_WORLD, &rq[1]));
        MPI_OK(MPI_Isend(&u[1], 1, col, left, 21, MPI_COMM_WORLD, &rq[2]));
        MPI_OK(MPI_Isend(&u[nx], 1, col, right, 20, MPI_COMM_WORLD, &rq[3]));
        MPI_OK(MPI_Waitall(4, rq, st));
        check_neighbour_status(&st[0], left, 20, ny, col, 1);
        check_neighbour_status(&st[1], right, 21, ny, col, 1);
        break;
    }
    case V_MIXED:
        MPI_OK(MPI_Sendrecv(&u[1], 1, col, left, 30, tmp, ny, MPI_DOUBLE, right, 30, MPI_COMM_WORLD, &st[0]));
        check_neighbour_status(&st[0], right, 30, ny, col, 0);
        if (right != MPI_PROC_NULL)
            for (int i = 0; i < ny; i++) u[i * ld + nx + 1] = tmp[i];
        MPI_OK(MPI_Sendrecv(&u[nx], 1, col, right, 31, tmp, ny, MPI_DOUBLE, left, 31, MPI_COMM_WORLD, &st[1]));
        check_neighbour_status(&st[1], left, 31, ny, col, 0);
        if (left != MPI_PROC_NULL)
            for (int i = 0; i < ny; i++) u[i * ld] = tmp[i];
        break;
    }
}

static void run_grid(int ny, int nxg)
{
    /* Uneven block split of the nxg interior columns: ranks below nxg % size get one more. */
    int nx = nxg / size + (rank < nxg % size), g0 = rank * (nxg / size) + (rank < nxg % size ? rank : nxg % size);
    CHECK(nx >= 1, "grid %d x %d: rank %d owns no column", ny, nxg, rank);
    int ld = nx + 2, gld = nxg + 2;

    /* Serial reference on the whole grid. */
    double *gu = tu_malloc((size_t)ny * gld * sizeof(double)), *gv = tu_malloc((size_t)ny * gld * sizeof(double));
    for (int i = 0; i < ny; i++)
        for (int g = 0; g < gld; g++) gu[i * gld + g] = gv[i * gld + g] = init(i, g, ny, nxg);
    double gres = 0, gsum = 0;
    for (int it = 0; it < ITERS; it++) {
        gres = sweep(gu, gv, ny, gld, nxg, &gsum);
        copy_interior(gu, gv, ny, gld, nxg);
    }

    MPI_Datatype col;
    MPI_OK(MPI_Type_vector(ny, 1, ld, MPI_DOUBLE, &col));
    MPI_OK(MPI_Type_commit(&col));
    double *u = tu_malloc((size_t)ny * ld * sizeof(double)), *v = tu_malloc((size_t)ny * ld * sizeof(double));
    double *tmp = tu_malloc(ny * sizeof(double));
    for (int variant = 0; variant < NVARIANTS; variant++) {
        /* Halos start as NaN-free garbage that must be overwritten (except physical boundaries). */
        for (int i = 0; i < ny; i++)
            for (int j = 0; j < ld; j++) {
                int g = g0 + j;
                int physical = (j == 0 && rank == 0) || (j == ld - 1 && rank == size - 1);
                u[i * ld + j] = v[i * ld + j] = (j >= 1 && j <= nx) || physical ? init(i, g, ny, nxg) : -777.0;
            }
        double res = 0, sum = 0;
        for (int it = 0; it < ITERS; it++) {
            exchange(u, ny, nx, col, variant, tmp);
            res = sweep(u, v, ny, ld, nx, &sum);
            copy_interior(u, v, ny, ld, nx);
        }
        exchange(u, ny, nx, col, variant, tmp); /* so the halos can be checked too */
        for (int i = 0; i < ny; i++)
            for (int j = 0; j < ld; j++) {
                double got = u[i * ld + j], want = gu[i * gld + g0 + j];
                if (got != want)
                    FAIL("stencil %s grid %dx%d (rank owns global columns %d..%d): u[%d][%d] (global column %d%s) = %.17g, "
                         "serial result %.17g", vname[variant], ny, nxg, g0 + 1, g0 + nx, i, j, g0 + j,
                         j == 0 ? ", left halo" : j == ld - 1 ? ", right halo" : "", got, want);
            }
        double allres = -1, allsum = -1;
        MPI_OK(MPI_Allreduce(&res, &allres, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        MPI_OK(MPI_Allreduce(&sum, &allsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
        CHECK(allres == gres, "stencil %s grid %dx%d: Allreduce(MAX) of the residual = %.17g, serial %.17g",
              vname[variant], ny, nxg, allres, gres);
        CHECK(fabs(allsum - gsum) <= 1e-12 * fabs(gsum) + 1e-300,
              "stencil %s grid %dx%d: Allreduce(SUM) of the residual = %.17g, serial %.17g", vname[variant], ny, nxg,
              allsum, gsum);
        CHECK(gres > 0, "stencil grid %dx%d: residual is 0: the test computes nothing", ny, nxg);
    }
    MPI_OK(MPI_Type_free(&col));
    free(u); free(v); free(tmp); free(gu); free(gv);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    rank = tu_rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    run_grid(41, 37 > size ? 37 : size);
    run_grid(2100, size + 3);
    if (rank == 0) { printf("stencil: OK (%d ranks)\n", size); fflush(stdout); }
    MPI_Finalize();
    return 0;
}
