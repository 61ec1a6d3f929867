#!/usr/bin/env bash
# tests/netns/up.sh N: create N test hosts h1..hN as Linux network namespaces, joined by
# veth pairs to a bridge in a namespace of their own (oxmpi-br), with addresses
# 10.77.0.1..N on a private /24 and a hosts file per namespace (/etc/netns/hI/hosts, which
# `ip netns exec` binds over /etc/hosts), so every host resolves every other by name.
# Idempotent: hosts that exist are kept. Needs root. Remove them with tests/netns/down.sh.
set -euo pipefail
N=${1:?usage: tests/netns/up.sh N (number of hosts)}
[[ $N =~ ^[0-9]+$ ]] && ((N >= 1 && N <= 200)) || { echo "up.sh: N must be 1..200" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "up.sh: needs root (ip netns)" >&2; exit 1; }
command -v ip >/dev/null || { echo "up.sh: ip (iproute2) not found" >&2; exit 1; }

BR=oxmpi-br
exists() { ip netns list | awk '{print $1}' | grep -qx "$1"; }

if ! exists "$BR"; then
    ip netns add "$BR"
    ip -n "$BR" link set lo up
    ip -n "$BR" link add br0 type bridge
    ip -n "$BR" link set br0 up
fi
for i in $(seq 1 "$N"); do
    h=h$i
    if ! exists "$h"; then
        ip netns add "$h"
        ip -n "$h" link set lo up
        # veth pair: "eth0" inside the host, "v-$h" on the bridge.
        ip link add "v-$h" type veth peer name "eth0-$h"
        ip link set "v-$h" netns "$BR"
        ip link set "eth0-$h" netns "$h"
        ip -n "$h" link set "eth0-$h" name eth0
        ip -n "$h" addr add "10.77.0.$i/24" dev eth0
        ip -n "$h" link set eth0 up
        ip -n "$BR" link set "v-$h" master br0
        ip -n "$BR" link set "v-$h" up
    fi
done
# Hosts files: every host of every earlier call too (a later, larger N extends them).
hosts=$(ip netns list | awk '{print $1}' | grep -E '^h[0-9]+$' | sort -V)
for h in $hosts; do
    mkdir -p "/etc/netns/$h"
    {
        echo "127.0.0.1 localhost"
        for o in $hosts; do echo "10.77.0.${o#h} $o"; done
    } > "/etc/netns/$h/hosts"
    echo "$h" > "/etc/netns/$h/hostname"
done
echo "up.sh: hosts $(echo $hosts | tr '\n' ' ')on 10.77.0.0/24 (tests/netns/agent HOST COMMAND... runs a command on one)"
