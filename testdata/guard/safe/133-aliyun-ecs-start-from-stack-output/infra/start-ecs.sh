#!/usr/bin/env bash
set -x
export ECS_ID=$(jq -r '.BenchStack | map(select(.OutputKey == "instance_id"))[0].OutputValue?' stack.outputs.json)
aliyun ecs StartInstance --InstanceId $ECS_ID
