#!/bin/bash

IDS=$(aws ec2 describe-instances --query "Reservations[0].Instances[0].{Instance:InstanceId}" --output text)

echo "terminating: $IDS"

aws ec2 terminate-instances --instance-ids $IDS
