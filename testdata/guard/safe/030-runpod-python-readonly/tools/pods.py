import os

import runpod

runpod.api_key = os.environ["RUNPOD_API_KEY"]
for pod in runpod.get_pods():
    print(pod["id"], pod["desiredStatus"])
runpod.resume_pod(os.environ["RUNPOD_POD_ID"], gpu_count=1)
