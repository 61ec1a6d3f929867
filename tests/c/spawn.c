/* MPI_Comm_spawn and MPI_Comm_spawn_multiple: the parent job spawns copies of this
 * program (argument "child") and checks, on both sides: sizes, MPI_Comm_get_parent,
 * errcodes, point-to-point both ways (4 B and 2 MiB), intercommunicator bcast and
 * allreduce, Intercomm_merge, the children's own MPI_COMM_WORLD, MPI_APPNUM per program of
 * a spawn_multiple, argv, the `wdir` info key, two spawns one after the other, and a
 * command that does not exist (MPI_ERR_SPAWN, the job goes on). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int errors = 0, wrank, wsize;
#define CHECK(cond, ...) do { if (!(cond)) { errors++; fprintf(stderr, "%s rank %d: ", parent == MPI_COMM_NULL ? "parent" : "child", wrank); fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); } } while (0)
static MPI_Comm parent = MPI_COMM_NULL;

/* Both sides: `ic` joins a parent group of `np` and a child group of `nc`. */
static void traffic(MPI_Comm ic, int is_parent, int np, int nc, int round) {
    int lrank, lsize, rsize;
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    CHECK(lsize == (is_parent ? np : nc) && rsize == (is_parent ? nc : np), "sizes %d/%d", lsize, rsize);
    for (int big = 0; big < 2; big++) {
        int n = big ? (1 << 19) : 1;
        int *out = malloc(n * sizeof(int)), *in = malloc(n * sizeof(int));
        for (int i = 0; i < n; i++) out[i] = is_parent * 5000000 + lrank * 1000 + round * 7 + i;
        MPI_Request rq;
        MPI_Isend(out, n, MPI_INT, lrank % rsize, big, ic, &rq);
        for (int r = lrank; r < rsize; r += lsize) {
            MPI_Recv(in, n, MPI_INT, r, big, ic, MPI_STATUS_IGNORE);
            for (int i = 0; i < n; i++)
                if (in[i] != (1 - is_parent) * 5000000 + r * 1000 + round * 7 + i) { CHECK(0, "element %d from %d: %d", i, r, in[i]); break; }
        }
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        free(out);
        free(in);
    }
    int v = 1000 + round;
    if (is_parent) MPI_Bcast(&v, 1, MPI_INT, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
    else {
        v = -1;
        MPI_Bcast(&v, 1, MPI_INT, 0, ic);
        CHECK(v == 1000 + round, "bcast from the parent: %d", v);
    }
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, ic);
    CHECK(sum == rsize, "allreduce %d, expected %d", sum, rsize);
    MPI_Comm m;
    MPI_Intercomm_merge(ic, !is_parent, &m);
    int mr, ms, total = 0, mine = is_parent ? 1 : 100;
    MPI_Comm_rank(m, &mr);
    MPI_Comm_size(m, &ms);
    CHECK(ms == np + nc && mr == (is_parent ? lrank : np + lrank), "merged rank %d of %d", mr, ms);
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, m);
    CHECK(total == np + 100 * nc, "merged allreduce %d", total);
    MPI_Comm_free(&m);
}

/* Intercomm_merge with the same `high` on both sides: any order, but one both groups
 * agree on, each group contiguous. */
static void same_high_merge(MPI_Comm ic, int is_parent) {
    MPI_Comm m;
    int lsize, rsize, mr, ms;
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Intercomm_merge(ic, 0, &m);
    MPI_Comm_rank(m, &mr);
    MPI_Comm_size(m, &ms);
    int *flags = malloc(ms * sizeof(int)), *ranks = malloc(ms * sizeof(int));
    MPI_Allgather(&is_parent, 1, MPI_INT, flags, 1, MPI_INT, m);
    MPI_Allgather(&mr, 1, MPI_INT, ranks, 1, MPI_INT, m);
    int changes = 0, parents = 0;
    for (int i = 0; i < ms; i++) {
        CHECK(ranks[i] == i, "merged rank %d says %d", i, ranks[i]);
        parents += flags[i];
        if (i > 0 && flags[i] != flags[i - 1]) changes++;
    }
    CHECK(ms == lsize + rsize && changes == 1 && parents == (is_parent ? lsize : rsize), "merge with equal high: %d processes, %d parents, %d group changes", ms, parents, changes);
    free(flags);
    free(ranks);
    MPI_Comm_free(&m);
}

static int child(int argc, char **argv) {
    int csize, appnum = -1, flag = 0, *attr;
    MPI_Comm_size(MPI_COMM_WORLD, &csize);
    CHECK(parent != MPI_COMM_NULL, "no parent");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &attr, &flag);
    if (flag) appnum = *attr;
    int np;
    MPI_Comm_remote_size(parent, &np);
    /* argv: child ROUND EXPECTED_APPNUM WDIR_CHECK */
    int round = argc > 2 ? atoi(argv[2]) : -1, want_app = argc > 3 ? atoi(argv[3]) : 0;
    CHECK(appnum == want_app, "MPI_APPNUM %d, expected %d", appnum, want_app);
    int ic_mode = argc > 4 && strcmp(argv[4], "ic") == 0;
    if (argc > 4 && !ic_mode) {
        char cwd[4096];
        CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, argv[4]) == 0, "working directory %s, expected %s", cwd, argv[4]);
    }
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == csize, "children's allreduce %d", sum);
    /* Where the children report to the parents (their rank 0 sums the errors). */
    MPI_Comm report = parent, ic2 = MPI_COMM_NULL;
    if (ic_mode) {
        /* The parents' rank 0 alone spawned us (from MPI_COMM_SELF): a new
         * intercommunicator between both worlds, over the spawn one. */
        MPI_Intercomm_create(MPI_COMM_WORLD, 0, parent, 0, 77, &ic2);
        MPI_Comm_remote_size(ic2, &np);
        traffic(ic2, 0, np, csize, round);
        same_high_merge(ic2, 0);
        report = ic2;
    } else {
        traffic(parent, 0, np, csize, round);
    }
    int all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce(&all, NULL, 1, MPI_INT, MPI_SUM, 0, report);
    if (ic2 != MPI_COMM_NULL) MPI_Comm_free(&ic2);
    MPI_Comm_disconnect(&parent);
    MPI_Comm p2;
    MPI_Comm_get_parent(&p2);
    CHECK(p2 == MPI_COMM_NULL, "get_parent after disconnect");
    MPI_Finalize();
    return 0;
}

static void collect(MPI_Comm ic) {
    int e = 0;
    MPI_Reduce(NULL, &e, 1, MPI_INT, MPI_SUM, wrank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
    if (wrank == 0) CHECK(e == 0, "the children reported %d errors", e);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (argc > 1 && strcmp(argv[1], "child") == 0) return child(argc, argv);
    CHECK(parent == MPI_COMM_NULL, "a parent in the first job");
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = 0;
    /* 1. Spawn 3 children from root 0, then 2 from the last rank. */
    for (int round = 0; round < 2; round++) {
        int nc = round == 0 ? 3 : 2, root = round == 0 ? 0 : wsize - 1, codes[3] = {-1, -1, -1};
        char r[8];
        snprintf(r, sizeof r, "%d", round);
        char *args[] = {"child", r, "0", NULL};
        MPI_Comm ic;
        MPI_Comm_spawn(self, args, nc, MPI_INFO_NULL, root, MPI_COMM_WORLD, &ic, codes);
        /* Every rank gets the codes, not only the root. */
        for (int i = 0; i < nc; i++) CHECK(codes[i] == MPI_SUCCESS, "errcode %d: %d", i, codes[i]);
        traffic(ic, 1, wsize, nc, round);
        collect(ic);
        MPI_Comm_disconnect(&ic);
    }
    /* 2. spawn_multiple: two programs (appnum 0 and 1), the second in /tmp. */
    {
        char *cmds[2] = {self, self};
        char *a0[] = {"child", "2", "0", NULL}, *a1[] = {"child", "2", "1", "/tmp", NULL};
        char **argvs[2] = {a0, a1};
        int np[2] = {1, 2}, codes[3] = {-1, -1, -1};
        MPI_Info infos[2];
        infos[0] = MPI_INFO_NULL;
        MPI_Info_create(&infos[1]);
        MPI_Info_set(infos[1], "wdir", "/tmp");
        MPI_Comm ic;
        MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &ic, codes);
        MPI_Info_free(&infos[1]);
        for (int i = 0; i < 3; i++) CHECK(codes[i] == MPI_SUCCESS, "spawn_multiple errcode %d: %d", i, codes[i]);
        traffic(ic, 1, wsize, 3, 2);
        collect(ic);
        MPI_Comm_disconnect(&ic);
    }
    /* 3. Rank 0 alone spawns (MPI_COMM_SELF); then an intercommunicator of both worlds
     * over the spawn one: the other parents and the children never met before. */
    {
        MPI_Comm ic = MPI_COMM_NULL, ic2;
        char *args[] = {"child", "3", "0", "ic", NULL};
        if (wrank == 0) MPI_Comm_spawn(self, args, 2, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic, MPI_ERRCODES_IGNORE);
        MPI_Intercomm_create(MPI_COMM_WORLD, 0, ic, 0, 77, &ic2);
        traffic(ic2, 1, wsize, 2, 3);
        same_high_merge(ic2, 1);
        collect(ic2);
        MPI_Comm_free(&ic2);
        if (wrank == 0) MPI_Comm_disconnect(&ic);
    }
    /* 4. A command that does not exist: MPI_ERR_SPAWN on every rank, the job goes on. */
    {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm ic = MPI_COMM_SELF;
        int codes[2] = {0, 0}, cls = -1;
        int rc = MPI_Comm_spawn("/nonexistent/oxmpi-no-such-program", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, codes);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_SPAWN, "spawn of a missing program: class %d", cls);
        CHECK(ic == MPI_COMM_NULL, "spawn failed but gave a communicator");
        if (wrank == 0) CHECK(codes[0] == MPI_ERR_SPAWN && codes[1] == MPI_ERR_SPAWN, "errcodes %d %d", codes[0], codes[1]);
        rc = MPI_Comm_spawn(self, MPI_ARGV_NULL, 0, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_ARG || cls == MPI_ERR_SPAWN, "spawn of 0 processes: class %d", cls);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    int all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) printf(all ? "spawn: %d errors\n" : "spawn: OK\n", all);
    MPI_Finalize();
    return all != 0;
}
