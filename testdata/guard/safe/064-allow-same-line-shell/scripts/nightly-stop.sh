#!/usr/bin/env bash
set -euo pipefail
make -C kernels bench
cp kernels/bench.json "/srv/results/$(date +%F).json"
gcloud compute instances stop kg-l4-spare --zone us-central1-a  # kernel-gate: allow gcp-instance-stop the spare L4 VM is parked nightly by agreement with ops (OPS-142)
