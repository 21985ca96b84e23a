import subprocess
import sys


def reset(index: int) -> None:
    subprocess.run(["sudo", "nvidia-smi", "--gpu-reset", "-i", str(index)], check=True)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        reset(int(arg))
