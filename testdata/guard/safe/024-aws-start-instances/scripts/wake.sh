#!/usr/bin/env bash
set -euo pipefail
IID=${GPU_INSTANCE_ID:?}
aws ec2 start-instances --instance-ids "$IID"
aws ec2 wait instance-running --instance-ids "$IID"
