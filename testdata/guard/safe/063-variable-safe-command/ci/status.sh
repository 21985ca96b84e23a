#!/bin/bash
set -u
QUERY="nvidia-smi --query-gpu=name,temperature.gpu --format=csv"
LIST="gcloud compute instances list --filter=labels.pool=kg-ci"
$QUERY
$LIST
