import os

import boto3

ec2 = boto3.client("ec2")
iid = os.environ["GPU_INSTANCE_ID"]
state = ec2.describe_instances(InstanceIds=[iid])["Reservations"][0]["Instances"][0]["State"]["Name"]
if state == "stopped":
    ec2.start_instances(InstanceIds=[iid])
print(iid, state)
