/* struct_markers: bounds of structs holding the deprecated MPI_LB / MPI_UB markers, as
 * MPICH computes them: a marker sets only its own bound, the other one comes from the
 * real entries (0 when there are none), and the alignment padding of the real entries
 * stays when only an MPI_LB marker is given. So a struct of an MPI_LB marker at 10 alone
 * has lb 10, ub 0 and extent -10. Also the structs' sizes, true bounds, and packing. */
#include "testutil.h"

static void expect(MPI_Datatype t, const char *what, int size, MPI_Aint lb, MPI_Aint extent,
                   MPI_Aint true_lb, MPI_Aint true_extent)
{
    int s = -1;
    MPI_Aint l, e, tl, te;
    MPI_OK(MPI_Type_size(t, &s));
    MPI_OK(MPI_Type_get_extent(t, &l, &e));
    MPI_OK(MPI_Type_get_true_extent(t, &tl, &te));
    CHECK(s == size, "%s: size %d, expected %d", what, s, size);
    CHECK(l == lb && e == extent, "%s: lb %ld extent %ld, expected lb %ld extent %ld", what,
          (long) l, (long) e, (long) lb, (long) extent);
    CHECK(tl == true_lb && te == true_extent, "%s: true lb %ld extent %ld, expected %ld %ld",
          what, (long) tl, (long) te, (long) true_lb, (long) true_extent);
}

static MPI_Datatype make(int n, const MPI_Aint *d, const MPI_Datatype *ts)
{
    int bl[4] = {1, 1, 1, 1};
    MPI_Datatype t;
    MPI_OK(MPI_Type_create_struct(n, bl, d, ts, &t));
    MPI_OK(MPI_Type_commit(&t));
    return t;
}

int main(int argc, char **argv)
{
    tu_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t;

    {
        MPI_Aint d[1] = {10};
        MPI_Datatype ts[1] = {MPI_LB};
        t = make(1, d, ts);
        expect(t, "{(LB,10)}", 0, 10, -10, 0, 0);
        /* nothing to pack, whatever the count */
        char buf[8];
        int pos = 0;
        MPI_OK(MPI_Pack(buf, 3, t, buf, sizeof buf, &pos, MPI_COMM_WORLD));
        CHECK(pos == 0, "{(LB,10)}: packed %d bytes", pos);
        MPI_Type_free(&t);
    }
    {
        MPI_Aint d[1] = {10};
        MPI_Datatype ts[1] = {MPI_UB};
        t = make(1, d, ts);
        expect(t, "{(UB,10)}", 0, 0, 10, 0, 0);
        MPI_Type_free(&t);
    }
    {
        MPI_Aint d[2] = {-6, 12};
        MPI_Datatype ts[2] = {MPI_UB, MPI_LB};
        t = make(2, d, ts);
        expect(t, "{(UB,-6),(LB,12)}", 0, 12, -18, 0, 0);
        MPI_Type_free(&t);
    }
    {
        /* an int before the MPI_LB marker: ub from the int */
        MPI_Aint d[2] = {20, 0};
        MPI_Datatype ts[2] = {MPI_LB, MPI_INT};
        t = make(2, d, ts);
        expect(t, "{(LB,20),(int,0)}", 4, 20, -16, 0, 4);
        MPI_Type_free(&t);
    }
    {
        /* an int after the MPI_UB marker: lb from the int */
        MPI_Aint d[2] = {8, -4};
        MPI_Datatype ts[2] = {MPI_INT, MPI_UB};
        t = make(2, d, ts);
        expect(t, "{(int,8),(UB,-4)}", 4, 8, -12, 8, 4);
        MPI_Type_free(&t);
    }
    {
        /* double + char padded to 16 bytes, then lb moved down to -8: ub stays padded */
        MPI_Aint d[3] = {-8, 0, 8};
        MPI_Datatype ts[3] = {MPI_LB, MPI_DOUBLE, MPI_CHAR};
        t = make(3, d, ts);
        expect(t, "{(LB,-8),(double,0),(char,8)}", 9, -8, 24, 0, 9);
        MPI_Type_free(&t);
    }
    {
        /* both markers: they win, no padding */
        MPI_Aint d[4] = {-4, 0, 8, 12};
        MPI_Datatype ts[4] = {MPI_LB, MPI_DOUBLE, MPI_CHAR, MPI_UB};
        t = make(4, d, ts);
        expect(t, "{(LB,-4),(double,0),(char,8),(UB,12)}", 9, -4, 16, 0, 9);
        /* two items: the second 16 bytes after the first */
        double in[4] = {1.5, 0, 2.5, 0}, out[4] = {0};
        ((char *) in)[8] = 'a';
        ((char *) in)[24] = 'b';
        char buf[32];
        int pos = 0;
        MPI_OK(MPI_Pack(in, 2, t, buf, sizeof buf, &pos, MPI_COMM_WORLD));
        CHECK(pos == 18, "two padded items packed %d bytes, expected 18", pos);
        pos = 0;
        MPI_OK(MPI_Unpack(buf, sizeof buf, &pos, out, 2, t, MPI_COMM_WORLD));
        CHECK(out[0] == 1.5 && out[2] == 2.5 && ((char *) out)[8] == 'a' &&
                  ((char *) out)[24] == 'b',
              "two padded items: round trip");
        MPI_Type_free(&t);
    }
    {
        /* no markers: the usual epsilon padding */
        MPI_Aint d[2] = {0, 8};
        MPI_Datatype ts[2] = {MPI_DOUBLE, MPI_CHAR};
        t = make(2, d, ts);
        expect(t, "{(double,0),(char,8)}", 9, 0, 16, 0, 9);
        MPI_Type_free(&t);
    }

    MPI_Barrier(MPI_COMM_WORLD);
    if (tu_rank == 0)
        printf("struct_markers: OK\n");
    MPI_Finalize();
    return 0;
}
