#!/bin/bash
GKE_CLUSTER=kernels-gke
GKE_ZONE=us-east4-c

gcloud container clusters resize $GKE_CLUSTER \
    --zone $GKE_ZONE \
    --node-pool system-pool \
    --num-nodes 1

gcloud container clusters resize $GKE_CLUSTER \
    --zone $GKE_ZONE \
    --node-pool h100-pool \
    --num-nodes 1
