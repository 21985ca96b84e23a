#!/usr/bin/env bash
# Stop the pod after the GPU has been idle for a while.

THRESHOLD=5
IDLE_MINUTES=15
INTERVAL=60
IDLE=0

while true; do
  UTIL=$(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits | awk '{s+=$1} END {print s/NR}')
  UTIL=${UTIL%.*}
  if [ "$UTIL" -le "$THRESHOLD" ]; then
    IDLE=$((IDLE + INTERVAL))
  else
    IDLE=0
  fi
  if [ "$IDLE" -ge $((IDLE_MINUTES*60)) ]; then
    runpodctl stop pod "$RUNPOD_POD_ID"
    exit 0
  fi
  sleep "$INTERVAL"
done
