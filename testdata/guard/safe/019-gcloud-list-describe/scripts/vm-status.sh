#!/usr/bin/env bash
set -euo pipefail
ZONE=us-central1-a
gcloud compute instances list --filter='labels.pool=kg-ci' --format='table(name,status)'
gcloud compute instances describe kg-h100-runner --zone "$ZONE" --format='value(status)'
