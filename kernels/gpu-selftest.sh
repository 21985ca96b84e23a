#!/usr/bin/env bash
# For a developer with a GPU: runs `kernel-gate run` for real on this repository's kernels,
# clean and with every planted defect, and requires that the clean change passes every gate
# and each defect fails exactly its own gate. Needs Go, nvcc, cuobjdump, compute-sanitizer,
# ncu and python3 (or KG_BIN=path/to/kernel-gate instead of Go).
#
#   kernels/gpu-selftest.sh [OUTDIR]
#
# It records through testdata/replay/record.sh, so OUTDIR/<case>/ holds the same files as
# testdata/replay/<case>/ (copy them there to refresh what CI replays).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d)}
mkdir -p "$out"
# The GPU machines may have no Go: KG_BIN names a kernel-gate built elsewhere
# (CGO_ENABLED=0 go build -o kernel-gate ./cmd/kernel-gate).
if [ -n "${KG_BIN:-}" ]; then cp "$KG_BIN" "$out/kernel-gate"; else go build -o "$out/kernel-gate" ./cmd/kernel-gate; fi

# The gates each case must fail (and no other); clean must pass all of them.
declare -A want=(
  [clean]=""
  [spill]="ptxas"
  [race]="sanitizer"
  [oob]="sanitizer"
  [uninit]="sanitizer"
  [divergent-barrier]="sanitizer"
  [wrong-result]="correctness"
  [slow5]="speedup"
)
# Only these cases (record.sh's others are the forms', checked by their own tests).
testdata/replay/record.sh "$out" "$out/kernel-gate" "${!want[@]}"
fail=0
for c in "${!want[@]}"; do
  got=$(python3 - "$out/$c/result.json" "$c" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
failed = [g["name"] for g in r["gates"] if g["verdict"] == "fail"]
if sys.argv[2] == "clean":
    failed += [g["name"] + "(not passed)" for g in r["gates"] if g["verdict"] != "pass"]
print(",".join(failed))
PY
  ) || got="(no result)"
  if [ "$got" = "${want[$c]}" ]; then
    echo "ok    $c: failed [${got}]"
  else
    echo "FAIL  $c: failed [${got}], want [${want[$c]}]"
    fail=1
  fi
done
exit $fail
