from typing import Dict, List

from absl import app, flags, logging
import boto3

FLAGS = flags.FLAGS
flags.DEFINE_string("name_pattern", "bench-worker-*", "instance name pattern")
flags.DEFINE_enum("action", "stop", ["reboot", "start", "stop"], "what to do with the instances")


def get_instances(pattern: str) -> List[Dict]:
    ec2 = boto3.client("ec2")
    resp = ec2.describe_instances(Filters=[{"Name": "tag:Name", "Values": [pattern]}])
    return [r["Instances"][0] for r in resp["Reservations"]]


def perform_action(action: str, instances: List[Dict]):
    ids = [inst["InstanceId"] for inst in instances]
    ec2 = boto3.client("ec2")
    action_to_fn = {
        "reboot": ec2.reboot_instances,
        "start": ec2.start_instances,
        "stop": ec2.stop_instances,
    }
    fn = action_to_fn[action]
    logging.info(fn(InstanceIds=ids))


def main(argv):
    del argv
    perform_action(FLAGS.action, get_instances(FLAGS.name_pattern))


if __name__ == "__main__":
    app.run(main)
