#!/usr/bin/env python3
"""kg_harness.py: kernels/flash_fwd.cu's attention kernel as a PyTorch extension, driven from
Python and speaking kernel-gate/bench/v1 (docs/harness-protocol.md) through kernels/kg_bench.py,
as kernels/harness.cpp does for the C++ build. Run from anywhere:

    KG_MODE=check python3 kernels/torch/kg_harness.py

KG_TORCH_FORM says how the extension (kernels/torch/flash_fwd_bind.cpp and flash_fwd_ext.cu) was built:

    load   (default) torch.utils.cpp_extension.load() at first use, verbose=False as users
           call it, into TORCH_EXTENSIONS_DIR (PyTorch's default: ~/.cache/torch_extensions)
    setup  imported as built beforehand by kernels/torch/setup.py
           (cd kernels/torch && python3 setup.py build_ext --inplace): module kg_flash_fwd_setup

Kernels and shapes are the C++ harness's (KG_KERNELS, default flash_fwd,flash_fwd_causal;
KG_SHAPES, default small,mission,long), so results compare name for name:

    small (batch 1, heads 8, seqlen 512), mission (2, 8, 512), long (2, 8, 2048); head dim 64

    KG_MODE=check     KG_ROUNDS checks on fresh N(0, 1) fp16 inputs against an fp64 PyTorch
                      reference (max_err, mean_err, bad_fraction with atol = rtol = 0.02, NaN
                      and Inf counts), then 3 more launches on the last input that must agree
                      with the first
    KG_MODE=bench     KG_ROUNDS rounds of KG_SAMPLES single launches (kg_bench.time_launches),
                      after a warm-up, rotating through enough input copies that L2 holds none
    KG_MODE=serve     (docs/harness-protocol.md, "Serving rounds") each kernel × shape set up
                      as for bench once, then one round of KG_SAMPLES launches per request
                      (kg_bench.serve_cases); a CUDA error fails every later answer
    KG_MODE=sanitize  one launch of each kernel on its first shape, output left uninitialised
                      (torch.empty); run it with PYTORCH_NO_CUDA_MEMORY_CACHING=1 so that each
                      tensor is its own cudaMalloc and compute-sanitizer sees its real bounds

Failures are loud: an unknown KG_MODE or KG_TORCH_FORM, no PyTorch or no GPU exit 2 with the
reason on stderr and write nothing; an extension that does not build or import is an error on
every result (exit 1) with the build output on stderr; a CUDA error is that result's error.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from typing import Any, Mapping, Optional

sys.dont_write_bytecode = True  # leave no __pycache__ in kernels/
HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS_DIR = os.path.dirname(HERE)


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

PROG = "kernels/torch/kg_harness.py"
HEAD_DIM = 64
SCALE = 0.125  # 1/sqrt(64), as launch_flash_fwd passes it
# kernels/harness_cases.cpp's attention shapes: batch, heads, seqlen.
SHAPES = {"small": (1, 8, 512), "mission": (2, 8, 512), "long": (2, 8, 2048)}
KERNELS = {"flash_fwd": False, "flash_fwd_causal": True}  # name -> causal
DEFAULT_SHAPES = "small,mission,long"
DEFAULT_KERNELS = "flash_fwd,flash_fwd_causal"
# harness_cases.cpp's Errors::add tolerance for bad_fraction (the gate's max_err is the config's).
ATOL = RTOL = 0.02
REPEATS = 3
FORMS = ("load", "setup")
LOAD_NAME = "kg_flash_fwd"  # the module load() builds
SETUP_NAME = "kg_flash_fwd_setup"  # the module setup.py builds
SETUP_BUILD = "cd kernels/torch && python3 setup.py build_ext --inplace"

# PyTorch builds CUDA sources with -D__CUDA_NO_HALF_*__; kernels written for plain nvcc (as
# flash_fwd.cu is) get half's operators back, as FlashAttention's own setup.py does.
HALF_FLAGS = ["-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__", "-U__CUDA_NO_HALF2_OPERATORS__"]


@dataclass(frozen=True)
class Case:
    kernel: str
    shape: str
    dims: tuple[int, int, int]  # batch, heads, seqlen
    causal: bool


def form_from_env(environ: Mapping[str, str]) -> str:
    """KG_TORCH_FORM: load (default) or setup; anything else raises ValueError."""
    form = environ.get("KG_TORCH_FORM", "") or "load"
    if form not in FORMS:
        raise ValueError(f"KG_TORCH_FORM={form!r}: want one of {', '.join(FORMS)}")
    return form


def kernels_from_env(environ: Mapping[str, str]) -> list[str]:
    raw = environ.get("KG_KERNELS", "") or DEFAULT_KERNELS
    return [k.strip() for k in raw.split(",") if k.strip()]


def plan(req: kg_bench.Request, kernels: list[str]) -> list[tuple[str, str, Optional[Case]]]:
    """Every kernel × shape asked for with its Case (None: unknown kernel or shape); in
    sanitize mode only the first shape, as kernels/harness.cpp does."""
    shapes = req.shapes[:1] if req.mode == "sanitize" else req.shapes
    return [
        (k, s, Case(k, s, SHAPES[s], KERNELS[k]) if k in KERNELS and s in SHAPES else None)
        for k in kernels
        for s in shapes
    ]


def copies_for(nbytes: int) -> int:
    """Input copies to rotate through so the L2 holds none (harness_cases.cpp's copies_for)."""
    return max(1, min(64, (256 << 20) // max(nbytes, 1)))


def short(e: BaseException, limit: int = 300) -> str:
    """An exception in one line for a result's error (the whole text goes to stderr)."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    text = f"{type(e).__name__}: {lines[0] if lines else ''}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def load_extension(form: str, verbose: bool = False) -> Any:
    """The built operator module. load() compiles on first use (ninja, into
    TORCH_EXTENSIONS_DIR); with verbose=False, as users call it, it prints nothing unless
    the build fails, and its exception then holds the build output. verbose=True is for
    kernels/forms/capture.sh, which records what each prints."""
    if form == "setup":
        sys.path.insert(0, HERE)
        try:
            import kg_flash_fwd_setup  # noqa: PLC0415
        except ImportError as e:
            raise RuntimeError(
                f"KG_TORCH_FORM=setup: cannot import {SETUP_NAME} from {HERE} ({e}); build it first: {SETUP_BUILD}"
            ) from e
        return kg_flash_fwd_setup
    from torch.utils.cpp_extension import load  # noqa: PLC0415

    return load(
        name=LOAD_NAME,
        sources=[os.path.join(HERE, "flash_fwd_bind.cpp"), os.path.join(HERE, "flash_fwd_ext.cu")],
        extra_include_paths=[KERNELS_DIR],
        extra_cflags=["-O3"],
        extra_cuda_cflags=["-O3", *HALF_FLAGS],
        verbose=verbose,
    )



def inputs(torch: Any, dims: tuple[int, int, int], seed: int) -> tuple[Any, Any, Any]:
    b, h, n = dims
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    return tuple(torch.randn((b, h, n, HEAD_DIM), generator=g, device="cuda", dtype=torch.float16) for _ in range(3))


def reference(torch: Any, q: Any, k: Any, v: Any, causal: bool) -> Any:
    """softmax(q kᵀ · scale) v in fp64 on the GPU (the C++ harness's reference is fp64 too)."""
    qd, kd, vd = q.double(), k.double(), v.double()
    s = torch.matmul(qd, kd.transpose(-1, -2)) * SCALE
    if causal:
        n = q.shape[2]
        s.masked_fill_(torch.ones((n, n), dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), vd)


class Errors:
    """harness_cases.cpp's Errors: NaN and Inf counted (and bad), the rest measured against the
    reference; mean over every element."""

    def __init__(self) -> None:
        self.max_err = 0.0
        self.sum_err = 0.0
        self.ref_max_abs = 0.0
        self.nan = self.inf = self.bad = self.n = 0

    def add(self, torch: Any, got: Any, ref: Any) -> None:
        got = got.double()
        nan, inf = torch.isnan(got), torch.isinf(got)
        finite = ~(nan | inf)
        err = (got - ref).abs()[finite]
        refm = ref[finite].abs()
        self.nan += int(nan.sum())
        self.inf += int(inf.sum())
        if err.numel():
            self.max_err = max(self.max_err, float(err.max()))
            self.sum_err += float(err.sum())
            self.ref_max_abs = max(self.ref_max_abs, float(refm.max()))
        self.bad += int(nan.sum()) + int(inf.sum()) + int((err > ATOL + RTOL * refm).sum())
        self.n += got.numel()


def max_diff(torch: Any, a: Any, b: Any) -> float:
    """The largest difference between two outputs; NaN in one and not the other is infinite."""
    an, bn = torch.isnan(a), torch.isnan(b)
    if bool((an != bn).any()):
        return float("inf")
    d = (a.float() - b.float()).abs()[~an]
    return float(d.max()) if d.numel() else 0.0


def check(torch: Any, ext: Any, case: Case, checks: int) -> kg_bench.Result:
    err = Errors()
    for c in range(checks):
        q, k, v = inputs(torch, case.dims, 100 + c)
        first = ext.forward(q, k, v, case.causal)
        ref = reference(torch, q, k, v, case.causal)
        torch.cuda.synchronize()
        err.add(torch, first, ref)
    rep = 0.0
    for _ in range(REPEATS):  # the same input again: state left from a first call shows here
        rep = max(rep, max_diff(torch, first, ext.forward(q, k, v, case.causal)))
    return kg_bench.Result(
        kernel=case.kernel,
        shape=case.shape,
        max_err=err.max_err,
        mean_err=err.sum_err / err.n if err.n else 0.0,
        ref_max_abs=err.ref_max_abs,
        bad_fraction=err.bad / err.n if err.n else 0.0,
        nan_count=err.nan,
        inf_count=err.inf,
        checks=checks,
        repeat_launches=REPEATS + 1,
        repeat_max_diff=rep,
    )


def prepare_bench(torch: Any, ext: Any, case: Case) -> Any:
    """One kernel × shape set up to be timed (rotating input copies, warm-up): a function
    that times one round of `samples` launches. Bench mode makes one per run, serve mode
    one per process."""
    b, h, n = case.dims
    copies = copies_for(4 * b * h * n * HEAD_DIM * 2)
    bufs = [(*inputs(torch, case.dims, 7 + i), torch.empty((b, h, n, HEAD_DIM), device="cuda", dtype=torch.float16)) for i in range(copies)]
    causal = case.causal

    def launch(i: int) -> None:
        q, k, v, o = bufs[i % copies]
        ext.forward_out(q, k, v, o, causal)

    for i in range(3 * copies + 10):  # warm-up, discarded
        launch(i)
    torch.cuda.synchronize()
    return lambda samples: kg_bench.time_launches(launch, samples)


def bench(torch: Any, ext: Any, case: Case, rounds: int, samples: int) -> kg_bench.Result:
    time_round = prepare_bench(torch, ext, case)
    return kg_bench.Result(kernel=case.kernel, shape=case.shape, rounds_us=[time_round(samples) for _ in range(rounds)])


def serve(torch: Any, ext: Any, req: kg_bench.Request, cases: list[tuple[str, str, Optional[Case]]], kernels: list[str], **serve_args: Any) -> int:
    """KG_MODE=serve: every kernel × shape set up once (prepare_bench), then one round of
    those each request names (kg_bench.serve_cases). ext is the loaded module, or the
    exception loading it raised: every kernel × shape then answers with it."""

    def prepare(kernel: str, shape: str, case: Case) -> Any:
        if isinstance(ext, BaseException):
            raise ext
        time_round = prepare_bench(torch, ext, case)
        return lambda samples: kg_bench.Result(kernel=kernel, shape=shape, rounds_us=[time_round(samples)])

    with torch.no_grad():
        return kg_bench.serve_cases(req, cases, prepare, prog=PROG, kernels=kernels, describe=short, sticky=kg_bench.is_cuda_error, **serve_args)


def sanitize(torch: Any, ext: Any, case: Case) -> kg_bench.Result:
    q, k, v = inputs(torch, case.dims, 1)
    ext.forward(q, k, v, case.causal)  # O from torch.empty: never written before the kernel
    torch.cuda.synchronize()
    return kg_bench.Result(kernel=case.kernel, shape=case.shape, launches=1)


def run_case(torch: Any, ext: Any, req: kg_bench.Request, case: Case) -> kg_bench.Result:
    if req.mode == "check":
        return check(torch, ext, case, req.rounds)
    if req.mode == "bench":
        return bench(torch, ext, case, req.rounds, req.samples)
    return sanitize(torch, ext, case)


def main(environ: Optional[Mapping[str, str]] = None) -> int:
    env = os.environ if environ is None else environ
    try:
        req = kg_bench.Request.from_env(DEFAULT_SHAPES, environ=env, serve=True)
        form = form_from_env(env)
    except ValueError as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    kernels = kernels_from_env(env)
    if not kernels or not req.shapes:
        print(f"{PROG}: no kernels or no shapes to run (KG_KERNELS, KG_SHAPES)", file=sys.stderr)
        return 2
    try:
        torch = kg_bench.require_cuda_torch()
    except RuntimeError as e:
        print(f"{PROG}: {e}; nothing written", file=sys.stderr)
        return 2
    cases = plan(req, kernels)
    try:
        ext = load_extension(form)
    except Exception as e:  # noqa: BLE001 (a failed build or import fails every result)
        print(f"{PROG}: KG_TORCH_FORM={form}: the extension did not build or import:\n{e}", file=sys.stderr)
        msg = f"KG_TORCH_FORM={form}: the extension did not build or import ({short(e)}); the build output is on stderr"
        if req.mode == "serve":
            # It still serves, every answer this error: the run fails naming it, rather
            # than taking the harness for one that does not serve.
            return serve(torch, RuntimeError(msg), req, cases, kernels, environ=env)
        kg_bench.write(req, [kg_bench.Result(kernel=k, shape=s, error=msg) for k, s, _ in cases])
        return 1
    if req.mode == "serve":
        return serve(torch, ext, req, cases, kernels, environ=env)
    results = []
    failed = False
    with torch.no_grad():
        for kernel, shape, case in cases:
            if case is None:
                results.append(kg_bench.Result(kernel=kernel, shape=shape, error="unknown kernel or shape"))
                failed = True
                print(f"{PROG}: {kernel} {shape}: unknown kernel or shape", file=sys.stderr)
                continue
            try:
                results.append(run_case(torch, ext, req, case))
            except Exception as e:  # noqa: BLE001 (a CUDA or PyTorch failure is this result's error)
                results.append(kg_bench.Result(kernel=kernel, shape=shape, error=short(e)))
                failed = True
                print(f"{PROG}: {kernel} {shape}: {type(e).__name__}: {e}", file=sys.stderr)
                if kg_bench.is_cuda_error(e):
                    break  # every later launch fails too
    kg_bench.write(req, results)
    return 1 if failed else 0


if __name__ == "__main__":
    kg_bench.exit(main())
