#!/usr/bin/env bash
# Before the driver upgrade: move every workload off the H100 nodes.
set -euo pipefail
kubectl get nodes -l nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3 -o name |
  xargs -r kubectl drain --ignore-daemonsets --delete-emptydir-data
