#!/usr/bin/env bash
# Stop the self-hosted runner
set -euo pipefail

if pgrep -f "Runner.Listener" > /dev/null 2>&1; then
    pkill -f "Runner.Listener"
    echo "runner stopped"
else
    echo "runner not running"
fi
