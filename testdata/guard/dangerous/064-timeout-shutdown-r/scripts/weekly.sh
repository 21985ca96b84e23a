#!/usr/bin/env bash
# Weekly maintenance: clean caches, then reboot to pick up kernel updates.
set -eu
rm -rf ~/.cache/ccache ~/.nv/ComputeCache
docker system prune -af
timeout 30 sudo shutdown -r +1 "weekly maintenance"
