#!/usr/bin/env bash
# Lay out an OxMPI install tree:   scripts/install-tree.sh PREFIX RELEASE_DIR
#
#   PREFIX/bin/{mpicc,mpicxx}          wrappers (from mpi-capi/wrappers/*.in, PREFIX baked in)
#   PREFIX/bin/{mpirun,mpiexec}        the launcher (mpiexec -> mpirun), if it was built
#   PREFIX/include/{mpi.h,mpio.h}      the cbindgen-generated header (+ an mpio.h shim)
#   PREFIX/lib/libmpi.so.12            RELEASE_DIR/libmpi.so (SONAME libmpi.so.12)
#   PREFIX/lib/{libmpi.so,libmpich.so.12,libmpich.so} -> libmpi.so.12
#   PREFIX/lib/liboxmpi-verbs.so       the RDMA verbs transport plugin, if it was built
#   PREFIX/lib/pkgconfig/mpi.pc, and mpich.pc -> mpi.pc (build probes that know MPICH by
#                                      its pkg-config name: rsmpi's, Meson's)
#
# PREFIX may be relative (it is made absolute). Running it again replaces the tree's files.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 PREFIX RELEASE_DIR" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
prefix=$(cd "$1" && pwd)
release=$(cd "$2" && pwd)
version=$(sed -n 's/^version *= *"\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)
version=${version:-0.0.0}

lib="$release/libmpi.so"
header="$release/include/mpi.h"
for f in "$lib" "$header"; do
    if [ ! -f "$f" ]; then
        echo "install-tree: $f is missing; build first (cargo build --release -p mpi-capi)" >&2
        exit 1
    fi
done

mkdir -p "$prefix/bin" "$prefix/include" "$prefix/lib/pkgconfig"

# Replace a file atomically (install to a temporary name, then rename).
put() { # put SRC DEST MODE
    install -m "$3" "$1" "$2.tmp.$$"
    mv -f "$2.tmp.$$" "$2"
}
link() { # link TARGET NAME
    ln -sfn "$1" "$2"
}
substitute() { # substitute TEMPLATE DEST
    local esc_prefix
    esc_prefix=$(printf '%s' "$prefix" | sed 's/[\\|&]/\\&/g')
    sed -e "s|@PREFIX@|$esc_prefix|g" -e "s|@VERSION@|$version|g" "$1" > "$2.tmp.$$"
    chmod 755 "$2.tmp.$$"
    mv -f "$2.tmp.$$" "$2"
}

# Library and its names.
put "$lib" "$prefix/lib/libmpi.so.12" 755
link libmpi.so.12 "$prefix/lib/libmpi.so"
link libmpi.so.12 "$prefix/lib/libmpich.so.12"
link libmpi.so.12 "$prefix/lib/libmpich.so"

# The verbs plugin (dlopen()ed by libmpi.so.12 at MPI_Init; needs libibverbs.so.1).
if [ -f "$release/liboxmpi_verbs.so" ]; then
    put "$release/liboxmpi_verbs.so" "$prefix/lib/liboxmpi-verbs.so" 755
else
    rm -f "$prefix/lib/liboxmpi-verbs.so"
fi

# Headers.
put "$header" "$prefix/include/mpi.h" 644
printf '/* mpio.h -- MPI-IO is declared in mpi.h. */\n#include "mpi.h"\n' > "$prefix/include/mpio.h.tmp.$$"
mv -f "$prefix/include/mpio.h.tmp.$$" "$prefix/include/mpio.h"

# Compiler wrappers.
substitute "$root/mpi-capi/wrappers/mpicc.in" "$prefix/bin/mpicc"
substitute "$root/mpi-capi/wrappers/mpicxx.in" "$prefix/bin/mpicxx"

# Launcher.
if [ -f "$release/mpirun" ]; then
    put "$release/mpirun" "$prefix/bin/mpirun" 755
    link mpirun "$prefix/bin/mpiexec"
else
    echo "install-tree: warning: $release/mpirun is missing (launcher not built); bin/mpirun not installed" >&2
fi

# pkg-config.
cat > "$prefix/lib/pkgconfig/mpi.pc.tmp.$$" <<PC
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: mpi
Description: OxMPI, an MPI implementation (MPICH ABI)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lmpi
PC
mv -f "$prefix/lib/pkgconfig/mpi.pc.tmp.$$" "$prefix/lib/pkgconfig/mpi.pc"
ln -sfn mpi.pc "$prefix/lib/pkgconfig/mpich.pc"

echo "install-tree: OxMPI $version installed in $prefix"
"$root/scripts/install-fortran.sh" "$prefix"
