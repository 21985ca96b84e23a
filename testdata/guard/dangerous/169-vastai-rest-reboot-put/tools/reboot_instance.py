import os

import requests

api_key = os.environ["VAST_KEY"]
instance_id = os.environ["VAST_INSTANCE"]

url = f'https://console.vast.ai/api/v0/instances/reboot/{instance_id}/?api_key={api_key}'

try:
    response = requests.put(url)
    if response.status_code == 200:
        print(f"instance {instance_id} is rebooting")
    else:
        print(f"reboot of {instance_id} failed: {response.status_code} {response.text}")
except requests.exceptions.RequestException as e:
    print(f"request failed: {e}")
