#!/usr/bin/env bash
# Measures the speedup gate's wall time on a GPU, one harness process per round against
# harnesses that serve their rounds (KG_MODE=serve), for docs/speedup-serving.md. Needs Go
# (or KG_BIN=path/to/kernel-gate), nvcc, and python3 with PyTorch for the Python rows
# (skipped without it). From the repository root, on one otherwise idle H100 or H200:
#
#   testdata/timing/measure-serve.sh [OUTDIR]
#
# It builds the harness (kernels/harness.cpp and the .cu files) five times: A, A' (a second build of the same source, so A/A
# compares two binaries, as base and head are), A with the planted slowdown KG_DEFECT_SLOW5
# at SLOW3_CYCLES and SLOW5_CYCLES cycles per tile (about 3% and 5% on flash_fwd × mission),
# and A with KG_DEFECT_SOFTMAX_SLOW at LSLOW3_CYCLES cycles per block (about 3% on the
# launch-bound row_softmax × small); the realised ratio is printed, and that is what counts.
# With PyTorch it also builds kernels/torch/flash_fwd_ext.cu once with load() (the torch
# form of issue 11), which kernels/torch/kg_harness.py then loads on both sides.
# Then `kernel-gate bench run --base-cmd A --head-cmd B` on one kernel × shape at a time,
# each case in some of three modes:
#
#   process  bench.serve false: one harness process per round
#   serve1   bench.serve true, servers 1: one process per side at a time, a fresh one every
#            RESTART_EVERY rounds (how serving worked before bench.servers)
#   serve    bench.serve true, servers SERVERS (4): that many processes per side started
#            side by side answer in turn, each RESTART_EVERY rounds, then a fresh set
#
#   attention  flash_fwd × mission, C++: A/A, 3%, 5%                    all three modes
#   reference  kernels/sdpa_reference.py against itself (PyTorch SDPA)   serve, serve1
#   torch      kernels/torch/kg_harness.py against itself (the PyTorch
#              extension, flash_fwd × mission)                           serve, serve1
#   launch     row_softmax × small (a few µs), C++: A/A, 3%               all three modes
#   -pyc       the torch form and the reference with torch's bytecode cached once in
#              PYTHONPYCACHEPREFIX (python-bytecode.txt says whether site-packages has its own)
#   triton     kernels/triton/softmax.py against itself (row_softmax ×
#              small)                                                    serve
#   lifetimes  REPEAT_AA more served attention A/A runs, for the false-slower rate over
#              many server lifetimes (and REPEAT_PY, default 0, more served torch-AA-pyc runs)
#
# Per run it prints the verdict, the realised ratio, the rounds, the wall seconds of the
# timing (starting the harnesses to the last round: what bench.wall_budget bounds) and per
# round, the seconds the processes spent setting up, and the kernels' own timed seconds (the
# floor: every timed launch of both sides). Each run has a wall budget (WALL_BUDGET, default
# 60s: an undecided pair then is inconclusive, with the rounds it reached) and the script
# starts no run after TOTAL_BUDGET seconds (default 480). OUTDIR (default a new temporary
# directory) keeps every run's result JSON and artifacts, and summary.tsv. The launch-bound
# pair one process per round runs last. ONLY (an extended regular expression) runs only
# the runs whose NAME-MODE it matches whole, e.g. ONLY='attention-AA-serve|launch-3pct-.*'.
set -u
cd "$(dirname "$0")/../.." || exit 2
out=${1:-$(mktemp -d)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
SLOW3_CYCLES=${SLOW3_CYCLES:-220}
SLOW5_CYCLES=${SLOW5_CYCLES:-370}
LSLOW3_CYCLES=${LSLOW3_CYCLES:-160}
RESTART_EVERY=${RESTART_EVERY:-4}
SERVERS=${SERVERS:-4}
WALL_BUDGET=${WALL_BUDGET:-60s}
TOTAL_BUDGET=${TOTAL_BUDGET:-480}
REPEAT_AA=${REPEAT_AA:-3}
REPEAT_PY=${REPEAT_PY:-0}
SAMPLES=${SAMPLES:-30}
start=$SECONDS

echo "measure-serve: building into $out" >&2
# The GPU machines have no Go: KG_BIN names a kernel-gate built elsewhere
# (CGO_ENABLED=0 go build -o kernel-gate ./cmd/kernel-gate).
if [ -n "${KG_BIN:-}" ]; then cp "$KG_BIN" "$out/kernel-gate" || exit 2; else go build -o "$out/kernel-gate" ./cmd/kernel-gate || exit 2; fi
build() { # name, extra nvcc flags...
  local name=$1
  shift
  nvcc -O3 -lineinfo -arch=native "$@" -o "$out/$name" kernels/harness.cpp kernels/harness_cases.cpp kernels/harness_device.cu kernels/flash_fwd.cu kernels/gemm_wmma.cu kernels/softmax.cu >"$out/$name.build.log" 2>&1
}
build A & build A2 & build slow3 -DKG_DEFECT_SLOW5 -DKG_SLOW_CYCLES="$SLOW3_CYCLES" &
build slow5 -DKG_DEFECT_SLOW5 -DKG_SLOW_CYCLES="$SLOW5_CYCLES" &
build lslow3 -DKG_DEFECT_SOFTMAX_SLOW -DKG_SOFTMAX_SLOW_CYCLES="$LSLOW3_CYCLES" &
has_torch=0
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null && has_torch=1
if [ "$has_torch" = 1 ]; then
  # The torch form's extension, built once by load() into its own TORCH_EXTENSIONS_DIR.
  (KG_MODE=check KG_SHAPES=small KG_ROUNDS=1 KG_OUT="$out/torch-build-check.json" TORCH_EXTENSIONS_DIR="$out/te" \
    python3 kernels/torch/kg_harness.py >"$out/torch-build.log" 2>&1 || echo "measure-serve: the torch extension did not build: $out/torch-build.log" >&2) &
fi
wait
for b in A A2 slow3 slow5 lslow3; do
  [ -x "$out/$b" ] || { echo "measure-serve: the $b build failed: $out/$b.build.log" >&2; exit 2; }
done
echo "measure-serve: built in $((SECONDS - start)) s" >&2

printf 'case\tmode\tverdict\tratio\trounds\ttiming_s\ts_per_round\tsetup_s\tsetup_each_s\tround_ms\tkernel_s\tstarts\tstopped\n' >"$out/summary.tsv"

# run NAME MODE KERNEL SHAPE BASE_CMD HEAD_CMD
run() {
  local name=$1 mode=$2 kernel=$3 shape=$4 base=$5 head=$6
  if [ -n "${ONLY:-}" ] && ! printf '%s\n' "$name-$mode" | grep -Eq "^($ONLY)\$"; then
    return
  fi
  if [ $((SECONDS - start)) -ge "$TOTAL_BUDGET" ]; then
    echo "measure-serve: $name $mode skipped: the script's budget of $TOTAL_BUDGET s is spent" >&2
    return
  fi
  local dir="$out/$name-$mode" serve=false servers=1
  case $mode in
  serve) serve=true servers=$SERVERS ;;
  serve1) serve=true ;;
  esac
  mkdir -p "$dir"
  cat >"$dir/kernel-gate.yml" <<EOF
bench:
  samples: $SAMPLES
  shapes: [$shape]
  serve: $serve
  restart_every: $RESTART_EVERY
  servers: $servers
  wall_budget: $WALL_BUDGET
  env: {KG_KERNELS: $kernel}
EOF
  echo "measure-serve: $name, $mode ($((SECONDS - start)) s so far)" >&2
  timeout 300 "$out/kernel-gate" bench run --config "$dir/kernel-gate.yml" --base-cmd "$base" --head-cmd "$head" \
    --artifacts "$dir/artifacts" --format json --out "$dir/result.json" 2>"$dir/progress.log"
  python3 - "$dir/result.json" "$name" "$mode" >>"$out/summary.tsv" <<'PY'
import json, sys
path, name, mode = sys.argv[1:4]
try:
    g = next(g for g in json.load(open(path))["gates"] if g["name"] == "speedup")
except Exception as e:  # noqa: BLE001
    print(f"{name}\t{mode}\tno result ({e})" + "\t-" * 10)
    sys.exit(0)
d, r = g["data"], g["data"]["runner"]
cs = d.get("comparisons") or []
c = cs[0] if cs else {}
sides = (r.get("serve") or {}).get("sides") or []
setup = sum(s.get("setup_seconds", 0) for s in sides)
each = [x for s in sides[:2] for x in (s.get("setups_seconds") or [])]
each_txt = f"{min(each):.2f}-{max(each):.2f}" if each else "-"
round_ms = "/".join(f"{1000 * s.get('round_seconds', 0) / (r.get('rounds_run', 0) + 1):.1f}" for s in sides[:2]) or "-"
starts = "/".join(str(s.get("starts", 0)) for s in sides)
kernel_s = sum(x.get("gpu_seconds") or 0 for x in cs)
rounds_run = max(r.get("rounds_run", 0), 1)
verdict = c.get("verdict") or g["verdict"] + ((": " + r["failure"]["why"][:80]) if r.get("failure") else "")
ratio = f"{c['ratio']:.4f}" if c.get("ratio") else "-"
print(f"{name}\t{mode}\t{verdict}\t{ratio}\t{r.get('rounds', 0)}\t{r.get('timing_seconds', 0):.1f}\t"
      f"{r.get('timing_seconds', 0) / (rounds_run + 1):.3f}\t{setup:.1f}\t{each_txt}\t{round_ms}\t{kernel_s:.3f}\t{starts}\t{r.get('stopped', '')}")
PY
  tail -1 "$out/summary.tsv" >&2
}

for mode in serve serve1 process; do
  run attention-AA "$mode" flash_fwd mission "$out/A" "$out/A2"
  run attention-3pct "$mode" flash_fwd mission "$out/A" "$out/slow3"
  run attention-5pct "$mode" flash_fwd mission "$out/A" "$out/slow5"
done
if [ "$has_torch" = 1 ]; then
  torch_cmd="env TORCH_EXTENSIONS_DIR=$out/te python3 kernels/torch/kg_harness.py"
  for mode in serve serve1; do
    run reference-AA "$mode" flash_fwd mission "python3 kernels/sdpa_reference.py" "python3 kernels/sdpa_reference.py"
    run torch-AA "$mode" flash_fwd mission "$torch_cmd" "$torch_cmd"
  done
  # Python reads bytecode from __pycache__ beside each module, which pip writes when it
  # installs a package. Where there is none and none may be written (PYTHONDONTWRITEBYTECODE,
  # as on the machine these figures come from), every start compiles torch's sources again.
  # The -pyc rows read torch's bytecode from PYTHONPYCACHEPREFIX, filled once here, as an
  # installation with its bytecode would.
  python3 - >"$out/python-bytecode.txt" 2>&1 <<'PY'
import glob, os, sys, torch
d = os.path.dirname(torch.__file__)
print("torch", torch.__version__, "at", d)
print("writable:", os.access(d, os.W_OK), "PYTHONDONTWRITEBYTECODE:", os.environ.get("PYTHONDONTWRITEBYTECODE"))
print("pyc files under torch/:", len(glob.glob(os.path.join(d, "**", "__pycache__", "*.pyc"), recursive=True)), "of", len(glob.glob(os.path.join(d, "**", "*.py"), recursive=True)), ".py files")
PY
  env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX="$out/pyc" python3 -c '
import torch, torch.nn.functional, torch.nn.attention, torch.utils.cpp_extension
torch.zeros(1, device="cuda")
try:
    import triton, triton.language
except ImportError:
    pass' 2>>"$out/python-bytecode.txt"
  echo "bytecode files in PYTHONPYCACHEPREFIX: $(find "$out/pyc" -name '*.pyc' | wc -l)" >>"$out/python-bytecode.txt"
  pyc="env PYTHONPYCACHEPREFIX=$out/pyc"
  for mode in serve serve1; do
    run torch-AA-pyc "$mode" flash_fwd mission "$pyc $torch_cmd" "$pyc $torch_cmd"
  done
  for i in $(seq 1 "$REPEAT_PY"); do
    run "torch-AA-pyc-$i" serve flash_fwd mission "$pyc $torch_cmd" "$pyc $torch_cmd"
  done
  run reference-AA-pyc serve flash_fwd mission "$pyc python3 kernels/sdpa_reference.py" "$pyc python3 kernels/sdpa_reference.py"
else
  echo "measure-serve: no PyTorch with CUDA: the Python rows are skipped" >&2
fi
for mode in serve serve1; do
  run launch-AA "$mode" row_softmax small "$out/A" "$out/A2"
  run launch-3pct "$mode" row_softmax small "$out/A" "$out/lslow3"
done
if [ "$has_torch" = 1 ]; then
  triton_cmd="env TRITON_CACHE_DIR=$out/triton-cache python3 kernels/triton/softmax.py"
  run triton-AA serve row_softmax_triton small "$triton_cmd" "$triton_cmd"
fi
for i in $(seq 1 "$REPEAT_AA"); do
  run "attention-AA-$i" serve flash_fwd mission "$out/A" "$out/A2"
done
# Last: one process per round, the launch-bound pair (its 3% may spend the whole budget).
run launch-AA process row_softmax small "$out/A" "$out/A2"
run launch-3pct process row_softmax small "$out/A" "$out/lslow3"

echo
column -t -s "$(printf '\t')" "$out/summary.tsv" 2>/dev/null || cat "$out/summary.tsv"
echo
echo "measure-serve: done in $((SECONDS - start)) s; results in $out"
