#!/usr/bin/env bash
set -euo pipefail
GPU_HOST=${GPU_HOST:-bench-01.internal}
ssh -o BatchMode=yes "$GPU_HOST" bash -s <<'EOF'
set -e
nvidia-smi --query-gpu=index,ecc.errors.uncorrected.volatile.total --format=csv
sudo nvidia-smi -r -i 0
EOF
