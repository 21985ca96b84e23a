#!/usr/bin/env bash
set -euo pipefail
# NOTE: do not add `gcloud compute instances stop` here; the ops scheduler
# stops the VM at 20:00 and a stop from CI kills other teams' jobs.
# Likewise no `sudo shutdown -h now` / `nvidia-smi -r` in this script.
cmake --build build --target bench
./build/bench --json > bench.json
