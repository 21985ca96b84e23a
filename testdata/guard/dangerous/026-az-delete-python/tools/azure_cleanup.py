import json
import subprocess


def stale_vms(group):
    out = subprocess.run(["az", "vm", "list", "-g", group, "-o", "json"],
                         check=True, capture_output=True, text=True).stdout
    return [vm["id"] for vm in json.loads(out) if vm["tags"].get("kg-pr") == "closed"]


def main():
    for vm_id in stale_vms("kg-gpu"):
        subprocess.run(["az", "vm", "delete", "--ids", vm_id, "--yes"], check=True)


if __name__ == "__main__":
    main()
