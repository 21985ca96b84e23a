#!/usr/bin/env python3
"""GPU check that the harness helpers never hang on a function that waits for the GPU
(issue 21, "The harness helpers never hang"). Run from the repository's root on a machine
with a GPU and PyTorch (nvcc too, for the kg_bench.h half):

    python3 kernels/tests/blocking_fn_check.py

kg_bench.time_launches times, with 100 samples a round and 2 rounds each: a plain kernel
(`kernel`), a function that calls .item() (`item`), one that copies a pageable CPU tensor to
the GPU (`pageable_copy`, as the FlashAttention repository's forward() did), one that calls
torch.cuda.synchronize() (`synchronize`), one that synchronises only now and then
(`waits_now_and_then`: its chunks get NaN within the hold's bound), and the plain kernel
again (`kernel_after`). Each round must return within BOUND_S seconds; the three that wait
must be timed (no NaN) with exactly one "kg_bench:" warning over both rounds; the plain
kernel with none. Then, with nvcc, kernels/tests/blocking_fn_check.cu does the same with
kg_bench.h's TimeLaunches (a kernel, cudaDeviceSynchronize, a pageable cudaMemcpy). Prints a
JSON summary on stdout and exits 0 when every check holds, 1 when one does not, 2 when
PyTorch or a GPU is missing.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.dirname(HERE)
sys.path.append(KERNELS)  # appended: kernels/torch/ must not shadow PyTorch
import kg_bench  # noqa: E402

BOUND_S = 20.0  # per round of 100 samples; the hang this checks took more than 110 s
SAMPLES = 100
ROUNDS = 2
WAITS = "waits for the GPU"


def python_cases(torch):
    dev = torch.device("cuda")
    x = torch.randn(1 << 20, device=dev)
    host = torch.randn(1 << 20)  # pageable: .to(dev) synchronises
    assert not host.is_pinned()

    def kernel():
        x.mul_(1.0001)

    def item():
        return x.sum().item()

    def pageable_copy():
        return host.to(dev)

    def synchronize():
        x.mul_(1.0001)
        torch.cuda.synchronize()

    def waits_now_and_then(i):
        x.mul_(1.0001)
        if i % kg_bench.HOLD_CHUNK == 5:
            torch.cuda.synchronize()

    # name, fn, warnings wanted over the rounds, whether NaN timings are allowed
    return [
        ("kernel", kernel, 0, False),
        ("item", item, 1, False),
        ("pageable_copy", pageable_copy, 1, False),
        ("synchronize", synchronize, 1, False),
        ("waits_now_and_then", waits_now_and_then, 0, True),
        ("kernel_after", kernel, 0, False),
    ]


def check_python(torch, failures):
    out = {}
    for name, fn, want_warnings, nan_ok in python_cases(torch):
        takes_index = name == "waits_now_and_then"
        for i in range(5):  # warm-up
            fn(i) if takes_index else fn()
        torch.cuda.synchronize()
        err = io.StringIO()
        rounds = []
        with contextlib.redirect_stderr(err):
            for _ in range(ROUNDS):
                t0 = time.monotonic()
                us = kg_bench.time_launches(fn, SAMPLES)
                secs = time.monotonic() - t0
                ok = [u for u in us if not math.isnan(u)]
                rounds.append({"seconds": round(secs, 3), "nan": len(us) - len(ok),
                               "median_us": round(statistics.median(ok), 3) if ok else None})
        lines = err.getvalue().splitlines()
        warned = sum(WAITS in line for line in lines)
        out[name] = {"rounds": rounds, "warnings": warned, "stderr": lines,
                     "enqueue_us_after": round(kg_bench._hold["enqueue_us"], 1)}
        for k, r in enumerate(rounds):
            if r["seconds"] > BOUND_S:
                failures.append(f"python {name} round {k}: {r['seconds']} s > {BOUND_S} s")
            if r["nan"] and not nan_ok:
                failures.append(f"python {name} round {k}: {r['nan']} NaN timings")
        if warned != want_warnings:
            failures.append(f"python {name}: {warned} '{WAITS}' warnings, want {want_warnings}")
        if not all(line.startswith("kg_bench: ") for line in lines):
            failures.append(f"python {name}: stderr lines not from kg_bench: {lines}")
    return out


def check_cpp(failures):
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if nvcc is None:
        return {"skipped": "no nvcc"}
    want_warnings = {"kernel": 0, "synchronize": 1, "pageable_copy": 1, "kernel_after": 0}
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "blocking_fn_check")
        src = os.path.join(HERE, "blocking_fn_check.cu")
        for arch in ("-arch=native", "-arch=sm_90"):
            build = subprocess.run([nvcc, "-O2", "-std=c++17", arch, "-I" + KERNELS, "-o", exe, src],
                                   capture_output=True, text=True, timeout=300)
            if build.returncode == 0:
                break
        if build.returncode != 0:
            failures.append("cpp: nvcc failed")
            return {"build": build.stderr[-2000:]}
        t0 = time.monotonic()
        p = subprocess.run([exe], capture_output=True, text=True, timeout=10 * BOUND_S)
        total = time.monotonic() - t0
    out = {"exit": p.returncode, "seconds": round(total, 3), "cases": {}}
    if p.returncode != 0:
        failures.append(f"cpp: exit {p.returncode}: {p.stderr[-500:]}")
    stderr_of, case = {}, None
    for line in p.stderr.splitlines():
        if line.startswith("== case "):
            case = line[len("== case "):]
            stderr_of[case] = []
        elif case is not None:
            stderr_of[case].append(line)
    for line in p.stdout.splitlines():
        r = json.loads(line)
        c = out["cases"].setdefault(r["case"], {"rounds": [], "stderr": stderr_of.get(r["case"], [])})
        c["rounds"].append({k: r[k] for k in ("seconds", "nan", "median_us")})
        if r["seconds"] > BOUND_S:
            failures.append(f"cpp {r['case']} round {r['round']}: {r['seconds']} s > {BOUND_S} s")
        if r["nan"]:
            failures.append(f"cpp {r['case']} round {r['round']}: {r['nan']} NaN timings")
    for name, want in want_warnings.items():
        c = out["cases"].get(name)
        if c is None:
            failures.append(f"cpp {name}: no result")
            continue
        c["warnings"] = sum(WAITS in line for line in c["stderr"])
        if c["warnings"] != want:
            failures.append(f"cpp {name}: {c['warnings']} '{WAITS}' warnings, want {want}")
    return out


def main():
    try:
        torch = kg_bench.require_cuda_torch("blocking_fn_check.py")
    except RuntimeError as e:
        print(f"blocking_fn_check.py: {e}", file=sys.stderr)
        return 2
    failures = []
    summary = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "bound_s": BOUND_S,
        "samples": SAMPLES,
        "rounds": ROUNDS,
        "hold_max_us": kg_bench.HOLD_MAX_US,
        "python": check_python(torch, failures),
        "cpp": check_cpp(failures),
    }
    summary["failures"] = failures
    summary["ok"] = not failures
    print(json.dumps(summary, indent=1))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
