#!/usr/bin/env bash
# Regenerate docs/gcloud-help.txt from the CLI's own help text.
set -euo pipefail
mkdir -p docs
gcloud compute instances stop --help > docs/gcloud-help.txt
gcloud compute instances reset --help >> docs/gcloud-help.txt
