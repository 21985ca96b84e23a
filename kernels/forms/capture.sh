#!/usr/bin/env bash
# Captures, once, the raw tool output that kernel-gate's parsers for issue 14's target forms
# (torch load(), setup.py, CMake, Triton) are written and tested against. Needs no
# kernel-gate: only a GPU, the CUDA toolkit (nvcc, cuobjdump, compute-sanitizer), python3
# with PyTorch and Triton, cmake and ninja. Run from anywhere:
#
#   kernels/forms/capture.sh OUTDIR
#
# Each step's output goes to its own file in OUTDIR: the exact command on the first line
# ("$ ..."), then what it printed (stdout and stderr together, or split into NAME.stdout.txt
# and NAME.stderr.txt where the split matters), then "exit=N" on the last line (124 or 137:
# killed by its timeout). A failed step does not stop the script. Large dumps (SASS) are
# gzipped whole, header and footer included. Builds happen in a copy of kernels/ under a
# temporary directory (KG_CAPTURE_KEEP=1 keeps it), never in this checkout; built binaries
# are not copied to OUTDIR. INDEX.txt lists every file with its exit status.
#
# What it records, with the flags kernel-gate uses (NVCC_APPEND_FLAGS="-lineinfo
# -Xptxas=-v" for every build; the sanitizer flags of `kernel-gate sanitize`):
#   versions-*            nvidia-smi's GPU, nvcc, cuobjdump, compute-sanitizer, python, torch,
#                         triton, cmake, ninja; nvcc-append-flags: what nvcc itself prints
#                         with NVCC_APPEND_FLAGS set
#   torch-load-*          load() (kernels/torch/kg_harness.py) with verbose=False (as users
#                         call it: the check run's stdout/stderr) and verbose=True; the .so
#                         files under TORCH_EXTENSIONS_DIR, build.ninja, cuobjdump
#                         --list-elf, --dump-resource-usage, --dump-sass (gzipped)
#   setup-*               python3 setup.py build_ext --inplace, the same cuobjdump dumps,
#                         the harness with KG_TORCH_FORM=setup
#   cmake-*               configure with and without NVCC_APPEND_FLAGS (compiler
#                         identification), the build (--verbose), the harness, cuobjdump
#   triton-*              kernels/triton/softmax.py with TRITON_DUMP_PTXAS_LOG=1 and a fresh
#                         TRITON_CACHE_DIR: stdout/stderr, the cache's files, its metadata
#                         .json files, cuobjdump of each .cubin; memcheck of the clean kernel
#                         and of KG_DEFECT="oob"
#   sm80-*                flash_fwd.cu as a .so with sm_80 SASS + compute_80 PTX, and with
#                         compute_80 PTX only: --list-elf, --list-ptx (no SASS for the GPU)
#   san-*                 compute-sanitizer on the torch harness (KG_MODE=sanitize, shape
#                         small): memcheck (--leak-check full --padding 4096), racecheck,
#                         initcheck, synccheck × clean / KG_DEFECT_OOB × PyTorch's caching
#                         allocator on / PYTORCH_NO_CUDA_MEMORY_CACHING=1, with --log-file
#                         (NAME.log: the report; NAME.txt: the program's own output); a few
#                         without --log-file, and with --xml --save
#   glued-*               a harness whose last output line has no newline (the sanitizer's
#                         "========= ERROR SUMMARY" lands on that line), four tools without
#                         --log-file, memcheck with it
# Budget: about 6 minutes on an H100 (builds run side by side, then the sanitizer runs
# KG_CAPTURE_JOBS at a time, default 6).
set -u
out=${1:?usage: kernels/forms/capture.sh OUTDIR}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
[ -f "$repo/kernels/flash_fwd.cu" ] || { echo "capture.sh: $repo/kernels/flash_fwd.cu not found" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/kg-capture.XXXXXX") || exit 2
if [ -z "${KG_CAPTURE_KEEP:-}" ]; then trap 'rm -rf "$W"' EXIT; else echo "capture.sh: work directory $W is kept" >&2; fi
jobs_max=${KG_CAPTURE_JOBS:-6}
APPEND='-lineinfo -Xptxas=-v'
start=$(date +%s)

# Trees: clean sources, and the OOB defect as the recorder plants it (a define on top of
# kernels/flash_fwd.cu); the Triton OOB defect as a constant; a harness that glues.
C=$W/clean
B=$W/oob
T=$W/triton-oob
for d in "$C" "$B" "$T"; do mkdir -p "$d" && cp -r "$repo/kernels" "$d/" && rm -rf "$d/kernels/build"; done
sed -i '1i #define KG_DEFECT_OOB' "$B/kernels/flash_fwd.cu"
sed -i 's/^KG_DEFECT = ""$/KG_DEFECT = "oob"/' "$T/kernels/triton/softmax.py"
grep -q '^KG_DEFECT = "oob"$' "$T/kernels/triton/softmax.py" || echo "capture.sh: could not plant KG_DEFECT=oob in softmax.py" >&2
# The glued case: after the harness ends, one line on stdout with no newline, as a PyTorch
# extension's progress output can leave it.
cat >"$C/kernels/forms/glue_harness.py" <<'PY'
import atexit, runpy, sys
atexit.register(lambda: (sys.stdout.write("kg_harness: done, no newline"), sys.stdout.flush()))
sys.argv = ["kernels/torch/kg_harness.py"]
runpy.run_path("kernels/torch/kg_harness.py", run_name="__main__")
PY

# footer FILE RC: "exit=RC" on a line of its own.
footer() {
  if [ -s "$1" ] && [ "$(tail -c1 "$1" | od -An -c | tr -d ' ')" != '\n' ]; then echo >>"$1"; fi
  echo "exit=$2" >>"$1"
}

# step NAME SECONDS CMD: CMD (bash -c, in $W) with stdout and stderr together into NAME.txt.
step() {
  local f="$out/$1.txt"
  printf '$ %s\n' "$3" >"$f"
  (cd "$W" && timeout -k 10 "$2" bash -c "$3") >>"$f" 2>&1
  footer "$f" $?
}

# split NAME SECONDS CMD: as step, stdout into NAME.stdout.txt and stderr into NAME.stderr.txt.
split() {
  local o="$out/$1.stdout.txt" e="$out/$1.stderr.txt"
  printf '$ %s\n' "$3" >"$o"
  printf '$ %s\n' "$3" >"$e"
  (cd "$W" && timeout -k 10 "$2" bash -c "$3") >>"$o" 2>>"$e"
  local rc=$?
  footer "$o" $rc
  footer "$e" $rc
}

# gz NAME SECONDS CMD: as step, then NAME.txt gzipped to NAME.txt.gz.
gz() { step "$@" && gzip -9nf "$out/$1.txt"; }

# throttle: wait until fewer than jobs_max background steps run.
throttle() { while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do sleep 1; done; }

# dumps PREFIX FIND_CMD: cuobjdump --list-elf, --list-ptx, --dump-resource-usage and
# --dump-sass of every file FIND_CMD prints.
dumps() {
  step "$1-list-elf" 60 "for f in \$($2); do echo \"## \$f\"; cuobjdump --list-elf \"\$f\"; echo \"## exit \$?\"; done"
  step "$1-list-ptx" 60 "for f in \$($2); do echo \"## \$f\"; cuobjdump --list-ptx \"\$f\"; echo \"## exit \$?\"; done"
  step "$1-resource-usage" 60 "for f in \$($2); do echo \"## \$f\"; cuobjdump --dump-resource-usage \"\$f\"; echo \"## exit \$?\"; done"
  gz "$1-sass" 120 "for f in \$($2); do echo \"## \$f\"; cuobjdump --dump-sass \"\$f\"; echo \"## exit \$?\"; done"
}

echo "capture.sh: versions" >&2
step versions-gpu 30 "nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv"
step versions-nvcc 30 "command -v nvcc; nvcc --version; echo '## nvcc --help on its environment variables'; nvcc --help | grep -n -i -B2 -A8 'APPEND_FLAGS\\|PREPEND_FLAGS'"
step versions-cuobjdump 30 "cuobjdump --version"
step versions-compute-sanitizer 30 "compute-sanitizer --version"
step versions-python 120 "python3 --version; python3 -c 'import torch; print(\"torch\", torch.__version__, \"cuda\", torch.version.cuda, \"cudnn\", torch.backends.cudnn.version(), \"arch_list\", torch.cuda.get_arch_list(), \"device\", torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0))'; python3 -c 'import triton; print(\"triton\", triton.__version__)'; python3 -c 'import setuptools; print(\"setuptools\", setuptools.__version__)'; python3 -m pip --version"
step versions-cmake 30 "cmake --version; ninja --version; make --version | head -1"
step versions-env 10 "env | grep -E '^(CUDA|NVCC|TORCH|TRITON|PYTORCH|CUPY|NUMBA|LD_LIBRARY_PATH|PATH=)' | sort"
step nvcc-append-flags 120 "cd $C && NVCC_APPEND_FLAGS='$APPEND' nvcc -arch=native -c kernels/softmax.cu -o $W/softmax.o; echo '## NVCC_PREPEND_FLAGS too'; NVCC_PREPEND_FLAGS='-O3' NVCC_APPEND_FLAGS='$APPEND' nvcc -arch=native -c kernels/softmax.cu -o $W/softmax2.o"

echo "capture.sh: builds, side by side" >&2
(
  split torch-load-quiet 600 "cd $C && NVCC_APPEND_FLAGS='$APPEND' TORCH_EXTENSIONS_DIR=$W/te KG_MODE=check KG_SHAPES=small KG_ROUNDS=1 KG_OUT=$out/torch-load-check.json python3 kernels/torch/kg_harness.py"
  step torch-load-files 30 "find $W/te -type f | sort | xargs ls -l"
  step torch-load-build-ninja 30 "cat \$(find $W/te -name build.ninja)"
  dumps torch-load "find $W/te -name '*.so'"
) &
(
  split torch-load-verbose 600 "cd $C && NVCC_APPEND_FLAGS='$APPEND' TORCH_EXTENSIONS_DIR=$W/te-verbose python3 -c 'import sys; sys.path.insert(0, \"kernels/torch\"); import kg_harness; print(kg_harness.load_extension(\"load\", verbose=True))'"
) &
(
  split torch-load-oob-build 600 "cd $B && NVCC_APPEND_FLAGS='$APPEND' TORCH_EXTENSIONS_DIR=$W/te-oob python3 -c 'import sys; sys.path.insert(0, \"kernels/torch\"); import kg_harness; print(kg_harness.load_extension(\"load\"))'"
) &
(
  split setup-build 600 "cd $C/kernels/torch && NVCC_APPEND_FLAGS='$APPEND' python3 setup.py build_ext --inplace"
  step setup-files 30 "find $C/kernels/torch -type f | sort | xargs ls -l"
  dumps setup "find $C/kernels/torch -maxdepth 1 -name '*.so'"
  split setup-check 300 "cd $C && NVCC_APPEND_FLAGS='$APPEND' KG_TORCH_FORM=setup KG_MODE=check KG_SHAPES=small KG_ROUNDS=1 KG_OUT=$out/setup-check.json python3 kernels/torch/kg_harness.py"
) &
(
  step cmake-configure-plain 120 "cd $C && cmake -S kernels/cmake -B $W/cmake-plain"
  split cmake-configure 120 "cd $C && NVCC_APPEND_FLAGS='$APPEND' cmake -S kernels/cmake -B $W/cmake"
  step cmake-cache 10 "grep -E '^CMAKE_CUDA|^CMAKE_BUILD_TYPE|^CMAKE_GENERATOR' $W/cmake/CMakeCache.txt; grep -E 'CMAKE_CUDA_(COMPILER_ID|COMPILER_VERSION|ARCHITECTURES)' $W/cmake/CMakeFiles/*/CMakeCUDACompiler.cmake"
  split cmake-build 600 "cd $C && NVCC_APPEND_FLAGS='$APPEND' cmake --build $W/cmake --verbose -j 8"
  dumps cmake "find $W/cmake -maxdepth 1 -type f -name kg_harness"
  split cmake-check 300 "cd $C && KG_MODE=check KG_KERNELS=row_softmax KG_SHAPES=small KG_ROUNDS=1 KG_OUT=$out/cmake-check.json $W/cmake/kg_harness"
) &
(
  split triton-check 300 "cd $C && TRITON_DUMP_PTXAS_LOG=1 TRITON_CACHE_DIR=$W/triton KG_MODE=check KG_SHAPES=small KG_ROUNDS=1 KG_OUT=$out/triton-check.json python3 kernels/triton/softmax.py"
  step triton-files 30 "find $W/triton -type f | sort | xargs ls -l"
  step triton-metadata 30 "for f in \$(find $W/triton -name '*.json' | sort); do echo \"## \$f\"; cat \"\$f\"; echo; done"
  dumps triton "find $W/triton -name '*.cubin'"
  split triton-check-again 300 "cd $C && TRITON_DUMP_PTXAS_LOG=1 TRITON_CACHE_DIR=$W/triton KG_MODE=check KG_SHAPES=small KG_ROUNDS=1 KG_OUT=$W/triton-check2.json python3 kernels/triton/softmax.py"
) &
(
  step sm80-build 300 "cd $C && nvcc -shared -Xcompiler -fPIC -lineinfo -Xptxas=-v -gencode arch=compute_80,code=sm_80 -gencode arch=compute_80,code=compute_80 -o $W/sm80-sass-ptx.so kernels/flash_fwd.cu && nvcc -shared -Xcompiler -fPIC -lineinfo -gencode arch=compute_80,code=compute_80 -o $W/sm80-ptx-only.so kernels/flash_fwd.cu"
  step sm80-list-elf 30 "for f in $W/sm80-sass-ptx.so $W/sm80-ptx-only.so; do echo \"## \$f\"; cuobjdump --list-elf \"\$f\"; echo \"## exit \$?\"; done"
  step sm80-list-ptx 30 "for f in $W/sm80-sass-ptx.so $W/sm80-ptx-only.so; do echo \"## \$f\"; cuobjdump --list-ptx \"\$f\"; echo \"## exit \$?\"; done"
  step sm80-resource-usage 30 "for f in $W/sm80-sass-ptx.so $W/sm80-ptx-only.so; do echo \"## \$f\"; cuobjdump --dump-resource-usage \"\$f\"; echo \"## exit \$?\"; done"
) &
wait
echo "capture.sh: builds done after $(($(date +%s) - start)) s; sanitizer runs" >&2

# san NAME TREE TEXDIR TOOL CACHING LOG [HARNESS] [EXTRA]: compute-sanitizer with kernel-gate's
# flags on the torch harness in sanitize mode. CACHING=nocache sets
# PYTORCH_NO_CUDA_MEMORY_CACHING=1; LOG=log adds --log-file NAME.log, xml adds --xml --save
# NAME.xml, logxml both.
san() {
  local name=$1 tree=$2 te=$3 tool=$4 caching=$5 log=$6 harness=${7:-kernels/torch/kg_harness.py} extra=${8:-}
  local env="NVCC_APPEND_FLAGS='$APPEND' TORCH_EXTENSIONS_DIR=$te"
  [ "$caching" = nocache ] && env="$env PYTORCH_NO_CUDA_MEMORY_CACHING=1"
  local flags="--tool $tool --error-exitcode 17 --print-limit 10000"
  [ "$tool" = memcheck ] && flags="$flags --leak-check full --padding 4096"
  case $log in
    log) flags="$flags --log-file $out/$name.log" ;;
    xml) flags="$flags --xml --save $out/$name.xml" ;;
    logxml) flags="$flags --xml --save $out/$name.xml --log-file $out/$name.log" ;;
  esac
  throttle
  step "$name" 240 "cd $tree && $env $extra KG_MODE=sanitize KG_SHAPES=small KG_OUT=$out/$name.json compute-sanitizer $flags python3 $harness" &
}

for tool in memcheck racecheck initcheck synccheck; do
  for tree in clean oob; do
    if [ $tree = clean ]; then dir=$C te=$W/te; else dir=$B te=$W/te-oob; fi
    san "san-$tool-$tree-cache" "$dir" "$te" $tool cache log
    san "san-$tool-$tree-nocache" "$dir" "$te" $tool nocache log
  done
done
# Without --log-file: the report and the program's output on one stream.
san san-memcheck-clean-nocache-stdout "$C" "$W/te" memcheck nocache none
san san-memcheck-oob-nocache-stdout "$B" "$W/te-oob" memcheck nocache none
san san-memcheck-clean-cache-stdout "$C" "$W/te" memcheck cache none
# XML, and XML with --log-file (what does the log hold then?).
san san-memcheck-oob-nocache-xml "$B" "$W/te-oob" memcheck nocache xml
san san-memcheck-clean-nocache-xml "$C" "$W/te" memcheck nocache xml
san san-memcheck-oob-nocache-logxml "$B" "$W/te-oob" memcheck nocache logxml
# The glued summary: the program's last line has no newline.
for tool in memcheck racecheck initcheck synccheck; do
  san "glued-$tool" "$C" "$W/te" $tool nocache none kernels/forms/glue_harness.py
done
san glued-memcheck-logfile "$C" "$W/te" memcheck nocache log kernels/forms/glue_harness.py
# Triton under memcheck: clean and with the unmasked load (reads past the end of x).
san san-triton-memcheck-clean "$C" "$W/te" memcheck nocache log kernels/triton/softmax.py "TRITON_CACHE_DIR=$W/triton"
san san-triton-memcheck-oob "$T" "$W/te" memcheck nocache log kernels/triton/softmax.py "TRITON_CACHE_DIR=$W/triton-oob"
san san-triton-initcheck-clean "$C" "$W/te" initcheck nocache log kernels/triton/softmax.py "TRITON_CACHE_DIR=$W/triton"
wait

echo "capture.sh: done after $(($(date +%s) - start)) s" >&2
{
  echo "kernels/forms/capture.sh $(date -u +%FT%TZ), $(($(date +%s) - start)) s; last line of each file (exit=N: the step's exit status)"
  for f in "$out"/*; do
    case $f in
      */INDEX.txt) continue ;;
      *.gz) last=$(zcat "$f" | tail -n 1) ;;
      *.txt) last=$(tail -n 1 "$f") ;;
      *) last="($(wc -c <"$f") bytes)" ;;
    esac
    printf '%-48s %s\n' "$(basename "$f")" "$last"
  done
} >"$out/INDEX.txt"
cat "$out/INDEX.txt"
