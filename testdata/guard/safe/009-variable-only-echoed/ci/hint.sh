#!/usr/bin/env bash
set -u
VM=${VM:-kg-h100-runner}
STOP_HINT="gcloud compute instances stop $VM --zone us-central1-a"
echo "Job finished. The VM is still running."
echo "If you are the last user today: $STOP_HINT"
