/* Preloaded into ScaLAPACK's test drivers by mpich-binaries.sh: works around a ScaLAPACK
 * 2.2.1 bug, not an MPI one.
 *
 * P?GERFS, P?PORFS and the other refinement routines pass their local EST to the norm
 * estimator P?LACON uninitialised, and P?LACON's tests (EST <= ESTOLD, TEMP > EST) read it
 * (valgrind: "Conditional jump or move depends on uninitialised value(s) at pslacon_ ...
 * created by a stack allocation at psporfs_"; logged at each call, the caller's EST held
 * different pointer-like leftovers on each rank and was not written during the estimate),
 * so the branch taken depends on whatever an earlier call left at that stack slot. When two processes of one grid column branch differently they call different
 * BLACS operations and the job fails (a broadcast meeting an all-reduce) or hangs. With
 * MPICH the leftover bytes happen to agree; with OxMPI they differ from build to build
 * (xsllt failed 5 runs in 6 at one commit, passed every run at the one before).
 *
 * The fix is what P?LACON's caller should do: EST starts at zero on the first call
 * (KASE = 0), so every process starts from the same value. */
#define _GNU_SOURCE
#include <dlfcn.h>

typedef void real_lacon(int *, void *, int *, int *, int *, void *, int *, int *, int *, int *, float *, int *);
typedef void real_lacon_d(int *, void *, int *, int *, int *, void *, int *, int *, int *, int *, double *, int *);
typedef void complex_lacon(int *, void *, int *, int *, int *, void *, int *, int *, int *, float *, int *);
typedef void complex_lacon_d(int *, void *, int *, int *, int *, void *, int *, int *, int *, double *, int *);

#define NEXT(type, name) ((type *)dlsym(RTLD_NEXT, name))

void pslacon_(int *n, void *v, int *iv, int *jv, int *descv, void *x, int *ix, int *jx, int *descx, int *isgn, float *est, int *kase) {
    if (*kase == 0)
        *est = 0;
    NEXT(real_lacon, "pslacon_")(n, v, iv, jv, descv, x, ix, jx, descx, isgn, est, kase);
}

void pdlacon_(int *n, void *v, int *iv, int *jv, int *descv, void *x, int *ix, int *jx, int *descx, int *isgn, double *est, int *kase) {
    if (*kase == 0)
        *est = 0;
    NEXT(real_lacon_d, "pdlacon_")(n, v, iv, jv, descv, x, ix, jx, descx, isgn, est, kase);
}

void pclacon_(int *n, void *v, int *iv, int *jv, int *descv, void *x, int *ix, int *jx, int *descx, float *est, int *kase) {
    if (*kase == 0)
        *est = 0;
    NEXT(complex_lacon, "pclacon_")(n, v, iv, jv, descv, x, ix, jx, descx, est, kase);
}

void pzlacon_(int *n, void *v, int *iv, int *jv, int *descv, void *x, int *ix, int *jx, int *descx, double *est, int *kase) {
    if (*kase == 0)
        *est = 0;
    NEXT(complex_lacon_d, "pzlacon_")(n, v, iv, jv, descv, x, ix, jx, descx, est, kase);
}
