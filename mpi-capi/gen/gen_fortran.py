#!/usr/bin/env python3
"""Generate OxMPI's Fortran bindings (mpif.h, the `mpi` module, the Fortran entry points).

Inputs:  mpi-capi/gen/mpi31.txt       the C API, one prototype per line (as gen_abi.py reads it),
         mpi-capi/gen/mpi40.txt       and the MPI-4.0 functions declared so far
         mpi-capi/gen/mpi41.txt       and the MPI-4.1 ones
         mpi-capi/src/abi/consts.rs   the MPICH ABI constants (`pub const MPI_X: T = value;`)
Outputs: mpi-capi/src/fortran.rs      Rust `extern "C"` Fortran entry points, each under the
                                      8 names `mpi_x_ mpi_x__ mpi_x MPI_X` and `pmpi_x_ ...`,
                                      calling the C `PMPI_X` (resolved at link time, so the
                                      file does not change when a C function gets implemented)
         mpi-capi/fortran/mpif.h      every constant, the sentinel COMMON blocks, EXTERNALs
                                      (fixed-form compatible: usable from .f and .f90 files)
         mpi-capi/fortran/mpi.f90     the `mpi` module: the same constants and COMMON blocks
                                      plus explicit interfaces for the routines MPICH's module
                                      declares (none for choice-buffer routines: NO_INTERFACE)
         mpi-capi/fortran/unbound.md  which C functions have no Fortran binding, and why

The Fortran ABI (gfortran's, which other Unix compilers share): every argument by reference,
`IERROR` last, one hidden `size_t` length per CHARACTER argument after all arguments. Handles
are the C handles (MPICH ABI), a status is the C `MPI_Status` (5 integers), LOGICAL is an
integer (0 false, anything else true; we write 1/0). The sentinels MPI_BOTTOM, MPI_IN_PLACE,
MPI_STATUS(ES)_IGNORE, MPI_ERRCODES_IGNORE, MPI_ARGV(S)_NULL, MPI_UNWEIGHTED and
MPI_WEIGHTS_EMPTY are variables in COMMON blocks that libmpi exports (MPICH's block names and
layouts); the entry points recognise them by address.

Files are written only when their content changes. Python 3 standard library only.
Usage: `python3 mpi-capi/gen/gen_fortran.py` (`--check`: exit 1 if an output is stale).
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
import gen_abi  # noqa: E402  (the C prototype parser)

CRATE = os.path.dirname(HERE)
ROOT = os.path.dirname(CRATE)
CONSTS = os.path.join(CRATE, "src", "abi", "consts.rs")
OUT_RS = os.path.join(CRATE, "src", "fortran.rs")
OUT_MPIFH = os.path.join(CRATE, "fortran", "mpif.h")
OUT_MOD = os.path.join(CRATE, "fortran", "mpi.f90")
OUT_MD = os.path.join(CRATE, "fortran", "unbound.md")

HANDLES = {
    "MPI_Comm", "MPI_Datatype", "MPI_Group", "MPI_Win", "MPI_Op", "MPI_Errhandler",
    "MPI_Request", "MPI_Message", "MPI_Info", "MPI_Session",
}
WIDE = {"MPI_Aint": "MPI_ADDRESS_KIND", "MPI_Offset": "MPI_OFFSET_KIND", "MPI_Count": "MPI_COUNT_KIND"}
# Integer arguments that are LOGICAL in Fortran (by parameter name).
LOGICAL_NAMES = {"flag", "reorder", "commute", "weighted", "periods", "remain_dims"}
# Callbacks whose Fortran procedure has the C calling sequence (all arguments by reference).
DIRECT_CALLBACKS = {
    "MPI_User_function", "MPI_User_function_c", "MPI_Comm_errhandler_function", "MPI_File_errhandler_function",
    "MPI_Win_errhandler_function", "MPI_Session_errhandler_function", "MPI_Handler_function",
}
# Attribute copy/delete callbacks: called through trampolines (Fortran passes everything by
# reference and attribute values as integers).
ATTR_CALLBACKS = {
    "MPI_Comm_copy_attr_function", "MPI_Comm_delete_attr_function",
    "MPI_Type_copy_attr_function", "MPI_Type_delete_attr_function",
    "MPI_Win_copy_attr_function", "MPI_Win_delete_attr_function",
    "MPI_Copy_function", "MPI_Delete_function",
}
# Generalized request callbacks: Fortran subroutines (EXTRA_STATE, [STATUS | COMPLETE,]
# IERROR), called through trampolines.
GREQ_CALLBACKS = {
    "MPI_Grequest_query_function": "query", "MPI_Grequest_free_function": "free",
    "MPI_Grequest_cancel_function": "cancel",
}
# `void *` arguments that are not choice buffers.
RAW_POINTERS = {("MPI_Address", "location"), ("MPI_Get_address", "location"),
                ("MPI_Alloc_mem", "baseptr"), ("MPI_Win_allocate", "baseptr"),
                ("MPI_Win_allocate_shared", "baseptr"), ("MPI_Win_shared_query", "baseptr"),
                ("MPI_Win_allocate_c", "baseptr"), ("MPI_Win_allocate_shared_c", "baseptr"),
                ("MPI_Win_shared_query_c", "baseptr")}
# MPI_Aint arguments of deprecated MPI-1 routines that are plain INTEGER in Fortran (the
# standard's Fortran bindings of MPI_ADDRESS, MPI_TYPE_EXTENT/LB/UB, MPI_TYPE_HVECTOR,
# MPI_TYPE_HINDEXED and MPI_TYPE_STRUCT; MPICH's too): converted to and from MPI_Aint.
NARROW_AINT = {("MPI_Address", "address"), ("MPI_Type_extent", "extent"),
               ("MPI_Type_lb", "displacement"), ("MPI_Type_ub", "displacement"),
               ("MPI_Type_hvector", "stride"), ("MPI_Type_hindexed", "array_of_displacements"),
               ("MPI_Type_struct", "array_of_displacements")}
# Routines the `mpi` module gives no explicit interface, as MPICH's module does not: those
# with a C `void *` argument (choice buffers, attribute values, EXTRA_STATE, base
# addresses: programs pass them any type and rank) and those whose array arguments programs
# may pass scalars to (a single request, MPI_UNWEIGHTED, ...; MPICH's "scalarVector"
# routines), and MPI_PCONTROL (variadic). An interface would make gfortran reject programs
# MPICH's module accepts, and would clash with a user's own `subroutine MPI_Send` (a
# profiling wrapper) that does `use mpi`.
NO_INTERFACE = {
    "MPI_Startall", "MPI_Testall", "MPI_Testany", "MPI_Testsome", "MPI_Waitall",
    "MPI_Waitany", "MPI_Waitsome", "MPI_Dims_create", "MPI_Cart_rank", "MPI_Cart_coords",
    "MPI_Cart_get", "MPI_Graph_neighbors", "MPI_Cart_sub", "MPI_Cart_map", "MPI_Cart_create",
    "MPI_Graph_create", "MPI_Dist_graph_create", "MPI_Dist_graph_create_adjacent",
    "MPI_Dist_graph_neighbors", "MPI_Group_translate_ranks", "MPI_Pcontrol",
}
# Functions without a Fortran binding (C only, or not expressible), with the reason.
SKIP_PREFIX = ("MPI_T_",)
SKIP = {
    "MPI_Register_datarep": "user data representation callbacks are not bound for Fortran",
    "MPI_Register_datarep_c": "user data representation callbacks are not bound for Fortran",
}
# The predefined attribute keys: MPICH gives Fortran its own values (C value + 1).
ATTR_KEYS_INT = ["MPI_TAG_UB", "MPI_HOST", "MPI_IO", "MPI_WTIME_IS_GLOBAL", "MPI_UNIVERSE_SIZE",
                 "MPI_LASTUSEDCODE", "MPI_APPNUM", "MPI_WIN_DISP_UNIT",
                 "MPI_WIN_CREATE_FLAVOR", "MPI_WIN_MODEL"]
ATTR_KEYS = ATTR_KEYS_INT + ["MPI_WIN_BASE", "MPI_WIN_SIZE"]


def die(msg):
    sys.stderr.write("gen_fortran.py: " + msg + "\n")
    sys.exit(1)


# ---- Constants --------------------------------------------------------------------------

CONST_RE = re.compile(r"^pub const (MPI_\w+)\s*:\s*(\w+)\s*=\s*(-?)(0x[0-9a-fA-F]+|\d+)(u32)?"
                      r"(\s+as\s+\w+)?\s*;")


def read_consts():
    """[(name, fortran type, value)] from consts.rs, in file order, with Fortran values."""
    out = []
    with open(CONSTS) as f:
        for line in f:
            m = CONST_RE.match(line.strip())
            if not m:
                continue
            name, ty, neg, num = m.group(1), m.group(2), m.group(3), m.group(4)
            v = int(num, 16) if num.startswith("0x") else int(num)
            if neg:
                v = -v
            if name.startswith("MPI_F_"):
                continue  # C-side names of the Fortran status layout
            if name.startswith("MPI_T_") and not name.startswith("MPI_T_ERR_"):
                continue  # MPI_T has no Fortran binding
            if ty in ("MPI_Offset", "MPI_Aint", "MPI_Count"):
                out.append((name, "INTEGER*8", v))
                continue
            if v >= 2 ** 31:
                v -= 2 ** 32
            out.append((name, "INTEGER", v))
    if not out:
        die("no constants found in %s" % CONSTS)
    return out


def fortran_consts(consts):
    """All PARAMETERs of mpif.h: [(name, type, value text)]."""
    cval = {n: v for n, _, v in consts}
    res = []
    for name, ty, v in consts:
        if name.startswith("MPI_MAX_") and name.endswith(("_NAME", "_STRING", "_KEY", "_VAL", "_NAME_LEN", "_STRINGTAG_LEN")):
            v -= 1  # C counts the terminating NUL, Fortran has none
        if name in ATTR_KEYS:
            v += 1
        res.append((name, ty, str(v)))
    fixed = [
        ("MPI_STATUS_SIZE", "INTEGER", str(cval["MPI_F_STATUS_SIZE"] if "MPI_F_STATUS_SIZE" in cval else 5)),
        ("MPI_SOURCE", "INTEGER", "3"), ("MPI_TAG", "INTEGER", "4"), ("MPI_ERROR", "INTEGER", "5"),
        ("MPI_ADDRESS_KIND", "INTEGER", "8"), ("MPI_OFFSET_KIND", "INTEGER", "8"),
        ("MPI_COUNT_KIND", "INTEGER", "8"), ("MPI_INTEGER_KIND", "INTEGER", "4"),
        ("MPI_FILE_NULL", "INTEGER", "0"),
        ("MPI_SUBARRAYS_SUPPORTED", "LOGICAL", ".FALSE."),
        ("MPI_ASYNC_PROTECTS_NONBLOCKING", "LOGICAL", ".FALSE."),
    ]
    have = {n for n, _, _ in res}
    for n, t, v in fixed:
        if n not in have:
            res.append((n, t, v))
    return res


def read_f_status_layout():
    vals = {}
    with open(CONSTS) as f:
        for line in f:
            m = CONST_RE.match(line.strip())
            if m and m.group(1).startswith("MPI_F_"):
                vals[m.group(1)] = int(m.group(4))
    return vals


# ---- Argument classification --------------------------------------------------------------

class Arg:
    """One C parameter and how the Fortran entry point passes it."""

    def __init__(self, func, p):
        m = gen_abi.PARAM_RE.match(p.c_text)
        self.name = p.name
        self.const = bool(m.group("const"))
        self.base = m.group("base")
        self.stars = len(m.group("stars"))
        self.array = bool(m.group("dims"))
        self.inner_dims = re.findall(r"\[(\w*)\]", m.group("dims") or "")[1:]
        self.c_type = p.rust_type
        self.kind = None
        self.func = func.name
        classify(self)


def classify(a):
    level = a.stars + (1 if a.array else 0)
    logical = a.name in LOGICAL_NAMES
    key = (a.func, a.name)
    if a.base in gen_abi.CALLBACKS:
        if a.base in DIRECT_CALLBACKS:
            a.kind = "callback"
        elif a.base in ATTR_CALLBACKS:
            a.kind = "attr_copy_fn" if "copy" in a.base.lower() else "attr_delete_fn"
        elif a.base in GREQ_CALLBACKS:
            a.kind = "greq_fn"
        else:
            a.kind = "unsupported"
    elif a.base == "char":
        if level == 1:
            a.kind = "str_in" if a.const else "str_out"
        elif level == 2 and a.name == "argv" and a.func == "MPI_Comm_spawn":
            a.kind = "argv_in"
        elif level == 2 and a.name == "array_of_commands" and a.func == "MPI_Comm_spawn_multiple":
            a.kind = "cmds_in"
        elif level == 3 and a.name == "array_of_argv" and a.func == "MPI_Comm_spawn_multiple":
            a.kind = "argvs_in"
        elif a.func in ("MPI_Init", "MPI_Init_thread", "MPI_Info_create_env") and a.name == "argv":
            a.kind = "omit"
        else:
            a.kind = "unsupported"
    elif a.func in ("MPI_Init", "MPI_Init_thread", "MPI_Info_create_env") and a.name == "argc":
        a.kind = "omit"
    elif a.base == "void":
        if level != 1:
            a.kind = "unsupported"
        elif key in RAW_POINTERS:
            a.kind = "raw"
        elif a.name == "attribute_val":
            if "get" in a.func.lower():
                a.kind = "attr_out"
            else:
                a.kind = "attr_in"
        elif a.name == "extra_state" and a.func == "MPI_Grequest_start":
            a.kind = "greq_state"
        elif a.name == "extra_state":
            a.kind = "extra_state"
        elif a.name == "buffer_addr":
            a.kind = "detach"
        else:
            a.kind = "choice"
    elif a.base == "MPI_Status":
        if a.array:
            a.kind = "statuses"
        elif a.const:
            a.kind = "status_in"
        else:
            a.kind = "status"
    elif a.base == "MPI_File":
        a.kind = {0: "file_in", 1: "file_ptr"}.get(level, "unsupported")
        if level == 1 and a.array:
            a.kind = "unsupported"
    elif a.base in ("int",) or a.base in HANDLES:
        if level == 0:
            if logical:
                a.kind = "logical_in"
            elif a.name in ("keyval", "comm_keyval", "type_keyval", "win_keyval") and \
                    "attr" in a.func.lower():
                a.kind = "keyval_in"
            else:
                a.kind = "val"
        elif level == 1:
            if a.array:
                if a.name == "array_of_errcodes":
                    a.kind = "errcodes"
                elif a.name in ("sourceweights", "destweights", "weights"):
                    a.kind = "weights"
                elif a.name == "array_of_indices" and a.func in ("MPI_Waitsome", "MPI_Testsome", "MPI_Request_get_status_some"):
                    a.kind = "indices_out"
                elif logical:
                    a.kind = "logical_array"
                else:
                    a.kind = "ptr"
            elif logical and not a.const:
                a.kind = "logical_out"
            elif a.name == "buflen" and a.func == "MPI_Info_get_string":
                a.kind = "buflen_inout"
            elif a.name in ("index", "indx") and a.func in ("MPI_Waitany", "MPI_Testany", "MPI_Request_get_status_any"):
                a.kind = "index_out"
            else:
                a.kind = "ptr"
        else:
            a.kind = "unsupported"
    elif key in NARROW_AINT:
        a.kind = "narrow_in" if level == 0 else ("narrow_array_in" if a.array else "narrow_out")
    elif a.base in WIDE:
        a.kind = "val" if level == 0 else ("ptr" if level == 1 else "unsupported")
    elif a.base == "MPI_Fint":
        a.kind = "unsupported"  # c2f/f2c helpers are C only
    else:
        a.kind = "unsupported"


class FFunc:
    def __init__(self, func):
        self.c = func
        self.name = func.name
        self.args = [Arg(func, p) for p in func.params]
        self.skip = None
        # A large-count function (MPI_X_c, MPI_Count arguments) is bound for the mpi_f08
        # module only, as the standard has it: there MPI_X names both (gen_f08.py).
        self.large = self.name.endswith("_c")
        if self.name.startswith(SKIP_PREFIX):
            self.skip = "MPI_T (tool interface) has no Fortran binding"
        elif self.name.endswith(("_c2f", "_f2c", "_c2f08", "_f082c", "_f082f", "_f2f08")):
            self.skip = "C-only handle/status conversion"
        elif self.name in SKIP:
            self.skip = SKIP[self.name]
        elif func.ret not in ("c_int", "f64", "MPI_Aint"):
            self.skip = "returns %s" % func.ret
        else:
            bad = [a.name for a in self.args if a.kind == "unsupported"]
            if bad:
                self.skip = "argument(s) %s not convertible" % ", ".join(bad)
        self.is_sub = func.ret == "c_int"

    @property
    def lower(self):
        return self.name.lower()

    def fargs(self):
        """Fortran-visible arguments (excluding IERROR and hidden lengths)."""
        return [a for a in self.args if a.kind != "omit"]

    def strings(self):
        return [a for a in self.args if a.kind in ("str_in", "str_out", "argv_in", "cmds_in", "argvs_in")]

    def has_choice(self):
        return any(a.kind in ("choice", "raw", "detach") for a in self.args)

    def has_interface(self):
        """Whether the `mpi` module declares this routine (see NO_INTERFACE)."""
        return self.name not in NO_INTERFACE and not any(a.base == "void" for a in self.args)


# ---- Rust --------------------------------------------------------------------------------

RUST_PROLOGUE = r'''// @generated by mpi-capi/gen/gen_fortran.py from mpi-capi/gen/mpi31.txt, mpi40.txt and mpi41.txt -- do not edit.
// Regenerate with `make gen` (or `python3 mpi-capi/gen/gen_fortran.py`).
//
// Fortran entry points of libmpi (`mpif.h` and `use mpi`). Each binding converts the
// Fortran calling sequence (everything by reference, IERROR last, hidden CHARACTER lengths
// after the arguments) and calls the C `PMPI_X`, declared below and resolved at link time.
// Every binding exists under `mpi_x_`, `mpi_x__`, `mpi_x` and `MPI_X` (the name manglings
// of Unix Fortran compilers), the same four `pmpi_` names (the profiling interface) and
// `mpi_x_f08_`, the specific procedure of the `mpi_f08` module's generic `MPI_X`.
#![allow(unused_variables, unused_unsafe, unused_mut, improper_ctypes, clippy::too_many_arguments,
    clippy::missing_safety_doc, clippy::not_unsafe_ptr_arg_deref)]

use crate::abi::*;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr::null_mut;
use std::sync::OnceLock;

// ---- Sentinels: COMMON blocks that mpif.h and the `mpi` module declare ------------------

// gfortran aligns every COMMON block to 16 bytes in the programs that declare it; the
// blocks here are 16-byte aligned and padded (in mpif.h and the `mpi` module too, with
// MPI_PRIV*_PAD members) to a multiple of 16 bytes, so sizes and alignments agree and the
// linker has nothing to warn about.

/// `COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE(MPI_STATUS_SIZE), pad`.
#[repr(C, align(16))]
pub struct FortranPriv1 {
    pub bottom: MPI_Fint,
    pub in_place: MPI_Fint,
    pub status_ignore: [MPI_Fint; 5],
    pub pad: [MPI_Fint; 1],
}
/// `COMMON /MPIPRIV2/ MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1), MPI_ERRCODES_IGNORE(1), pad`.
#[repr(C, align(16))]
pub struct FortranPriv2 {
    pub statuses_ignore: [MPI_Fint; 5],
    pub errcodes_ignore: [MPI_Fint; 1],
    pub pad: [MPI_Fint; 2],
}
/// `COMMON /MPIPRIVC/ MPI_ARGVS_NULL(1,1), MPI_ARGV_NULL(1), pad` (CHARACTER*1 each).
#[repr(C, align(16))]
pub struct FortranPrivC {
    pub argvs_null: [u8; 1],
    pub argv_null: [u8; 1],
    pub pad: [u8; 14],
}
/// `COMMON /MPIFCMB5/ MPI_UNWEIGHTED, pad` and `COMMON /MPIFCMB9/ MPI_WEIGHTS_EMPTY, pad`.
#[repr(C, align(16))]
pub struct FortranOneInt {
    pub value: MPI_Fint,
    pub pad: [MPI_Fint; 3],
}

#[no_mangle]
pub static mut mpipriv1_: FortranPriv1 = FortranPriv1 { bottom: 0, in_place: 0, status_ignore: [0; 5], pad: [0; 1] };
#[no_mangle]
pub static mut mpipriv2_: FortranPriv2 = FortranPriv2 { statuses_ignore: [0; 5], errcodes_ignore: [0; 1], pad: [0; 2] };
#[no_mangle]
pub static mut mpiprivc_: FortranPrivC = FortranPrivC { argvs_null: [b' '; 1], argv_null: [b' '; 1], pad: [b' '; 14] };
#[no_mangle]
pub static mut mpifcmb5_: FortranOneInt = FortranOneInt { value: 0, pad: [0; 3] };
#[no_mangle]
pub static mut mpifcmb9_: FortranOneInt = FortranOneInt { value: 0, pad: [0; 3] };

const PRIV1: usize = 0;
const PRIV2: usize = 1;
const PRIVC: usize = 2;
const FCMB5: usize = 3;
const FCMB9: usize = 4;

/// Addresses of each COMMON block: ours, and the one the dynamic linker resolved the name
/// to. They differ when the program holds its own copy (a copy relocation, or a COMMON
/// definition in the executable); then the program's is the one its code passes.
fn blocks() -> &'static [[usize; 2]; 5] {
    static BLOCKS: OnceLock<[[usize; 2]; 5]> = OnceLock::new();
    BLOCKS.get_or_init(|| {
        let own = [
            &raw const mpipriv1_ as usize,
            &raw const mpipriv2_ as usize,
            &raw const mpiprivc_ as usize,
            &raw const mpifcmb5_ as usize,
            &raw const mpifcmb9_ as usize,
        ];
        let names: [&[u8]; 5] = [b"mpipriv1_\0", b"mpipriv2_\0", b"mpiprivc_\0", b"mpifcmb5_\0", b"mpifcmb9_\0"];
        let mut out = [[0usize; 2]; 5];
        for i in 0..5 {
            // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks a symbol up.
            let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, names[i].as_ptr() as *const c_char) };
            out[i] = [own[i], if p.is_null() { own[i] } else { p as usize }];
        }
        out
    })
}

/// Whether `p` is the Fortran variable at byte `offset` of COMMON block `block`.
fn is_sentinel<T>(p: *const T, block: usize, offset: usize) -> bool {
    let b = &blocks()[block];
    let p = p as usize;
    p == b[0] + offset || p == b[1] + offset
}

/// A choice buffer: MPI_BOTTOM -> C MPI_BOTTOM (null), MPI_IN_PLACE -> C MPI_IN_PLACE.
fn f2c_choice(p: *const c_void) -> *mut c_void {
    if is_sentinel(p, PRIV1, 0) {
        null_mut()
    } else if is_sentinel(p, PRIV1, 4) {
        usize::MAX as *mut c_void
    } else {
        p as *mut c_void
    }
}

/// A status argument: Fortran MPI_STATUS_IGNORE -> C MPI_STATUS_IGNORE.
fn f2c_status(p: *const MPI_Fint) -> *mut MPI_Status {
    if is_sentinel(p, PRIV1, 8) { 1usize as *mut MPI_Status } else { p as *mut MPI_Status }
}

/// An array of statuses: Fortran MPI_STATUSES_IGNORE -> C MPI_STATUSES_IGNORE.
fn f2c_statuses(p: *const MPI_Fint) -> *mut MPI_Status {
    if is_sentinel(p, PRIV2, 0) { 1usize as *mut MPI_Status } else { p as *mut MPI_Status }
}

/// An error code array: Fortran MPI_ERRCODES_IGNORE -> C MPI_ERRCODES_IGNORE (null).
fn f2c_errcodes(p: *const c_int) -> *mut c_int {
    if is_sentinel(p, PRIV2, 20) { null_mut() } else { p as *mut c_int }
}

/// Graph edge weights: Fortran MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY -> their C values.
fn f2c_weights(p: *const c_int) -> *mut c_int {
    if is_sentinel(p, FCMB5, 0) {
        // SAFETY: reads the address stored in the C sentinel variable (never written).
        unsafe { crate::abi::statics::MPI_UNWEIGHTED }
    } else if is_sentinel(p, FCMB9, 0) {
        // SAFETY: as above.
        unsafe { crate::abi::statics::MPI_WEIGHTS_EMPTY }
    } else {
        p as *mut c_int
    }
}

/// Store a C return code into the Fortran IERROR argument.
unsafe fn set_ierr(ierror: *mut MPI_Fint, rc: c_int) {
    if !ierror.is_null() {
        // SAFETY: IERROR is an INTEGER passed by reference (checked non-null).
        unsafe { *ierror = rc };
    }
}

// ---- Strings ------------------------------------------------------------------------------

/// Room for any string an MPI call returns (MPI_MAX_LIBRARY_VERSION_STRING is the longest).
const OUT_CAP: usize = 8192;

/// A Fortran CHARACTER input as a NUL-terminated C string, trailing blanks removed.
unsafe fn str_in(p: *const c_char, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len + 1);
    if !p.is_null() {
        // SAFETY: the Fortran argument is `len` characters long.
        v.extend_from_slice(unsafe { std::slice::from_raw_parts(p as *const u8, len) });
    }
    while v.last() == Some(&b' ') {
        v.pop();
    }
    v.push(0);
    v
}

/// An MPI_Info key or value: leading and trailing blanks removed (in Fortran the standard
/// strips both from info keys and values).
unsafe fn str_in_info(p: *const c_char, len: usize) -> Vec<u8> {
    // SAFETY: as str_in.
    let v = unsafe { str_in(p, len) };
    let start = v.iter().position(|&c| c != b' ').unwrap_or(0);
    v[start..].to_vec()
}

/// A zeroed buffer for a C string result, at least `len` + 1 bytes.
fn str_buf(len: usize) -> Vec<u8> {
    vec![0u8; len.max(OUT_CAP) + 1]
}

/// Copy a C string result into a Fortran CHARACTER argument of `len`, blank padded.
unsafe fn str_out(dst: *mut c_char, len: usize, src: &[u8]) {
    if dst.is_null() {
        return;
    }
    let n = src.iter().position(|&c| c == 0).unwrap_or(src.len()).min(len);
    // SAFETY: the Fortran argument is `len` characters long; src holds at least n bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(src.as_ptr(), dst as *mut u8, n);
        std::ptr::write_bytes((dst as *mut u8).add(n), b' ', len - n);
    }
}

/// Owned C strings of a Fortran CHARACTER(len) argv(*) list, ending at the first blank entry;
/// `strip`: leading blanks removed too (the f77/f90 bindings; `mpi_f08` keeps them).
unsafe fn argv_in(p: *const c_char, len: usize, strip: bool) -> (Vec<Vec<u8>>, Vec<*mut c_char>) {
    let mut owned = Vec::new();
    if !p.is_null() && !is_sentinel(p, PRIVC, 1) && !is_sentinel(p, PRIVC, 0) {
        let mut i = 0usize;
        loop {
            // SAFETY: the list is terminated by a blank entry; each entry is `len` characters.
            let s = unsafe { spawn_str(p.add(i * len), len, strip) };
            if s.len() == 1 || len == 0 {
                break;
            }
            owned.push(s);
            i += 1;
        }
    }
    if owned.is_empty() && (p.is_null() || is_sentinel(p, PRIVC, 1) || is_sentinel(p, PRIVC, 0)) {
        return (owned, Vec::new());
    }
    let mut ptrs: Vec<*mut c_char> = owned.iter().map(|s| s.as_ptr() as *mut c_char).collect();
    ptrs.push(null_mut());
    (owned, ptrs)
}

/// A spawned program's command or argument: trailing blanks removed, and with `strip`
/// leading ones too.
unsafe fn spawn_str(p: *const c_char, len: usize, strip: bool) -> Vec<u8> {
    // SAFETY: as str_in.
    unsafe { if strip { str_in_info(p, len) } else { str_in(p, len) } }
}

/// The C `char *argv[]` for an argv_in result: MPI_ARGV_NULL (null) when there is no list.
fn argv_ptr(v: &mut Vec<*mut c_char>) -> *mut *mut c_char {
    if v.is_empty() { null_mut() } else { v.as_mut_ptr() }
}

/// Owned C strings of a Fortran CHARACTER(len) array of `count` commands
/// (`MPI_COMM_SPAWN_MULTIPLE`'s ARRAY_OF_COMMANDS).
unsafe fn cmds_in(p: *const c_char, len: usize, count: c_int, strip: bool) -> (Vec<Vec<u8>>, Vec<*mut c_char>) {
    // SAFETY: the array holds `count` entries of `len` characters each.
    let owned: Vec<Vec<u8>> = (0..count.max(0) as usize).map(|i| unsafe { spawn_str(p.add(i * len), len, strip) }).collect();
    let ptrs = owned.iter().map(|s| s.as_ptr() as *mut c_char).collect();
    (owned, ptrs)
}

/// The C `char **array_of_argv[]` of a Fortran CHARACTER(len) ARRAY_OF_ARGV(COUNT, *):
/// program i's list is row i (column-major: entry (i, j) at (j * count + i) * len), ending
/// at its first blank entry; MPI_ARGVS_NULL gives an empty result (a null pointer).
unsafe fn argvs_in(p: *const c_char, len: usize, count: c_int, strip: bool) -> (Vec<Vec<u8>>, Vec<Vec<*mut c_char>>) {
    let mut owned = Vec::new();
    let mut lists = Vec::new();
    if p.is_null() || is_sentinel(p, PRIVC, 0) || len == 0 {
        return (owned, lists);
    }
    let n = count.max(0) as usize;
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, row) in rows.iter_mut().enumerate() {
        let mut j = 0usize;
        loop {
            // SAFETY: each row is terminated by a blank entry; entries are `len` characters.
            let s = unsafe { spawn_str(p.add((j * n + i) * len), len, strip) };
            if s.len() == 1 {
                break;
            }
            row.push(owned.len());
            owned.push(s);
            j += 1;
        }
    }
    for row in &rows {
        let mut ptrs: Vec<*mut c_char> = row.iter().map(|&k| owned[k].as_ptr() as *mut c_char).collect();
        ptrs.push(null_mut());
        lists.push(ptrs);
    }
    (owned, lists)
}

/// The outer `char **[]` of an argvs_in result's lists (kept by the caller for the call).
fn argvs_outer(v: &mut [Vec<*mut c_char>]) -> Vec<*mut *mut c_char> {
    v.iter_mut().map(|r| r.as_mut_ptr()).collect()
}

/// The C `char **array_of_argv[]`: MPI_ARGVS_NULL (null) when there is no list.
fn argvs_ptr(v: &mut Vec<*mut *mut c_char>) -> *mut *mut *mut c_char {
    if v.is_empty() { null_mut() } else { v.as_mut_ptr() }
}

// ---- Logical and attribute helpers ---------------------------------------------------------

/// A Fortran LOGICAL input (0 false, anything else true) as a C int.
fn f2c_logical(v: c_int) -> c_int {
    (v != 0) as c_int
}

/// The C key of a Fortran attribute key: the predefined keys have their own Fortran values.
fn keyval_f2c(k: c_int) -> c_int {
    match k {
@KEYVAL_ARMS@
        _ => k,
    }
}

/// The Fortran value of an attribute the C call returned as `v` for (C) key `k`: predefined
/// keys hold a pointer to their value (an int, or an MPI_Aint for MPI_WIN_SIZE, the base
/// address itself for MPI_WIN_BASE); Fortran-set attributes hold the integer value itself.
unsafe fn attr_value(k: c_int, v: *mut c_void) -> MPI_Aint {
    match k {
@ATTR_INT_KEYS@ => {
            // SAFETY: these predefined attributes point at an int.
            if v.is_null() { 0 } else { unsafe { *(v as *const c_int) as MPI_Aint } }
        }
        MPI_WIN_SIZE => {
            // SAFETY: MPI_WIN_SIZE points at an MPI_Aint.
            if v.is_null() { 0 } else { unsafe { *(v as *const MPI_Aint) } }
        }
        _ => v as MPI_Aint,
    }
}

/// What a Fortran attribute copy/delete callback needs: the procedures and EXTRA_STATE.
/// Passed to the C layer as its `extra_state`; lives as long as the process (keyvals are few).
struct FortranKeyval {
    copy: usize,
    delete: usize,
    extra: MPI_Aint,
    /// MPI-1 `MPI_KEYVAL_CREATE`: INTEGER values instead of INTEGER(KIND=MPI_ADDRESS_KIND).
    narrow: bool,
}

type FCopyWide = unsafe extern "C" fn(*const c_int, *const c_int, *const MPI_Aint, *const MPI_Aint,
    *mut MPI_Aint, *mut c_int, *mut c_int);
type FCopyNarrow = unsafe extern "C" fn(*const c_int, *const c_int, *const MPI_Fint, *const MPI_Fint,
    *mut MPI_Fint, *mut c_int, *mut c_int);
type FDeleteWide = unsafe extern "C" fn(*const c_int, *const c_int, *const MPI_Aint, *const MPI_Aint, *mut c_int);
type FDeleteNarrow = unsafe extern "C" fn(*const c_int, *const c_int, *const MPI_Fint, *const MPI_Fint, *mut c_int);

unsafe extern "C" fn attr_copy_trampoline(obj: c_int, keyval: c_int, extra: *mut c_void,
    val_in: *mut c_void, val_out: *mut c_void, flag: *mut c_int) -> c_int {
    // SAFETY: `extra` is the FortranKeyval this keyval was created with (leaked Box); copy is
    // a Fortran procedure address with the calling sequence of the FCopy* types.
    unsafe {
        let k = &*(extra as *const FortranKeyval);
        let mut ierr: c_int = 0;
        let mut fflag: c_int = 0;
        let out: MPI_Aint;
        if k.narrow {
            let f: FCopyNarrow = std::mem::transmute(k.copy);
            let ex = k.extra as MPI_Fint;
            let vin = val_in as MPI_Aint as MPI_Fint;
            let mut vout: MPI_Fint = 0;
            f(&obj, &keyval, &ex, &vin, &mut vout, &mut fflag, &mut ierr);
            out = vout as MPI_Aint;
        } else {
            let f: FCopyWide = std::mem::transmute(k.copy);
            let vin = val_in as MPI_Aint;
            let mut vout: MPI_Aint = 0;
            f(&obj, &keyval, &k.extra, &vin, &mut vout, &mut fflag, &mut ierr);
            out = vout;
        }
        *flag = f2c_logical(fflag);
        if fflag != 0 {
            *(val_out as *mut *mut c_void) = out as *mut c_void;
        }
        ierr
    }
}

unsafe extern "C" fn attr_delete_trampoline(obj: c_int, keyval: c_int, val: *mut c_void,
    extra: *mut c_void) -> c_int {
    // SAFETY: as attr_copy_trampoline; delete has the calling sequence of the FDelete* types.
    unsafe {
        let k = &*(extra as *const FortranKeyval);
        let mut ierr: c_int = 0;
        if k.narrow {
            let f: FDeleteNarrow = std::mem::transmute(k.delete);
            let ex = k.extra as MPI_Fint;
            let v = val as MPI_Aint as MPI_Fint;
            f(&obj, &keyval, &v, &ex, &mut ierr);
        } else {
            let f: FDeleteWide = std::mem::transmute(k.delete);
            let v = val as MPI_Aint;
            f(&obj, &keyval, &v, &k.extra, &mut ierr);
        }
        ierr
    }
}

/// The C `extra_state` for a keyval created from Fortran (see FortranKeyval).
unsafe fn keyval_state(copy: usize, delete: usize, extra: *const c_void, narrow: bool) -> *mut c_void {
    // SAFETY: EXTRA_STATE is an INTEGER (narrow) or INTEGER(KIND=MPI_ADDRESS_KIND) by reference.
    let extra = unsafe {
        if extra.is_null() { 0 } else if narrow { *(extra as *const MPI_Fint) as MPI_Aint } else { *(extra as *const MPI_Aint) }
    };
    Box::into_raw(Box::new(FortranKeyval { copy, delete, extra, narrow })) as *mut c_void
}

// Predefined Fortran attribute callbacks (MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN, ...).
unsafe extern "C" fn f_null_copy_fn(_o: *const c_int, _k: *const c_int, _e: *const c_void,
    _vin: *const c_void, _vout: *mut c_void, flag: *mut c_int, ierr: *mut c_int) {
    // SAFETY: FLAG and IERROR are by-reference Fortran arguments.
    unsafe {
        *flag = 0;
        *ierr = MPI_SUCCESS;
    }
}
unsafe extern "C" fn f_dup_fn_wide(_o: *const c_int, _k: *const c_int, _e: *const c_void,
    vin: *const MPI_Aint, vout: *mut MPI_Aint, flag: *mut c_int, ierr: *mut c_int) {
    // SAFETY: by-reference Fortran arguments of the documented types.
    unsafe {
        *vout = *vin;
        *flag = 1;
        *ierr = MPI_SUCCESS;
    }
}
unsafe extern "C" fn f_dup_fn_narrow(_o: *const c_int, _k: *const c_int, _e: *const c_void,
    vin: *const MPI_Fint, vout: *mut MPI_Fint, flag: *mut c_int, ierr: *mut c_int) {
    // SAFETY: by-reference Fortran arguments of the documented types.
    unsafe {
        *vout = *vin;
        *flag = 1;
        *ierr = MPI_SUCCESS;
    }
}
unsafe extern "C" fn f_null_delete_fn(_o: *const c_int, _k: *const c_int, _v: *const c_void,
    _e: *const c_void, ierr: *mut c_int) {
    // SAFETY: IERROR is a by-reference Fortran argument.
    unsafe { *ierr = MPI_SUCCESS };
}

/// The Fortran procedures and EXTRA_STATE of a generalized request started from Fortran,
/// passed to the C layer as its `extra_state`; freed after the free callback ran. The
/// callbacks get the program's own EXTRA_STATE variable (its address, as MPICH passes
/// it), so that what they store there the program sees (MPICH's greqf).
struct FortranGreq {
    query: usize,
    free: usize,
    cancel: usize,
    extra: *const MPI_Aint,
}

type FGreqQuery = unsafe extern "C" fn(*const MPI_Aint, *mut MPI_Fint, *mut c_int);
type FGreqFree = unsafe extern "C" fn(*const MPI_Aint, *mut c_int);
type FGreqCancel = unsafe extern "C" fn(*const MPI_Aint, *const c_int, *mut c_int);

/// The C `extra_state` for MPI_GREQUEST_START (see FortranGreq).
unsafe fn greq_state(query: usize, free: usize, cancel: usize, extra: *const c_void) -> *mut c_void {
    let extra = extra as *const MPI_Aint;
    Box::into_raw(Box::new(FortranGreq { query, free, cancel, extra })) as *mut c_void
}

unsafe extern "C" fn greq_query_trampoline(extra: *mut c_void, status: *mut MPI_Status) -> c_int {
    // SAFETY: `extra` is the FortranGreq of this request; query is a Fortran subroutine
    // (EXTRA_STATE, STATUS, IERROR); a Fortran status has the C MPI_Status layout.
    unsafe {
        let g = &*(extra as *const FortranGreq);
        let f: FGreqQuery = std::mem::transmute(g.query);
        let mut ierr: c_int = MPI_SUCCESS;
        f(g.extra, status as *mut MPI_Fint, &mut ierr);
        ierr
    }
}

unsafe extern "C" fn greq_free_trampoline(extra: *mut c_void) -> c_int {
    // SAFETY: as greq_query_trampoline; the free callback runs once, last: the state goes.
    unsafe {
        let g = Box::from_raw(extra as *mut FortranGreq);
        let f: FGreqFree = std::mem::transmute(g.free);
        let mut ierr: c_int = MPI_SUCCESS;
        f(g.extra, &mut ierr);
        ierr
    }
}

unsafe extern "C" fn greq_cancel_trampoline(extra: *mut c_void, complete: c_int) -> c_int {
    // SAFETY: as greq_query_trampoline; COMPLETE is a LOGICAL.
    unsafe {
        let g = &*(extra as *const FortranGreq);
        let f: FGreqCancel = std::mem::transmute(g.cancel);
        let mut ierr: c_int = MPI_SUCCESS;
        let c = f2c_logical(complete);
        f(g.extra, &c, &mut ierr);
        ierr
    }
}

/// Export `$imp` under each of the given names (the Fortran name manglings).
macro_rules! fortran_names {
    ($imp:ident $args:tt -> $r:ty; $($name:ident)*) => {
        $( fortran_name!($imp $args -> $r; $name); )*
    };
}

/// Export `$imp` under one name.
macro_rules! fortran_name {
    ($imp:ident ($($a:ident: $t:ty),*) -> $r:ty; $name:ident) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name($($a: $t),*) -> $r {
            // SAFETY: same contract as the implementation; arguments forwarded unchanged.
            unsafe { $imp($($a),*) }
        }
    };
}

fortran_names!(f_null_copy_fn(o: *const c_int, k: *const c_int, e: *const c_void, vin: *const c_void,
    vout: *mut c_void, flag: *mut c_int, ierr: *mut c_int) -> ();
    mpi_null_copy_fn_ mpi_null_copy_fn__ mpi_null_copy_fn
    mpi_comm_null_copy_fn_ mpi_comm_null_copy_fn__ mpi_comm_null_copy_fn
    mpi_type_null_copy_fn_ mpi_type_null_copy_fn__ mpi_type_null_copy_fn
    mpi_win_null_copy_fn_ mpi_win_null_copy_fn__ mpi_win_null_copy_fn);
fortran_names!(f_dup_fn_wide(o: *const c_int, k: *const c_int, e: *const c_void, vin: *const MPI_Aint,
    vout: *mut MPI_Aint, flag: *mut c_int, ierr: *mut c_int) -> ();
    mpi_comm_dup_fn_ mpi_comm_dup_fn__ mpi_comm_dup_fn
    mpi_type_dup_fn_ mpi_type_dup_fn__ mpi_type_dup_fn
    mpi_win_dup_fn_ mpi_win_dup_fn__ mpi_win_dup_fn);
fortran_names!(f_dup_fn_narrow(o: *const c_int, k: *const c_int, e: *const c_void, vin: *const MPI_Fint,
    vout: *mut MPI_Fint, flag: *mut c_int, ierr: *mut c_int) -> ();
    mpi_dup_fn_ mpi_dup_fn__ mpi_dup_fn);
fortran_names!(f_null_delete_fn(o: *const c_int, k: *const c_int, v: *const c_void, e: *const c_void,
    ierr: *mut c_int) -> ();
    mpi_null_delete_fn_ mpi_null_delete_fn__ mpi_null_delete_fn
    mpi_comm_null_delete_fn_ mpi_comm_null_delete_fn__ mpi_comm_null_delete_fn
    mpi_type_null_delete_fn_ mpi_type_null_delete_fn__ mpi_type_null_delete_fn
    mpi_win_null_delete_fn_ mpi_win_null_delete_fn__ mpi_win_null_delete_fn);
'''


def rust_fparam(a):
    """(name, Rust type) of the Fortran-side parameter for C argument a."""
    k = a.kind
    if k == "callback":
        return a.c_type
    if k in ("attr_copy_fn", "attr_delete_fn", "greq_fn"):
        return "*const c_void"
    if k in ("str_in", "str_out", "argv_in", "cmds_in", "argvs_in"):
        return "*mut c_char"
    if k in ("choice", "raw", "attr_in", "attr_out", "extra_state", "detach", "greq_state"):
        return "*mut c_void"
    if k in ("status", "status_in", "statuses"):
        return "*mut MPI_Fint"
    if k in ("file_in", "file_ptr"):
        return "*mut MPI_Fint"
    if k in ("narrow_in", "narrow_out", "narrow_array_in"):
        return "*mut MPI_Fint"
    base = a.base if a.base in WIDE else "c_int"
    return "*mut " + base


def rust_binding(f, cnames):
    fargs = f.fargs()
    params = [(a.name, rust_fparam(a)) for a in fargs]
    if f.is_sub:
        params.append(("ierror", "*mut MPI_Fint"))
    for a in f.strings():
        params.append((a.name + "_len", "usize"))
    ret = {"c_int": "()", "f64": "f64", "MPI_Aint": "MPI_Aint"}[f.c.ret]
    imp = "f_" + f.lower
    pre, post, call = [], [], []
    names = {a.name for a in f.args}
    narrow = f.name == "MPI_Keyval_create"
    for a in f.args:
        n, k = a.name, a.kind
        if k == "omit":
            call.append("null_mut()" if a.stars or a.array else "0")
        elif k == "val":
            call.append("*%s" % n)
        elif k == "logical_in":
            call.append("f2c_logical(*%s)" % n)
        elif k == "narrow_in":
            call.append("*%s as MPI_Aint" % n)
        elif k == "narrow_out":
            pre.append("let mut t_%s: MPI_Aint = 0;" % n)
            call.append("&mut t_%s" % n)
            post.append("if rc == MPI_SUCCESS { *%s = t_%s as MPI_Fint; }" % (n, n))
        elif k == "narrow_array_in":
            pre.append("let t_%s: Vec<MPI_Aint> = (0..(*count).max(0) as usize).map(|i| *%s.add(i) as MPI_Aint).collect();"
                       % (n, n))
            call.append("t_%s.as_ptr() as *mut MPI_Aint" % n)
        elif k == "keyval_in":
            call.append("keyval_f2c(*%s)" % n)
        elif k in ("ptr", "logical_array"):
            call.append("%s as _" % n)
        elif k == "logical_out":
            pre.append("let mut t_%s: c_int = 0;" % n)
            call.append("&mut t_%s" % n)
            post.append("*%s = f2c_logical(t_%s);" % (n, n))
        elif k == "index_out":
            call.append(n)
            post.append("if rc == MPI_SUCCESS && *%s >= 0 { *%s += 1; }" % (n, n))
        elif k == "indices_out":
            call.append(n)
            post.append("if rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS {\n"
                        "            for i in 0..(*outcount).max(0) as usize { *%s.add(i) += 1; }\n"
                        "        }" % n)
        elif k == "buflen_inout":
            # C counts the terminating NUL in buflen (in and out), Fortran does not; C writes
            # at most buflen - 1 characters: never more than the Fortran VALUE holds.
            pre.append("let f_%s = *%s;" % (n, n))
            pre.append("let mut t_%s: c_int = (*%s).min(value_len.min(c_int::MAX as usize - 1) as c_int).max(0) + 1;"
                       % (n, n))
            call.append("&mut t_%s" % n)
            post.append("if rc == MPI_SUCCESS { *%s = (t_%s - 1).max(0); }" % (n, n))
        elif k == "errcodes":
            call.append("f2c_errcodes(%s)" % n)
        elif k == "weights":
            call.append("f2c_weights(%s)" % n)
        elif k == "callback":
            call.append(n)
        elif k == "attr_copy_fn":
            call.append("Some(attr_copy_trampoline)")
        elif k == "attr_delete_fn":
            call.append("Some(attr_delete_trampoline)")
        elif k == "greq_fn":
            call.append("Some(greq_%s_trampoline)" % GREQ_CALLBACKS[a.base])
        elif k == "greq_state":
            call.append("greq_state(query_fn as usize, free_fn as usize, cancel_fn as usize, %s)" % n)
        elif k == "extra_state":
            copy = [x.name for x in f.args if x.kind == "attr_copy_fn"][0]
            delete = [x.name for x in f.args if x.kind == "attr_delete_fn"][0]
            call.append("keyval_state(%s as usize, %s as usize, %s, %s)" % (
                copy, delete, n, "true" if narrow else "false"))
        elif k == "choice":
            call.append("f2c_choice(%s)" % n)
        elif k == "raw":
            call.append(n)
        elif k == "detach":
            pre.append("let mut t_%s: *mut c_void = null_mut();" % n)
            call.append("&mut t_%s as *mut *mut c_void as *mut c_void" % n)
        elif k == "attr_in":
            if f.name == "MPI_Attr_put":
                call.append("*(%s as *const MPI_Fint) as MPI_Aint as *mut c_void" % n)
            else:
                call.append("*(%s as *const MPI_Aint) as *mut c_void" % n)
        elif k == "attr_out":
            kv = [x.name for x in f.args if x.kind == "keyval_in"][0]
            pre.append("let mut t_%s: *mut c_void = null_mut();" % n)
            call.append("&mut t_%s as *mut *mut c_void as *mut c_void" % n)
            ty = "MPI_Fint" if f.name == "MPI_Attr_get" else "MPI_Aint"
            post.append("if rc == MPI_SUCCESS && t_flag != 0 {\n"
                        "            *(%s as *mut %s) = attr_value(keyval_f2c(*%s), t_%s) as %s;\n"
                        "        }" % (n, ty, kv, n, ty))
        elif k == "status":
            call.append("f2c_status(%s)" % n)
        elif k == "status_in":
            call.append("%s as *const MPI_Status" % n)
        elif k == "statuses":
            call.append("f2c_statuses(%s)" % n)
        elif k == "file_in":
            call.append("c_PMPI_File_f2c(*%s)" % n)
        elif k == "file_ptr":
            pre.append("let mut t_%s = c_PMPI_File_f2c(*%s);" % (n, n))
            call.append("&mut t_%s" % n)
            post.append("*%s = c_PMPI_File_c2f(t_%s);" % (n, n))
        elif k == "str_in":
            # Info keys and values lose their leading blanks too (the standard's rule for
            # MPI_INFO_SET and the calls that look a key up; MPICH does the same).
            conv = "str_in_info" if f.name.startswith("MPI_Info_") else "str_in"
            pre.append("let t_%s = %s(%s, %s_len);" % (n, conv, n, n))
            call.append("t_%s.as_ptr() as *const c_char" % n)
        elif k == "str_out":
            pre.append("let mut t_%s = str_buf(%s_len);" % (n, n))
            call.append("t_%s.as_mut_ptr() as *mut c_char" % n)
            # Only a successful call writes the result, and a lookup only when it found the
            # key (MPI_INFO_GET, MPI_INFO_GET_STRING leave VALUE alone otherwise), and
            # MPI_INFO_GET_STRING only when BUFLEN was not 0 (then it just returns the length).
            cond = "rc == MPI_SUCCESS"
            if any(x.name == "flag" and x.kind == "logical_out" for x in f.args):
                cond += " && t_flag != 0"
            if f.name == "MPI_Info_get_string":
                cond += " && f_buflen > 0"
            post.append("if %s { str_out(%s, %s_len, &t_%s); }" % (cond, n, n, n))
        elif k == "argv_in":
            pre.append("let (_argv_owned, mut t_%s) = argv_in(%s, %s_len, @STRIP@);" % (n, n, n))
            call.append("argv_ptr(&mut t_%s)" % n)
        elif k == "cmds_in":
            pre.append("let (_cmds_owned, mut t_%s) = cmds_in(%s, %s_len, *count, @STRIP@);" % (n, n, n))
            call.append("t_%s.as_mut_ptr()" % n)
        elif k == "argvs_in":
            pre.append("let (_argvs_owned, mut t_%s_rows) = argvs_in(%s, %s_len, *count, @STRIP@);" % (n, n, n))
            pre.append("let mut t_%s = argvs_outer(&mut t_%s_rows);" % (n, n))
            call.append("argvs_ptr(&mut t_%s)" % n)
        else:
            die("internal: kind %s" % k)
    if any(a.kind in ("attr_in", "attr_out", "extra_state") for a in f.args):
        # Attribute values and keyvals from Fortran are integers (see attributes.rs).
        pre.insert(0, "crate::attributes::fortran_call(true);")
        post.insert(0, "crate::attributes::fortran_call(false);")
    if f.name == "MPI_Info_get" and "valuelen" in names:
        # C writes at most valuelen characters: never more than the Fortran VALUE holds.
        i = [a.name for a in f.args].index("valuelen")
        call[i] = "(*valuelen).min(value_len.min(c_int::MAX as usize) as c_int)"
    # Variadic C functions (MPI_Pcontrol) take their fixed arguments only.
    out = []
    w = out.append
    sig = ", ".join("%s: %s" % p for p in params)

    def body(name, strip):
        w("unsafe fn %s(%s) -> %s {\n" % (name, sig, ret))
        w("    // SAFETY: Fortran passes each argument by reference (valid for the call, of the type\n")
        w("    // the MPI standard gives it) and each CHARACTER length as a trailing size_t.\n")
        w("    unsafe {\n")
        for line in pre:
            w("        %s\n" % line.replace("@STRIP@", strip))
        callee = "c_P" + f.name
        if f.is_sub:
            w("        let rc = %s(%s);\n" % (callee, ", ".join(call)))
            for line in post:
                w("        %s\n" % line)
            w("        set_ierr(ierror, rc);\n")
        else:
            w("        %s(%s)\n" % (callee, ", ".join(call)))
        w("    }\n}\n")

    w("\n/// Fortran %s.\n" % f.name.upper())
    body(imp, "true")
    syms = []
    for prefix in ("", "p"):
        low = prefix + f.lower
        for s in (low + "_", low + "__", low, low.upper()):
            if s not in cnames:
                syms.append(s)
    # The specific procedure the mpi_f08 module resolves MPI_X to (gfortran's name of the
    # standard's MPI_X_f08), so that a profiling tool can replace it. Spawned programs'
    # arguments keep their leading blanks there (MPICH's mpi_f08 does; its f77/f90 bindings
    # strip them, and its test suite checks both): a variant of its own.
    if any("@STRIP@" in line for line in pre):
        w("fortran_names!(%s(%s) -> %s;\n    %s);\n" % (imp, sig, ret, " ".join(syms)))
        w("\n/// Fortran %s of the `mpi_f08` module (leading blanks kept).\n" % f.name.upper())
        body(imp + "_f08", "false")
        w("fortran_names!(%s_f08(%s) -> %s;\n    %s);\n" % (imp, sig, ret, f.lower + "_f08_"))
        return "".join(out)
    syms.append(f.lower + "_f08_")
    w("fortran_names!(%s(%s) -> %s;\n    %s);\n" % (imp, sig, ret, " ".join(syms)))
    return "".join(out)


def rust_extern_decls(funcs):
    out = ["\n// ---- The C functions the bindings call (defined elsewhere in this library) ----\n",
           "// (Named c_PMPI_X here so that gen_abi.py does not take them for hand-written PMPI_X;\n",
           "// in a module cbindgen skips, so that mpi.h does not declare them.)\n",
           "/// cbindgen:ignore\n",
           "mod c_entry {\n",
           "    use super::*;\n",
           "    extern \"C\" {\n"]
    for f in funcs:
        args = ", ".join("%s: %s" % (p.name, p.rust_type) for p in f.c.params)
        if f.c.variadic:
            args += ", ..."
        out.append("        #[link_name = \"P%s\"]\n        pub(super) fn c_P%s(%s) -> %s;\n" % (f.name, f.name, args, f.c.ret))
    out.append("        #[link_name = \"PMPI_File_f2c\"]\n        pub(super) fn c_PMPI_File_f2c(file: MPI_Fint) -> MPI_File;\n")
    out.append("        #[link_name = \"PMPI_File_c2f\"]\n        pub(super) fn c_PMPI_File_c2f(file: MPI_File) -> MPI_Fint;\n")
    out.append("    }\n}\nuse c_entry::*;\n")
    return "".join(out)


def generate_rust(funcs, consts):
    cval = {n: v for n, _, v in consts}
    arms = "\n".join("        %d => %s," % (cval[k] + 1, k) for k in ATTR_KEYS)
    text = RUST_PROLOGUE.replace("@KEYVAL_ARMS@", arms)
    text = text.replace("@ATTR_INT_KEYS@", "        " + " | ".join(ATTR_KEYS_INT))
    bound = [f for f in funcs if not f.skip]
    cnames = {f.name for f in funcs}
    # Uppercase C data/function symbols libmpi already exports.
    cnames |= {"MPI_DUP_FN", "MPI_COMM_DUP_FN", "MPI_TYPE_DUP_FN", "MPI_WIN_DUP_FN"}
    parts = [text, rust_extern_decls(bound)]
    for f in bound:
        parts.append(rust_binding(f, cnames))
    return "".join(parts)


# ---- mpif.h --------------------------------------------------------------------------------

def fixed_lines(stmt_head, items, width=72):
    """`stmt_head item, item, ...` split over several statements that fit in `width` columns."""
    lines, cur = [], []
    for it in items:
        trial = "      " + stmt_head + " " + ", ".join(cur + [it])
        if cur and len(trial) > width:
            lines.append("      " + stmt_head + " " + ", ".join(cur))
            cur = []
        cur.append(it)
    if cur:
        lines.append("      " + stmt_head + " " + ", ".join(cur))
    return lines


COMMON_DECLS = [
    "INTEGER MPI_BOTTOM, MPI_IN_PLACE",
    "INTEGER MPI_STATUS_IGNORE(MPI_STATUS_SIZE)",
    "INTEGER MPI_STATUSES_IGNORE(MPI_STATUS_SIZE,1)",
    "INTEGER MPI_ERRCODES_IGNORE(1)",
    "CHARACTER*1 MPI_ARGVS_NULL(1,1), MPI_ARGV_NULL(1)",
    "INTEGER MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY",
    "INTEGER MPI_PRIV1_PAD(1), MPI_PRIV2_PAD(2)",
    "INTEGER MPI_FCMB5_PAD(3), MPI_FCMB9_PAD(3)",
    "CHARACTER*1 MPI_PRIVC_PAD(14)",
    "COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE",
    "COMMON /MPIPRIV1/ MPI_PRIV1_PAD",
    "COMMON /MPIPRIV2/ MPI_STATUSES_IGNORE, MPI_ERRCODES_IGNORE",
    "COMMON /MPIPRIV2/ MPI_PRIV2_PAD",
    "COMMON /MPIPRIVC/ MPI_ARGVS_NULL, MPI_ARGV_NULL, MPI_PRIVC_PAD",
    "COMMON /MPIFCMB5/ MPI_UNWEIGHTED, MPI_FCMB5_PAD",
    "COMMON /MPIFCMB9/ MPI_WEIGHTS_EMPTY, MPI_FCMB9_PAD",
    "SAVE /MPIPRIV1/, /MPIPRIV2/, /MPIPRIVC/, /MPIFCMB5/, /MPIFCMB9/",
]

CALLBACK_EXTERNALS = [
    "MPI_NULL_COPY_FN", "MPI_NULL_DELETE_FN", "MPI_DUP_FN",
    "MPI_COMM_NULL_COPY_FN", "MPI_COMM_NULL_DELETE_FN", "MPI_COMM_DUP_FN",
    "MPI_TYPE_NULL_COPY_FN", "MPI_TYPE_NULL_DELETE_FN", "MPI_TYPE_DUP_FN",
    "MPI_WIN_NULL_COPY_FN", "MPI_WIN_NULL_DELETE_FN", "MPI_WIN_DUP_FN",
]


def generate_mpifh(fconsts, funcs):
    L = []
    w = L.append
    w("! mpif.h -- OxMPI's Fortran 77 interface (MPICH ABI values).")
    w("! @generated by mpi-capi/gen/gen_fortran.py -- do not edit.")
    w("! Valid in fixed form (.f) and free form (.f90): statements start in")
    w("! column 7, lines end before column 73, comments start with '!'.")
    w("!")
    for name, ty, val in fconsts:
        w("      %s %s" % (ty, name))
        w("      PARAMETER (%s=%s)" % (name, val))
    w("!     Sentinels, recognised by address (COMMON blocks in libmpi).")
    for d in COMMON_DECLS:
        w("      " + d)
    w("!     Functions and predefined callbacks.")
    fns = [f for f in funcs if not f.skip and not f.large and not f.is_sub]
    dbl = [f.name.upper() for f in fns if f.c.ret == "f64"]
    # MPI_AINT_ADD and MPI_AINT_DIFF are not declared, as in MPICH's mpif.h: programs declare
    # them (`INTEGER(KIND=MPI_ADDRESS_KIND), EXTERNAL :: MPI_AINT_ADD`), which a declaration
    # here would make a duplicate.
    names = dbl + ["P" + n for n in dbl]
    L.extend(fixed_lines("EXTERNAL", names))
    L.extend(fixed_lines("DOUBLE PRECISION", dbl + ["P" + n for n in dbl]))
    L.extend(fixed_lines("EXTERNAL", CALLBACK_EXTERNALS))
    for line in L:
        if len(line) > 72:
            die("mpif.h line too long for fixed form: %r" % line)
    return "\n".join(L) + "\n"


# ---- The mpi module ------------------------------------------------------------------------

def fortran_decl(a):
    """Declaration lines for dummy argument a in an interface body."""
    k, n = a.kind, a.name
    if k in ("choice", "raw", "detach"):
        return ["!GCC$ ATTRIBUTES NO_ARG_CHECK :: %s" % n, "TYPE(*), DIMENSION(*) :: %s" % n]
    if k in ("callback", "attr_copy_fn", "attr_delete_fn"):
        return ["EXTERNAL :: %s" % n]
    if k in ("str_in", "str_out"):
        return ["CHARACTER(LEN=*) :: %s" % n]
    if k in ("argv_in", "cmds_in"):
        return ["CHARACTER(LEN=*) :: %s(*)" % n]
    if k == "argvs_in":
        return ["CHARACTER(LEN=*) :: %s(COUNT,*)" % n]
    if k in ("status", "status_in"):
        return ["INTEGER :: %s(5)" % n]
    if k == "statuses":
        return ["INTEGER :: %s(5,*)" % n]
    narrow = a.func in ("MPI_Attr_put", "MPI_Attr_get", "MPI_Keyval_create")
    if k in ("attr_in", "attr_out", "extra_state"):
        return ["INTEGER%s :: %s" % ("" if narrow else "(KIND=8)", n)]
    if k in ("logical_in", "logical_out"):
        return ["LOGICAL :: %s" % n]
    if k == "logical_array":
        return ["LOGICAL :: %s(*)" % n]
    ty = "INTEGER(KIND=8)" if a.base in WIDE and not k.startswith("narrow") else "INTEGER"
    if a.array or k in ("errcodes", "weights", "indices_out"):
        return ["%s :: %s(%s)" % (ty, n, ",".join(list(reversed(a.inner_dims)) + ["*"]))]
    return ["%s :: %s" % (ty, n)]


def wrap_free(head, items, indent):
    """A free-form statement `head(items)` with continuation lines under 100 columns."""
    text = head + "(" + ", ".join(items) + ")"
    if len(indent + text) <= 100:
        return [indent + text]
    lines, cur = [], indent + head + "("
    for i, it in enumerate(items):
        piece = it + (", " if i < len(items) - 1 else ")")
        if len(cur) + len(piece) > 95:
            lines.append(cur.rstrip() + " &")
            cur = indent + "    "
        cur += piece
    lines.append(cur)
    return lines


def interface(f, prefix):
    name = prefix + f.name
    fargs = [a.name for a in f.fargs()]
    ind = "    "
    L = []
    if f.is_sub:
        L += wrap_free("subroutine " + name, fargs + ["ierror"], ind)
    else:
        ty = "double precision" if f.c.ret == "f64" else "integer(kind=8)"
        L += wrap_free(ty + " function " + name, fargs, ind)
    L.append(ind + "  implicit none")
    for a in f.fargs():
        for d in fortran_decl(a):
            L.append(ind + "  " + d)
    if f.is_sub:
        L.append(ind + "  integer :: ierror")
    L.append(ind + "end " + ("subroutine " if f.is_sub else "function ") + name)
    return L


# MPI_SIZEOF: one specific per intrinsic type and kind gfortran has, each taking scalars and
# arrays of any rank (assumed rank, DIMENSION(..)); the size is that of one element.
SIZEOF_TYPES = ([("i%d" % k, "integer(kind=%d)" % k) for k in (1, 2, 4, 8, 16)] +
                [("r%d" % k, "real(kind=%d)" % k) for k in (4, 8, 10, 16)] +
                [("c%d" % k, "complex(kind=%d)" % k) for k in (4, 8, 10, 16)] +
                [("l%d" % k, "logical(kind=%d)" % k) for k in (1, 2, 4, 8, 16)] +
                [("ch", "character(len=*)")])


def sizeof_generic():
    """The MPI_SIZEOF generic interface of the `mpi` module (procedures: module_procedures)."""
    names = ["mpi_sizeof_" + t for t, _ in SIZEOF_TYPES]
    L = ["  interface MPI_Sizeof"]
    for i in range(0, len(names), 6):
        L.append("    module procedure " + ", ".join(names[i:i + 6]))
    L.append("  end interface MPI_Sizeof")
    return L


# TYPE(MPI_Status), which MPI-3.0 put in the `mpi` module too (the `mpi_f08` module takes
# it from here, with the two conversions): the MPICH ABI's C MPI_Status, count_lo and
# count_hi_and_cancelled, then the public fields.
STATUS_TYPE = [
    "  type, bind(C) :: MPI_Status",
    "    integer(c_int) :: count_lo, count_hi_and_cancelled",
    "    integer(c_int) :: MPI_SOURCE, MPI_TAG, MPI_ERROR",
    "  end type MPI_Status",
]

# MPI_STATUS_F2F08 / MPI_STATUS_F082F: the two layouts are the same five ints.
STATUS_CONVERSIONS = [
    "  subroutine MPI_Status_f2f08(f_status, f08_status, ierror)",
    "    integer, intent(in) :: f_status(MPI_STATUS_SIZE)",
    "    type(MPI_Status), intent(out) :: f08_status",
    "    integer, optional, intent(out) :: ierror",
    "    f08_status = transfer(f_status, f08_status)",
    "    if (present(ierror)) ierror = MPI_SUCCESS",
    "  end subroutine MPI_Status_f2f08",
    "  subroutine MPI_Status_f082f(f08_status, f_status, ierror)",
    "    type(MPI_Status), intent(in) :: f08_status",
    "    integer, intent(out) :: f_status(MPI_STATUS_SIZE)",
    "    integer, optional, intent(out) :: ierror",
    "    f_status = transfer(f08_status, f_status)",
    "    if (present(ierror)) ierror = MPI_SUCCESS",
    "  end subroutine MPI_Status_f082f",
]


def module_procedures():
    """The `mpi` module's procedures (after `contains`): MPI_F_SYNC_REG, a call the
    compiler cannot see into, which is all it has to be (a register barrier for buffers of
    nonblocking calls), the specifics of MPI_SIZEOF, and the status conversions."""
    L = STATUS_CONVERSIONS + ["  subroutine MPI_F_sync_reg(buf)",
         "    !GCC$ ATTRIBUTES NO_ARG_CHECK :: buf",
         "    type(*), dimension(*) :: buf",
         "  end subroutine MPI_F_sync_reg"]
    for t, decl in SIZEOF_TYPES:
        name = "mpi_sizeof_" + t
        L += ["  subroutine %s(x, size, ierror)" % name,
              "    %s, dimension(..), intent(in) :: x" % decl,
              "    integer, intent(out) :: size",
              "    integer, optional, intent(out) :: ierror",
              "    size = int(storage_size(x) / 8)",
              "    if (present(ierror)) ierror = 0",
              "  end subroutine %s" % name]
    return L


def generate_module(fconsts, funcs):
    L = []
    w = L.append
    w("! mpi.f90 -- OxMPI's `mpi` module (`use mpi`), built with gfortran at install time.")
    w("! @generated by mpi-capi/gen/gen_fortran.py -- do not edit.")
    w("module mpi")
    w("  use, intrinsic :: iso_c_binding, only : c_int")
    w("  implicit none")
    w("  private :: c_int")
    w("  public")
    L += STATUS_TYPE
    for name, ty, val in fconsts:
        fty = "integer(kind=8)" if ty == "INTEGER*8" else ty.lower()
        w("  %s, parameter :: %s = %s" % (fty, name, val))
    for d in COMMON_DECLS:
        w("  " + d)
    for line in fixed_lines("EXTERNAL", CALLBACK_EXTERNALS):
        w("  " + line.strip())
    w("")
    w("  interface")
    for f in funcs:
        if f.skip or f.large or not f.has_interface():
            continue
        for prefix in ("", "P"):
            L += interface(f, prefix)
    w("  end interface")
    L += sizeof_generic()
    w("contains")
    L += module_procedures()
    w("end module mpi")
    return "\n".join(L) + "\n"


def generate_md(funcs):
    skipped = [f for f in funcs if f.skip]
    L = ["# Fortran bindings\n", "\n",
         "<!-- @generated by mpi-capi/gen/gen_fortran.py (`make gen`); do not edit. -->\n", "\n",
         "`mpif.h`, the `mpi` and `mpi_f08` modules and the Fortran entry points of `libmpi.so` cover %d of the\n"
         % (len(funcs) - len(skipped)),
         "%d C functions of `mpi-capi/gen/mpi31.txt`, `mpi40.txt` and `mpi41.txt` (a Fortran call of a C function that is not\n"
         % len(funcs),
         "implemented yet reports it through the error handler like the C call does).\n",
         "(`mpi_f08` leaves out the routines MPI-3.0 removed, as the standard does: see\n",
         "`REMOVED` in `mpi-capi/gen/gen_f08.py`; the large-count `MPI_X_c` functions are bound in\n",
         "`mpi_f08` only, as the standard has them: see `large_count` there.) These have no Fortran\n",
         "binding:\n", "\n"]
    for f in sorted(skipped, key=lambda f: f.name):
        L.append("- `%s`: %s\n" % (f.name, f.skip))
    return "".join(L)


def main():
    check = "--check" in sys.argv[1:]
    cfuncs = gen_abi.parse_specs()
    funcs = [FFunc(f) for f in cfuncs]
    consts = read_consts()
    fconsts = fortran_consts(consts)
    outputs = [
        (OUT_RS, generate_rust(funcs, consts)),
        (OUT_MPIFH, generate_mpifh(fconsts, funcs)),
        (OUT_MOD, generate_module(fconsts, funcs)),
        (OUT_MD, generate_md(funcs)),
    ]
    if check:
        stale = []
        for path, content in outputs:
            try:
                with open(path) as fh:
                    ok = fh.read() == content
            except FileNotFoundError:
                ok = False
            if not ok:
                stale.append(os.path.relpath(path, ROOT))
        if stale:
            die("out of date: %s; run `make gen`" % ", ".join(stale))
        print("gen_fortran: up to date")
        return
    changed = [os.path.relpath(p, ROOT) for p, c in outputs if gen_abi.write_if_changed(p, c)]
    nbound = sum(1 for f in funcs if not f.skip)
    print("gen_fortran: %d of %d functions bound%s" % (
        nbound, len(funcs), ("; wrote " + ", ".join(changed)) if changed else "; up to date"))


if __name__ == "__main__":
    main()
