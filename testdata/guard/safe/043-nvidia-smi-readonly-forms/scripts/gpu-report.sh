#!/usr/bin/env bash
set -euo pipefail
nvidia-smi -L
nvidia-smi -i 0 -q
nvidia-smi topo -m
nvidia-smi dmon -c 5 -s pucvmet
nvidia-smi --query-compute-apps=pid,used_memory --format=csv
