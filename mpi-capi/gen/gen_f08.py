#!/usr/bin/env python3
"""Generate OxMPI's Fortran 2008 module `mpi_f08` (mpi-capi/fortran/mpi_f08.f90).

Inputs:  what gen_fortran.py reads (the C prototypes of mpi31.txt/mpi40.txt/mpi41.txt through
         gen_abi.py, the constants of mpi-capi/src/abi/consts.rs) and its classification of
         every argument of every Fortran binding.
Output:  mpi-capi/fortran/mpi_f08.f90, compiled at install time (scripts/install-fortran.sh)
         into PREFIX/include/mpi_f08.mod and, with the `mpi` module, libmpi_fortran.so.

Design: the module has no wrapper code for MPI routines. Every routine is a generic name
whose one specific is an explicit interface to one of libmpi's existing Fortran entry points
(mpi-capi/src/fortran.rs): `MPI_Send` resolves to `mpi_send_f08` (the standard's specific
name MPI_Send_f08, symbol `mpi_send_f08_`, which a profiling tool may define), `PMPI_Send`
to `pmpi_send` (`pmpi_send_`), both the same code. That is ABI-exact because
- a handle type (TYPE(MPI_Comm), ...) is BIND(C) with one C int, MPI_VAL: passed by
  reference it is the address of the integer handle the F77 entry point reads or writes;
- TYPE(MPI_Status) is BIND(C) with the five C ints of the MPICH ABI's MPI_Status, the
  array the F77 entry points take;
- an absent OPTIONAL ierror is passed as a null pointer (gfortran's convention), which the
  entry points skip (set_ierr);
- LOGICAL, CHARACTER (hidden lengths after all arguments) and INTEGER are as in F77;
- the f08 callbacks (MPI_User_function with TYPE(C_PTR), VALUE vectors, the attribute,
  error handler and generalized request callbacks) have the calling sequences the F77
  bindings already call Fortran procedures with (by reference; VALUE C_PTR = the vector's
  address, which the C layer passes);
- the sentinels (MPI_BOTTOM, MPI_STATUS_IGNORE, ...) live in the same COMMON blocks as in
  mpif.h and the `mpi` module, so the entry points recognise them by address.
Choice buffers are `TYPE(*), DIMENSION(*)` with `!GCC$ ATTRIBUTES NO_ARG_CHECK`, hence
MPI_SUBARRAYS_SUPPORTED = MPI_ASYNC_PROTECTS_NONBLOCKING = .FALSE. The only module
procedures (code in libmpi_fortran.so) are the handle comparisons; TYPE(MPI_Status),
MPI_Status_f2f08/f082f, MPI_Sizeof and MPI_F_sync_reg are the `mpi` module's.

Routines MPI-3.0 removed (MPI_Address, MPI_Type_extent, ..., MPI_Errhandler_set) have no
f08 binding in the standard and none here (see REMOVED).

Files are written only when their content changes. Python 3 standard library only.
Usage: `python3 mpi-capi/gen/gen_f08.py` (`--check`: exit 1 if the output is stale).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
import gen_abi  # noqa: E402
import gen_fortran as gf  # noqa: E402

OUT = os.path.join(gf.CRATE, "fortran", "mpi_f08.f90")

HANDLE_TYPES = ["MPI_Comm", "MPI_Datatype", "MPI_Group", "MPI_Info", "MPI_Op", "MPI_Request",
                "MPI_Errhandler", "MPI_Message", "MPI_Win", "MPI_File", "MPI_Session"]
# Removed in MPI-3.0: the standard gives them no mpi_f08 binding.
REMOVED = {"MPI_Address", "MPI_Errhandler_create", "MPI_Errhandler_get", "MPI_Errhandler_set",
           "MPI_Type_extent", "MPI_Type_hindexed", "MPI_Type_hvector", "MPI_Type_lb",
           "MPI_Type_struct", "MPI_Type_ub"}
KIND_NAMES = {"MPI_Aint": "MPI_ADDRESS_KIND", "MPI_Offset": "MPI_OFFSET_KIND",
              "MPI_Count": "MPI_COUNT_KIND"}

# The standard's abstract interfaces of the f08 callbacks (no INTENTs: a user procedure
# must match them exactly). Each: (name, dummy list, declarations).
ABSTRACT = [
    ("MPI_User_function", "invec, inoutvec, len, datatype",
     ["type(c_ptr), value :: invec, inoutvec", "integer :: len", "type(MPI_Datatype) :: datatype"]),
    ("MPI_User_function_c", "invec, inoutvec, len, datatype",
     ["type(c_ptr), value :: invec, inoutvec", "integer(kind=MPI_COUNT_KIND) :: len",
      "type(MPI_Datatype) :: datatype"]),
    ("MPI_Copy_function", "oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, flag, ierror",
     ["type(MPI_Comm) :: oldcomm",
      "integer :: keyval, extra_state, attribute_val_in, attribute_val_out, ierror",
      "logical :: flag"]),
    ("MPI_Delete_function", "comm, keyval, attribute_val, extra_state, ierror",
     ["type(MPI_Comm) :: comm", "integer :: keyval, attribute_val, extra_state, ierror"]),
    ("MPI_Grequest_query_function", "extra_state, status, ierror",
     ["type(MPI_Status) :: status", "integer :: ierror",
      "integer(kind=MPI_ADDRESS_KIND) :: extra_state"]),
    ("MPI_Grequest_free_function", "extra_state, ierror",
     ["integer :: ierror", "integer(kind=MPI_ADDRESS_KIND) :: extra_state"]),
    ("MPI_Grequest_cancel_function", "extra_state, complete, ierror",
     ["integer(kind=MPI_ADDRESS_KIND) :: extra_state", "logical :: complete", "integer :: ierror"]),
]
for _obj, _old in (("Comm", "oldcomm"), ("Type", "oldtype"), ("Win", "oldwin")):
    _h = "MPI_Datatype" if _obj == "Type" else "MPI_" + _obj
    _k = _obj.lower() + "_keyval"
    ABSTRACT += [
        ("MPI_%s_copy_attr_function" % _obj,
         "%s, %s, extra_state, attribute_val_in, attribute_val_out, flag, ierror" % (_old, _k),
         ["type(%s) :: %s" % (_h, _old), "integer :: %s, ierror" % _k,
          "integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out",
          "logical :: flag"]),
        ("MPI_%s_delete_attr_function" % _obj,
         "%s, %s, attribute_val, extra_state, ierror" % (_old[3:], _k),
         ["type(%s) :: %s" % (_h, _old[3:]), "integer :: %s, ierror" % _k,
          "integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state"]),
    ]
for _obj in ("Comm", "Win", "File", "Session"):
    ABSTRACT.append(("MPI_%s_errhandler_function" % _obj, "%s, error_code" % _obj.lower(),
                     ["type(MPI_%s) :: %s" % (_obj, _obj.lower()), "integer :: error_code"]))

# The predefined callbacks libmpi exports under their Fortran names (fortran.rs).
PREDEFINED = [("MPI_Copy_function", ["MPI_NULL_COPY_FN", "MPI_DUP_FN"]),
              ("MPI_Delete_function", ["MPI_NULL_DELETE_FN"])]
for _obj in ("Comm", "Type", "Win"):
    _u = _obj.upper()
    PREDEFINED += [("MPI_%s_copy_attr_function" % _obj, ["MPI_%s_NULL_COPY_FN" % _u, "MPI_%s_DUP_FN" % _u]),
                   ("MPI_%s_delete_attr_function" % _obj, ["MPI_%s_NULL_DELETE_FN" % _u])]

# Sentinels: the COMMON blocks of mpif.h and the `mpi` module (gen_fortran.COMMON_DECLS),
# with f08 types of the same sizes.
COMMON_DECLS = [
    "integer :: MPI_BOTTOM, MPI_IN_PLACE",
    "type(MPI_Status) :: MPI_STATUS_IGNORE",
    "type(MPI_Status) :: MPI_STATUSES_IGNORE(1)",
    "integer :: MPI_ERRCODES_IGNORE(1)",
    "character(len=1) :: MPI_ARGVS_NULL(1,1), MPI_ARGV_NULL(1)",
    "integer :: MPI_UNWEIGHTED(1), MPI_WEIGHTS_EMPTY(1)",
    "integer :: MPI_PRIV1_PAD(1), MPI_PRIV2_PAD(2), MPI_FCMB5_PAD(3), MPI_FCMB9_PAD(3)",
    "character(len=1) :: MPI_PRIVC_PAD(14)",
    "common /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE, MPI_PRIV1_PAD",
    "common /MPIPRIV2/ MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE, MPI_PRIV2_PAD",
    "common /MPIPRIVC/ MPI_ARGVS_NULL, MPI_ARGV_NULL, MPI_PRIVC_PAD",
    "common /MPIFCMB5/ MPI_UNWEIGHTED, MPI_FCMB5_PAD",
    "common /MPIFCMB9/ MPI_WEIGHTS_EMPTY, MPI_FCMB9_PAD",
    "save /MPIPRIV1/, /MPIPRIV2/, /MPIPRIVC/, /MPIFCMB5/, /MPIFCMB9/",
]


def const_types():
    """{constant name: its C type} from consts.rs (handle constants become typed)."""
    out = {}
    with open(gf.CONSTS) as f:
        for line in f:
            m = gf.CONST_RE.match(line.strip())
            if m:
                out[m.group(1)] = m.group(2)
    return out


def f08_constants(fconsts):
    ctype = const_types()
    L = []
    for name, ty, val in fconsts:
        h = ctype.get(name)
        if name == "MPI_FILE_NULL":
            h = "MPI_File"
        if h in HANDLE_TYPES:
            L.append("  type(%s), parameter :: %s = %s(%s)" % (h, name, h, val))
        else:
            fty = "integer(kind=8)" if ty == "INTEGER*8" else ty.lower()
            L.append("  %s, parameter :: %s = %s" % (fty, name, val))
    return L


def f08_decl(a):
    """Declaration lines of dummy argument a (a gen_fortran.Arg) in an f08 interface."""
    k, n = a.kind, a.name
    if k in ("choice", "raw", "detach"):
        return ["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % n, "type(*), dimension(*) :: %s" % n]
    if k in ("attr_copy_fn", "attr_delete_fn") and a.func == "MPI_Keyval_create":
        # Programs (MPICH's attrmpi1f08) pass MPI_COMM_NULL_COPY_FN and friends to the
        # deprecated MPI_Keyval_create too: any procedure is accepted (the predefined ones
        # work with either calling sequence).
        return ["external :: %s" % n]
    if k in ("callback", "attr_copy_fn", "attr_delete_fn", "greq_fn"):
        return ["procedure(%s) :: %s" % (a.base, n)]
    if k in ("str_in", "str_out"):
        return ["character(len=*)%s :: %s" % (", intent(in)" if k == "str_in" else "", n)]
    if k in ("argv_in", "cmds_in"):
        return ["character(len=*), intent(in) :: %s(*)" % n]
    if k == "argvs_in":
        return ["character(len=*), intent(in) :: %s(count,*)" % n]
    if k == "status_in":
        return ["type(MPI_Status), intent(in) :: %s" % n]
    if k == "status":
        return ["type(MPI_Status) :: %s" % n]
    if k == "statuses":
        return ["type(MPI_Status) :: %s(*)" % n]
    if k in ("file_in", "file_ptr"):
        return ["type(MPI_File)%s :: %s" % (", intent(in)" if k == "file_in" else "", n)]
    narrow = a.func in ("MPI_Attr_put", "MPI_Attr_get", "MPI_Keyval_create")
    if k in ("attr_in", "attr_out", "extra_state", "greq_state"):
        ty = "integer" if narrow else "integer(kind=MPI_ADDRESS_KIND)"
        return ["%s%s :: %s" % (ty, ", intent(in)" if k == "attr_in" else "", n)]
    if k == "logical_in":
        return ["logical, intent(in) :: %s" % n]
    if k == "logical_out":
        return ["logical :: %s" % n]
    if k == "logical_array":
        return ["logical%s :: %s(*)" % (", intent(in)" if a.const else "", n)]
    if a.base in gf.HANDLES:
        ty = "type(%s)" % a.base
    elif a.base in KIND_NAMES:
        ty = "integer(kind=%s)" % KIND_NAMES[a.base]
    else:
        ty = "integer"
    if k in ("val", "keyval_in") or a.const:
        ty += ", intent(in)"
    if a.array or k in ("errcodes", "weights", "indices_out"):
        return ["%s :: %s(%s)" % (ty, n, ",".join(list(reversed(a.inner_dims)) + ["*"]))]
    return ["%s :: %s" % (ty, n)]


def interface_body(f):
    """The explicit interface of libmpi's Fortran entry point mpi_x_f08_ with f08 types."""
    name = f.lower + "_f08"
    fargs = [a.name for a in f.fargs()]
    ind = "    "
    if f.is_sub:
        L = gf.wrap_free("subroutine " + name, fargs + ["ierror"], ind)
    else:
        ty = "double precision" if f.c.ret == "f64" else "integer(kind=MPI_ADDRESS_KIND)"
        L = gf.wrap_free(ty + " function " + name, fargs, ind)
    L.append(ind + "  import")
    L.append(ind + "  implicit none")
    for a in f.fargs():
        for d in f08_decl(a):
            L.append(ind + "  " + d)
    if f.is_sub:
        L.append(ind + "  integer, optional, intent(out) :: ierror")
    L.append(ind + "end " + ("subroutine " if f.is_sub else "function ") + name)
    return L


def tkr(a):
    """What generic resolution sees of dummy a: (type and kind, array?); None matches anything
    (an assumed-type choice buffer)."""
    d = f08_decl(a)[-1]
    if d.startswith("type(*)"):
        return None
    if d.startswith("procedure("):  # dummy procedures differ from data, not from each other
        return "procedure", False
    ty = d.split("::")[0].replace(", intent(in)", "").strip()
    for kind in KIND_NAMES.values():  # all three are 8 bytes: one kind to the compiler
        ty = ty.replace("kind=" + kind, "kind=8")
    return ty, "(" in d.split("::")[1]


def distinguishable(f, g):
    """Whether a generic may hold both f and g (same dummy names position by position, so
    the standard's rule comes down to: another count, or one position whose TKR differ)."""
    fa, ga = f.fargs(), g.fargs()
    if len(fa) != len(ga):
        return True
    return any(tkr(x) is not None and tkr(y) is not None and tkr(x) != tkr(y)
               for x, y in zip(fa, ga))


def large_count(funcs):
    """{name of MPI_X: MPI_X_c} for the large-count functions the generic MPI_X also names;
    the others (MPI_Type_get_extent_c, ...: MPI_Count and MPI_Aint are one kind here, so the
    two would be ambiguous) keep their own name MPI_X_c, as the standard's mpi_f08 has them."""
    by_name = {f.name: f for f in funcs if not f.skip and f.name not in REMOVED}
    pairs = {}
    for f in by_name.values():
        base = by_name.get(f.name[:-2]) if f.large else None
        if base is not None and distinguishable(base, f):
            pairs[base.name] = f
    return pairs


def routines(funcs):
    L = []
    pairs = large_count(funcs)
    paired = {g.name for g in pairs.values()}
    for f in funcs:
        if f.skip or f.name in REMOVED or f.name in paired:
            continue
        specifics = [f] + ([pairs[f.name]] if f.name in pairs else [])
        L.append("  interface %s" % f.name)
        for g in specifics:
            L += interface_body(g)
        L.append("  end interface %s" % f.name)
        for g in specifics:
            L.append("  procedure(%s_f08) :: p%s" % (g.lower, g.lower))
        L.append("  interface P%s" % f.name)
        L.append("    procedure :: %s" % ", ".join("p" + g.lower for g in specifics))
        L.append("  end interface P%s" % f.name)
    return L


def handle_ops():
    """`==` and `/=` for every handle type: interfaces, then procedures."""
    eq = ["mpi_%s_eq" % h[4:].lower() for h in HANDLE_TYPES]
    ne = ["mpi_%s_ne" % h[4:].lower() for h in HANDLE_TYPES]
    iface = ["  interface operator(==)"]
    iface += ["    module procedure " + ", ".join(eq[i:i + 5]) for i in range(0, len(eq), 5)]
    iface += ["  end interface", "  interface operator(/=)"]
    iface += ["    module procedure " + ", ".join(ne[i:i + 5]) for i in range(0, len(ne), 5)]
    iface += ["  end interface"]
    procs = []
    for h, e, n in zip(HANDLE_TYPES, eq, ne):
        for fn, op in ((e, "=="), (n, "/=")):
            procs += ["  elemental logical function %s(a, b)" % fn,
                      "    type(%s), intent(in) :: a, b" % h,
                      "    %s = a%%MPI_VAL %s b%%MPI_VAL" % (fn, op),
                      "  end function %s" % fn]
    return iface, procs


def generate(fconsts, funcs):
    L = []
    w = L.append
    w("! mpi_f08.f90 -- OxMPI's Fortran 2008 module (`use mpi_f08`), built with gfortran at")
    w("! install time into mpi_f08.mod and libmpi_fortran.so.")
    w("! @generated by mpi-capi/gen/gen_f08.py -- do not edit.")
    w("! Every routine is an explicit interface to libmpi's Fortran entry points mpi_x_f08_ and")
    w("! pmpi_x_ (see the generator for why that is ABI-exact).")
    w("module mpi_f08")
    w("  use, intrinsic :: iso_c_binding, only : c_int, c_ptr")
    w("  ! The `mpi` module's (TYPE(MPI_Status) is one type in both modules).")
    w("  use mpi, only : MPI_Sizeof, MPI_F_sync_reg, MPI_Status, MPI_Status_f2f08, MPI_Status_f082f")
    w("  implicit none")
    w("  private :: c_int, c_ptr")
    w("  public")
    for h in HANDLE_TYPES:
        w("  type, bind(C) :: %s" % h)
        w("    integer(c_int) :: MPI_VAL")
        w("  end type %s" % h)
    L += f08_constants(fconsts)
    w("  ! Sentinels, recognised by address (COMMON blocks in libmpi).")
    for d in COMMON_DECLS:
        w("  " + d)
    iface, procs = handle_ops()
    L += iface
    w("  abstract interface")
    for name, dummies, decls in ABSTRACT:
        w("    subroutine %s(%s)" % (name, dummies))
        if any("c_ptr" in d for d in decls):
            w("      use, intrinsic :: iso_c_binding, only : c_ptr")
        w("      import")
        w("      implicit none")
        for d in decls:
            w("      " + d)
        w("    end subroutine %s" % name)
    w("  end interface")
    w("  ! Predefined callbacks (Fortran entry points of libmpi).")
    for iface_name, names in PREDEFINED:
        w("  procedure(%s) :: %s" % (iface_name, ", ".join(names)))
    L += routines(funcs)
    w("contains")
    L += procs
    w("end module mpi_f08")
    for line in L:
        if len(line) > 132:
            gf.die("mpi_f08.f90 line longer than 132 columns: %r" % line)
    return "\n".join(L) + "\n"


def main():
    check = "--check" in sys.argv[1:]
    funcs = [gf.FFunc(f) for f in gen_abi.parse_specs()]
    fconsts = gf.fortran_consts(gf.read_consts())
    content = generate(fconsts, funcs)
    rel = os.path.relpath(OUT, gf.ROOT)
    if check:
        try:
            with open(OUT) as fh:
                ok = fh.read() == content
        except FileNotFoundError:
            ok = False
        if not ok:
            gf.die("out of date: %s; run `make gen`" % rel)
        print("gen_f08: up to date")
        return
    changed = gen_abi.write_if_changed(OUT, content)
    n = sum(1 for f in funcs if not f.skip and f.name not in REMOVED)
    print("gen_f08: %d routines in mpi_f08%s" % (n, ("; wrote " + rel) if changed else "; up to date"))


if __name__ == "__main__":
    main()
