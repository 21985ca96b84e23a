#!/usr/bin/env bash
# gpu-pool-up.sh: bring the GPU node pool back before a benchmark run
set -euo pipefail

COUNT="${1:-1}"
RG="${RG:-rg-kernel-bench}"
AKS="${AKS:-aks-kernel-bench}"
POOL="${POOL:-a100pool}"

echo "[gpu-pool-up] ${POOL} -> ${COUNT} node(s)"
az aks nodepool scale \
  --resource-group "${RG}" \
  --cluster-name "${AKS}" \
  --name "${POOL}" \
  --node-count "${COUNT}"
