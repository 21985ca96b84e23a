#!/usr/bin/env bash
set -euo pipefail
aws ec2 create-tags --resources "${GPU_INSTANCE_ID:?}" --tags Key=busy,Value=false
aws ec2 describe-volumes --filters Name=status,Values=available
aws ec2 delete-snapshot --snapshot-id snap-0123456789abcdef0
aws s3 cp bench.json "s3://kg-bench/$(date +%F)/bench.json"
