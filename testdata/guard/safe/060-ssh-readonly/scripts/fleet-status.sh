#!/usr/bin/env bash
set -euo pipefail
for host in bench-01 bench-02; do
  ssh -o BatchMode=yes "$host" 'nvidia-smi --query-gpu=index,utilization.gpu --format=csv'
  ssh "$host" uptime
done
