import os
import time

import runpod

runpod.api_key = os.environ["RUNPOD_API_KEY"]
POD = os.environ["RUNPOD_POD_ID"]
DEADLINE = time.time() + 4 * 3600

while time.time() < DEADLINE:
    if os.path.exists("/workspace/DONE"):
        break
    time.sleep(60)
runpod.stop_pod(POD)
