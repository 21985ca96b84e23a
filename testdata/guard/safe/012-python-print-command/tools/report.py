"""Print the command the on-call engineer should run; never run it."""
import sys

vm = sys.argv[1] if len(sys.argv) > 1 else "kg-h100-runner"
cmd = ["gcloud", "compute", "instances", "stop", vm, "--zone", "us-central1-a"]
print("To stop the VM by hand:", " ".join(cmd))
print("Do not call sudo shutdown -h now from a job.")
