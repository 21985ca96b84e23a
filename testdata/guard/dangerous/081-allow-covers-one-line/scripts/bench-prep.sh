#!/usr/bin/env bash
set -euo pipefail
# kernel-gate: allow gpu-clocks locked clocks make bench numbers comparable (PERF-12)
sudo nvidia-smi -lgc 1980,1980
sudo nvidia-smi -r
./build/bench
