#!/usr/bin/env bash
# For a developer with a GPU: runs kernel-gate for real on this repository's kernels, clean and
# with every planted defect, and requires that the clean build passes every gate and each
# defect fails exactly the gates it should. Needs Go, nvcc, cuobjdump and compute-sanitizer.
#
#   kernels/gpu-selftest.sh [OUTDIR]
#
# It records through testdata/replay/record.sh, so OUTDIR/<case>/ holds the same files as
# testdata/replay/<case>/ (copy them there to refresh what CI replays).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d)}
go build -o "$out/kernel-gate" ./action
testdata/replay/record.sh "$out" "$out/kernel-gate"

# Exit codes each case must produce: ptxas sass sanitize harness-check check.
declare -A want=(
  [clean]="0 0 0 0 0"
  [spill]="1 1 0 0 0"
  [race]="0 0 1 0 0"
  [oob]="0 0 1 0 0"
  [uninit]="0 0 1 0 0"
  [divergent-barrier]="0 0 1 0 0"
  [wrong-result]="0 0 0 0 1"
)
fail=0
for c in "${!want[@]}"; do
  got=$(sed 's/.*exit=//' "$out/$c/live-exit.txt" | tr '\n' ' ' | sed 's/ $//')
  if [ "$got" = "${want[$c]}" ]; then
    echo "ok    $c: $got"
  else
    echo "FAIL  $c: exit codes (ptxas sass sanitize harness check) $got, want ${want[$c]}"
    fail=1
  fi
done
exit $fail
