#!/usr/bin/env bash
# mpi-verbs/selftest-vm.sh [1|2] [VAR=VALUE...]: build the plugin and verbs_selftest, then
# run the self-test on Soft-RoCE: "1" (default) one VM (ranks 0 and 1 in one process, plus
# the port-down case), "2" two VMs (rank 0 on node0, rank 1 on node1, cards over TCP; the
# rxe counters of both nodes are printed). VAR=VALUE pairs go to both ranks' environment
# (e.g. VERBS_SELFTEST_REPEAT=20, OXMPI_VERBS_RDMA_PIECE=65536). Exit status: the test's.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mode=${1:-1}
shift || true
cargo build --release --manifest-path mpi-verbs/Cargo.toml --target-dir target >&2
dir=$(mktemp -d "${TMPDIR:-/tmp}/verbs-selftest.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cp target/release/verbs_selftest target/release/liboxmpi_verbs.so "$dir/"
cat >"$dir/two.sh" <<'SH'
#!/bin/sh
# rank 0 here (node0), rank 1 on node1 through the agent; then both nodes' rxe counters
counters='for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do v=$(cat $f); [ "$v" != 0 ] && echo "[node$SOFTROCE_NODE counters] ${f##*/}=$v"; done'
(env "$@" ./verbs_selftest server 18515 >/tmp/server.log 2>&1; echo "server rc=$?" >>/tmp/server.log) &
/softroce/agent node1 "env $* ./verbs_selftest client node0 18515; r=\$?; $counters; exit \$r"
c=$?
wait
sed 's/^/[server] /' /tmp/server.log
eval "$counters"
echo "client rc=$c"
grep -q "server rc=0" /tmp/server.log && [ $c = 0 ]
SH
chmod +x "$dir/two.sh"
case $mode in
    1) tests/softroce/run-in-vm.sh "$dir" "env VERBS_SELFTEST_PORT_DOWN=eth0 $* ./verbs_selftest" ;;
    2) SOFTROCE_NODES=2 tests/softroce/run-in-vm.sh "$dir" "./two.sh $*" ;;
    *) echo "usage: selftest-vm.sh [1|2] [VAR=VALUE...]" >&2; exit 2 ;;
esac
