#!/usr/bin/env bash
# tests/softroce/mpi-suite.sh [PREFIX]: the verbs plugin's unit tests and its own self-test
# in a VM (mpi-verbs/selftest-vm.sh), then OxMPI's C test programs over real RDMA verbs, on
# Soft-RoCE (rdma_rxe) inside qemu VMs (run-in-vm.sh): one VM with every peer forced onto
# verbs (OXMPI_TRANSPORT=verbs) at 2 and 4 ranks plus a job mixing shm and verbs, then two
# VMs with 2 ranks each started by OxMPI's own multi-host mpirun through the guests'
# remote-exec agent (shm inside a VM, verbs between them), and a rank killed on node 1.
# PREFIX (default ./install) must hold the verbs plugin, lib/liboxmpi-verbs.so.
# MPI_SUITE_PARTS (default "plugin one two") runs some parts. Exit status: 0 when every job passed; 1 on a failure; 124/125 as run-in-vm.sh.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PREFIX=$(cd "${1:-$ROOT/install}" && pwd)

if [[ ! -f $PREFIX/lib/liboxmpi-verbs.so ]]; then
    echo "mpi-suite: $PREFIX/lib/liboxmpi-verbs.so is missing (install libibverbs-dev: make deps, then make install)" >&2
    exit 1
fi

job=$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-verbs-job.XXXXXX")
trap 'rm -rf "$job"' EXIT
mkdir -p "$job/oxmpi/bin" "$job/oxmpi/lib" "$job/bin"
cp -L "$PREFIX/bin/mpirun" "$job/oxmpi/bin/"
cp -L "$PREFIX/lib/libmpi.so.12" "$PREFIX/lib/liboxmpi-verbs.so" "$job/oxmpi/lib/"
programs=(ring send_modes wildcard_order blocking_recv probe_persistent_cancel sendrecv datatypes_p2p
    pingpong_sizes coll_all comm_split threads_hammer reg_reuse credit_flood crash
    sleep_wake grequest rma_fence rma_lock_counter rma_accumulate rma_request_ops)
for p in "${programs[@]}"; do
    # No -march=native: the guest CPU (qemu TCG) lacks some host extensions.
    "$PREFIX/bin/mpicc" -O2 -o "$job/bin/$p" "$ROOT/tests/c/$p.c" -lpthread
done
cp "$HERE/mpi-jobs.sh" "$job/"

parts=${MPI_SUITE_PARTS:-plugin one two}
status=0
if [[ " $parts " == *" plugin "* ]]; then
    echo "mpi-suite: the plugin's unit tests, then its self-test through the ABI on rxe0"
    cargo test --release --manifest-path "$ROOT/mpi-verbs/Cargo.toml" --target-dir "$ROOT/target" >"$job/unit.log" 2>&1 || status=1
    grep -E "^test result|FAILED|panicked" "$job/unit.log" || tail -n 20 "$job/unit.log"
    SOFTROCE_TIMEOUT=${SOFTROCE_TIMEOUT:-480} "$ROOT/mpi-verbs/selftest-vm.sh" 1 || status=$?
fi
if [[ " $parts " == *" one "* ]]; then
echo "mpi-suite: one VM, OXMPI_TRANSPORT=verbs at 2 and 4 ranks, and shm+verbs in one job"
SOFTROCE_TIMEOUT=${SOFTROCE_TIMEOUT:-480} "$HERE/run-in-vm.sh" "$job" ./mpi-jobs.sh one || status=$?
fi
if [[ " $parts " == *" two "* ]]; then
echo "mpi-suite: two VMs, 2 ranks each (shm inside, verbs between), mpirun -launcher-exec /softroce/agent"
SOFTROCE_NODES=2 SOFTROCE_TIMEOUT=${SOFTROCE_TIMEOUT:-480} "$HERE/run-in-vm.sh" "$job" ./mpi-jobs.sh two || status=$?
fi
if ((status == 0)); then echo "mpi-suite: PASS"; else echo "mpi-suite: FAIL (status $status)"; fi
exit "$status"
