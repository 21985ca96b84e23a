#!/usr/bin/env bash
set -euo pipefail
RESET="nvidia-smi --gpu-reset -i 0"
if nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -q .; then
  echo "stale processes on GPU 0"
fi
sudo $RESET
