#!/usr/bin/env bash
# Power helpers for the bench box.

uptime_hours() {
  awk '{print int($1/3600)}' /proc/uptime
}

power_down() {
  sync
  sudo halt -p
}

echo "up for $(uptime_hours) hours"
