#!/usr/bin/env bash
# Records the real GPU runs that `kernel-gate run --replay`, `kernel-gate demo` and the replay
# tests read. Run on a machine with nvcc, cuobjdump, compute-sanitizer and a GPU, from the
# repository root:
#
#   testdata/replay/record.sh OUTDIR KERNEL_GATE_BINARY [CASE...]
#
# For each case it makes a throwaway git repository of kernels/ and kernel-gate.yml whose
# main branch is the clean sources, commits the case's change on a branch (a define at the
# top of kernels/flash_fwd.cu, as a pull request would change it), and runs
#
#   kernel-gate run --base main --artifacts OUTDIR/CASE
#
# there: base (main) and head built side by side, every gate, unchanged-SASS skips. Cases
# (default: all):
#   clean              a comment-only change, run with --all so that every gate runs on it
#   spill              KG_FLASH_MIN_BLOCKS 16: __launch_bounds__ caps flash_fwd's registers
#   race               KG_DEFECT_RACE: a shared-memory read without a barrier
#   oob                KG_DEFECT_OOB: a write one row past the end of O
#   uninit             KG_DEFECT_UNINIT: a read of O before anything wrote it
#   divergent-barrier  KG_DEFECT_DIVERGENT_BARRIER: __syncthreads in a divergent branch
#   wrong-result       KG_DEFECT_WRONG: the softmax scale forgotten
#   slow5              KG_DEFECT_SLOW5: KG_SLOW_CYCLES of waiting per tile (a few % slower)
# Each OUTDIR/CASE is the run's artifacts directory (journal.json, gpu.csv, nvcc-version.txt,
# {base,head}/attention/{build.log,sass.txt.gz}, per target sanitize/, check.json, bench/),
# plus report.txt (what the run printed), exit.txt (its exit status) and RECORDED. The
# harness binaries are deleted and the SASS dumps compressed, to keep the recording small.
# KG_RECORD_TIMEOUT (seconds, default 590) bounds each case. With KG_RECORD_PLAIN=1 each case's
# commands.sh (the same processes as a plain script) is then run on a copy of the artifacts
# and timed, and CASE/overhead.txt gets both wall times (docs/overhead.md).
set -u
out=${1:?usage: record.sh OUTDIR KERNEL_GATE_BINARY [CASE...]}
kg=${2:?usage: record.sh OUTDIR KERNEL_GATE_BINARY [CASE...]}
shift 2
cases=${*:-clean spill race oob uninit divergent-barrier wrong-result slow5}
mkdir -p "$out"
out=$(cd "$out" && pwd)
kg=$(cd "$(dirname "$kg")" && pwd)/$(basename "$kg")

change() {
  case $1 in
    clean) echo "// clean: a comment-only change" ;;
    spill) echo "#define KG_FLASH_MIN_BLOCKS 16" ;;
    race) echo "#define KG_DEFECT_RACE" ;;
    oob) echo "#define KG_DEFECT_OOB" ;;
    uninit) echo "#define KG_DEFECT_UNINIT" ;;
    divergent-barrier) echo "#define KG_DEFECT_DIVERGENT_BARRIER" ;;
    wrong-result) echo "#define KG_DEFECT_WRONG" ;;
    slow5) echo "#define KG_DEFECT_SLOW5" ;;
    *) echo "unknown case $1" >&2; return 1 ;;
  esac
}

repo=$(mktemp -d)/repo
mkdir -p "$repo"
cp -r kernels kernel-gate.yml "$repo/"
cd "$repo" || exit 2
git init -q && git add -A && git -c user.name=kg -c user.email=kg@localhost commit -qm "clean sources" && git branch -M main

for c in $cases; do
  line=$(change "$c") || exit 2
  git checkout -q -B "case-$c" main
  sed -i "1i $line" kernels/flash_fwd.cu
  git -c user.name=kg -c user.email=kg@localhost commit -qam "$c"
  extra=""
  [ "$c" = clean ] && extra="--all"
  d="$out/$c"
  rm -rf "$d"
  echo "== $c: kernel-gate run --base main $extra" >&2
  timeout -s KILL "${KG_RECORD_TIMEOUT:-590}" "$kg" run --base main --artifacts "$d" $extra >"$out/report-$c.txt" 2>"$out/progress-$c.txt"
  echo "exit=$?" >"$out/exit-$c.txt"
  mkdir -p "$d"
  mv "$out/report-$c.txt" "$d/report.txt"
  mv "$out/progress-$c.txt" "$d/progress.txt"
  mv "$out/exit-$c.txt" "$d/exit.txt"
  printf 'recorded %s on %s (driver %s), nvcc %s, by testdata/replay/record.sh (case %s: %s)\n' "$(date -u +%F)" \
    "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" \
    "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)" \
    "$(nvcc --version | sed -n 's/.*, V//p')" "$c" "$line" >"$d/RECORDED"
  if [ -n "${KG_RECORD_PLAIN:-}" ] && [ -f "$d/commands.sh" ]; then
    rm -rf "$d.plain" && cp -r "$d" "$d.plain"
    sed "s|$d/|$d.plain/|g" "$d/commands.sh" >"$d.plain/commands.sh"
    start=$(date +%s.%N)
    timeout -s KILL "${KG_RECORD_TIMEOUT:-590}" sh "$d.plain/commands.sh"
    rc=$?
    end=$(date +%s.%N)
    python3 - "$d/journal.json" "$start" "$end" "$rc" >"$d/overhead.txt" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
plain = float(sys.argv[3]) - float(sys.argv[2])
kg = j["wall_seconds"]
print(f"kernel-gate run wall {kg:.1f} s (own CPU {j['own_cpu_seconds']:.2f} s); plain script wall {plain:.1f} s (exit {sys.argv[4]}); "
      f"difference {kg - plain:+.1f} s = {100 * (kg - plain) / kg:+.1f}% of kernel-gate's wall time")
PY
    rm -rf "$d.plain"
  fi
  find "$d" -type f -name harness -delete
  find "$d" -type f -name sass.txt -exec gzip -9n {} +
  git checkout -q main
done
rm -rf "$(dirname "$repo")"
