#!/bin/sh
. ./gcp-00-settings.sh

gcloud compute \
    instances \
    stop \
    $GPU_VM_NAME \
    --zone $GPU_VM_ZONE
