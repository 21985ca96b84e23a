#!/usr/bin/env bash
set -euo pipefail
kubectl get nodes -o wide
kubectl describe node gpu-node-1 | grep -A5 'Allocated resources'
kubectl uncordon gpu-node-1
kubectl drain --help | head -20
