#!/usr/bin/env bash
# Install what building and testing OxMPI needs on Debian/Ubuntu, only if missing:
# C toolchain, make, pkg-config, python3, procps, MPICH (for the interop test and
# side-by-side benchmarks), gfortran, python3-venv/pip (mpi4py's suite, tests/external),
# iproute2 (the network-namespace hosts of tests/netns), openssh-client (mpirun's default
# launcher across hosts), libibverbs-dev + librdmacm-dev + libclang-dev (the RDMA verbs
# plugin: rdma-sys links both and generates its bindings with bindgen, which needs
# libclang; Debian 12's clang 14 works, see docs/verbs.md), ibverbs-providers, curl +
# xz-utils + perl (MPICH's test suite, tests/external/mpich-testsuite.sh). Checks that
# cargo is available.
# Quiet when there is nothing to do.
set -euo pipefail

PACKAGES=(gcc g++ make pkg-config python3 python3-venv python3-pip procps mpich libmpich-dev gfortran iproute2 openssh-client libibverbs-dev librdmacm-dev ibverbs-providers libclang-dev curl xz-utils perl)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
    for p in "${PACKAGES[@]}"; do
        status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
        if [[ "$status" != "install ok installed" ]]; then
            missing+=("$p")
        fi
    done
else
    echo "install-deps: not a Debian-based system; make sure the equivalents of these are" \
         "installed: ${PACKAGES[*]}" >&2
fi

if ((${#missing[@]})); then
    if [[ $(id -u) -eq 0 ]]; then
        SUDO=()
    elif command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo)
    else
        echo "install-deps: missing packages: ${missing[*]}" >&2
        echo "install-deps: as root, run: apt-get update && apt-get install -y" \
             "--no-install-recommends ${missing[*]}" >&2
        exit 1
    fi
    echo "install-deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${SUDO[@]}" apt-get update -q
    "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
    if [[ -x "$HOME/.cargo/bin/cargo" ]]; then
        echo "install-deps: cargo is installed in ~/.cargo/bin but not on PATH; run:" >&2
        echo '    . "$HOME/.cargo/env"' >&2
    else
        echo "install-deps: cargo (Rust) not found. Install Rust with rustup:" >&2
        echo "    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y" >&2
        echo '    . "$HOME/.cargo/env"' >&2
    fi
    exit 1
fi
