#!/bin/sh
# /init of a Soft-RoCE guest (busybox sh, PID 1). Sets up the machine, loads rdma_rxe,
# creates rxe0, then on node 0 runs the job and powers off; other nodes serve the agent
# until the host kills them.
#
# Channels to the host (see run-in-vm.sh): ttyS0 console (this script's messages and the
# kernel's), ttyS1 the job's stdout, ttyS2 its stderr, ttyS3 status lines
# ("<stage> <uptime>" and finally "exit <rc> <uptime>", or "fail <what> <uptime>").
# Parameters come on the kernel command line: softroce_node=I softroce_nodes=N
# softroce_netdev=eth0|lo. The per-run overlay adds /job, /.softroce/cmd (a sh script) and
# /.softroce/env (exports).
export PATH=/job:/job/bin:/softroce:/usr/local/bin:/usr/bin:/usr/sbin
export HOME=/root TMPDIR=/tmp
umask 022

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 shm /dev/shm
mount -t tmpfs -o mode=1777 tmp /tmp
mount -t tmpfs -o mode=755 run /run
exec </dev/null >/dev/console 2>&1

up() { cut -d' ' -f1 /proc/uptime; }
# Raw mode: no \n -> \r\n on the job's output.
for t in /dev/ttyS1 /dev/ttyS2 /dev/ttyS3; do stty -F $t raw -echo 2>/dev/null; done
status() { echo "$* $(up)" >/dev/ttyS3; }
fail() {
    echo "softroce-init: FAILED: $*"
    dmesg | tail -n 25
    status fail "$(echo "$*" | tr ' ' '_')"
    poweroff -f
    sleep 100
}
status init

node=0 nodes=1 netdev=eth0
for a in $(cat /proc/cmdline); do
    case $a in
        softroce_node=*) node=${a#*=} ;;
        softroce_nodes=*) nodes=${a#*=} ;;
        softroce_netdev=*) netdev=${a#*=} ;;
    esac
done
hostname node$node

while read -r m; do
    insmod /lib/modules/softroce/$m.ko || fail "insmod $m"
done </lib/modules/softroce/order

if [ "$netdev" = lo ]; then ip=127.0.0.1
elif [ "$nodes" -gt 1 ]; then ip=10.0.3.$((node + 1))
else ip=10.0.2.15 # slirp's guest address
fi
{
    echo "127.0.0.1 localhost"
    if [ "$nodes" -gt 1 ]; then
        i=0
        while [ $i -lt "$nodes" ]; do echo "10.0.3.$((i + 1)) node$i"; i=$((i + 1)); done
    else
        echo "$ip node0"
    fi
} >/etc/hosts
ip link set lo up
if [ "$netdev" != lo ]; then
    n=0
    while [ ! -e /sys/class/net/eth0 ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
    [ -e /sys/class/net/eth0 ] || fail "no eth0"
    # No IPv6 DAD: it only delays the link-local address, which nothing here waits for.
    echo 0 >/proc/sys/net/ipv6/conf/eth0/accept_dad 2>/dev/null
    ip addr add $ip/24 dev eth0 || fail "address $ip on eth0"
    ip link set eth0 up || fail "eth0 up"
    [ "$nodes" -gt 1 ] || ip route add default via 10.0.2.2 2>/dev/null
fi
status net

rdma link add rxe0 type rxe netdev "$netdev" || fail "rdma link add rxe0 netdev $netdev"
# Wait for the port to be ACTIVE and the IPv4-mapped GID (::ffff:a.b.c.d) to appear.
want=$(echo "$ip" | awk -F. '{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4 }')
port=/sys/class/infiniband/rxe0/ports/1
gid_idx=
n=0
while [ $n -lt 100 ]; do
    if grep -q ACTIVE $port/state 2>/dev/null; then
        for g in $port/gids/*; do
            [ "$(cat "$g" 2>/dev/null)" = "$want" ] && gid_idx=${g##*/} && break
        done
        [ -n "$gid_idx" ] && break
    fi
    sleep 0.1
    n=$((n + 1))
done
[ -n "$gid_idx" ] || fail "rxe0 not ACTIVE with GID $want (state: $(cat $port/state 2>/dev/null))"
status rxe

# The job's environment; agentd sources it too, so remote commands see the same.
{
    echo "export PATH='$PATH' HOME=/root TMPDIR=/tmp"
    echo "export RXE_DEV=rxe0 RXE_GID_IDX=$gid_idx RXE_IP=$ip"
    echo "export SOFTROCE_NODE=$node SOFTROCE_NNODES=$nodes"
    [ "$nodes" -gt 1 ] && echo "export SOFTROCE_PEER=10.0.3.$((2 - node))"
    [ "$nodes" -gt 1 ] && echo "export SOFTROCE_PEERS='$(i=0; while [ $i -lt "$nodes" ]; do printf 'node%s ' $i; i=$((i + 1)); done)'"
    [ -r /.softroce/env ] && cat /.softroce/env
} >/etc/softroce.env
. /etc/softroce.env

# Agent server on every node. start-stop-daemon -b detaches it without the SIGINT/SIGQUIT
# ignore that `&` would give the commands it runs.
start-stop-daemon -S -b -q -n nc -x /usr/bin/nc -- -ll -p "${SOFTROCE_AGENT_PORT:-7117}" -e /softroce/agentd ||
    fail "agent server"

if [ "$node" != 0 ]; then
    status ready
    echo "softroce-init: node$node ready ($ip)"
    while :; do sleep 3600; done
fi

# Node 0: wait until every other node answers its agent (its rxe0 is up by then).
i=1
while [ $i -lt "$nodes" ]; do
    n=0
    until [ "$(echo "PING 0" | nc 10.0.3.$((i + 1)) "${SOFTROCE_AGENT_PORT:-7117}" 2>/dev/null)" = pong ]; do
        n=$((n + 1))
        [ $n -lt 600 ] || fail "node$i's agent does not answer"
        sleep 0.2
    done
    i=$((i + 1))
done

status job
cd /job || fail "no /job"
sh /.softroce/cmd </dev/null >/dev/ttyS1 2>/dev/ttyS2
rc=$?
# Let the UARTs drain before the status line (tcsetattr with TCSADRAIN waits for it), so
# the host has all the output once it sees "exit".
stty -F /dev/ttyS1 raw 2>/dev/null
stty -F /dev/ttyS2 raw 2>/dev/null
status exit $rc
poweroff -f
sleep 100
