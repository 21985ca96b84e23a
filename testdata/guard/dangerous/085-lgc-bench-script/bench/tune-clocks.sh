#!/usr/bin/env bash
# Lock clocks for stable benchmark numbers; restore them on exit.
set -euo pipefail
trap 'sudo nvidia-smi -rgc' EXIT
MAX=$(nvidia-smi --query-gpu=clocks.max.sm --format=csv,noheader,nounits | head -1)
sudo nvidia-smi -lgc "$MAX,$MAX"
./build/bench --iters 200
