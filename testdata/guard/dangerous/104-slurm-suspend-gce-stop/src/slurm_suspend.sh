#!/bin/bash

export SLURM_CONF=/etc/slurm/slurm.conf

ZONE=$(gcloud compute instances list --filter="name=${HOSTNAME}" \
  --format='csv[no-heading](zone)')

NODES=$(scontrol show hostnames "$@")

gcloud compute instances stop $NODES --zone $ZONE --quiet
