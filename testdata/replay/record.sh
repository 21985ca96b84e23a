#!/usr/bin/env bash
# Records the GPU runs that `kernel-gate demo` and the replay tests read. Run on a machine with
# nvcc, compute-sanitizer and a GPU, from the repository root:
#
#   testdata/replay/record.sh OUTDIR KERNEL_GATE_BINARY [CASE...]
#
# Cases (default: all): clean, and one planted defect each, built from the same sources by a
# define: spill, race, oob, uninit, divergent-barrier, wrong-result. For each case OUTDIR/CASE/
# gets, as kernel-gate reads them:
#   build.log   `nvcc --version` and the nvcc -Xptxas -v build of kernels/*.cu for sm_89 and
#               sm_90a, with the shell's xtrace lines
#   sass.txt.gz cuobjdump --dump-sass of those objects (2 MB of text, so compressed)
#   sanitize/   `kernel-gate sanitize --artifacts` of kernels/harness.cu built for this GPU:
#               each tool's log and XML and the harness's launch counts
#   check.json  the harness in KG_MODE=check (3 checks per kernel × shape)
#   RECORDED    where and when
# and the results of kernel-gate running live on that machine (live-*.json, live-exit.txt):
# the gates fed straight from nvcc and cuobjdump through pipes, nvcc asked for its version.
set -u
out=${1:?usage: record.sh OUTDIR KERNEL_GATE_BINARY [CASE...]}
kg=${2:?usage: record.sh OUTDIR KERNEL_GATE_BINARY [CASE...]}
shift 2
cases=${*:-clean spill race oob uninit divergent-barrier wrong-result}
mkdir -p "$out"
archs="-gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a"
kernels="flash_fwd gemm_wmma softmax"

flags() {
  case $1 in
    clean) echo "" ;;
    spill) echo "-DKG_FLASH_MIN_BLOCKS=16" ;;  # __launch_bounds__ caps flash_fwd at 32 registers
    race) echo "-DKG_DEFECT_RACE" ;;
    oob) echo "-DKG_DEFECT_OOB" ;;
    uninit) echo "-DKG_DEFECT_UNINIT" ;;
    divergent-barrier) echo "-DKG_DEFECT_DIVERGENT_BARRIER" ;;
    wrong-result) echo "-DKG_DEFECT_WRONG" ;;
    *) echo "unknown case $1" >&2; exit 2 ;;
  esac
}

bin=$(mktemp -d)
for c in $cases; do  # harness builds in parallel: nvcc is single-threaded
  nvcc -O3 -lineinfo -arch=native $(flags "$c") -o "$bin/h_$c" kernels/harness.cu 2>"$bin/build_$c.txt" &
done
wait

for c in $cases; do
  extra=$(flags "$c")
  d="$out/$c"
  obj="$bin/obj_$c"
  mkdir -p "$d" "$obj"
  {
    echo "+ nvcc --version"
    nvcc --version
    for k in $kernels; do
      echo "+ nvcc $archs -lineinfo -Xptxas -v $extra -c kernels/$k.cu -o $k.o"
      nvcc $archs -lineinfo -Xptxas -v $extra -c "kernels/$k.cu" -o "$obj/$k.o"
    done
  } >"$d/build.log" 2>&1
  for k in $kernels; do (cd "$obj" && cuobjdump --dump-sass "$k.o"); done 2>&1 | gzip -9 -n >"$d/sass.txt.gz"
  printf 'recorded %s on %s (driver %s), nvcc %s, by testdata/replay/record.sh\n' "$(date -u +%F)" \
    "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" \
    "$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)" \
    "$(nvcc --version | sed -n 's/.*, V//p')" >"$d/RECORDED"

  # Live: the same gates reading the tools' output as it is produced.
  : >"$d/live-exit.txt"
  for k in $kernels; do
    nvcc $archs -lineinfo -Xptxas -v $extra -c "kernels/$k.cu" -o "$obj/$k.o" 2>&1
  done | "$kg" ptxas --config kernel-gate.yml --format json --out "$d/live-ptxas.json" -
  echo "ptxas exit=$?" >>"$d/live-exit.txt"
  for k in $kernels; do cuobjdump --dump-sass "$obj/$k.o"; done |
    "$kg" sass --config kernel-gate.yml --format json --out "$d/live-sass.json" --sass -
  echo "sass exit=$?" >>"$d/live-exit.txt"
  KG_SHAPES=small "$kg" sanitize --config kernel-gate.yml --artifacts "$d/sanitize" --format json \
    --out "$d/live-sanitizer.json" -- "$bin/h_$c"
  echo "sanitize exit=$?" >>"$d/live-exit.txt"
  KG_MODE=check KG_ROUNDS=3 KG_OUT="$d/check.json" timeout -s KILL 300 "$bin/h_$c" >"$bin/check_$c.log" 2>&1
  echo "harness check exit=$?" >>"$d/live-exit.txt"
  "$kg" check --config kernel-gate.yml --format json --out "$d/live-check.json" "$d/check.json"
  echo "check exit=$?" >>"$d/live-exit.txt"
done
rm -rf "$bin"
