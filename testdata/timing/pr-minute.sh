#!/usr/bin/env bash
# Measures a pull request's verdict end to end (issue 22, docs/overhead.md): the wall time and
# the per-stage table of `kernel-gate run` on this repository's kernels, 3 runs of each case.
# Run on a GPU machine with nvcc, cuobjdump, compute-sanitizer, ncu, python3 with PyTorch (the
# torch case), from the repository root, with a kernel-gate built from this tree:
#
#   go build -o kernel-gate ./cmd/kernel-gate     # wherever Go is
#   testdata/timing/pr-minute.sh OUTDIR [./kernel-gate]
#
# It makes a throwaway git repository of kernels/, kernel-gate.yml and .gitignore whose main
# branch is the sources as they are and whose branch "pr" adds a comment on top of
# kernels/flash_fwd.cu (as record.sh's clean case does), and there runs, PR_MINUTE_RUNS times each (default 3):
#   cpp-all        kernel-gate run --base main --all                   (the C++ harness, 3 targets)
#   cpp-unchanged  kernel-gate run --base main                          (SASS unchanged: GPU steps skipped but the check)
#   torch-all      kernel-gate run --config kernels/torch/kernel-gate.yml --base main --all
#                  (flash_fwd built by load() in the Python harness: base's and head's first runs build it, cold)
#   cpp-cached     cpp-unchanged with --base-cache OUTDIR/base-cache-cpp: its first run builds
#                  base and saves it, the next ones restore base's side and build head alone
#   torch-cached   torch-all with --base-cache OUTDIR/base-cache: its first run builds base and
#                  saves it, the next ones restore base's side (issue 22's "base side cached")
# PR_MINUTE_CASES names the cases to run, in turn (default: all five, in this order), and
# PR_MINUTE_RUNS how many turns (default 3).
# Python's bytecode: where PYTHONDONTWRITEBYTECODE is set (the device machines: their torch
# is installed without bytecode, so every Python start compiles torch's sources, ~2 s of
# `import torch`), the runs get PYTHONPYCACHEPREFIX=OUTDIR/pyc, filled first by one
# `import torch` without PYTHONDONTWRITEBYTECODE: what a pip-installed torch, which has its
# bytecode, reads (docs/speedup-serving.md "Python's bytecode"). PR_MINUTE_PYC=0 leaves the
# environment as it is. machine.txt says which.
# Each run: OUTDIR/CASE-N/ is its artifacts directory (journal.json, result.json with the
# stages and the critical path), plus wall.txt (seconds, from the shell), exit.txt, progress.txt
# (the progress lines) and report.txt (the text report with "where the time went"). The cases
# take turns (each case's first run, then the second runs, then the third), so that every case
# is measured at least once if time runs short.
# OUTDIR/summary.tsv has one line per run (case, run, exit, wall s, the critical path's
# stages, what the run did with the base cache); OUTDIR/stages.tsv every stage of every run; OUTDIR/machine.txt the GPU, driver,
# nvcc, cores and kernel-gate's version. The whole stays within 9 minutes: every run is killed
# at PR_MINUTE_BUDGET seconds after the start (default 520) or after PR_MINUTE_RUN_TIMEOUT
# seconds (default 240), whichever comes first (its exit is then 137); a run with less than
# 30 s left is skipped, and summary.tsv says so.
set -u
out=${1:?usage: pr-minute.sh OUTDIR [KERNEL_GATE_BINARY]}
kg=${2:-./kernel-gate}
budget=${PR_MINUTE_BUDGET:-520}
run_timeout=${PR_MINUTE_RUN_TIMEOUT:-240}
[ -x "$kg" ] || { echo "pr-minute.sh: $kg is not an executable kernel-gate (go build -o kernel-gate ./cmd/kernel-gate)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
kg=$(cd "$(dirname "$kg")" && pwd)/$(basename "$kg")
started=$(date +%s)

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "kernel-gate: $("$kg" version 2>&1 | head -1)"
  echo "gpu: $(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total,memory.free --format=csv,noheader 2>&1 | head -1)"
  echo "nvcc: $(nvcc --version 2>&1 | tail -1)"
  echo "cores: $(nproc)"
  echo "torch: $(python3 -c 'import torch; print(torch.__version__)' 2>&1 | tail -1)"
} >"$out/machine.txt"
if [ "${PR_MINUTE_PYC:-1}" != 0 ] && [ -n "${PYTHONDONTWRITEBYTECODE:-}" ] && [ -z "${PYTHONPYCACHEPREFIX:-}" ]; then
  mkdir -p "$out/pyc"
  env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX="$out/pyc" python3 -c 'import torch, torch.utils.cpp_extension' >/dev/null 2>&1
  export PYTHONPYCACHEPREFIX="$out/pyc"
  echo "python bytecode: PYTHONDONTWRITEBYTECODE is set; the runs read PYTHONPYCACHEPREFIX=$out/pyc ($(find "$out/pyc" -name '*.pyc' | wc -l) files, filled by one import torch)" >>"$out/machine.txt"
else
  echo "python bytecode: the environment's (PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-} PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-})" >>"$out/machine.txt"
fi
cat "$out/machine.txt" >&2

repo=$(mktemp -d)/repo
mkdir -p "$repo"
# The files git tracks or would track (no build outputs); a copy without git history takes
# the directories as they are.
if git rev-parse --git-dir >/dev/null 2>&1; then
  # (only those there: a copy of the tree may come with an index older than its files)
  git ls-files -z --cached --others --exclude-standard -- kernels kernel-gate.yml .gitignore |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done | xargs -0 cp --parents -t "$repo" || exit 2
else
  cp -r kernels kernel-gate.yml "$repo"/ || exit 2
  [ -e .gitignore ] && cp .gitignore "$repo"/
fi
cd "$repo" || exit 2
git init -q && git add -A && git -c user.name=kg -c user.email=kg@localhost commit -qm "clean sources" && git branch -M main
git checkout -q -b pr
sed -i '1i // pr-minute: a comment-only change' kernels/flash_fwd.cu
git -c user.name=kg -c user.email=kg@localhost commit -qam "pr"

printf 'case\trun\texit\twall_s\tcritical_path\tbase_cache\n' >"$out/summary.tsv"
printf 'case\trun\tid\tname\ttarget\tside\tstart_s\twall_s\n' >"$out/stages.tsv"

# one CASE N ARGS...: one timed run.
one() {
  local c=$1 n=$2
  shift 2
  local d="$out/$c-$n"
  local now=$(($(date +%s) - started))
  local left=$((budget - now))
  if [ "$left" -lt 30 ]; then
    printf '%s\t%s\tskipped\t\tnot run: %ss spent of the %ss budget\n' "$c" "$n" "$now" "$budget" >>"$out/summary.tsv"
    echo "== $c $n: skipped (${now}s spent)" >&2
    return
  fi
  [ "$left" -gt "$run_timeout" ] && left=$run_timeout
  rm -rf "$d"
  echo "== $c $n: kernel-gate run $* (${now}s spent)" >&2
  local t0 t1
  t0=$(date +%s.%N)
  timeout -s KILL "$left" "$kg" run "$@" --artifacts "$d" --format json >"$out/$c-$n.json" 2>"$out/$c-$n.progress"
  local code=$?
  t1=$(date +%s.%N)
  mkdir -p "$d"
  mv "$out/$c-$n.json" "$d/result-printed.json"
  mv "$out/$c-$n.progress" "$d/progress.txt"
  echo "$code" >"$d/exit.txt"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }' >"$d/wall.txt"
  "$kg" report --format text "$d/result-printed.json" >"$d/report.txt" 2>&1
  python3 - "$c" "$n" "$code" "$(cat "$d/wall.txt")" "$d/result-printed.json" "$out" <<'PY'
import json, sys
case, n, code, wall, path, out = sys.argv[1:7]
try:
    r = json.load(open(path))
except Exception as e:
    r = {"stages": [], "critical_path": [f"no result: {e}"]}
with open(f"{out}/summary.tsv", "a") as f:
    bc = r.get("base_cache") or {}
    f.write(f"{case}\t{n}\t{code}\t{wall}\t{' > '.join(r.get('critical_path') or [])}\t{bc.get('action', '')}\n")
with open(f"{out}/stages.tsv", "a") as f:
    for s in r.get("stages") or []:
        f.write(f"{case}\t{n}\t{s['id']}\t{s['name']}\t{s.get('target', '')}\t{s.get('side', '')}\t{s.get('start_s', 0)}\t{s['wall_s']}\n")
PY
  echo "   exit $code, $(cat "$d/wall.txt") s" >&2
}

cases=${PR_MINUTE_CASES:-cpp-all cpp-unchanged cpp-cached torch-all torch-cached}
for n in $(seq 1 "${PR_MINUTE_RUNS:-3}"); do
  for c in $cases; do
    case $c in
    cpp-all) one cpp-all "$n" --base main --all ;;
    cpp-unchanged) one cpp-unchanged "$n" --base main ;;
    cpp-cached) one cpp-cached "$n" --base main --base-cache "$out/base-cache-cpp" ;;
    torch-all) one torch-all "$n" --config kernels/torch/kernel-gate.yml --base main --all ;;
    torch-cached) one torch-cached "$n" --config kernels/torch/kernel-gate.yml --base main --all --base-cache "$out/base-cache" ;;
    *) echo "pr-minute.sh: unknown case $c in PR_MINUTE_CASES" >&2; exit 2 ;;
    esac
  done
done

cd / && rm -rf "$(dirname "$repo")"
echo "== done in $(($(date +%s) - started))s: $out/summary.tsv" >&2
# column(1) is not on every GPU machine (it was missing on the H200 of 2026-11-27).
if command -v column >/dev/null; then column -t -s $'\t' "$out/summary.tsv" >&2; else cat "$out/summary.tsv" >&2; fi
