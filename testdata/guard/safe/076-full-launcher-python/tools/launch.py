"""Launch the benchmark matrix on the local GPU and write results.json."""
import json
import os
import subprocess
import sys

CONFIGS = [("flash_fwd", 64), ("flash_fwd", 128), ("gemm_wmma", 256)]


def run(kernel: str, tile: int) -> dict:
    env = dict(os.environ, KG_TILE=str(tile))
    out = subprocess.run(["./build/bench", "--kernel", kernel, "--json"],
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main() -> int:
    results = [run(k, t) for k, t in CONFIGS]
    with open("results.json", "w") as f:
        json.dump(results, f, indent=2)
    print(f"{len(results)} configs done; VM left running (ops stops it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
