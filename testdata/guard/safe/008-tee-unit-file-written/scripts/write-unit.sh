#!/usr/bin/env bash
# Stage (but do not enable) the clock-locking unit for review by ops.
set -euo pipefail
mkdir -p staged
tee staged/gpu-clocks.service >/dev/null <<'EOF'
[Service]
Type=oneshot
ExecStart=/usr/bin/nvidia-smi -lgc 1980,1980
ExecStop=/usr/bin/nvidia-smi -rgc
EOF
echo "staged/gpu-clocks.service written"
