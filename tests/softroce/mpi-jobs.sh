#!/bin/sh
# Guest side of mpi-suite.sh (busybox sh, cwd /job): `mpi-jobs.sh one` runs the jobs of
# one VM, `mpi-jobs.sh two` those across two VMs (node0 runs this; node1 is reached with
# /softroce/agent). One PASS/FAIL line per job; exit 1 if any failed.
MPIRUN=/job/oxmpi/bin/mpirun
pass=0
fail=0
T=${JOB_TIMEOUT:-150}

# verdict OK LABEL OUTPUT: counts and prints one PASS/FAIL line (OUTPUT's tail on FAIL).
verdict() {
    if [ "$1" = 1 ]; then
        echo "PASS $2"
        pass=$((pass + 1))
    else
        echo "FAIL $2"
        printf '%s\n' "$3" | tail -n 25
        fail=$((fail + 1))
    fi
}

# since START: seconds of guest uptime since START (from /proc/uptime).
since() { awk -v a="$1" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.1f", b - a }'; }

# job NAME [mpirun args...] -- NAME's output must contain "NAME: OK" and mpirun exit 0.
job() {
    name=$1
    shift
    start=$(cut -d' ' -f1 /proc/uptime)
    out=$("$MPIRUN" --timeout "$T" "$@" 2>&1)
    rc=$?
    ok=0
    [ $rc = 0 ] && printf '%s\n' "$out" | grep -q "$name: OK" && ok=1
    verdict $ok "(exit $rc, $(since "$start")s): mpirun $*" "$out"
}

# expect_in TEXT PATTERN WHAT: a check of a job's output.
expect_in() {
    ok=0
    printf '%s\n' "$1" | grep -q -- "$2" && ok=1
    verdict $ok "$3 (looked for \"$2\")" "$1"
}

one() {
    V="-genv OXMPI_TRANSPORT verbs"
    # The transport report names the device (and the job runs on verbs at all).
    out=$("$MPIRUN" --timeout "$T" -n 2 $V -genv OXMPI_VERBOSE 1 ./bin/ring 2>&1)
    expect_in "$out" "OxMPI rank 0/2.*verbs to 1 (OXMPI_TRANSPORT=verbs; rxe0" "verbose report: rank 0 reaches rank 1 over verbs on rxe0"
    for np in 2 4; do
        for p in ring send_modes wildcard_order blocking_recv probe_persistent_cancel sendrecv datatypes_p2p coll_all comm_split reg_reuse; do
            job $p -n $np $V ./bin/$p
        done
        job credit_flood -n $np $V ./bin/credit_flood 10000
        job threads_hammer -n $np $V ./bin/threads_hammer 2
        # Every wait asleep on the completion channel, unbounded: a lost wake-up hangs.
        S="-genv OXMPI_SPIN_COUNT 0 -genv OXMPI_YIELD_COUNT 0 -genv OXMPI_SLEEP_MAX_US 600000000"
        job sleep_wake -n $np $V $S ./bin/sleep_wake
        job grequest -n $np $V $S ./bin/grequest
        # One-sided operations as active messages over verbs (forced: no direct access).
        for p in rma_fence rma_lock_counter rma_accumulate rma_request_ops; do
            job $p -n $np $V ./bin/$p
        done
    done
    # Every size class up to 64 MiB (0 B, inline, eager, rendezvous).
    job pingpong_sizes -n 2 $V ./bin/pingpong_sizes 1 64
    job pingpong_sizes -n 4 $V ./bin/pingpong_sizes 1 4
    # One job, two "nodes" of this VM: shm inside each, verbs between them.
    M="-genv OXMPI_PROCESS_MAPPING (vector,(0,2,2))"
    out=$("$MPIRUN" --timeout "$T" -n 4 $M -genv OXMPI_VERBOSE 1 ./bin/ring 2>&1)
    expect_in "$out" "OxMPI rank 0/4.*shm to 1 (same node); verbs to 2-3 (other nodes; rxe0" "mixed job: rank 0 uses shm to 1 and verbs to 2-3"
    for p in ring coll_all reg_reuse wildcard_order; do
        job $p -n 4 $M ./bin/$p
    done
}

two() {
    H="-launcher-exec /softroce/agent -hosts node0:2,node1:2"
    out=$("$MPIRUN" --timeout "$T" $H -n 4 -genv OXMPI_VERBOSE 1 ./bin/ring 2>&1)
    expect_in "$out" "OxMPI rank 0/4 on node 0 (node0).*shm to 1 (same node); verbs to 2-3 (other nodes; rxe0" "two VMs: rank 0 uses shm to 1 and verbs to 2-3"
    # Across the emulated wire Soft-RoCE loses packets under load and each loss costs an RC
    # retransmission timeout: sizes stay moderate here (the one-VM jobs cover >= 1 MiB).
    for p in ring send_modes wildcard_order datatypes_p2p reg_reuse; do
        job $p $H -n 4 ./bin/$p
    done
    job coll_all $H -n 4 ./bin/coll_all 4100
    # One-sided: shared memory inside a VM, active messages over verbs between them.
    for p in rma_fence rma_lock_counter; do
        job $p $H -n 4 ./bin/$p
    done
    job credit_flood $H -n 4 --map-by node ./bin/credit_flood 3000
    job pingpong_sizes $H -n 4 --map-by node ./bin/pingpong_sizes 1 1
    # Rank 1 (on node1 with --map-by node) is killed while the others wait in a receive:
    # the whole job ends, naming it, with 128+9.
    start=$(cut -d' ' -f1 /proc/uptime)
    out=$("$MPIRUN" --timeout 60 $H -n 4 --map-by node ./bin/crash kill recv 2>&1)
    rc=$?
    ok=0
    [ $rc = 137 ] && printf '%s\n' "$out" | grep -q "rank 1 (pid [0-9]* on node1) was killed by signal 9" && ok=1
    verdict $ok "(exit $rc, $(since "$start")s): rank 1 killed on node1 ends the job with 137, naming it" "$out"
    # Nothing left on either node.
    left=$(ps -o comm 2>/dev/null | grep -c -E '^(crash|ring|mpirun)$'; /softroce/agent node1 "ps -o comm | grep -c -E '^(crash|ring|mpirun)$'")
    expect_in "$(echo $left)" "^0 0$" "no process left on node0 or node1 after the crash"
}

case ${1:-} in
    one) one ;;
    two) two ;;
    *) echo "usage: mpi-jobs.sh one|two" >&2; exit 2 ;;
esac
echo "mpi-jobs $1: $pass passed, $fail failed"
[ $fail = 0 ]
