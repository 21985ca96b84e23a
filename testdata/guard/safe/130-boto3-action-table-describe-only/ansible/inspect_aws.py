from typing import Dict, List

from absl import app, flags, logging
import boto3

FLAGS = flags.FLAGS
flags.DEFINE_string("name_pattern", "bench-worker-*", "instance name pattern")
flags.DEFINE_enum("action", "status", ["status", "start"], "what to do with the instances")


def perform_action(action: str, ids: List[str]):
    ec2 = boto3.client("ec2")
    action_to_fn = {
        "status": ec2.describe_instance_status,
        "start": ec2.start_instances,
    }
    fn = action_to_fn[action]
    logging.info(fn(InstanceIds=ids))


def main(argv):
    perform_action(FLAGS.action, argv[1:])


if __name__ == "__main__":
    app.run(main)
