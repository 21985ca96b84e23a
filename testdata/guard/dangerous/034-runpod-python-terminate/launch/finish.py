import os

import runpod

runpod.api_key = os.environ["RUNPOD_API_KEY"]


def finish(pod_id: str) -> None:
    print("benchmark done, releasing", pod_id)
    runpod.terminate_pod(pod_id)


if __name__ == "__main__":
    finish(os.environ["RUNPOD_POD_ID"])
