#!/usr/bin/env bash
set -u
tar czf logs.tgz build/*.log || true
echo "logs packed; powering off"
sudo systemctl poweroff
