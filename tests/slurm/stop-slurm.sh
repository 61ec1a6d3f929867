#!/bin/bash
# Stop the Slurm that start-slurm.sh started: cancel every job, stop the slurmd(s) and
# slurmctld, kill stray slurmstepd and job processes of our cluster (recognised by
# SLURM_CONF=<our slurm.conf> in their environment), stop our munged. Only PIDs from our
# pid files or with our SLURM_CONF are touched. Idempotent.
#
#   tests/slurm/stop-slurm.sh [--purge] [--keep-munge]
#     --purge       also delete ${SLURM_CI_DIR:-/tmp/slurm-ci} (config, state, logs, key)
#     --keep-munge  leave munged running (a quicker restart)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/lib.sh"
export PATH=$PATH:/usr/sbin:/sbin

purge=0 keep_munge=0
for a in "$@"; do
    case $a in
    --purge) purge=1 ;;
    --keep-munge) keep_munge=1 ;;
    *) die "usage: $0 [--purge] [--keep-munge]" ;;
    esac
done
[ -d "$SLURM_CI_DIR" ] || exit 0
t0=$(date +%s.%N)
export SLURM_CONF=$CONF

# wait_gone SECONDS NAME PID...: until none is alive
wait_gone() {
    local secs=$1 name=$2 p any
    shift 2
    for _ in $(seq $((secs * 10))); do
        any=0
        for p in "$@"; do alive "$p" "$name" && any=1; done
        [ $any = 0 ] && return 0
        sleep 0.1
    done
    return 1
}

# 1. jobs: cancel them while the controller still runs, so steps end the Slurm way
ctld=$(pid_of "$RUN/slurmctld.pid")
if [ -f "$CONF" ] && alive "$ctld" slurmctld; then
    jobs=$(timeout 10 squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ')
    if [ -n "${jobs// /}" ]; then
        # shellcheck disable=SC2086
        timeout 10 scancel $jobs 2>/dev/null || true
        for _ in $(seq 30); do
            [ -z "$(timeout 10 squeue -h -t R,CG,PD -o %A 2>/dev/null)" ] && break
            sleep 0.1
        done
    fi
fi

# 2. daemons from our pid files
pids=()
for f in "$RUN"/slurmd-*.pid "$RUN/slurmctld.pid"; do
    [ -e "$f" ] || continue
    p=$(pid_of "$f")
    if alive "$p" slurm; then
        kill "$p" 2>/dev/null
        pids+=("$p")
    fi
done
if [ ${#pids[@]} -gt 0 ] && ! wait_gone 10 slurm "${pids[@]}"; then
    for p in "${pids[@]}"; do alive "$p" slurm && kill -9 "$p" 2>/dev/null; done
    wait_gone 2 slurm "${pids[@]}"
fi
rm -f "$RUN"/slurmd-*.pid "$RUN/slurmctld.pid"

# 3. strays: slurmstepd and job processes of our cluster (not this shell or its parents)
strays=$(our_env_pids)
if [ -n "$strays" ]; then
    say "killing leftovers: $(printf '%s\n' "$strays" | awk '{printf "%s%s(%s)", sep, $2, $1; sep=" "}')"
    for p in $(printf '%s\n' "$strays" | awk '{print $1}'); do kill -9 "$p" 2>/dev/null; done
fi

# 4. munged
if [ $keep_munge = 0 ]; then
    p=$(pid_of "$RUN/munged.pid")
    if alive "$p" munged; then
        kill "$p" 2>/dev/null
        wait_gone 5 munged "$p" || kill -9 "$p" 2>/dev/null
    fi
    rm -f "$RUN/munged.pid" "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock"
fi

if [ $purge = 1 ]; then
    case $SLURM_CI_DIR in / | "") die "refusing to purge SLURM_CI_DIR=$SLURM_CI_DIR" ;; esac
    rm -rf "$SLURM_CI_DIR"
fi
t1=$(date +%s.%N)
say "stopped$([ $purge = 1 ] && echo ", $SLURM_CI_DIR purged") ($(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f s", b-a}'))"
