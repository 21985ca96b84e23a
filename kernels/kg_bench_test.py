"""Tests of kg_bench.py, and of sdpa_reference.py's pure-Python parts, that need neither
PyTorch nor a GPU: run `python3 kernels/kg_bench_test.py` (kernels/forms/forms_test.py's tests
of the forms' harnesses run with them).

The files under testdata/harness-python/ are what write() makes of the GOLDEN_* inputs
below; the Go tests (action/bench_run_test.go) read them with kernel-gate's reader, so the
two cannot drift apart unnoticed. After a deliberate change of the format, regenerate them
with `KG_BENCH_REGEN=1 python3 kernels/kg_bench_test.py`.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import sys
import tempfile
import types
import unittest

sys.dont_write_bytecode = True  # leave no __pycache__ in kernels/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kg_bench  # noqa: E402
import sdpa_reference  # noqa: E402

GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "harness-python")

GOLDEN_DEVICE = {"name": "NVIDIA H200", "compute_cap": "9.0", "driver": "580.159.04", "cuda": "13.0"}

NAN, INF = float("nan"), float("inf")


def golden_bench():
    req = kg_bench.Request(mode="bench", shapes=["small", "mission"], rounds=2, samples=4)
    results = [
        kg_bench.Result(
            kernel="flash_fwd",
            shape="small",
            rounds_us=[[27.104, 27.296, 27.2, 27.168], [27.04, 27.136, NAN, 27.072]],
            reference=kg_bench.Reference(name="torch.sdpa.flash", rounds_us=[[41.5, 41.6, 41.4, 41.5], [41.3, 41.4, 41.5, INF]]),
        ),
        kg_bench.Result(kernel="flash_fwd", shape="mission", rounds_us=[[188.5, 189.0, 188.7, 188.9], [190.1, 190.3, 190.0, 190.2]]),
        kg_bench.Result(kernel="row_softmax", shape="mission", error="CUDA error: an illegal memory access was encountered"),
    ]
    return req, results


def golden_check():
    req = kg_bench.Request(mode="check", shapes=["small"], rounds=3, samples=50)
    results = [
        kg_bench.Result(
            kernel="flash_fwd", shape="small", max_err=0.000151, mean_err=1.52e-05, ref_max_abs=2.91,
            bad_fraction=0, nan_count=0, inf_count=0, checks=3, repeat_launches=4, repeat_max_diff=0,
        ),
        kg_bench.Result(
            kernel="gemm_wmma", shape="small", max_err=NAN, mean_err=INF, ref_max_abs=-INF,
            nan_count=12, inf_count=1, checks=3, extra={"note": "planted NaN", "worst": [NAN, 1.5]},
        ),
    ]
    return req, results


def no_bare_constants(text):
    """json.loads that fails on bare NaN/Infinity tokens (which some JSON readers reject)."""

    def refuse(token):
        raise AssertionError(f"bare {token} in the output")

    return json.loads(text, parse_constant=refuse)


class RequestTest(unittest.TestCase):
    def test_defaults(self):
        r = kg_bench.Request.from_env("small,mission", environ={})
        self.assertEqual(r, kg_bench.Request(mode="check", shapes=["small", "mission"], rounds=3, samples=50, out=""))

    def test_from_env(self):
        r = kg_bench.Request.from_env(
            ["ignored"],
            environ={"KG_MODE": "bench", "KG_SHAPES": " mission, ,long", "KG_ROUNDS": "1", "KG_SAMPLES": "30", "KG_OUT": "/tmp/x.json"},
        )
        self.assertEqual(r, kg_bench.Request(mode="bench", shapes=["mission", "long"], rounds=1, samples=30, out="/tmp/x.json"))

    def test_list_default_shapes(self):
        self.assertEqual(kg_bench.Request.from_env(["a", "b"], environ={"KG_MODE": "sanitize"}).shapes, ["a", "b"])

    def test_bad_values_fail_loudly(self):
        for env, word in [
            ({"KG_MODE": "benchmark"}, "KG_MODE"),
            ({"KG_ROUNDS": "three"}, "KG_ROUNDS"),
            ({"KG_SAMPLES": "0"}, "KG_SAMPLES"),
            ({"KG_ROUNDS": "-2"}, "KG_ROUNDS"),
        ]:
            with self.assertRaisesRegex(ValueError, word, msg=env):
                kg_bench.Request.from_env("", environ=env)

    def test_reads_os_environ(self):
        old = os.environ.get("KG_SAMPLES")
        os.environ["KG_SAMPLES"] = "7"
        try:
            self.assertEqual(kg_bench.Request.from_env().samples, 7)
        finally:
            if old is None:
                del os.environ["KG_SAMPLES"]
            else:
                os.environ["KG_SAMPLES"] = old


class WriteTest(unittest.TestCase):
    def test_non_finite_are_strings(self):
        req, results = golden_bench()
        doc = no_bare_constants(kg_bench.dumps(req, results, GOLDEN_DEVICE))
        self.assertEqual(doc["schema"], "kernel-gate/bench/v1")
        self.assertEqual(doc["device"], GOLDEN_DEVICE)
        self.assertEqual(doc["request"], {"mode": "bench", "shapes": ["small", "mission"], "rounds": 2, "samples": 4})
        first = doc["results"][0]
        self.assertEqual(first["rounds_us"][1][2], "NaN")
        self.assertEqual(first["reference"]["rounds_us"][1][3], "Infinity")
        self.assertEqual(doc["results"][2], {"kernel": "row_softmax", "shape": "mission", "error": "CUDA error: an illegal memory access was encountered"})

    def test_unset_fields_are_left_out(self):
        req, results = golden_check()
        doc = no_bare_constants(kg_bench.dumps(req, results, GOLDEN_DEVICE))
        self.assertEqual(
            doc["results"][0],
            {"kernel": "flash_fwd", "shape": "small", "max_err": 0.000151, "mean_err": 1.52e-05, "ref_max_abs": 2.91,
             "bad_fraction": 0.0, "nan_count": 0, "inf_count": 0, "checks": 3, "repeat_launches": 4, "repeat_max_diff": 0.0},
        )
        bad = doc["results"][1]
        self.assertEqual((bad["max_err"], bad["mean_err"], bad["ref_max_abs"]), ("NaN", "Infinity", "-Infinity"))
        self.assertEqual(bad["extra"], {"note": "planted NaN", "worst": ["NaN", 1.5]})
        self.assertNotIn("rounds_us", bad)
        self.assertNotIn("error", bad)

    def test_sanitize_launches(self):
        req = kg_bench.Request(mode="sanitize", shapes=["small"])
        doc = json.loads(kg_bench.dumps(req, [kg_bench.Result("softmax", "small", launches=1)], GOLDEN_DEVICE))
        self.assertEqual(doc["results"][0]["launches"], 1)

    def test_what_the_reader_would_refuse_is_refused_here(self):
        req = kg_bench.Request()
        for results, err in [
            ([], ValueError),
            ([kg_bench.Result("k", "s"), kg_bench.Result("k", "s")], ValueError),
            ([kg_bench.Result("", "s")], ValueError),
            ([kg_bench.Result("k", "s", nan_count=-1)], ValueError),
            ([kg_bench.Result("k", "s", checks=2.5)], TypeError),
            ([kg_bench.Result("k", "s", checks=True)], TypeError),
            ([kg_bench.Result("k", "s", max_err="small")], TypeError),
            ([kg_bench.Result("k", "s", rounds_us=[[1.0, None]])], TypeError),
        ]:
            with self.assertRaises(err, msg=repr(results)):
                kg_bench.dumps(req, results, GOLDEN_DEVICE)

    def test_write_file_and_stdout(self):
        req, results = golden_bench()
        with tempfile.TemporaryDirectory() as d:
            req.out = os.path.join(d, "out.json")
            kg_bench.write(req, results, kg_bench.Device(**GOLDEN_DEVICE))
            with open(req.out, encoding="utf-8") as f:
                written = f.read()
            self.assertEqual(os.listdir(d), ["out.json"])  # no temporary file left
            umask = os.umask(0)
            os.umask(umask)
            self.assertEqual(os.stat(req.out).st_mode & 0o777, 0o666 & ~umask)
        req.out = ""
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            kg_bench.write(req, results, GOLDEN_DEVICE)
        self.assertEqual(buf.getvalue(), written)
        no_bare_constants(written)

    def test_golden_files(self):
        for name, make in [("bench.json", golden_bench), ("check.json", golden_check)]:
            req, results = make()
            text = kg_bench.dumps(req, results, GOLDEN_DEVICE)
            path = os.path.join(GOLDEN_DIR, name)
            if os.environ.get("KG_BENCH_REGEN"):
                os.makedirs(GOLDEN_DIR, exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
            with open(path, encoding="utf-8") as f:
                self.assertEqual(f.read(), text, f"{path} is stale: KG_BENCH_REGEN=1 python3 kernels/kg_bench_test.py")


class DriverVersionTest(unittest.TestCase):
    def test_both_kernel_modules(self):
        for line, want in [
            ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct 30 2025\n", "580.159.04"),
            ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U22)\n", "580.159.04"),
            ("NVRM version: NVIDIA UNIX aarch64 Kernel Module  550.54.15  Tue Mar  5 2024\n", "550.54.15"),
            ("GCC version:  gcc version 12.2.0\n", ""),
        ]:
            self.assertEqual(kg_bench._driver_from_proc(line), want, line)


class FakeEvent:
    """A CUDA event on a fake clock: each record() advances it by the next launch's time."""

    def __init__(self, clock, enable_timing=False):
        self.clock, self.t, self.stream, self.timing = clock, None, None, enable_timing

    def record(self, stream=None):
        self.stream = stream
        self.t = self.clock["now"]
        self.clock["log"].append("record" if self.timing else "released")

    def synchronize(self):
        self.clock["synced"] = True

    def query(self):
        # Whether the work before this event has finished: the hold's end, for time_launches.
        # At once when a launch waited for the GPU (clock["waited"]: it could only return
        # once the hold was over); else False after the chunk's first sample and, once more of
        # the chunk is queued, as clock["hold_over"] says, in turn.
        if self.clock["waited"]:
            return True
        log = self.clock["log"]
        if log[::-1].index("released") <= 2:  # what was queued since the hold
            return False
        return self.clock["hold_over"].pop(0) if self.clock["hold_over"] else False

    def elapsed_time(self, end):
        assert self.timing and end.timing
        return end.t - self.t  # milliseconds


FAKE_MHZ = 1980.0  # the fake _sleep runs this many cycles per microsecond


def fake_torch(available=True, sleep=True):
    clock = {"now": 0.0, "synced": False, "streams": [], "log": [], "sleeps": [], "hold_over": [], "waited": False}
    torch = types.ModuleType("torch")
    torch.__version__ = "0.0-fake"
    torch.version = types.SimpleNamespace(cuda="13.0")

    class StreamContext:
        def __init__(self, s):
            self.s = s

        def __enter__(self):
            clock["streams"].append(self.s)

        def __exit__(self, *a):
            return False

    def _sleep(cycles):
        assert isinstance(cycles, int) and cycles > 0
        clock["sleeps"].append(cycles)
        clock["log"].append("sleep")
        clock["waited"] = False
        clock["now"] += cycles / FAKE_MHZ / 1000.0

    torch.cuda = types.SimpleNamespace(
        is_available=lambda: available,
        current_stream=lambda: "default-stream",
        stream=StreamContext,
        Event=lambda enable_timing=False: FakeEvent(clock, enable_timing),
        current_device=lambda: 0,
        get_device_capability=lambda i: (9, 0),
        get_device_name=lambda i: "NVIDIA H200",
    )
    if sleep:
        torch.cuda._sleep = _sleep
    return torch, clock


@contextlib.contextmanager
def torch_module(module):
    """Makes `import torch` give module (None: make it fail)."""
    had = "torch" in sys.modules
    old = sys.modules.get("torch")
    sys.modules["torch"] = module
    try:
        yield
    finally:
        if had:
            sys.modules["torch"] = old
        else:
            del sys.modules["torch"]


class TimeLaunchesTest(unittest.TestCase):
    def setUp(self):
        kg_bench._hold["cycles_per_us"].clear()
        kg_bench._hold["enqueue_us"] = 50.0
        kg_bench._hold["warned"].clear()

    def test_without_torch(self):
        with torch_module(None):
            with self.assertRaisesRegex(RuntimeError, "needs PyTorch"):
                kg_bench.time_launches(lambda: None, 3)
            self.assertEqual(kg_bench.device_info(), kg_bench.Device())

    def test_without_cuda(self):
        torch, _ = fake_torch(available=False)
        with torch_module(torch):
            with self.assertRaisesRegex(RuntimeError, r"needs a CUDA device: torch.cuda.is_available\(\) is False"):
                kg_bench.time_launches(lambda: None, 3)

    def test_bad_samples(self):
        for bad in (0, -1, 2.5, True):
            with self.assertRaises(ValueError):
                kg_bench.time_launches(lambda: None, bad)

    def test_times_each_launch_between_its_events(self):
        torch, clock = fake_torch()
        launch_ms = [0.027, 0.031, 0.029]
        seen = []

        def launch(i):  # takes the index, like kg_bench.h's launch(i)
            seen.append(i)
            clock["now"] += launch_ms[i]

        with torch_module(torch):
            us = kg_bench.time_launches(launch, 3, stream="s1")
        self.assertEqual(seen, [0, 1, 2])
        for got, want in zip(us, [27.0, 31.0, 29.0]):
            self.assertTrue(math.isclose(got, want, rel_tol=1e-9), (us, want))
        self.assertTrue(clock["synced"])
        self.assertEqual(clock["streams"], ["s1"])

    def test_no_argument_launch_and_default_stream(self):
        torch, clock = fake_torch()
        calls = []

        def launch(scale=1.0):  # no required argument: called with none
            calls.append(scale)
            clock["now"] += 0.005

        with torch_module(torch):
            us = kg_bench.time_launches(launch, 2)
            dev = kg_bench.device_info()
        self.assertEqual(calls, [1.0, 1.0])
        self.assertEqual(len(us), 2)
        self.assertEqual(clock["streams"], ["default-stream"])
        self.assertEqual((dev.name, dev.compute_cap, dev.cuda), ("NVIDIA H200", "9.0", "13.0"))

    def test_launches_are_queued_behind_a_hold(self):
        torch, clock = fake_torch()
        with torch_module(torch):
            us = kg_bench.time_launches(lambda i: clock.__setitem__("now", clock["now"] + 0.002), 3)
        # The clock rate was measured with two timed sleeps, then one hold for the chunk.
        self.assertEqual(len(clock["sleeps"]), 3)
        self.assertAlmostEqual(kg_bench._hold["cycles_per_us"][0], FAKE_MHZ, places=6)
        timed = clock["log"][clock["log"].index("released") - 1 :]
        self.assertEqual(timed, ["sleep", "released"] + ["record", "record"] * 3)
        # 2 × 50 µs per sample before any enqueue was measured, + 100 µs, in cycles.
        self.assertEqual(clock["sleeps"][-1], int((2 * 50.0 * 3 + 100.0) * FAKE_MHZ))
        for got in us:
            self.assertTrue(math.isclose(got, 2.0, rel_tol=1e-9), us)
        self.assertLess(kg_bench._hold["enqueue_us"], 50.0)  # learnt from the enqueue just measured

    def test_chunks(self):
        torch, clock = fake_torch()
        n = 2 * kg_bench.HOLD_CHUNK + 5
        with torch_module(torch):
            us = kg_bench.time_launches(lambda: None, n)
        self.assertEqual(len(us), n)
        holds = [i for i, x in enumerate(clock["log"]) if x == "released"]
        self.assertEqual(len(holds), 3)
        # Each hold is followed by its chunk's events: 64, 64 and 5 pairs.
        self.assertEqual([holds[1] - holds[0] - 2, holds[2] - holds[1] - 2], [2 * kg_bench.HOLD_CHUNK] * 2)
        self.assertEqual(len(clock["log"]) - holds[2] - 1, 2 * 5)

    def test_a_short_hold_is_retried_longer(self):
        torch, clock = fake_torch()
        clock["hold_over"] = [True]  # the first hold ended before the chunk was queued
        with torch_module(torch):
            us = kg_bench.time_launches(lambda: None, 4)
        self.assertEqual(len(clock["sleeps"]), 2 + 2)
        self.assertGreater(clock["sleeps"][3], clock["sleeps"][2])  # the second hold is longer
        self.assertEqual(clock["log"].count("record"), 2 + 2 + 2 * 4 * 2)  # calibration + the chunk twice
        self.assertFalse(any(math.isnan(x) for x in us))

    def test_a_hold_that_never_fits_gives_nan(self):
        torch, clock = fake_torch()
        clock["hold_over"] = [True] * 10
        err = io.StringIO()
        with torch_module(torch), contextlib.redirect_stderr(err):
            us = kg_bench.time_launches(lambda: None, 3)
        self.assertTrue(all(math.isnan(x) for x in us), us)
        self.assertIn("would include host gaps and are NaN", err.getvalue())
        self.assertEqual(len(clock["sleeps"]), 2 + 3)

    def test_blocking_off(self):
        for kwargs, env in [({"blocking": False}, None), ({}, "0")]:
            torch, clock = fake_torch()
            old = os.environ.get("KG_BENCH_BLOCKING")
            if env is not None:
                os.environ["KG_BENCH_BLOCKING"] = env
            try:
                with torch_module(torch):
                    us = kg_bench.time_launches(lambda: None, 3, **kwargs)
            finally:
                if old is None:
                    os.environ.pop("KG_BENCH_BLOCKING", None)
                else:
                    os.environ["KG_BENCH_BLOCKING"] = old
            self.assertEqual((clock["sleeps"], len(us)), ([], 3), (kwargs, env))

    def test_without_sleep_times_unheld(self):
        torch, clock = fake_torch(sleep=False)
        with torch_module(torch):
            us = kg_bench.time_launches(lambda: None, 2)
        self.assertEqual((clock["log"], len(us)), (["record"] * 4, 2))

    # A function that waits for the GPU (.item(), a copy from pageable host memory,
    # cudaDeviceSynchronize in an extension) returns only once the hold is over: here it sets
    # clock["waited"], after which the hold's event reads as done.
    def test_a_function_that_waits_for_the_gpu_is_found_by_its_first_hold(self):
        torch, clock = fake_torch()
        calls = []

        def launch():
            calls.append(1)
            clock["waited"] = True
            clock["now"] += 0.003

        err = io.StringIO()
        with torch_module(torch), contextlib.redirect_stderr(err):
            rounds = [kg_bench.time_launches(launch, 100) for _ in range(10)]
        # The clock rate's two sleeps, then one hold per call, never longer: the holds grew
        # geometrically before (100 samples did not return in 110 s on an H100).
        self.assertEqual(len(clock["sleeps"]), 2 + 10)
        self.assertEqual(len(set(clock["sleeps"][2:])), 1, clock["sleeps"])
        self.assertLessEqual(max(clock["sleeps"][2:]), kg_bench.HOLD_MAX_US * FAKE_MHZ)
        self.assertEqual(kg_bench._hold["enqueue_us"], 50.0)  # a wait teaches nothing of enqueueing
        # The first call behind the hold, then every sample again, unheld.
        self.assertEqual(len(calls), 10 * (1 + 100))
        self.assertEqual(clock["log"][-(4 + 200) :], ["sleep", "released", "record", "record"] + ["record"] * 200)
        for us in rounds:
            self.assertEqual(len(us), 100)
            for got in us:
                self.assertTrue(math.isclose(got, 3.0, rel_tol=1e-9), us)
        lines = err.getvalue().splitlines()
        self.assertEqual(len(lines), 1, lines)  # said once
        self.assertRegex(lines[0], r"^kg_bench: time_launches: fn \(.*kg_bench_test\.py:\d+ \(launch\)\) waits for the GPU: ")
        self.assertIn("timed unheld", lines[0])

    def test_said_once_per_place(self):
        torch, clock = fake_torch()

        def waits():
            clock["waited"] = True

        err = io.StringIO()
        with torch_module(torch), contextlib.redirect_stderr(err):
            for _ in range(3):
                kg_bench.time_launches(lambda: waits(), 5)  # a new lambda each time, one place
            kg_bench.time_launches(waits, 5)
            kg_bench.time_launches(lambda i: None, 5)  # does not wait: nothing said
        lines = err.getvalue().splitlines()
        self.assertEqual(len(lines), 2, lines)
        self.assertIn("(<lambda>)", lines[0])
        self.assertIn("(waits)", lines[1])

    def test_waiting_from_a_later_chunk_times_every_sample_unheld(self):
        torch, clock = fake_torch()
        calls = []

        def launch(i):
            calls.append(i)
            if i >= kg_bench.HOLD_CHUNK:
                clock["waited"] = True
            clock["now"] += 0.002

        err = io.StringIO()
        with torch_module(torch), contextlib.redirect_stderr(err):
            us = kg_bench.time_launches(launch, 100)
        self.assertEqual(len(clock["sleeps"]), 2 + 2)
        # One round is timed one way: the held first chunk is timed again with the rest.
        self.assertEqual(calls, list(range(kg_bench.HOLD_CHUNK + 1)) + list(range(100)))
        self.assertFalse(any(math.isnan(x) for x in us))
        self.assertEqual(len(err.getvalue().splitlines()), 1)

    def test_waiting_now_and_then_is_bounded(self):
        # A wait after a chunk's first call looks like a slow host: retried behind longer
        # holds, each within HOLD_MAX_US, then NaN.
        torch, clock = fake_torch()

        def launch(i):
            if i == 5:
                clock["waited"] = True

        err = io.StringIO()
        with torch_module(torch), contextlib.redirect_stderr(err):
            for _ in range(5):
                us = kg_bench.time_launches(launch, 10)
                self.assertTrue(all(math.isnan(x) for x in us), us)
        self.assertEqual(len(clock["sleeps"]), 2 + 5 * 3)
        self.assertLessEqual(max(clock["sleeps"]), kg_bench.HOLD_MAX_US * FAKE_MHZ)
        self.assertLessEqual(kg_bench._hold["enqueue_us"], kg_bench.HOLD_MAX_US)
        self.assertIn("synchronise now and then", err.getvalue())
        self.assertNotIn("waits for the GPU", err.getvalue())

    def test_the_hold_is_bounded(self):
        torch, clock = fake_torch()
        kg_bench._hold["enqueue_us"] = 1e9  # learnt from a host that stalled
        with torch_module(torch):
            us = kg_bench.time_launches(lambda: None, 3)
        self.assertEqual(clock["sleeps"][-1], int(kg_bench.HOLD_MAX_US * FAKE_MHZ))
        self.assertFalse(any(math.isnan(x) for x in us))

    def test_hold_us(self):
        for enqueue_us, n, want in [(50.0, 64, 6500.0), (50.0, 1, 200.0), (0.0, 3, 100.0), (1000.0, 64, kg_bench.HOLD_MAX_US), (1e12, 1, kg_bench.HOLD_MAX_US)]:
            self.assertEqual(kg_bench._hold_us(enqueue_us, n), want, (enqueue_us, n))

    def test_hold_verdict(self):
        last = kg_bench._HOLD_TRIES - 1
        for ended_first, ended, attempt, want in [
            (False, False, 0, kg_bench.QUEUED),
            (False, False, last, kg_bench.QUEUED),
            (True, True, 0, kg_bench.BLOCKING),  # on the first try: found at once
            (True, True, last, kg_bench.BLOCKING),
            (False, True, 0, kg_bench.RETRY),
            (False, True, last - 1, kg_bench.RETRY),
            (False, True, last, kg_bench.FAILED),
        ]:
            self.assertEqual(kg_bench._hold_verdict(ended_first, ended, attempt), want, (ended_first, ended, attempt))


class CppHoldTest(unittest.TestCase):
    """kernels/tests/kg_bench_hold_test.cpp: kg_bench.h's TimeLaunches behind a fake hold, and
    kernels/tests/kg_bench_extern_hold_test.cpp: a host-only file's TimeLaunches holding the
    stream through a fake kgbench::LaunchHold (KG_BENCH_EXTERN_HOLD, as harness.cpp does),
    each built with the host's C++ compiler against the runner's CUDA stub (no CUDA)."""

    def run_test_program(self, name):
        """Builds kernels/tests/NAME.cpp and runs it: its exit status, stdout and stderr."""
        import shutil  # noqa: PLC0415
        import subprocess  # noqa: PLC0415

        cxx = shutil.which("c++") or shutil.which("g++")
        if cxx is None:
            self.skipTest("no C++ compiler")
        here = os.path.dirname(os.path.abspath(__file__))
        root = os.path.dirname(here)
        with tempfile.TemporaryDirectory() as tmp:
            exe = os.path.join(tmp, name)
            build = subprocess.run(
                [cxx, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror",
                 "-I" + os.path.join(root, "gates", "speedup", "abrun", "testdata", "cudastub"), "-I" + here,
                 os.path.join(here, "tests", name + ".cpp"), "-o", exe],
                capture_output=True, text=True, timeout=120,
            )
            self.assertEqual(build.returncode, 0, build.stderr)
            return subprocess.run([exe], capture_output=True, text=True, timeout=60)

    def test_time_launches_behind_a_fake_hold(self):
        p = self.run_test_program("kg_bench_hold_test")
        self.assertEqual((p.returncode, p.stdout), (0, "ok\n"), p.stdout + p.stderr)
        lines = p.stderr.splitlines()
        self.assertTrue(all(line.startswith("kg_bench: TimeLaunches: ") for line in lines), lines)
        # Once per launch's type: test_waits's lambda (run twice) and the later chunk's.
        self.assertEqual(sum("launch() waits for the GPU" in line for line in lines), 2, lines)
        self.assertEqual(sum("are NaN" in line for line in lines), 1, lines)

    def test_time_launches_behind_another_file_s_hold(self):
        p = self.run_test_program("kg_bench_extern_hold_test")
        self.assertEqual((p.returncode, p.stdout), (0, "ok\n"), p.stdout + p.stderr)
        # The hold that ended during the first call says so, once.
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("launch() waits for the GPU", lines[0])


class SDPAReferenceTest(unittest.TestCase):
    """kernels/sdpa_reference.py without PyTorch: what it would time, and how it fails."""

    def test_shapes_and_kernels_are_the_harness_s(self):
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness_cases.cpp")
        with open(path, encoding="utf-8") as f:
            src = f.read()
        attn = src[src.index("attn = {") : src.index("};", src.index("attn = {"))]
        found = {m[0]: (int(m[1]), int(m[2]), int(m[3]), 64) for m in re.findall(r'\{"(\w+)", \{(\d+), (\d+), (\d+)\}\}', attn)}
        self.assertEqual(found, sdpa_reference.SHAPES)
        for k in sdpa_reference.KERNELS:
            self.assertIn(f'"{k}"', src)
        self.assertEqual(sdpa_reference.KERNELS, {"flash_fwd": False, "flash_fwd_causal": True})

    def test_copies_as_the_harness(self):
        got = {s: sdpa_reference.copies_for(sdpa_reference.input_bytes(d)) for s, d in sdpa_reference.SHAPES.items()}
        self.assertEqual(got, {"small": 64, "mission": 64, "long": 16})
        self.assertEqual((sdpa_reference.copies_for(0), sdpa_reference.copies_for(1 << 40)), (64, 1))

    def test_plan(self):
        env = {"KG_MODE": "bench", "KG_SHAPES": "mission,huge", "KG_KERNELS": "flash_fwd_causal, nope,"}
        req = kg_bench.Request.from_env(sdpa_reference.DEFAULT_SHAPES, environ=env)
        kernels = sdpa_reference.kernels_from_env(env)
        self.assertEqual(kernels, ["flash_fwd_causal", "nope"])
        p = sdpa_reference.plan(req, kernels)
        self.assertEqual([(k, s) for k, s, _ in p], [("flash_fwd_causal", "mission"), ("flash_fwd_causal", "huge"), ("nope", "mission"), ("nope", "huge")])
        self.assertEqual(p[0][2], sdpa_reference.Case("flash_fwd_causal", "mission", (2, 8, 512, 64), True))
        self.assertEqual([c for _, _, c in p[1:]], [None, None, None])
        self.assertEqual(sdpa_reference.kernels_from_env({}), ["flash_fwd", "flash_fwd_causal"])

    def run_main(self, env, torch=None):
        out, err = io.StringIO(), io.StringIO()
        with torch_module(torch), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = sdpa_reference.main(env)
        return code, out.getvalue(), err.getvalue()

    def test_check_and_sanitize_say_it_only_times(self):
        for mode, n in [("check", 6), ("sanitize", 2)]:
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "out.json")
                code, _, err = self.run_main({"KG_MODE": mode, "KG_OUT": path})
                with open(path, encoding="utf-8") as f:
                    doc = no_bare_constants(f.read())
            self.assertEqual(code, 1, mode)
            self.assertIn("only times", err)
            self.assertEqual(len(doc["results"]), n, mode)
            for r in doc["results"]:
                self.assertEqual(set(r), {"kernel", "shape", "error"})
                self.assertIn(f"only times (KG_MODE=bench or serve): it is a reference timer with no {mode} mode", r["error"])

    def test_bench_fails_closed_without_torch_or_cuda(self):
        for torch, want in [(None, "needs PyTorch with CUDA: import torch failed"), (fake_torch(available=False)[0], "needs a CUDA device")]:
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "out.json")
                code, out, err = self.run_main({"KG_MODE": "bench", "KG_OUT": path}, torch)
                self.assertEqual((code, out), (2, ""))
                self.assertIn(want, err)
                self.assertFalse(os.path.exists(path), "a file was written")

    def test_bad_request(self):
        code, _, err = self.run_main({"KG_MODE": "bench", "KG_SAMPLES": "0"})
        self.assertEqual(code, 2)
        self.assertIn("KG_SAMPLES", err)


def serve_lines(request, answer, stdin_text, device=None):
    """Runs kg_bench.serve over stdin_text; returns (exit status, answer lines, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = kg_bench.serve(request, answer, stdin=io.StringIO(stdin_text), out=out, device=device or GOLDEN_DEVICE)
    return code, out.getvalue().splitlines(), err.getvalue()


class ServeTest(unittest.TestCase):
    """KG_MODE=serve: the handshake, one answer line per request, the end of input."""

    def test_requests(self):
        for line, want in [
            ('{"round": 0, "samples": 30}', kg_bench.ServeRequest(0, 30)),
            ('{"round": 7, "samples": 1, "shapes": ["mission"], "kernels": ["flash_fwd"], "later": {"x": [1]}}',
             kg_bench.ServeRequest(7, 1, ["mission"], ["flash_fwd"])),
        ]:
            self.assertEqual(kg_bench.parse_serve_request(line), want)
        for bad in ["", "[]", "{", '{"round": 1}', '{"round": -1, "samples": 3}', '{"round": 1.5, "samples": 3}',
                    '{"round": true, "samples": 3}', '{"round": 1, "samples": 0}', '{"round": 1, "samples": 3, "shapes": "a,b"}',
                    '{"round": 1, "samples": 3, "kernels": [1]}']:
            with self.assertRaises(ValueError, msg=bad):
                kg_bench.parse_serve_request(bad)
        self.assertTrue(kg_bench.wanted([], "x") and kg_bench.wanted(["x"], "x") and not kg_bench.wanted(["y"], "x"))
        self.assertEqual(kg_bench.Request.from_env("s", environ={"KG_MODE": "serve"}, serve=True).mode, "serve")
        # A harness that does not say it serves refuses serve mode at once, as before.
        with self.assertRaisesRegex(ValueError, "KG_MODE='serve': want one of check, bench, sanitize"):
            kg_bench.Request.from_env("s", environ={"KG_MODE": "serve"})

    def test_answers_each_round_on_its_own_line(self):
        req = kg_bench.Request(mode="serve", shapes=["small", "mission"], rounds=1, samples=30)
        asked = []

        def one_round(sr):
            asked.append(sr)
            print("user code prints to stdout", sr.round)  # goes wherever stdout goes, not into answers
            return [kg_bench.Result("flash_fwd", s, rounds_us=[[27.5 + sr.round, NAN, INF][: sr.samples]]) for s in (sr.shapes or req.shapes)]

        with contextlib.redirect_stdout(io.StringIO()) as printed:
            code, lines, err = serve_lines(req, one_round, '{"round": 0, "samples": 3}\n\n  \n{"round": 1, "samples": 2, "shapes": ["mission"]}\n')
        self.assertEqual((code, err), (0, ""))
        self.assertIn("user code prints to stdout 1", printed.getvalue())
        self.assertEqual(json.loads(lines[0]), {"serve": "kernel-gate/serve/v1"})
        self.assertEqual(len(lines), 3)
        self.assertEqual([(a.round, a.samples, a.shapes) for a in asked], [(0, 3, []), (1, 2, ["mission"])])
        first, second = no_bare_constants(lines[1]), no_bare_constants(lines[2])
        self.assertEqual(first["round"], 0)
        self.assertEqual(first["file"]["request"], {"mode": "bench", "shapes": ["small", "mission"], "rounds": 1, "samples": 3})
        self.assertEqual(first["file"]["device"], GOLDEN_DEVICE)
        self.assertEqual(first["file"]["results"][0], {"kernel": "flash_fwd", "shape": "small", "rounds_us": [[27.5, "NaN", "Infinity"]]})
        self.assertEqual(second["file"]["request"]["shapes"], ["mission"])
        self.assertEqual(second["file"]["results"], [{"kernel": "flash_fwd", "shape": "mission", "rounds_us": [[28.5, "NaN"]]}])
        # The file in an answer is what dumps() writes, on one line.
        with contextlib.redirect_stdout(io.StringIO()):
            again = one_round(kg_bench.ServeRequest(0, 3))
        want = kg_bench.dumps(kg_bench.Request(mode="bench", shapes=["small", "mission"], rounds=1, samples=3), again, GOLDEN_DEVICE)
        self.assertEqual(first["file"], json.loads(want))

    def test_a_bad_request_ends_it(self):
        code, lines, err = serve_lines(kg_bench.Request(mode="serve"), lambda sr: [], '{"round": 0}\n{"round": 1, "samples": 2}\n')
        self.assertEqual((code, len(lines)), (2, 1))
        self.assertIn("not a serve request", err)

    def test_answer_descriptor(self):
        err = io.StringIO()
        for env in ({}, {"KG_SERVE_FD": "1"}, {"KG_SERVE_FD": "x"}):
            with contextlib.redirect_stderr(err):
                self.assertEqual(kg_bench.serve(kg_bench.Request(mode="serve"), lambda sr: [], stdin=io.StringIO(""), environ=env, device=GOLDEN_DEVICE), 2)
        self.assertIn("needs KG_SERVE_FD", err.getvalue())
        r, w = os.pipe()
        try:
            code = kg_bench.serve(kg_bench.Request(mode="serve", shapes=["s"]),
                                  lambda sr: [kg_bench.Result("k", "s", rounds_us=[[1.0]])],
                                  stdin=io.StringIO('{"round": 0, "samples": 1}\n'), environ={"KG_SERVE_FD": str(w)}, device=GOLDEN_DEVICE)
            with os.fdopen(r, encoding="utf-8") as f:
                lines = f.read().splitlines()
        finally:
            for fd in (w,):
                try:
                    os.close(fd)
                except OSError:
                    pass  # serve closed it
        self.assertEqual(code, 0)
        self.assertEqual([json.loads(x).get("round") for x in lines], [None, 0])


class ServeCasesTest(unittest.TestCase):
    """kg_bench.serve_cases: each kernel × shape set up once, errors kept per kernel × shape,
    a sticky error for every later answer, exit 1 when anything failed."""

    def serve(self, cases, prepare, stdin_text, kernels=("k1", "k2"), shapes=("s",), **kw):
        req = kg_bench.Request(mode="serve", shapes=list(shapes), rounds=1, samples=2)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err):
            code = kg_bench.serve_cases(req, cases, prepare, prog="h.py", kernels=list(kernels), stdin=io.StringIO(stdin_text),
                                        out=out, device=GOLDEN_DEVICE, **kw)
        lines = out.getvalue().splitlines()
        self.assertEqual(json.loads(lines[0]), {"serve": "kernel-gate/serve/v1"})
        answers = [json.loads(line) for line in lines[1:]]
        return code, [(a["round"], [(r["kernel"], r["shape"], r.get("rounds_us"), r.get("error")) for r in a["file"]["results"]]) for a in answers], err.getvalue()

    def test_sets_up_each_once_and_answers_every_request(self):
        made = []

        def prepare(kernel, shape, case):
            made.append((kernel, shape, case))
            return lambda samples: kg_bench.Result(kernel=kernel, shape=shape, rounds_us=[[case] * samples])

        code, answers, err = self.serve([("k1", "s", 1.5), ("k2", "s", 2.5)], prepare,
                                        '{"round": 0, "samples": 1}\n{"round": 1, "samples": 2, "kernels": ["k2"]}\n')
        self.assertEqual((code, err), (0, ""))
        self.assertEqual(made, [("k1", "s", 1.5), ("k2", "s", 2.5)])
        self.assertEqual(answers, [(0, [("k1", "s", [[1.5]], None), ("k2", "s", [[2.5]], None)]),
                                   (1, [("k2", "s", [[2.5, 2.5]], None)])])

    def test_errors_are_kept_per_kernel_and_shape(self):
        calls = {"k2": 0}

        def prepare(kernel, shape, case):
            if kernel == "k1":
                raise RuntimeError("out of memory")

            def one(samples):
                calls["k2"] += 1
                if calls["k2"] == 2:
                    raise ValueError("a bad launch")
                return kg_bench.Result(kernel=kernel, shape=shape, rounds_us=[[3.0] * samples])
            return one

        code, answers, err = self.serve([("k1", "s", 1), ("k2", "s", 2), ("k3", "s", None)], prepare,
                                        '{"round": 0, "samples": 1}\n{"round": 1, "samples": 1}\n{"round": 2, "samples": 1}\n'
                                        '{"round": 3, "samples": 1, "shapes": ["other"]}\n', kernels=("k1", "k2", "k3"))
        self.assertEqual(code, 1)
        self.assertEqual(answers[0][1], [("k1", "s", None, "RuntimeError: out of memory"), ("k2", "s", [[3.0]], None),
                                         ("k3", "s", None, "unknown kernel or shape")])
        # k2's second round raised: its error from then on, never a timing again.
        self.assertEqual(answers[1][1][1], ("k2", "s", None, "ValueError: a bad launch"))
        self.assertEqual(answers[2][1][1], ("k2", "s", None, "ValueError: a bad launch"))
        self.assertEqual(calls["k2"], 2)
        self.assertEqual(answers[3][1][0], ("k1", "other", None, "not set up in this process (KG_KERNELS, KG_SHAPES)"))
        self.assertIn("h.py: k1 s: RuntimeError: out of memory", err)
        self.assertEqual(err.count("a bad launch"), 1)

    def test_a_sticky_error_fails_every_later_answer(self):
        def prepare(kernel, shape, case):
            def one(samples):
                if kernel == "k1":
                    raise RuntimeError("CUDA error: an illegal memory access was encountered")
                return kg_bench.Result(kernel=kernel, shape=shape, rounds_us=[[1.0] * samples])
            return one

        code, answers, _ = self.serve([("k1", "s", 1), ("k2", "s", 2)], prepare, '{"round": 0, "samples": 1}\n{"round": 1, "samples": 1}\n',
                                      describe=lambda e: "cuda: " + str(e)[:10], sticky=lambda e: "CUDA error" in str(e))
        self.assertEqual(code, 1)
        # k2 comes after k1 in the same round: already broken, it is not timed.
        self.assertEqual(answers, [(0, [("k1", "s", None, "cuda: CUDA error"), ("k2", "s", None, "cuda: CUDA error")]),
                                   (1, [("k1", "s", None, "cuda: CUDA error"), ("k2", "s", None, "cuda: CUDA error")])])

    def test_a_sticky_error_in_setup_sets_up_nothing_more(self):
        made = []

        def prepare(kernel, shape, case):
            made.append(kernel)
            raise RuntimeError("CUDA error: launch failure")

        code, answers, _ = self.serve([("k1", "s", 1), ("k2", "s", 2)], prepare, '{"round": 0, "samples": 1}\n', sticky=lambda e: True)
        self.assertEqual((code, made), (1, ["k1"]))
        self.assertEqual([r[3] for r in answers[0][1]], ["RuntimeError: CUDA error: launch failure"] * 2)


class SDPAServeTest(unittest.TestCase):
    """sdpa_reference.py's serve mode, with Prepared faked (no PyTorch)."""

    class FakePrepared:
        made = []

        def __init__(self, torch, case):
            if case.shape == "long":
                raise RuntimeError("CUDA out of memory")
            self.case, self.name, self.extra = case, "torch.sdpa.flash", {}
            SDPAServeTest.FakePrepared.made.append((case.kernel, case.shape))

        def round(self, samples):
            return [41.5] * samples

        result = sdpa_reference.Prepared.result

    def test_sets_up_once_and_answers_each_round(self):
        old = sdpa_reference.Prepared
        sdpa_reference.Prepared = self.FakePrepared
        self.FakePrepared.made = []
        try:
            req = kg_bench.Request.from_env(sdpa_reference.DEFAULT_SHAPES, environ={"KG_MODE": "serve", "KG_SHAPES": "small,long"}, serve=True)
            out, err = io.StringIO(), io.StringIO()
            stdin = io.StringIO('{"round": 0, "samples": 2}\n{"round": 1, "samples": 3, "kernels": ["flash_fwd"], "shapes": ["small"]}\n')
            with contextlib.redirect_stderr(err):
                code = sdpa_reference.serve(None, req, ["flash_fwd", "flash_fwd_causal"], stdin=stdin, out=out, device=GOLDEN_DEVICE)
        finally:
            sdpa_reference.Prepared = old
        self.assertEqual(code, 1)  # long failed to set up: an error result each round, then exit 1
        self.assertEqual(self.FakePrepared.made, [("flash_fwd", "small"), ("flash_fwd_causal", "small")])
        lines = out.getvalue().splitlines()
        first, second = json.loads(lines[1])["file"]["results"], json.loads(lines[2])["file"]["results"]
        self.assertEqual([(r["kernel"], r["shape"], "error" in r) for r in first],
                         [("flash_fwd", "small", False), ("flash_fwd", "long", True), ("flash_fwd_causal", "small", False), ("flash_fwd_causal", "long", True)])
        self.assertIn("CUDA out of memory", first[1]["error"])
        self.assertEqual(second, [{"kernel": "flash_fwd", "shape": "small", "rounds_us": [[41.5] * 3],
                                   "reference": {"name": "torch.sdpa.flash", "rounds_us": [[41.5] * 3]}}])

    def test_fails_closed_without_torch(self):
        code, out, err = SDPAReferenceTest.run_main(self, {"KG_MODE": "serve", "KG_SERVE_FD": "9"})
        self.assertEqual((code, out), (2, ""))
        self.assertIn("needs PyTorch with CUDA", err)


class ExitTest(unittest.TestCase):
    """kg_bench.exit in a real process: serve mode ends at once, its status and buffered
    output kept, atexit handlers skipped; the other modes exit as sys.exit does."""

    SCRIPT = (
        "import atexit, sys\n"
        "sys.path.insert(0, {kernels!r})\n"
        "import kg_bench\n"
        "atexit.register(lambda: print('shutdown ran', flush=True))\n"
        "sys.stdout.write('answered')\n"  # no newline: buffered until a flush
        "sys.stderr.write('said')\n"
        "kg_bench.exit(3)\n"
        "print('after exit')\n"
    )

    def run_script(self, mode):
        import subprocess  # noqa: PLC0415

        env = dict(os.environ, KG_MODE=mode)
        script = self.SCRIPT.format(kernels=os.path.dirname(os.path.abspath(kg_bench.__file__)))
        return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)

    def test_serve_ends_at_once(self):
        p = self.run_script("serve")
        self.assertEqual((p.returncode, p.stdout, p.stderr), (3, "answered", "said"))

    def test_other_modes_shut_down(self):
        for mode in ("bench", "check", "sanitize", ""):
            p = self.run_script(mode)
            self.assertEqual((p.returncode, p.stdout, p.stderr), (3, "answeredshutdown ran\n", "said"), mode)


# The forms' harnesses and what testdata/replay/record.sh plants in them
# (kernels/forms/forms_test.py) are tested with this file, which CI runs.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "forms"))
from forms_test import RecorderTest, TorchHarnessNumbersTest, TorchHarnessTest, TritonHarnessTest  # noqa: E402,F401

if __name__ == "__main__":
    unittest.main()


class LaunchFieldsTest(unittest.TestCase):
    """block_size and dynamic_smem, the launch an explanation computes occupancy for."""

    def test_written_when_set(self):
        doc = json.loads(kg_bench.dumps(kg_bench.Request(mode="check"), [
            kg_bench.Result("k", "s", block_size=128, dynamic_smem=0), kg_bench.Result("j", "s")], device={"name": "x"}))
        self.assertEqual(doc["results"][0]["block_size"], 128)
        self.assertEqual(doc["results"][0]["dynamic_smem"], 0)
        self.assertNotIn("block_size", doc["results"][1])

    def test_refuses_a_block_no_kernel_can_launch(self):
        for bad in (0, 2048):
            with self.assertRaisesRegex(ValueError, "block_size"):
                kg_bench.dumps(kg_bench.Request(mode="check"), [kg_bench.Result("k", "s", block_size=bad)], device={"name": "x"})
