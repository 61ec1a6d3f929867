#!/usr/bin/env bash
# tests/softroce/deps.sh: install the Debian packages the Soft-RoCE harness needs, on the
# host (the guest's base initramfs is built from the host's files, so the guest tools are
# installed here too). Idempotent: does nothing when everything is present. Needs root
# when something is missing.
set -euo pipefail

pkgs=(
    qemu-system-x86     # the VM (TCG; pulls in the PVH option ROM via qemu-system-data)
    busybox-static      # the guest's userland (/init, sh, insmod, ip, nc, ...)
    cpio binutils xz-utils  # initramfs packing; .modinfo parsing; vmlinux extraction
    libibverbs1 ibverbs-providers librdmacm1 rdma-core  # verbs + the rxe provider
    ibverbs-utils perftest rdmacm-utils iproute2         # guest tools: ibv_*, ib_*, rping, rdma
    libibverbs-dev librdmacm-dev libclang-dev pkg-config gcc libc6-dev  # building verbs programs
)

missing=()
for p in "${pkgs[@]}"; do
    # dpkg-query prints "install ok installed" only for fully installed packages
    [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == "install ok installed" ]] || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

[[ $(id -u) -eq 0 ]] || { echo "deps.sh: missing packages (${missing[*]}); run as root" >&2; exit 1; }
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# A fresh image may have stale or no lists: retry once after apt-get update.
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; then
    apt-get update -q >&2
    apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi
