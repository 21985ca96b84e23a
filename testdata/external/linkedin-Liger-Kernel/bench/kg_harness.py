#!/usr/bin/env python3
"""kg_harness.py: a kernel-gate/bench/v1 harness (docs/harness-protocol.md) for Liger-Kernel's
Triton RMSNorm forward, written from the docs as a new user would. It calls the repository's
own host function, liger_kernel.ops.rms_norm.rms_norm_forward (src/src/, unmodified), which
launches one of two Triton kernels: _rms_norm_forward_kernel (a program per row) for a hidden
size over 256, else _block_rms_norm_forward_kernel (16 rows per program, the "qk norm" of
attention heads) once there are 32768 rows or more. The shapes pick the kernel:

    KG_MODE=check KG_KERNELS=_rms_norm_forward_kernel KG_SHAPES=small,mission python3 bench/kg_harness.py

Kernels (KG_KERNELS, default both) and their shapes (KG_SHAPES, default each kernel's all),
bf16 inputs, Llama casting mode (the default of LigerRMSNorm), eps 1e-6, offset 0:

  _rms_norm_forward_kernel
    small   (256 rows × 2048)        the sanitizer's shape
    mission (8192 × 4096)            a Llama-style batch × sequence by hidden size: timed
    huge    (532480 × 4096)          2^31 / 4096 + 8192 rows: row × stride passes 2^31, the
                                     overflow Liger-Kernel #803 reported (fixed by #804, which
                                     made this kernel's program id int64); 4 GiB per tensor
  _block_rms_norm_forward_kernel
    qk      (32768 × 128)            the sanitizer's shape, timed
    qk-huge (16809984 × 128)         2^31 / 128 + 32768 rows: the same overflow in the block
                                     kernel, whose row index #804 left int32; 4 GiB per tensor

    KG_MODE=check     KG_ROUNDS checks on fresh N(0, 1) inputs (weight 1 + 0.1 N(0, 1))
                      against y = x / sqrt(mean(x^2) + eps) * w computed in fp64, in chunks of
                      rows; bad_fraction: |err| > 0.02 + 0.016 |ref| (two bf16 roundings); then
                      3 more launches on the last input that must agree with the first
    KG_MODE=bench     KG_ROUNDS rounds of KG_SAMPLES launches after a warm-up that also
                      compiles the kernel, rotating through enough copies that L2 holds none
    KG_MODE=serve     each shape set up once, then one round per request (kg_bench.serve_cases)
    KG_MODE=sanitize  one launch on the first shape

kg_bench.py (kernel-gate's kernels/kg_bench.py) is copied next to this file by
testdata/external/run.sh, as the docs tell a user to do.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any, Mapping, Optional

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# src/ holds the repository's files at their own paths, so its package is src/src/liger_kernel
# (pip install -e . of the repository would put its src/ on the path the same way).
sys.path.insert(0, os.path.join(ROOT, "src", "src"))

import kg_bench  # noqa: E402 (beside this file)

PROG = "bench/kg_harness.py"
SHAPES = {
    "_rms_norm_forward_kernel": {"small": (256, 2048), "mission": (8192, 4096), "huge": (532480, 4096)},
    "_block_rms_norm_forward_kernel": {"qk": (32768, 128), "qk-huge": (16809984, 128)},
}
EPS = 1e-6
ATOL, RTOL = 0.02, 0.016
REPEATS = 3
CHUNK_ELEMENTS = 1 << 27  # the reference is computed this many elements at a time


def packaging_shim() -> None:
    """liger_kernel.ops.utils imports packaging.version.Version (only to compare Triton's
    version with 3.0.0). The GPU machine may lack packaging and cannot install it; a minimal
    Version that compares the leading numbers is registered then, and said on stderr."""
    try:
        import packaging.version  # noqa: F401, PLC0415
        return
    except ImportError:
        pass

    class Version:
        def __init__(self, text: str) -> None:
            nums = []
            for part in str(text).split("+")[0].split("."):
                digits = "".join(ch for ch in part if ch.isdigit())
                if not digits:
                    break
                nums.append(int(digits))
            self.key = tuple(nums)

        def __lt__(self, o: "Version") -> bool:
            return self.key < o.key

        def __le__(self, o: "Version") -> bool:
            return self.key <= o.key

        def __gt__(self, o: "Version") -> bool:
            return self.key > o.key

        def __ge__(self, o: "Version") -> bool:
            return self.key >= o.key

        def __eq__(self, o: object) -> bool:
            return isinstance(o, Version) and self.key == o.key

    pkg = types.ModuleType("packaging")
    ver = types.ModuleType("packaging.version")
    ver.Version = Version
    ver.parse = Version
    pkg.version = ver
    sys.modules["packaging"] = pkg
    sys.modules["packaging.version"] = ver
    print(f"{PROG}: packaging is not installed: using a minimal packaging.version shim", file=sys.stderr)


def plan(req: kg_bench.Request, kernels: list[str], explicit_shapes: bool) -> list[tuple[str, str, Optional[tuple[int, int]]]]:
    """Every kernel × shape asked for with its (rows, cols), None when the kernel has no such
    shape. Without KG_SHAPES each kernel runs its own shapes; in sanitize mode only the first."""
    out = []
    for k in kernels:
        own = SHAPES.get(k, {})
        shapes = req.shapes if explicit_shapes else list(own) or req.shapes
        if req.mode == "sanitize":
            shapes = shapes[:1]
        out += [(k, s, own.get(s)) for s in shapes]
    return out


def kernels_from_env(environ: Mapping[str, str]) -> list[str]:
    raw = environ.get("KG_KERNELS", "") or ",".join(SHAPES)
    return [k.strip() for k in raw.split(",") if k.strip()]


def load() -> tuple[Any, Any]:
    """torch with a CUDA device and Liger's rms_norm_forward, or a RuntimeError saying why."""
    torch = kg_bench.require_cuda_torch()
    packaging_shim()
    try:
        from liger_kernel.ops.rms_norm import rms_norm_forward  # noqa: PLC0415
    except ImportError as e:
        raise RuntimeError(f"cannot import liger_kernel.ops.rms_norm from src/src/: {e}") from e
    return torch, rms_norm_forward


def launcher(rms_norm_forward: Any) -> Any:
    def launch(x: Any, w: Any) -> Any:
        y, _, _, _, _, _ = rms_norm_forward(x, w, EPS, 0.0, "llama", False)
        return y

    return launch


def inputs(torch: Any, rows: int, cols: int, seed: int) -> tuple[Any, Any]:
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    x = torch.randn((rows, cols), generator=g, device="cuda", dtype=torch.bfloat16)
    w = (1 + 0.1 * torch.randn((cols,), generator=g, device="cuda", dtype=torch.float32)).to(torch.bfloat16)
    return x, w


def compare(torch: Any, x: Any, w: Any, y: Any) -> tuple[float, float, float, int, int, int]:
    """max_err, sum of errors, ref_max_abs, bad, nan, inf of y against the fp64 reference,
    chunk by chunk of rows (the huge shape's reference would not fit whole)."""
    max_err = sum_err = ref_max_abs = 0.0
    bad = nan = inf = 0
    wd = w.double()
    step = max(1, CHUNK_ELEMENTS // x.shape[1])
    for r0 in range(0, x.shape[0], step):
        xd = x[r0:r0 + step].double()
        ref = xd * torch.rsqrt(xd.square().mean(dim=-1, keepdim=True) + EPS) * wd
        del xd
        got = y[r0:r0 + step].double()
        isnan, isinf = torch.isnan(got), torch.isinf(got)
        finite = ~(isnan | isinf)
        err = (got - ref).abs()[finite]
        refm = ref[finite].abs()
        nan, inf = nan + int(isnan.sum()), inf + int(isinf.sum())
        if err.numel():
            max_err = max(max_err, float(err.max()))
            sum_err += float(err.sum())
            ref_max_abs = max(ref_max_abs, float(refm.max()))
        bad += int(isnan.sum()) + int(isinf.sum()) + int((err > ATOL + RTOL * refm).sum())
        del ref, got, err, refm
    return max_err, sum_err, ref_max_abs, bad, nan, inf


def max_diff(torch: Any, a: Any, b: Any) -> float:
    worst = 0.0
    step = max(1, CHUNK_ELEMENTS // a.shape[1])
    for r0 in range(0, a.shape[0], step):
        ac, bc = a[r0:r0 + step].float(), b[r0:r0 + step].float()
        an, bn = torch.isnan(ac), torch.isnan(bc)
        if bool((an != bn).any()):
            return float("inf")
        d = (ac - bc).abs()[~an]
        if d.numel():
            worst = max(worst, float(d.max()))
    return worst


def check(torch: Any, launch: Any, kernel: str, shape: str, dims: tuple[int, int], checks: int) -> kg_bench.Result:
    rows, cols = dims
    max_err = sum_err = ref_max_abs = 0.0
    nan = inf = bad = n = 0
    x = w = y = None
    for c in range(checks):
        x = y = None  # the huge shape's tensors are 4 GiB each: free the last ones first
        x, w = inputs(torch, rows, cols, 300 + c)
        y = launch(x, w)
        torch.cuda.synchronize()
        e, s, rm, b, na, nf = compare(torch, x, w, y)
        max_err, sum_err, ref_max_abs = max(max_err, e), sum_err + s, max(ref_max_abs, rm)
        bad, nan, inf, n = bad + b, nan + na, inf + nf, n + y.numel()
    rep = 0.0
    for _ in range(REPEATS):
        y2 = launch(x, w)
        rep = max(rep, max_diff(torch, y, y2))
        del y2
    return kg_bench.Result(
        kernel=kernel, shape=shape, max_err=max_err, mean_err=sum_err / n if n else 0.0, ref_max_abs=ref_max_abs,
        bad_fraction=bad / n if n else 0.0, nan_count=nan, inf_count=inf, checks=checks,
        repeat_launches=REPEATS + 1, repeat_max_diff=rep,
    )  # fmt: skip


def prepare_bench(torch: Any, launch: Any, dims: tuple[int, int]) -> Any:
    rows, cols = dims
    copies = max(1, min(64, (256 << 20) // (rows * cols * 2)))
    bufs = [inputs(torch, rows, cols, 5 + i) for i in range(copies)]

    def one(i: int) -> None:
        launch(*bufs[i % copies])

    for i in range(3 * copies + 10):  # warm-up (the first also compiles), discarded
        one(i)
    torch.cuda.synchronize()
    return lambda samples: kg_bench.time_launches(one, samples)


def describe(e: BaseException) -> str:
    lines = [ln for ln in str(e).splitlines() if ln.strip()]
    return f"{type(e).__name__}: {lines[0] if lines else ''}"[:300]


def main(environ: Optional[Mapping[str, str]] = None) -> int:
    env = os.environ if environ is None else environ
    try:
        req = kg_bench.Request.from_env(",".join(s for k in SHAPES.values() for s in k), environ=env, serve=True)
    except ValueError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    kernels = kernels_from_env(env)
    explicit_shapes = bool(env.get("KG_SHAPES", "").strip())
    if not kernels or not req.shapes:
        print(f"{PROG}: no kernels or no shapes to run (KG_KERNELS, KG_SHAPES)", file=sys.stderr)
        return 2
    try:
        torch, rms_norm_forward = load()
    except RuntimeError as e:
        print(f"{PROG}: {e}; nothing written", file=sys.stderr)
        return 2
    launch = launcher(rms_norm_forward)
    # Asked before any launch: after the huge shapes' illegal address (the int32 defect) the
    # CUDA context is broken, and the file must still name the device.
    device = kg_bench.device_info()
    if req.mode == "serve":

        def prepare(kernel: str, shape: str, dims: tuple[int, int]) -> Any:
            time_round = prepare_bench(torch, launch, dims)
            return lambda samples: kg_bench.Result(kernel=kernel, shape=shape, rounds_us=[time_round(samples)])

        return kg_bench.serve_cases(req, plan(req, kernels, explicit_shapes), prepare, prog=PROG, kernels=kernels, describe=describe,
                                    sticky=kg_bench.is_cuda_error, environ=env)
    results = []
    failed = False
    broken = ""  # a CUDA error breaks the context: every later result is that error
    for kernel, shape, dims in plan(req, kernels, explicit_shapes):
        if dims is None:
            results.append(kg_bench.Result(kernel=kernel, shape=shape, error="unknown kernel or shape"))
            failed = True
            print(f"{PROG}: {kernel} {shape}: unknown kernel or shape", file=sys.stderr)
            continue
        if broken:
            results.append(kg_bench.Result(kernel=kernel, shape=shape, error=broken))
            continue
        try:
            if req.mode == "check":
                results.append(check(torch, launch, kernel, shape, dims, req.rounds))
            elif req.mode == "bench":
                time_round = prepare_bench(torch, launch, dims)
                results.append(kg_bench.Result(kernel=kernel, shape=shape, rounds_us=[time_round(req.samples) for _ in range(req.rounds)]))
            else:
                x, w = inputs(torch, *dims, 1)
                launch(x, w)
                torch.cuda.synchronize()
                results.append(kg_bench.Result(kernel=kernel, shape=shape, launches=1))
        except Exception as e:  # noqa: BLE001 (a compile, CUDA or PyTorch failure is this result's error)
            results.append(kg_bench.Result(kernel=kernel, shape=shape, error=describe(e)))
            failed = True
            print(f"{PROG}: {kernel} {shape}: {type(e).__name__}: {e}", file=sys.stderr)
            if kg_bench.is_cuda_error(e):
                broken = describe(e)
    kg_bench.write(req, results, device)
    return 1 if failed else 0


if __name__ == "__main__":
    kg_bench.exit(main())
