#!/usr/bin/env bash
set -u
cat /proc/sys/kernel/sysrq
sysctl kernel.sysrq
echo 1 | sudo tee /proc/sys/kernel/sysrq >/dev/null
