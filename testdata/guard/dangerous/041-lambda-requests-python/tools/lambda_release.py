import os

import requests

KEY = os.environ["LAMBDA_API_KEY"]


def terminate(instance_id: str) -> None:
    r = requests.post(
        "https://cloud.lambdalabs.com/api/v1/instance-operations/terminate",
        auth=(KEY, ""),
        json={"instance_ids": [instance_id]},
        timeout=30,
    )
    r.raise_for_status()


if __name__ == "__main__":
    terminate(os.environ["LAMBDA_INSTANCE_ID"])
