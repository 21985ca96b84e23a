#!/usr/bin/env bash
set -euo pipefail

if command -v nvidia-smi >/dev/null; then
  for idx in $(nvidia-smi --query-gpu=index --format=csv,noheader); do
    echo "resetting GPU $idx"
    sudo nvidia-smi --gpu-reset -i "$idx" || echo "reset not supported"
  done
fi

sudo sh -c 'echo 3 > /proc/sys/vm/drop_caches'
