#!/bin/sh
# Writes the login banner of the shared GPU box.
printf '%s\n' \
  "Shared H100 box: other teams' jobs may be running." \
  "Never run 'sudo shutdown -h now' or 'sudo reboot' here; ask in #gpu-ops." \
  "GPU state: nvidia-smi --query-gpu=index,utilization.gpu --format=csv"
