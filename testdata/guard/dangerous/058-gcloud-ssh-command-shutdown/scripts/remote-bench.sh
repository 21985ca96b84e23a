#!/usr/bin/env bash
set -euo pipefail
VM=kg-h100-bench
ZONE=us-central1-a
gcloud compute ssh "$VM" --zone "$ZONE" --command 'cd ~/kernels && make bench'
gcloud compute scp "$VM:~/kernels/bench.json" . --zone "$ZONE"
gcloud compute ssh "$VM" --zone "$ZONE" --command 'sudo shutdown -h now'
