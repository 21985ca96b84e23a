"""Launch a Lambda instance for a one-off benchmark (release is done by ops)."""
import os

import requests

r = requests.post(
    "https://cloud.lambdalabs.com/api/v1/instance-operations/launch",
    auth=(os.environ["LAMBDA_API_KEY"], ""),
    json={"region_name": "us-east-1", "instance_type_name": "gpu_1x_h100_pcie",
          "ssh_key_names": ["ci"]},
    timeout=30,
)
r.raise_for_status()
print(r.json()["data"]["instance_ids"])
