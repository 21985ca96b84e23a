#!/usr/bin/env bash
set -euo pipefail
VM=kg-h100-runner
./build/bench --json > bench.json
bash <<EOF
gcloud config set project kg-ci
gcloud compute instances stop $VM --zone us-central1-a --quiet
EOF
