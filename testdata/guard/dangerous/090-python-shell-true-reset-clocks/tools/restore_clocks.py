"""Undo the clock locks of bench/tune-clocks.sh after a cancelled run."""
import subprocess

subprocess.run("nvidia-smi -rgc && nvidia-smi -rmc", shell=True, check=True)
print("clocks restored")
