#!/usr/bin/env python3
"""A Python harness for the runner's tests of kernels/kg_bench.py's serve(), no PyTorch
needed: each round answers made-up timings of kernel "pyk" (100 µs × FACTOR, a per-round
drift both sides share, 1% noise from SEED).

    KG_MODE=serve KG_SERVE_FD=3 python3 serve-harness.py FACTOR SEED
"""
import os
import random
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "kernels"))
import kg_bench  # noqa: E402

factor, seed = float(sys.argv[1]), int(sys.argv[2])
req = kg_bench.Request.from_env("small", serve=True)
if req.mode != "serve":
    print(f"serve-harness.py: KG_MODE={req.mode}: this one only serves", file=sys.stderr)
    sys.exit(2)


def timings(round_, samples):
    drift = 1 + 0.1 * (random.Random(round_).random() - 0.5)
    rng = random.Random(seed * 1000003 + round_)
    return [100 * factor * drift * (1 + 0.01 * rng.gauss(0, 1)) for _ in range(samples)]


def one_round(sr):
    print(f"serve-harness.py: round {sr.round}")  # stdout: the log, never an answer
    return [kg_bench.Result("pyk", s, rounds_us=[timings(sr.round, sr.samples)]) for s in (sr.shapes or req.shapes)]


sys.exit(kg_bench.serve(req, one_round, device=kg_bench.Device("NVIDIA H200", "9.0", "580.159.04", "13.0")))
