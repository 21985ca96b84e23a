#!/usr/bin/env bash
set -euo pipefail
HOST=${BENCH_HOST:-bench-01.internal}
ssh "$HOST" 'nvidia-smi --query-gpu=index,temperature.gpu --format=csv'
ssh "$HOST" 'sudo telinit 6'
