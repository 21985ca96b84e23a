#!/usr/bin/env bash
set -euo pipefail
HOST=${BENCH_HOST:-bench-01.internal}
# Only tells the logged-in users; the reboot itself is done by ops.
ssh "$HOST" 'echo "maintenance tonight: sudo reboot at 02:00" | wall'
