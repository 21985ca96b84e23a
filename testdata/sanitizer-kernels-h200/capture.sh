#!/usr/bin/env bash
# Captures compute-sanitizer output for the planted defects in kernels/ (run on a GPU machine
# from the repository root):  testdata/sanitizer-kernels-h200/capture.sh OUTDIR
#
# Builds the harness (kernels/harness.cpp and the .cu files) once clean and once per defect (-DKG_DEFECT_...), then runs each
# tool on the harness in sanitize mode (one launch of flash_fwd on the small shape):
#   cs_<tool>_<case>.txt      text output, the command first ("+ ..."), the exit code last
#   xml_<tool>_<case>.xml     the same run's --xml --save record
#   xmlrun_<tool>_<case>.txt  what that XML run printed
# Also the harness's own check/bench output (harness_<mode>_<case>.json) and, with a
# kernel-gate binary, its live verdicts on the runs that must fail closed: a hung kernel
# (killed with its process group), a harness that aborts, a run that launches no kernel
# (kg_<case>.json, with the kept artifacts under kg_<case>/).
set -u
out=${1:?usage: capture.sh OUTDIR [KERNEL_GATE_BINARY]}
kg=${2:-}
mkdir -p "$out"; out=$(cd "$out" && pwd)
bin=$(mktemp -d)
build() { nvcc -O3 -lineinfo -arch=native "${@:2}" -o "$bin/h_$1" kernels/harness.cpp kernels/harness_cases.cpp kernels/harness_device.cu kernels/flash_fwd.cu kernels/gemm_wmma.cu kernels/softmax.cu 2>"$out/build_$1.txt"; }
build clean &
build race -DKG_DEFECT_RACE &
build oob -DKG_DEFECT_OOB &
build uninit -DKG_DEFECT_UNINIT &
build divergent -DKG_DEFECT_DIVERGENT_BARRIER &
build wrong -DKG_DEFECT_WRONG &
build hang -DKG_DEFECT_HANG &
build crash -DKG_DEFECT_CRASH &
wait
export KG_MODE=sanitize KG_KERNELS=flash_fwd KG_SHAPES=small

# run FILE CMD...: the command line, its output and exit code, killed after 120 s.
run() { local f=$1; shift; { echo "+ $*"; timeout -s KILL 120 "$@" 2>&1; echo "exit=$?"; } >"$out/$f"; }
cs() { # cs TOOL CASE [extra flags]
  local tool=$1 c=$2; shift 2
  local flags=(--tool "$tool" --print-limit 10000 "$@")
  [ "$tool" = memcheck ] && flags+=(--leak-check full)
  run "cs_${tool}_${c}.txt" compute-sanitizer "${flags[@]}" "$bin/h_$c"
  run "xmlrun_${tool}_${c}.txt" compute-sanitizer "${flags[@]}" --xml --save "$out/xml_${tool}_${c}.xml" "$bin/h_$c"
}
for tool in memcheck racecheck initcheck synccheck; do cs "$tool" clean; done
cs memcheck oob --padding 4096
cs racecheck race
cs initcheck uninit
cs synccheck divergent
cs memcheck crash
cs memcheck clean
# A kernel that never ends, killed by timeout after 20 s, under the sanitizer and without.
{ echo "+ timeout -s KILL 20 compute-sanitizer --tool memcheck h_hang"; timeout -s KILL 20 compute-sanitizer --tool memcheck "$bin/h_hang" 2>&1; echo "exit=$?"; } >"$out/cs_memcheck_hang.txt"
# A program that launches no kernel at all.
run cs_memcheck_nolaunch.txt env KG_KERNELS=none compute-sanitizer --tool memcheck --leak-check full "$bin/h_clean"

# The harness's own output: correctness of the clean and the wrong-result builds, timings.
unset KG_KERNELS KG_SHAPES
KG_MODE=check KG_ROUNDS=3 KG_OUT="$out/harness_check_clean.json" timeout -s KILL 300 "$bin/h_clean" >"$out/harness_check_clean.log" 2>&1; echo "exit=$?" >>"$out/harness_check_clean.log"
KG_MODE=check KG_ROUNDS=3 KG_OUT="$out/harness_check_wrong.json" timeout -s KILL 300 "$bin/h_wrong" >"$out/harness_check_wrong.log" 2>&1; echo "exit=$?" >>"$out/harness_check_wrong.log"
KG_MODE=bench KG_ROUNDS=3 KG_SAMPLES=20 KG_OUT="$out/harness_bench_clean.json" timeout -s KILL 300 "$bin/h_clean" >"$out/harness_bench_clean.log" 2>&1; echo "exit=$?" >>"$out/harness_bench_clean.log"
KG_MODE=sanitize KG_OUT="$out/harness_sanitize_clean.json" timeout -s KILL 60 "$bin/h_clean" >/dev/null 2>&1
if [ -n "$kg" ]; then
  kgs() { local c=$1; shift; { echo "+ kernel-gate sanitize $*"; "$kg" sanitize --config kernel-gate.yml --artifacts "$out/kg_$c" --format json --out "$out/kg_$c.json" "$@" 2>&1; echo "exit=$?"; } >"$out/kg_$c.txt"; }
  kgs hang --timeout 20s --tools memcheck,racecheck -- "$bin/h_hang"
  kgs crash --tools memcheck -- "$bin/h_crash"
  KG_KERNELS=none kgs nolaunch --tools memcheck -- "$bin/h_clean"
  kgs nonprotocol --tools memcheck -- /bin/true
fi
rm -rf "$bin"
