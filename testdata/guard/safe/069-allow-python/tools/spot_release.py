import os

import boto3

ec2 = boto3.client("ec2")
# kernel-gate: allow aws-ec2-terminate per-PR spot boxes are disposable by design (INFRA-21)
ec2.terminate_instances(InstanceIds=[os.environ["SPOT_INSTANCE_ID"]])
