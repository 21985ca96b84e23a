#!/usr/bin/env bash
# Keep the driver loaded between jobs: persistence ON.
set -euo pipefail
sudo nvidia-smi -pm 1
sudo nvidia-smi --persistence-mode=1
nvidia-smi --query-gpu=persistence_mode --format=csv
