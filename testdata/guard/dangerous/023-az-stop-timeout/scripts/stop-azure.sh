#!/usr/bin/env bash
set -euo pipefail
RG=${RG:-kg-gpu}
VM=${VM:-kg-nd-h100}
az login --identity >/dev/null
az vm show --resource-group "$RG" --name "$VM" --query powerState -o tsv
timeout 300 az vm stop --resource-group "$RG" --name "$VM"
