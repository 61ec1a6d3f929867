#!/usr/bin/env bash
# tests/softroce/bench.sh [PREFIX]: RDMA verbs benchmarks on Soft-RoCE (rdma_rxe) in ONE
# qemu VM (run-in-vm.sh): OxMPI over verbs against perftest (ib_send_lat, ib_read_lat,
# ib_write_bw, ib_read_bw) and against the MPI peers that run in the guest: Debian's
# MPICH (ch4:ucx, UCX over rc_verbs) and Open MPI (pml ucx, from Debian's packages,
# fetched with apt-get download into a cache: nothing is installed on the host). The
# programs are benches/latency.c and benches/bw.c, built with each MPI, and pingpong.c
# below (8 B round trips timed one by one: medians, not only means). The guest side is
# bench-guest.sh: BENCH_REPS rounds, interleaved, then a table of medians and the ratios
# against the targets. Benchmarks, not tests: see bench-guest.sh for the exit status.
#
# PREFIX (default ./install) must hold lib/liboxmpi-verbs.so.
# Knobs (environment): BENCH_REPS (3), BENCH_PEERS ("mpich ompi"; "" = OxMPI and
# perftest only), BENCH_LAT_ITERS (2000), BENCH_LARGE_ITERS (200), BENCH_BW_ITERS (100),
# BENCH_BW_MPI_ITERS (40), BENCH_WINDOW (16), BENCH_UCX_TLS (rc_verbs,ud_verbs,self),
# BENCH_SLEEPY (1: OxMPI's bw once more with waits that sleep at once), BENCH_CMD_TIMEOUT
# (240 s per guest command), BENCH_CACHE (${TMPDIR:-/tmp}/softroce-bench-cache: Open MPI's
# packages), plus run-in-vm.sh's SOFTROCE_* (SOFTROCE_TIMEOUT defaults to 900 here).
# The VM run holds /tmp/oxmpi-bench.lock (as benches/compare does), so benchmark runs on
# this machine do not overlap; other VMs are not held off: the host's load and the number
# of other qemu processes are printed before and after, since they decide the figures.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PREFIX=$(cd "${1:-$ROOT/install}" && pwd)
PEERS=${BENCH_PEERS-mpich ompi}
CACHE=${BENCH_CACHE:-${TMPDIR:-/tmp}/softroce-bench-cache}
log() { echo "bench: $*" >&2; }

if [[ ! -f $PREFIX/lib/liboxmpi-verbs.so ]]; then
    log "$PREFIX/lib/liboxmpi-verbs.so is missing (install libibverbs-dev: make deps, then make install)"
    exit 1
fi

job=$(mktemp -d "${TMPDIR:-/tmp}/oxmpi-bench-job.XXXXXX")
trap 'rm -rf "$job"' EXIT
# No -march=native anywhere: the guest CPU (qemu TCG) lacks some host extensions.
CFLAGS=(-O2 -Wno-stringop-overflow)

# --- OxMPI ----------------------------------------------------------------------------
mkdir -p "$job/oxmpi/bin" "$job/oxmpi/lib" "$job/bin"
cp -L "$PREFIX/bin/mpirun" "$job/oxmpi/bin/"
cp -L "$PREFIX/lib/libmpi.so.12" "$PREFIX/lib/liboxmpi-verbs.so" "$job/oxmpi/lib/"
# pingpong: the 8 B round trips one by one (RTT/2 per sample). OSU latency prints their
# mean only, which on a shared host is set by the few round trips during which the host
# descheduled a vCPU (milliseconds each); the median sample is what ib_send_lat's
# t_typical reports. Kept here rather than in benches/: a diagnostic of this harness.
cat >"$job/pingpong.c" <<'EOF'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
int main(int argc, char **argv)
{
    int rank, n = argc > 1 ? atoi(argv[1]) : 2000, len = argc > 2 ? atoi(argv[2]) : 8;
    char buf[4096] = {0};
    double *t = malloc(sizeof(double) * (n > 0 ? n : 1)), sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (n < 1 || len < 0 || len > (int)sizeof buf || !t)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = -100; i < n; i++) { /* 100 warm-up round trips */
        double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, len, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, len, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, len, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, len, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
        }
        if (i >= 0)
            t[i] = (MPI_Wtime() - t0) * 1e6 / 2;
    }
    if (rank == 0) {
        for (int i = 0; i < n; i++)
            sum += t[i];
        qsort(t, n, sizeof(double), cmp);
        printf("pingpong %d B x %d: min %.2f median %.2f mean %.2f p90 %.2f p99 %.2f max %.2f us\n", len,
               n, t[0], t[n / 2], sum / n, t[n * 9 / 10], t[n * 99 / 100], t[n - 1]);
    }
    free(t);
    MPI_Finalize();
    return 0;
}
EOF
for p in "$ROOT/benches/latency.c" "$ROOT/benches/bw.c" "$job/pingpong.c"; do
    "$PREFIX/bin/mpicc" "${CFLAGS[@]}" -o "$job/bin/$(basename "$p" .c)" "$p"
done
cp "$HERE/bench-guest.sh" "$job/"
echo "oxmpi-version commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown), plugin built $(date -u -r "$PREFIX/lib/liboxmpi-verbs.so" '+%Y-%m-%d %H:%M UTC')" >"$job/VERSIONS"

# skip PEER REASON: the guest reports PEER as not run, with REASON.
skip() {
    mkdir -p "$job/$1"
    echo "$2" >"$job/$1/SKIPPED"
    log "$1: not run: $2"
}

# UCX's transport plugins (libuct_ib.so, ...) are dlopen()ed from <libdir>/ucx, which ldd
# never shows: pack them; the guest points UCX_MODULE_DIR at them.
pack_ucx() { # LIBDIR (holding libucp.so.0 and ucx/)
    [[ -d $job/ucx ]] && return 0
    [[ -d $1/ucx ]] || return 1
    mkdir -p "$job/ucx"
    cp -L "$1"/ucx/libuct_*.so.0 "$job/ucx/"
    for f in "$job"/ucx/*.so.0; do ln -sf "$(basename "$f")" "${f%.0}"; done
}

# --- MPICH (Debian's: ch4:ucx) ----------------------------------------------------------
if [[ " $PEERS " == *" mpich "* ]]; then
    mpiexec=$(readlink -f "$(command -v mpiexec.mpich || true)" 2>/dev/null || true)
    if ! command -v mpicc.mpich >/dev/null || [[ ! -x $mpiexec ]]; then
        skip mpich "mpicc.mpich/mpiexec.mpich not installed (apt-get install mpich libmpich-dev)"
    elif [[ $(basename "$mpiexec") != mpiexec.hydra || ! -x $(dirname "$mpiexec")/hydra_pmi_proxy ]]; then
        skip mpich "mpiexec.mpich is not Hydra with hydra_pmi_proxy beside it"
    else
        device=$(mpichversion 2>/dev/null | awk '/^MPICH Device/ && !n++ { sub(/^[^:]*:[ \t]*/, ""); print }')
        mkdir -p "$job/mpich/bin"
        mpichversion | awk '/^MPICH Version/ && !n++ { sub(/^[^:]*:[ \t]*/, ""); print }' >"$job/mpich/VERSION"
        case $device in
            ch4:ucx)
                ucplib=$(ldconfig -p | awk '/libucp\.so\.0 .*x86-64/ && !n++ { print $NF }')
                if ! pack_ucx "$(dirname "$(readlink -f "$ucplib")")"; then
                    skip mpich "UCX's plugin directory (ucx/ beside libucp.so.0) not found"
                else
                    echo "ch4:ucx, UCX_TLS=${BENCH_UCX_TLS:-rc_verbs,ud_verbs,self}" >"$job/mpich/TRANSPORT"
                fi ;;
            *)
                # ch4:ofi would take FI_PROVIDER="verbs;ofi_rxm"; not wired up (Debian 12's
                # MPICH is ch4:ucx).
                skip mpich "MPICH device $device: only ch4:ucx is wired up here" ;;
        esac
        if [[ ! -e $job/mpich/SKIPPED ]]; then
            cp -L "$mpiexec" "$(dirname "$mpiexec")/hydra_pmi_proxy" "$job/mpich/bin/"
            for p in "$ROOT/benches/latency.c" "$ROOT/benches/bw.c" "$job/pingpong.c"; do
                mpicc.mpich "${CFLAGS[@]}" -o "$job/mpich/bin/$(basename "$p" .c)" "$p"
            done
        fi
    fi
fi

# --- Open MPI (Debian's packages, unpacked, not installed) ------------------------------
# Debian 12: Open MPI 4.1.4; pml ucx works over rxe. btl openib is built but only with the
# udcm connection manager (no rdmacm CPC), which does not do RoCE: not used.
# Not libfabric1 or the PSM libraries: the OFI and PSM plugins are left out of the job.
ompi_pkgs=(openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2 libevent-core-2.1-7
    libevent-pthreads-2.1-7 libmunge2 libhwloc15 libucx0 libnl-3-200 libnl-route-3-200 libnuma1)
fetch_ompi() { # -> prints the unpacked root; cached per package version, under a lock
    local ver dir
    ver=$(apt-cache policy openmpi-bin 2>/dev/null | awk '/Candidate:/ { print $2 }')
    [[ -n $ver && $ver != "(none)" ]] || { echo "apt-cache knows no openmpi-bin" >&2; return 1; }
    dir=$CACHE/openmpi-$ver
    mkdir -p "$CACHE"
    (
        flock 9
        [[ -e $dir/.done ]] && exit 0
        rm -rf "$dir"
        mkdir -p "$dir/debs" "$dir/root"
        # Only what the host lacks (the harness takes the host's libraries otherwise).
        want=()
        for p in "${ompi_pkgs[@]}"; do
            [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == "install ok installed" ]] && \
                [[ $p != *openmpi* ]] && continue
            want+=("$p")
        done
        (cd "$dir/debs" && apt-get download -q "${want[@]}" >&2) || exit 1
        for d in "$dir"/debs/*.deb; do dpkg -x "$d" "$dir/root"; done
        touch "$dir/.done"
    ) 9>"$CACHE/.lock" || return 1
    echo "$dir/root"
}
if [[ " $PEERS " == *" ompi "* ]]; then
    if ! oroot=$(fetch_ompi); then
        skip ompi "Debian's Open MPI packages could not be downloaded (apt-get download)"
    else
        ml=usr/lib/x86_64-linux-gnu
        mkdir -p "$job/ompi/bin"
        # The runtime tree: no docs, Fortran, Java, headers or OFI/PSM plugins.
        (cd "$oroot" && tar cf - --exclude=usr/share/doc --exclude=usr/share/man \
            --exclude=usr/share/lintian --exclude=usr/include --exclude="$ml/fortran" \
            --exclude="$ml/pkgconfig" --exclude="$ml/openmpi/include" --exclude='*java*' \
            --exclude='*mpifh*' --exclude='*usempi*' --exclude='*_mtl_psm*' --exclude='*_mtl_ofi*' \
            --exclude='*_btl_ofi*' --exclude='*common_ofi*' --exclude='libfabric*' \
            --exclude='libpsm*' --exclude='*libpsm1*' --exclude=usr/lib/libpsm1 .) |
            (cd "$job/ompi" && tar xf -)
        # Dangling links (to excluded files, or to /etc/alternatives) would stop cp -RL.
        find "$job/ompi" -xtype l -delete
        dpkg-deb -f "$(ls "$oroot"/../debs/libopenmpi3_*.deb)" Version | sed 's/-.*//' >"$job/ompi/VERSION"
        echo "pml ucx, UCX_TLS=${BENCH_UCX_TLS:-rc_verbs,ud_verbs,self}" >"$job/ompi/TRANSPORT"
        if [[ -d $oroot/$ml/ucx ]]; then
            pack_ucx "$oroot/$ml" || true
        else
            ucplib=$(ldconfig -p | awk '/libucp\.so\.0 .*x86-64/ && !n++ { print $NF }')
            pack_ucx "$(dirname "$(readlink -f "$ucplib")")" || true
        fi
        okc=1
        for p in "$ROOT/benches/latency.c" "$ROOT/benches/bw.c" "$job/pingpong.c"; do
            gcc "${CFLAGS[@]}" -I"$oroot/$ml/openmpi/include" -o "$job/ompi/bin/$(basename "$p" .c)" "$p" \
                -L"$oroot/$ml/openmpi/lib" -Wl,-rpath-link,"$oroot/$ml" -lmpi || okc=0
        done
        [[ -d $job/ucx ]] || skip ompi "UCX's plugin directory not found"
        ((okc)) || skip ompi "the benchmarks did not build against Open MPI's headers"
    fi
fi

# --- run ---------------------------------------------------------------------------------
hostinfo() {
    local others
    others=$(ps -eo comm= | grep -c '^qemu-system' || true)
    log "host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), qemu processes running: ${others:-0}"
}
export BENCH_REPS=${BENCH_REPS:-3}
vars="BENCH_REPS BENCH_LAT_ITERS BENCH_LARGE_ITERS BENCH_BW_ITERS BENCH_BW_MPI_ITERS BENCH_WINDOW BENCH_UCX_TLS BENCH_CMD_TIMEOUT BENCH_SLEEPY"
exec 9>/tmp/oxmpi-bench.lock
if ! flock -n 9; then
    log "waiting for /tmp/oxmpi-bench.lock (another benchmark run)"
    flock 9
fi
hostinfo
log "one VM (SOFTROCE_SMP=${SOFTROCE_SMP:-2}), $BENCH_REPS rounds; peers packed: oxmpi $(for p in mpich ompi; do [[ -x $job/$p/bin/latency && ! -e $job/$p/SKIPPED ]] && printf '%s ' $p; done)"
status=0
SOFTROCE_ENV="${SOFTROCE_ENV:-} $vars" SOFTROCE_TIMEOUT=${SOFTROCE_TIMEOUT:-900} \
    "$HERE/run-in-vm.sh" "$job" ./bench-guest.sh || status=$?
hostinfo
exit "$status"
