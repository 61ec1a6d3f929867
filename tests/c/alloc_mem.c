/* alloc_mem: MPI_Alloc_mem / MPI_Free_mem.
 *  1. sizes 0 B to 8 MiB: a distinct pointer, 64-byte aligned, every byte writable and
 *     kept (OxMPI maps blocks from 2 MiB on their own, for huge pages);
 *  2. the MPI 4.1 info key mpi_minimum_memory_alignment (4096) is honoured;
 *  3. allocated buffers carry messages: 8 MiB and 100 KiB between rank pairs, checked;
 *  4. errors under MPI_ERRORS_RETURN: negative size -> MPI_ERR_ARG, invalid info ->
 *     MPI_ERR_INFO, freeing a stack address or the same block twice -> MPI_ERR_BASE;
 *     MPI_Free_mem(NULL) succeeds. */
#include "testutil.h"

#define BIG (8 << 20)

static void *alloc(MPI_Aint size, MPI_Info info)
{
    void *p = NULL;
    MPI_OK(MPI_Alloc_mem(size, info, &p));
    CHECK(p != NULL, "MPI_Alloc_mem(%ld) gave NULL", (long)size);
    return p;
}

int main(int argc, char **argv)
{
    int size;
    tu_init(&argc, &argv);
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* 1 */
    const MPI_Aint sizes[] = {0, 1, 100, 4096, 65536, (2 << 20) - 1, 2 << 20, (3 << 20) + 5, BIG};
    const int n = (int)(sizeof sizes / sizeof sizes[0]);
    void *blocks[sizeof sizes / sizeof sizes[0]];
    for (int i = 0; i < n; i++) {
        blocks[i] = alloc(sizes[i], MPI_INFO_NULL);
        uintptr_t a = (uintptr_t)blocks[i];
        CHECK(a % 64 == 0, "block of %ld bytes at %p: not 64-byte aligned", (long)sizes[i], blocks[i]);
        for (int j = 0; j < i; j++)
            CHECK(blocks[j] != blocks[i], "blocks %d and %d share address %p", j, i, blocks[i]);
        tu_fill(blocks[i], (size_t)sizes[i], (uint32_t)i);
    }
    for (int i = 0; i < n; i++)
        CHECK_PATTERN(blocks[i], (size_t)sizes[i], (uint32_t)i, "block %d of %ld bytes", i, (long)sizes[i]);

    /* 2 */
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096"));
    void *aligned = alloc(1000, info);
    CHECK((uintptr_t)aligned % 4096 == 0, "mpi_minimum_memory_alignment 4096 gave %p", aligned);

    /* 3 */
    int peer = tu_rank ^ 1;
    if (peer < size) {
        unsigned char *big = blocks[n - 1], *mid = blocks[4];
        if (tu_rank % 2 == 0) {
            tu_fill(big, BIG, 77);
            MPI_OK(MPI_Send(big, BIG, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
            MPI_OK(MPI_Recv(mid, 65536, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_PATTERN(mid, 65536, 78, "64 KiB reply");
        } else {
            memset(big, 0, BIG);
            MPI_OK(MPI_Recv(big, BIG, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_PATTERN(big, BIG, 77, "8 MiB message");
            tu_fill(mid, 65536, 78);
            MPI_OK(MPI_Send(mid, 65536, MPI_BYTE, peer, 2, MPI_COMM_WORLD));
        }
    }

    /* 4 */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    void *p = NULL;
    int rc, cls, local = 0;
    rc = MPI_Alloc_mem(-1, MPI_INFO_NULL, &p);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "negative size: class %d, expected MPI_ERR_ARG", cls);
    rc = MPI_Alloc_mem(8, (MPI_Info)0x5c000007, &p);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_INFO, "invalid info: class %d, expected MPI_ERR_INFO", cls);
    rc = MPI_Free_mem(&local);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BASE, "freeing a stack address: class %d, expected MPI_ERR_BASE", cls);
    MPI_OK(MPI_Free_mem(aligned));
    rc = MPI_Free_mem(aligned);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BASE, "double free: class %d, expected MPI_ERR_BASE", cls);
    MPI_OK(MPI_Free_mem(NULL));

    for (int i = 0; i < n; i++)
        MPI_OK(MPI_Free_mem(blocks[i]));
    MPI_OK(MPI_Info_free(&info));
    MPI_OK(MPI_Finalize());
    if (tu_rank == 0)
        printf("alloc_mem: OK\n");
    return 0;
}
