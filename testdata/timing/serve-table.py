#!/usr/bin/env python3
"""Prints the tables of docs/speedup-serving.md from measure-serve.sh's output folders:

    python3 testdata/timing/serve-table.py testdata/timing/serve-h200-sets [...]

One row per run (a NAME-MODE folder with result.json), in summary.tsv's order. Where the
wall time went, per run, from the speedup gate's data.runner:

- setup: per set of serving processes (bench.servers of each side, started side by side),
  the longest start-to-handshake of the set, summed over the sets (serve.sides[].setups_seconds,
  in start order, cut into sets of `servers`);
- answers: both sides' round_seconds, request to answer, warm-up rounds included (a set's
  warm-ups run side by side, so this overcounts them a little);
- last stop: timing_seconds − pairs[0].decided_seconds, ending the last set;
- rest: timing − setup − answers − last stop: kernel-gate's own work between rounds (and
  whatever overlap the split above cannot see, so it can come out slightly negative); one
  process per round, answers are the whole processes and rest what is between them;
- kernels: comparisons[0].gpu_seconds, every timed launch of both sides.
"""

import json
import os
import sys


def runs(folder):
    order = []
    tsv = os.path.join(folder, "summary.tsv")
    if os.path.exists(tsv):
        with open(tsv, encoding="utf-8") as f:
            for line in list(f)[1:]:
                name, mode = line.split("\t")[:2]
                order.append(f"{name}-{mode}")
    for d in order:
        p = os.path.join(folder, d, "result.json")
        if os.path.exists(p):
            yield d, p


def row(name, path):
    with open(path, encoding="utf-8") as f:
        g = next(g for g in json.load(f)["gates"] if g["name"] == "speedup")
    r = g["data"]["runner"]
    c = (g["data"].get("comparisons") or [{}])[0]
    serve = r.get("serve") or {}
    sides = serve.get("sides") or []
    p = max(serve.get("servers") or 1, 1)
    timing = r["timing_seconds"]
    setup = 0.0
    if serve.get("serving"):
        per_side = [s.get("setups_seconds") or [] for s in sides]
        for k in range(0, max(len(x) for x in per_side), p):
            setup += max(max(x[k:k + p], default=0) for x in per_side)
    answers = sum(s.get("round_seconds", 0) for s in sides[:2])
    pairs = r.get("pairs") or []
    decided = pairs[0].get("decided_seconds") if pairs else None
    last = timing - decided if (serve.get("serving") and decided is not None) else 0.0
    kernels = c.get("gpu_seconds") or 0.0
    rest = timing - setup - answers - last
    lo, hi = c.get("ci_low"), c.get("ci_high")
    interval = f"{(lo - 1) * 100:+.1f} to {(hi - 1) * 100:+.1f}%" if lo and hi else "no interval"
    each = [x for s in sides[:2] for x in (s.get("setups_seconds") or [])]
    mode = name.rsplit("-", 1)[1]
    if mode.startswith("serve"):
        mode += f" (P={p})"
    cells = [
        name.rsplit("-", 1)[0], mode, c.get("verdict", g["verdict"]),
        f"{c['ratio']:.4f} ({interval})" if c.get("ratio") else "-",
        str(r["rounds"]), f"{timing:.2f}",
        f"{setup:.2f}" if serve.get("serving") else "—",
        f"{min(each):.2f}–{max(each):.2f}" if each else "—",
        f"{answers:.3f}", f"{last:.2f}" if serve.get("serving") else "—",
        f"{rest:.3f}",
        f"{kernels:.3f} ({100 * kernels / timing:.1f}%)",
        "/".join(str(s.get("starts", 0)) for s in sides[:2]),
    ]
    return "| " + " | ".join(cells) + " |"


def main(folders):
    print("| case | mode | verdict | ratio (interval) | rounds | wall s | setup s | setup s each | answers s | last stop s | rest s | kernels' s | starts |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for folder in folders:
        for name, path in runs(folder):
            print(row(name, path))


if __name__ == "__main__":
    main(sys.argv[1:] or ["."])
