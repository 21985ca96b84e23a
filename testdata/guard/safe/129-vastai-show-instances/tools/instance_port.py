import json
import subprocess
import sys
import time


def host_port(instance_id, attempts=5):
    cmd = ['./vast', 'show', 'instances', '--raw']
    for attempt in range(attempts):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, _ = proc.communicate()
        if proc.returncode != 0 or not out:
            time.sleep(2 ** attempt)
            continue
        for inst in json.loads(out.decode()):
            if inst['id'] == int(instance_id):
                return inst['ports']['5000/tcp'][0]['HostPort']
    sys.exit(1)


if __name__ == "__main__":
    print(host_port(sys.argv[1]))
