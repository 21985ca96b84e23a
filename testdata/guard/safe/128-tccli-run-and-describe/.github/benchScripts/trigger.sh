#!/bin/bash
cd "$(dirname "$0")" || exit 1

BENCH_INSTANCE=$(tccli cvm RunInstances --InstanceChargeType POSTPAID_BY_HOUR --Placement '{"Zone":"na-siliconvalley-2"}' --InstanceType GN10Xp.2XLARGE40 --ImageId img-0000bench --InstanceCount 1 --InstanceName KERNEL-BENCH | egrep -o 'ins-[0-9a-zA-Z]*')
echo "$BENCH_INSTANCE" > ~/bench_instance
sleep 60

export BENCH_IP=$(tccli cvm DescribeInstances --InstanceIds "[\"$BENCH_INSTANCE\"]" | grep -A 1 PublicIpAddress | egrep -o '[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}')
echo "bench IP: $BENCH_IP"
