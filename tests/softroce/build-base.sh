#!/usr/bin/env bash
# tests/softroce/build-base.sh: prepare what every Soft-RoCE VM boots: the Debian kernel
# (fetched with apt-get download), the modules rdma_rxe needs, and the base initramfs
# (busybox + verbs tools + the rxe provider + guest init). Everything lands in
# ${SOFTROCE_CACHE:-${TMPDIR:-/tmp}/softroce-cache}; a stamp over the inputs makes a warm
# call cost a few milliseconds, and flock serializes concurrent callers. run-in-vm.sh calls
# this itself. Prints the cache directory on stdout.
#
# Knobs: SOFTROCE_KPKG=linux-image-6.1.0-N-amd64 pins the kernel package (old ABIs vanish
# from the mirror, so pin only together with a kept cache).
set -euo pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${SOFTROCE_CACHE:-${TMPDIR:-/tmp}/softroce-cache}
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)

log() { echo "[softroce] build-base: $*" >&2; }
die() { log "error: $*"; exit 1; }

for t in qemu-system-x86_64 busybox cpio objcopy readelf xz dpkg-deb apt-get ldd flock \
    ibv_devinfo ib_send_lat rdma; do
    command -v "$t" >/dev/null || die "$t not found: run tests/softroce/deps.sh (as root)"
done

exec 9>"$CACHE/.lock"
flock 9

# Modules to load, in addition to their .modinfo dependencies. crc32_generic is not a
# declared dependency of rdma_rxe, but rxe_register_device() needs the "crc32" shash and
# the guest has no modprobe to autoload it: without it `rdma link add` says ENOENT.
MOD_ROOTS="virtio_pci virtio_net crc32_generic rdma_rxe ib_uverbs rdma_ucm"
# Module subtrees to extract (tar must decompress the whole .deb anyway; this keeps the
# cache small).
MOD_DIRS="drivers/virtio drivers/net/virtio_net.ko drivers/net/net_failover.ko net/core
net/ipv4 net/ipv6 crypto drivers/infiniband fs/configfs lib"

# Guest tools: every binary of these packages goes into the base, with its libraries.
TOOL_PKGS="ibverbs-utils perftest rdmacm-utils"

# --- kernel package --------------------------------------------------------------------
resolve_kpkg() {
    apt-cache depends linux-image-amd64 2>/dev/null |
        awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'
}
if [[ -n ${SOFTROCE_KPKG:-} ]]; then
    kpkg=$SOFTROCE_KPKG
elif [[ -s $CACHE/kpkg ]]; then
    kpkg=$(cat "$CACHE/kpkg")   # stick to the kernel we have: no apt look-up when warm
else
    kpkg=$(resolve_kpkg)
    if [[ -z $kpkg ]]; then
        log "apt-cache knows no linux-image-amd64: apt-get update"
        apt-get update -q >&2 || true
        kpkg=$(resolve_kpkg)
    fi
    [[ -n $kpkg ]] || die "cannot resolve linux-image-amd64 (apt-cache depends)"
fi

# The stamp covers every input; a change to any of them rebuilds the base (3-6 s).
mkstamp() {
    { echo "$kpkg"; dpkg-query -W busybox-static iproute2 libibverbs1 ibverbs-providers \
        librdmacm1 libc6 libgcc-s1 $TOOL_PKGS 2>/dev/null
      cat "$HERE/build-base.sh" "$HERE/guest-init.sh" "$HERE/agent" "$HERE/agentd"; } |
        md5sum | cut -d' ' -f1
}
stamp=$(mkstamp)
if [[ -s $CACHE/stamp && $(cat "$CACHE/stamp") == "$stamp" && -s $CACHE/base.cpio ]]; then
    echo "$CACHE"
    exit 0
fi

kdir=$CACHE/kernel/$kpkg
if [[ ! -s $kdir/.done ]]; then
    t0=$SECONDS
    deb=$(ls "$CACHE"/"${kpkg}"_*.deb 2>/dev/null | head -n1 || true)
    if [[ -z $deb ]]; then
        log "downloading $kpkg"
        # (Sandbox::User=root: the cache dir may be unreadable to _apt, which only warns)
        if ! (cd "$CACHE" && apt-get download -q -o APT::Sandbox::User=root "$kpkg" >&2); then
            # Stale lists name a superseded ABI that the mirror has dropped: update, and
            # resolve again unless the package is pinned.
            log "download failed (stale apt lists?): apt-get update and retry"
            apt-get update -q >&2 || true
            if [[ -z ${SOFTROCE_KPKG:-} ]]; then
                kpkg=$(resolve_kpkg)
                [[ -n $kpkg ]] || die "cannot resolve linux-image-amd64 (apt-cache depends)"
                kdir=$CACHE/kernel/$kpkg
            fi
            (cd "$CACHE" && apt-get download -q -o APT::Sandbox::User=root "$kpkg" >&2) ||
                die "apt-get download $kpkg failed"
        fi
        deb=$(ls "$CACHE"/"${kpkg}"_*.deb | head -n1)
    fi
    log "extracting $(basename "$deb")"
    rm -rf "$kdir"
    mkdir -p "$kdir"
    pats=("./boot/vmlinuz-*" "./lib/modules/*/modules.builtin")
    for d in $MOD_DIRS; do pats+=("./lib/modules/*/kernel/$d"); done
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$kdir" --wildcards "${pats[@]}"
    vmlinuz=$(ls "$kdir"/boot/vmlinuz-* | head -n1)
    [[ -s $vmlinuz ]] || die "no vmlinuz in $deb"

    # The bzImage carries an xz-compressed ELF vmlinux. qemu can boot that ELF through
    # its PVH entry point, which skips SeaBIOS and the in-guest xz decompression (about
    # 5 s under TCG). Keep it only if it has the PVH note (Xen note type 0x12).
    off=$(grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | head -n1 | cut -d: -f1 || true)
    notes=
    # (xz stops reading at the end of the stream, so tail's SIGPIPE must not count)
    if [[ -n $off ]] && xz -dc --single-stream <(tail -c +$((off + 1)) "$vmlinuz") \
        >"$kdir/vmlinux" 2>/dev/null; then
        notes=$(readelf -n "$kdir/vmlinux" 2>/dev/null || true)
    fi
    if [[ $notes == *"Xen"*"(0x00000012)"* ]]; then
        log "PVH vmlinux extracted"
    else
        rm -f "$kdir/vmlinux"
        log "no PVH vmlinux: will boot the bzImage (slower)"
    fi
    echo "$kpkg" >"$kdir/.done"
    log "kernel ready in $((SECONDS - t0)) s"
fi
echo "$kpkg" >"$CACHE/kpkg"
stamp=$(mkstamp)   # kpkg may have been resolved again

# --- base initramfs --------------------------------------------------------------------
t0=$SECONDS
stage=$CACHE/base.stage
rm -rf "$stage"
mkdir -p "$stage"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc,proc,sys,dev,run,tmp,root,job,softroce,lib/modules/softroce}
# Merged /usr like the host, so the paths ldd reports resolve in the guest unchanged.
# (lib/modules was made above through the real dir; fix the symlinks now.)
mv "$stage/lib/modules" "$stage/usr/lib/modules" && rmdir "$stage/lib"
for l in bin sbin lib lib64; do ln -s "usr/$l" "$stage/$l"; done
chmod 1777 "$stage/tmp"

declare -A have=()
# put FILE: copy FILE (following symlinks) to the same path in the stage, with the
# directory part canonicalized (the host's /lib -> /usr/lib), and record it.
put() {
    local f=$1 d
    d=$(realpath "$(dirname "$f")")/$(basename "$f")
    [[ -n ${have[$d]:-} ]] && return 0
    have[$d]=1
    mkdir -p "$stage$(dirname "$d")"
    cp -L "$f" "$stage$d"
}
# put_elf FILE: FILE and every library ldd lists for it (ldd gives the whole closure).
# mawk has no \s, so pick absolute paths field by field.
put_elf() {
    put "$1"
    local lib
    for lib in $(ldd "$1" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'); do
        put "$lib"
    done
}

# busybox, plus one symlink per applet unless a real tool takes the name
put /bin/busybox
for a in $(busybox --list); do
    [[ -e $stage/usr/bin/$a ]] || ln -s busybox "$stage/usr/bin/$a"
done
rm -f "$stage/usr/bin/rdma"
put_elf "$(command -v rdma)"
for p in $TOOL_PKGS; do
    for f in $(dpkg -L "$p" | grep -E '^/usr/s?bin/|^/s?bin/'); do
        [[ -f $f && -x $f ]] || continue
        rm -f "$stage/usr/bin/$(basename "$f")"   # beats a busybox applet of that name
        put_elf "$f"
    done
done
# The rxe provider is dlopen()ed by libibverbs, so ldd never shows it. Ship only the
# rxe .driver file: the others would each print "couldn't load driver".
prov=$(dpkg -L ibverbs-providers | grep '/librxe-rdmav[0-9]*\.so$' | head -n1)
[[ -n $prov ]] || die "librxe provider not found in ibverbs-providers"
put_elf "$prov"
mkdir -p "$stage/etc/libibverbs.d"
cp /etc/libibverbs.d/rxe.driver "$stage/etc/libibverbs.d/"
# Libraries nearly every job needs (Rust binaries link libgcc_s), and the glibc stubs
# (libnss_files, libpthread, ...) older binaries name; ldd would add them per run anyway.
for f in libgcc_s.so.1 libnss_files.so.2 libnss_dns.so.2 libpthread.so.0 libdl.so.2 \
    librt.so.1 libresolv.so.2; do
    [[ -e /lib/x86_64-linux-gnu/$f ]] && put_elf "/lib/x86_64-linux-gnu/$f"
done

# Modules: map names to files, resolve .modinfo depends= (the .deb has no modules.dep,
# depmod runs in its postinst), write the load order.
mdir=$(ls -d "$kdir"/lib/modules/* | head -n1)
declare -A modfile=() builtin=() seen=()
while IFS= read -r f; do
    n=$(basename "$f" .ko)
    modfile[${n//-/_}]=$f
done < <(find "$mdir/kernel" -name '*.ko')
while IFS= read -r f; do
    n=$(basename "$f" .ko)
    builtin[${n//-/_}]=1
done <"$mdir/modules.builtin"
order=()
add_mod() {
    local m=${1//-/_} d deps
    [[ -n ${seen[$m]:-} || -n ${builtin[$m]:-} ]] && return 0
    seen[$m]=1
    [[ -n ${modfile[$m]:-} ]] || die "module $m: not in the extracted subtrees ($MOD_DIRS)"
    # (objcopy writes through a temp file beside its output: never give it /dev/stdout)
    objcopy -O binary --only-section=.modinfo "${modfile[$m]}" "$CACHE/modinfo.tmp"
    deps=$(tr '\0' '\n' <"$CACHE/modinfo.tmp" | sed -n 's/^depends=//p' | tr ',' ' ')
    for d in $deps; do add_mod "$d"; done
    order+=("$m")
}
for m in $MOD_ROOTS; do add_mod "$m"; done
for m in "${order[@]}"; do
    cp "${modfile[$m]}" "$stage/usr/lib/modules/softroce/$m.ko"
done
printf '%s\n' "${order[@]}" >"$stage/usr/lib/modules/softroce/order"

# Guest side of the harness.
install -m 755 "$HERE/guest-init.sh" "$stage/init"
install -m 755 "$HERE/agent" "$stage/softroce/agent"
install -m 755 "$HERE/agentd" "$stage/softroce/agentd"
cat >"$stage/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
printf 'root:x:0:\nnogroup:x:65534:\n' >"$stage/etc/group"
printf 'hosts: files dns\npasswd: files\ngroup: files\n' >"$stage/etc/nsswitch.conf"

(cd "$stage" && find . | sort | cpio -o -H newc --quiet -R 0:0) >"$CACHE/base.cpio.tmp"
mv "$CACHE/base.cpio.tmp" "$CACHE/base.cpio"
# What the base holds, as guest paths, so run-in-vm.sh adds only what is missing.
(cd "$stage" && find . -type f | sed 's/^\.//' | sort) >"$CACHE/base.files"
# Where to find the kernel for this base.
if [[ -s $kdir/vmlinux ]]; then echo "$kdir/vmlinux" >"$CACHE/kernel.path"
else ls "$kdir"/boot/vmlinuz-* | head -n1 >"$CACHE/kernel.path"; fi
rm -rf "$stage"
echo "$stamp" >"$CACHE/stamp"
log "base initramfs ($(du -h "$CACHE/base.cpio" | cut -f1), modules: ${order[*]}) in $((SECONDS - t0)) s"
echo "$CACHE"
