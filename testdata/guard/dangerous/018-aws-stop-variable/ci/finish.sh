#!/bin/bash
set -u
IID="$(cat /var/lib/cloud/data/instance-id)"
STOP_CMD="aws ec2 stop-instances --instance-ids $IID"
./run_benchmarks.sh || echo "benchmarks failed"
$STOP_CMD
