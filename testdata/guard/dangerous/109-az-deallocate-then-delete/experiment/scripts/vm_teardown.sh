#!/bin/bash

RG=gpu_bench_rg
vm_name=bench_runner_01

az vm deallocate \
	-n $vm_name \
	-g $RG

az vm delete \
	--resource-group $RG \
	--name $vm_name \
	--force-deletion none \
	--yes
