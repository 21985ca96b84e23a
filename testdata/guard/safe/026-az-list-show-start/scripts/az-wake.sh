#!/usr/bin/env bash
set -euo pipefail
az vm list -g kg-gpu -o table
az vm show -g kg-gpu -n kg-nd-h100 -d --query powerState -o tsv
az vm get-instance-view -g kg-gpu -n kg-nd-h100 --query instanceView.statuses
az vm start -g kg-gpu -n kg-nd-h100
