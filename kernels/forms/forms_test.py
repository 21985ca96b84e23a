"""Tests of the forms' harnesses (kernels/torch/kg_harness.py, kernels/triton/softmax.py) and
of what testdata/replay/record.sh plants in them, without a GPU. kernels/kg_bench_test.py runs
them with its own (CI runs that file: action/bench_run_test.go); alone:
`python3 kernels/forms/forms_test.py`. Where PyTorch is installed (CPU is enough), the error
measures and the reference run on real tensors too.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import re
import sys
import tempfile
import types
import unittest

sys.dont_write_bytecode = True
FORMS_DIR = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.dirname(FORMS_DIR)
REPO = os.path.dirname(KERNELS)


def _load(name: str, path: str) -> types.ModuleType:
    """A harness imported by path (kernels/torch/ is no package, and must not become one:
    it would answer `import torch`)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


kg_harness = _load("kg_harness", os.path.join(KERNELS, "torch", "kg_harness.py"))
triton_softmax = _load("kg_triton_softmax", os.path.join(KERNELS, "triton", "softmax.py"))
kg_bench = sys.modules["kg_bench"]


def _read(*parts: str) -> str:
    with open(os.path.join(REPO, *parts), encoding="utf-8") as f:
        return f.read()


def _real_torch():
    """PyTorch when it is installed, else None; a directory named torch that answered the
    import (kernels/torch/, with kernels/ on sys.path) is taken back out of sys.modules."""
    had = "torch" in sys.modules
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return None
    if getattr(torch, "tensor", None) is None:
        if not had:
            sys.modules.pop("torch", None)
        return None
    return torch


@contextlib.contextmanager
def _modules(**mods):
    """sys.modules entries replaced for the block (None makes the import fail)."""
    old = {k: sys.modules.get(k) for k in mods}
    had = {k: k in sys.modules for k in mods}
    sys.modules.update(mods)
    try:
        yield
    finally:
        for k in mods:
            if had[k]:
                sys.modules[k] = old[k]
            else:
                del sys.modules[k]


def _fake_torch(available=True):
    t = types.ModuleType("torch")
    t.__version__ = "0.0-fake"
    t.version = types.SimpleNamespace(cuda="13.0")
    t.cuda = types.SimpleNamespace(
        is_available=lambda: available,
        current_device=lambda: 0,
        get_device_capability=lambda i: (9, 0),
        get_device_name=lambda i: "NVIDIA H100 80GB HBM3",
    )
    return t


def _run(main, env, **mods):
    out, err = io.StringIO(), io.StringIO()
    with _modules(**mods), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(env)
    return code, out.getvalue(), err.getvalue()


def _serve_main(main, env, requests, **mods):
    """Runs a harness's main in KG_MODE=serve with requests on stdin and a pipe as
    KG_SERVE_FD: (exit status, the answer lines decoded, stderr)."""
    r, w = os.pipe()
    saved = sys.stdin
    sys.stdin = io.StringIO("".join(json.dumps(q) + "\n" for q in requests))
    try:
        code, out, err = _run(main, {**env, "KG_MODE": "serve", "KG_SERVE_FD": str(w)}, **mods)
    finally:
        sys.stdin = saved
        try:
            os.close(w)
        except OSError:
            pass  # serve closed it
    with os.fdopen(r, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    return code, lines, err


def _results(answer):
    return [(r["kernel"], r["shape"], r.get("rounds_us"), r.get("error")) for r in answer["file"]["results"]]


class _FakePrepare:
    """A stand-in for a harness's prepare_bench: records what was set up; each round's
    timings are the case's number of set-ups so far (so a second set-up would show)."""

    def __init__(self, fail_on=None):
        self.made, self.fail_on = [], fail_on

    def __call__(self, torch, ext_or_launch, case):
        if case == self.fail_on:
            raise RuntimeError("CUDA error: out of memory")
        self.made.append(case)
        return lambda samples: [float(len(self.made))] * samples


class TorchHarnessTest(unittest.TestCase):
    def test_shapes_and_kernels_are_the_cpp_harness_s(self):
        src = _read("kernels", "harness_cases.cpp")
        attn = src[src.index("attn = {") : src.index("};", src.index("attn = {"))]
        found = {m[0]: (int(m[1]), int(m[2]), int(m[3])) for m in re.findall(r'\{"(\w+)", \{(\d+), (\d+), (\d+)\}\}', attn)}
        self.assertEqual(found, kg_harness.SHAPES)
        self.assertEqual(kg_harness.KERNELS, {"flash_fwd": False, "flash_fwd_causal": True})
        self.assertIn("kernel == \"flash_fwd_causal\"", src)
        self.assertEqual(kg_harness.copies_for(4 * 2 * 8 * 2048 * 64 * 2), 16)

    def test_plan(self):
        req = kg_bench.Request.from_env(kg_harness.DEFAULT_SHAPES, environ={"KG_MODE": "sanitize"})
        p = kg_harness.plan(req, ["flash_fwd", "nope"])
        self.assertEqual([(k, s) for k, s, _ in p], [("flash_fwd", "small"), ("nope", "small")])
        self.assertEqual(p[0][2], kg_harness.Case("flash_fwd", "small", (1, 8, 512), False))
        self.assertIsNone(p[1][2])
        req = kg_bench.Request.from_env("", environ={"KG_SHAPES": "long,huge"})
        self.assertEqual([c and c.dims for _, _, c in kg_harness.plan(req, ["flash_fwd_causal"])], [(2, 8, 2048), None])
        self.assertEqual(kg_harness.kernels_from_env({"KG_KERNELS": " flash_fwd_causal,,"}), ["flash_fwd_causal"])
        self.assertEqual(kg_harness.kernels_from_env({}), ["flash_fwd", "flash_fwd_causal"])

    def test_form(self):
        self.assertEqual(kg_harness.form_from_env({}), "load")
        self.assertEqual(kg_harness.form_from_env({"KG_TORCH_FORM": "setup"}), "setup")
        with self.assertRaisesRegex(ValueError, "KG_TORCH_FORM='cmake': want one of load, setup"):
            kg_harness.form_from_env({"KG_TORCH_FORM": "cmake"})

    def test_fails_closed_without_torch_gpu_or_a_good_request(self):
        for env, mods, want in [
            ({}, {"torch": None}, "needs PyTorch with CUDA: import torch failed"),
            ({}, {"torch": _fake_torch(available=False)}, "needs a CUDA device"),
            ({"KG_TORCH_FORM": "pip"}, {}, "KG_TORCH_FORM='pip'"),
            ({"KG_MODE": "time"}, {}, "KG_MODE='time'"),
            ({"KG_KERNELS": ","}, {}, "no kernels"),
        ]:
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "out.json")
                code, out, err = _run(kg_harness.main, {**env, "KG_OUT": path}, **mods)
                self.assertEqual((code, out), (2, ""), env)
                self.assertIn(want, err)
                self.assertFalse(os.path.exists(path), "a file was written")

    def test_a_failed_build_fails_every_result(self):
        build_output = "Error building extension 'kg_flash_fwd': [1/2] nvcc ...\nflash_fwd.cu(99): error: identifier \"x\" is undefined"

        def fail(form, verbose=False):
            raise RuntimeError(build_output)

        saved = kg_harness.load_extension
        kg_harness.load_extension = fail
        try:
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "out.json")
                env = {"KG_MODE": "check", "KG_SHAPES": "small,mission", "KG_OUT": path}
                code, _, err = _run(kg_harness.main, env, torch=_fake_torch())
                with open(path, encoding="utf-8") as f:
                    doc = json.load(f)
        finally:
            kg_harness.load_extension = saved
        self.assertEqual(code, 1)
        self.assertIn('flash_fwd.cu(99): error: identifier "x" is undefined', err)  # the whole output, for the log
        self.assertEqual([(r["kernel"], r["shape"]) for r in doc["results"]], [
            ("flash_fwd", "small"), ("flash_fwd", "mission"), ("flash_fwd_causal", "small"), ("flash_fwd_causal", "mission")])  # fmt: skip
        for r in doc["results"]:
            self.assertEqual(set(r), {"kernel", "shape", "error"})
            self.assertEqual(
                r["error"],
                "KG_TORCH_FORM=load: the extension did not build or import (RuntimeError: Error building extension "
                "'kg_flash_fwd': [1/2] nvcc ...); the build output is on stderr",
            )
        self.assertEqual(doc["device"]["name"], "NVIDIA H100 80GB HBM3")

    def _fake_torch_no_grad(self):
        t = _fake_torch()
        t.no_grad = contextlib.nullcontext
        return t

    def test_serve_sets_up_each_once_and_answers_each_request(self):
        fake = _FakePrepare()
        saved = kg_harness.load_extension, kg_harness.prepare_bench
        kg_harness.load_extension, kg_harness.prepare_bench = (lambda form, verbose=False: "ext"), fake
        try:
            code, lines, err = _serve_main(kg_harness.main, {"KG_SHAPES": "small,mission", "KG_KERNELS": "flash_fwd"},
                                           [{"round": 0, "samples": 2}, {"round": 1, "samples": 3, "shapes": ["mission"]}],
                                           torch=self._fake_torch_no_grad())
        finally:
            kg_harness.load_extension, kg_harness.prepare_bench = saved
        self.assertEqual((code, err), (0, ""))
        self.assertEqual([c.shape for c in fake.made], ["small", "mission"])
        self.assertEqual(lines[0], {"serve": "kernel-gate/serve/v1"})
        self.assertEqual([a["round"] for a in lines[1:]], [0, 1])
        self.assertEqual(_results(lines[1]), [("flash_fwd", "small", [[2.0, 2.0]], None), ("flash_fwd", "mission", [[2.0, 2.0]], None)])
        self.assertEqual(_results(lines[2]), [("flash_fwd", "mission", [[2.0] * 3], None)])

    def test_serve_with_a_failed_build_answers_its_error(self):
        def fail(form, verbose=False):
            raise RuntimeError("Error building extension 'kg_flash_fwd'")

        saved = kg_harness.load_extension
        kg_harness.load_extension = fail
        try:
            code, lines, err = _serve_main(kg_harness.main, {"KG_SHAPES": "small", "KG_KERNELS": "flash_fwd,flash_fwd_causal"},
                                           [{"round": 0, "samples": 2}], torch=self._fake_torch_no_grad())
        finally:
            kg_harness.load_extension = saved
        self.assertEqual(code, 1)
        self.assertIn("the extension did not build or import", err)
        errs = [r[3] for r in _results(lines[1])]
        self.assertEqual(len(errs), 2)
        for e in errs:
            self.assertIn("KG_TORCH_FORM=load: the extension did not build or import (RuntimeError: Error building extension", e)

    def test_serve_stops_timing_after_a_cuda_error(self):
        fake = _FakePrepare(fail_on=kg_harness.Case("flash_fwd", "small", kg_harness.SHAPES["small"], False))
        saved = kg_harness.load_extension, kg_harness.prepare_bench
        kg_harness.load_extension, kg_harness.prepare_bench = (lambda form, verbose=False: "ext"), fake
        try:
            code, lines, _ = _serve_main(kg_harness.main, {"KG_SHAPES": "small,mission", "KG_KERNELS": "flash_fwd"},
                                         [{"round": 0, "samples": 1}, {"round": 1, "samples": 1}], torch=self._fake_torch_no_grad())
        finally:
            kg_harness.load_extension, kg_harness.prepare_bench = saved
        self.assertEqual(code, 1)
        self.assertEqual(fake.made, [])  # mission is never set up after small's CUDA error
        for answer in lines[1:]:
            self.assertEqual([r[3] for r in _results(answer)], ["RuntimeError: CUDA error: out of memory"] * 2)

    def test_setup_form_says_how_to_build(self):
        with _modules(kg_flash_fwd_setup=None):
            with self.assertRaises(RuntimeError) as e:
                kg_harness.load_extension("setup")
        self.assertIn("cannot import kg_flash_fwd_setup", str(e.exception))
        self.assertIn("build it first: cd kernels/torch && python3 setup.py build_ext --inplace", str(e.exception))

    def test_short(self):
        self.assertEqual(kg_harness.short(RuntimeError("\n  first\nsecond")), "RuntimeError: first")
        self.assertEqual(len(kg_harness.short(ValueError("x" * 1000))), 300)
        self.assertEqual(kg_harness.short(KeyError()), "KeyError: ")


@unittest.skipUnless(_real_torch(), "PyTorch is not installed")
class TorchHarnessNumbersTest(unittest.TestCase):
    """The error measures and the reference on real (CPU) tensors."""

    def test_errors_count_nan_inf_and_bad(self):
        torch = _real_torch()
        e = kg_harness.Errors()
        ref = torch.tensor([1.0, -2.0, 0.5, 3.0, 0.0], dtype=torch.float64)
        got = torch.tensor([1.01, -2.1, float("nan"), float("inf"), 0.0], dtype=torch.float16)
        e.add(torch, got, ref)
        self.assertEqual((e.nan, e.inf, e.n), (1, 1, 5))
        # bad: the NaN, the Inf and -2.1 (|err| 0.1 > 0.02 + 0.02 * 2); 1.01 is within (fp16: 1.0098)
        self.assertEqual(e.bad, 3)
        self.assertAlmostEqual(e.max_err, 0.1, delta=1e-3)
        self.assertEqual(e.ref_max_abs, 2.0)  # over the finite outputs' references only

    def test_max_diff(self):
        torch = _real_torch()
        a = torch.tensor([1.0, float("nan"), 3.0])
        self.assertEqual(kg_harness.max_diff(torch, a, torch.tensor([1.5, float("nan"), 3.0])), 0.5)
        self.assertEqual(kg_harness.max_diff(torch, a, torch.tensor([1.0, 2.0, 3.0])), float("inf"))

    def test_reference_is_softmax_attention(self):
        torch = _real_torch()
        g = torch.Generator()
        g.manual_seed(1)
        q, k, v = (torch.randn((1, 2, 5, 64), generator=g) for _ in range(3))
        for causal in (False, True):
            got = kg_harness.reference(torch, q, k, v, causal)
            for b in range(2):
                for i in range(5):
                    jend = i + 1 if causal else 5
                    s = [float(q[0, b, i].double() @ k[0, b, j].double()) * 0.125 for j in range(jend)]
                    m = max(s)
                    p = [pow(2.718281828459045, x - m) for x in s]
                    want = sum(pj * v[0, b, j].double() for j, pj in enumerate(p)) / sum(p)
                    self.assertLess(float((got[0, b, i] - want).abs().max()), 1e-9, (causal, b, i))


class TritonHarnessTest(unittest.TestCase):
    def test_blocks(self):
        self.assertEqual([triton_softmax.block_for(c) for c in (1, 781, 1000, 1024, 2000, 4097, 9000)],
                         [(1, 4), (1024, 4), (1024, 4), (1024, 4), (2048, 4), (8192, 8), (16384, 16)])  # fmt: skip

    def test_shapes_leave_a_masked_tail(self):
        # The defects live in the masked tail of each row's block: every shape must have one.
        for shape, (rows, cols) in triton_softmax.SHAPES.items():
            self.assertLess(cols, triton_softmax.block_for(cols)[0], shape)

    def test_defect_switch_is_off_and_where_record_sh_edits_it(self):
        src = _read("kernels", "triton", "softmax.py")
        self.assertEqual(re.findall(r'(?m)^KG_DEFECT = .*$', src), ['KG_DEFECT = ""'])
        self.assertEqual(triton_softmax.KG_DEFECT, "")
        with self.assertRaisesRegex(ValueError, "KG_DEFECT='nope'"):
            triton_softmax.launcher("nope")

    def test_plan(self):
        req = kg_bench.Request.from_env(triton_softmax.DEFAULT_SHAPES, environ={"KG_MODE": "sanitize"})
        self.assertEqual(triton_softmax.plan(req, ["row_softmax_triton", "row_softmax"]),
                         [("row_softmax_triton", "small", (1024, 781)), ("row_softmax", "small", None)])  # fmt: skip

    def test_serve_sets_up_each_shape_once(self):
        fake = _FakePrepare()
        saved = triton_softmax.load_triton, triton_softmax.prepare_bench
        triton_softmax.load_triton, triton_softmax.prepare_bench = _fake_torch, fake
        try:
            code, lines, err = _serve_main(triton_softmax.main, {"KG_SHAPES": "small,long"},
                                           [{"round": 0, "samples": 2}, {"round": 7, "samples": 1, "shapes": ["long", "huge"]}])
        finally:
            triton_softmax.load_triton, triton_softmax.prepare_bench = saved
        self.assertEqual(code, 1)  # "huge" was never set up: its answer is an error
        self.assertEqual(fake.made, [triton_softmax.SHAPES["small"], triton_softmax.SHAPES["long"]])
        self.assertEqual([a["round"] for a in lines[1:]], [0, 7])
        self.assertEqual(_results(lines[1]), [("row_softmax_triton", "small", [[2.0, 2.0]], None), ("row_softmax_triton", "long", [[2.0, 2.0]], None)])
        self.assertEqual(_results(lines[2]), [("row_softmax_triton", "long", [[2.0]], None),
                                              ("row_softmax_triton", "huge", None, "not set up in this process (KG_KERNELS, KG_SHAPES)")])

    def test_fails_closed(self):
        saved = triton_softmax.triton, triton_softmax.KG_DEFECT
        try:
            triton_softmax.triton = None
            code, out, err = _run(triton_softmax.main, {})
            self.assertEqual((code, out), (2, ""))
            self.assertIn("needs Triton: import triton failed", err)
            triton_softmax.KG_DEFECT = "typo"
            code, _, err = _run(triton_softmax.main, {})
            self.assertEqual(code, 2)
            self.assertIn("KG_DEFECT='typo'", err)
        finally:
            triton_softmax.triton, triton_softmax.KG_DEFECT = saved


class RecorderTest(unittest.TestCase):
    """What testdata/replay/record.sh plants must still be there to plant, and each form's
    config must name files that exist."""

    def changes(self):
        src = _read("testdata", "replay", "record.sh")
        body = src[src.index("change() {") : src.index("\n}\n", src.index("change() {"))]
        found = re.findall(r"^\s*([\w| -]+)\) printf '([^\\]+)\\t%s\\n' (\"[^\"]*\"|'[^']*')", body, re.M)
        self.assertGreaterEqual(len(found), 13)
        return [(cases.replace(" ", "").split("|"), path, text[1:-1]) for cases, path, text in found]

    def test_every_change_applies(self):
        for cases, path, text in self.changes():
            src = _read(path)
            if text.startswith("#define "):
                macro = text.split()[1]
                used = src + (_read("kernels", "harness.cpp") + _read("kernels", "harness_cases.cpp") if path.endswith(".cu") else "")
                self.assertRegex(used, rf"(#ifdef|#ifndef|defined\(|\b){macro}\b", f"{cases}: {macro} is not used")
            elif text.startswith("sed:s/"):
                pattern = re.split(r"(?<!\\)/", text[len("sed:s/") :])[0]
                line_re = re.escape(pattern.strip("^$"))
                if pattern.startswith("^"):
                    line_re = "^" + line_re
                if pattern.endswith("$"):
                    line_re += "$"
                self.assertRegex(src, re.compile(line_re, re.M), f"{cases}: {pattern!r} is not in {path}")
            else:
                self.assertTrue(text.startswith(("//", "sed:$a #")), f"{cases}: {text!r} is neither a define, a comment nor an edit")

    def test_every_form_has_a_config_naming_real_files(self):
        cases = [c for cs, _, _ in self.changes() for c in cs]
        forms = sorted({c.split("-")[0] for c in cases if c.split("-")[0] in ("torch", "setup", "cmake", "triton")})
        self.assertEqual(forms, ["cmake", "setup", "torch", "triton"])
        for form in forms:
            cfg = _read("kernels", form, "kernel-gate.yml")
            harness = re.findall(r'^\s+harness: "([^"]+)"', cfg, re.M)
            self.assertEqual(len(harness), 1, form)
            script = harness[0].split()[-1]
            if not script.startswith("kernels/build/"):  # built by the target's build command
                self.assertTrue(os.path.isfile(os.path.join(REPO, script)), f"{form}: {script}")
            self.assertRegex(cfg, r'binaries: \["', form)


if __name__ == "__main__":
    unittest.main()
