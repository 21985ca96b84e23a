#!/usr/bin/env bash
# Stop every VM of the GPU pool at the end of the day.
set -euo pipefail
ids=$(az vm list -g kg-gpu --query "[?tags.pool=='ci'].id" -o tsv)
if [ -n "$ids" ]; then
  az vm stop --ids $ids
fi
