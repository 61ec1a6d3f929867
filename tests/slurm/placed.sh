#!/bin/sh
# placed.sh PROGRAM ARGS...: print where Slurm put this rank, then exec PROGRAM.
#   stderr: "placed: rank R node NODE" (PMI_RANK and SLURMD_NODENAME, "?" when unset)
# With PLACED_STRACE=FILE, rank 0 runs under strace (write and send calls only, seccomp-bpf so
# the rank is not slowed down), so the test can see which PMI version it spoke.
echo "placed: rank ${PMI_RANK:-?} node ${SLURMD_NODENAME:-?}" >&2
if [ "${PMI_RANK:-}" = 0 ] && [ -n "${PLACED_STRACE:-}" ]; then
    exec strace -f -qq --seccomp-bpf -e trace=write,sendto,sendmsg,writev -s 120 -o "$PLACED_STRACE" "$@"
fi
exec "$@"
