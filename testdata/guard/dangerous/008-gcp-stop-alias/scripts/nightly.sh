#!/usr/bin/env bash
# Helpers for the nightly job.
set -e
shopt -s expand_aliases
alias gpu-vm-stop='gcloud compute instances stop kg-h100-runner --zone us-central1-a --quiet'
alias gpus='nvidia-smi --query-gpu=index,name,utilization.gpu --format=csv'

gpus
make -C kernels bench
gpu-vm-stop
