#!/usr/bin/env bash
# Shared helpers; sourced by the CI jobs.

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

gpu_count() {
  nvidia-smi --query-gpu=index --format=csv,noheader | wc -l
}

stop_vm() {
  log "stopping ${VM_NAME:-kg-h100-runner}"
  gcloud compute instances stop "${VM_NAME:-kg-h100-runner}" --zone "${ZONE:-us-central1-a}"
}
