import os

import requests

r = requests.get("https://cloud.lambdalabs.com/api/v1/instances",
                 auth=(os.environ["LAMBDA_API_KEY"], ""), timeout=30)
r.raise_for_status()
for inst in r.json()["data"]:
    print(inst["id"], inst["status"])
