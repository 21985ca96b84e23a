#!/usr/bin/env bash
# Kill stale benchmark processes left on the GPU by a cancelled job.
set -u
for pid in $(nvidia-smi --query-compute-apps=pid --format=csv,noheader); do
  if ps -o comm= -p "$pid" | grep -q '^bench$'; then
    kill -TERM "$pid"
  fi
done
