"""kg_bench.py: a small helper for Python harnesses that speak kernel-gate/bench/v1.

The Python twin of kg_bench.h (docs/harness-protocol.md). It reads the request from the
environment (KG_MODE, KG_SHAPES, KG_ROUNDS, KG_SAMPLES, KG_OUT), times single launches with
CUDA events through PyTorch, and writes the result file:

    import kg_bench

    req = kg_bench.Request.from_env(default_shapes="small,mission")
    results = []
    for shape in req.shapes:
        q, k, v = make_inputs(shape)
        r = kg_bench.Result(kernel="flash_fwd", shape=shape)
        if req.mode == "bench":
            for _ in range(20):                      # warm-up, discarded
                my_attention(q, k, v)
            r.rounds_us = [kg_bench.time_launches(lambda: my_attention(q, k, v), req.samples)
                           for _ in range(req.rounds)]
        results.append(r)
    kg_bench.write(req, results)

Only the standard library is needed to read the request and write the file; PyTorch is
imported when time_launches or the device lookup needs it. NaN and infinities are written
as the strings "NaN", "Infinity" and "-Infinity", never as bare tokens.

time_launches holds the stream while it queues the timed launches (torch.cuda._sleep, sized
from the measured enqueue time), so each event pair measures the kernel's device time and
not the host's launch gaps; a hold never lasts more than HOLD_MAX_US, and a function that
waits for the GPU (.item(), a copy from pageable host memory, a synchronisation) is found by
its first hold and timed unheld, with one "kg_bench:" line on stderr; see its docstring.

With KG_MODE=serve, serve() answers one round per request line after the harness has set up
once (docs/harness-protocol.md, "Serving rounds"); a harness that serves reads its request
with Request.from_env(..., serve=True), and one that does not refuses KG_MODE=serve:

    req = kg_bench.Request.from_env("small,mission", serve=True)
    if req.mode == "serve":
        prepared = {shape: make_inputs(shape) for shape in req.shapes}   # and warm up
        def one_round(sr):                  # a ServeRequest: round, samples, shapes, kernels
            return [kg_bench.Result(kernel="flash_fwd", shape=s,
                                    rounds_us=[kg_bench.time_launches(..., sr.samples)])
                    for s in (sr.shapes or req.shapes)]
        kg_bench.exit(kg_bench.serve(req, one_round))   # in serve mode: no interpreter shutdown
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence, Union

SCHEMA = "kernel-gate/bench/v1"
MODES = ("check", "bench", "sanitize")
# KG_MODE=serve is accepted only from a harness that says it serves (from_env(serve=True)):
# one that does not must exit at once, which is how kernel-gate finds it does not serve.
SERVE_MODE = "serve"
SERVE_SCHEMA = "kernel-gate/serve/v1"

__all__ = [
    "HOLD_CHUNK",
    "HOLD_MAX_US",
    "SCHEMA",
    "Device",
    "Reference",
    "Request",
    "Result",
    "SERVE_MODE",
    "SERVE_SCHEMA",
    "ServeRequest",
    "device_info",
    "require_cuda_torch",
    "dumps",
    "parse_serve_request",
    "serve",
    "serve_cases",
    "is_cuda_error",
    "time_launches",
    "wanted",
    "write",
]


def _positive_int(environ: Mapping[str, str], name: str, default: int) -> int:
    raw = environ.get(name, "")
    if raw == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ValueError(f"{name}={raw!r}: want a whole number") from None
    if value < 1:
        raise ValueError(f"{name}={raw!r}: want a number >= 1")
    return value


@dataclass
class Request:
    """What kernel-gate asked for (kgbench::Request in kg_bench.h)."""

    mode: str = "check"
    shapes: list[str] = field(default_factory=list)
    rounds: int = 3
    samples: int = 50
    out: str = ""

    @classmethod
    def from_env(
        cls,
        default_shapes: Union[str, Sequence[str]] = "",
        environ: Optional[Mapping[str, str]] = None,
        *,
        serve: bool = False,
    ) -> "Request":
        """Reads KG_MODE (default check), KG_SHAPES (default_shapes when unset), KG_ROUNDS
        (default 3), KG_SAMPLES (default 50) and KG_OUT (standard output when unset).

        A mode other than check, bench or sanitize (or serve, with serve=True: a harness that
        answers KG_MODE=serve through serve()), or a count that is not a whole number >= 1,
        raises ValueError: a harness should fail loudly rather than run something
        nobody asked for.
        """
        env = os.environ if environ is None else environ
        mode = env.get("KG_MODE", "") or "check"
        modes = MODES + (SERVE_MODE,) if serve else MODES
        if mode not in modes:
            raise ValueError(f"KG_MODE={mode!r}: want one of {', '.join(modes)}")
        shapes_raw = env.get("KG_SHAPES", "")
        if shapes_raw:
            shapes = [s.strip() for s in shapes_raw.split(",") if s.strip()]
        elif isinstance(default_shapes, str):
            shapes = [s.strip() for s in default_shapes.split(",") if s.strip()]
        else:
            shapes = [str(s) for s in default_shapes]
        return cls(
            mode=mode,
            shapes=shapes,
            rounds=_positive_int(env, "KG_ROUNDS", 3),
            samples=_positive_int(env, "KG_SAMPLES", 50),
            out=env.get("KG_OUT", ""),
        )


@dataclass
class Reference:
    """Another implementation timed in the same run (e.g. "torch.sdpa.flash")."""

    name: str
    rounds_us: list[list[float]] = field(default_factory=list)


@dataclass
class Result:
    """One kernel × shape (kgbench::Result in kg_bench.h). Fields left None are not written."""

    kernel: str
    shape: str
    # bench mode: per-launch timings in microseconds, grouped by round
    rounds_us: list[list[float]] = field(default_factory=list)
    # check mode
    max_err: Optional[float] = None
    mean_err: Optional[float] = None
    ref_max_abs: Optional[float] = None
    bad_fraction: Optional[float] = None
    nan_count: Optional[int] = None
    inf_count: Optional[int] = None
    checks: Optional[int] = None
    repeat_launches: Optional[int] = None
    repeat_max_diff: Optional[float] = None
    # sanitize mode
    launches: Optional[int] = None
    # the launch, any mode: threads per block and dynamic shared memory in bytes (what
    # kernel-gate computes a regression's occupancy for)
    block_size: Optional[int] = None
    dynamic_smem: Optional[int] = None
    # the harness's own failure for this kernel × shape
    error: str = ""
    # beyond kg_bench.h: a reference timed in the same run, and anything else to keep
    reference: Optional[Reference] = None
    extra: Optional[dict[str, Any]] = None


@dataclass
class Device:
    """The GPU and software the harness ran on."""

    name: str = ""
    compute_cap: str = ""
    driver: str = ""
    cuda: str = ""


def require_cuda_torch(who: str = "") -> Any:
    """PyTorch with a CUDA device, or a RuntimeError that says what is missing, beginning
    "<who> needs ...". A directory named torch on sys.path without PyTorch installed (such as
    kernels/torch/ when kernels/ is on it) imports as an empty namespace package: that is
    said too, not left to fail later as a missing attribute."""
    needs = f"{who} needs" if who else "needs"
    try:
        import torch  # noqa: PLC0415 (imported lazily: writing a file needs no torch)
    except ImportError as e:
        raise RuntimeError(f"{needs} PyTorch with CUDA: import torch failed ({e})") from e
    if getattr(torch, "cuda", None) is None:
        where = list(getattr(torch, "__path__", None) or [getattr(torch, "__file__", None)])
        raise RuntimeError(f"{needs} PyTorch with CUDA: import torch found {where}, which is not PyTorch (is PyTorch installed?)")
    if not torch.cuda.is_available():
        raise RuntimeError(
            f"{needs} a CUDA device: torch.cuda.is_available() is False "
            f"(PyTorch {getattr(torch, '__version__', '?')}, built for CUDA {getattr(torch.version, 'cuda', None)})"
        )
    return torch


def _cuda_torch():
    return require_cuda_torch("kg_bench.time_launches")


def _takes_index(fn: Callable[..., Any]) -> bool:
    """Whether fn has a required positional parameter (then it gets the sample index, as
    kg_bench.h's launch(i) does, e.g. to rotate input buffers)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty:
            return True
    return False


# HOLD_CHUNK is how many samples (two events and fn's launches each) are queued behind one
# hold; the CUDA launch queue holds about a thousand entries, and a host that fills it blocks.
HOLD_CHUNK = 64
# HOLD_MAX_US bounds one hold (torch.cuda._sleep) in microseconds, however slowly fn enqueues:
# a chunk is tried at most _HOLD_TRIES times, so no chunk holds the stream for more than
# 0.3 s in all. 100 ms covers 64 samples of up to about 780 us of host time each.
HOLD_MAX_US = 100_000.0
_HOLD_TRIES = 3
# What time_launches has learnt in this process: the host's time to enqueue one sample
# (events and fn) in microseconds, torch.cuda._sleep's cycles per microsecond per device,
# and the fns (by where they are defined) already said to wait for the GPU.
_hold: dict[str, Any] = {"enqueue_us": 50.0, "cycles_per_us": {}, "warned": set()}


def _blocking_default(environ: Optional[Mapping[str, str]] = None) -> bool:
    """False when KG_BENCH_BLOCKING=0 (as kg_bench.h reads it)."""
    env = os.environ if environ is None else environ
    return env.get("KG_BENCH_BLOCKING", "") != "0"


def _hold_us(enqueue_us: float, n: int) -> float:
    """How long to hold the stream for n samples that take enqueue_us each to queue: twice
    that plus 100 us, never more than HOLD_MAX_US."""
    return min(HOLD_MAX_US, 2.0 * enqueue_us * n + 100.0)


# What one held try of a chunk says (_hold_verdict).
QUEUED, BLOCKING, RETRY, FAILED = "queued", "blocking", "retry", "failed"


def _hold_verdict(ended_during_first: bool, ended_before_queued: bool, attempt: int) -> str:
    """What to do after try `attempt` (from 0) of holding a chunk: QUEUED when the hold was
    still on once the whole chunk was queued; BLOCKING when it had already ended when fn's
    first call of the chunk returned (a hold sized for twice the whole chunk's enqueueing
    cannot end during one call unless fn waited for the GPU: it synchronises, calls .item(),
    copies from pageable host memory; or the host stalled that long; holding longer cannot
    help, so fn is timed unheld);
    RETRY when it ended later, while tries are left (the chunk is queued again behind a
    longer hold); FAILED after _HOLD_TRIES tries."""
    if ended_during_first:
        return BLOCKING
    if not ended_before_queued:
        return QUEUED
    return RETRY if attempt + 1 < _HOLD_TRIES else FAILED


def _where(fn: Callable[..., Any]) -> str:
    """Where fn is defined (file:line of a function or lambda), to name it in a message and
    to say so once per place; its type's name for other callables."""
    code = getattr(fn, "__code__", None) or getattr(getattr(fn, "__func__", None), "__code__", None)
    if code is not None:
        return f"{code.co_filename}:{code.co_firstlineno} ({code.co_name})"
    return type(fn).__qualname__


def _warn_blocking(fn: Callable[..., Any], hold_us: float) -> None:
    where = _where(fn)
    if where in _hold["warned"]:
        return
    _hold["warned"].add(where)
    print(
        f"kg_bench: time_launches: fn ({where}) waits for the GPU: the hold ({hold_us / 1000.0:.1f} ms of "
        "torch.cuda._sleep) ended during its first call (does it synchronise, call .item(), or copy from "
        "pageable host memory?); it is timed unheld, so each timing includes the host's launch gaps and "
        "waits (said once per fn)",
        file=sys.stderr,
    )


def _sleep_cycles_per_us(torch: Any, stream: Any) -> float:
    """torch.cuda._sleep's spin counts SM clock cycles: measured once per device with CUDA
    events (the larger of two tries, the first of which also wakes the clocks), so that a hold
    of N microseconds is N times this many cycles."""
    dev = torch.cuda.current_device()
    known = _hold["cycles_per_us"].get(dev)
    if known:
        return known
    best = 0.0
    for cycles in (200_000, 2_000_000):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(stream)
        torch.cuda._sleep(cycles)
        end.record(stream)
        end.synchronize()
        ms = start.elapsed_time(end)
        if ms > 0:
            best = max(best, cycles / (1000.0 * ms))
    if best <= 0:
        best = 2000.0  # about the H100/H200 boost clock in MHz
    _hold["cycles_per_us"][dev] = best
    return best


def time_launches(fn: Callable[..., Any], samples: int, stream: Any = None, *, blocking: Optional[bool] = None) -> list[float]:
    """Times `samples` single launches of fn with CUDA events on stream (default: the current
    stream) and returns microseconds per launch. fn gets the sample index when it takes a
    required argument (lambda i: f(bufs[i % n])), and nothing otherwise (lambda: f(x)). fn
    must launch its work on the current stream (time_launches makes stream current).

    Blocking (the default; blocking=False or KG_BENCH_BLOCKING=0 turns it off): an event
    pair recorded around a launch while the GPU is idle measures the host's launch gaps as
    much as the kernel. So before each chunk of HOLD_CHUNK samples, time_launches launches
    torch.cuda._sleep (PyTorch's spin kernel; a kernel that waits for a host flag, as
    kg_bench.h's does, is not available from Python) for a number of cycles meant to outlast
    the host's enqueueing of the chunk: twice the enqueue time per sample measured on the
    earlier chunks (50 us per sample before any was measured) plus 100 us, never more than
    HOLD_MAX_US (100 ms), converted to cycles with a clock rate measured once per device.
    The chunk's events and launches then queue up behind it and run back to back, so each
    pair measures its launch's device time. An event recorded after the sleep is queried
    after fn's first call of the chunk and once the chunk is queued (_hold_verdict):

    - ended during the first call: fn waits for the GPU (synchronises, .item(), a copy from
      pageable host memory), which no hold can outlast. Every sample is then timed unheld
      (fn is called again for those already queued), and a "kg_bench:" line on stderr says
      so, once per fn (by where it is defined).
    - ended later: the chunk may hold host gaps, so it is timed again behind a sleep sized
      from the enqueue time just measured, doubled (three tries); a chunk that never fits
      gets NaN timings and a message on stderr.

    Without torch.cuda._sleep the launches are timed unheld.

    Like kg_bench.h's TimeLaunches it does no warm-up: launch the kernel a few times first.
    Raises RuntimeError when PyTorch or a CUDA device is missing.
    """
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ValueError(f"samples={samples!r}: want a whole number >= 1")
    torch = _cuda_torch()
    if stream is None:
        stream = torch.cuda.current_stream()
    call = (lambda i: fn(i)) if _takes_index(fn) else (lambda i: fn())
    events = [
        (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(samples)
    ]

    def queue(lo: int, hi: int) -> None:
        for i in range(lo, hi):
            start, end = events[i]
            start.record(stream)
            call(i)
            end.record(stream)

    sleep = getattr(torch.cuda, "_sleep", None)
    hold = (_blocking_default() if blocking is None else bool(blocking)) and sleep is not None
    failed = []
    with torch.cuda.stream(stream):
        if hold:
            rate = _sleep_cycles_per_us(torch, stream)
            failed, waited_us = _queue_held(sleep, rate, torch, stream, events, call, samples)
            if waited_us:
                _warn_blocking(fn, waited_us)
                hold = False
        if not hold:
            queue(0, samples)
    events[-1][1].synchronize()
    us = [1000.0 * start.elapsed_time(end) for start, end in events]
    for lo, hi in failed:
        us[lo:hi] = [math.nan] * (hi - lo)
        print(
            f"kg_bench: time_launches: the hold (torch.cuda._sleep) ended before samples {lo}-{hi - 1} were "
            f"queued, {_HOLD_TRIES} times: their timings would include host gaps and are NaN (does fn "
            "synchronise now and then, or take more than "
            f"{HOLD_MAX_US / HOLD_CHUNK / 2000.0:.2f} ms to enqueue? KG_BENCH_BLOCKING=0 times unheld)",
            file=sys.stderr,
        )
    return us


def _queue_held(
    sleep: Callable[[int], Any], rate: float, torch: Any, stream: Any, events: list, call: Callable[[int], Any], samples: int
) -> tuple[list[tuple[int, int]], float]:
    """Queues every sample chunk by chunk behind holds (time_launches). Returns the chunks
    that never fitted and 0; or, as soon as a hold ends during fn's first call of a chunk (fn
    waits for the GPU: the caller times every sample unheld), no chunks and that hold's
    length in microseconds."""
    failed: list[tuple[int, int]] = []
    for lo in range(0, samples, HOLD_CHUNK):
        hi = min(samples, lo + HOLD_CHUNK)
        for attempt in range(_HOLD_TRIES):
            hold_us = _hold_us(_hold["enqueue_us"], hi - lo)
            sleep(max(1, int(hold_us * rate)))
            released = torch.cuda.Event()
            released.record(stream)
            t0 = time.perf_counter()
            ended_first = ended = False
            for i in range(lo, hi):
                start, end = events[i]
                start.record(stream)
                call(i)
                end.record(stream)
                if i == lo:
                    ended_first = ended = released.query()
                    if ended_first:
                        break
            else:
                if hi - lo > 1:
                    ended = released.query()
            verdict = _hold_verdict(ended_first, ended, attempt)
            if verdict == BLOCKING:
                return [], hold_us  # the time fn waited says nothing of its enqueueing: nothing learnt
            per_sample = (time.perf_counter() - t0) * 1e6 / (hi - lo)
            _hold["enqueue_us"] = min(HOLD_MAX_US, max(per_sample, 0.75 * _hold["enqueue_us"]))
            if verdict == QUEUED:
                break
            _hold["enqueue_us"] = min(HOLD_MAX_US, 2.0 * _hold["enqueue_us"])
            if verdict == FAILED:
                failed.append((lo, hi))
    return failed, 0.0


def _driver_from_proc(line: str) -> str:
    """The version in /proc/driver/nvidia/version's first line: the first dotted number after
    "Kernel Module", whether the proprietary module's ("... Kernel Module  580.159.04  ...")
    or the open one's ("... Open Kernel Module for x86_64  580.159.04  ...")."""
    if "Kernel Module" not in line:
        return ""
    for word in line.split("Kernel Module", 1)[1].split():
        parts = word.split(".")
        if len(parts) >= 2 and all(p.isdigit() for p in parts):
            return word
    return ""


def _driver_version(torch: Any) -> str:
    """The kernel driver's version ("580.159.04") on Linux, else the CUDA version the driver
    supports (as kg_bench.h does)."""
    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8", errors="replace") as f:
            v = _driver_from_proc(f.readline())
        if v:
            return v
    except OSError:
        pass
    get = getattr(getattr(torch, "_C", None), "_cuda_getDriverVersion", None)
    if get is not None:
        try:
            v = int(get())
            return f"{v // 1000}.{(v % 1000) // 10}"
        except Exception:  # noqa: BLE001 (a private API: any failure means unknown)
            pass
    return ""


def device_info(index: Optional[int] = None) -> Device:
    """The current (or given) CUDA device as PyTorch sees it; empty fields when PyTorch or a
    device is missing, so a file written without one says so instead of guessing."""
    try:
        torch = _cuda_torch()
    except RuntimeError:
        return Device()
    i = torch.cuda.current_device() if index is None else index
    major, minor = torch.cuda.get_device_capability(i)
    return Device(
        name=str(torch.cuda.get_device_name(i)),
        compute_cap=f"{major}.{minor}",
        driver=_driver_version(torch),
        cuda=str(torch.version.cuda or ""),
    )


def _number(v: Any, where: str) -> Union[float, str]:
    if isinstance(v, bool):
        raise TypeError(f"{where}: {v!r} is a bool, not a number")
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: {v!r} is not a number") from None
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return f


def _count(v: Any, where: str) -> int:
    try:
        whole = not isinstance(v, (bool, str)) and int(v) == v
    except (TypeError, ValueError, OverflowError):
        whole = False
    if not whole:
        raise TypeError(f"{where}: {v!r} is not a whole number")
    if int(v) < 0:
        raise ValueError(f"{where}: {v!r} is negative")
    return int(v)


def _rounds(rounds: Sequence[Sequence[Any]], where: str) -> list[list[Union[float, str]]]:
    return [[_number(x, f"{where}[{i}][{j}]") for j, x in enumerate(r)] for i, r in enumerate(rounds)]


def _plain(v: Any) -> Any:
    """extra's values, made JSON-safe: non-finite floats become strings."""
    if isinstance(v, float):
        return _number(v, "extra")
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


_FLOATS = ("max_err", "mean_err", "ref_max_abs", "bad_fraction")
_COUNTS = ("nan_count", "inf_count", "checks", "repeat_launches")


def _result_json(r: Result, i: int) -> dict[str, Any]:
    where = f"results[{i}]"
    if not isinstance(r.kernel, str) or not r.kernel or not isinstance(r.shape, str) or not r.shape:
        raise ValueError(f"{where}: kernel and shape must be non-empty strings")
    where = f"results[{i}] ({r.kernel} × {r.shape})"
    out: dict[str, Any] = {"kernel": r.kernel, "shape": r.shape}
    if r.rounds_us:
        out["rounds_us"] = _rounds(r.rounds_us, where + ".rounds_us")
    if r.reference is not None:
        ref: dict[str, Any] = {"name": r.reference.name}
        if r.reference.rounds_us:
            ref["rounds_us"] = _rounds(r.reference.rounds_us, where + ".reference.rounds_us")
        out["reference"] = ref
    for name in _FLOATS:
        v = getattr(r, name)
        if v is not None:
            out[name] = _number(v, f"{where}.{name}")
    for name in _COUNTS:
        v = getattr(r, name)
        if v is not None:
            out[name] = _count(v, f"{where}.{name}")
    if r.repeat_max_diff is not None:
        out["repeat_max_diff"] = _number(r.repeat_max_diff, where + ".repeat_max_diff")
    if r.launches is not None:
        out["launches"] = _count(r.launches, where + ".launches")
    if r.block_size is not None:
        out["block_size"] = _count(r.block_size, where + ".block_size")
        if not 1 <= out["block_size"] <= 1024:
            raise ValueError(f"{where}.block_size: {r.block_size} is not a block a kernel can launch (1 to 1024 threads)")
    if r.dynamic_smem is not None:
        out["dynamic_smem"] = _count(r.dynamic_smem, where + ".dynamic_smem")
    if r.error:
        out["error"] = str(r.error)
    if r.extra:
        out["extra"] = _plain(r.extra)
    return out


def dumps(request: Request, results: Sequence[Result], device: Union[Device, Mapping[str, str], None] = None) -> str:
    """The kernel-gate/bench/v1 text write() stores. device defaults to device_info()."""
    if device is None:
        device = device_info()
    if isinstance(device, Mapping):
        device = Device(**{k: str(v) for k, v in device.items()})
    if not results:
        raise ValueError("no results: kernel-gate reads a file with at least one")
    seen = set()
    rows = []
    for i, r in enumerate(results):
        key = (r.kernel, r.shape)
        if key in seen:
            raise ValueError(f"results[{i}]: {r.kernel} × {r.shape} appears twice")
        seen.add(key)
        rows.append(_result_json(r, i))
    doc = {
        "schema": SCHEMA,
        "device": dataclasses.asdict(device),
        "request": {
            "mode": request.mode,
            "shapes": list(request.shapes),
            "rounds": request.rounds,
            "samples": request.samples,
        },
        "results": rows,
    }
    # allow_nan=False: a NaN that slipped through is an error here, never a bare token.
    body = ",\n  ".join(json.dumps(row, allow_nan=False, ensure_ascii=False) for row in rows)
    head = json.dumps({k: doc[k] for k in ("schema", "device", "request")}, allow_nan=False, ensure_ascii=False)
    return head[:-1] + ',\n "results": [\n  ' + body + "\n ]}\n"


def write(request: Request, results: Sequence[Result], device: Union[Device, Mapping[str, str], None] = None) -> None:
    """Writes the results to request.out (standard output when empty), replacing the file
    whole, so a harness that dies mid-write leaves no half file. device defaults to the
    current CUDA device (empty fields without PyTorch or a GPU)."""
    text = dumps(request, results, device)
    if not request.out:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    directory = os.path.dirname(os.path.abspath(request.out))
    fd, tmp = tempfile.mkstemp(prefix=".kg_bench-", suffix=".json", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's file is private; KG_OUT is an ordinary file
        os.replace(tmp, request.out)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---- KG_MODE=serve: one process, many rounds ----


@dataclass
class ServeRequest:
    """One request of KG_MODE=serve: time round `round` with `samples` launches of each kernel
    × shape named (shapes and kernels empty: everything the harness set up)."""

    round: int
    samples: int
    shapes: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)


def _request_int(doc: Mapping[str, Any], key: str, least: int) -> int:
    v = doc.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < least:
        raise ValueError(f"{key}={v!r}: want a whole number >= {least}")
    return v


def _request_names(doc: Mapping[str, Any], key: str) -> list[str]:
    v = doc.get(key, [])
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError(f"{key}={v!r}: want a list of names")
    return list(v)


def parse_serve_request(line: str) -> ServeRequest:
    """One request line ({"round": 3, "samples": 30, "shapes": [...], "kernels": [...]}); keys
    it does not know are ignored. Raises ValueError for anything else."""
    try:
        doc = json.loads(line)
    except ValueError as e:
        raise ValueError(f"not JSON: {e}") from None
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    return ServeRequest(
        round=_request_int(doc, "round", 0),
        samples=_request_int(doc, "samples", 1),
        shapes=_request_names(doc, "shapes"),
        kernels=_request_names(doc, "kernels"),
    )


def wanted(names: Sequence[str], name: str) -> bool:
    """Whether a request's list names name (an empty list names everything)."""
    return not names or name in names


def serve(
    request: Request,
    answer: Callable[[ServeRequest], Sequence[Result]],
    *,
    stdin: Any = None,
    out: Any = None,
    device: Union[Device, Mapping[str, str], None] = None,
    environ: Optional[Mapping[str, str]] = None,
) -> int:
    """KG_MODE=serve: call it once the harness has set up and warmed up. It writes the
    handshake, then for each request line on stdin (default sys.stdin) calls answer(request)
    for one round's results (rounds_us holding that round) and writes them as one answer
    line, {"round": N, "file": <a kernel-gate/bench/v1 file>}, to out (default: the
    descriptor KG_SERVE_FD names; never standard output, where the harness's own prints
    go). Returns the exit status: 0 at the end of input, 2 when there is no answer
    descriptor or a request does not parse. The device (default device_info()) is looked up
    once."""
    env = os.environ if environ is None else environ
    stdin = sys.stdin if stdin is None else stdin
    close = False
    if out is None:
        raw = env.get("KG_SERVE_FD", "")
        try:
            fd = int(raw)
            if fd <= 2:
                raise ValueError("a standard stream")
            out = os.fdopen(fd, "w", encoding="utf-8")
            close = True
        except (ValueError, OSError) as e:
            print(f"kg_bench: KG_MODE=serve needs KG_SERVE_FD, the descriptor kernel-gate reads answers from (got {raw!r}: {e})", file=sys.stderr)
            return 2
    if device is None:
        device = device_info()
    try:
        out.write(json.dumps({"serve": SERVE_SCHEMA}) + "\n")
        out.flush()
        for line in stdin:
            if not line.strip():
                continue
            try:
                sr = parse_serve_request(line)
            except ValueError as e:
                print(f"kg_bench: not a serve request ({e}): {line[:200]!r}", file=sys.stderr)
                return 2
            round_req = Request(mode="bench", shapes=list(sr.shapes or request.shapes), rounds=1, samples=sr.samples)
            text = dumps(round_req, list(answer(sr)), device)
            # json.dumps escapes newlines inside strings: the ones left are layout.
            out.write('{"round": %d, "file": %s}\n' % (sr.round, text.replace("\n", " ").strip()))
            out.flush()
        return 0
    finally:
        if close:
            out.close()


def exit(status: int, environ: Optional[Mapping[str, str]] = None) -> None:  # noqa: A001 (sys.exit's twin)
    """Ends the harness with status: sys.exit(status), except with KG_MODE=serve, where the
    process ends at once (os._exit, after flushing stdout and stderr). A serving process's
    exit is on the path of every verdict (kernel-gate waits for the last set of processes to
    end, to check their status), and the interpreter's shutdown with PyTorch loaded took
    0.44-0.49 s of the 0.6-1.0 s exit on an H100, one process or 8 side by side
    (testdata/timing/python-startup.sh); by then every answer is written. It skips atexit handlers and finalizers: a harness that needs them
    at the end of serving should call sys.exit instead. In the other modes (a profiler,
    compute-sanitizer's sanitize runs) the shutdown is left as it is."""
    env = os.environ if environ is None else environ
    if env.get("KG_MODE", "") != "serve":
        sys.exit(status)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


def is_cuda_error(e: BaseException) -> bool:
    """A CUDA error raised through PyTorch: the process's CUDA context is broken, and every
    later launch fails too (harness.cpp stops at one as well)."""
    return "CUDA error" in str(e) or "AcceleratorError" in type(e).__name__


def _error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def serve_cases(
    request: Request,
    cases: Sequence[tuple[str, str, Any]],
    prepare: Callable[[str, str, Any], Callable[[int], Result]],
    *,
    prog: str,
    kernels: Sequence[str],
    describe: Callable[[BaseException], str] = _error_text,
    sticky: Callable[[BaseException], bool] = lambda e: False,
    **serve_args: Any,
) -> int:
    """KG_MODE=serve for a harness that sets each kernel × shape up once: cases is its plan,
    (kernel, shape, case) with case None for an unknown kernel or shape; prepare(kernel,
    shape, case) sets one up (inputs, warm-up) and returns a function that times one round
    of `samples` launches and returns its Result (rounds_us holding that round). Then
    serve() answers each request with a round of every kernel × shape it names.

    Fails closed: a kernel × shape that could not be set up, or whose round raised, answers
    with its error (describe(e)) from then on, and the process exits 1 at the end of its
    input. An error for which sticky(e) is true (a CUDA error, after which every launch of
    the process fails) makes every later answer of every kernel × shape that error. Each
    error is printed on stderr once, after prog."""
    errors: dict[tuple[str, str], str] = {}
    rounds: dict[tuple[str, str], Callable[[int], Result]] = {}
    broken = ""  # a sticky error: every answer from then on
    failed = False

    def fail(kernel: str, shape: str, e: BaseException) -> str:
        nonlocal broken, failed
        msg = describe(e)
        errors[(kernel, shape)] = msg
        failed = True
        print(f"{prog}: {kernel} {shape}: {type(e).__name__}: {e}", file=sys.stderr)
        if sticky(e):
            broken = msg
        return msg

    for kernel, shape, case in cases:
        if broken:
            errors[(kernel, shape)] = broken
        elif case is None:
            errors[(kernel, shape)] = "unknown kernel or shape"
            failed = True
            print(f"{prog}: {kernel} {shape}: unknown kernel or shape", file=sys.stderr)
        else:
            try:
                rounds[(kernel, shape)] = prepare(kernel, shape, case)
            except Exception as e:  # noqa: BLE001 (this kernel × shape's error)
                fail(kernel, shape, e)

    def one_round(sr: ServeRequest) -> list[Result]:
        nonlocal failed
        out = []
        for kernel in sr.kernels or kernels:
            for shape in sr.shapes or request.shapes:
                key = (kernel, shape)
                msg = broken or errors.get(key, "")
                if not msg and key not in rounds:
                    msg = "not set up in this process (KG_KERNELS, KG_SHAPES)"
                if not msg:
                    try:
                        out.append(rounds[key](sr.samples))
                        continue
                    except Exception as e:  # noqa: BLE001
                        msg = fail(kernel, shape, e)
                failed = True
                out.append(Result(kernel=kernel, shape=shape, error=msg))
        return out

    code = serve(request, one_round, **serve_args)
    return code or (1 if failed else 0)
