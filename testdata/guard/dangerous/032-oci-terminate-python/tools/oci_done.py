"""Run after the benchmark job: upload results, then release the OCI instance."""
import os
import shutil

shutil.copy("bench.json", "/mnt/results/bench.json")
print("results copied")
os.system('oci compute instance terminate --instance-id "$OCI_INSTANCE_ID" --force')
