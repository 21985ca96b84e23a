package python_test

import (
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/guard"
	"github.com/kernel-gate/kernel-gate/gates/guard/internal/guardtest"
)

func TestPython(t *testing.T) {
	const pySrc = `#!/usr/bin/env python3
"""Docstring: sudo shutdown -h now"""
import subprocess as sp
import os
from subprocess import run, check_call
import boto3

# os.system("sudo reboot")
print("sudo reboot")
os.system("sudo reboot")
sp.run(["sudo", "nvidia-smi", "-r"], check=True)
run("gcloud compute instances stop vm --zone z", shell=True)
CMD = ["sudo", "shutdown", "-h", "now"]
check_call(CMD)
ec2 = boto3.client("ec2")
ec2.stop_instances(InstanceIds=["i-1"])
boto3.client("ec2").terminate_instances(InstanceIds=ids)
import runpod
runpod.stop_pod(pod_id)
import requests
requests.post(f"{BASE}/api/v1/instance-operations/terminate", json={})
host = "x"
sp.check_output(f"ssh {host} 'sudo reboot'", shell=True)
with open("/proc/sysrq-trigger", "w") as f:
    f.write("b")
x = '''
sudo reboot
'''
sp.Popen(
    ["sudo",
     "poweroff"])
sp.run(["nvidia-smi", "-q"])
sp.run("echo sudo reboot", shell=True)
sp.run(["bash", "-c", "echo hi; nvidia-smi -pm 0"])
sp.run(shlex.split("sudo nvidia-smi -rgc"))
sp.run("sudo reboot".split())
compute.virtual_machines.begin_deallocate(rg, name)
client.stop(project=p, zone=z, instance=i)
os.execvp("sudo", ["sudo", "halt"])
`
	guardtest.Run(t, guard.ScanFile, []guardtest.Case{{Name: "calls", Path: "tools/launch.py", Src: pySrc, Want: []guardtest.Want{
		{Line: 10, At: "sudo", Rule: "host-reboot", Cmd: `os.system("sudo reboot")`, Via: "os.system → sudo → reboot"},
		{Line: 11, At: "sp.run", Rule: "gpu-reset", Cmd: `sp.run(["sudo", "nvidia-smi", "-r"], check=True)`, Via: "sp.run → sudo → nvidia-smi"},
		{Line: 12, At: "gcloud", Rule: "gcp-instance-stop", Cmd: `run("gcloud compute instances stop vm --zone z", shell=True)`},
		{Line: 14, At: "check_call", Rule: "host-shutdown", Cmd: "check_call(CMD)"},
		{Line: 16, At: "ec2", Rule: "aws-ec2-stop", Cmd: `ec2.stop_instances(InstanceIds=["i-1"])`},
		{Line: 17, At: "boto3", Rule: "aws-ec2-terminate", Cmd: `boto3.client("ec2").terminate_instances(InstanceIds=ids)`},
		{Line: 19, At: "runpod", Rule: "runpod-pod-stop", Cmd: "runpod.stop_pod(pod_id)"},
		{Line: 21, At: "requests", Rule: "lambda-instance-terminate", Cmd: `requests.post(f"{BASE}/api/v1/instance-operations/terminate", json={})`},
		{Line: 23, At: "sudo", Rule: "host-reboot", Cmd: `sp.check_output(f"ssh {host} 'sudo reboot'", shell=True)`, Via: "sp.check_output → ssh → sudo → reboot"},
		{Line: 24, At: "open", Rule: "host-sysrq", Cmd: `open("/proc/sysrq-trigger", "w")`},
		{Line: 29, At: "sp.Popen", Rule: "host-shutdown", Cmd: `sp.Popen( ["sudo", "poweroff"])`},
		{Line: 34, At: "nvidia-smi", Rule: "gpu-persistence-off", Cmd: `sp.run(["bash", "-c", "echo hi; nvidia-smi -pm 0"])`},
		{Line: 35, At: "sudo", Rule: "gpu-clocks", Cmd: `sp.run(shlex.split("sudo nvidia-smi -rgc"))`},
		{Line: 36, At: "sudo", Rule: "host-reboot", Cmd: `sp.run("sudo reboot".split())`},
		{Line: 37, At: "compute", Rule: "azure-vm-stop", Cmd: "compute.virtual_machines.begin_deallocate(rg, name)"},
		{Line: 38, At: "client", Rule: "gcp-instance-stop", Cmd: "client.stop(project=p, zone=z, instance=i)"},
		{Line: 39, At: "os", Rule: "host-shutdown", Cmd: `os.execvp("sudo", ["sudo", "halt"])`},
	}}})
	guardtest.RunNone(t, guard.ScanFile, "x.py", []string{
		"# subprocess.run(['sudo', 'reboot'])\n",
		"'''\nsubprocess.run(['sudo', 'reboot'])\n'''\n",
		"print('sudo shutdown -h now')\nlog.info(\"nvidia-smi -r\")\n",
		"import subprocess\nsubprocess.run(['echo', 'sudo reboot'])\n",
		"import subprocess\nsubprocess.run([TOOL, '-r'])\n",
		"import subprocess\nsubprocess.run(f'{tool} reboot', shell=True)\n",
		"proc.stop()\nserver.shutdown()\nthread.reset()\n",
		"def reboot():\n    pass\nreboot()\n",
		"import requests\nrequests.get('https://cloud.lambdalabs.com/api/v1/instances')\n",
	})
}

func TestPythonUnterminatedString(t *testing.T) {
	fs, ws := guard.ScanFile("x.py", []byte("import os\nos.system(\"sudo reboot)\nx = 1\n"), guard.Config{})
	if len(ws) != 1 || ws[0].Line != 2 || !strings.Contains(ws[0].Message, "does not end") {
		t.Errorf("warnings %+v", ws)
	}
	_ = fs // the string is read to the end of its line; a finding is fine either way
}
