#!/bin/bash
# OxMPI under a real Slurm (2 fake nodes on this machine): direct launch with PMI-1 and
# PMI-2, mpirun inside salloc/sbatch, MPI_Abort, a killed rank, scancel, the singleton
# guard. Starts Slurm itself (start-slurm.sh) and stops it at the end. Root only.
#
#   tests/slurm/run-tests.sh [PREFIX]      (PREFIX: an OxMPI install, default ./install)
#
# One line per case: PASS/FAIL/SKIP NAME (seconds): detail; a failure shows the end of
# the job's output. Exit status 1 if any case failed. The MPICH cross-check runs first:
# if MPICH fails too, the fault is in the Slurm set-up, not in OxMPI.
# Knobs: SLURM_TESTS_ONLY=REGEX (cases to run, by name), SLURM_TESTS_TIMEOUT (30: per
# job), SLURM_TESTS_WORK (build and logs: tests/build/slurm), SLURM_TESTS_KEEP=1 (leave
# Slurm running), SLURM_TESTS_NO_INSTALL=1 (no apt-get); SLURM_CI_* as for start-slurm.sh.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PREFIX=${1:-$ROOT/install}
PREFIX=$(cd "$PREFIX" 2>/dev/null && pwd) || { echo "run-tests: no such PREFIX: ${1:-}" >&2; exit 2; }
for tool in bin/mpicc bin/mpirun; do
    [ -x "$PREFIX/$tool" ] || { echo "run-tests: $PREFIX/$tool not found; run 'make install' first" >&2; exit 2; }
done
if [ "$(id -u)" != 0 ]; then
    echo "SKIP slurm tests: need root (slurmd runs as root)"
    exit 0
fi
T=${SLURM_TESTS_TIMEOUT:-30}
W=${SLURM_TESTS_WORK:-$ROOT/tests/build/slurm}
ONLY=${SLURM_TESTS_ONLY:-}
B=$W/bin L=$W/logs
T0=$(date +%s.%N)

# A clean environment: no variables of an enclosing job or launcher.
for v in $(compgen -e); do
    case $v in
    SLURM_CI_* | SLURM_CONF) ;;
    SLURM_* | SLURMD_* | SALLOC_* | SBATCH_* | SRUN_* | PMI_* | PMIX_* | OXMPI_* | MPIEXEC_* | OMPI_* | HYDRA_*) unset "$v" ;;
    esac
done
export SLURM_CI_NODES=2
export SLURM_CI_CPUS=${SLURM_CI_CPUS:-4}  # 8 ranks fit on 2 fake nodes without --overcommit
export SLURM_CI_MPI_DEFAULT=none          # as many sites: a missing --mpi gives no PMI
export PATH=$PATH:/usr/sbin:/sbin

npass=0 nfail=0 nskip=0 failed=() bg=()
mpich_ok=1
cleanup() {
    local p
    for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
    if [ "${SLURM_TESTS_KEEP:-0}" = 1 ]; then
        echo "run-tests: Slurm left running (SLURM_TESTS_KEEP=1): eval \"\$($HERE/start-slurm.sh --env)\""
    else
        "$HERE/stop-slurm.sh" 2>&1 | sed 's/^/  /'
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }

# --- reporting ------------------------------------------------------------------------
# A case is a function; `tcase NAME FUNC ARGS...` runs it unless SLURM_TESTS_ONLY skips it.
# The function calls pass/fail/skip once; its job output is $L/NAME.{out,err}.
tcase() {
    case=$1
    shift
    if [ -n "$ONLY" ] && ! [[ $case =~ $ONLY ]]; then return; fi
    cs=$(now)
    reported=0
    "$@"
    [ $reported = 1 ] || fail "the case reported nothing (test bug)"
}
pass() { echo "PASS $case ($(since "$cs") s)${1:+: $1}"; npass=$((npass + 1)); reported=1; }
skip() { echo "SKIP $case: $1"; nskip=$((nskip + 1)); reported=1; }
fail() {
    echo "FAIL $case ($(since "$cs") s): $1"
    local f
    for f in "$L/$case.out" "$L/$case.err"; do
        [ -s "$f" ] || continue
        echo "    --- ${f#"$W"/} (last lines):"
        tail -n 12 "$f" | cut -c1-300 | sed 's/^/    | /'
    done
    if [ -n "${2:-}" ] && [ -s "$2" ]; then
        echo "    --- ${2#"$W"/} (${3:+first lines with }${3:-last lines}):"
        if [ -n "${3:-}" ]; then grep -m 6 -e "$3" "$2"; else tail -n 12 "$2"; fi | cut -c1-300 | sed 's/^/    | /'
    fi
    nfail=$((nfail + 1))
    failed+=("$case")
    reported=1
}

# run SECS CMD...: CMD under timeout, output in $L/$case.{out,err}; sets rc.
run() {
    local t=$1
    shift
    (cd "$B" && exec timeout -k 5 "$t" "$@") >"$L/$case.out" 2>"$L/$case.err" </dev/null
    rc=$?
}
rc_text() { if [ "$rc" = 124 ]; then echo "timed out after $T s (timeout killed it)"; else echo "exit status $rc"; fi; }

# ours PROG...: "PID NAME" of live processes running our builds of PROG (by /proc/PID/exe,
# so the same test programs run by someone else on this machine do not count).
ours() {
    local pid exe name stat
    find /proc -mindepth 2 -maxdepth 2 -name exe -lname "$B/*" -printf '%h %l\n' 2>/dev/null |
        while read -r pid exe; do
            pid=${pid#/proc/}
            name=${exe#"$B"/}
            name=${name%" (deleted)"}
            if [ $# -gt 0 ]; then case " $* " in *" $name "*) ;; *) continue ;; esac; fi
            stat=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
            stat=${stat##*) }
            [ "${stat%% *}" = Z ] && continue # PID 1 may not reap: a zombie is not running
            echo "$pid $name"
        done
}
# deadline SECS: an end time for `before`
deadline() { echo $(($(date +%s%N) / 1000000 + $1 * 1000)); }
before() { [ $(($(date +%s%N) / 1000000)) -lt "$1" ]; }
# gone SECS PROG...: wait until none of our PROG runs; else print them, return 1.
gone() {
    local end left
    end=$(deadline "$1")
    shift
    while :; do
        left=$(ours "$@")
        [ -z "$left" ] && return 0
        before "$end" || break
        sleep 0.2
    done
    echo "$left" | awk '{printf "%s%s(%s)", s, $2, $1; s=" "}'
    return 1
}
# count PROG: how many of our PROG run
count() { ours "$1" | wc -l; }

# wait_job ID SECS: until the job left R/PD/CG; prints "STATE EXITCODE" (exit code of
# the batch script, e.g. 0:0) while scontrol still knows the job (MinJobAge=10).
wait_job() {
    local id=$1 secs=$2 info state
    local end=$(($(date +%s) + secs))
    while :; do
        info=$(timeout 10 scontrol -o show job "$id" 2>/dev/null)
        state=$(printf '%s' "$info" | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
        case $state in PENDING | RUNNING | COMPLETING | CONFIGURING | "") ;; *)
            echo "$state $(printf '%s' "$info" | grep -o ' ExitCode=[0-9:]*' | cut -d= -f2)"
            return 0
            ;;
        esac
        [ -z "$state" ] && [ -z "$info" ] && { echo "GONE -"; return 0; }
        [ "$(date +%s)" -ge "$end" ] && { echo "TIMEOUT -"; return 1; }
        sleep 0.2
    done
}

# --- set-up ---------------------------------------------------------------------------
echo "== OxMPI Slurm tests: PREFIX=$PREFIX, work dir $W"
apt_need=()
command -v mpicc.mpich >/dev/null || apt_need+=(mpich libmpich-dev)
command -v strace >/dev/null || apt_need+=(strace)
command -v python3 >/dev/null || apt_need+=(python3)
# Slurm's mpi/pmix plugin dlopen()s libpmix from libpmix-dev (for the --mpi=pmix case)
[ -e /usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so ] || [ "$(dpkg --print-architecture 2>/dev/null)" != amd64 ] || apt_need+=(libpmix-dev)
if [ ${#apt_need[@]} -gt 0 ] && [ "${SLURM_TESTS_NO_INSTALL:-0}" != 1 ]; then
    echo "run-tests: installing ${apt_need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    timeout 600 apt-get install -y -qq --no-install-recommends "${apt_need[@]}" >/tmp/slurm-tests-apt.log 2>&1 ||
        { timeout 600 apt-get update -qq >>/tmp/slurm-tests-apt.log 2>&1
          timeout 600 apt-get install -y -qq --no-install-recommends "${apt_need[@]}" >>/tmp/slurm-tests-apt.log 2>&1; } ||
        echo "run-tests: apt-get install ${apt_need[*]} failed (see /tmp/slurm-tests-apt.log); the cases that need them fail or skip"
fi

mkdir -p "$B" "$L"
rm -f "$L"/*
touch "$W/.start-marker"

case=slurm-start cs=$(now)
# A fresh start every time: clean job state, and slurmd/slurmstepd load the mpi plugins
# anew (a slurmd started before libpmix-dev was installed hangs --mpi=pmix launches).
"$HERE/stop-slurm.sh" --keep-munge >"$L/$case.out" 2>&1
if "$HERE/start-slurm.sh" >>"$L/$case.out" 2>"$L/$case.err"; then
    eval "$("$HERE/start-slurm.sh" --env)"
    pass "$(tail -1 "$L/$case.err" | sed 's/^slurm-ci: //')"
else
    fail "start-slurm.sh failed: nothing else can run"
    exit 1
fi

case=build cs=$(now)
berr=""
for p in ring coll_all where pingpong_sizes crash hang keep_busy abort; do
    "$PREFIX/bin/mpicc" -O2 -o "$B/$p" "$ROOT/tests/c/$p.c" >>"$L/$case.err" 2>&1 || berr="$berr $p"
done
for p in hello; do
    "$PREFIX/bin/mpicc" -O2 -o "$B/${p/hello/hello_oxmpi}" "$HERE/$p.c" >>"$L/$case.err" 2>&1 || berr="$berr $p"
done
cp "$HERE/placed.sh" "$B/placed"
if command -v mpicc.mpich >/dev/null; then
    mpicc.mpich -O2 -o "$B/hello_mpich" "$HERE/hello.c" >>"$L/$case.err" 2>&1 || berr="$berr hello_mpich"
else
    rm -f "$B/hello_mpich"
fi
if [ -n "$berr" ]; then fail "could not build:$berr"; exit 1; fi
STRACE=0
if (cd "$B" && timeout 10 strace -f -qq --seccomp-bpf -e trace=write,sendto -o /dev/null true) 2>/dev/null; then STRACE=1; fi
pass "OxMPI C tests with $PREFIX/bin/mpicc$([ -e "$B/hello_mpich" ] && echo ", hello with mpicc.mpich")$([ $STRACE = 0 ] && echo "; no strace: PMI versions not verified")"

# --- the cases ------------------------------------------------------------------------

# MPICH over the same Slurm: tells a Slurm set-up fault from an OxMPI one.
t_mpich() {
    [ -x "$B/hello_mpich" ] || { mpich_ok=0; fail "MPICH (mpicc.mpich) not installed"; return; }
    run "$T" srun --mpi=pmi2 -N2 -n4 ./hello_mpich
    local lines
    lines=$(grep -cE '^hello: rank [0-3]/4 node n[12]$' "$L/$case.out")
    if [ $rc != 0 ]; then mpich_ok=0; fail "$(rc_text)"
    elif [ "$lines" != 4 ] || ! grep -q 'node n1$' "$L/$case.out" || ! grep -q 'node n2$' "$L/$case.out" ||
        ! grep -q '^hello: OK (4 ranks' "$L/$case.out"; then mpich_ok=0; fail "expected 4 ranks of 4 on n1 and n2 and 'hello: OK'"
    else pass "4 ranks on n1,n2 (srun --mpi=pmi2, MPICH's PMI-1)"; fi
}

# direct PMI N LAYOUT_NODES SRUN_ARGS...: ring under srun --mpi=pmi2 with OXMPI_PMI=PMI;
# checks the result, shm within / TCP across nodes against Slurm's placement, and (strace)
# the PMI version rank 0 spoke.
t_direct() {
    local pmi=$1 n=$2 nodes=$3
    shift 3
    local st=() pick=(OXMPI_PMI="$pmi")
    [ $STRACE = 1 ] && st=(PLACED_STRACE="$L/$case.strace")
    [ "$pmi" = default ] && pick=(-u OXMPI_PMI)
    run "$T" env "${pick[@]}" OXMPI_VERBOSE=1 "${st[@]}" srun --mpi=pmi2 "$@" ./placed ./ring
    if [ $rc != 0 ]; then fail "$(rc_text)"; return; fi
    grep -q "^ring: OK ($n ranks" "$L/$case.out" || { fail "no 'ring: OK ($n ranks' line"; return; }
    local msg
    if [ "$pmi" = default ]; then
        # no OXMPI_PMI: whatever the library picks for Slurm's pmi2 plugin (it serves both)
        pmi=$(grep -o 'bootstrap PMI-[0-9]' "$L/$case.err" | head -1 | cut -d- -f2)
        [ -n "$pmi" ] || { fail "no 'bootstrap PMI-N' in the OXMPI_VERBOSE lines: which PMI version did it pick?"; return; }
    fi
    if [ $STRACE = 1 ]; then
        msg=$(python3 "$HERE/layout.py" "$L/$case.err" "$n" "$nodes" "$pmi" "$L/$case.strace")
    else
        msg=$(python3 "$HERE/layout.py" "$L/$case.err" "$n" "$nodes" "$pmi")
    fi || { fail "$msg" "$L/$case.strace" "cmd="; return; }
    pass "${msg#ok: }"
}

# prog PMI N EXPECT PROG ARGS...: a C test under srun --mpi=pmi2 -N2 -nN; EXPECT: a line
# of its output.
t_prog() {
    local pmi=$1 n=$2 expect=$3
    shift 3
    run "$T" env OXMPI_PMI="$pmi" srun --mpi=pmi2 -N2 -n"$n" "$@"
    if [ $rc != 0 ]; then fail "$(rc_text)"; return; fi
    grep -qF "$expect" "$L/$case.out" || { fail "no '$expect' line"; return; }
    pass "$(grep -F "$expect" "$L/$case.out" | head -1)"
}

# Two direct-launch steps of one job at once on the same two nodes (PMI-1 and PMI-2): the
# shm segments of the steps must not collide (fake nodes share /dev/shm).
t_two_steps() {
    local s1=$L/$case.step1 s2=$L/$case.step2
    # shellcheck disable=SC2016
    run "$T" salloc -N2 --ntasks-per-node=4 bash -c '
        OXMPI_PMI=1 OXMPI_VERBOSE=1 srun --exact --mpi=pmi2 -N2 -n4 --ntasks-per-node=2 ./placed ./keep_busy 2 >"$1.out" 2>"$1.err" &
        a=$!
        OXMPI_PMI=2 OXMPI_VERBOSE=1 srun --exact --mpi=pmi2 -N2 -n4 --ntasks-per-node=2 ./placed ./keep_busy 2 >"$2.out" 2>"$2.err"
        b=$?
        wait $a
        echo "step exits $? $b"' steps "$s1" "$s2"
    if [ $rc != 0 ]; then fail "$(rc_text)"; return; fi
    grep -q '^step exits 0 0$' "$L/$case.out" || { fail "$(grep '^step exits' "$L/$case.out" || echo 'no step exit line')" "$s1.err"; return; }
    local i m msg=""
    for i in 1 2; do
        grep -q '^keep_busy: OK (4 ranks' "$L/$case.step$i.out" || { fail "step $i: no 'keep_busy: OK (4 ranks'" "$L/$case.step$i.err"; return; }
        m=$(python3 "$HERE/layout.py" "$L/$case.step$i.err" 4 2 "$i") || { fail "step $i: $m" "$L/$case.step$i.err"; return; }
        msg="$msg; step $i: ${m#ok: }"
    done
    if grep -qi 'step creation temporarily disabled' "$s1.err" "$s2.err"; then
        pass "(the steps ran one after the other)$msg"
    else
        pass "at once$msg"
    fi
}

t_where() {
    run "$T" env OXMPI_PMI=2 srun --mpi=pmi2 -N2 -n8 ./where
    if [ $rc != 0 ]; then fail "$(rc_text)"; return; fi
    local got
    got=$(grep -E '^where: rank [0-9]+ ' "$L/$case.out" | awk '{print $3}' | tr '\n' ' ')
    [ "$got" = "0 1 2 3 4 5 6 7 " ] || { fail "rank lines '$got', expected 0..7 in order"; return; }
    grep -q '^where: OK (8 ranks)' "$L/$case.out" || { fail "no 'where: OK (8 ranks)'"; return; }
    pass "8 ranks report in order"
}

# salloc_mpirun N LAYOUT SALLOC_ARGS...: `salloc ARGS mpirun ./placed ./ring`: N ranks
# (mpirun's default -n: the allocation's tasks), optionally with the layout check.
t_salloc_mpirun() {
    local n=$1 layout=$2
    shift 2
    run "$T" env OXMPI_VERBOSE=$layout salloc "$@" "$PREFIX/bin/mpirun" ./placed ./ring
    if [ $rc != 0 ]; then fail "$(rc_text)"; return; fi
    grep -q "^ring: OK ($n ranks" "$L/$case.out" ||
        { fail "expected 'ring: OK ($n ranks' (the allocation's task count): got '$(grep '^ring:' "$L/$case.out")'"; return; }
    if [ "$layout" = 1 ]; then
        local msg
        msg=$(python3 "$HERE/layout.py" "$L/$case.err" "$n" 2) || { fail "$msg"; return; }
        pass "$n ranks; ${msg#ok: }"
    else
        pass "$n ranks"
    fi
}

t_salloc_abort() {
    run "$T" salloc -N2 --ntasks-per-node=2 "$PREFIX/bin/mpirun" ./abort 3
    local left
    left=$(gone 10 abort) || { fail "exit $rc, but still running after 10 s: $left"; return; }
    if [ $rc = 3 ]; then pass "mpirun exit status 3 (the MPI_Abort code)"
    else fail "$(rc_text), expected 3 (mpirun returns the MPI_Abort code)"; fi
}

# sbatch with two mpirun steps
t_sbatch() {
    local script=$B/two_steps.sh out=$L/$case.job.out
    cat >"$script" <<EOF
#!/bin/bash
cd "$B"
"$PREFIX/bin/mpirun" ./ring
echo "step 1 exit \$?"
"$PREFIX/bin/mpirun" ./where
echo "step 2 exit \$?"
EOF
    chmod +x "$script"
    rm -f "$out"
    run 10 sbatch --parsable -N2 --ntasks-per-node=2 -J "slurmci-two-$$" -o "$out" "$script"
    local id res
    id=$(head -1 "$L/$case.out" | cut -d';' -f1)
    [ $rc = 0 ] && [ -n "$id" ] || { fail "sbatch: $(rc_text)"; return; }
    res=$(wait_job "$id" "$T") || { timeout 10 scancel "$id"; fail "job $id still running after $T s" "$out"; return; }
    sleep 0.2 # the output file is complete once the job ended; allow the last write
    local bad=""
    grep -q '^ring: OK (4 ranks' "$out" || bad="$bad; no 'ring: OK (4 ranks'"
    grep -q '^step 1 exit 0$' "$out" || bad="$bad; step 1: $(grep '^step 1' "$out" || echo 'no exit line')"
    grep -q '^where: OK (4 ranks)' "$out" || bad="$bad; no 'where: OK (4 ranks)'"
    grep -q '^step 2 exit 0$' "$out" || bad="$bad; step 2: $(grep '^step 2' "$out" || echo 'no exit line')"
    case $res in COMPLETED*) ;; *) bad="$bad; job $id ended $res" ;; esac
    if [ -n "$bad" ]; then fail "${bad#; }" "$out"; else pass "job $id: both steps ran 4 ranks on 2 nodes"; fi
}

# MPI_Abort(MPI_COMM_WORLD, 3) under srun: the step ends, non-zero, nothing left.
t_abort() {
    run "$T" env OXMPI_PMI="$1" srun --mpi=pmi2 -N2 -n4 ./abort 3
    local left
    left=$(gone 10 abort) || { fail "$(rc_text); still running after 10 s: $left"; return; }
    if [ $rc = 0 ]; then fail "exit status 0 after MPI_Abort"
    elif [ $rc = 124 ]; then fail "$(rc_text): MPI_Abort did not end the step"
    else pass "srun exit status $rc"; fi
}

# SIGKILL of rank 1 under srun --kill-on-bad-exit
t_kill() {
    run "$T" env OXMPI_PMI="$1" srun --mpi=pmi2 --kill-on-bad-exit -N2 -n4 ./crash kill
    local left
    left=$(gone 10 crash) || { fail "$(rc_text); still running after 10 s: $left"; return; }
    if [ $rc = 0 ]; then fail "exit status 0 after a rank was killed"
    elif [ $rc = 124 ]; then fail "$(rc_text): the killed rank did not end the step"
    else pass "srun exit status $rc, no rank left"; fi
}

# start_bg CMD...: CMD in the background (output in $L/$case.*), pid in $bgpid
start_bg() {
    (cd "$B" && exec timeout -k 5 60 "$@") >"$L/$case.out" 2>"$L/$case.err" </dev/null &
    bgpid=$!
    bg+=("$bgpid")
}
# wait_count PROG N SECS: until N of our PROG run
wait_count() {
    local end
    end=$(deadline "$3")
    while before "$end"; do
        [ "$(count "$1")" -ge "$2" ] && return 0
        sleep 0.2
    done
    return 1
}
# job_of NAME: the id of the job called NAME
job_of() { timeout 10 squeue -h -n "$1" -o %A 2>/dev/null | head -1; }
# wait_pid PID SECS
wait_pid() {
    local end
    end=$(deadline "$2")
    while before "$end"; do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.2
    done
    return 1
}

# scancel of a running direct-launch job (4 ranks of `hang`): nothing left running.
t_scancel_srun() {
    local name=slurmci-hang-$$ id left
    start_bg env OXMPI_PMI=2 srun --mpi=pmi2 -N2 -n4 -J "$name" ./hang
    if ! wait_count hang 4 20; then
        id=$(job_of "$name")
        [ -n "$id" ] && timeout 10 scancel "$id"
        left=$(gone 10 hang)
        fail "only $(count hang) of 4 ranks of hang started within 20 s${left:+; left running: $left}"
        return
    fi
    sleep 0.5 # the ranks are inside MPI (hang prints before its receive)
    id=$(job_of "$name")
    [ -n "$id" ] || { fail "job $name not in squeue"; return; }
    timeout 10 scancel "$id"
    wait_pid "$bgpid" 20 || { fail "srun still running 20 s after scancel $id"; return; }
    wait "$bgpid"
    rc=$?
    left=$(gone 10 hang) || { fail "scancel $id: still running after 10 s: $left"; return; }
    pass "scancel $id: srun exit status $rc, no rank left"
}

# scancel of a batch job running `mpirun ./keep_busy` on 2 nodes: nothing left running.
t_scancel_sbatch() {
    local script=$B/busy.sh name=slurmci-busy-$$ id left
    cat >"$script" <<EOF
#!/bin/bash
cd "$B"
exec "$PREFIX/bin/mpirun" ./keep_busy 600
EOF
    chmod +x "$script"
    run 10 sbatch --parsable -N2 --ntasks-per-node=2 -J "$name" -o "$L/$case.job.out" "$script"
    id=$(head -1 "$L/$case.out" | cut -d';' -f1)
    [ $rc = 0 ] && [ -n "$id" ] || { fail "sbatch: $(rc_text)"; return; }
    local started=1
    wait_count keep_busy 4 20 || started=0
    local n
    n=$(count keep_busy)
    timeout 10 scancel "$id"
    local res
    res=$(wait_job "$id" 20) || { fail "job $id still there 20 s after scancel" "$L/$case.job.out"; return; }
    left=$(gone 10 keep_busy) || { fail "scancel $id: still running after 10 s: $left" "$L/$case.job.out"; return; }
    if [ $started = 0 ]; then fail "only $n of 4 ranks of keep_busy started within 20 s (then scancel left nothing)" "$L/$case.job.out"; return; fi
    pass "scancel $id ($res): no rank left"
}

# The singleton guard: srun without a PMI server. Every rank must fail with one line
# naming the fix, and none may run as a singleton.
t_guard() {
    run "$T" srun "$@" -N2 -n2 ./hello_oxmpi
    if grep -q '^hello:' "$L/$case.out"; then fail "the program ran (singletons?): $(grep -m1 '^hello:' "$L/$case.out")"; return; fi
    if grep -q 'Invalid MPI type\|can not load PMIx library' "$L/$case.err"; then
        skip "srun $*: this Slurm cannot run the plugin ($(grep -m1 'error:' "$L/$case.err" | sed 's/^srun: error: *//'))"
        return
    fi
    local lines fix
    lines=$(grep -vE '^(srun|slurmstepd[^:]*): ' "$L/$case.err")
    fix=$(printf '%s\n' "$lines" | grep -c 'srun --mpi=pmi2')
    if [ $rc = 0 ]; then fail "exit status 0"
    elif [ $rc = 124 ]; then fail "$(rc_text)"
    elif [ "$fix" != 2 ] || [ "$(printf '%s\n' "$lines" | grep -c .)" != 2 ]; then
        fail "expected exactly one line per rank (2) naming 'srun --mpi=pmi2', got $fix of $(printf '%s\n' "$lines" | grep -c .) line(s)"
    else pass "exit $rc: $(printf '%s\n' "$lines" | head -1 | cut -c1-200)"; fi
}

t_leftovers() {
    local left shm
    left=$(gone 5) || { fail "test programs still running: $left"; return; }
    # shm segments of direct-launch jobs (oxmpi-<job>_<step>-n<node>) made during this run
    shm=$(find /dev/shm -maxdepth 1 -name 'oxmpi-*_*-n*' -newer "$W/.start-marker" 2>/dev/null | tr '\n' ' ')
    [ -z "$shm" ] || { fail "shared memory left in /dev/shm: $shm"; return; }
    pass "no test program running, no /dev/shm/oxmpi-* segment left"
}

tcase mpich-hello t_mpich
for pmi in 1 2; do
    for n in 2 4 8; do
        tcase direct-pmi$pmi-n$n-ring t_direct $pmi $n 2 -N2 -n$n
    done
    tcase direct-pmi$pmi-n4-cyclic-ring t_direct $pmi 4 2 -N2 -n4 -m cyclic
    tcase direct-pmi$pmi-N1-n2-ring t_direct $pmi 2 1 -N1 -n2
    for n in 4 8; do
        tcase direct-pmi$pmi-n$n-coll_all t_prog $pmi $n "coll_all: OK ($n ranks)" ./coll_all 20000
    done
    tcase direct-pmi$pmi-n4-pingpong_sizes t_prog $pmi 4 "pingpong_sizes: OK (4 ranks" ./pingpong_sizes 1 1
done
tcase direct-default-pmi-n4-ring t_direct default 4 2 -N2 -n4
tcase direct-pmi2-n8-where t_where
tcase direct-two-steps-at-once t_two_steps
tcase salloc-mpirun-ring t_salloc_mpirun 4 1 -N2 --ntasks-per-node=2
tcase salloc-N2-mpirun-default-n t_salloc_mpirun 2 0 -N2
tcase salloc-mpirun-abort t_salloc_abort
tcase sbatch-two-mpirun-steps t_sbatch
for pmi in 1 2; do
    tcase srun-abort-pmi$pmi t_abort $pmi
    tcase srun-kill-on-bad-exit-pmi$pmi t_kill $pmi
done
tcase scancel-srun t_scancel_srun
tcase scancel-sbatch-mpirun t_scancel_sbatch
tcase guard-mpi-none t_guard --mpi=none
tcase guard-mpi-missing t_guard
tcase guard-mpi-pmix t_guard --mpi=pmix
tcase leftovers t_leftovers

echo "== slurm tests: $npass passed, $nfail failed, $nskip skipped ($(since "$T0") s; logs in $L)"
if [ $nfail -gt 0 ]; then
    echo "   failed: ${failed[*]}"
    [ $mpich_ok = 0 ] && echo "   the MPICH cross-check failed too: suspect the Slurm set-up (logs: ${SLURM_CI_DIR:-/tmp/slurm-ci}/log)"
    exit 1
fi
exit 0
