#!/usr/bin/env bash
# tests/softroce/run-in-vm.sh DIR CMD...: run CMD in a qemu VM (TCG) whose Debian kernel
# has Soft-RoCE (rdma_rxe) up as rxe0, with DIR copied to /job (DIR "-": nothing). One
# CMD argument is a sh command line; several are an argv (quoted for sh). CMD's stdout and
# stderr stream to ours; our exit status is CMD's, 124 on timeout, 125 if the VM or its
# setup failed. SOFTROCE_NODES=2 boots two VMs on one emulated Ethernet segment and runs
# CMD on node 0; `/softroce/agent node1 COMMAND...` runs commands on node 1 (ssh-like).
# See README.md beside this file for the knobs and the guest's environment.
set -euo pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log() { echo "[softroce] $*" >&2; }
usage() {
    echo "usage: run-in-vm.sh DIR|- CMD [ARGS...]" >&2
    exit 125
}
(($# >= 2)) || usage
DIR=$1
shift

NODES=${SOFTROCE_NODES:-1}
TIMEOUT=${SOFTROCE_TIMEOUT:-600}
MEM=${SOFTROCE_MEM:-1024}
SMP=${SOFTROCE_SMP:-2}
NETDEV=${SOFTROCE_NETDEV:-eth0}
VERBOSE=${SOFTROCE_VERBOSE:-0}
for v in NODES TIMEOUT MEM SMP; do
    [[ ${!v} =~ ^[0-9]+$ ]] && ((${!v} > 0)) || { log "SOFTROCE_$v must be a positive integer"; exit 125; }
done
((NODES <= 8)) || { log "SOFTROCE_NODES: at most 8"; exit 125; }
case $NETDEV in
    eth0) ;;
    lo) ((NODES == 1)) || { log "SOFTROCE_NETDEV=lo needs SOFTROCE_NODES=1"; exit 125; } ;;
    *) log "SOFTROCE_NETDEV must be eth0 or lo"; exit 125 ;;
esac
[[ $DIR == - || -d $DIR ]] || { log "DIR $DIR: not a directory"; exit 125; }

if ! command -v qemu-system-x86_64 >/dev/null || ! command -v busybox >/dev/null; then
    log "tools missing: running deps.sh"
    "$HERE/deps.sh" || exit 125
fi
CACHE=$("$HERE/build-base.sh") || { log "build-base.sh failed"; exit 125; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/softroce.XXXXXX")
qpids=()
tpids=()
cleanup() {
    local p n
    for p in "${qpids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${qpids[@]}"; do
        for n in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    for p in "${tpids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    if [[ ${SOFTROCE_KEEP:-0} == 1 ]]; then log "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# sq STRING: STRING quoted for sh.
sq() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

# --- per-run overlay: /job, the command, the environment, missing libraries ------------
ov=$tmp/ov
mkdir -p "$ov/job" "$ov/.softroce"
chmod 755 "$ov"
if [[ $DIR != - ]]; then
    # -L: a DIR of symlinks to build outputs works too
    cp -RL --preserve=mode,timestamps "$DIR/." "$ov/job/" || { log "cannot copy $DIR"; exit 125; }
fi
if (($# == 1)); then
    printf '%s\n' "$1" >"$ov/.softroce/cmd"
else
    for a in "$@"; do printf '%s ' "$(sq "$a")"; done >"$ov/.softroce/cmd"
    echo >>"$ov/.softroce/cmd"
fi

# Directories of DIR holding shared libraries: ldd searches them on the host and the
# guest's LD_LIBRARY_PATH gets them, so a DIR with bin/ and lib/ works without rpath.
mapfile -t jlibdirs < <(find "$ov/job" -type f \( -name '*.so' -o -name '*.so.[0-9]*' \) -printf '%h\n' | sort -u)
hostlp=$(IFS=:; echo "${jlibdirs[*]}")
{
    if ((${#jlibdirs[@]})); then
        guestlp=$(printf '%s\n' "${jlibdirs[@]}" | sed "s|^$ov||" | paste -sd:)
        echo "export LD_LIBRARY_PATH=$(sq "$guestlp")"
    fi
    for name in ${SOFTROCE_ENV:-}; do
        [[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || { log "SOFTROCE_ENV: bad name $name"; exit 125; }
        [[ -v $name ]] && echo "export $name=$(sq "${!name}")"
    done
} >"$ov/.softroce/env"

# A shared lock while we read the cache: build-base.sh rewrites it under an exclusive one
# (a concurrent run may find the scripts changed and rebuild the base).
exec 8<"$CACHE/.lock"
flock -s 8
kernel=$(cat "$CACHE/kernel.path")
declare -A inbase=()
while IFS= read -r f; do inbase[$f]=1; done <"$CACHE/base.files"
nlibs=0
while IFS= read -r -d '' f; do
    while IFS= read -r line; do
        case $line in *"=> not found"*)
            log "warning: ${f#"$ov/job/"}: ${line%% =>*} not found on the host"; continue ;;
        esac
        for lib in $(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }' <<<"$line"); do
            [[ $lib == "$ov"/* ]] && continue   # part of the job itself
            d=$(realpath "$(dirname "$lib")")/$(basename "$lib")
            [[ -n ${inbase[$d]:-} ]] && continue
            inbase[$d]=1
            mkdir -p "$ov$(dirname "$d")"
            cp -L "$lib" "$ov$d"
            nlibs=$((nlibs + 1))
        done
    done < <(LD_LIBRARY_PATH=$hostlp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd "$f" 2>/dev/null || true)
done < <(find "$ov/job" -type f -size +63c -print0 | xargs -0 -r grep -lsaZP '^\x7fELF' || true)

(cd "$ov" && find . | cpio -o -H newc --quiet -R 0:0) >"$tmp/overlay.cpio"
# The kernel unpacks concatenated cpio archives in order, later files winning.
cat "$CACHE/base.cpio" "$tmp/overlay.cpio" >"$tmp/initrd"
exec 8<&-
rm -rf "$ov"

# --- qemu ------------------------------------------------------------------------------
tsc=
# Under TCG the guest TSC runs at the host TSC rate, but the guest's PIT calibration is
# jittery on a loaded host and a bad first value sticks (guest clock 2-3x fast, so guest
# timeouts fire early). Tell it the rate. "cpu MHz" is the TSC rate only without cpufreq.
if [[ -n ${SOFTROCE_TSC_KHZ:-} ]]; then
    tsc="tsc_early_khz=$SOFTROCE_TSC_KHZ"
elif [[ ! -e /sys/devices/system/cpu/cpu0/cpufreq ]]; then
    khz=$(awk '/^cpu MHz/ { printf "%d", $4 * 1000; exit }' /proc/cpuinfo)
    [[ -n $khz && $khz != 0 ]] && tsc="tsc_early_khz=$khz"
fi
# A random multicast group and port per run, so concurrent multi-node runs do not meet.
mcast=239.255.$((RANDOM % 256)).$((RANDOM % 254 + 1)):$((20000 + RANDOM % 40000))
wrap=()
# If we are SIGKILLed, no trap runs: make the kernel kill qemu with us.
command -v setpriv >/dev/null && wrap=(setpriv --pdeathsig KILL)

t_start=$EPOCHREALTIME
for ((i = 0; i < NODES; i++)); do
    args=(-nodefaults -no-user-config -display none -no-reboot
        -machine pc -accel tcg,thread=multi -cpu max -m "$MEM" -smp "$SMP"
        -kernel "$kernel" -initrd "$tmp/initrd"
        -append "console=ttyS0 panic=-1 quiet loglevel=3 tsc=reliable $tsc softroce_node=$i softroce_nodes=$NODES softroce_netdev=$NETDEV")
    # ttyS0 console, ttyS1 job stdout, ttyS2 job stderr, ttyS3 status
    for s in console stdout stderr status; do
        : >"$tmp/$s.$i"
        args+=(-chardev "file,id=$s,path=$tmp/$s.$i,append=on" -serial "chardev:$s")
    done
    mac=52:54:00:00:03:$(printf %02x $((i + 1)))
    if ((NODES > 1)); then
        args+=(-netdev "socket,id=net0,mcast=$mcast,localaddr=127.0.0.1")
    elif [[ $NETDEV == eth0 ]]; then
        args+=(-netdev user,id=net0,restrict=on)
    fi
    # romfile=: no iPXE option ROM (not needed for a direct kernel boot)
    [[ $NETDEV == eth0 ]] && args+=(-device "virtio-net-pci,netdev=net0,mac=$mac,romfile=")
    "${wrap[@]}" qemu-system-x86_64 "${args[@]}" </dev/null >"$tmp/qemu.$i" 2>&1 &
    qpids+=($!)
done

tail -n +1 -s 0.2 -f --pid="${qpids[0]}" "$tmp/stdout.0" &
tpids+=($!)
tail -n +1 -s 0.2 -f --pid="${qpids[0]}" "$tmp/stderr.0" >&2 &
tpids+=($!)
if [[ $VERBOSE == 1 ]]; then
    for ((i = 0; i < NODES; i++)); do
        tail -n +1 -s 0.2 -f --pid="${qpids[i]}" "$tmp/console.$i" | sed -u "s/^/[n$i] /" >&2 &
        tpids+=($!)
    done
fi

# elapsed: host seconds since boot, as a decimal
elapsed() { awk -v a="$t_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
# stage NODE NAME: guest uptime of that status line, or empty
stage() { awk -v s="$2" '$1 == s { print $NF; exit }' "$tmp/status.$1"; }

fail_vm() {
    local i=$1
    log "VM/setup failure on node $i: $2"
    if [[ -s $tmp/qemu.$i ]]; then
        log "qemu says:"
        tail -n 20 "$tmp/qemu.$i" >&2
    fi
    log "last lines of node $i's console:"
    tail -n 40 "$tmp/console.$i" | tr -d '\r' >&2
    exit 125
}

deadline=$((SECONDS + TIMEOUT))
rc=
while :; do
    ex=$(awk '$1 == "exit" { print $2; exit }' "$tmp/status.0")
    if [[ -n $ex ]]; then rc=$ex; break; fi
    for ((i = 0; i < NODES; i++)); do
        f=$(awk '$1 == "fail" { print $2; exit }' "$tmp/status.$i")
        [[ -z $f ]] || fail_vm "$i" "guest init: ${f//_/ }"
        if ! kill -0 "${qpids[i]}" 2>/dev/null; then
            # status.0 may have been completed just before qemu exited
            [[ $i == 0 && -n $(awk '$1 == "exit"' "$tmp/status.0") ]] && continue 2
            fail_vm "$i" "qemu exited without a job status (kernel panic or qemu error?)"
        fi
    done
    if ((SECONDS >= deadline)); then
        log "timeout: SOFTROCE_TIMEOUT=${TIMEOUT}s expired after $(elapsed)s of host time; killing the VM(s)"
        if [[ -z $(stage 0 job) ]]; then
            log "the job had not started; last lines of node 0's console:"
            tail -n 20 "$tmp/console.0" | tr -d '\r' >&2
        fi
        exit 124
    fi
    sleep 0.1
done

# All output is in the files once "exit" is there (the guest drains its UARTs first). Let
# node 0 power off by itself so its tail readers finish at their end of file.
for _ in $(seq 50); do kill -0 "${qpids[0]}" 2>/dev/null || break; sleep 0.1; done
kill -TERM "${qpids[0]}" 2>/dev/null || true
wait "${tpids[0]}" "${tpids[1]}" 2>/dev/null || true
if [[ ${SOFTROCE_QUIET:-0} != 1 ]]; then
    wall=$(elapsed)
    log "rc=$rc nodes=$NODES smp=$SMP mem=${MEM}M libs+$nlibs | guest uptime: rxe0 up $(stage 0 rxe)s, job $(stage 0 job)s..$(stage 0 exit)s | host wall ${wall}s"
    # A guest clock faster than the host's makes guest-side timeouts fire early.
    awk -v g="$(stage 0 exit)" -v w="$wall" 'BEGIN { exit !(g > w * 1.2 + 2) }' &&
        log "warning: guest clock ran fast (uptime $(stage 0 exit)s > host ${wall}s); set SOFTROCE_TSC_KHZ?"
fi
exit "$rc"
