#!/usr/bin/env python3
"""layout.py STDERR NRANKS NNODES [PMI_VERSION STRACE]

Checks one job's stderr, which holds a line per rank from placed.sh ("placed: rank R node
NODE": where Slurm put the rank) and from OxMPI with OXMPI_VERBOSE=1 ("OxMPI rank R/N on
node X (host); shm to A (same node); tcp to B (other nodes; ...)"):
  * every rank 0..NRANKS-1 reported both lines, with size NRANKS;
  * OxMPI's node grouping equals Slurm's placement, on NNODES nodes (fake nodes share the
    host name, so a grouping by host name fails here);
  * each rank uses shm to exactly the other ranks of its node and TCP to all the others.
With PMI_VERSION and STRACE (rank 0's write/send calls): the first PMI request is the
`cmd=init pmi_version=V` the test asked for (and PMI-2 goes on with fullinit).
Prints one line: "ok: ..." or the reason it failed; exit status 0 or 1."""
import re
import sys


def expand(spec):
    out = set()
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-", 1)
            out.update(range(int(a), int(b) + 1))
        else:
            out.add(int(part))
    return out


def main():
    path, n, nnodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    text = open(path, errors="replace").read()
    placed, verbose = {}, {}
    for line in text.splitlines():
        m = re.search(r"placed: rank (\S+) node (\S+)", line)
        if m and m.group(1).isdigit():
            placed[int(m.group(1))] = m.group(2)
        m = re.search(r"OxMPI rank (\d+)/(\d+) on node (\d+) \([^)]*\)(.*)", line)
        if m:
            r, size, node, rest = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)
            shm = re.search(r"; shm to ([0-9,-]+) \(", rest)
            tcp = re.search(r"; tcp to ([0-9,-]+) \(", rest)
            verbose[r] = (size, node, expand(shm.group(1)) if shm else set(), expand(tcp.group(1)) if tcp else set(), line.strip())
    missing = [r for r in range(n) if r not in verbose]
    if missing:
        return f"no OXMPI_VERBOSE line from rank(s) {missing} (got {len(verbose)} of {n})"
    bad = [r for r in range(n) if verbose[r][0] != n]
    if bad:
        return f"rank {bad[0]} says size {verbose[bad[0]][0]}, expected {n}: {verbose[bad[0]][4]}"
    groups = {}
    for r in range(n):
        groups.setdefault(verbose[r][1], set()).add(r)
    if len(groups) != nnodes:
        return f"OxMPI sees {len(groups)} node(s), expected {nnodes}: " + "; ".join(f"node {k}: ranks {sorted(v)}" for k, v in sorted(groups.items()))
    if all(r in placed and placed[r] != "?" for r in range(n)):
        slurm = {}
        for r in range(n):
            slurm.setdefault(placed[r], set()).add(r)
        if sorted(map(sorted, slurm.values())) != sorted(map(sorted, groups.values())):
            return ("OxMPI's nodes differ from Slurm's placement: Slurm " + "; ".join(f"{k}: {sorted(v)}" for k, v in sorted(slurm.items()))
                    + " / OxMPI " + "; ".join(f"node {k}: {sorted(v)}" for k, v in sorted(groups.items())))
        where = "Slurm's placement"
    else:
        where = "(placement unknown: no placed.sh lines)"
    for r in range(n):
        _, node, shm, tcp, line = verbose[r]
        same = groups[node] - {r}
        other = set(range(n)) - groups[node]
        if shm != same or tcp != other:
            return f"rank {r}: expected shm to {sorted(same)} and tcp to {sorted(other)}: {line}"
    proto = ""
    if len(sys.argv) > 4:
        # OxMPI's verbose line names the protocol ("bootstrap PMI-2 (job 12.0)")
        want = sys.argv[4]
        said = {r: re.search(r"bootstrap PMI-(\d)", verbose[r][4]) for r in range(n)}
        wrong = [r for r in range(n) if said[r] and said[r].group(1) != want]
        if wrong:
            return f"rank {wrong[0]} says it bootstrapped with PMI-{said[wrong[0]].group(1)}, expected PMI-{want}"
        if all(said.values()):
            proto = f", all ranks say PMI-{want}"
    if len(sys.argv) > 5:
        want, strace = sys.argv[4], sys.argv[5]
        try:
            st = open(strace, errors="replace").read()
        except OSError as e:
            return f"no strace of rank 0 ({e})"
        m = re.search(r'(?:write|sendto|writev|sendmsg)\(\d+, [\[{]*"[^"]*cmd=init[ ;]pmi_version=(\d)', st)
        if not m:
            return f"rank 0 sent no PMI `cmd=init` (strace {strace})"
        if m.group(1) != want:
            return f"rank 0 spoke PMI-{m.group(1)}, expected PMI-{want} (first request: {m.group(0)[m.group(0).index('cmd='):]})"
        if want == "2" and "cmd=fullinit" not in st:
            return "rank 0 sent PMI-2 init but no fullinit"
        proto += f", rank 0 sent `cmd=init pmi_version={want}`"
    return "ok: " + "; ".join(f"node {k}: ranks {sorted(v)}" for k, v in sorted(groups.items())) + f" = {where}, shm within / tcp across nodes{proto}"


if __name__ == "__main__":
    msg = main()
    print(msg)
    sys.exit(0 if msg.startswith("ok:") else 1)
