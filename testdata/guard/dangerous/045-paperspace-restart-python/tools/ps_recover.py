import os
import subprocess


def gpu_ok() -> bool:
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0


if not gpu_ok():
    subprocess.run(["paperspace", "machines", "restart",
                    "--machineId", os.environ["PS_MACHINE_ID"]], check=True)
