#!/usr/bin/env bash
set -euo pipefail
for GPU in $(nvidia-smi --query-gpu=index --format=csv,noheader); do
  echo "resetting GPU $GPU"
  nice -n 10 sudo nvidia-smi -r -i "$GPU"
done
