#!/bin/sh
# Last step of the bench box's cron job.
set -e
cd "$(dirname "$0")/.."
./build/bench --json > /srv/results/$(date +%F).json
doas poweroff
