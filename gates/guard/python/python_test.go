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

// Issue 21's Python classes, on snippets of the real files named (rewritten, the construct
// kept): argument lists run through a helper, nodes cordoned and pools sized through the
// clients, a lifecycle call chosen at run time, vast.ai's REST reboot.
func TestPythonIssue21(t *testing.T) {
	guardtest.Run(t, guard.ScanFile, []guardtest.Case{
		// microsoft/DLWorkspace src/RepairManager/utils/k8s_util.py at 5942af9d2f56.
		{Name: "argument list built in a branch", Path: "k8s_util.py", Src: "import subprocess\n\ndef cordon_node(node_name, dry_run=True):\n    args = ['kubectl', 'cordon', node_name]\n    if dry_run:\n        args.append('--dry-run')\n    return subprocess.check_output(args, stderr=subprocess.STDOUT)\n",
			Want: []guardtest.Want{{Line: 7, At: "subprocess.check_output", Rule: "k8s-node-cordon", Cmd: "subprocess.check_output(args, stderr=subprocess.STDOUT)"}}},
		// jupyterhub/zero-to-jupyterhub-k8s scale/kubernetes_control.py at e01366a787f5.
		{Name: "node patched unschedulable", Path: "kubernetes_control.py", Src: "from kubernetes import client\n\nclass K:\n    def set_unschedulable(self, node_name, value=True):\n        new_node = client.V1Node(spec=client.V1NodeSpec(unschedulable=value))\n        self.v1.patch_node(node_name, new_node)\n\n    def cordon(self, n):\n        self.v1.patch_node(n, {\"spec\": {\"unschedulable\": True}})\n",
			Want: []guardtest.Want{{Line: 5, At: "client.V1NodeSpec", Rule: "k8s-node-cordon", Cmd: "client.V1NodeSpec(unschedulable=value)"}, {Line: 9, At: "self", Rule: "k8s-node-cordon", Cmd: "self.v1.patch_node(n, {\"spec\": {\"unschedulable\": True}})"}}},
		// jupyterhub/zero-to-jupyterhub-k8s scale/gcloud_update.py at a0be31bcdb17.
		{Name: "argument list joined into a shell string", Path: "gcloud_update.py", Src: "import subprocess\n\ndef shutdown_specified_node(name):\n    cmd = ['gcloud', 'compute', 'instance-groups', 'managed', 'delete-instances',\n           GROUP, '--instances=' + name]\n    p = subprocess.Popen(' '.join(cmd), stdout=subprocess.PIPE, shell=True)\n",
			Want: []guardtest.Want{{Line: 4, At: "gcloud", Rule: "gcp-instance-delete", Cmd: "subprocess.Popen(' '.join(cmd), stdout=subprocess.PIPE, shell=True) … gcloud', 'compute', 'instance-groups', 'managed', 'delete-instances', GROUP, '--instances=' + name"}}},
		// exoshuffle/raysort ansible/manage_aws.py at 2a4cf488b982.
		{Name: "lifecycle call chosen at run time", Path: "manage_aws.py", Src: "import boto3\n\ndef perform_action(action, ids):\n    ec2 = boto3.client(\"ec2\")\n    action_to_fn = {\n        \"reboot\": ec2.reboot_instances,\n        \"start\": ec2.start_instances,\n        \"stop\": ec2.stop_instances,\n    }\n    fn = action_to_fn[action]\n    fn(InstanceIds=ids)\n",
			Want: []guardtest.Want{{Line: 6, At: "ec2.reboot", Rule: "aws-ec2-stop", Cmd: "ec2.reboot_instances"}, {Line: 8, At: "ec2.stop", Rule: "aws-ec2-stop", Cmd: "ec2.stop_instances"}}},
		// jjziets/VastVerification testreboot.py at 723f47d7b4da.
		{Name: "vast.ai REST reboot", Path: "testreboot.py", Src: "import requests\nurl = f'https://console.vast.ai/api/v0/instances/reboot/{instance_id}/?api_key={api_key}'\nresponse = requests.put(url)\nrequests.put(f\"https://console.vast.ai/api/v0/instances/{iid}/\", json={\"state\": \"stopped\"})\n",
			Want: []guardtest.Want{{Line: 3, At: "requests", Rule: "vastai-instance-stop", Cmd: "requests.put(url)"}, {Line: 4, At: "requests", Rule: "vastai-instance-stop", Cmd: "requests.put(f\"https://console.vast.ai/api/v0/instances/{iid}/\", json={\"state\": \"stopped\"})"}}},
		{Name: "node pool sized to zero", Path: "pool.py", Src: "from google.cloud import container_v1\nclient = container_v1.ClusterManagerClient()\nrequest = container_v1.SetNodePoolSizeRequest(name=POOL, node_count=0)\nclient.set_node_pool_size(request=request)\n",
			Want: []guardtest.Want{{Line: 3, At: "container_v1", Rule: "k8s-nodepool-scale-zero", Cmd: "container_v1.SetNodePoolSizeRequest(name=POOL, node_count=0)"}}},
	})
	guardtest.RunNone(t, guard.ScanFile, "x.py", []string{
		"from kubernetes import client\nv1 = client.CoreV1Api()\nfor n in v1.list_node().items:\n    print(n.metadata.name, n.spec.unschedulable)\n",
		"from kubernetes import client\nv1.patch_node(n, {\"spec\": {\"unschedulable\": False}})\nclient.V1NodeSpec(unschedulable=False)\n",
		"import boto3\nec2 = boto3.client('ec2')\ntable = {'status': ec2.describe_instance_status, 'start': ec2.start_instances}\ntable[a](InstanceIds=ids)\n",
		"import subprocess\ncmd = ['./vast', 'show', 'instances', '--raw']\nsubprocess.Popen(cmd, stdout=subprocess.PIPE)\n",
		"from google.cloud import container_v1\nrequest = container_v1.SetNodePoolSizeRequest(node_count=2)\n",
		"import subprocess\ncmd = ['gcloud', '--quiet', 'container', 'clusters', 'resize', name, '--size', str(n), '--zone', ZONE]\nsubprocess.Popen(cmd)\n",
	})
}
