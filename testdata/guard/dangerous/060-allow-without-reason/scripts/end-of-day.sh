#!/usr/bin/env bash
set -e
./scripts/collect-logs.sh
# kernel-gate: allow host-shutdown
sudo poweroff
