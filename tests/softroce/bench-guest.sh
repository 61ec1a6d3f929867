#!/bin/sh
# Guest side of bench.sh (busybox sh, cwd /job, one VM, rxe0): in ONE boot, BENCH_REPS
# rounds, each running in turn perftest (ib_send_lat and ib_read_lat of 8 B, ib_write_bw
# and ib_read_bw of 1 MiB, server and client on rxe0), then OxMPI over verbs and each MPI
# peer the job dir holds (MPICH/UCX, Open MPI/pml ucx): benches/latency at 8 B, at
# 64 KiB..1 MiB, pingpong (8 B round trips timed one by one) and benches/bw at 1 MiB,
# 2 ranks (OxMPI's bw once more with waits that sleep at once, BENCH_SLEEPY=1). Then a
# table of each figure's rounds, median and best round, and the ratios against the
# targets (8 B latency <= 1.3 x ib_send_lat; 1 MiB bandwidth >= 0.8 x ib_read_bw; ahead
# of both MPI peers on both).
# Benchmarks, not tests: the exit status is 0 when every measurement of perftest and
# OxMPI produced a number (PASS/FAIL of the targets does not change it), 1 otherwise.
cd /job || exit 1
REPS=${BENCH_REPS:-3}
LAT_N=${BENCH_LAT_ITERS:-2000}    # 8 B round trips (perftest -n, latency -i)
LARGE_I=${BENCH_LARGE_ITERS:-200} # latency -i for 64 KiB..1 MiB (it runs -i/10 of those)
BW_N=${BENCH_BW_ITERS:-100}       # 1 MiB perftest messages (-n)
BW_I=${BENCH_BW_MPI_ITERS:-40}    # bw -i (1 MiB runs -i/5 iterations of WINDOW messages)
WINDOW=${BENCH_WINDOW:-16}
T=${BENCH_CMD_TIMEOUT:-240}       # seconds per command
GID=${RXE_GID_IDX:-1}
IP=${RXE_IP:-127.0.0.1}
R=/tmp/bench.results              # lines: KEY REP VALUE
: >"$R"
port=18515
bad=0
XGENV=

up() { cut -d' ' -f1 /proc/uptime; }
say() { echo "[$(up)] $*"; }

# Peers in this job dir (bench.sh packs what it could; a SKIPPED file says why not).
PEERS=oxmpi
for p in mpich ompi; do
    if [ -x "/job/$p/bin/latency" ] && [ ! -e "/job/$p/SKIPPED" ]; then PEERS="$PEERS $p"; fi
done
name() {
    case $1 in
        oxmpi) echo "OxMPI" ;;
        mpich) echo "MPICH" ;;
        ompi) echo "Open MPI" ;;
    esac
}
what() {
    case $1 in
        oxmpi) echo "OxMPI ($(sed -n 's/^oxmpi-version //p' /job/VERSIONS 2>/dev/null)): OXMPI_TRANSPORT=verbs" ;;
        mpich) echo "MPICH $(cat /job/mpich/VERSION 2>/dev/null): $(cat /job/mpich/TRANSPORT 2>/dev/null), MPIR_CVAR_NOLOCAL=1" ;;
        ompi) echo "Open MPI $(cat /job/ompi/VERSION 2>/dev/null): $(cat /job/ompi/TRANSPORT 2>/dev/null)" ;;
    esac
}

# UCX (both peers): plugins packed beside the job; GID index 0 (the link-local RoCE v2
# GID): UCX 1.13's UD wire-up never completes on rxe with the IPv4-mapped GID (index 1),
# endpoints time out after UCX_UD_TIMEOUT.
export UCX_MODULE_DIR=/job/ucx UCX_WARN_UNUSED_ENV_VARS=n UCX_NET_DEVICES=rxe0:1 UCX_IB_GID_INDEX=0
UCX_TLS_USED=${BENCH_UCX_TLS:-rc_verbs,ud_verbs,self}
export UCX_TLS="$UCX_TLS_USED"
# Open MPI expects its tree at Debian's paths (/usr/lib/x86_64-linux-gnu/openmpi, ...):
# the guest's root is a writable initramfs, so link the packed tree there.
if [ -d /job/ompi/usr ]; then
    for d in usr/lib/x86_64-linux-gnu/openmpi usr/lib/x86_64-linux-gnu/pmix2 usr/share/openmpi \
        usr/share/pmix etc/openmpi usr/bin/orted; do
        [ -e "/job/ompi/$d" ] || continue
        mkdir -p "$(dirname "/$d")"
        [ -e "/$d" ] || ln -s "/job/ompi/$d" "/$d"
    done
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# mpi PEER VERBOSE PROG ARGS...: 2 ranks of PROG under PEER's launcher, over verbs only.
mpi() {
    peer=$1 verbose=$2 prog=$3
    shift 3
    case $peer in
        oxmpi)
            # shellcheck disable=SC2086 # XGENV: extra "-genv NAME VALUE" words
            set -- /job/oxmpi/bin/mpirun --timeout "$T" -n 2 -genv OXMPI_TRANSPORT verbs \
                -genv OXMPI_VERBOSE "$verbose" $XGENV "./bin/$prog" "$@" ;;
        mpich)
            # NOLOCAL: no shared memory between the two ranks, everything through the netmod.
            ll=warn
            [ "$verbose" = 1 ] && ll=info
            set -- timeout "$T" /job/mpich/bin/mpiexec.hydra -launcher fork -n 2 \
                -genv MPIR_CVAR_NOLOCAL 1 -genv UCX_LOG_LEVEL $ll "./mpich/bin/$prog" "$@" ;;
        ompi)
            ll=warn
            [ "$verbose" = 1 ] && ll=info
            set -- timeout "$T" /job/ompi/usr/bin/orterun --mca plm isolated -n 2 \
                --mca pml ucx --mca btl self --mca osc ^ucx -x UCX_LOG_LEVEL=$ll "./ompi/bin/$prog" "$@" ;;
    esac
    "$@"
}

# osu KEY REP SIZE OUTFILE: the value of SIZE's line of an OSU-style output.
osu() {
    v=$(awk -v s="$3" '$1 == s && NF == 2 { print $2; exit }' "$4")
    record "$1" "$2" "$v" "$4"
}

# record KEY REP VALUE LOG: stores VALUE, or reports a failed measurement with LOG's tail.
record() {
    if [ -n "$3" ]; then
        echo "$1 $2 $3" >>"$R"
    else
        echo "$1 $2 fail" >>"$R"
        say "FAILED: $1 (round $2); last lines of its output:"
        tail -n 15 "$4" | sed 's/^/    /'
        case $1 in oxmpi_* | pt_*) bad=1 ;; esac
    fi
}

# perftest TOOL REP ARGS...: server and client of TOOL on rxe0 (client once the server
# listens; perftest clients do not retry a refused connection).
perftest() {
    tool=$1 rep=$2
    shift 2
    port=$((port + 1))
    timeout "$T" "$tool" -d rxe0 -x "$GID" -p $port "$@" >/tmp/pt.server 2>&1 &
    spid=$!
    i=0
    while [ $i -lt 100 ] && ! netstat -ltn 2>/dev/null | grep -q ":$port "; do
        sleep 0.1
        i=$((i + 1))
    done
    timeout "$T" "$tool" -d rxe0 -x "$GID" -p $port "$@" "$IP" >/tmp/pt.client 2>&1
    # A server whose client never came would wait until its timeout.
    i=0
    while [ $i -lt 100 ] && kill -0 $spid 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    kill $spid 2>/dev/null
    wait $spid 2>/dev/null
    # The result line follows the "#bytes" header.
    line=$(awk 'h && NF > 3 { print; exit } /#bytes/ { h = 1 }' /tmp/pt.client)
    case $tool in
        *_lat)
            record "pt_${tool#ib_}_typ" "$rep" "$(echo "$line" | awk '{ print $5 }')" /tmp/pt.client
            record "pt_${tool#ib_}_avg" "$rep" "$(echo "$line" | awk '{ print $6 }')" /tmp/pt.client ;;
        *_bw)
            # perftest's MB/sec are MiB/s (2^20 bytes); the OSU programs print 10^6 bytes/s.
            record "pt_${tool#ib_}" "$rep" "$(echo "$line" | awk '{ if ($4 + 0 > 0) printf "%.2f", $4 * 1.048576 }')" /tmp/pt.client ;;
    esac
}

say "bench-guest: $REPS rounds; peers: $PEERS; 8 B x $LAT_N round trips; 1 MiB: perftest -n $BW_N, bw -i $BW_I -W $WINDOW; UCX_TLS=$UCX_TLS_USED"
rep=1
while [ $rep -le "$REPS" ]; do
    say "round $rep: perftest"
    perftest ib_send_lat $rep -s 8 -n "$LAT_N"
    perftest ib_read_lat $rep -s 8 -n "$LAT_N"
    perftest ib_write_bw $rep -s 1048576 -n "$BW_N"
    perftest ib_read_bw $rep -s 1048576 -n "$BW_N"
    for p in $PEERS; do
        say "round $rep: $(what $p)"
        v=0
        [ $rep = 1 ] && v=1
        mpi $p $v latency -m 8:8 -i "$LAT_N" -x 100 >/tmp/o.lat 2>&1
        if [ $rep = 1 ]; then
            # Evidence of the path taken: OxMPI's transport report, UCX's lanes.
            grep -E 'OxMPI rank 0/2.*verbs to 1|ep_cfg\[[0-9]\]: tag' /tmp/o.lat | sed 's/^.*\] *//' | sort -u | head -n 4 | sed 's/^/    /'
        fi
        osu ${p}_lat8 $rep 8 /tmp/o.lat
        mpi $p 0 pingpong "$LAT_N" 8 >/tmp/o.pp 2>&1
        line=$(grep '^pingpong ' /tmp/o.pp)
        for f in min median; do
            record ${p}_pp_$f $rep "$(echo "$line" | awk -v f=$f '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }')" /tmp/o.pp
        done
        mpi $p 0 latency -m 65536:1048576 -i "$LARGE_I" -x 10 >/tmp/o.lat 2>&1
        osu ${p}_lat64k $rep 65536 /tmp/o.lat
        osu ${p}_lat1m $rep 1048576 /tmp/o.lat
        mpi $p 0 bw -m 1048576:1048576 -i "$BW_I" -x 10 -W "$WINDOW" >/tmp/o.bw 2>&1
        osu ${p}_bw1m $rep 1048576 /tmp/o.bw
        if [ $p = oxmpi ] && [ "${BENCH_SLEEPY:-1}" = 1 ]; then
            # The same with waits that sleep at once (no spinning, no yielding): on
            # Soft-RoCE the kernel moving the data needs the CPU a spinning rank burns.
            XGENV="-genv OXMPI_SPIN_COUNT 0 -genv OXMPI_YIELD_COUNT 0"
            mpi $p 0 bw -m 1048576:1048576 -i "$BW_I" -x 10 -W "$WINDOW" >/tmp/o.bw 2>&1
            XGENV=
            osu oxmpi_bw1m_sleepy $rep 1048576 /tmp/o.bw
        fi
    done
    rep=$((rep + 1))
done
say "done"

# ---- table ---------------------------------------------------------------------------
# median KEY: median over the rounds that produced a number (empty if none did).
median() {
    awk -v k="$1" '$1 == k && $3 != "fail" { print $3 }' "$R" | sort -n |
        awk '{ v[NR] = $1 } END { if (NR == 0) exit; if (NR % 2) printf "%.2f", v[(NR + 1) / 2]; else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
values() { awk -v k="$1" '$1 == k { printf "%s%s", s, $3; s = " " }' "$R"; }
row() { # KEY LABEL UNIT
    m=$(median "$1")
    b=$(best "$1")
    printf '| %-46s | %-4s | %-36s | %8s | %8s |\n' "$2" "$3" "$(values "$1")" "${m:--}" "${b:--}"
}
# best KEY: the least disturbed round (noise from the host only ever adds time): the
# smallest value of a latency (us), the largest of a bandwidth (MB/s).
best() {
    case $1 in *bw*) o=-nr ;; *) o=-n ;; esac
    awk -v k="$1" '$1 == k && $3 != "fail" { print $3 }' "$R" | sort $o | awk 'NR == 1 { printf "%.2f", $1 }'
}
echo
echo "## Results ($REPS rounds; one VM, rxe0, 2 vCPUs, qemu TCG)"
echo
printf '| %-46s | %-4s | %-36s | %8s | %8s |\n' "measurement" "unit" "rounds" "median" "best"
echo "|------------------------------------------------|------|--------------------------------------|----------|----------|"
row pt_send_lat_typ "ib_send_lat 8 B, t_typical" us
row pt_send_lat_avg "ib_send_lat 8 B, t_avg" us
row pt_read_lat_typ "ib_read_lat 8 B, t_typical" us
row pt_read_lat_avg "ib_read_lat 8 B, t_avg" us
row pt_write_bw "ib_write_bw 1 MiB, BW average" MB/s
row pt_read_bw "ib_read_bw 1 MiB, BW average" MB/s
for p in $PEERS; do
    n=$(name $p)
    row ${p}_lat8 "$n latency 8 B (OSU: mean)" us
    row ${p}_pp_median "$n 8 B round trip/2, median sample" us
    row ${p}_pp_min "$n 8 B round trip/2, fastest sample" us
    row ${p}_lat64k "$n latency 64 KiB" us
    row ${p}_lat1m "$n latency 1 MiB" us
    row ${p}_bw1m "$n bw 1 MiB (window $WINDOW)" MB/s
    [ $p = oxmpi ] && [ "${BENCH_SLEEPY:-1}" = 1 ] &&
        row oxmpi_bw1m_sleepy "OxMPI bw 1 MiB, SPIN_COUNT=0 YIELD_COUNT=0" MB/s
done
echo
for p in $PEERS; do echo "- $(what $p)"; done
for p in mpich ompi; do
    if [ -e "/job/$p/SKIPPED" ]; then echo "- $(name $p): not run: $(cat /job/$p/SKIPPED)"; fi
done

# ratio A B: A/B with 2 decimals, or empty.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && b + 0 > 0) printf "%.2f", a / b }'; }
# verdict RATIO OP LIMIT: PASS/FAIL (n/a without a ratio).
verdict() {
    [ -n "$1" ] || { echo "n/a"; return; }
    awk -v r="$1" -v op="$2" -v l="$3" 'BEGIN {
        if (op == "<=") ok = r <= l; else if (op == "<") ok = r < l
        else if (op == ">=") ok = r >= l; else ok = r > l
        print ok ? "PASS" : "FAIL" }'
}
# target LABEL A B OP LIMIT: A/B against the goal, for the medians and for the best rounds.
target() {
    rm_=$(ratio "$(median "$2")" "$(median "$3")")
    rb_=$(ratio "$(best "$2")" "$(best "$3")")
    printf '| %-52s | %-6s | %6s | %-4s | %6s | %-4s |\n' "$1" "$4 $5" "${rm_:--}" "$(verdict "$rm_" "$4" "$5")" \
        "${rb_:--}" "$(verdict "$rb_" "$4" "$5")"
}
echo
echo "## Targets: ratios of the medians above, and of the best rounds"
echo
printf '| %-52s | %-6s | %6s | %-4s | %6s | %-4s |\n' "target" "goal" "median" "" "best" ""
echo "|------------------------------------------------------|--------|--------|------|--------|------|"
target "8 B latency: OxMPI OSU mean / ib_send_lat t_avg" oxmpi_lat8 pt_send_lat_avg "<=" 1.3
target "8 B latency: OxMPI median / ib_send_lat t_typical" oxmpi_pp_median pt_send_lat_typ "<=" 1.3
target "1 MiB bandwidth: OxMPI bw / ib_read_bw" oxmpi_bw1m pt_read_bw ">=" 0.8
for p in mpich ompi; do
    case " $PEERS " in *" $p "*) ;; *) continue ;; esac
    n=$(name $p)
    target "8 B latency: OxMPI / $n, OSU means" oxmpi_lat8 ${p}_lat8 "<" 1
    target "8 B latency: OxMPI / $n, median samples" oxmpi_pp_median ${p}_pp_median "<" 1
    target "1 MiB bandwidth: OxMPI / $n" oxmpi_bw1m ${p}_bw1m ">" 1
done
echo
echo "OSU latency is the mean of its timed round trips / 2, like ib_send_lat's t_avg; the"
echo "median sample (pingpong, one timing per round trip) compares with t_typical, the"
echo "median of ib_send_lat's samples. A mean carries every round trip during which the"
echo "host descheduled a vCPU (milliseconds each), so a round's mean is only as good as the"
echo "host was quiet: 'best' takes each figure's least disturbed round (smallest latency,"
echo "largest bandwidth). MB/s: 10^6 bytes/s (perftest's MiB/s converted)."
exit $bad
