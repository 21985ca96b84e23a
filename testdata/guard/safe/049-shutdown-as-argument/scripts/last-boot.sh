#!/usr/bin/env bash
# Why did the box go down last night?
set -u
grep -i shutdown /var/log/syslog | tail -n 20
journalctl -b -1 --no-pager | grep -iE 'reboot|poweroff|halt' | tail -n 20
last reboot | head -n 5
who -b
