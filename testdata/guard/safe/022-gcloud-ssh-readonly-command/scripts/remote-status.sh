#!/usr/bin/env bash
set -euo pipefail
gcloud compute ssh kg-h100-runner --zone us-central1-a \
  --command 'nvidia-smi -q -d PERFORMANCE'
gcloud compute ssh kg-h100-runner --zone us-central1-a --command 'uptime'
