#!/bin/bash

CLUSTER=gpu-bench-eks
NODEGROUP=g5-workers-20251002
REGION=us-west-2

echo "Resuming the node group..."
aws eks update-nodegroup-config \
  --cluster-name $CLUSTER \
  --nodegroup-name $NODEGROUP \
  --scaling-config minSize=1,maxSize=3,desiredSize=1 \
  --region $REGION
