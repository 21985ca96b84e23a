#!/bin/bash

CLUSTER=gpu-bench-eks
NODEGROUP=g5-workers-20251002
REGION=us-west-2

echo "Pausing the node group..."
aws eks update-nodegroup-config \
  --cluster-name $CLUSTER \
  --nodegroup-name $NODEGROUP \
  --scaling-config minSize=0,maxSize=1,desiredSize=0 \
  --region $REGION

echo "Node group paused."
