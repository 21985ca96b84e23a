#!/usr/bin/env bash
set -euo pipefail
ssh -o BatchMode=yes "${GPU_HOST:?}" bash -s <<'EOF'
nvidia-smi -q -d PERFORMANCE
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv
uptime
EOF
