#!/usr/bin/env bash
set -euo pipefail

for idx in $(nvidia-smi --query-gpu=index --format=csv,noheader); do
  echo " -> GPU $idx"
  sudo -E env "PATH=$PATH" nvidia-smi -q -i "$idx" -d CLOCK,POWER
done
