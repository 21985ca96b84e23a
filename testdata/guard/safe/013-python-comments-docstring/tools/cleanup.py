"""Clean build outputs.

Earlier versions ran `os.system("sudo shutdown -h now")` at the end and
`subprocess.run(["nvidia-smi", "-r"])` before; both were removed.
"""
import pathlib
import shutil

# ec2.stop_instances(InstanceIds=[...])  -- removed, ops owns the instance lifecycle
for p in pathlib.Path("build").glob("*.o"):
    p.unlink()
shutil.rmtree("build/tmp", ignore_errors=True)
