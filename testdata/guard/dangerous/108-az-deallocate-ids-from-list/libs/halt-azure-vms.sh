#!/bin/bash
## resource group from the caller
RG=$1
## stop every VM in it
az vm deallocate --ids $(az vm list -g ${RG} --query "[].id" -o tsv) --no-wait
