#!/usr/bin/env python3
"""softmax.py: a Triton row softmax (fp32, one program per row) and its harness, speaking
kernel-gate/bench/v1 (docs/harness-protocol.md) through kernels/kg_bench.py:

    KG_MODE=check python3 kernels/triton/softmax.py

Kernel row_softmax_triton (KG_KERNELS), shapes (KG_SHAPES, default small,mission,long):

    small (1024 rows × 781 columns), mission (8192 × 1000), long (32768 × 2000)

The column counts are not powers of two on purpose: the kernel's block is, so its masked
tail is exercised on every row.

    KG_MODE=check     KG_ROUNDS checks on fresh N(0, 1) inputs against torch.softmax in fp64
                      (bad_fraction: atol 1e-6, rtol 1e-3, as harness_cases.cpp's row_softmax), then
                      3 more launches on the last input that must agree with the first
    KG_MODE=bench     KG_ROUNDS rounds of KG_SAMPLES single launches after a warm-up that also
                      compiles the kernel, rotating through enough copies that L2 holds none
    KG_MODE=serve     (docs/harness-protocol.md, "Serving rounds") each shape set up as for
                      bench once, then one round of KG_SAMPLES launches per request
                      (kg_bench.serve_cases); a CUDA error fails every later answer
    KG_MODE=sanitize  one launch on the first shape (run with PYTORCH_NO_CUDA_MEMORY_CACHING=1
                      so that each tensor is its own cudaMalloc)

Triton compiles at first launch into TRITON_CACHE_DIR (the .cubin is what kernel-gate reads);
with TRITON_DUMP_PTXAS_LOG=1 it prints ptxas's -v report.

KG_DEFECT plants a defect, as kernels/flash_fwd.cu's KG_DEFECT_* defines do (the recorder,
testdata/replay/record.sh, rewrites this line in a commit, as a pull request would):
  "wrong-result"  the load's padding is 0 instead of -inf, so the padded columns add
                  exp(0 - max) to every row's sum: wrong results
  "oob"           the load is not masked: the last row reads past the end of x
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any, Mapping, Optional

KG_DEFECT = ""

sys.dont_write_bytecode = True  # leave no __pycache__ in kernels/
KERNELS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _import_kg_bench() -> Any:
    """kernels/kg_bench.py, imported by its path. Putting kernels/ on sys.path instead would
    let kernels/torch/ and kernels/triton/ (plain directories) answer `import torch` and
    `import triton` wherever those are not installed."""
    if "kg_bench" in sys.modules:
        return sys.modules["kg_bench"]
    spec = importlib.util.spec_from_file_location("kg_bench", os.path.join(KERNELS_DIR, "kg_bench.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["kg_bench"] = module  # before running it: dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


kg_bench = _import_kg_bench()

PROG = "kernels/triton/softmax.py"
KERNEL = "row_softmax_triton"
SHAPES = {"small": (1024, 781), "mission": (8192, 1000), "long": (32768, 2000)}
DEFAULT_SHAPES = "small,mission,long"
DEFECTS = ("", "wrong-result", "oob")
ATOL, RTOL = 1e-6, 1e-3
REPEATS = 3


def plan(req: kg_bench.Request, kernels: list[str]) -> list[tuple[str, str, Optional[tuple[int, int]]]]:
    """Every kernel × shape asked for with its (rows, cols), None when unknown; in sanitize
    mode only the first shape."""
    shapes = req.shapes[:1] if req.mode == "sanitize" else req.shapes
    return [(k, s, SHAPES[s] if k == KERNEL and s in SHAPES else None) for k in kernels for s in shapes]


def kernels_from_env(environ: Mapping[str, str]) -> list[str]:
    raw = environ.get("KG_KERNELS", "") or KERNEL
    return [k.strip() for k in raw.split(",") if k.strip()]


def block_for(cols: int) -> tuple[int, int]:
    """The block (next power of two ≥ cols) and warps for a row of cols columns."""
    block = 1 << max(0, (cols - 1).bit_length())
    return block, 4 if block <= 2048 else 8 if block <= 8192 else 16


def load_triton() -> Any:
    """torch with a CUDA device, or a RuntimeError that says what is missing (Triton is
    imported with this file, below)."""
    if triton is None:
        raise RuntimeError(f"needs Triton: import triton failed ({TRITON_IMPORT_ERROR})")
    return kg_bench.require_cuda_torch()


# The kernel is defined only where Triton imports, so that this file's pure-Python parts
# (and kernels/forms_test.py) run without Triton or a GPU.
try:
    import triton
    import triton.language as tl

    TRITON_IMPORT_ERROR = ""
except ImportError as e:  # noqa: F841
    triton = tl = None
    TRITON_IMPORT_ERROR = str(e)

if triton is not None:

    @triton.jit
    def row_softmax_triton(x_ptr, y_ptr, cols, BLOCK: tl.constexpr, MASKED: tl.constexpr, WRONG_PAD: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        offs = tl.arange(0, BLOCK)
        mask = offs < cols
        if MASKED:
            if WRONG_PAD:
                x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0)
            else:
                x = tl.load(x_ptr + row * cols + offs, mask=mask, other=-float("inf"))
        else:
            x = tl.load(x_ptr + row * cols + offs)
            x = tl.where(mask, x, -float("inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        tl.store(y_ptr + row * cols + offs, e / tl.sum(e, axis=0), mask=mask)


def launcher(defect: str) -> Any:
    """launch(x, y): y = softmax(x) by rows, with the defect planted (KG_DEFECT)."""
    if defect not in DEFECTS:
        raise ValueError(f"KG_DEFECT={defect!r}: want one of {DEFECTS}")
    masked = defect != "oob"
    wrong_pad = defect == "wrong-result"

    def launch(x: Any, y: Any) -> None:
        rows, cols = x.shape
        block, warps = block_for(cols)
        row_softmax_triton[(rows,)](x, y, cols, BLOCK=block, MASKED=masked, WRONG_PAD=wrong_pad, num_warps=warps)

    return launch


def inputs(torch: Any, rows: int, cols: int, seed: int) -> Any:
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    return torch.randn((rows, cols), generator=g, device="cuda", dtype=torch.float32)


def max_diff(torch: Any, a: Any, b: Any) -> float:
    an, bn = torch.isnan(a), torch.isnan(b)
    if bool((an != bn).any()):
        return float("inf")
    d = (a - b).abs()[~an]
    return float(d.max()) if d.numel() else 0.0


def check(torch: Any, launch: Any, shape: str, dims: tuple[int, int], checks: int) -> kg_bench.Result:
    rows, cols = dims
    max_err = sum_err = ref_max_abs = 0.0
    nan = inf = bad = n = 0
    for c in range(checks):
        x = inputs(torch, rows, cols, 300 + c)
        y = torch.empty_like(x)
        launch(x, y)
        ref = torch.softmax(x.double(), dim=-1)
        torch.cuda.synchronize()
        got = y.double()
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
        n += got.numel()
    rep = 0.0
    for _ in range(REPEATS):
        y2 = torch.empty_like(x)
        launch(x, y2)
        rep = max(rep, max_diff(torch, y, y2))
    return kg_bench.Result(
        kernel=KERNEL, shape=shape, max_err=max_err, mean_err=sum_err / n if n else 0.0, ref_max_abs=ref_max_abs,
        bad_fraction=bad / n if n else 0.0, nan_count=nan, inf_count=inf, checks=checks,
        repeat_launches=REPEATS + 1, repeat_max_diff=rep,
    )  # fmt: skip


def prepare_bench(torch: Any, launch: Any, dims: tuple[int, int]) -> Any:
    """One shape set up to be timed (rotating input copies, warm-up, which also compiles): a
    function that times one round of `samples` launches. Bench mode makes one per run,
    serve mode one per process."""
    rows, cols = dims
    copies = max(1, min(64, (256 << 20) // (rows * cols * 8)))
    bufs = [(inputs(torch, rows, cols, 5 + i), torch.empty((rows, cols), device="cuda", dtype=torch.float32)) for i in range(copies)]

    def one(i: int) -> None:
        launch(*bufs[i % copies])

    for i in range(3 * copies + 10):  # warm-up (the first also compiles), discarded
        one(i)
    torch.cuda.synchronize()
    return lambda samples: kg_bench.time_launches(one, samples)


def bench(torch: Any, launch: Any, shape: str, dims: tuple[int, int], rounds: int, samples: int) -> kg_bench.Result:
    time_round = prepare_bench(torch, launch, dims)
    return kg_bench.Result(kernel=KERNEL, shape=shape, rounds_us=[time_round(samples) for _ in range(rounds)])


def describe(e: BaseException) -> str:
    """An exception in one line for a result's error."""
    lines = [ln for ln in str(e).splitlines() if ln.strip()]
    return f"{type(e).__name__}: {lines[0] if lines else ''}"[:300]


def serve(torch: Any, launch: Any, req: kg_bench.Request, kernels: list[str], **serve_args: Any) -> int:
    """KG_MODE=serve: every shape set up once (prepare_bench), then one round of those each
    request names (kg_bench.serve_cases); a CUDA error fails every later answer."""

    def prepare(kernel: str, shape: str, dims: tuple[int, int]) -> Any:
        time_round = prepare_bench(torch, launch, dims)
        return lambda samples: kg_bench.Result(kernel=kernel, shape=shape, rounds_us=[time_round(samples)])

    return kg_bench.serve_cases(req, plan(req, kernels), prepare, prog=PROG, kernels=kernels, describe=describe,
                                sticky=kg_bench.is_cuda_error, **serve_args)


def sanitize(torch: Any, launch: Any, shape: str, dims: tuple[int, int]) -> kg_bench.Result:
    x = inputs(torch, *dims, 1)
    launch(x, torch.empty_like(x))
    torch.cuda.synchronize()
    return kg_bench.Result(kernel=KERNEL, shape=shape, launches=1)


def main(environ: Optional[Mapping[str, str]] = None) -> int:
    env = os.environ if environ is None else environ
    try:
        req = kg_bench.Request.from_env(DEFAULT_SHAPES, environ=env, serve=True)
    except ValueError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    if KG_DEFECT not in DEFECTS:
        print(f"{PROG}: KG_DEFECT={KG_DEFECT!r}: want one of {DEFECTS}", file=sys.stderr)
        return 2
    kernels = kernels_from_env(env)
    if not kernels or not req.shapes:
        print(f"{PROG}: no kernels or no shapes to run (KG_KERNELS, KG_SHAPES)", file=sys.stderr)
        return 2
    try:
        torch = load_triton()
    except RuntimeError as e:
        print(f"{PROG}: {e}; nothing written", file=sys.stderr)
        return 2
    launch = launcher(KG_DEFECT)
    if req.mode == "serve":
        return serve(torch, launch, req, kernels, environ=env)
    results = []
    failed = False
    for kernel, shape, dims in plan(req, kernels):
        if dims is None:
            results.append(kg_bench.Result(kernel=kernel, shape=shape, error="unknown kernel or shape"))
            failed = True
            print(f"{PROG}: {kernel} {shape}: unknown kernel or shape", file=sys.stderr)
            continue
        try:
            if req.mode == "check":
                results.append(check(torch, launch, shape, dims, req.rounds))
            elif req.mode == "bench":
                results.append(bench(torch, launch, shape, dims, req.rounds, req.samples))
            else:
                results.append(sanitize(torch, launch, shape, dims))
        except Exception as e:  # noqa: BLE001 (a compile, CUDA or PyTorch failure is this result's error)
            results.append(kg_bench.Result(kernel=kernel, shape=shape, error=describe(e)))
            failed = True
            print(f"{PROG}: {kernel} {shape}: {type(e).__name__}: {e}", file=sys.stderr)
    kg_bench.write(req, results)
    return 1 if failed else 0


if __name__ == "__main__":
    kg_bench.exit(main())
