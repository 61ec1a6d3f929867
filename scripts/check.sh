#!/usr/bin/env bash
# Run the whole test suite (unit, property, launcher and C integration tests)
# against the OxMPI installed in PREFIX, and print a summary.
# Usage: scripts/check.sh PREFIX        (extra arguments go to `cargo test`)
# Exit status: that of the tests.
set -uo pipefail

PREFIX=${1:?usage: scripts/check.sh PREFIX [cargo test args...]}
shift
PREFIX=$(cd "$PREFIX" && pwd) || exit 1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CARGO=${CARGO:-cargo}
for tool in bin/mpicc bin/mpirun; do
    if [[ ! -x "$PREFIX/$tool" ]]; then
        echo "check: $PREFIX/$tool not found; run 'make install PREFIX=$PREFIX' first" >&2
        exit 1
    fi
done
export OXMPI_PREFIX=$PREFIX

log=$(mktemp "${TMPDIR:-/tmp}/oxmpi-check.XXXXXX")
trap 'rm -f "$log"' EXIT
start=$(date +%s)
# The test-release profile (Cargo.toml): release without LTO, much quicker to link; the
# library under test is PREFIX's release build.
echo "check: cargo test --workspace --profile test-release (OXMPI_PREFIX=$PREFIX)"
(cd "$ROOT" && "$CARGO" test --workspace --profile test-release --no-fail-fast "$@") 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
elapsed=$(($(date +%s) - start))
# The multi-host tests create network-namespace hosts (as root); remove them.
if [[ $(id -u) -eq 0 ]]; then
    "$ROOT/tests/netns/down.sh" || true
fi

# Sum the "test result:" lines of every test binary.
read -r passed failed ignored < <(awk '
    /^test result:/ {
        for (i = 1; i <= NF; i++) {
            if ($(i+1) ~ /^passed/)  p += $i
            if ($(i+1) ~ /^failed/)  f += $i
            if ($(i+1) ~ /^ignored/) g += $i
        }
    }
    END { printf "%d %d %d\n", p, f, g }' "$log")
echo
echo "================ check summary ================"
echo "tests passed: $passed   failed: $failed   ignored: $ignored   (${elapsed} s)"
if ((failed > 0)); then
    echo "failed tests:"
    grep -E '^test .* \.\.\. FAILED$' "$log" | sed -e 's/^test /  /' -e 's/ \.\.\. FAILED$//'
fi
if ((status != 0 && passed + failed == 0)); then
    echo "no test results: the build failed (see the errors above)"
fi
if ((status == 0)); then
    echo "result: PASS"
else
    echo "result: FAIL (cargo test exit status $status)"
fi
exit "$status"
