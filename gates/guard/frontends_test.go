package guard

import (
	"strings"
	"testing"
)

const wfPath = ".github/workflows/ci.yml"

func TestWorkflow(t *testing.T) {
	runScanCases(t, []scanCase{
		{name: "literal block, third line", path: wfPath, src: `on: push
jobs:
  gate:
    runs-on: [self-hosted, gpu]
    steps:
      - uses: actions/checkout@v4
      - name: build and stop
        run: |
          make -j
          ./bench --all
          sudo nvidia-smi -r
          echo done
`, want: []want{{11, "sudo", "gpu-reset", "sudo nvidia-smi -r", "sudo → nvidia-smi"}}},
		{name: "literal block, deep indentation, keep chomping", path: wfPath, src: `jobs:
  a:
    steps:
      -   name: x
          run: |+
                      echo one

                      echo two
                      sudo poweroff


      - run: echo next
`, want: []want{{9, "sudo", "host-shutdown", "sudo poweroff", ""}}},
		{name: "literal block, strip chomping, shallow", path: wfPath, src: `jobs:
 a:
  steps:
  - run: |-
     a
     b
     shutdown -h now
`, want: []want{{7, "shutdown", "host-shutdown", "shutdown -h now", ""}}},
		{name: "literal block, indentation indicator, more indented lines", path: wfPath, src: `jobs:
  a:
    steps:
      - run: |2
            if true; then
              sudo reboot
            fi
`, want: []want{{6, "sudo", "host-reboot", "sudo reboot", ""}}},
		{name: "literal block, multi-line command and comment after indicator", path: wfPath, src: `jobs:
  a:
    steps:
      - run: | # stop the box
          gcloud compute instances stop \
            "$VM" \
            --zone us-central1-a
`, want: []want{{5, "gcloud", "gcp-instance-stop", `gcloud compute instances stop \ "$VM" \ --zone us-central1-a`, ""}}},
		{name: "folded block joins lines", path: wfPath, src: `jobs:
  a:
    steps:
      - run: >-
          echo a &&
          sudo reboot
`, want: []want{{6, "sudo", "host-reboot", "sudo reboot", ""}}},
		{name: "plain scalar, multi-line", path: wfPath, src: `jobs:
  a:
    steps:
      - run: echo hi &&
          sudo halt
`, want: []want{{5, "sudo", "host-shutdown", "sudo halt", ""}}},
		{name: "double-quoted with escapes", path: wfPath, src: `jobs:
  a:
    steps:
      - run: "echo \"x\\ty\" && sudo nvidia-smi --gpu-reset -i 0"
`, want: []want{{4, "sudo", "gpu-reset", "sudo nvidia-smi --gpu-reset -i 0", ""}}},
		{name: "single-quoted with doubled quote", path: wfPath, src: `jobs:
  a:
    steps:
      - run: 'echo ''hi'' ; sudo  shutdown -h now'
`, want: []want{{4, "sudo", "host-shutdown", "sudo  shutdown -h now", ""}}},
		{name: "expressions keep columns", path: wfPath, src: `jobs:
  a:
    steps:
      - run: |
          echo "${{ github.event.pull_request.title }}" && gcloud compute instances delete ${{ matrix.vm }} --zone z
          ${{ inputs.cmd }} reboot
`, want: []want{{5, "gcloud", "gcp-instance-delete", "gcloud compute instances delete ${{ matrix.vm }} --zone z", ""}}},
		{name: "expression with quotes inside", path: wfPath, src: `jobs:
  a:
    steps:
      - run: |
          if [ "${{ github.event_name == 'push' && 'yes' || 'no' }}" = yes ]; then sudo reboot; fi
`, want: []want{{5, "sudo", "host-reboot", "sudo reboot", ""}}},
		{name: "workflow env holds the command", path: wfPath, src: `env:
  STOP: gcloud compute instances stop
jobs:
  a:
    steps:
      - run: $STOP gpu-1
`, want: []want{{6, "$STOP", "gcp-instance-stop", "$STOP gpu-1", "$STOP → gcloud"}}},
		{name: "shell python", path: wfPath, src: `jobs:
  a:
    steps:
      - shell: python
        run: |
          import subprocess
          # subprocess.run(["sudo", "reboot"])
          print("sudo reboot")
          subprocess.run(["sudo", "reboot"], check=True)
`, want: []want{{9, "subprocess", "host-reboot", `subprocess.run(["sudo", "reboot"], check=True)`, "subprocess.run → sudo → reboot"}}},
		{name: "defaults shell and a job called run", path: wfPath, src: `defaults:
  run:
    shell: bash -eo pipefail {0}
jobs:
  run:
    steps:
      - run: sudo systemctl suspend
`, want: []want{{7, "sudo", "host-suspend", "sudo systemctl suspend", ""}}},
		{name: "ssh action script", path: wfPath, src: `jobs:
  a:
    steps:
      - uses: appleboy/ssh-action@v1
        with:
          host: gpu
          script: |
            cd /srv
            sudo ./svc.sh stop
`, want: []want{{9, "sudo", "runner-stop", "sudo ./svc.sh stop", ""}}},
		{name: "composite action", path: ".github/actions/teardown/action.yml", src: `name: teardown
runs:
  using: composite
  steps:
    - shell: bash
      run: |
        terraform destroy -auto-approve
`, want: []want{{7, "terraform", "terraform-destroy", "terraform destroy -auto-approve", ""}}},
		{name: "anchors", path: wfPath, src: `x: &stop
  run: sudo poweroff
jobs:
  a:
    steps:
      - *stop
`, want: []want{{2, "sudo", "host-shutdown", "sudo poweroff", ""}}},
	})
}

func TestWorkflowSafe(t *testing.T) {
	runNone(t, wfPath, []string{
		"name: sudo reboot\non: push\njobs:\n  a:\n    steps:\n      - name: sudo shutdown -h now\n        run: echo 'sudo shutdown -h now'\n",
		"# run: sudo reboot\njobs: {}\n",
		"jobs:\n  a:\n    steps:\n      - run: |\n          # sudo reboot\n          echo ok\n",
		"jobs:\n  a:\n    steps:\n      - uses: actions/github-script@v7\n        with:\n          script: console.log('sudo reboot')\n",
		"jobs:\n  a:\n    steps:\n      - run: ${{ inputs.command }}\n",
		"jobs:\n  a:\n    steps:\n      - run: nvidia-smi --query-gpu=name --format=csv\n",
		"",
	})
}

func TestWorkflowWarnings(t *testing.T) {
	tests := []struct {
		name, path, src string
		line            int
		msg             string
		unjudged        bool // fails the gate: the guard could not judge it
	}{
		{"pwsh", wfPath, "jobs:\n  a:\n    steps:\n      - shell: pwsh\n        run: Stop-Computer\n", 5, `shell "pwsh"`, true},
		{"windows default", wfPath, "jobs:\n  a:\n    runs-on: windows-latest\n    steps:\n      - run: Restart-Computer\n", 5, `shell "pwsh (the default on Windows`, true},
		{"cmd", ".github/actions/x/action.yaml", "runs:\n  steps:\n    - shell: cmd\n      run: shutdown /s\n", 4, `shell "cmd"`, true},
		// Not GitHub's YAML parser: what it cannot parse GitHub may still run.
		{"yaml error", wfPath, "on: push\njobs:\n  a:\n    steps:\n      - run: echo\n     bad: [\n", 3, "could not parse YAML", true},
		// The shell stops at a syntax error too.
		{"shell parse error", wfPath, "jobs:\n  a:\n    steps:\n      - run: |\n          echo ok\n          if true; then\n", 6, "could not parse the run: script", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, ws := ScanFile(tt.path, []byte(tt.src), Config{})
			if len(fs) != 0 {
				t.Errorf("findings:%s", describeFindings(fs))
			}
			if len(ws) == 1 && ws[0].Unjudged != tt.unjudged {
				t.Errorf("warning %+v: unjudged %v, want %v", ws[0], ws[0].Unjudged, tt.unjudged)
			}
			if len(ws) != 1 || ws[0].Line != tt.line || !strings.Contains(ws[0].Message, tt.msg) {
				t.Errorf("warnings %+v, want one at line %d containing %q", ws, tt.line, tt.msg)
			}
		})
	}
}

func TestMakefile(t *testing.T) {
	runScanCases(t, []scanCase{
		{name: "recipes", path: "Makefile", src: "STOP = gcloud compute instances stop\nVM ?= gpu-1\n\n.PHONY: all\nall:\n" +
			"\t@echo \"sudo shutdown -h now\"\n\t-sudo nvidia-smi -pm 0\n\t@$(STOP) $(VM)\n\techo $$HOME && \\\n\t  sudo poweroff\n\t+$(MAKE) -C sub\n",
			want: []want{{7, "sudo", "gpu-persistence-off", "sudo nvidia-smi -pm 0", ""}, {8, "$(STOP)", "gcp-instance-stop", "$(STOP) $(VM)", ""},
				{10, "sudo", "host-shutdown", "sudo poweroff", ""}}},
		{name: "$(shell ...) anywhere", path: "Makefile", src: "X := $(shell sudo reboot)\nall:\n\techo $@ $(shell nvidia-smi -r)\n",
			want: []want{{1, "sudo", "host-reboot", "sudo reboot", ""}, {3, "nvidia-smi", "gpu-reset", "nvidia-smi -r", ""}}},
		{name: "define used in a recipe", path: "rules.mk", src: "define TEARDOWN\nterraform destroy -auto-approve\nendef\n\nclean:\n\t$(TEARDOWN)\n",
			want: []want{{2, "terraform", "terraform-destroy", "terraform destroy -auto-approve", ""}}},
		{name: "inline recipe and .ONESHELL", path: "GNUmakefile", src: ".ONESHELL:\nquick: ; sudo reboot\nlong:\n\tif [ -f x ]; then\n\t  kubectl drain gpu-1\n\tfi\n",
			want: []want{{2, "sudo", "host-reboot", "sudo reboot", ""}, {5, "kubectl", "k8s-node-drain", "kubectl drain gpu-1", ""}}},
		{name: "shell variable in a recipe", path: "Makefile", src: "stop:\n\tCMD=\"sudo halt\"; $$CMD\n",
			want: []want{{2, "$$CMD", "host-shutdown", "$$CMD", ""}}},
	})
	runNone(t, "Makefile", []string{
		"# sudo reboot\nall:\n\t@echo reboot\n",
		"help:\n\t@echo \"reboot - reboots the device\"\n",
		"define HELP\nreboot - reboots\nendef\nexport HELP\n",
		"X = sudo reboot\nall:\n\techo '$(X)'\n",
		"all:\n\t$(MAKE) stop\n",
	})
}

func TestDockerfile(t *testing.T) {
	runScanCases(t, []scanCase{
		{name: "shell form with continuation and comment", path: "Dockerfile", src: "FROM ubuntu\nRUN apt-get update && \\\n    # install\n    apt-get install -y x && \\\n    sudo reboot\n",
			want: []want{{5, "sudo", "host-reboot", "sudo reboot", ""}}},
		{name: "flags", path: "Dockerfile", src: "RUN --mount=type=cache,target=/x --network=none nvidia-smi -r\n",
			want: []want{{1, "nvidia-smi", "gpu-reset", "nvidia-smi -r", ""}}},
		{name: "exec form", path: "docker/Dockerfile.gpu", src: "FROM x\nRUN [\"sh\", \"-c\", \"sudo shutdown -h now\"]\nRUN [ \"nvidia-smi\", \"-pm\", \"0\" ]\n",
			want: []want{{2, "sudo", "host-shutdown", `["sh", "-c", "sudo shutdown -h now"]`, "sh -c → sudo → shutdown"},
				{3, "[", "gpu-persistence-off", `[ "nvidia-smi", "-pm", "0" ]`, ""}}},
		{name: "here-documents", path: "Dockerfile", src: "RUN <<EOF\necho hi\nsudo poweroff\nEOF\nRUN bash <<EOT\nsystemctl reboot\nEOT\nRUN cat <<EOT > /etc/motd\nreboot now\nEOT\n",
			want: []want{{3, "sudo", "host-shutdown", "sudo poweroff", ""}, {6, "systemctl", "host-reboot", "bash <<EOT … systemctl reboot", ""}}},
		{name: "onbuild and lower case", path: "gpu.dockerfile", src: "onbuild run halt\nrun shutdown now\n",
			want: []want{{1, "halt", "host-shutdown", "halt", ""}, {2, "shutdown", "host-shutdown", "shutdown now", ""}}},
		{name: "escape directive", path: "Dockerfile", src: "# escape=`\nFROM x\nRUN echo a && `\n    sudo reboot\n",
			want: []want{{4, "sudo", "host-reboot", "sudo reboot", ""}}},
	})
	runNone(t, "Dockerfile", []string{
		"# RUN sudo reboot\nFROM x\n",
		"CMD [\"reboot\"]\nENTRYPOINT shutdown\n",
		"RUN echo 'sudo reboot'\n",
		"LABEL description=\"sudo reboot\"\n",
	})
}

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
	runScanCases(t, []scanCase{{name: "calls", path: "tools/launch.py", src: pySrc, want: []want{
		{10, "sudo", "host-reboot", `os.system("sudo reboot")`, "os.system → sudo → reboot"},
		{11, "sp.run", "gpu-reset", `sp.run(["sudo", "nvidia-smi", "-r"], check=True)`, "sp.run → sudo → nvidia-smi"},
		{12, "gcloud", "gcp-instance-stop", `run("gcloud compute instances stop vm --zone z", shell=True)`, ""},
		{14, "check_call", "host-shutdown", "check_call(CMD)", ""},
		{16, "ec2", "aws-ec2-stop", `ec2.stop_instances(InstanceIds=["i-1"])`, ""},
		{17, "boto3", "aws-ec2-terminate", `boto3.client("ec2").terminate_instances(InstanceIds=ids)`, ""},
		{19, "runpod", "runpod-pod-stop", "runpod.stop_pod(pod_id)", ""},
		{21, "requests", "lambda-instance-terminate", `requests.post(f"{BASE}/api/v1/instance-operations/terminate", json={})`, ""},
		{23, "sudo", "host-reboot", `sp.check_output(f"ssh {host} 'sudo reboot'", shell=True)`, "sp.check_output → ssh → sudo → reboot"},
		{24, "open", "host-sysrq", `open("/proc/sysrq-trigger", "w")`, ""},
		{29, "sp.Popen", "host-shutdown", `sp.Popen( ["sudo", "poweroff"])`, ""},
		{34, "nvidia-smi", "gpu-persistence-off", `sp.run(["bash", "-c", "echo hi; nvidia-smi -pm 0"])`, ""},
		{35, "sudo", "gpu-clocks", `sp.run(shlex.split("sudo nvidia-smi -rgc"))`, ""},
		{36, "sudo", "host-reboot", `sp.run("sudo reboot".split())`, ""},
		{37, "compute", "azure-vm-stop", "compute.virtual_machines.begin_deallocate(rg, name)", ""},
		{38, "client", "gcp-instance-stop", "client.stop(project=p, zone=z, instance=i)", ""},
		{39, "os", "host-shutdown", `os.execvp("sudo", ["sudo", "halt"])`, ""},
	}}})
	runNone(t, "x.py", []string{
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
	fs, ws := ScanFile("x.py", []byte("import os\nos.system(\"sudo reboot)\nx = 1\n"), Config{})
	if len(ws) != 1 || ws[0].Line != 2 || !strings.Contains(ws[0].Message, "does not end") {
		t.Errorf("warnings %+v", ws)
	}
	_ = fs // the string is read to the end of its line; a finding is fine either way
}
