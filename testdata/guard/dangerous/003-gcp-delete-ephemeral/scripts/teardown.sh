#!/usr/bin/env bash
# Tear down the ephemeral benchmark VM created by scripts/provision.sh.
set -euo pipefail
INSTANCE="${1:?usage: teardown.sh INSTANCE}"
ZONE="${ZONE:-us-central1-a}"
gcloud compute instances describe "$INSTANCE" --zone "$ZONE" --format='value(status)'
gcloud compute instances delete "$INSTANCE" --zone "$ZONE" --delete-disks=all --quiet
echo "deleted $INSTANCE"
