/* rma_shared: shared-memory windows.
 *  - MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) (everything below is per node);
 *  - MPI_Win_allocate_shared with a different size on every rank, 0 bytes on node rank 0
 *    (when the node has 2+ ranks), sizes not multiples of 8, disp_unit 4 on even and 1
 *    on odd node ranks;
 *  - MPI_Win_shared_query of every rank on every rank: size and disp_unit exact, the
 *    pointer of our own segment is our base; MPI_PROC_NULL gives the segment of the
 *    lowest rank with a nonzero size (and that rank's size and disp_unit);
 *  - contiguity (no alloc_shared_noncontig): a segment starts where the previous nonzero
 *    segment ends (base_r == base_p + size_p);
 *  - every rank stores through the queried pointer into its right neighbour's segment;
 *    after MPI_Win_sync + barrier + MPI_Win_sync (inside lock_all MPI_MODE_NOCHECK)
 *    every rank reads every segment through its pointers and checks every element;
 *  - RMA on the same window: MPI_Put into the right neighbour's first int and
 *    MPI_Accumulate(MPI_SUM) into every segment's second int, then direct loads;
 *  - a second window with alloc_shared_noncontig = true: queries work (sizes, units, a
 *    usable pointer for each nonzero segment; contiguity not required) and loads and
 *    stores through the pointers work the same way;
 *  - MPI 4.1: MPI_Win_shared_query on a window of MPI_Win_create: our own memory comes
 *    back as it is (base, size, disp_unit); another rank's is either a pointer that loads
 *    its values or size 0 and NULL; on a dynamic window it is MPI_ERR_RMA_FLAVOR. */
#include "testutil.h"

static int rank, nprocs, srank, ssize;
static MPI_Comm shm;

static MPI_Aint seg_size(int r) { return (ssize > 1 && r == 0) ? 0 : (MPI_Aint)(r * 3 + 5) * 4; }
static int seg_unit(int r) { return r % 2 == 0 ? 4 : 1; }
static int seg_val(int writer, int i) { return writer * 10000 + i + 1; }

static void sync_all(MPI_Win win)
{
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(shm));
    MPI_OK(MPI_Win_sync(win));
}

static void exercise(MPI_Win win, int *mybase, int contiguous, const char *kind)
{
    int **ptr = tu_malloc((size_t)ssize * sizeof(int *));
    /* queries */
    for (int r = 0; r < ssize; r++) {
        MPI_Aint sz = -1;
        int du = -1;
        void *p = NULL;
        MPI_OK(MPI_Win_shared_query(win, r, &sz, &du, &p));
        CHECK(sz == seg_size(r), "%s: MPI_Win_shared_query(%d) size %ld, expected %ld", kind, r,
              (long)sz, (long)seg_size(r));
        CHECK(du == seg_unit(r), "%s: MPI_Win_shared_query(%d) disp_unit %d, expected %d", kind,
              r, du, seg_unit(r));
        if (sz > 0)
            CHECK(p != NULL, "%s: MPI_Win_shared_query(%d): NULL pointer for %ld bytes", kind, r,
                  (long)sz);
        else
            CHECK(p == NULL, "%s: MPI_Win_shared_query(%d) of an empty segment gave %p, not NULL (as MPICH)", kind, r, p);
        if (r == srank && sz > 0)
            CHECK(p == (void *)mybase, "%s: query of my own rank gave %p, my base is %p", kind, p,
                  (void *)mybase);
        ptr[r] = p;
    }
    {
        int lowest = 0;
        while (seg_size(lowest) == 0)
            lowest++;
        MPI_Aint sz = -1;
        int du = -1;
        void *p = NULL;
        MPI_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &p));
        CHECK(sz == seg_size(lowest) && du == seg_unit(lowest) && p == (void *)ptr[lowest],
              "%s: MPI_Win_shared_query(MPI_PROC_NULL) = (%ld, %d, %p), expected rank %d's "
              "(%ld, %d, %p)", kind, (long)sz, du, p, lowest, (long)seg_size(lowest),
              seg_unit(lowest), (void *)ptr[lowest]);
    }
    if (contiguous) {
        int prev = -1;
        for (int r = 0; r < ssize; r++) {
            if (seg_size(r) == 0)
                continue;
            if (prev >= 0)
                CHECK((char *)ptr[r] == (char *)ptr[prev] + seg_size(prev),
                      "%s: segment of rank %d at %p, expected right after rank %d's (%p + %ld)",
                      kind, r, (void *)ptr[r], prev, (void *)ptr[prev], (long)seg_size(prev));
            prev = r;
        }
    }

    /* stores into the right neighbour's segment */
    int right = (srank + 1) % ssize;
    MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    for (int i = 0; i < seg_size(right) / 4; i++)
        ptr[right][i] = seg_val(srank, i);
    sync_all(win);
    for (int r = 0; r < ssize; r++) {
        int writer = (r + ssize - 1) % ssize;
        for (int i = 0; i < seg_size(r) / 4; i++)
            CHECK(ptr[r][i] == seg_val(writer, i), "%s: segment of rank %d element %d = %d, "
                  "expected %d (stored by rank %d)", kind, r, i, ptr[r][i], seg_val(writer, i),
                  writer);
    }
    sync_all(win); /* everyone has read before the RMA below changes things */

    /* RMA: put into the right neighbour's int 0, add into every segment's int 1 */
    int v = -srank - 1, one = srank + 1;
    if (seg_size(right) > 0)
        MPI_OK(MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win));
    for (int r = 0; r < ssize; r++)
        if (seg_size(r) > 0)
            MPI_OK(MPI_Accumulate(&one, 1, MPI_INT, r, 4 / seg_unit(r), 1, MPI_INT, MPI_SUM,
                                  win));
    MPI_OK(MPI_Win_flush_all(win));
    sync_all(win);
    for (int r = 0; r < ssize; r++) {
        if (seg_size(r) == 0)
            continue;
        int writer = (r + ssize - 1) % ssize;
        int e1 = seg_val(writer, 1) + ssize * (ssize + 1) / 2;
        CHECK(ptr[r][0] == -writer - 1, "%s: after MPI_Put, rank %d's int 0 = %d, expected %d",
              kind, r, ptr[r][0], -writer - 1);
        CHECK(ptr[r][1] == e1, "%s: after MPI_Accumulate, rank %d's int 1 = %d, expected %d",
              kind, r, ptr[r][1], e1);
    }
    MPI_OK(MPI_Win_unlock_all(win));
    free(ptr);
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm));
    MPI_OK(MPI_Comm_rank(shm, &srank));
    MPI_OK(MPI_Comm_size(shm, &ssize));

    int *base = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate_shared(seg_size(srank), seg_unit(srank), MPI_INFO_NULL, shm, &base,
                                   &win));
    exercise(win, base, 1, "contiguous");
    MPI_OK(MPI_Win_free(&win));

    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    base = NULL;
    MPI_OK(MPI_Win_allocate_shared(seg_size(srank), seg_unit(srank), info, shm, &base, &win));
    MPI_OK(MPI_Info_free(&info));
    exercise(win, base, 0, "alloc_shared_noncontig");
    MPI_OK(MPI_Win_free(&win));

    {
        int mem[5], du = -1;
        for (int i = 0; i < 5; i++)
            mem[i] = 100 * rank + i;
        MPI_OK(MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        MPI_Aint sz = -1;
        int *p = NULL;
        MPI_OK(MPI_Win_shared_query(win, rank, &sz, &du, &p));
        CHECK(sz == (MPI_Aint)sizeof mem && du == (int)sizeof(int) && p == mem, "Win_create: own memory queried as %ld/%d/%p", (long)sz, du, (void *)p);
        int other = (rank + 1) % nprocs;
        MPI_OK(MPI_Win_shared_query(win, other, &sz, &du, &p));
        MPI_OK(MPI_Win_fence(0, win));
        if (other != rank && sz != 0) {
            CHECK(sz == (MPI_Aint)sizeof mem && p != NULL, "Win_create: rank %d queried as %ld/%p", other, (long)sz, (void *)p);
            for (int i = 0; i < 5; i++)
                CHECK(p[i] == 100 * other + i, "Win_create: load through rank %d's pointer: %d", other, p[i]);
        } else if (other != rank) {
            CHECK(p == NULL, "Win_create: size 0 with a pointer %p", (void *)p);
        }
        MPI_OK(MPI_Win_fence(0, win));
        MPI_OK(MPI_Win_free(&win));
        MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
        int rc = MPI_Win_shared_query(win, rank, &sz, &du, &p);
        CHECK(tu_error_class(rc) == MPI_ERR_RMA_FLAVOR, "shared query of a dynamic window: class %d", tu_error_class(rc));
        MPI_OK(MPI_Win_free(&win));
    }

    MPI_OK(MPI_Comm_free(&shm));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("rma_shared: OK (%d ranks, %d on this node)\n", nprocs, ssize);
    MPI_Finalize();
    return 0;
}
