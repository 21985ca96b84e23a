#!/bin/bash
# Warn when the GPU has been idle for IDLE_LIMIT minutes

IDLE_LIMIT=45
COUNT=0

while true; do
    UTIL=$(nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits | awk '{s+=$1} END {print s}')
    if [ "$UTIL" -eq 0 ]; then
        COUNT=$((COUNT+1))
    else
        COUNT=0
    fi
    if [ "$COUNT" -ge "$IDLE_LIMIT" ]; then
        echo "$(date): idle for $IDLE_LIMIT minutes (would shutdown now)" >> /var/log/gpu-idle.log
        wall "GPU idle: consider sudo shutdown now"
        COUNT=0
    fi
    sleep 60
done
