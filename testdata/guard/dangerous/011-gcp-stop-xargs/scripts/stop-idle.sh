#!/usr/bin/env bash
# Stop every GPU VM of the CI pool that is not running a job.
set -euo pipefail
gcloud compute instances list \
  --filter='labels.pool=kg-ci AND labels.busy=false AND status=RUNNING' \
  --format='value(name)' |
  xargs -r -n1 gcloud compute instances stop --zone us-central1-a --quiet
