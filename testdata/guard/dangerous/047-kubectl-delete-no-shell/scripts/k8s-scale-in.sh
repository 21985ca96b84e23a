#!/usr/bin/env bash
set -euo pipefail
NODE=${1:-gpu-node-3}
kubectl get no "$NODE" -o wide
kubectl delete no "$NODE" --wait=false
