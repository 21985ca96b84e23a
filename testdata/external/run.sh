#!/usr/bin/env bash
# Gates two public repositories live, as a new user would (issue 21): on a machine with a GPU,
# nvcc, cuobjdump, compute-sanitizer, ncu, cmake, and python3 with PyTorch and Triton, from
# the repository root, with a kernel-gate binary built there
# (CGO_ENABLED=0 go build -o kernel-gate ./cmd/kernel-gate):
#
#   testdata/external/run.sh OUTDIR [CASE...]
#
# Each repository is testdata/external/<owner>-<repo>/ (SOURCE.md says what was copied from
# where): its files at their upstream paths under src/, the harness a user writes under
# bench/ (kernel-gate's kernels/kg_bench.py and kg_bench.h are copied beside it, as the docs
# say), and kernel-gate.yml. For each case this script makes a throwaway git repository of
# that directory whose main branch is the upstream files, commits the case's change on a
# branch (as a pull request would), and runs there
#
#   kernel-gate run --config kernel-gate.yml --base main --artifacts OUTDIR/CASE [--all]
#
# Cases (default: all, the first two side by side, then the others one after the other,
# so that the timings share the GPU with nothing):
#   liger-int32   Liger-Kernel's RMSNorm as it was before its fix #804 (head.patch, the
#                 upstream diff reversed): _rms_norm_forward_kernel's program id is int32
#                 again, so row × stride overflows past 2^31 elements (the huge shape).
#                 Expect: correctness fails on the huge shape (an illegal address or wrong
#                 rows); the sanitizer (small shapes) passes; speedup is skipped.
#   hgemm-race    cuda_hgemm's mmaAsyncStage3Kernel without the __syncthreads() between the
#                 warps' stores of C to shared memory and the reads of other warps' rows
#                 (race.patch, PLANTED: the repository has one commit). Expect: racecheck
#                 finds the shared-memory hazard at src/src/mma/mma_async_stage3.cu.
#   hgemm-clean   a comment appended to mma_async_stage3.cu, --all: every gate on the real
#                 repository (A/A). Expect: every gate passes (speedup: pass or inconclusive).
#   liger-clean   a comment appended to rms_norm.py, --all: the same for Liger-Kernel.
#                 Predicted: _block_rms_norm_forward_kernel fails correctness on qk-huge in
#                 both Liger cases: #804 left its row index int32, and it still is at the
#                 newest upstream commit (SOURCE.md), a bug of the repository's own.
#   llmc-layernorm  llm.c's LayerNorm backward across its real commit 7d0891f6 "Fully
#                 deterministic layernorm (slight perf loss)" (head.patch: the upstream diff
#                 of train_gpt2.cu, layernorm_backward_kernel8 → kernel9). Expect: every
#                 gate before speedup passes; speedup finds layernorm_backward slower, with
#                 an explanation and a base-vs-head Nsight Compute profile.
#
# OUTDIR/CASE is the run's artifacts directory (replayable with kernel-gate run --replay),
# plus report.txt (what it printed), progress.txt (its stderr), exit.txt, wall.txt (seconds)
# and RECORDED (GPU, driver, toolkit and versions). Binaries are deleted and SASS dumps
# compressed, as testdata/replay/record.sh does. OUTDIR/env.txt has the machine's tools.
# At the end everything is packed into OUTDIR/external.tar.gz, laid out for
#   tar xzf external.tar.gz -C testdata/external      (<repo>/recorded/<case>/, recorded-env.txt)
# (split into parts of 15 MiB when larger: cat them back together), and the directories are
# removed, unless KG_EXTERNAL_KEEP=1; OUTDIR/summary.txt lists each case's exit status and wall
# time.
#
# Time: each case is killed after its bound (KG_EXTERNAL_SCALE multiplies them, default 1):
# the pair 150 s, then 130 s, 170 s and 240 s: 690 s, under 12 minutes in all (each case
# alone: its own bound). Configs bound the A/B timing
# (bench.wall_budget) so that a case ends before its bound.
set -u
usage="usage: testdata/external/run.sh OUTDIR [liger-int32|hgemm-race|hgemm-clean|liger-clean|llmc-layernorm ...]"
out=${1:?$usage}
shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
kg=${KG_BINARY:-$root/kernel-gate}
[ -x "$kg" ] || { echo "run.sh: no kernel-gate binary at $kg (CGO_ENABLED=0 go build -o kernel-gate ./cmd/kernel-gate)" >&2; exit 2; }
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
scale=${KG_EXTERNAL_SCALE:-1}

# case CASE: "DIR|CHANGE|FLAGS|SECONDS" (| as tabs would merge an empty FLAGS away). CHANGE is "patch:FILE" (git apply
# --directory=src of DIR/FILE: the patches are upstream-relative) or "append:PATH:LINE".
case_of() {
  case $1 in
    liger-int32) printf 'linkedin-Liger-Kernel|patch:head.patch||150\n' ;;
    hgemm-race) printf 'Bruce-Lee-LY-cuda_hgemm|patch:race.patch||150\n' ;;
    hgemm-clean) printf 'Bruce-Lee-LY-cuda_hgemm|append:src/src/mma/mma_async_stage3.cu:// clean: a comment-only change|--all|130\n' ;;
    liger-clean) printf 'linkedin-Liger-Kernel|append:src/src/liger_kernel/ops/rms_norm.py:# clean: a comment-only change|--all|170\n' ;;
    llmc-layernorm) printf 'karpathy-llm.c|patch:head.patch||240\n' ;;
    *) echo "run.sh: unknown case $1; $usage" >&2; return 1 ;;
  esac
}

# one CASE: builds the throwaway repository, runs kernel-gate there, keeps OUTDIR/CASE.
one() {
  local c=$1 spec dir change flags secs tmp repo d start end rc
  spec=$(case_of "$c") || return 2
  IFS='|' read -r dir change flags secs <<<"$spec"
  secs=$(awk -v s="$secs" -v k="$scale" 'BEGIN { printf "%d", s * k }')
  tmp=$(mktemp -d) || return 3
  repo=$tmp/$dir
  d=$out/$c
  rm -rf "$d"
  cp -r "$here/$dir" "$repo" || return 3
  cp "$root/kernels/kg_bench.py" "$root/kernels/kg_bench.h" "$repo/bench/" || return 3
  printf 'build/\n__pycache__/\n' >"$repo/.gitignore"
  (
    cd "$repo" || exit 3
    git init -q && git add -A && git -c user.name=kg -c user.email=kg@localhost commit -qm "upstream sources" && git branch -M main &&
      git checkout -q -b "case-$c" || exit 3
    case $change in
      patch:*) git apply --directory=src "${change#patch:}" || { echo "run.sh: $c: ${change#patch:} does not apply" >&2; exit 3; } ;;
      append:*)
        spec=${change#append:}
        printf '%s\n' "${spec#*:}" >>"${spec%%:*}" ;;
    esac
    git -c user.name=kg -c user.email=kg@localhost commit -qam "$c" || exit 3
  ) || { mkdir -p "$d" && echo "exit=3 (the throwaway repository could not be made)" >"$d/exit.txt"; rm -rf "$tmp"; return 3; }
  echo "== $c: kernel-gate run --config kernel-gate.yml --base main $flags (in $dir, $change; killed after ${secs}s)" >&2
  start=$(date +%s.%N)
  # shellcheck disable=SC2086 # $flags is flags, split on purpose
  (cd "$repo" && exec timeout -s KILL "$secs" "$kg" run --config kernel-gate.yml --base main $flags --artifacts "$d" \
    >"$d.report.txt" 2>"$d.progress.txt")
  rc=$?
  end=$(date +%s.%N)
  mkdir -p "$d"
  mv "$d.report.txt" "$d/report.txt"
  mv "$d.progress.txt" "$d/progress.txt"
  echo "exit=$rc" >"$d/exit.txt"
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f\n", b - a }' >"$d/wall.txt"
  printf 'recorded %s on %s (driver %s), nvcc %s, %s, by testdata/external/run.sh (case %s: %s, %s %s)\n' "$(date -u +%F)" \
    "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" \
    "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)" \
    "$(nvcc --version 2>/dev/null | sed -n 's/.*, V//p')" \
    "$(case $dir in
      linkedin-*) python3 -c 'import torch, triton; print("PyTorch", torch.__version__ + ", Triton", triton.__version__)' 2>&1 | tail -1 ;;
      karpathy-*) make --version 2>/dev/null | head -1 ;;
      *) cmake --version 2>/dev/null | head -1 ;;
    esac)" "$c" "$dir" "$change" "$flags" >"$d/RECORDED"
  # No binaries in a recording (a .so, .cubin, executable): the SASS dumps say what they held.
  find "$d" -type f -exec sh -c 'for f; do [ "$(head -c 4 "$f" | od -An -c | tr -d " ")" = 177ELF ] && rm -f "$f"; done' sh {} +
  find "$d" -type f -name sass.txt -exec gzip -9n {} +
  rm -rf "$tmp"
  echo "== $c: exit $rc after $(cat "$d/wall.txt") s" >&2
  return 0
}

cases=${*:-liger-int32 hgemm-race hgemm-clean liger-clean llmc-layernorm}
for c in $cases; do case_of "$c" >/dev/null || exit 2; done

# The machine's tools, asked beside the first cases (importing PyTorch takes seconds).
{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.max.sm,memory.total --format=csv 2>&1 | sed 's/^/nvidia-smi: /'
  nvcc --version 2>&1 | tail -2 | sed 's/^/nvcc: /'
  cmake --version 2>&1 | head -1 | sed 's/^/cmake: /'
  ncu --version 2>&1 | tail -1 | sed 's/^/ncu: /'
  compute-sanitizer --version 2>&1 | tail -1 | sed 's/^/compute-sanitizer: /'
  python3 -c 'import sys, torch, triton; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)' 2>&1 | tail -1 | sed 's/^/python: /'
  python3 -c 'import packaging; print("packaging", packaging.__version__)' 2>&1 | tail -1 | sed 's/^/python: /'
  "$kg" version 2>&1 | sed 's/^/kernel-gate: /'
} >"$out/env.txt" &
envpid=$!

# The defect cases run side by side (neither times anything: their first failed gate stops
# the target before the speedup gate); the A/A cases, which time, one at a time.
pair=() rest=()
for c in $cases; do
  case $c in liger-int32 | hgemm-race) pair+=("$c") ;; *) rest+=("$c") ;; esac
done
pids=()
for c in "${pair[@]}"; do one "$c" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done
wait "$envpid"
for c in "${rest[@]}"; do one "$c"; done

{
  for c in $cases; do
    printf '%s %s wall=%ss\n' "$c" "$(cat "$out/$c/exit.txt" 2>/dev/null || echo exit=?)" "$(cat "$out/$c/wall.txt" 2>/dev/null || echo ?)"
  done
} >"$out/summary.txt"
cat "$out/summary.txt" >&2

if [ -z "${KG_EXTERNAL_KEEP:-}" ]; then
  # Laid out as testdata/external keeps the captures: tar xzf external.tar.gz -C testdata/external
  # gives <repo>/recorded/<case>/ beside each repository's config (pipeline/external_test.go).
  transform=(--transform 's,^env\.txt,recorded-env.txt,' --transform 's,^summary\.txt,recorded-summary.txt,')
  for c in $cases; do
    IFS='|' read -r dir _ <<<"$(case_of "$c")"
    transform+=(--transform "s,^$c\(/\|\$\),$dir/recorded/$c\1,")
  done
  # shellcheck disable=SC2086 # $cases are directory names, split on purpose
  (cd "$out" && tar czf external.tar.gz "${transform[@]}" env.txt summary.txt $cases) || exit 3
  size=$(stat -c %s "$out/external.tar.gz")
  if [ "$size" -gt $((15 << 20)) ]; then
    split -b 15M -d -a 1 "$out/external.tar.gz" "$out/external.tar.gz.part" && rm -f "$out/external.tar.gz"
    parts=("$out"/external.tar.gz.part*)
    echo "run.sh: external.tar.gz is $size bytes: split into ${#parts[@]} parts (cat them back together)" >&2
  fi
  # shellcheck disable=SC2086
  (cd "$out" && rm -rf env.txt $cases)
fi
ls -l "$out" >&2
