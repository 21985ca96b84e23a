package workflow_test

import (
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/guard"
	"github.com/kernel-gate/kernel-gate/gates/guard/internal/guardtest"
)

func TestWorkflow(t *testing.T) {
	guardtest.Run(t, guard.ScanFile, []guardtest.Case{
		{Name: "literal block, third line", Path: guardtest.WorkflowPath, Src: `on: push
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
`, Want: []guardtest.Want{{Line: 11, At: "sudo", Rule: "gpu-reset", Cmd: "sudo nvidia-smi -r", Via: "sudo → nvidia-smi"}}},
		{Name: "literal block, deep indentation, keep chomping", Path: guardtest.WorkflowPath, Src: `jobs:
  a:
    steps:
      -   name: x
          run: |+
                      echo one

                      echo two
                      sudo poweroff


      - run: echo next
`, Want: []guardtest.Want{{Line: 9, At: "sudo", Rule: "host-shutdown", Cmd: "sudo poweroff"}}},
		{Name: "literal block, strip chomping, shallow", Path: guardtest.WorkflowPath, Src: `jobs:
 a:
  steps:
  - run: |-
     a
     b
     shutdown -h now
`, Want: []guardtest.Want{{Line: 7, At: "shutdown", Rule: "host-shutdown", Cmd: "shutdown -h now"}}},
		{Name: "literal block, indentation indicator, more indented lines", Path: guardtest.WorkflowPath, Src: `jobs:
  a:
    steps:
      - run: |2
            if true; then
              sudo reboot
            fi
`, Want: []guardtest.Want{{Line: 6, At: "sudo", Rule: "host-reboot", Cmd: "sudo reboot"}}},
		{Name: "literal block, multi-line command and comment after indicator", Path: guardtest.WorkflowPath, Src: `jobs:
  a:
    steps:
      - run: | # stop the box
          gcloud compute instances stop \
            "$VM" \
            --zone us-central1-a
`, Want: []guardtest.Want{{Line: 5, At: "gcloud", Rule: "gcp-instance-stop", Cmd: `gcloud compute instances stop \ "$VM" \ --zone us-central1-a`}}},
		{Name: "folded block joins lines", Path: guardtest.WorkflowPath, Src: `jobs:
  a:
    steps:
      - run: >-
          echo a &&
          sudo reboot
`, Want: []guardtest.Want{{Line: 6, At: "sudo", Rule: "host-reboot", Cmd: "sudo reboot"}}},
		{Name: "plain scalar, multi-line", Path: guardtest.WorkflowPath, Src: `jobs:
  a:
    steps:
      - run: echo hi &&
          sudo halt
`, Want: []guardtest.Want{{Line: 5, At: "sudo", Rule: "host-shutdown", Cmd: "sudo halt"}}},
		{Name: "double-quoted with escapes", Path: guardtest.WorkflowPath, Src: `jobs:
  a:
    steps:
      - run: "echo \"x\\ty\" && sudo nvidia-smi --gpu-reset -i 0"
`, Want: []guardtest.Want{{Line: 4, At: "sudo", Rule: "gpu-reset", Cmd: "sudo nvidia-smi --gpu-reset -i 0"}}},
		{Name: "single-quoted with doubled quote", Path: guardtest.WorkflowPath, Src: `jobs:
  a:
    steps:
      - run: 'echo ''hi'' ; sudo  shutdown -h now'
`, Want: []guardtest.Want{{Line: 4, At: "sudo", Rule: "host-shutdown", Cmd: "sudo  shutdown -h now"}}},
		{Name: "expressions keep columns", Path: guardtest.WorkflowPath, Src: `jobs:
  a:
    steps:
      - run: |
          echo "${{ github.event.pull_request.title }}" && gcloud compute instances delete ${{ matrix.vm }} --zone z
          ${{ inputs.cmd }} reboot
`, Want: []guardtest.Want{{Line: 5, At: "gcloud", Rule: "gcp-instance-delete", Cmd: "gcloud compute instances delete ${{ matrix.vm }} --zone z"}}},
		{Name: "expression with quotes inside", Path: guardtest.WorkflowPath, Src: `jobs:
  a:
    steps:
      - run: |
          if [ "${{ github.event_name == 'push' && 'yes' || 'no' }}" = yes ]; then sudo reboot; fi
`, Want: []guardtest.Want{{Line: 5, At: "sudo", Rule: "host-reboot", Cmd: "sudo reboot"}}},
		{Name: "workflow env holds the command", Path: guardtest.WorkflowPath, Src: `env:
  STOP: gcloud compute instances stop
jobs:
  a:
    steps:
      - run: $STOP gpu-1
`, Want: []guardtest.Want{{Line: 6, At: "$STOP", Rule: "gcp-instance-stop", Cmd: "$STOP gpu-1", Via: "$STOP → gcloud"}}},
		{Name: "shell python", Path: guardtest.WorkflowPath, Src: `jobs:
  a:
    steps:
      - shell: python
        run: |
          import subprocess
          # subprocess.run(["sudo", "reboot"])
          print("sudo reboot")
          subprocess.run(["sudo", "reboot"], check=True)
`, Want: []guardtest.Want{{Line: 9, At: "subprocess", Rule: "host-reboot", Cmd: `subprocess.run(["sudo", "reboot"], check=True)`, Via: "subprocess.run → sudo → reboot"}}},
		{Name: "defaults shell and a job called run", Path: guardtest.WorkflowPath, Src: `defaults:
  run:
    shell: bash -eo pipefail {0}
jobs:
  run:
    steps:
      - run: sudo systemctl suspend
`, Want: []guardtest.Want{{Line: 7, At: "sudo", Rule: "host-suspend", Cmd: "sudo systemctl suspend"}}},
		{Name: "ssh action script", Path: guardtest.WorkflowPath, Src: `jobs:
  a:
    steps:
      - uses: appleboy/ssh-action@v1
        with:
          host: gpu
          script: |
            cd /srv
            sudo ./svc.sh stop
`, Want: []guardtest.Want{{Line: 9, At: "sudo", Rule: "runner-stop", Cmd: "sudo ./svc.sh stop"}}},
		{Name: "composite action", Path: ".github/actions/teardown/action.yml", Src: `name: teardown
runs:
  using: composite
  steps:
    - shell: bash
      run: |
        terraform destroy -auto-approve
`, Want: []guardtest.Want{{Line: 7, At: "terraform", Rule: "terraform-destroy", Cmd: "terraform destroy -auto-approve"}}},
		{Name: "anchors", Path: guardtest.WorkflowPath, Src: `x: &stop
  run: sudo poweroff
jobs:
  a:
    steps:
      - *stop
`, Want: []guardtest.Want{{Line: 2, At: "sudo", Rule: "host-shutdown", Cmd: "sudo poweroff"}}},
	})
}

func TestWorkflowSafe(t *testing.T) {
	guardtest.RunNone(t, guard.ScanFile, guardtest.WorkflowPath, []string{
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
		{"pwsh", guardtest.WorkflowPath, "jobs:\n  a:\n    steps:\n      - shell: pwsh\n        run: Stop-Computer\n", 5, `shell "pwsh"`, true},
		{"windows default", guardtest.WorkflowPath, "jobs:\n  a:\n    runs-on: windows-latest\n    steps:\n      - run: Restart-Computer\n", 5, `shell "pwsh (the default on Windows`, true},
		{"cmd", ".github/actions/x/action.yaml", "runs:\n  steps:\n    - shell: cmd\n      run: shutdown /s\n", 4, `shell "cmd"`, true},
		// Not GitHub's YAML parser: what it cannot parse GitHub may still run.
		{"yaml error", guardtest.WorkflowPath, "on: push\njobs:\n  a:\n    steps:\n      - run: echo\n     bad: [\n", 3, "could not parse YAML", true},
		// The shell stops at a syntax error too.
		{"shell parse error", guardtest.WorkflowPath, "jobs:\n  a:\n    steps:\n      - run: |\n          echo ok\n          if true; then\n", 6, "could not parse the run: script", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, ws := guard.ScanFile(tt.path, []byte(tt.src), guard.Config{})
			if len(fs) != 0 {
				t.Errorf("findings:%s", guardtest.Describe(fs))
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
