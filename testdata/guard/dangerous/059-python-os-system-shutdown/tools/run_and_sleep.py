import os
import subprocess
import sys

rc = subprocess.run([sys.executable, "bench/run_all.py", "--out", "bench.json"]).returncode
print("bench exit", rc)
if os.environ.get("KG_POWER_OFF") == "1":
    os.system("sudo shutdown -h +5")
sys.exit(rc)
