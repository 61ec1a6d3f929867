/* Derived datatypes through the C ABI (no MPI_Init needed for these calls). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define CHECK(c) do { if (!(c)) { printf("FAIL line %d: %s\n", __LINE__, #c); return 1; } } while (0)

struct particle { double x[3]; int id; char tag; };

int main(void)
{
    /* A struct type built with MPI_Get_address, resized to the C struct. */
    struct particle p[4];
    MPI_Aint base, disp[3];
    int bl[3] = {3, 1, 1};
    MPI_Datatype ts[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR}, st, pt;
    MPI_Get_address(&p[0], &base);
    MPI_Get_address(&p[0].x, &disp[0]);
    MPI_Get_address(&p[0].id, &disp[1]);
    MPI_Get_address(&p[0].tag, &disp[2]);
    for (int i = 0; i < 3; i++) disp[i] -= base;
    CHECK(MPI_Type_create_struct(3, bl, disp, ts, &st) == MPI_SUCCESS);
    CHECK(MPI_Type_create_resized(st, 0, sizeof(struct particle), &pt) == MPI_SUCCESS);
    CHECK(MPI_Type_commit(&pt) == MPI_SUCCESS);
    int size; MPI_Aint lb, ext;
    MPI_Type_size(pt, &size);
    MPI_Type_get_extent(pt, &lb, &ext);
    CHECK(size == 29 && lb == 0 && ext == (MPI_Aint)sizeof(struct particle));

    for (int i = 0; i < 4; i++) { p[i].x[0] = i; p[i].x[1] = i + .5; p[i].x[2] = -i; p[i].id = 10 * i; p[i].tag = 'a' + i; }
    char buf[256]; int pos = 0, psize;
    MPI_Pack_size(4, pt, MPI_COMM_WORLD, &psize);
    CHECK(psize == 4 * 29);
    CHECK(MPI_Pack(p, 4, pt, buf, sizeof buf, &pos, MPI_COMM_WORLD) == MPI_SUCCESS && pos == 116);
    struct particle q[4]; memset(q, 0, sizeof q); pos = 0;
    CHECK(MPI_Unpack(buf, sizeof buf, &pos, q, 4, pt, MPI_COMM_WORLD) == MPI_SUCCESS && pos == 116);
    for (int i = 0; i < 4; i++) CHECK(q[i].x[1] == i + .5 && q[i].id == 10 * i && q[i].tag == 'a' + i);

    /* MPI_BOTTOM with absolute addresses. */
    int a = 7, b = 9, got[2];
    MPI_Aint abs[2]; int ones[2] = {1, 1}; MPI_Datatype bt;
    MPI_Get_address(&b, &abs[0]); MPI_Get_address(&a, &abs[1]);
    MPI_Type_create_hindexed(2, ones, abs, MPI_INT, &bt);
    MPI_Type_commit(&bt);
    pos = 0;
    MPI_Pack(MPI_BOTTOM, 1, bt, got, sizeof got, &pos, MPI_COMM_WORLD);
    CHECK(got[0] == 9 && got[1] == 7);

    /* A column of a 4x5 C array, and a subarray. */
    int m[4][5], col[4];
    for (int i = 0; i < 4; i++) for (int j = 0; j < 5; j++) m[i][j] = 10 * i + j;
    MPI_Datatype ct, sub;
    MPI_Type_vector(4, 1, 5, MPI_INT, &ct); MPI_Type_commit(&ct);
    pos = 0; MPI_Pack(&m[0][2], 1, ct, col, sizeof col, &pos, MPI_COMM_WORLD);
    CHECK(col[0] == 2 && col[3] == 32);
    int sizes[2] = {4, 5}, subs[2] = {2, 2}, starts[2] = {1, 3};
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub); MPI_Type_commit(&sub);
    pos = 0; MPI_Pack(m, 1, sub, col, sizeof col, &pos, MPI_COMM_WORLD);
    CHECK(col[0] == 13 && col[1] == 14 && col[2] == 23 && col[3] == 24);
    int ni, na, nd, comb;
    MPI_Type_get_envelope(sub, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8 && na == 0 && nd == 1);
    MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_NAMED);

    /* external32 is big-endian. */
    int v = 0x01020304; unsigned char e[4]; MPI_Aint epos = 0, esize;
    MPI_Pack_external_size("external32", 1, MPI_INT, &esize);
    CHECK(esize == 4);
    CHECK(MPI_Pack_external("external32", &v, 1, MPI_INT, e, 4, &epos) == MPI_SUCCESS && epos == 4);
    CHECK(e[0] == 1 && e[3] == 4);

    /* Names and true extent. */
    char name[MPI_MAX_OBJECT_NAME]; int len;
    MPI_Type_get_name(MPI_DOUBLE_INT, name, &len);
    CHECK(strcmp(name, "MPI_DOUBLE_INT") == 0 && len == 14);
    MPI_Aint tlb, text;
    MPI_Type_get_true_extent(ct, &tlb, &text);
    CHECK(tlb == 0 && text == 16 * 4);

    MPI_Type_free(&pt); MPI_Type_free(&st); MPI_Type_free(&bt); MPI_Type_free(&ct); MPI_Type_free(&sub);
    CHECK(pt == MPI_DATATYPE_NULL);
    printf("ok\n");
    return 0;
}
