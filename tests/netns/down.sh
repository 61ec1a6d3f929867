#!/usr/bin/env bash
# tests/netns/down.sh: remove the test hosts of up.sh (every namespace h<N> and the bridge
# namespace), after killing whatever still runs in them. Idempotent. Needs root.
set -uo pipefail
[[ $(id -u) -eq 0 ]] || { echo "down.sh: needs root (ip netns)" >&2; exit 1; }
command -v ip >/dev/null || exit 0
for ns in $(ip netns list | awk '{print $1}' | grep -E '^(h[0-9]+|oxmpi-br)$'); do
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [[ -n $pids ]] && kill -9 $pids 2>/dev/null
    ip netns del "$ns"
    [[ $ns == oxmpi-br ]] || rm -rf "/etc/netns/$ns"
done
exit 0
