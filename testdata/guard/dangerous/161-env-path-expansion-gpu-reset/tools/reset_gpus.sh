#!/usr/bin/env bash
set -euo pipefail

echo "resetting GPUs..."
for idx in $(nvidia-smi --query-gpu=index --format=csv,noheader); do
  echo " -> GPU $idx"
  sudo -E env "PATH=$PATH" nvidia-smi --gpu-reset -i "$idx" || echo "   reset not supported here"
done

sudo sh -c 'echo 3 > /proc/sys/vm/drop_caches'
