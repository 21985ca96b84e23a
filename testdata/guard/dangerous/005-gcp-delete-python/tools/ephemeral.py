"""Run the benchmark on a throwaway GPU VM, then delete the VM."""
import subprocess
import sys

ZONE = "us-central1-a"


def run_bench(name: str) -> int:
    proc = subprocess.run(["gcloud", "compute", "ssh", name, "--zone", ZONE,
                           "--command", "cd kernels && make bench"])
    return proc.returncode


def cleanup(name: str) -> None:
    subprocess.run(["gcloud", "compute", "instances", "delete", name,
                    "--zone", ZONE, "--quiet"], check=True)


if __name__ == "__main__":
    vm = sys.argv[1]
    try:
        sys.exit(run_bench(vm))
    finally:
        cleanup(vm)
