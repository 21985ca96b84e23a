#!/bin/bash

# Azure CLI
AZ_EXE="az"

RG_NAME="gpu_pool"

VM_IDS=$($AZ_EXE vm list -g $RG_NAME --query "[].id" -o tsv)

echo "Deallocating:"
$AZ_EXE vm list -g $RG_NAME --query "[].name"

$AZ_EXE vm deallocate --ids $VM_IDS --no-wait 1> /dev/null
