#!/usr/bin/env bash
set -u
# Drop persistence so the driver can unload when idle.
setsid sudo nvidia-smi --persistence-mode=0 </dev/null >/tmp/pm.log 2>&1 &
wait
