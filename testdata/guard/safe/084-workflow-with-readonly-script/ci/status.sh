#!/usr/bin/env bash
set -euo pipefail
nvidia-smi --query-gpu=index,name,temperature.gpu --format=csv
df -h /
uptime
