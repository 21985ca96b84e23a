#!/usr/bin/env bash
# gpu-pool-down.sh: park the GPU node pool between benchmark runs
set -euo pipefail

RG="${RG:-rg-kernel-bench}"
AKS="${AKS:-aks-kernel-bench}"
POOL="${POOL:-a100pool}"

echo "[gpu-pool-down] ${POOL} -> 0 nodes"
az aks nodepool scale \
  --resource-group "${RG}" \
  --cluster-name "${AKS}" \
  --name "${POOL}" \
  --node-count 0

echo "[gpu-pool-down] done"
