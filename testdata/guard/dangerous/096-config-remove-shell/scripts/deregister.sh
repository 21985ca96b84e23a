#!/usr/bin/env bash
# Deregister this box from GitHub before it is recycled.
set -euo pipefail
cd /home/ci/actions-runner
./config.sh remove --token "${RUNNER_REMOVE_TOKEN:?}"
