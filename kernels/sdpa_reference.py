#!/usr/bin/env python3
"""sdpa_reference.py: PyTorch's scaled_dot_product_attention, timed as the reference for the
attention kernels of kernels/harness.cpp, written as kernel-gate/bench/v1 through kg_bench.py.

    KG_MODE=bench KG_ROUNDS=4 KG_SAMPLES=30 KG_OUT=sdpa.json python3 kernels/sdpa_reference.py

It times torch.nn.functional.scaled_dot_product_attention in fp16 on CUDA, with the flash
backend (torch.nn.attention.sdpa_kernel(SDPBackend.FLASH_ATTENTION)) where PyTorch has it for
the shape, else PyTorch's own choice of backend (the file then says so), for the harness's
kernels and shapes:

    kernels  flash_fwd (non-causal), flash_fwd_causal (is_causal=True)
    shapes   small   (batch 1, heads 8, seqlen  512, head_dim 64)
             mission (batch 2, heads 8, seqlen  512, head_dim 64)
             long    (batch 2, heads 8, seqlen 2048, head_dim 64)

The environment is the harness's: KG_MODE, KG_SHAPES (default small,mission,long),
KG_ROUNDS, KG_SAMPLES, KG_OUT (standard output when unset) and KG_KERNELS (comma-separated,
default flash_fwd,flash_fwd_causal). As kernels/harness.cpp does, it rotates through enough
copies of Q, K and V (N(0, 1), seeded) that the L2 holds none, warms up with 3 × copies + 10
launches, and times single launches with kg_bench.time_launches (queued behind a hold, so
each timing is the device time of one launch).

The file, per kernel × shape (the same kernel and shape names as the harness's results):

    {"kernel": "flash_fwd", "shape": "mission",
     "rounds_us": [[...], ...],                      # SDPA's per-launch times, by round
     "reference": {"name": "torch.sdpa.flash", "rounds_us": [[...], ...]},   # the same numbers
     "extra": {"implementation": "torch.sdpa.flash", "backend": "FLASH_ATTENTION", ...}}

`reference` is the protocol's form for another implementation's timings, so a pipeline can
copy it as it is onto the head harness's result of the same kernel × shape. The name is
"torch.sdpa.flash" when the flash backend ran, "torch.sdpa" when PyTorch chose (extra.note
says why). Do not judge this file as a harness of its own: its reference is itself.

In serve mode (KG_MODE=serve, docs/harness-protocol.md) every kernel × shape is set up and
warmed up once, then each request line times one round of the ones it names, answered
through kg_bench.serve: the same results, one round per answer.

Only bench and serve mode time anything. In check and sanitize mode it writes, for each kernel ×
shape, a result whose `error` says that it only times (which fails any gate that reads it)
and exits 1: check and sanitize the kernels with kernels/harness.cpp. Without PyTorch or a
CUDA device, bench and serve mode write nothing and exit 2 with the reason on stderr (fail
closed).
An unknown kernel or shape is a result with an `error`, and exit 1, as in the harness.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, Mapping, Optional

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kg_bench  # noqa: E402

# The attention harness's shapes (kernels/harness_cases.cpp, make_case): batch, heads, seqlen,
# head_dim.
SHAPES = {"small": (1, 8, 512, 64), "mission": (2, 8, 512, 64), "long": (2, 8, 2048, 64)}
# The harness's kernel names, and whether each is causal.
KERNELS = {"flash_fwd": False, "flash_fwd_causal": True}
DEFAULT_SHAPES = "small,mission,long"
DEFAULT_KERNELS = "flash_fwd,flash_fwd_causal"
NAME_FLASH = "torch.sdpa.flash"
NAME_DEFAULT = "torch.sdpa"

ONLY_TIMES = (
    "sdpa_reference.py only times (KG_MODE=bench or serve): it is a reference timer with no {mode} mode; "
    "check and sanitize the kernels with kernels/harness.cpp"
)


@dataclass(frozen=True)
class Case:
    """One kernel × shape to time."""

    kernel: str
    shape: str
    dims: tuple[int, int, int, int]  # batch, heads, seqlen, head_dim
    causal: bool


def copies_for(nbytes: int) -> int:
    """How many copies of the inputs to rotate through so the L2 (50-60 MB) holds none: as
    kernels/harness_cases.cpp's copies_for, 256 MiB over the bytes of one copy, 1 to 64."""
    return max(1, min(64, (256 << 20) // max(nbytes, 1)))


def input_bytes(dims: tuple[int, int, int, int]) -> int:
    """Q, K, V and O in fp16, as the harness counts them for copies_for."""
    b, h, n, d = dims
    return 4 * b * h * n * d * 2


def kernels_from_env(environ: Mapping[str, str]) -> list[str]:
    """KG_KERNELS, comma-separated (default flash_fwd,flash_fwd_causal)."""
    raw = environ.get("KG_KERNELS", "") or DEFAULT_KERNELS
    return [k.strip() for k in raw.split(",") if k.strip()]


def plan(req: kg_bench.Request, kernels: list[str]) -> list[tuple[str, str, Optional[Case]]]:
    """Every kernel × shape asked for, with its Case, or None for an unknown kernel or shape.
    In sanitize mode only the first shape, as the harness does."""
    shapes = req.shapes[:1] if req.mode == "sanitize" else req.shapes
    out = []
    for kernel in kernels:
        for shape in shapes:
            case = None
            if kernel in KERNELS and shape in SHAPES:
                case = Case(kernel, shape, SHAPES[shape], KERNELS[kernel])
            out.append((kernel, shape, case))
    return out


def not_timed(req: kg_bench.Request, kernels: list[str]) -> list[kg_bench.Result]:
    """The results of a check or sanitize run: an error on each kernel × shape."""
    msg = ONLY_TIMES.format(mode=req.mode)
    return [kg_bench.Result(kernel=k, shape=s, error=msg) for k, s, _ in plan(req, kernels)]


def _load_torch() -> Any:
    """PyTorch with a CUDA device, or a RuntimeError that says what is missing."""
    return kg_bench.require_cuda_torch()


def _backend(torch: Any, q: Any, k: Any, v: Any, causal: bool) -> tuple[str, Any, dict[str, Any]]:
    """The flash backend when PyTorch runs it for these inputs, else PyTorch's own choice:
    (name, a context manager factory, extra)."""
    import contextlib  # noqa: PLC0415

    F = torch.nn.functional
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: PLC0415
    except ImportError as e:
        return NAME_DEFAULT, contextlib.nullcontext, {"backend": "default", "note": f"no torch.nn.attention.sdpa_kernel ({e})"}
    try:
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch.cuda.synchronize()
    except RuntimeError as e:
        note = f"the flash backend refused these inputs, so PyTorch chose: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
        return NAME_DEFAULT, contextlib.nullcontext, {"backend": "default", "note": note}
    return NAME_FLASH, lambda: sdpa_kernel(SDPBackend.FLASH_ATTENTION), {"backend": "FLASH_ATTENTION"}


class Prepared:
    """One kernel × shape set up to be timed: rotating inputs (as the harness's), the backend
    chosen, and warmed up. Bench mode makes one per run, serve mode one per process."""

    def __init__(self, torch: Any, case: Case) -> None:
        F = torch.nn.functional
        self.torch, self.case = torch, case
        copies = copies_for(input_bytes(case.dims))
        g = torch.Generator(device="cuda")
        g.manual_seed(7)
        bufs = [
            tuple(torch.randn(case.dims, dtype=torch.float16, device="cuda", generator=g) for _ in range(3))
            for _ in range(copies)
        ]
        self.name, self.ctx, extra = _backend(torch, *bufs[0], case.causal)
        if self.name != NAME_FLASH:
            print(f"sdpa_reference.py: {case.kernel} {case.shape}: {extra['note']}", file=sys.stderr)
        causal = case.causal

        def launch(i: int) -> None:
            q, k, v = bufs[i % copies]
            F.scaled_dot_product_attention(q, k, v, is_causal=causal)

        self.launch = launch
        warmup = 3 * copies + 10
        with torch.no_grad(), self.ctx():
            for i in range(warmup):
                launch(i)
            torch.cuda.synchronize()
        b, h, n, d = case.dims
        self.extra = {
            "implementation": self.name,
            **extra,
            "batch": b,
            "heads": h,
            "seqlen": n,
            "head_dim": d,
            "causal": causal,
            "dtype": "float16",
            "copies": copies,
            "warmup_launches": warmup,
            "torch": str(torch.__version__),
            "blocking": kg_bench._blocking_default(),
        }

    def round(self, samples: int) -> list[float]:
        """One round of single-launch timings."""
        with self.torch.no_grad(), self.ctx():
            return kg_bench.time_launches(self.launch, samples)

    def result(self, timed: list[list[float]]) -> kg_bench.Result:
        """The result of these rounds: SDPA's timings, and the same as its reference."""
        return kg_bench.Result(
            kernel=self.case.kernel,
            shape=self.case.shape,
            rounds_us=timed,
            reference=kg_bench.Reference(name=self.name, rounds_us=timed),
            extra=self.extra,
        )


def time_case(torch: Any, case: Case, rounds: int, samples: int) -> kg_bench.Result:
    """Times one kernel × shape: rotating inputs, warm-up, then rounds of single launches."""
    p = Prepared(torch, case)
    return p.result([p.round(samples) for _ in range(rounds)])


def serve(torch: Any, req: kg_bench.Request, kernels: list[str], **serve_args: Any) -> int:
    """KG_MODE=serve: every kernel × shape asked for is set up once, then each request
    times one round of those it names (kg_bench.serve_cases: a kernel × shape that failed
    to set up or to time answers with its error from then on, and the process exits 1 at
    the end of its input)."""

    def prepare(kernel: str, shape: str, case: Case) -> Any:
        p = Prepared(torch, case)
        return lambda samples: p.result([p.round(samples)])

    return kg_bench.serve_cases(req, plan(req, kernels), prepare, prog="sdpa_reference.py", kernels=kernels, **serve_args)


def main(environ: Optional[Mapping[str, str]] = None) -> int:
    env = os.environ if environ is None else environ
    try:
        req = kg_bench.Request.from_env(DEFAULT_SHAPES, environ=env, serve=True)
    except ValueError as e:
        print(f"sdpa_reference.py: {e}", file=sys.stderr)
        return 2
    kernels = kernels_from_env(env)
    if not kernels or not req.shapes:
        print("sdpa_reference.py: no kernels or no shapes to run (KG_KERNELS, KG_SHAPES)", file=sys.stderr)
        return 2
    if req.mode not in ("bench", "serve"):
        kg_bench.write(req, not_timed(req, kernels))
        print(ONLY_TIMES.format(mode=req.mode), file=sys.stderr)
        return 1
    try:
        torch = _load_torch()
    except RuntimeError as e:
        print(f"sdpa_reference.py: {e}; nothing written", file=sys.stderr)
        return 2
    if req.mode == "serve":
        return serve(torch, req, kernels, environ=env)
    results = []
    failed = False
    for kernel, shape, case in plan(req, kernels):
        if case is None:
            results.append(kg_bench.Result(kernel=kernel, shape=shape, error="unknown kernel or shape"))
            failed = True
            print(f"sdpa_reference.py: {kernel} {shape}: unknown kernel or shape", file=sys.stderr)
            continue
        try:
            results.append(time_case(torch, case, req.rounds, req.samples))
        except Exception as e:  # noqa: BLE001 (a CUDA or PyTorch failure is this result's error)
            results.append(kg_bench.Result(kernel=kernel, shape=shape, error=f"{type(e).__name__}: {e}"))
            failed = True
            print(f"sdpa_reference.py: {kernel} {shape}: {type(e).__name__}: {e}", file=sys.stderr)
    kg_bench.write(req, results)
    return 1 if failed else 0


if __name__ == "__main__":
    kg_bench.exit(main())
