#!/usr/bin/env bash
set -euo pipefail
ID="${VAST_INSTANCE_ID:?}"
vastai show instance "$ID"
vastai copy "$ID:/workspace/bench.json" ./bench.json
vastai destroy instance "$ID"
