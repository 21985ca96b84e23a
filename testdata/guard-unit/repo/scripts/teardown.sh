#!/usr/bin/env bash
# Tear down the nightly benchmark VM once results are uploaded.
# Never: sudo shutdown -h now (that would take the runner down too)
set -euo pipefail

VM="${VM:-bench-ephemeral-1}"
ZONE=us-central1-a
echo "uploading results for $VM"

delete_vm() {
  gcloud compute instances delete "$1" --zone "$ZONE" --quiet
}
delete_vm "$VM"

if [ "${POWER_OFF:-0}" = 1 ]; then
  ssh -o BatchMode=yes "ops@$VM" \
    'sudo shutdown -h now'
fi

# last resort
panic() {
  echo b | sudo tee /proc/sysrq-trigger
}
