#!/usr/bin/env bash
# tests/softroce/selftest.sh: check the Soft-RoCE harness end to end (root, on a fresh
# Debian 12 machine: installs what it needs with deps.sh). One PASS/FAIL line per case;
# exits non-zero if any case failed. About 1-2 minutes warm on 2 cores.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN=$HERE/run-in-vm.sh

"$HERE/deps.sh" || { echo "FAIL: deps.sh"; exit 1; }
"$HERE/build-base.sh" >/dev/null || { echo "FAIL: build-base.sh"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/softroce-selftest.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Our runs keep their temp dirs (and so their qemu command lines) under $work, which tells
# our qemu processes from those of anybody else's runs on this machine; the cache stays.
export SOFTROCE_CACHE=${SOFTROCE_CACHE:-${TMPDIR:-/tmp}/softroce-cache}
export TMPDIR=$work
export SOFTROCE_TIMEOUT=${SOFTROCE_TIMEOUT:-300}
pass=0 fail=0
# check NAME EXPECTED_RC COMMAND...: run COMMAND (its output goes to $work/NAME.log and,
# on failure, to stdout), compare the status, and grep the log for the patterns given in
# the array `want` (cleared after each case).
want=()
check() {
    local name=$1 expect=$2 rc t0 ok=1 p
    shift 2
    t0=$SECONDS
    "$@" >"$work/$name.log" 2>&1
    rc=$?
    [[ $rc == "$expect" ]] || ok=0
    for p in "${want[@]}"; do grep -qE -- "$p" "$work/$name.log" || { ok=0; echo "  missing: $p"; }; done
    want=()
    if ((ok)); then
        echo "PASS: $name (rc=$rc, $((SECONDS - t0))s)"
        pass=$((pass + 1))
    else
        echo "FAIL: $name (rc=$rc, expected $expect, $((SECONDS - t0))s); output:"
        sed 's/^/  | /' "$work/$name.log" | tail -n 60
        fail=$((fail + 1))
    fi
}

# 1. the device is there and the tools work
want=('PORT_ACTIVE' 'link rxe0/1 state ACTIVE')
check devinfo 0 "$RUN" - 'ibv_devinfo -d rxe0 && rdma link'

# 2. a perftest pair over rxe0 in one VM (server in the background, client to eth0's IP)
mkdir -p "$work/perf1"
cat >"$work/perf1/run.sh" <<'EOF'
set -u
opts="-d $RXE_DEV -x $RXE_GID_IDX -n 200 -F"
ib_send_lat $opts >/tmp/server.log 2>&1 &
srv=$!
n=0
until netstat -ltn | grep -q ':18515 '; do
    n=$((n + 1)); [ $n -lt 100 ] || { echo "server does not listen"; cat /tmp/server.log; exit 1; }
    sleep 0.1
done
ib_send_lat $opts "$RXE_IP" || { echo "client failed"; cat /tmp/server.log; exit 1; }
wait $srv || { echo "server failed"; cat /tmp/server.log; exit 1; }
echo "perftest pair OK"
EOF
want=('t_avg' 'perftest pair OK')
check perftest-1vm 0 "$RUN" "$work/perf1" 'sh run.sh'

# 3. the job's status is ours
check exit-status 3 "$RUN" - 'exit 3'

# 4. a hung job ends in 124 (and no qemu stays behind, checked below)
want=('timeout')
check timeout 124 env SOFTROCE_TIMEOUT=20 "$RUN" - 'sleep 1000'

# 5. two VMs: server on node1 started through the agent, client on node0, across the wire
mkdir -p "$work/perf2"
cat >"$work/perf2/run.sh" <<'EOF'
set -u
# node1's own GID index: the remote shell expands it from node1's /etc/softroce.env
agent node1 'ib_send_lat -d $RXE_DEV -x $RXE_GID_IDX -n 200 -F' >/tmp/server.log 2>&1 &
srv=$!
# perftest clients do not retry a refused connection: retry until the server listens
n=0
until ib_send_lat -d "$RXE_DEV" -x "$RXE_GID_IDX" -n 200 -F node1 >/tmp/client.log 2>&1; do
    n=$((n + 1))
    [ $n -lt 60 ] || { echo "client never connected"; cat /tmp/client.log /tmp/server.log; exit 1; }
    sleep 0.5
done
cat /tmp/client.log
wait $srv || { echo "server on node1 failed"; cat /tmp/server.log; exit 1; }
echo "server on $(agent node1 hostname) OK"
EOF
want=('t_avg' 'server on node1 OK')
check two-nodes 0 env SOFTROCE_NODES=2 "$RUN" "$work/perf2" 'sh run.sh'

# 6. a verbs program built here, with a library of its own (lib/, no rpath) and one the
# base lacks (libstdc++): the harness ships what ldd finds and sets LD_LIBRARY_PATH.
mkdir -p "$work/cprog/bin" "$work/cprog/lib" "$work/csrc"
cat >"$work/csrc/helper.c" <<'EOF'
const char *helper_name(void) { return "helper"; }
EOF
cat >"$work/csrc/listdevs.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>
const char *helper_name(void);
int main(void) {
    int n = 0, found = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (!list) { perror("ibv_get_device_list"); return 1; }
    for (int i = 0; i < n; i++) {
        const char *name = ibv_get_device_name(list[i]);
        struct ibv_context *ctx = ibv_open_device(list[i]);
        struct ibv_port_attr pa;
        if (!ctx || ibv_query_port(ctx, 1, &pa)) { printf("%s: cannot open/query\n", name); continue; }
        printf("device %s port 1 state %s mtu %d\n", name, ibv_port_state_str(pa.state), 128 << pa.active_mtu);
        if (!strcmp(name, "rxe0") && pa.state == IBV_PORT_ACTIVE) found = 1;
        ibv_close_device(ctx);
    }
    ibv_free_device_list(list);
    printf("%d device(s), via %s\n", n, helper_name());
    return found ? 0 : 1;
}
EOF
if gcc -shared -fPIC -o "$work/cprog/lib/libsrhelper.so" "$work/csrc/helper.c" &&
    gcc -o "$work/cprog/bin/listdevs" "$work/csrc/listdevs.c" -L"$work/cprog/lib" -lsrhelper \
        -libverbs -Wl,--no-as-needed -l:libstdc++.so.6; then
    want=('device rxe0 port 1 state active' '1 device\(s\), via helper' 'libstdc\+\+ shipped')
    check c-program 0 "$RUN" "$work/cprog" \
        'listdevs && test -e /usr/lib/x86_64-linux-gnu/libstdc++.so.6 && echo "libstdc++ shipped"'
else
    echo "FAIL: c-program (gcc failed)"
    fail=$((fail + 1))
fi

# 7. SIGTERM to the harness: it exits 143 and takes its VM with it
sigterm() {
    "$RUN" - 'sleep 1000' &
    local p=$! n=0
    # wait until the job runs (its status line says so), then stop the harness
    until grep -qs '^job' "$work"/softroce.*/status.0 || ((n++ > 300)); do sleep 0.1; done
    kill -TERM $p
    wait $p
}
check sigterm 143 sigterm

# No qemu of ours may outlive the harness.
if pgrep -f "qemu-system.*$work/" >/dev/null; then
    echo "FAIL: qemu processes left behind:"
    pgrep -af "qemu-system.*$work/"
    fail=$((fail + 1))
else
    echo "PASS: no qemu left behind"
    pass=$((pass + 1))
fi

echo "softroce: $pass passed, $fail failed"
((fail == 0))
