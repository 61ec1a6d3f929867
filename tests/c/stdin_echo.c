/* stdin_echo: rank 0 reads its stdin to the end and sends it to every other
 * rank. Usage: stdin_echo NLINES — the harness feeds NLINES lines
 * "oxmpi stdin line <i>\n"; every rank checks the text it has. */
#include "testutil.h"

static char *expected_text(int nlines, size_t *len)
{
    size_t cap = (size_t)nlines * 32 + 1, n = 0;
    char *t = tu_malloc(cap);
    for (int i = 0; i < nlines; i++)
        n += (size_t)snprintf(t + n, cap - n, "oxmpi stdin line %d\n", i);
    *len = n;
    return t;
}

int main(int argc, char **argv)
{
    int rank, size;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc > 1, "usage: stdin_echo NLINES");
    int nlines = atoi(argv[1]);
    size_t explen;
    char *expected = expected_text(nlines, &explen);
    char *text = NULL;
    int len = 0;

    if (rank == 0) {
        size_t cap = 4096, n = 0, got;
        text = tu_malloc(cap);
        while ((got = fread(text + n, 1, cap - n, stdin)) > 0) {
            n += got;
            if (n == cap) {
                cap *= 2;
                text = realloc(text, cap);
                CHECK(text != NULL, "out of memory");
            }
        }
        CHECK(!ferror(stdin), "error reading stdin");
        len = (int)n;
        for (int r = 1; r < size; r++) {
            MPI_Send(&len, 1, MPI_INT, r, 1, MPI_COMM_WORLD);
            MPI_Send(text, len, MPI_CHAR, r, 2, MPI_COMM_WORLD);
        }
    } else {
        MPI_Status st;
        int count = -1;
        MPI_Recv(&len, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        text = tu_malloc(len);
        MPI_Recv(text, len, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_CHAR, &count);
        CHECK(count == len, "received %d chars, announced %d", count, len);
    }
    CHECK((size_t)len == explen, "stdin had %d bytes, expected %zu", len, explen);
    for (int i = 0; i < len; i++)
        CHECK(text[i] == expected[i], "stdin byte %d is 0x%02x, expected 0x%02x", i,
              (unsigned char)text[i], (unsigned char)expected[i]);
    free(text);
    free(expected);
    if (rank == 0)
        printf("stdin_echo: OK (%d ranks, %d lines, %d bytes)\n", size, nlines, len);
    MPI_Finalize();
    return 0;
}
