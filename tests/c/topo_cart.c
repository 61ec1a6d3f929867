/* Topologies: dims_create factorizations (MPICH's balance), Cartesian shifts at periodic
 * and non-periodic edges, coords/rank round trips, cart_sub, graph and dist-graph queries,
 * and the neighbourhood collectives (blocking and nonblocking) on a 2-D torus. */
#include "testutil.h"

static void check_dims(int nnodes, int nd, const int *in, const int *want)
{
    int d[8];
    memcpy(d, in, sizeof(int) * (size_t)nd);
    MPI_OK(MPI_Dims_create(nnodes, nd, d));
    for (int i = 0; i < nd; i++)
        CHECK(d[i] == want[i], "dims_create(%d): dim %d = %d, expected %d", nnodes, i, d[i], want[i]);
}

int main(int argc, char **argv)
{
    int rank, size;
    tu_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    check_dims(6, 2, (int[]){0, 0}, (int[]){3, 2});
    check_dims(8, 3, (int[]){0, 0, 0}, (int[]){2, 2, 2});
    check_dims(12, 3, (int[]){0, 3, 0}, (int[]){2, 3, 2});
    check_dims(7, 2, (int[]){0, 0}, (int[]){7, 1});
    check_dims(16, 2, (int[]){0, 0}, (int[]){4, 4});
    check_dims(24, 1, (int[]){0}, (int[]){24});
    check_dims(1, 2, (int[]){0, 0}, (int[]){1, 1});
    /* The most balanced grid (smallest largest-minus-smallest; ties: the largest smallest
     * entry, then the next), which a greedy split of the primes misses; MPICH's choices. */
    check_dims(72, 2, (int[]){0, 0}, (int[]){9, 8});
    check_dims(360, 3, (int[]){0, 5, 0}, (int[]){9, 5, 8});
    check_dims(19152, 3, (int[]){0, 0, 0}, (int[]){38, 24, 21});
    check_dims(900000, 7, (int[]){0, 0, 0, 0, 0, 0, 0}, (int[]){10, 10, 10, 6, 6, 5, 5});
    check_dims(20, 4, (int[]){0, 0, 0, 0}, (int[]){5, 2, 2, 1});

    int topo;
    MPI_OK(MPI_Topo_test(MPI_COMM_WORLD, &topo));
    CHECK(topo == MPI_UNDEFINED, "world has no topology");

    /* 1-D non-periodic line and periodic ring. */
    MPI_Comm line, ring;
    int one = size, per0 = 0, per1 = 1, src, dst;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &one, &per0, 0, &line));
    MPI_OK(MPI_Cart_shift(line, 0, 1, &src, &dst));
    CHECK(src == (rank == 0 ? MPI_PROC_NULL : rank - 1) && dst == (rank == size - 1 ? MPI_PROC_NULL : rank + 1), "line shift %d %d", src, dst);
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &one, &per1, 0, &ring));
    MPI_OK(MPI_Cart_shift(ring, 0, 2, &src, &dst));
    CHECK(src == ((rank - 2) % size + size) % size && dst == (rank + 2) % size, "ring shift by 2: %d %d", src, dst);
    MPI_OK(MPI_Topo_test(ring, &topo));
    CHECK(topo == MPI_CART, "topo_test cart");
    MPI_Comm_free(&line);
    MPI_Comm_free(&ring);

    /* 2-D torus over all ranks. */
    int dims[2] = {0, 0}, periods[2] = {1, 1}, coords[2];
    MPI_Dims_create(size, 2, dims);
    MPI_Comm torus;
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &torus));
    int ndims, gd[2], gp[2], trank;
    MPI_Comm_rank(torus, &trank);
    MPI_OK(MPI_Cartdim_get(torus, &ndims));
    MPI_OK(MPI_Cart_get(torus, 2, gd, gp, coords));
    CHECK(ndims == 2 && gd[0] == dims[0] && gd[1] == dims[1] && gp[0] && gp[1], "cart_get");
    CHECK(coords[0] == trank / dims[1] && coords[1] == trank % dims[1], "row-major coords (%d,%d) of %d", coords[0], coords[1], trank);
    for (int r = 0; r < size; r++) {
        int c[2], back;
        MPI_OK(MPI_Cart_coords(torus, r, 2, c));
        MPI_OK(MPI_Cart_rank(torus, c, &back));
        CHECK(back == r, "coords/rank round trip %d -> %d", r, back);
    }
    int wrap[2] = {-1, dims[1]}, wr;
    MPI_OK(MPI_Cart_rank(torus, wrap, &wr));
    CHECK(wr == (dims[0] - 1) * dims[1], "periodic wrap rank %d", wr);

    /* Neighbourhood collectives: neighbour order is (dim0 -1, dim0 +1, dim1 -1, dim1 +1). */
    int nb[4];
    MPI_Cart_shift(torus, 0, 1, &nb[0], &nb[1]);
    MPI_Cart_shift(torus, 1, 1, &nb[2], &nb[3]);
    /* When a periodic dimension has 1 or 2 processes, the -1 and +1 neighbours are the
     * same process; MPI 4.1 says the block sent in direction +1 lands in the receiver's
     * -1 slot. Some MPICH versions pair such blocks in posting order instead, so those
     * slots are checked on OxMPI only. */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen;
    MPI_Get_library_version(lib, &liblen);
    int oxmpi = strstr(lib, "OxMPI") != NULL;
#define CHECKED(i) (oxmpi || dims[(i) / 2] > 2)
    int mine = 1000 + trank, got[4] = {-1, -1, -1, -1};
    MPI_OK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, torus));
    for (int i = 0; i < 4; i++)
        CHECK(got[i] == 1000 + nb[i], "neighbor_allgather slot %d: %d from %d", i, got[i], nb[i]);
    /* alltoall: block j sent to neighbour j carries (me, j). A neighbour reached in
     * direction -1 from me sees me in its +1 slot and vice versa. */
    int sendb[4], recvb[4];
    for (int j = 0; j < 4; j++)
        sendb[j] = trank * 10 + j;
    MPI_OK(MPI_Neighbor_alltoall(sendb, 1, MPI_INT, recvb, 1, MPI_INT, torus));
    for (int i = 0; i < 4; i++)
        CHECK(!CHECKED(i) || recvb[i] == nb[i] * 10 + (i ^ 1), "neighbor_alltoall slot %d: %d", i, recvb[i]);
    /* Nonblocking versions, and alltoallv with varying counts. */
    MPI_Request rq;
    memset(got, -1, sizeof got);
    MPI_OK(MPI_Ineighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, torus, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        CHECK(got[i] == 1000 + nb[i], "ineighbor_allgather slot %d", i);
    memset(recvb, -1, sizeof recvb);
    MPI_OK(MPI_Ineighbor_alltoall(sendb, 1, MPI_INT, recvb, 1, MPI_INT, torus, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        CHECK(!CHECKED(i) || recvb[i] == nb[i] * 10 + (i ^ 1), "ineighbor_alltoall slot %d: %d", i, recvb[i]);
    int sv[8], rv[8], sc[4] = {1, 2, 1, 2}, sd[4] = {0, 1, 3, 4}, rc[4] = {2, 1, 2, 1}, rd[4] = {0, 2, 3, 5};
    for (int k = 0; k < 6; k++)
        sv[k] = trank * 100 + k;
    memset(rv, -1, sizeof rv);
    MPI_OK(MPI_Ineighbor_alltoallv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, torus, &rq));
    MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < rc[i]; k++)
            CHECK(!CHECKED(i) || rv[rd[i] + k] == nb[i] * 100 + sd[i ^ 1] + k, "ineighbor_alltoallv slot %d elem %d: %d", i, k, rv[rd[i] + k]);

    /* cart_sub: rows (keep dim 1). */
    MPI_Comm row;
    int keep[2] = {0, 1}, rsize, rrank;
    MPI_OK(MPI_Cart_sub(torus, keep, &row));
    MPI_Comm_size(row, &rsize);
    MPI_Comm_rank(row, &rrank);
    CHECK(rsize == dims[1] && rrank == coords[1], "cart_sub row: %d/%d", rrank, rsize);
    MPI_OK(MPI_Cartdim_get(row, &ndims));
    CHECK(ndims == 1, "cart_sub dims %d", ndims);
    MPI_Comm_free(&row);
    /* cart_sub keeping no dimension: a zero-dimensional grid on the grid's rank 0 (congruent
     * to MPI_COMM_SELF), MPI_COMM_NULL on the others (MPICH). */
    MPI_Comm point;
    int none[2] = {0, 0}, cmp;
    MPI_OK(MPI_Cart_sub(torus, none, &point));
    if (trank == 0) {
        CHECK(point != MPI_COMM_NULL, "cart_sub to zero dimensions: MPI_COMM_NULL on rank 0");
        MPI_OK(MPI_Comm_compare(point, MPI_COMM_SELF, &cmp));
        CHECK(cmp == MPI_CONGRUENT, "cart_sub to zero dimensions: compare with self %d", cmp);
        MPI_OK(MPI_Topo_test(point, &topo));
        MPI_OK(MPI_Cartdim_get(point, &ndims));
        CHECK(topo == MPI_CART && ndims == 0, "cart_sub to zero dimensions: topology %d, %d dims", topo, ndims);
        MPI_Comm_free(&point);
    } else {
        CHECK(point == MPI_COMM_NULL, "cart_sub to zero dimensions: a communicator on grid rank %d", trank);
    }
    MPI_Comm_free(&torus);

    /* Graph: a ring as a graph. */
    int index[64], edges[128];
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + size - 1) % size;
        edges[2 * i + 1] = (i + 1) % size;
    }
    MPI_Comm g;
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
    int nn, ne, cnt, nbrs[2];
    MPI_OK(MPI_Graphdims_get(g, &nn, &ne));
    CHECK(nn == size && ne == 2 * size, "graphdims %d %d", nn, ne);
    MPI_OK(MPI_Graph_neighbors_count(g, rank, &cnt));
    MPI_OK(MPI_Graph_neighbors(g, rank, 2, nbrs));
    CHECK(cnt == 2 && nbrs[0] == (rank + size - 1) % size && nbrs[1] == (rank + 1) % size, "graph neighbours");
    MPI_OK(MPI_Topo_test(g, &topo));
    CHECK(topo == MPI_GRAPH, "topo_test graph");
    int gv[2];
    MPI_OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, gv, 1, MPI_INT, g));
    CHECK(gv[0] == nbrs[0] && gv[1] == nbrs[1], "graph neighbor_allgather");
    MPI_Comm_free(&g);

    /* Dist graph: each rank declares the edge rank -> rank+1 (weighted); adjacent form
     * declares the same graph locally. */
    MPI_Comm dg, da;
    int s1 = rank, d1 = (rank + 1) % size, w1 = rank + 5, deg = 1;
    MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &s1, &deg, &d1, &w1, MPI_INFO_NULL, 0, &dg));
    int indeg, outdeg, weighted, srcs[2], sw[2], dsts[2], dw[2];
    MPI_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == 1 && weighted, "dist graph counts %d %d %d", indeg, outdeg, weighted);
    MPI_OK(MPI_Dist_graph_neighbors(dg, 1, srcs, sw, 1, dsts, dw));
    int left = (rank + size - 1) % size;
    CHECK(srcs[0] == left && sw[0] == left + 5 && dsts[0] == d1 && dw[0] == rank + 5, "dist graph neighbours");
    int from = -1;
    MPI_OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, &from, 1, MPI_INT, dg));
    CHECK(from == left, "dist graph allgather %d", from);
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &d1, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &da));
    MPI_OK(MPI_Dist_graph_neighbors_count(da, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == 1 && !weighted, "adjacent counts");
    MPI_OK(MPI_Topo_test(da, &topo));
    CHECK(topo == MPI_DIST_GRAPH, "topo_test dist graph");
    int sendw = rank * 3, recvw = -1;
    MPI_Aint disp0 = 0;
    int cnt1 = 1;
    MPI_Datatype ti = MPI_INT;
    MPI_OK(MPI_Neighbor_alltoallw(&sendw, &cnt1, &disp0, &ti, &recvw, &cnt1, &disp0, &ti, da));
    CHECK(recvw == left * 3, "neighbor_alltoallw %d", recvw);
    MPI_Comm_free(&dg);
    MPI_Comm_free(&da);

    /* MPI_WEIGHTS_EMPTY: a weighted graph without edges here (MPI 4.1 §8.5.4), in both
     * constructors; MPI_UNWEIGHTED: unweighted; weights missing for real edges: an error. */
    MPI_Comm de;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL, MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &de));
    MPI_OK(MPI_Dist_graph_neighbors_count(de, &indeg, &outdeg, &weighted));
    CHECK(indeg == 0 && outdeg == 0 && weighted, "WEIGHTS_EMPTY adjacent: %d %d weighted=%d", indeg, outdeg, weighted);
    MPI_Comm_free(&de);
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &de));
    MPI_OK(MPI_Dist_graph_neighbors_count(de, &indeg, &outdeg, &weighted));
    CHECK(indeg == 0 && outdeg == 0 && !weighted, "UNWEIGHTED empty adjacent: weighted=%d", weighted);
    MPI_Comm_free(&de);
    /* Rank 0 contributes every edge i -> i+1 with weight 10+i; the others none. */
    int ns = rank == 0 ? size : 0, es[64], ed[64], ew[64], ones[64];
    for (int i = 0; i < ns && i < 64; i++) {
        es[i] = i; ed[i] = (i + 1) % size; ew[i] = 10 + i; ones[i] = 1;
    }
    MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, ns, es, ones, ed, ns ? ew : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &de));
    MPI_OK(MPI_Dist_graph_neighbors_count(de, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == 1 && weighted, "create with WEIGHTS_EMPTY elsewhere: %d %d %d", indeg, outdeg, weighted);
    MPI_OK(MPI_Dist_graph_neighbors(de, 1, srcs, sw, 1, dsts, dw));
    CHECK(srcs[0] == left && sw[0] == 10 + left && dsts[0] == d1 && dw[0] == 10 + rank, "weights %d %d", sw[0], dw[0]);
    MPI_Comm_free(&de);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int erc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_WEIGHTS_EMPTY, 1, &d1, MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &de);
    int cls;
    MPI_Error_class(erc, &cls);
    CHECK(cls == MPI_ERR_ARG, "WEIGHTS_EMPTY with edges: class %d", cls);

    /* A grid with a dimension of 0 holds no process (rsmpi's cartesian_map example asks
     * for {2, size/4}): MPI_UNDEFINED and MPI_COMM_NULL everywhere, as MPICH; a negative
     * dimension is MPI_ERR_DIMS. */
    int zdims[2] = {2, 0}, zper[2] = {0, 1}, nr = 12345;
    MPI_Comm zc = MPI_COMM_WORLD;
    MPI_OK(MPI_Cart_map(MPI_COMM_WORLD, 2, zdims, zper, &nr));
    CHECK(nr == MPI_UNDEFINED, "Cart_map of a {2, 0} grid: newrank %d", nr);
    MPI_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, zdims, zper, 0, &zc));
    CHECK(zc == MPI_COMM_NULL, "Cart_create of a {2, 0} grid gave a communicator");
    zdims[1] = -1;
    erc = MPI_Cart_map(MPI_COMM_WORLD, 2, zdims, zper, &nr);
    MPI_Error_class(erc, &cls);
    CHECK(cls == MPI_ERR_DIMS, "Cart_map of a {2, -1} grid: class %d", cls);
    erc = MPI_Cart_create(MPI_COMM_WORLD, 2, zdims, zper, 0, &zc);
    MPI_Error_class(erc, &cls);
    CHECK(cls == MPI_ERR_DIMS, "Cart_create of a {2, -1} grid: class %d", cls);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("topo_cart: OK\n");
    MPI_Finalize();
    return 0;
}
