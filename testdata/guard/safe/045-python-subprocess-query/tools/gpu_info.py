import subprocess


def gpu_names():
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=index,name", "--format=csv,noheader"],
        check=True, capture_output=True, text=True).stdout
    return [line.split(", ", 1) for line in out.splitlines()]


subprocess.check_call(["nvidia-smi", "-q", "-d", "PERFORMANCE"])
proc = subprocess.Popen(["nvidia-smi", "dmon", "-c", "3"])
proc.wait()
print(gpu_names())
