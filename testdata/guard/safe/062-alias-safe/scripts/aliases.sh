#!/usr/bin/env bash
shopt -s expand_aliases
alias gpus='nvidia-smi --query-gpu=index,name,utilization.gpu --format=csv'
alias gstat='gcloud compute instances describe kg-h100-runner --zone us-central1-a'
gpus
gstat
