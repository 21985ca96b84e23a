#!/usr/bin/env bash
# Records the real GPU runs that `kernel-gate run --replay`, `kernel-gate demo` and the replay
# tests read. Run on a machine with nvcc, cuobjdump, compute-sanitizer and a GPU (and, for
# the form cases, python3 with PyTorch and Triton, cmake and ninja), from the repository root:
#
#   testdata/replay/record.sh OUTDIR KERNEL_GATE_BINARY [CASE...]
#
# For each case it makes a throwaway git repository of kernels/ and kernel-gate.yml (the files
# git tracks or would track) whose main branch is the clean sources, commits the case's change
# on a branch (as a pull request would change it), and runs
#
#   kernel-gate run --base main --artifacts OUTDIR/CASE                    (the C++ harness)
#   kernel-gate run --config kernels/FORM/kernel-gate.yml --base main --artifacts OUTDIR/CASE
#                                                                        (a FORM-CASE case)
#
# there: base (main) and head built side by side, every gate, unchanged-SASS skips. Cases
# (default: all). The C++ harness (kernel-gate.yml, sources: kernels/harness.cpp, harness_device.cu and the kernel
# files), each a line added on top of kernels/flash_fwd.cu:
#   clean              a comment-only change, run with --all so that every gate runs on it
#   spill              KG_FLASH_MIN_BLOCKS 16: __launch_bounds__ caps flash_fwd's registers
#   race               KG_DEFECT_RACE: a shared-memory read without a barrier
#   oob                KG_DEFECT_OOB: a write one row past the end of O
#   uninit             KG_DEFECT_UNINIT: a read of O before anything wrote it
#   divergent-barrier  KG_DEFECT_DIVERGENT_BARRIER: __syncthreads in a divergent branch
#   wrong-result       KG_DEFECT_WRONG: the softmax scale forgotten
#   slow5              KG_DEFECT_SLOW5: KG_SLOW_CYCLES of waiting per tile (a few % slower)
#   occupancy          gemm_wmma's __launch_bounds__(128) becomes __maxnreg__(128): the same
#                      code with more registers (72 → 108 on sm_90a), past an occupancy step
#                      (7 → 4 blocks per SM): a pure occupancy regression (issue 24); run with
#                      --keep-going, so that gemm is still checked and timed
#                      (__maxnreg__(96) gave 96 registers, 5 blocks, and ran 8.7% faster)
# The forms of issue 14, each with its own config (kernels/FORM/kernel-gate.yml); -clean cases
# change a comment and run with --all:
#   torch-clean        flash_fwd as a PyTorch extension built by load() in the harness
#                      (kernels/torch/kg_harness.py): a comment on top of kernels/flash_fwd.cu
#   torch-oob          KG_DEFECT_OOB on top of flash_fwd.cu: memcheck must see the write past
#                      the end of O (PYTORCH_NO_CUDA_MEMORY_CACHING=1) at its source line
#   torch-spill        KG_FLASH_MIN_BLOCKS 16 on top of flash_fwd.cu: spills no log describes
#                      (load() prints nothing), found in the .so's resource usage and SASS
#   setup-clean        the same binding built by kernels/torch/setup.py: a comment on top of
#                      kernels/flash_fwd.cu
#   setup-wrong-result KG_DEFECT_WRONG on top of flash_fwd.cu: the correctness gate fails
#   cmake-clean        kernels/harness.cpp and the .cu files built by kernels/cmake/CMakeLists.txt, gated for
#                      row_softmax: a comment on top of kernels/softmax.cu
#   cmake-uninit       KG_DEFECT_SOFTMAX_UNINIT on top of kernels/softmax.cu: initcheck sees
#                      row_softmax read y before anything wrote it
#   cmake-ptx-only     CMAKE_CUDA_ARCHITECTURES native -> 80-virtual in the CMakeLists.txt:
#                      the executable holds PTX and no SASS for the GPU (it would JIT)
#   triton-clean       kernels/triton/softmax.py: a comment appended at its end
#   triton-wrong-result KG_DEFECT = "wrong-result" in softmax.py: the masked load pads with 0
#                      instead of -inf, and the correctness gate fails
# Each OUTDIR/CASE is the run's artifacts directory (journal.json, gpu.csv, nvcc-version.txt,
# {base,head}/<target>/{build.log,sass.txt.gz,sass/N.txt.gz}, per target sanitize/, check.json, bench/),
# plus report.txt (what the run printed), exit.txt (its exit status) and RECORDED. Binaries
# are deleted (harness executables and any ELF file: a form's .so, .o, .cubin, built
# executables) and the SASS dumps compressed, to keep the recording small; the size of each
# recording is printed at the end.
# KG_RECORD_TIMEOUT (seconds, default 590) bounds each case. With KG_RECORD_PLAIN=1 each case's
# commands.sh (the same processes as a plain script) is then run on a copy of the artifacts
# and timed, and CASE/overhead.txt gets both wall times (docs/overhead.md).
set -u
out=${1:?usage: record.sh OUTDIR KERNEL_GATE_BINARY [CASE...]}
kg=${2:?usage: record.sh OUTDIR KERNEL_GATE_BINARY [CASE...]}
shift 2
cases=${*:-clean spill race oob uninit divergent-barrier wrong-result slow5 torch-clean torch-oob torch-spill setup-clean setup-wrong-result cmake-clean cmake-uninit cmake-ptx-only triton-clean triton-wrong-result}
mkdir -p "$out"
out=$(cd "$out" && pwd)
kg=$(cd "$(dirname "$kg")" && pwd)/$(basename "$kg")

# change CASE: the one line added on top of FILE (printed as "FILE<TAB>LINE"), or for the
# cases that edit a file otherwise, "FILE<TAB>sed:EXPR" (a sed expression applied to it).
change() {
  # shellcheck disable=SC2016 # $a is sed's "append after the last line", not a variable
  case $1 in
    clean | torch-clean | setup-clean) printf 'kernels/flash_fwd.cu\t%s\n' "// clean: a comment-only change" ;;
    spill | torch-spill) printf 'kernels/flash_fwd.cu\t%s\n' "#define KG_FLASH_MIN_BLOCKS 16" ;;
    race) printf 'kernels/flash_fwd.cu\t%s\n' "#define KG_DEFECT_RACE" ;;
    oob | torch-oob) printf 'kernels/flash_fwd.cu\t%s\n' "#define KG_DEFECT_OOB" ;;
    uninit) printf 'kernels/flash_fwd.cu\t%s\n' "#define KG_DEFECT_UNINIT" ;;
    divergent-barrier) printf 'kernels/flash_fwd.cu\t%s\n' "#define KG_DEFECT_DIVERGENT_BARRIER" ;;
    wrong-result | setup-wrong-result) printf 'kernels/flash_fwd.cu\t%s\n' "#define KG_DEFECT_WRONG" ;;
    slow5) printf 'kernels/flash_fwd.cu\t%s\n' "#define KG_DEFECT_SLOW5" ;;
    occupancy) printf 'kernels/gemm_wmma.cu\t%s\n' 'sed:s/__launch_bounds__(128)/__maxnreg__(128)/' ;;
    cmake-clean) printf 'kernels/softmax.cu\t%s\n' "// clean: a comment-only change" ;;
    cmake-uninit) printf 'kernels/softmax.cu\t%s\n' "#define KG_DEFECT_SOFTMAX_UNINIT" ;;
    cmake-ptx-only) printf 'kernels/cmake/CMakeLists.txt\t%s\n' 'sed:s/set(CMAKE_CUDA_ARCHITECTURES native)/set(CMAKE_CUDA_ARCHITECTURES 80-virtual)/' ;;
    triton-clean) printf 'kernels/triton/softmax.py\t%s\n' 'sed:$a # clean: a comment-only change' ;;
    triton-wrong-result) printf 'kernels/triton/softmax.py\t%s\n' 'sed:s/^KG_DEFECT = ""$/KG_DEFECT = "wrong-result"/' ;;
    *) echo "unknown case $1" >&2; return 1 ;;
  esac
}

# config CASE: the --config a case runs with (none for the C++ harness's cases).
config() {
  case $1 in
    torch-* | setup-* | cmake-* | triton-*) echo "--config kernels/${1%%-*}/kernel-gate.yml" ;;
  esac
}

for c in $cases; do change "$c" >/dev/null || exit 2; done
repo=$(mktemp -d)/repo
mkdir -p "$repo"
# The files git tracks or would track (build outputs, caches and binaries stay behind),
# with the .gitignore that keeps the forms' build outputs out of the throwaway repository.
# Only those there: a copy of the tree may come with an index older than its files.
git ls-files -z --cached --others --exclude-standard -- kernels kernel-gate.yml .gitignore |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done | xargs -0 cp --parents -t "$repo" || exit 2
cd "$repo" || exit 2
git init -q && git add -A && git -c user.name=kg -c user.email=kg@localhost commit -qm "clean sources" && git branch -M main

for c in $cases; do
  what=$(change "$c") || exit 2
  file=${what%%$'\t'*}
  line=${what#*$'\t'}
  git checkout -q -B "case-$c" main
  before=$(cksum <"$file")
  case $line in
    sed:*) sed -i "${line#sed:}" "$file" ;;
    *) sed -i "1i $line" "$file" ;;
  esac
  if [ "$(cksum <"$file")" = "$before" ]; then
    echo "record.sh: case $c: $file is unchanged by \"$line\" (the file no longer has what the case edits)" >&2
    exit 2
  fi
  git -c user.name=kg -c user.email=kg@localhost commit -qam "$c"
  extra=$(config "$c")
  case $c in
    *clean) extra="$extra --all" ;;
    occupancy) extra="$extra --keep-going" ;; # gemm's GPU steps run after its ptxas gate fails: its timing and block size
  esac
  d="$out/$c"
  rm -rf "$d"
  echo "== $c: kernel-gate run $extra --base main ($file: $line)" >&2
  # shellcheck disable=SC2086 # $extra is flags, split on purpose
  timeout -s KILL "${KG_RECORD_TIMEOUT:-590}" "$kg" run $extra --base main --artifacts "$d" >"$out/report-$c.txt" 2>"$out/progress-$c.txt"
  echo "exit=$?" >"$out/exit-$c.txt"
  mkdir -p "$d"
  mv "$out/report-$c.txt" "$d/report.txt"
  mv "$out/progress-$c.txt" "$d/progress.txt"
  mv "$out/exit-$c.txt" "$d/exit.txt"
  versions=""
  case $c in torch-* | setup-* | triton-*)
    versions=", $(python3 -c 'import torch; print("PyTorch", torch.__version__)' 2>&1 | tail -1)"
    [ "${c%%-*}" = triton ] && versions="$versions, $(python3 -c 'import triton; print("Triton", triton.__version__)' 2>&1 | tail -1)" ;;
  esac
  case $c in cmake-*) versions=", $(cmake --version | head -1)" ;; esac
  printf 'recorded %s on %s (driver %s), nvcc %s%s, by testdata/replay/record.sh (case %s: %s: %s)\n' "$(date -u +%F)" \
    "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" \
    "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)" \
    "$(nvcc --version | sed -n 's/.*, V//p')" "$versions" "$c" "$file" "$line" >"$d/RECORDED"
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
  # Any other binary (a form's .so, .o, .cubin or executable, should the run's work
  # directory hold one): never committed.
  find "$d" -type f -exec sh -c 'for f; do [ "$(head -c 4 "$f" | od -An -c | tr -d " ")" = 177ELF ] && rm -f "$f"; done' sh {} +
  # The dumps: a binary's sass.txt, and each cubin's nvdisasm output (<binary>/sass/N.txt).
  find "$d" -type f \( -name sass.txt -o -path '*/sass/*.txt' \) -exec gzip -9n {} +
  git checkout -q -f main
  git clean -qfdx
done
rm -rf "$(dirname "$repo")"
for c in $cases; do echo "$(du -sh "$out/$c" | cut -f1) $out/$c" >&2; done
