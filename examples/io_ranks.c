/* io_ranks: MPI-IO in a few lines. Every rank writes one fixed-width line into a shared
 * file at its own offset with a collective write; rank 0 reads the file back and prints
 * it. The file lives in $TMPDIR (default /tmp) and is deleted at close.
 *   mpicc -o io_ranks examples/io_ranks.c && mpirun -n 4 ./io_ranks */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { WIDTH = 32 };

int main(int argc, char **argv)
{
    int rank, size, pid;
    char path[512], line[WIDTH + 1];
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    MPI_File fh;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD); /* one file name for the whole job */
    snprintf(path, sizeof path, "%s/oxmpi-io-ranks-%d.txt", dir, pid);

    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                  MPI_INFO_NULL, &fh);
    snprintf(line, sizeof line, "rank %d of %d wrote this line", rank, size);
    memset(line + strlen(line), ' ', WIDTH - strlen(line));
    line[WIDTH - 1] = '\n';
    MPI_File_write_at_all(fh, (MPI_Offset)rank * WIDTH, line, WIDTH, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_sync(fh); /* sync, barrier, sync: the others' writes are visible to rank 0 */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);

    int ok = 1;
    if (rank == 0) {
        MPI_Offset bytes;
        MPI_File_get_size(fh, &bytes);
        char *all = calloc((size_t)bytes + 1, 1);
        MPI_File_read_at(fh, 0, all, (int)bytes, MPI_CHAR, MPI_STATUS_IGNORE);
        printf("%s (%lld bytes):\n%s", path, (long long)bytes, all);
        for (int r = 0; r < size; r++) {
            char want[WIDTH];
            int n = snprintf(want, sizeof want, "rank %d of %d wrote this line", r, size);
            ok &= bytes == (MPI_Offset)size * WIDTH && strncmp(all + r * WIDTH, want, n) == 0;
        }
        printf("%s\n", ok ? "every rank's line is in place" : "WRONG FILE CONTENTS");
        free(all);
    }
    MPI_File_close(&fh);
    MPI_Finalize();
    return ok ? 0 : 1;
}
