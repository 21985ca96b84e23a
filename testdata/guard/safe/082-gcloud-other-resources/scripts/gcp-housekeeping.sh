#!/usr/bin/env bash
# Housekeeping of things that are not the GPU VM.
set -euo pipefail
gcloud compute disks delete kg-scratch-old --zone us-central1-a --quiet
gcloud compute images list --filter='family=kg-cuda' --format='value(name)'
gcloud compute snapshots delete kg-snap-2024-01 --quiet
gcloud compute instances add-labels kg-h100-runner --zone us-central1-a --labels=busy=false
