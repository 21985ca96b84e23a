#!/bin/sh
# Entrypoint of the benchmark pod: run once, upload, remove the pod.
set -e
cd /workspace/kernels
make bench > /workspace/bench.log 2>&1 || true
python3 /workspace/upload.py /workspace/bench.log
runpodctl remove pod "$RUNPOD_POD_ID"
