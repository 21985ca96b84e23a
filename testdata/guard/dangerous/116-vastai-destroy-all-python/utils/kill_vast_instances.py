import json
import subprocess


def destroy_all():
    out = subprocess.run(["vastai", "show", "instances", "--raw"],
                         capture_output=True, text=True, check=True)
    for inst in json.loads(out.stdout):
        print(f"destroying {inst['id']}")
        subprocess.run(["vastai", "destroy", "instance", str(inst["id"])], check=True)


destroy_all()
