#!/usr/bin/env bash
# Where a serving harness's start-up and exit go: the time from starting a process to its
# handshake (the serve protocol's first answer line, after it has set up every kernel × shape)
# and from the end of its input to its exit, for the C++ harness, the torch form
# (kernels/torch/kg_harness.py) and its parts (python, import torch, CUDA's first use,
# cpp_extension.load()), one process alone and N (default 8: two sides of 4 servers, as
# `bench.servers: 4` starts them) side by side. For docs/speedup-serving.md. From the
# repository root, on an otherwise idle GPU machine with nvcc and PyTorch:
#
#   testdata/timing/python-startup.sh [OUTDIR]
#
# It builds the harness (kernels/harness.cpp and the .cu files) and the torch form's extension (TORCH_EXTENSIONS_DIR in
# OUTDIR), writes torch's bytecode once into OUTDIR/pyc (as measure-serve.sh's -pyc rows do)
# and times each command REPEAT (default 3) times; every Python row runs with
# PYTHONPYCACHEPREFIX=OUTDIR/pyc, and the torch form also without it (as the machine is set up).
# "exit-now" is the torch form run so that it ends with os._exit once it has answered (no
# interpreter finalisation). Prints a table (median of the repeats, seconds) and keeps
# OUTDIR/startup.tsv and each process's stderr.
set -u
cd "$(dirname "$0")/../.." || exit 2
out=${1:-$(mktemp -d)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
N=${N:-8}
REPEAT=${REPEAT:-3}
nvcc -O3 -lineinfo -arch=native -o "$out/A" kernels/harness.cpp kernels/harness_cases.cpp kernels/harness_device.cu kernels/flash_fwd.cu kernels/gemm_wmma.cu kernels/softmax.cu >"$out/A.build.log" 2>&1 || { cat "$out/A.build.log"; exit 2; }
export TORCH_EXTENSIONS_DIR="$out/te"
KG_MODE=check KG_SHAPES=small KG_ROUNDS=1 KG_OUT="$out/torch-build-check.json" \
  python3 kernels/torch/kg_harness.py >"$out/torch-build.log" 2>&1 || { cat "$out/torch-build.log"; exit 2; }
env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX="$out/pyc" python3 -c '
import torch, torch.nn.functional, torch.utils.cpp_extension
torch.zeros(1, device="cuda")' || exit 2
echo "bytecode files in $out/pyc: $(find "$out/pyc" -name '*.pyc' | wc -l); PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-}" >"$out/python-bytecode.txt"

python3 - "$out" "$N" "$REPEAT" <<'PY'
import os, statistics, subprocess, sys, time

out, n, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
pyc = {"PYTHONPYCACHEPREFIX": os.path.join(out, "pyc")}
load = ("from torch.utils.cpp_extension import load; "
        "load(name='kg_flash_fwd', sources=['kernels/torch/flash_fwd_ext.cu'], extra_include_paths=['kernels'], "
        "extra_cuda_cflags=['-O3', '-U__CUDA_NO_HALF_OPERATORS__', '-U__CUDA_NO_HALF_CONVERSIONS__', '-U__CUDA_NO_HALF2_OPERATORS__'])")
exit_now = ("import os, runpy, sys\n"
            "try:\n    runpy.run_path('kernels/torch/kg_harness.py', run_name='__main__')\n"
            "except SystemExit as e:\n    sys.stdout.flush(); sys.stderr.flush(); os._exit(e.code if isinstance(e.code, int) else 1)\n"
            "os._exit(0)")
# name, argv, extra environment, serves (handshake on fd 3)
rows = [
    ("C++ harness", [os.path.join(out, "A")], {}, True),
    ("python -c pass", ["python3", "-c", "pass"], pyc, False),
    ("import torch", ["python3", "-c", "import torch"], pyc, False),
    ("+ CUDA's first use", ["python3", "-c", "import torch; torch.zeros(1, device='cuda'); torch.cuda.synchronize()"], pyc, False),
    ("+ load() (built)", ["python3", "-c", "import torch; torch.zeros(1, device='cuda'); " + load], pyc, False),
    ("torch form", ["python3", "kernels/torch/kg_harness.py"], pyc, True),
    ("torch form, exit-now", ["python3", "-c", exit_now], pyc, True),
    ("torch form, no bytecode", ["python3", "kernels/torch/kg_harness.py"], {}, True),
]
base_env = dict(os.environ, KG_MODE="serve", KG_SERVE_FD="3", KG_SHAPES="mission", KG_KERNELS="flash_fwd", KG_SAMPLES="30")


def start(argv, extra, serves, log):
    env = dict(base_env, **extra)
    if serves:
        r, w = os.pipe()
        env["KG_SERVE_FD"] = str(w)
        p = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=log, stderr=log, pass_fds=(w,))
        os.close(w)
        return p, os.fdopen(r)
    return subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log), None


def one_batch(name, argv, extra, serves, k, rep):
    """k processes side by side: (seconds to handshake, seconds from end of input to exit) each."""
    logs = [open(os.path.join(out, f"{name.replace(' ', '_').replace(',', '')}.{k}.{rep}.{i}.log"), "w") for i in range(k)]
    t0 = time.perf_counter()
    procs = [start(argv, extra, serves, logs[i]) for i in range(k)]
    ready = []
    for p, answers in procs:
        if answers is not None:
            line = answers.readline()
            if "kernel-gate/serve/v1" not in line:
                sys.exit(f"{name}: no handshake: {line!r} (log {logs[0].name})")
        else:
            p.wait()
        ready.append(time.perf_counter() - t0)
    t1 = time.perf_counter()
    for p, _ in procs:
        if p.stdin:
            p.stdin.close()
    exits = []
    for p, answers in procs:
        rc = p.wait()
        exits.append(time.perf_counter() - t1)
        if rc != 0:
            sys.exit(f"{name}: exit status {rc} (log {logs[0].name})")
        if answers:
            answers.close()
    return max(ready), max(exits) if serves else 0.0


tsv = open(os.path.join(out, "startup.tsv"), "w")
print("row\tprocesses\tready_s\texit_s\tready_each\texit_each", file=tsv)
print(f"{'':28} {'1 process':>22} {f'{n} side by side':>22}")
print(f"{'':28} {'ready s':>11}{'exit s':>11} {'ready s':>11}{'exit s':>11}")
for name, argv, extra, serves in rows:
    cells = []
    for k in (1, n):
        got = [one_batch(name, argv, extra, serves, k, rep) for rep in range(repeat)]
        ready = statistics.median(g[0] for g in got)
        ex = statistics.median(g[1] for g in got)
        print(f"{name}\t{k}\t{ready:.3f}\t{ex:.3f}\t{','.join(f'{g[0]:.3f}' for g in got)}\t{','.join(f'{g[1]:.3f}' for g in got)}", file=tsv)
        cells.append(f"{ready:11.2f}{ex:11.2f}" if serves else f"{ready:11.2f}{'':11}")
    print(f"{name:28} {cells[0]} {cells[1]}", flush=True)
PY
