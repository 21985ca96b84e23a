#!/usr/bin/env bash

# start-instances --instance-ids <value> [--dry-run | --no-dry-run]

aws ec2 start-instances --instance-ids i-0c1d2e3f4a5b6c7d8 --dry-run

aws ec2 start-instances --profile gpu --cli-input-json file://start.json --no-dry-run

aws ec2 stop-instances --instance-ids i-0c1d2e3f4a5b6c7d8 --profile gpu
