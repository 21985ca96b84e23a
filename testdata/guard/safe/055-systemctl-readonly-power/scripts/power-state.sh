#!/usr/bin/env bash
set -u
systemctl list-timers --no-pager
systemctl status sleep.target --no-pager || true
systemctl is-system-running
cat /sys/power/state
