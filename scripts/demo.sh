#!/usr/bin/env bash
# Compile examples/*.c with PREFIX/bin/mpicc (in a temporary build directory,
# never the source tree) and run each with PREFIX/bin/mpirun -n 4.
# Usage: scripts/demo.sh PREFIX        (NP=4 and DEMO_BUILD_DIR=... to override)
set -euo pipefail

PREFIX=${1:?usage: scripts/demo.sh PREFIX}
PREFIX=$(cd "$PREFIX" && pwd)
NP=${NP:-4}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MPICC="$PREFIX/bin/mpicc"
MPIRUN="$PREFIX/bin/mpirun"
for tool in "$MPICC" "$MPIRUN"; do
    if [[ ! -x "$tool" ]]; then
        echo "demo: $tool not found; run 'make install PREFIX=$PREFIX' first" >&2
        exit 1
    fi
done

if [[ -n "${DEMO_BUILD_DIR:-}" ]]; then
    BUILD=$DEMO_BUILD_DIR
    mkdir -p "$BUILD"
else
    BUILD=$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-demo.XXXXXX")
    trap 'rm -rf "$BUILD"' EXIT
fi

shopt -s nullglob
examples=("$ROOT"/examples/*.c)
if ((${#examples[@]} == 0)); then
    echo "demo: no examples in $ROOT/examples" >&2
    exit 1
fi

# a launcher that hangs must not hang the demo
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-120}
for src in "${examples[@]}"; do
    name=$(basename "$src" .c)
    echo
    echo "=== $name: $(basename "$MPICC") examples/$name.c && $(basename "$MPIRUN") -n $NP ./$name ==="
    "$MPICC" -O2 -Wall -o "$BUILD/$name" "$src"
    "$MPIRUN" -n "$NP" "$BUILD/$name"
done
fortran=("$ROOT"/examples/*.f90)
MPIFORT="$PREFIX/bin/mpifort"
for src in "${fortran[@]}"; do
    name=$(basename "$src" .f90)
    echo
    echo "=== $name: mpifort examples/$name.f90 && $(basename "$MPIRUN") -n $NP ./$name ==="
    (cd "$BUILD" && "$MPIFORT" -O2 -o "$name" "$src")
    "$MPIRUN" -n "$NP" "$BUILD/$name"
done
echo
echo "demo: all $((${#examples[@]} + ${#fortran[@]})) examples ran with $NP ranks"
