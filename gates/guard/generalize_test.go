package guard

import (
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/guard/internal/guardtest"
)

// ruleCase is a source and the rule IDs its findings must have, in order (by line).
type ruleCase struct {
	name, path, src string
	rules           []string
	warn            string // a warning that must be there (and the only one); "" for none
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.path
			if p == "" {
				p = "x.sh"
			}
			fs, ws := ScanFile(p, []byte(tc.src), Config{})
			var got []string
			for _, f := range fs {
				got = append(got, f.Rule)
				if f.What == "" || f.Why == "" || f.Line < 1 || f.Command == "" {
					t.Errorf("incomplete finding %+v", f)
				}
			}
			if !slices.Equal(got, tc.rules) {
				t.Errorf("rules %q, want %q:%s", got, tc.rules, guardtest.Describe(fs))
			}
			switch {
			case tc.warn == "" && len(ws) > 0:
				t.Errorf("unexpected warnings %+v", ws)
			case tc.warn != "" && (len(ws) != 1 || !strings.Contains(ws[0].Message, tc.warn)):
				t.Errorf("warnings %+v, want one with %q", ws, tc.warn)
			}
		})
	}
}

// A verb the guard cannot resolve in a VM lifecycle family is possibly destructive; a
// literal harmless verb, a non-lifecycle CLI, or a function called with literal arguments
// elsewhere are not.
func TestUnresolvedVerb(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "positional parameter", src: "gcloud compute instances \"$1\" gpu-1 --zone z\n", rules: []string{"vm-verb-unresolved"}},
		{name: "variable set outside", src: "az vm ${ACTION} -g rg -n gpu-1\n", rules: []string{"vm-verb-unresolved"}},
		{name: "part of a word", src: "aws ec2 ${ACTION}-instances --instance-ids i-1\n", rules: []string{"vm-verb-unresolved"}},
		{name: "command substitution", src: "runpodctl $(cat verb.txt) pod abc\n", rules: []string{"vm-verb-unresolved"}},
		{name: "oci action flag", src: "oci compute instance action --instance-id x --action \"$A\"\n", rules: []string{"vm-verb-unresolved"}},
		{name: "init level", src: "init \"$RUNLEVEL\"\n", rules: []string{"vm-verb-unresolved"}},
		{name: "variable with a literal value", src: "VERB=stop\ngcloud compute instances $VERB gpu-1\n", rules: []string{"gcp-instance-stop"}},
		{name: "wrapper function called with unknown arguments", src: "gce() { gcloud compute instances \"$@\"; }\ngce \"$1\" vm\n",
			rules: []string{"vm-verb-unresolved"}},
		{name: "the program itself unknown", src: "yes | $GCLOUD compute instances delete \"$VM\" --zone z\n", rules: []string{"gcp-instance-delete"}},
	})
	guardtest.RunNone(t, ScanFile, "x.sh", []string{
		"gcloud compute instances describe \"$1\" --zone \"$2\"\n",
		"gcloud compute instances list --filter \"$F\"\n",
		"gcloud compute instances start \"$1\"\n",
		"aws ec2 describe-instances --instance-ids \"$ID\"\n",
		"systemctl \"$ACTION\" nginx\n",
		"kubectl \"$VERB\" pod x\n",
		"docker \"$CMD\" c1\n",
		"gce() { gcloud compute instances \"$@\"; }\ngce start vm\ngce list\n",
		"$TOOL compute instances\n",
		"$RUNNER test --all\n",
	})
}

// Commands reached through wrapper functions, chains of runners and privileged containers.
func TestWrappersAndContainers(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "function local from a parameter", src: "run() { local cmd=\"$1\"; echo \"+ $cmd\"; $cmd; }\nrun \"ls -l\"\nrun \"sudo reboot\"\n",
			rules: []string{"host-reboot"}},
		{name: "retry wrapper with shift", src: "retry() { local n=$1; shift; for i in $(seq \"$n\"); do \"$@\" && break; done; }\nretry 3 gcloud compute instances delete gpu-1\n",
			rules: []string{"gcp-instance-delete"}},
		{name: "nohup timeout env bash -c", src: "nohup timeout 10 env A=1 bash -c \"sudo halt\" &\n", rules: []string{"host-shutdown"}},
		{name: "screen", src: "screen -dmS job bash -c 'sleep 3600; sudo poweroff'\nscreen -S job -X stuff 'sudo reboot\\n'\n",
			rules: []string{"host-shutdown", "host-reboot"}},
		{name: "tmux", src: "tmux new-session -d -s t 'python train.py; sudo shutdown -h now'\ntmux send-keys -t t 'nvidia-smi -r' Enter\n",
			rules: []string{"host-shutdown", "gpu-reset"}},
		{name: "systemd-run and script", src: "systemd-run --on-active=3600 /sbin/poweroff\nscript -q -c 'sudo reboot' /dev/null\n",
			rules: []string{"host-shutdown", "host-reboot"}},
		{name: "privileged container into the host", src: "docker run --rm --privileged --pid=host alpine nsenter -t 1 -m -u -i -n -- systemctl reboot\n",
			rules: []string{"host-reboot"}},
		{name: "host root mounted", src: "podman run -v /:/host --cap-add SYS_ADMIN ubuntu chroot /host shutdown -h now\n", rules: []string{"host-shutdown"}},
		{name: "entrypoint", src: "docker run --privileged --entrypoint nsenter busybox -t 1 -m -- reboot\n", rules: []string{"host-reboot"}},
		{name: "kubectl debug node", src: "kubectl debug node/gpu-1 -it --image=ubuntu -- chroot /host shutdown -h now\n", rules: []string{"host-shutdown"}},
	})
	guardtest.RunNone(t, ScanFile, "x.sh", []string{
		"docker run --rm alpine reboot\n", // the container's own init, not the host
		"docker stop c1\ndocker exec -it c1 bash\ndocker run --gpus all nvidia/cuda nvidia-smi -q\n",
		"docker run --privileged --pid=host alpine ps aux\n",
		"kubectl exec pod/x -- reboot\n",
		"screen -ls\ntmux ls\ntmux send-keys -t t 'make test' Enter\n",
		"run() { local cmd=\"$1\"; $cmd; }\nrun \"make -j\"\n",
	})
}

// Other routes to power-off than the shutdown binary, and other clouds.
func TestPowerOffRoutesAndClouds(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "systemd, logind, sysrq, runlevels", src: "systemctl poweroff\nloginctl poweroff\necho o > /proc/sysrq-trigger\ninit 0\ntelinit 0\nhalt\n",
			rules: []string{"host-shutdown", "host-shutdown", "host-sysrq", "host-shutdown", "host-shutdown", "host-shutdown"}},
		{name: "D-Bus", src: "dbus-send --system --print-reply --dest=org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager.PowerOff boolean:true\n" +
			"busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager Reboot b true\n",
			rules: []string{"host-shutdown", "host-reboot"}},
		{name: "init's signals and IPMI", src: "kill -SIGRTMIN+4 1\nipmitool -H bmc -U admin chassis power cycle\n",
			rules: []string{"host-shutdown", "host-reboot"}},
		{name: "other clouds' CLIs", src: "hcloud server shutdown gpu-1\ndoctl compute droplet-action power-off 123\nlinode-cli linodes shutdown 42\n" +
			"scw instance server stop 11\nibmcloud is instance-stop i1\nexo compute instance stop gpu\nopenstack server delete gpu-1\n",
			rules: []string{"cloud-vm-stop", "cloud-vm-stop", "cloud-vm-stop", "cloud-vm-stop", "cloud-vm-stop", "cloud-vm-stop", "cloud-vm-stop"}},
		{name: "TPU VMs and scale sets", src: "gcloud compute tpus tpu-vm stop t1 --zone z\naz vmss deallocate -g rg -n pool\n",
			rules: []string{"gcp-instance-stop", "azure-vm-stop"}},
		{name: "HTTP APIs", src: "curl -X DELETE -H \"Authorization: Bearer $T\" https://api.digitalocean.com/v2/droplets/$ID\n" +
			"curl -s -XPOST https://api.hetzner.cloud/v1/servers/$SID/actions/poweroff\n" +
			"http DELETE https://api.vultr.com/v2/instances/$ID \"Authorization:Bearer $K\"\n" +
			"curl -X POST https://rest.runpod.io/v1/pods/$POD/stop\n",
			rules: []string{"cloud-vm-stop", "cloud-vm-stop", "cloud-vm-stop", "runpod-pod-stop"}},
		{name: "sysfs PCI reset with an unknown address", src: "echo 1 | sudo tee /sys/bus/pci/devices/$GPU/remove\n", rules: []string{"gpu-reset"}},
		{name: "runner processes killed", src: "pkill -f Runner.Listener\n", rules: []string{"runner-stop"}},
	})
	guardtest.RunNone(t, ScanFile, "x.sh", []string{
		"dbus-send --system --print-reply --dest=org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager.CanPowerOff\n",
		"loginctl list-sessions\nhcloud server list\ndoctl compute droplet list\nlinode-cli linodes list\nopenstack server list\n",
		"curl https://api.digitalocean.com/v2/droplets\ncurl -X POST https://api.hetzner.cloud/v1/servers -d @spec.json\n",
		"kill -HUP 1\nkill -9 $PID\nipmitool chassis power status\n",
		"nvidia-smi -pm 1\nnvidia-smi --persistence-mode=1\nnvidia-smi -q -d PERFORMANCE\n",
		"cat /sys/bus/pci/devices/0000:01:00.0/reset_method\n",
		"pkill -f train.py\n",
	})
}

// Text decoded and piped into a shell is judged; a blob that cannot be decoded is a warning.
func TestDecodedScripts(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "base64 into sh", src: "echo c2h1dGRvd24gLWggbm93 | base64 -d | sh\n", rules: []string{"host-shutdown"}},
		{name: "here-string", src: "base64 -d <<< 'aGFsdA==' | sudo bash\n", rules: []string{"host-shutdown"}},
		{name: "bash -c of a substitution", src: "bash -c \"$(echo cmVib290 | base64 --decode)\"\n", rules: []string{"host-reboot"}},
		{name: "hex", src: "echo 7265626f6f74 | xxd -r -p | sh\n", rules: []string{"host-reboot"}},
		{name: "printf escapes", src: "printf '\\x72\\x65\\x62\\x6f\\x6f\\x74\\n' | sh\n", rules: []string{"host-reboot"}},
		{name: "echo -e escapes", src: "echo -e '\\x70\\x6f\\x77\\x65\\x72\\x6f\\x66\\x66' | bash\n", rules: []string{"host-shutdown"}},
		{name: "python", path: "x.py", src: "import os, base64\nos.system(base64.b64decode('c3VkbyByZWJvb3Q=').decode())\n", rules: []string{"host-reboot"}},
		{name: "undecodable into a shell", src: "echo \"$PAYLOAD\" | base64 -d | bash\n", warn: "cannot decode it"},
		{name: "undecodable eval", src: "eval \"$(echo $X | base64 -d)\"\n", warn: "cannot decode it"},
	})
	guardtest.RunNone(t, ScanFile, "x.sh", []string{
		"echo aGVsbG8= | base64 -d\n",
		"key=$(echo \"$SECRET\" | base64 -d)\necho \"$KEY_B64\" | base64 -d > key.pem\n",
		"echo bWFrZSAtag== | base64 -d | sh\n",
	})
}

// Python: wrapper functions, object-style SDK calls, HTTP clients.
func TestPythonGeneralized(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "wrapper function", path: "x.py", src: "import subprocess\ndef sh(cmd):\n    print('+', cmd)\n    return subprocess.run(cmd, shell=True, check=True)\n\nsh('make -j')\nsh('sudo shutdown -h now')\n",
			rules: []string{"host-shutdown"}},
		{name: "wrapper method", path: "x.py", src: "import os\nclass Box:\n    def run(self, c):\n        os.system(c)\n\nb = Box()\nb.run('nvidia-smi -r')\n",
			rules: []string{"gpu-reset"}},
		{name: "boto3 resource object", path: "x.py", src: "import boto3\nec2 = boto3.resource('ec2')\ni = ec2.Instance('i-1')\ni.stop()\nec2.Instance('i-2').terminate()\n",
			rules: []string{"aws-ec2-stop", "aws-ec2-terminate"}},
		{name: "boto3 loop over a collection", path: "x.py", src: "import boto3\nec2 = boto3.resource('ec2')\nfor inst in ec2.instances.filter(Filters=[]):\n    inst.stop()\n",
			rules: []string{"aws-ec2-stop"}},
		{name: "compute discovery, positional", path: "x.py", src: "from googleapiclient import discovery\ncompute = discovery.build('compute', 'v1')\ncompute.instances().stop(p, z, name).execute()\n",
			rules: []string{"gcp-instance-stop"}},
		{name: "google-cloud-compute client object", path: "x.py", src: "from google.cloud import compute_v1\nclient = compute_v1.InstancesClient()\nop = client.stop(project, zone, name)\nclient.delete(project, zone, other)\n",
			rules: []string{"gcp-instance-stop", "gcp-instance-delete"}},
		{name: "azure any receiver", path: "x.py", src: "poller = cm.virtual_machines.begin_power_off(rg, vm)\nclient.vmss.begin_deallocate(rg, name)\n",
			rules: []string{"azure-vm-stop", "azure-vm-stop"}},
		{name: "hcloud and libcloud", path: "x.py", src: "client.servers.power_off(server)\ndriver.destroy_node(node)\n",
			rules: []string{"cloud-vm-stop", "cloud-vm-stop"}},
		{name: "requests DELETE", path: "x.py", src: "import requests\nrequests.delete(f'https://api.linode.com/v4/linode/instances/{lid}', headers=h)\nrequests.request('DELETE', 'https://console.vast.ai/api/v0/instances/' + iid + '/')\n",
			rules: []string{"cloud-vm-stop", "vastai-instance-stop"}},
		{name: "runpod graphql", path: "x.py", src: "import requests\nrequests.post(f'https://api.runpod.io/graphql?api_key={k}', json={'query': 'mutation { podTerminate(input: {podId: \"x\"}) }'})\n",
			rules: []string{"runpod-pod-stop"}},
	})
	guardtest.RunNone(t, ScanFile, "x.py", []string{
		"proc.stop()\nserver.shutdown()\nthread.reset()\nself.instances.append(x)\n",
		"import boto3\nec2 = boto3.resource('ec2')\ni = ec2.Instance('i-1')\ni.start()\nprint(i.state)\n",
		"import requests\nrequests.get('https://api.linode.com/v4/linode/instances')\nrequests.post('https://api.hetzner.cloud/v1/servers', json=spec)\n",
		"import subprocess\ndef sh(cmd):\n    subprocess.run(cmd, shell=True)\n\nsh('make test')\n",
	})
}

// Workflows: values of expressions, third-party actions, their script and CLI inputs.
func TestWorkflowGeneralized(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "input default", path: guardtest.WorkflowPath, src: "on:\n  workflow_dispatch:\n    inputs:\n      cmd:\n        default: sudo shutdown -h now\njobs:\n  a:\n    steps:\n      - run: ${{ inputs.cmd }}\n",
			rules: []string{"host-shutdown"}},
		{name: "choice options", path: guardtest.WorkflowPath, src: "on:\n  workflow_dispatch:\n    inputs:\n      action:\n        type: choice\n        options: [start, stop]\n        default: start\njobs:\n  a:\n    steps:\n      - run: gcloud compute instances ${{ github.event.inputs.action }} gpu-1 --zone z\n",
			rules: []string{"gcp-instance-stop"}},
		{name: "matrix value", path: guardtest.WorkflowPath, src: "jobs:\n  a:\n    strategy:\n      matrix:\n        step: [build, test, 'sudo nvidia-smi -r']\n    steps:\n      - run: ${{ matrix.step }}\n",
			rules: []string{"gpu-reset"}},
		{name: "matrix include", path: guardtest.WorkflowPath, src: "jobs:\n  a:\n    strategy:\n      matrix:\n        include:\n          - cleanup: echo done\n          - cleanup: sudo poweroff\n    steps:\n      - run: ${{ matrix.cleanup }}\n",
			rules: []string{"host-shutdown"}},
		{name: "env expanded into run", path: guardtest.WorkflowPath, src: "env:\n  TEARDOWN: az vm deallocate -g rg -n gpu\njobs:\n  a:\n    steps:\n      - run: ${{ env.TEARDOWN }}\n      - run: $TEARDOWN\n",
			rules: []string{"azure-vm-stop", "azure-vm-stop"}},
		{name: "env from an input", path: guardtest.WorkflowPath, src: "on:\n  workflow_call:\n    inputs:\n      verb:\n        type: string\n        default: terminate-instances\njobs:\n  a:\n    env:\n      VERB: ${{ inputs.verb }}\n    steps:\n      - run: aws ec2 $VERB --instance-ids i-1\n",
			rules: []string{"aws-ec2-terminate"}},
		{name: "expression literal alternative", path: guardtest.WorkflowPath, src: "jobs:\n  a:\n    steps:\n      - run: ${{ github.event_name == 'schedule' && 'sudo reboot' || 'echo skip' }}\n",
			rules: []string{"host-reboot"}},
		{name: "composite action input default", path: ".github/actions/t/action.yml", src: "inputs:\n  teardown:\n    default: terraform destroy -auto-approve\nruns:\n  using: composite\n  steps:\n    - shell: bash\n      run: ${{ inputs.teardown }}\n",
			rules: []string{"terraform-destroy"}},
		{name: "generic ssh action", path: guardtest.WorkflowPath, src: "jobs:\n  a:\n    steps:\n      - uses: garygrossgarten/github-action-ssh@release\n        with:\n          command: sudo reboot\n          host: gpu\n",
			rules: []string{"host-reboot"}},
		{name: "retry action command", path: guardtest.WorkflowPath, src: "jobs:\n  a:\n    steps:\n      - uses: nick-fields/retry@v3\n        with:\n          timeout_minutes: 5\n          command: gcloud compute instances delete gpu-1 --zone z --quiet\n",
			rules: []string{"gcp-instance-delete"}},
		{name: "azure cli inline script", path: guardtest.WorkflowPath, src: "jobs:\n  a:\n    steps:\n      - uses: azure/CLI@v2\n        with:\n          inlineScript: |\n            az vm deallocate -g rg -n gpu\n",
			rules: []string{"azure-vm-stop"}},
		{name: "CLI action args", path: guardtest.WorkflowPath, src: "jobs:\n  a:\n    steps:\n      - uses: some-org/aws-cli-action@v1\n        with:\n          args: ec2 terminate-instances --instance-ids i-1\n",
			rules: []string{"aws-ec2-terminate"}},
		{name: "pulumi destroy", path: guardtest.WorkflowPath, src: "jobs:\n  a:\n    steps:\n      - uses: pulumi/actions@v5\n        with:\n          command: destroy\n          stack-name: gpu\n",
			rules: []string{"terraform-destroy"}},
		{name: "runner action in stop mode", path: guardtest.WorkflowPath, src: "jobs:\n  a:\n    steps:\n      - uses: machulav/ec2-github-runner@v2\n        with:\n          mode: stop\n          label: x\n",
			rules: []string{"vm-action-stop"}},
		{name: "stop mode from an input", path: guardtest.WorkflowPath, src: "on:\n  workflow_dispatch:\n    inputs:\n      mode:\n        options: [start, stop]\njobs:\n  a:\n    steps:\n      - uses: some/gce-runner-action@v1\n        with:\n          mode: ${{ inputs.mode }}\n",
			rules: []string{"vm-action-stop"}},
		{name: "stop flag input", path: guardtest.WorkflowPath, src: "jobs:\n  a:\n    steps:\n      - uses: acme/aws-ec2-action@v1\n        with:\n          stop-instance: true\n",
			rules: []string{"vm-action-stop"}},
		{name: "stop sub-action", path: guardtest.WorkflowPath, src: "jobs:\n  a:\n    steps:\n      - uses: acme/hcloud-runner/stop@v1\n        with:\n          token: x\n",
			rules: []string{"vm-action-stop"}},
		{name: "terraform destroy action", path: guardtest.WorkflowPath, src: "jobs:\n  a:\n    steps:\n      - uses: dflook/terraform-destroy@v1\n        with:\n          path: infra\n",
			rules: []string{"terraform-destroy"}},
	})
	guardtest.RunNone(t, ScanFile, guardtest.WorkflowPath, []string{
		"on:\n  workflow_dispatch:\n    inputs:\n      cmd:\n        default: make test\njobs:\n  a:\n    steps:\n      - run: ${{ inputs.cmd }}\n",
		"jobs:\n  a:\n    strategy:\n      matrix:\n        os: [ubuntu-latest, windows-latest]\n    steps:\n      - run: echo ${{ matrix.os }}\n",
		"jobs:\n  a:\n    steps:\n      - uses: machulav/ec2-github-runner@v2\n        with:\n          mode: start\n",
		"jobs:\n  a:\n    steps:\n      - uses: actions/cache@v4\n        with:\n          path: x\n          key: stop\n",
		"jobs:\n  a:\n    steps:\n      - uses: some/runner-stats@v1\n        with:\n          stop-on-error: true\n",
		"jobs:\n  a:\n    steps:\n      - uses: actions/github-script@v7\n        with:\n          script: |\n            await exec.exec('sudo reboot')\n",
		"jobs:\n  a:\n    steps:\n      - uses: some/deploy@v1\n        with:\n          command: deploy --env prod\n",
		"jobs:\n  a:\n    steps:\n      - uses: some/notify@v1\n        with:\n          script: 'console.log(\"sudo reboot\"'\n",
		"jobs:\n  a:\n    steps:\n      - uses: ./.github/actions/teardown\n        with:\n          mode: stop\n",
	})
	// A PowerShell action's script cannot be judged.
	fs, ws := ScanFile(guardtest.WorkflowPath, []byte("jobs:\n  a:\n    steps:\n      - uses: azure/powershell@v2\n        with:\n          inlineScript: Stop-AzVM -Name gpu\n"), Config{})
	if len(fs) != 0 || len(ws) != 1 || !ws[0].Unjudged || ws[0].Line != 6 {
		t.Errorf("powershell action: %v %+v", guardtest.Describe(fs), ws)
	}
}

// Custom rules can match the uses pseudo-command and HTTP requests too.
func TestConfigUsesAndURLRules(t *testing.T) {
	cfg := parseConfig(t, `guard:
  rules:
    - id: lab-vm-action
      command: uses
      args: ["lab-org/vm-control*", "op=halt"]
    - id: lab-api
      command: [curl]
      url: ["https://lab.example.com/api/machines/*/halt"]
      method: [POST]
`)
	if err := validate(cfg); err != nil {
		t.Fatal(err)
	}
	fs, _ := ScanFile(guardtest.WorkflowPath, []byte("jobs:\n  a:\n    steps:\n      - uses: lab-org/vm-control@v1\n        with:\n          op: halt\n"), cfg)
	if len(fs) != 1 || fs[0].Rule != "lab-vm-action" || fs[0].Line != 6 {
		t.Errorf("uses rule:%s", guardtest.Describe(fs))
	}
	fs, _ = ScanFile("x.sh", []byte("curl -X POST https://lab.example.com/api/machines/$M/halt\ncurl https://lab.example.com/api/machines/1/halt\n"), cfg)
	if len(fs) != 1 || fs[0].Rule != "lab-api" || fs[0].Line != 1 {
		t.Errorf("url rule:%s", guardtest.Describe(fs))
	}
}
