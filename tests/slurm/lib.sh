# Shared by start-slurm.sh and stop-slurm.sh (sourced, not run).
# Settings: every knob is an environment variable with a default (README.md).

SLURM_CI_DIR=${SLURM_CI_DIR:-/tmp/slurm-ci}
SLURM_CI_NODES=${SLURM_CI_NODES:-2}
SLURM_CI_CTLD_PORT=${SLURM_CI_CTLD_PORT:-6817}
SLURM_CI_SLURMD_PORT=${SLURM_CI_SLURMD_PORT:-6818}
SLURM_CI_MPI_DEFAULT=${SLURM_CI_MPI_DEFAULT:-pmi2}
SLURM_CI_TIMEOUT=${SLURM_CI_TIMEOUT:-60}
CONF=$SLURM_CI_DIR/slurm.conf
RUN=$SLURM_CI_DIR/run
LOG=$SLURM_CI_DIR/log
MUNGE_SOCKET=$SLURM_CI_DIR/munge/munge.socket

say() { echo "slurm-ci: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

# alive PID NAME: the process exists, is not a zombie (PID 1 may not reap orphans, so
# `kill -0` is not enough) and its command name starts with NAME (slurmctld runs as
# slurmctld-wlm through Debian's alternatives).
alive() {
    local pid=$1 name=$2 stat comm
    case $pid in '' | *[!0-9]*) return 1 ;; esac
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [ "${stat%% *}" != Z ] || return 1
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
    case $comm in "$name"*) return 0 ;; *) return 1 ;; esac
}

# ppid_of PID: the parent (parsed after the last ')' so a comm with spaces is harmless)
ppid_of() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
    stat=${stat##*) }
    set -- $stat
    echo "$2"
}

pid_of() { cat "$1" 2>/dev/null; }

# node_names: n1 .. nN
node_names() {
    local i
    for i in $(seq 1 "$SLURM_CI_NODES"); do echo "n$i"; done
}

# Processes of our cluster's jobs: slurmstepd, srun/salloc/sbatch clients, and processes
# of a job (SLURM_JOB_ID in their environment), whose environment holds SLURM_CONF=<our conf> (start-slurm.sh exports
# it to the daemons; slurmstepd and the tasks inherit it). Prints "PID COMM" for each;
# skips this shell and its ancestors (this script may run inside an allocation).
our_env_pids() {
    local want="SLURM_CONF=$CONF" p comm ancestors=" " a=$$
    while [ -n "$a" ] && [ "$a" != 0 ] && [ "$a" != 1 ]; do
        ancestors="$ancestors$a "
        a=$(ppid_of "$a")
    done
    # one grep over every environment (NUL-separated entries), then a closer look
    for p in $(grep -lzxF "$want" /proc/[0-9]*/environ 2>/dev/null); do
        p=${p#/proc/}
        p=${p%/environ}
        case $ancestors in *" $p "*) continue ;; esac
        [ "$p" = "$BASHPID" ] && continue
        comm=$(cat "/proc/$p/comm" 2>/dev/null) || continue
        case $comm in
        slurmstepd* | srun | salloc | sbatch) ;; # clients would wait for a dead cluster
        *) grep -qz '^SLURM_JOB_ID=' "/proc/$p/environ" 2>/dev/null || continue ;;
        esac
        alive "$p" "" || continue
        echo "$p $comm"
    done
}
