#!/usr/bin/env bash
# Called by the watchdog when nvidia-smi stops answering.
set -u
RG=kg-gpu
VM=kg-nd-h100
if ! timeout 20 nvidia-smi -L >/dev/null 2>&1; then
  echo "GPU unresponsive, restarting $VM"
  command az vm restart -g "$RG" -n "$VM"
fi
