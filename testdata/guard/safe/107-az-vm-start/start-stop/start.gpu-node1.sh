#!/bin/bash

az vm start --name gpu-node1 --resource-group k8s_gpu_rg
