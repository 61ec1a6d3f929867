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
Routines with choice buffers are the exception: their buffers are `TYPE(*), DIMENSION(..)`
(MPI_SUBARRAYS_SUPPORTED = MPI_ASYNC_PROTECTS_NONBLOCKING = .TRUE.) and their specifics
mpi_x_f08ts / pmpi_x_f08ts are Fortran wrappers generated after the module (SECTION_ADDRESS
below), which pass array sections on through mpi-capi/src/fortran_sections.rs. The other
choice-like arguments (MPI_Alloc_mem's baseptr, MPI_Get_address's location, ...) stay
`TYPE(*), DIMENSION(*)` with `!GCC$ ATTRIBUTES NO_ARG_CHECK`. The module procedures (code
in libmpi_fortran.so) are the handle comparisons; TYPE(MPI_Status), MPI_Status_f2f08/f082f,
MPI_Sizeof and MPI_F_sync_reg are the `mpi` module's.

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


# Array sections as choice buffers (MPI_SUBARRAYS_SUPPORTED = .TRUE.): a routine with a
# choice buffer resolves to a wrapper mpi_x_f08ts (and PMPI_X to pmpi_x_f08ts) whose buffer
# is TYPE(*), DIMENSION(..): the compiler passes the section's descriptor, which the
# wrapper hands to a helper of mpi-capi/src/fortran_sections.rs (see there) before calling
# libmpi's Fortran entry point pmpi_x_ with a plain address. Per buffer, one of:
#   addr        only the address matters (window bases, attached buffers, split I/O ends);
#   view        the buffer outlives the call and is (buffer, count, datatype): a section
#               becomes a datatype over its elements;
#   kept        nonblocking/persistent collectives (buffers split by rank, or two reduced
#               through one datatype): a section is copied to a contiguous buffer that
#               stays with the request (copied back when a Wait/Test finishes it);
#   contiguous  partitioned communication and single-element atomics: a section is an
#               error;
#   temp        blocking calls: a section is copied to a contiguous buffer (and back for
#               output buffers) around the call.
SECTION_ADDRESS = {("MPI_Free_mem", "base"), ("MPI_Win_create", "base"), ("MPI_Win_attach", "base"),
                   ("MPI_Win_detach", "base"), ("MPI_Buffer_attach", "buffer"), ("MPI_Get_address", "location"),
                   ("MPI_Comm_attach_buffer", "buffer"), ("MPI_Session_attach_buffer", "buffer")}
SECTION_VIEW = {"MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend", "MPI_Irecv", "MPI_Imrecv",
                "MPI_Send_init", "MPI_Bsend_init", "MPI_Ssend_init", "MPI_Rsend_init", "MPI_Recv_init",
                "MPI_Isendrecv", "MPI_Isendrecv_replace", "MPI_Ibcast", "MPI_Bcast_init",
                "MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Get_accumulate", "MPI_Rput", "MPI_Rget",
                "MPI_Raccumulate", "MPI_Rget_accumulate",
                "MPI_File_iread", "MPI_File_iread_all", "MPI_File_iread_at", "MPI_File_iread_at_all",
                "MPI_File_iread_shared", "MPI_File_iwrite", "MPI_File_iwrite_all", "MPI_File_iwrite_at",
                "MPI_File_iwrite_at_all", "MPI_File_iwrite_shared", "MPI_File_read_all_begin",
                "MPI_File_read_at_all_begin", "MPI_File_read_ordered_begin", "MPI_File_write_all_begin",
                "MPI_File_write_at_all_begin", "MPI_File_write_ordered_begin"}
# The count and datatype arguments that go with a view buffer.
VIEW_ARGS = {"buf": ("count", "datatype"), "buffer": ("count", "datatype"),
             "sendbuf": ("sendcount", "sendtype"), "recvbuf": ("recvcount", "recvtype"),
             "origin_addr": ("origin_count", "origin_datatype"),
             "result_addr": ("result_count", "result_datatype")}
# The object a wrapper raises its errors on (fortran_sections.rs: ON_COMM, ON_WIN, ON_FILE).
ON_KIND = {"MPI_Comm": 0, "MPI_Win": 1, "MPI_File": 2}


def base_name(func):
    """MPI_X for MPI_X and its large-count form MPI_X_c."""
    return func[:-2] if func.endswith("_c") else func


def section_class(a):
    """How choice argument a of an `_f08ts` wrapper is passed on (see SECTION_ADDRESS)."""
    base = base_name(a.func)
    if (base, a.name) in SECTION_ADDRESS or (base.startswith("MPI_File_") and base.endswith("_end")):
        return "addr"
    if base in SECTION_VIEW:
        return "view"
    if base in ("MPI_Psend_init", "MPI_Precv_init", "MPI_Fetch_and_op", "MPI_Compare_and_swap"):
        return "contiguous"
    if base.startswith("MPI_I") or base.endswith("_init"):
        return "kept"
    return "temp"


def is_choice(a):
    """A choice buffer of an `_f08ts` wrapper: the choice arguments, and MPI_Get_address's
    location (the address of a section's first element, not of a temporary copy)."""
    return a.kind == "choice" or (base_name(a.func), a.name) == ("MPI_Get_address", "location")


def has_sections(f):
    return any(is_choice(a) for a in f.args)


def section_wrappers(funcs):
    """The helper interfaces and, per routine with choice buffers, the external procedures
    mpi_x_f08ts (forwards to PMPI_X, so a profiling tool may replace it) and pmpi_x_f08ts."""
    L = ["! Array sections: the wrappers the generics of routines with choice buffers name",
         "! (gen_f08.py, SECTION_ADDRESS; mpi-capi/src/fortran_sections.rs).",
         "module mpi_f08_sections",
         "  use, intrinsic :: iso_c_binding, only : c_int, c_long, c_ptr, c_char",
         "  implicit none",
         "  interface",
         "    type(c_ptr) function oxmpi_f08ts_addr(desc) bind(C)",
         "      import",
         "      type(*), dimension(..) :: desc",
         "    end function oxmpi_f08ts_addr",
         "    integer(c_int) function oxmpi_f08ts_contiguous(desc, addr, on, handle, func, arg) bind(C)",
         "      import",
         "      type(*), dimension(..) :: desc",
         "      type(c_ptr) :: addr",
         "      integer(c_int), value :: on, handle",
         "      character(kind=c_char) :: func(*), arg(*)",
         "    end function oxmpi_f08ts_contiguous",
         "    integer(c_int) function oxmpi_f08ts_view(desc, count, datatype, addr, count_out, type_out, &",
         "        on, handle, func) bind(C)",
         "      import",
         "      type(*), dimension(..) :: desc",
         "      integer(c_long), value :: count",
         "      integer(c_int), value :: datatype",
         "      type(c_ptr) :: addr",
         "      integer(c_long) :: count_out",
         "      integer(c_int) :: type_out",
         "      integer(c_int), value :: on, handle",
         "      character(kind=c_char) :: func(*)",
         "    end function oxmpi_f08ts_view",
         "    subroutine oxmpi_f08ts_free_type(datatype) bind(C)",
         "      import",
         "      integer(c_int), value :: datatype",
         "    end subroutine oxmpi_f08ts_free_type",
         "    integer(c_int) function oxmpi_f08ts_temp(desc, addr, on, handle, func) bind(C)",
         "      import",
         "      type(*), dimension(..) :: desc",
         "      type(c_ptr) :: addr",
         "      integer(c_int), value :: on, handle",
         "      character(kind=c_char) :: func(*)",
         "    end function oxmpi_f08ts_temp",
         "    subroutine oxmpi_f08ts_keep(desc, addr, copy_out, request) bind(C)",
         "      import",
         "      type(*), dimension(..) :: desc",
         "      type(c_ptr), value :: addr",
         "      integer(c_int), value :: copy_out, request",
         "    end subroutine oxmpi_f08ts_keep",
         "    subroutine oxmpi_f08ts_temp_end(desc, addr, copy_out) bind(C)",
         "      import",
         "      type(*), dimension(..) :: desc",
         "      type(c_ptr), value :: addr",
         "      integer(c_int), value :: copy_out",
         "    end subroutine oxmpi_f08ts_temp_end",
         "  end interface",
         "end module mpi_f08_sections"]
    uses = ["  use mpi_f08_types"]
    for f in funcs:
        if not has_sections(f):
            continue
        name = specific(f)
        fargs = [a.name for a in f.fargs()] + ["ierror"]
        # mpi_x_f08ts: forwards to the generic PMPI_X.
        L += gf.wrap_free("subroutine " + name, fargs, "")
        L += uses
        L.append("  implicit none")
        L += dummy_decls(f, "  ")
        L.append("  interface")
        L += interface_body(f, "    ", "p" + name)
        L.append("  end interface")
        L += gf.wrap_free("  call p" + name, fargs, "")
        L.append("end subroutine " + name)
        L += pmpi_wrapper(f, uses)
    return L


def pmpi_wrapper(f, uses):
    """pmpi_x_f08ts: each choice buffer through its helper, then libmpi's pmpi_x_."""
    name = "p" + specific(f)
    fargs = [a.name for a in f.fargs()] + ["ierror"]
    choice = [a for a in f.fargs() if is_choice(a)]
    by_name = {a.name: a for a in f.fargs()}
    on, handle = 3, "0"
    for a in f.fargs():
        if a.base in ON_KIND:
            on, handle = ON_KIND[a.base], "%s%%MPI_VAL" % a.name
            break
    fname = "'%s'//c_null_char" % f.name
    strings = [a.name for a in f.fargs() if a.kind == "str_in"]  # hidden lengths follow ierror
    L = gf.wrap_free("subroutine " + name, fargs, "")
    L.append("  use, intrinsic :: iso_c_binding, only : c_ptr, c_long, c_null_char, c_char, c_size_t")
    L += uses
    L.append("  use mpi_f08_sections")
    L.append("  implicit none")
    L += dummy_decls(f, "  ")
    # libmpi's Fortran entry point, taking each choice buffer as an address.
    L.append("  interface")
    L += gf.wrap_free("    subroutine entry", fargs + ["len_" + s for s in strings], "")
    L[-1] += ' &'
    L.append('        bind(C, name="p%s_")' % f.lower)
    L.append("      import")
    L.append("      implicit none")
    for a in f.fargs():
        if is_choice(a):
            L.append("      type(c_ptr), value :: %s" % a.name)
        elif a.kind == "str_in":
            L.append("      character(kind=c_char), intent(in) :: %s(*)" % a.name)
        else:
            if a.kind not in ("val", "status", "file_in", "keyval_in") and a.base not in gf.HANDLES \
                    and a.base not in KIND_NAMES and a.base != "int":
                gf.die("%s: argument %s (%s) cannot be passed through bind(C)" % (f.name, a.name, a.kind))
            for d in f08_decl(a):
                L.append("      " + d)
    L.append("      integer, optional :: ierror")
    for s in strings:
        L.append("      integer(c_size_t), value :: len_%s" % s)
    L.append("    end subroutine entry")
    L.append("  end interface")
    L.append("  type(c_ptr) :: %s" % ", ".join("a_" + a.name for a in choice))
    views = [a for a in choice if section_class(a) == "view"]
    for a in views:
        L.append("  integer(c_long) :: n_%s" % a.name)
        L.append("  integer :: t_%s" % a.name)
    L.append("  integer :: e")
    if any(section_class(a) == "kept" for a in choice):
        if "request" not in by_name:
            gf.die("%s: kept buffers without a request" % f.name)
        L.append("  integer :: ie")
    pass_args = []
    undo = []  # statements that release what the helpers made so far, newest first
    for a in choice:
        cls = section_class(a)
        n = a.name
        fail = ["  if (e /= 0) then"] + ["  " + u for u in undo] +                ["    if (present(ierror)) ierror = e", "    return", "  end if"]
        if cls == "addr":
            L.append("  a_%s = oxmpi_f08ts_addr(%s)" % (n, n))
        elif cls == "contiguous":
            L += gf.wrap_free("  e = oxmpi_f08ts_contiguous", [n, "a_" + n, str(on), handle, fname,
                                                              "'%s'//c_null_char" % n], "")
            L += fail
        elif cls in ("temp", "kept"):
            L += gf.wrap_free("  e = oxmpi_f08ts_temp", [n, "a_" + n, str(on), handle, fname], "")
            L += fail
            undo.insert(0, "  call oxmpi_f08ts_temp_end(%s, a_%s, 0)" % (n, n))
        else:
            cnt, dt = VIEW_ARGS[n]
            if cnt not in by_name or dt not in by_name:
                gf.die("%s: view buffer %s without %s/%s" % (f.name, n, cnt, dt))
            L += gf.wrap_free("  e = oxmpi_f08ts_view", [n, "int(%s, c_long)" % cnt, "%s%%MPI_VAL" % dt,
                                                         "a_" + n, "n_" + n, "t_" + n, str(on), handle,
                                                         fname], "")
            L += fail
            undo.insert(0, "  if (t_%s /= %s%%MPI_VAL) call oxmpi_f08ts_free_type(t_%s)" % (n, dt, n))
    for a in f.fargs():
        n = a.name
        if is_choice(a):
            pass_args.append("a_" + n)
        elif any(section_class(b) == "view" and VIEW_ARGS[b.name][0] == n for b in views):
            b = [b for b in views if VIEW_ARGS[b.name][0] == n][0]
            pass_args.append("int(n_%s, kind(%s))" % (b.name, n))
        elif any(VIEW_ARGS[b.name][1] == n for b in views):
            b = [b for b in views if VIEW_ARGS[b.name][1] == n][0]
            pass_args.append("MPI_Datatype(t_%s)" % b.name)
        else:
            pass_args.append(n)
    kept = [a for a in choice if section_class(a) == "kept"]
    if kept:
        # The copies go with the request if the call started one, else back now.
        L += gf.wrap_free("  call entry", pass_args + ["ie"] + ["len(%s, c_size_t)" % s for s in strings], "")
        L.append("  if (ie == 0) then")
        for a in kept:
            L.append("    call oxmpi_f08ts_keep(%s, a_%s, %d, request%%MPI_VAL)" % (a.name, a.name, 0 if a.const else 1))
        L.append("  else")
        for a in kept:
            L.append("    call oxmpi_f08ts_temp_end(%s, a_%s, 0)" % (a.name, a.name))
        L.append("  end if")
        L.append("  if (present(ierror)) ierror = ie")
    else:
        L += gf.wrap_free("  call entry", pass_args + ["ierror"] + ["len(%s, c_size_t)" % s for s in strings], "")
    for a in choice:
        if section_class(a) == "temp":
            L.append("  call oxmpi_f08ts_temp_end(%s, a_%s, %d)" % (a.name, a.name, 0 if a.const else 1))
        elif section_class(a) == "view":
            dt = VIEW_ARGS[a.name][1]
            L.append("  if (t_%s /= %s%%MPI_VAL) call oxmpi_f08ts_free_type(t_%s)" % (a.name, dt, a.name))
    L.append("end subroutine " + name)
    return L


def const_types():
    """{constant name: its C type} from consts.rs (handle constants become typed)."""
    out = {}
    with open(gf.CONSTS) as f:
        for line in f:
            m = gf.CONST_RE.match(line.strip())
            if m:
                out[m.group(1)] = m.group(2)
    return out


TYPES_MODULE_KINDS = ("MPI_ADDRESS_KIND", "MPI_OFFSET_KIND", "MPI_COUNT_KIND")


def types_module(fconsts):
    """Module mpi_f08_types: the handle types, the kind parameters and TYPE(MPI_Status)
    (the `mpi` module's), which mpi_f08 re-exports and the section wrappers use (loading
    all of mpi_f08, or of mpi, in each of hundreds of wrappers took gfortran seconds)."""
    L = ["module mpi_f08_types",
         "  use, intrinsic :: iso_c_binding, only : c_int",
         "  use mpi, only : MPI_Status",
         "  implicit none",
         "  private :: c_int",
         "  public"]
    for h in HANDLE_TYPES:
        L += ["  type, bind(C) :: %s" % h, "    integer(c_int) :: MPI_VAL", "  end type %s" % h]
    for name, ty, val in fconsts:
        if name in TYPES_MODULE_KINDS:
            L.append("  integer, parameter :: %s = %s" % (name, val))
    L.append("end module mpi_f08_types")
    return L


def f08_constants(fconsts):
    ctype = const_types()
    L = []
    for name, ty, val in fconsts:
        if name in TYPES_MODULE_KINDS:
            continue
        h = ctype.get(name)
        if name == "MPI_FILE_NULL":
            h = "MPI_File"
        if h in HANDLE_TYPES:
            L.append("  type(%s), parameter :: %s = %s(%s)" % (h, name, h, val))
        else:
            if name in ("MPI_SUBARRAYS_SUPPORTED", "MPI_ASYNC_PROTECTS_NONBLOCKING"):
                val = ".TRUE."  # choice buffers are assumed-rank and ASYNCHRONOUS (see SECTION_ADDRESS)
            fty = "integer(kind=8)" if ty == "INTEGER*8" else ty.lower()
            L.append("  %s, parameter :: %s = %s" % (fty, name, val))
    return L


def f08_decl(a, sections=False):
    """Declaration lines of dummy argument a (a gen_fortran.Arg) in an f08 interface;
    `sections`: a choice buffer of an `_f08ts` routine (assumed rank, see SECTIONS)."""
    k, n = a.kind, a.name
    if sections and is_choice(a):
        cls = section_class(a)
        return ["type(*), dimension(..)%s%s :: %s" % (", intent(in)" if a.const else "",
                                                       ", asynchronous" if cls in ("view", "kept", "contiguous") else "", n)]
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


def specific(f):
    """The specific name of f in its generic: mpi_x_f08ts for routines with choice buffers
    (the wrappers below), else libmpi's Fortran entry point mpi_x_f08."""
    return f.lower + ("_f08ts" if has_sections(f) else "_f08")


def interface_body(f, ind="    ", name=None):
    """The explicit interface of specific(f) (or of `name`) with f08 types."""
    name = name or specific(f)
    fargs = [a.name for a in f.fargs()]
    if f.is_sub:
        L = gf.wrap_free("subroutine " + name, fargs + ["ierror"], ind)
    else:
        ty = "double precision" if f.c.ret == "f64" else "integer(kind=MPI_ADDRESS_KIND)"
        L = gf.wrap_free(ty + " function " + name, fargs, ind)
    L.append(ind + "  import")
    L.append(ind + "  implicit none")
    L += dummy_decls(f, ind + "  ")
    L.append(ind + "end " + ("subroutine " if f.is_sub else "function ") + name)
    return L


def dummy_decls(f, ind):
    """Declarations of f's dummy arguments (ierror included) in specific(f)."""
    L = []
    for a in f.fargs():
        for d in f08_decl(a, has_sections(f)):
            L.append(ind + d)
    if f.is_sub:
        L.append(ind + "integer, optional, intent(out) :: ierror")
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
        if has_sections(f):
            # Interface bodies, not `procedure(mpi_x_f08ts) :: pmpi_x_f08ts`: gfortran 12
            # passed a bare data address instead of the descriptor to such a procedure
            # called from a second branch (f08_large_count's PMPI_Send after MPI_Recv).
            L.append("  interface P%s" % f.name)
            for g in specifics:
                L += interface_body(g, "    ", "p" + specific(g))
            L.append("  end interface P%s" % f.name)
            continue
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
    L += types_module(fconsts)
    w("module mpi_f08")
    w("  use mpi_f08_types")
    w("  use, intrinsic :: iso_c_binding, only : c_int, c_ptr")
    w("  ! The `mpi` module's (TYPE(MPI_Status) is one type in both modules).")
    w("  use mpi, only : MPI_Sizeof, MPI_F_sync_reg, MPI_Status, MPI_Status_f2f08, MPI_Status_f082f")
    w("  implicit none")
    w("  private :: c_int, c_ptr")
    w("  public")
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
    L += section_wrappers([f for f in funcs if not f.skip and f.name not in REMOVED])
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
