#!/usr/bin/env bash
STACK=${STACK:-BenchStack}
export ECS_ID=$(jq -r ".${STACK} | map(select(.OutputKey == \"instance_id\"))[0].OutputValue?" stack.outputs.json)
aliyun ecs StopInstance --InstanceId $ECS_ID
