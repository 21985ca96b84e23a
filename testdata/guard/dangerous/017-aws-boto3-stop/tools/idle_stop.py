"""Stop the GPU box after the job queue has been empty for IDLE_MINUTES."""
import os
import time

import boto3

IDLE_MINUTES = int(os.environ.get("IDLE_MINUTES", "30"))


def queue_empty_for(minutes: int) -> bool:
    marker = "/var/run/kg-last-job"
    if not os.path.exists(marker):
        return True
    return time.time() - os.path.getmtime(marker) > minutes * 60


def main() -> None:
    if not queue_empty_for(IDLE_MINUTES):
        return
    ec2 = boto3.client("ec2", region_name=os.environ["AWS_REGION"])
    ec2.stop_instances(InstanceIds=[os.environ["GPU_INSTANCE_ID"]])


if __name__ == "__main__":
    main()
