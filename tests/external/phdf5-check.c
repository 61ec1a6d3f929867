/* phdf5-check: Debian's MPICH build of parallel HDF5 (libhdf5_mpich, its MPI-IO driver)
 * on our library, from tests/external/mpich-binaries.sh. Each rank writes its block of rows
 * of a 2-D dataset collectively, a strided 1-D hyperslab independently and collectively,
 * and a chunked 2-D dataset (chunks spanning ranks' rows) collectively with an attribute;
 * then every rank reads all of it back and checks every element.
 * Usage: mpirun -n N phdf5-check FILE.h5 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#define NX 64
#define NY 37
#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, n; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *fname = argc > 1 ? argv[1] : "ph5.h5";
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(fname, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(file >= 0, "H5Fcreate failed");
    hsize_t dims[2] = {NX * n, NY};
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dset = H5Dcreate2(file, "grid", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t start[2] = {(hsize_t)rank * NX, 0}, count[2] = {NX, NY};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t mem = H5Screate_simple(2, count, NULL);
    double *buf = malloc(sizeof(double) * NX * NY);
    for (int i = 0; i < NX * NY; i++) buf[i] = rank * 1e6 + i;
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    CHECK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mem, space, dxpl, buf) >= 0, "collective H5Dwrite failed");
    /* 1-D int dataset, interleaved: rank r writes elements r, r+n, r+2n, ... (independent) */
    hsize_t d1 = 1000 * n;
    hid_t s1 = H5Screate_simple(1, &d1, NULL);
    hid_t ds1 = H5Dcreate2(file, "strided", H5T_NATIVE_INT, s1, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t st1 = rank, str1 = n, cnt1 = 1000;
    H5Sselect_hyperslab(s1, H5S_SELECT_SET, &st1, &str1, &cnt1, NULL);
    hid_t m1 = H5Screate_simple(1, &cnt1, NULL);
    int *ib = malloc(sizeof(int) * 1000);
    for (int i = 0; i < 1000; i++) ib[i] = rank + i * n;
    hid_t ind = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(ind, H5FD_MPIO_INDEPENDENT);
    CHECK(H5Dwrite(ds1, H5T_NATIVE_INT, m1, s1, ind, ib) >= 0, "independent H5Dwrite failed");
    /* also a collective strided write through MPI-IO derived types */
    hid_t ds2 = H5Dcreate2(file, "strided_coll", H5T_NATIVE_INT, s1, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Dwrite(ds2, H5T_NATIVE_INT, m1, s1, dxpl, ib) >= 0, "collective strided H5Dwrite failed");
    /* a chunked dataset (chunks span ranks' rows) written collectively, with an attribute */
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hsize_t chunk[2] = {NX / 2 + 3, 8};
    H5Pset_chunk(dcpl, 2, chunk);
    hid_t ds3 = H5Dcreate2(file, "chunked", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    CHECK(H5Dwrite(ds3, H5T_NATIVE_DOUBLE, mem, space, dxpl, buf) >= 0, "collective chunked H5Dwrite failed");
    hid_t as = H5Screate(H5S_SCALAR);
    hid_t at = H5Acreate2(ds3, "ranks", H5T_NATIVE_INT, as, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Awrite(at, H5T_NATIVE_INT, &n) >= 0, "H5Awrite failed");
    H5Aclose(at); H5Sclose(as); H5Pclose(dcpl); H5Dclose(ds3);
    H5Dclose(ds1); H5Dclose(ds2); H5Dclose(dset); H5Sclose(space); H5Sclose(mem); H5Sclose(s1); H5Sclose(m1);
    H5Fclose(file);
    MPI_Barrier(MPI_COMM_WORLD);
    /* read back everything on every rank (collective open) */
    file = H5Fopen(fname, H5F_ACC_RDONLY, fapl);
    CHECK(file >= 0, "H5Fopen failed");
    dset = H5Dopen2(file, "grid", H5P_DEFAULT);
    double *all = malloc(sizeof(double) * NX * NY * n);
    CHECK(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, dxpl, all) >= 0, "H5Dread failed");
    for (int r = 0; r < n; r++)
        for (int i = 0; i < NX * NY; i++)
            CHECK(all[r * NX * NY + i] == r * 1e6 + i, "grid[%d] = %g, expected %g", r * NX * NY + i, all[r * NX * NY + i], r * 1e6 + i);
    ds3 = H5Dopen2(file, "chunked", H5P_DEFAULT);
    for (int i = 0; i < NX * NY * n; i++) all[i] = -1;
    CHECK(H5Dread(ds3, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, dxpl, all) >= 0, "H5Dread chunked failed");
    for (int r = 0; r < n; r++)
        for (int i = 0; i < NX * NY; i++)
            CHECK(all[r * NX * NY + i] == r * 1e6 + i, "chunked[%d] = %g, expected %g", r * NX * NY + i, all[r * NX * NY + i], r * 1e6 + i);
    int nattr = 0;
    at = H5Aopen(ds3, "ranks", H5P_DEFAULT);
    CHECK(H5Aread(at, H5T_NATIVE_INT, &nattr) >= 0 && nattr == n, "attribute ranks = %d, expected %d", nattr, n);
    H5Aclose(at); H5Dclose(ds3);
    const char *names[2] = {"strided", "strided_coll"};
    int *ia = malloc(sizeof(int) * 1000 * n);
    for (int k = 0; k < 2; k++) {
        ds1 = H5Dopen2(file, names[k], H5P_DEFAULT);
        CHECK(H5Dread(ds1, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, ind, ia) >= 0, "H5Dread strided failed");
        for (int i = 0; i < 1000 * n; i++) CHECK(ia[i] == i, "%s[%d] = %d", names[k], i, ia[i]);
        H5Dclose(ds1);
    }
    H5Dclose(dset); H5Fclose(file); H5Pclose(fapl);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("phdf5-check: OK (%d ranks)\n", n);
    MPI_Finalize();
    return 0;
}
