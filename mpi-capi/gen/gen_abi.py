#!/usr/bin/env python3
"""Generate the C entry points of libmpi.so from the MPI-3.1 API spec (plus some of MPI-4.0).

Input:  mpi-capi/gen/mpi31.txt   one C prototype per line (the MPI-3.1 C API, plus the
                                 MPI-1 functions removed in MPI-3.0 that MPICH still exports)
        mpi-capi/gen/mpi40.txt   the same for the MPI-4.0 functions declared so far
        mpi-capi/gen/mpi41.txt   and for the MPI-4.1 ones
Output: mpi-capi/src/generated.rs
          - for every function: `MPI_X(args) -> ret { PMPI_X(args) }` (profiling interface);
          - for every function whose `PMPI_X` is not written by hand in another file under
            mpi-capi/src/: a `PMPI_X` that reports "MPI_X is not supported by OxMPI yet"
            through crate::errors::not_supported and returns its error code;
        docs/unsupported.md: the list of functions that are stubs right now.

Files are written only when their content changes. Python 3 standard library only.
Run from anywhere: `python3 mpi-capi/gen/gen_abi.py` (the Makefile's `make gen`);
`--check` only verifies that the outputs are up to date (exit status 1 if not).
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CRATE = os.path.dirname(HERE)
ROOT = os.path.dirname(CRATE)
SPEC = os.path.join(HERE, "mpi31.txt")
SPECS = [SPEC, os.path.join(HERE, "mpi40.txt"), os.path.join(HERE, "mpi41.txt")]
SRC = os.path.join(CRATE, "src")
OUT_RS = os.path.join(SRC, "generated.rs")
OUT_MD = os.path.join(ROOT, "docs", "unsupported.md")

# C scalar / handle types -> Rust types (the handle typedefs keep their names in Rust).
SCALARS = {
    "int": "c_int",
    "char": "c_char",
    "void": "c_void",
    "double": "f64",
}
NAMED = {
    "MPI_Aint", "MPI_Offset", "MPI_Count", "MPI_Fint", "MPI_Comm", "MPI_Datatype",
    "MPI_Group", "MPI_Win", "MPI_Op", "MPI_Errhandler", "MPI_Request", "MPI_Message",
    "MPI_Info", "MPI_File", "MPI_Status", "MPI_T_enum", "MPI_T_cvar_handle",
    "MPI_T_pvar_handle", "MPI_T_pvar_session", "MPI_Session", "MPI_F08_status",
    "MPI_T_event_registration", "MPI_T_event_instance", "MPI_T_cb_safety", "MPI_T_source_order",
}
# Callback typedefs: in C a parameter `MPI_X_function *fn`; in Rust the nullable
# function pointer type `MPI_X_function` (an Option<extern "C" fn>).
CALLBACKS = {
    "MPI_Comm_copy_attr_function", "MPI_Comm_delete_attr_function",
    "MPI_Type_copy_attr_function", "MPI_Type_delete_attr_function",
    "MPI_Win_copy_attr_function", "MPI_Win_delete_attr_function",
    "MPI_Copy_function", "MPI_Delete_function", "MPI_User_function",
    "MPI_Comm_errhandler_function", "MPI_File_errhandler_function",
    "MPI_Win_errhandler_function", "MPI_Handler_function",
    "MPI_Grequest_query_function", "MPI_Grequest_free_function",
    "MPI_Grequest_cancel_function", "MPI_Datarep_conversion_function",
    "MPI_Datarep_extent_function", "MPI_User_function_c", "MPI_Session_errhandler_function",
    "MPI_Datarep_conversion_function_c", "MPI_T_event_cb_function",
    "MPI_T_event_free_cb_function", "MPI_T_event_dropped_cb_function",
}
RUST_KEYWORDS = set(
    "as break const continue crate else enum extern false fn for if impl in let loop match "
    "mod move mut pub ref return self Self static struct super trait true type unsafe use "
    "where while async await dyn abstract become box do final macro override priv typeof "
    "unsized virtual yield try".split()
)

PROTO_RE = re.compile(r"^\s*([A-Za-z_][\w ]*?)\s*\b(MPI_\w+)\s*\((.*)\)\s*;\s*$")
PARAM_RE = re.compile(r"^(?P<const>const\s+)?(?P<base>\w+)\s*(?P<stars>\**)\s*(?P<name>\w+)\s*(?P<dims>(\[\w*\])*)$")


class Param:
    def __init__(self, name, rust_type, c_text):
        self.name = name
        self.rust_type = rust_type
        self.c_text = c_text


class Func:
    def __init__(self, ret, name, params, variadic, line):
        self.ret = ret          # Rust return type
        self.name = name        # MPI_X
        self.params = params    # list of Param
        self.variadic = variadic
        self.line = line

    @property
    def pname(self):
        return "P" + self.name


def die(msg):
    sys.stderr.write("gen_abi.py: " + msg + "\n")
    sys.exit(1)


def rust_base(base, where):
    if base in SCALARS:
        return SCALARS[base]
    if base in NAMED:
        return base
    die("unknown C type %r in %s" % (base, where))


def parse_param(text, where):
    m = PARAM_RE.match(text)
    if not m:
        die("cannot parse parameter %r in %s" % (text, where))
    const = bool(m.group("const"))
    base = m.group("base")
    stars = len(m.group("stars"))
    name = m.group("name")
    dims = re.findall(r"\[(\w*)\]", m.group("dims") or "")
    if name in RUST_KEYWORDS:
        name = name + "_"

    if base in CALLBACKS:
        if stars != 1 or dims or const:
            die("callback parameter must be `T *name`: %r in %s" % (text, where))
        return Param(name, base, text)

    ty = rust_base(base, where)
    # An array parameter `T a[]` is a pointer; `T a[][3]` a pointer to arrays of 3.
    inner_dims = dims[1:] if dims else []
    for d in reversed(inner_dims):
        if not d.isdigit():
            die("unsupported array bound in %r (%s)" % (text, where))
        ty = "[%s; %s]" % (ty, d)
    levels = stars + (1 if dims else 0)
    if levels == 0:
        # A `const int level` by value is just an int.
        return Param(name, ty, text)
    # `const` qualifies the innermost pointee only (C: `const char *s`).
    ptr = ("*const " if const else "*mut ") + ty
    for _ in range(levels - 1):
        ptr = "*mut " + ptr
    return Param(name, ptr, text)


def parse_specs():
    """Every function of the spec files (SPECS), in order; a name may appear only once."""
    funcs = []
    seen = set()
    for path in SPECS:
        funcs += parse_spec(path, seen)
    return funcs


def parse_spec(path, seen=None):
    funcs = []
    seen = set() if seen is None else seen
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            where = "%s:%d" % (os.path.basename(path), lineno)
            m = PROTO_RE.match(line)
            if not m:
                die("cannot parse prototype at %s: %r" % (where, line))
            ret_c, name, args = m.group(1).strip(), m.group(2), m.group(3).strip()
            if name in seen:
                die("duplicate function %s at %s" % (name, where))
            seen.add(name)
            ret = "c_int" if ret_c == "int" else rust_base(ret_c, where)
            params = []
            variadic = False
            if args and args != "void":
                for p in args.split(","):
                    p = p.strip()
                    if p == "...":
                        variadic = True
                        continue
                    params.append(parse_param(p, where))
            funcs.append(Func(ret, name, params, variadic, line))
    return funcs


def module_path(path):
    """crate path of the module defined by a file under src/ (src/a/b.rs -> crate::a::b)."""
    rel = os.path.relpath(path, SRC)[:-3].split(os.sep)
    if rel[-1] == "mod":
        rel = rel[:-1]
    if rel in (["lib"], ["main"]):
        return "crate"
    return "crate::" + "::".join(rel)


def declared_module(path):
    """Whether the file is compiled: `mod name;` appears in its parent module's file.

    Files a colleague has written but not yet added to the module tree are ignored, so
    the generated code never refers to a module that does not exist."""
    rel = os.path.relpath(path, SRC)[:-3].split(os.sep)
    if rel in (["lib"], ["main"]):
        return True
    if rel[-1] == "mod":
        rel = rel[:-1]
    name = rel[-1]
    parent_dir = os.path.join(SRC, *rel[:-1])
    if len(rel) == 1:
        candidates = [os.path.join(SRC, "lib.rs")]
    else:
        candidates = [os.path.join(parent_dir, "mod.rs"), parent_dir + ".rs"]
    decl = re.compile(r"^\s*(pub(\([\w:]+\))?\s+)?mod\s+%s\s*;" % re.escape(name), re.M)
    for c in candidates:
        if os.path.exists(c):
            with open(c) as f:
                if decl.search(f.read()):
                    return len(rel) == 1 or declared_module(c)
    return False


def scan_handwritten():
    """Map of `PMPI_X`/`MPI_X` names defined by hand (outside generated.rs) -> module path."""
    found = {}
    pat = re.compile(r"\bfn\s+(P?MPI_\w+)\b")
    for dirpath, dirnames, filenames in os.walk(SRC):
        dirnames.sort()
        for fn in sorted(filenames):
            if not fn.endswith(".rs"):
                continue
            path = os.path.join(dirpath, fn)
            if os.path.abspath(path) == os.path.abspath(OUT_RS):
                continue
            if not declared_module(path):
                continue
            with open(path) as f:
                text = f.read()
            for m in pat.finditer(text):
                found.setdefault(m.group(1), module_path(path))
    return found


def first_comm_arg(func):
    for p in func.params:
        if p.rust_type == "MPI_Comm":
            return p.name
    return "MPI_COMM_WORLD"


def signature(func, name):
    args = ", ".join("%s: %s" % (p.name, p.rust_type) for p in func.params)
    ret = "" if func.ret == "()" else " -> %s" % func.ret
    return "pub unsafe extern \"C\" fn %s(%s)%s" % (name, args, ret)


def generate(funcs, hand):
    out = []
    w = out.append
    w("// @generated by mpi-capi/gen/gen_abi.py from mpi-capi/gen/mpi31.txt, mpi40.txt and mpi41.txt -- do not edit.\n")
    w("// Regenerate with `make gen` (or `python3 mpi-capi/gen/gen_abi.py`).\n")
    w("//\n")
    w("// `MPI_X` forwards to `PMPI_X` (the profiling interface: a tool defining `MPI_X` is\n")
    w("// found first by the dynamic linker and calls `PMPI_X` itself). `PMPI_X` lives in a\n")
    w("// hand-written module, or below as a stub reporting \"MPI_X is not supported by OxMPI\n")
    w("// yet\" through the error handler.\n")
    w("#![allow(unused_variables, unused_imports, clippy::too_many_arguments)]\n\n")
    w("use crate::abi::*;\n")
    w("use std::os::raw::{c_char, c_int, c_void};\n")
    stubs = []
    for f in funcs:
        call_args = ", ".join(p.name for p in f.params)
        w("\n")
        if f.name not in hand:
            target = hand.get(f.pname)
            callee = "%s::%s" % (target, f.pname) if target else f.pname
            w("// %s\n" % f.line)
            w("#[no_mangle]\n")
            w("%s {\n" % signature(f, f.name))
            w("    // SAFETY: same contract as the C function; arguments forwarded unchanged.\n")
            w("    unsafe { %s(%s) }\n" % (callee, call_args))
            w("}\n")
        if f.pname not in hand:
            if f.ret != "c_int":
                die("%s does not return an error code, so it cannot be a stub: write %s by hand"
                    % (f.name, f.pname))
            stubs.append(f.name)
            w("\n#[no_mangle]\n")
            w("%s {\n" % signature(f, f.pname))
            w("    crate::errors::not_supported(%s, \"%s\")\n" % (first_comm_arg(f), f.name))
            w("}\n")
    return "".join(out), stubs


def unsupported_md(funcs, stubs):
    lines = [
        "# Functions not supported yet\n",
        "\n",
        "<!-- @generated by mpi-capi/gen/gen_abi.py (`make gen`); do not edit. -->\n",
        "\n",
        "`mpi.h` declares the whole MPI-3.1 C API and the MPI-4.0 and MPI-4.1 functions listed in\n",
        "`mpi-capi/gen/mpi40.txt` and `mpi41.txt`, and `libmpi.so` exports every function (as\n",
        "`MPI_X` and `PMPI_X`). The functions below are not implemented yet: each returns\n",
        "`MPI_ERR_OTHER` with the message \"MPI_Xxx is not supported by OxMPI yet\" through the\n",
        "error handler of its communicator (`MPI_COMM_WORLD`'s when it has none).\n",
        "\n",
        "%d of %d functions are not supported yet.\n" % (len(stubs), len(funcs)),
        "\n",
    ]
    for name in sorted(stubs):
        lines.append("- `%s`\n" % name)
    return "".join(lines)


def write_if_changed(path, content):
    try:
        with open(path) as f:
            if f.read() == content:
                return False
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(content)
    os.replace(tmp, path)
    return True


def main():
    check = "--check" in sys.argv[1:]
    funcs = parse_specs()
    hand = scan_handwritten()
    rs, stubs = generate(funcs, hand)
    if check:
        stale = []
        for path, content in ((OUT_RS, rs), (OUT_MD, unsupported_md(funcs, stubs))):
            try:
                with open(path) as f:
                    ok = f.read() == content
            except FileNotFoundError:
                ok = False
            if not ok:
                stale.append(os.path.relpath(path, ROOT))
        if stale:
            die("out of date: %s; run `make gen`" % ", ".join(stale))
        print("gen_abi: up to date")
        return
    changed = []
    if write_if_changed(OUT_RS, rs):
        changed.append(os.path.relpath(OUT_RS, ROOT))
    if write_if_changed(OUT_MD, unsupported_md(funcs, stubs)):
        changed.append(os.path.relpath(OUT_MD, ROOT))
    print("gen_abi: %d functions, %d implemented, %d not supported yet%s" % (
        len(funcs), len(funcs) - len(stubs), len(stubs),
        ("; wrote " + ", ".join(changed)) if changed else "; up to date"))


if __name__ == "__main__":
    main()
