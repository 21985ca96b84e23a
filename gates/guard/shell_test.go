package guard

import (
	"testing"
)

func TestShellDirect(t *testing.T) {
	runScanCases(t, []scanCase{
		{name: "shutdown", src: "sudo shutdown -h now\n",
			want: []want{{1, "sudo", "host-shutdown", "sudo shutdown -h now", "sudo → shutdown"}}},
		{name: "shutdown -r is a reboot", src: "shutdown -r +1\n",
			want: []want{{1, "shutdown", "host-reboot", "shutdown -r +1", ""}}},
		{name: "absolute path", src: "/sbin/poweroff\n",
			want: []want{{1, "/sbin", "host-shutdown", "/sbin/poweroff", ""}}},
		{name: "systemctl verbs", src: "systemctl poweroff\nsystemctl --no-block reboot\nsystemctl hibernate\nsystemctl isolate halt.target\n",
			want: []want{{1, "systemctl", "host-shutdown", "systemctl poweroff", ""}, {2, "systemctl", "host-reboot", "systemctl --no-block reboot", ""},
				{3, "systemctl", "host-suspend", "systemctl hibernate", ""}, {4, "systemctl", "host-shutdown", "systemctl isolate halt.target", ""}}},
		{name: "init levels", src: "init 0\ntelinit 6\n",
			want: []want{{1, "init", "host-shutdown", "init 0", ""}, {2, "telinit", "host-reboot", "telinit 6", ""}}},
		{name: "nvidia-smi", src: "nvidia-smi -i 0 -r\nnvidia-smi --persistence-mode=0\nnvidia-smi -pm 0\nnvidia-smi -lgc 1410,1410\nnvidia-smi --power-limit=300\nnvidia-smi --gpu-reset\n",
			want: []want{{1, "nvidia-smi", "gpu-reset", "nvidia-smi -i 0 -r", ""}, {2, "nvidia-smi", "gpu-persistence-off", "nvidia-smi --persistence-mode=0", ""},
				{3, "nvidia-smi", "gpu-persistence-off", "nvidia-smi -pm 0", ""}, {4, "nvidia-smi", "gpu-clocks", "nvidia-smi -lgc 1410,1410", ""},
				{5, "nvidia-smi", "gpu-clocks", "nvidia-smi --power-limit=300", ""}, {6, "nvidia-smi", "gpu-reset", "nvidia-smi --gpu-reset", ""}}},
		{name: "driver unload", src: "rmmod nvidia_uvm\nmodprobe -r nvidia_drm nvidia\n",
			want: []want{{1, "rmmod", "gpu-driver-unload", "rmmod nvidia_uvm", ""}, {2, "modprobe", "gpu-driver-unload", "modprobe -r nvidia_drm nvidia", ""}}},
		{name: "clouds", src: "gcloud --project p compute instances suspend vm\ngcloud compute instances delete vm --quiet\ngcloud beta compute instances reset vm\n" +
			"aws --region us-east-1 ec2 stop-instances --instance-ids i-1 --hibernate\naws ec2 terminate-instances --instance-ids i-1\n" +
			"az vm deallocate -g rg -n vm\naz vm delete --ids x --yes\naz vm restart -g rg -n vm\n" +
			"oci compute instance action --instance-id ocid --action SOFTSTOP\noci compute instance action --action=reset --instance-id x\noci compute instance terminate --instance-id x\n" +
			"runpodctl stop pod abc\nvastai destroy instance 42\ncurl -X POST -u $KEY: https://cloud.lambdalabs.com/api/v1/instance-operations/terminate -d @ids.json\n" +
			"paperspace machines stop --machineId m\npspace machine delete m\nkubectl --context prod delete nodes gpu-1\nkubectl delete node/gpu-1\nkubectl drain gpu-1 --ignore-daemonsets\n" +
			"terraform -chdir=infra destroy -auto-approve\ntofu apply -destroy\n",
			want: []want{
				{1, "gcloud", "gcp-instance-stop", "gcloud --project p compute instances suspend vm", ""},
				{2, "gcloud", "gcp-instance-delete", "gcloud compute instances delete vm --quiet", ""},
				{3, "gcloud", "gcp-instance-reset", "gcloud beta compute instances reset vm", ""},
				{4, "aws", "aws-ec2-stop", "aws --region us-east-1 ec2 stop-instances --instance-ids i-1 --hibernate", ""},
				{5, "aws", "aws-ec2-terminate", "aws ec2 terminate-instances --instance-ids i-1", ""},
				{6, "az", "azure-vm-stop", "az vm deallocate -g rg -n vm", ""},
				{7, "az", "azure-vm-delete", "az vm delete --ids x --yes", ""},
				{8, "az", "azure-vm-restart", "az vm restart -g rg -n vm", ""},
				{9, "oci", "oci-instance-stop", "oci compute instance action --instance-id ocid --action SOFTSTOP", ""},
				{10, "oci", "oci-instance-stop", "oci compute instance action --action=reset --instance-id x", ""},
				{11, "oci", "oci-instance-terminate", "oci compute instance terminate --instance-id x", ""},
				{12, "runpodctl", "runpod-pod-stop", "runpodctl stop pod abc", ""},
				{13, "vastai", "vastai-instance-stop", "vastai destroy instance 42", ""},
				{14, "curl", "lambda-instance-terminate", "curl -X POST -u $KEY: https://cloud.lambdalabs.com/api/v1/instance-operations/terminate -d @ids.json", ""},
				{15, "paperspace", "paperspace-machine-stop", "paperspace machines stop --machineId m", ""},
				{16, "pspace", "paperspace-machine-stop", "pspace machine delete m", ""},
				{17, "kubectl", "k8s-node-delete", "kubectl --context prod delete nodes gpu-1", ""},
				{18, "kubectl", "k8s-node-delete", "kubectl delete node/gpu-1", ""},
				{19, "kubectl", "k8s-node-drain", "kubectl drain gpu-1 --ignore-daemonsets", ""},
				{20, "terraform", "terraform-destroy", "terraform -chdir=infra destroy -auto-approve", ""},
				{21, "tofu", "terraform-destroy", "tofu apply -destroy", ""},
			}},
		{name: "runner", src: "./svc.sh stop\nsudo ./svc.sh uninstall\n./config.sh remove --token T\nsudo systemctl disable --now actions.runner.org-repo.gpu.service\nbash svc.sh stop\n",
			want: []want{{1, "./svc.sh", "runner-stop", "./svc.sh stop", ""}, {2, "sudo", "runner-stop", "sudo ./svc.sh uninstall", ""},
				{3, "./config.sh", "runner-stop", "./config.sh remove --token T", ""},
				{4, "sudo", "runner-stop", "sudo systemctl disable --now actions.runner.org-repo.gpu.service", ""},
				{5, "bash", "runner-stop", "bash svc.sh stop", "bash → svc.sh"}}},
		{name: "sysrq", src: "echo b > /proc/sysrq-trigger\necho o | sudo tee -a /proc/sysrq-trigger >/dev/null\ndd of=/proc/sysrq-trigger <<< c\n",
			want: []want{{1, "echo", "host-sysrq", "echo b > /proc/sysrq-trigger", ""},
				{2, "sudo", "host-sysrq", "echo o | sudo tee -a /proc/sysrq-trigger >/dev/null", "sudo → tee /proc/sysrq-trigger"},
				{3, "dd", "host-sysrq", "dd of=/proc/sysrq-trigger <<< c", ""}}},
		{name: "in compound commands", src: "if [ -f done ]; then\n  sudo reboot\nfi\nfor i in 1; do nvidia-smi -r; done\ncheck && shutdown now || true\n( halt )\n",
			want: []want{{2, "sudo", "host-reboot", "sudo reboot", ""}, {4, "nvidia-smi", "gpu-reset", "nvidia-smi -r", ""},
				{5, "shutdown", "host-shutdown", "shutdown now", ""}, {6, "halt", "host-shutdown", "halt", ""}}},
		{name: "continued line", src: "sudo \\\n  shutdown \\\n  -h now\n",
			want: []want{{1, "sudo", "host-shutdown", "sudo \\ shutdown \\ -h now", ""}}},
		{name: "command substitution runs", src: "out=\"$(sudo reboot)\"\necho `poweroff`\n",
			want: []want{{1, "sudo", "host-reboot", "out=\"$(sudo reboot)\"", ""}, {2, "poweroff", "host-shutdown", "echo `poweroff`", ""}}},
		{name: "time keyword", src: "time sudo reboot\n",
			want: []want{{1, "sudo", "host-reboot", "time sudo reboot", ""}}},
		{name: "quoted program", src: "'sudo' \"reboot\"\n",
			want: []want{{1, "'sudo'", "host-reboot", "'sudo' \"reboot\"", ""}}},
		{name: "CRLF", src: "echo a\r\nsudo reboot\r\n",
			want: []want{{2, "sudo", "host-reboot", "sudo reboot", ""}}},
	})
}

func TestShellWrappers(t *testing.T) {
	runScanCases(t, []scanCase{
		{name: "sudo options", src: "sudo -u root -E -H --preserve-env=PATH reboot\n",
			want: []want{{1, "sudo", "host-reboot", "sudo -u root -E -H --preserve-env=PATH reboot", "sudo → reboot"}}},
		{name: "sudo assignments", src: "sudo -n FOO=1 nvidia-smi -r\n",
			want: []want{{1, "sudo", "gpu-reset", "sudo -n FOO=1 nvidia-smi -r", ""}}},
		{name: "doas", src: "doas -u root poweroff\n",
			want: []want{{1, "doas", "host-shutdown", "doas -u root poweroff", "doas → poweroff"}}},
		{name: "env", src: "env -i -u HOME PATH=/bin GCE=1 gcloud compute instances stop vm\n",
			want: []want{{1, "env", "gcp-instance-stop", "env -i -u HOME PATH=/bin GCE=1 gcloud compute instances stop vm", "env → gcloud"}}},
		{name: "env -S", src: "env -S 'nvidia-smi -r'\n",
			want: []want{{1, "env", "gpu-reset", "env -S 'nvidia-smi -r'", ""}}},
		{name: "nohup and background", src: "nohup sudo halt &\n",
			want: []want{{1, "nohup", "host-shutdown", "nohup sudo halt", "nohup → sudo → halt"}}},
		{name: "timeout", src: "timeout -k 5 -s TERM 30s sudo systemctl reboot\n",
			want: []want{{1, "timeout", "host-reboot", "timeout -k 5 -s TERM 30s sudo systemctl reboot", "timeout → sudo → systemctl"}}},
		{name: "xargs", src: "echo gpu-1 | xargs -r -n1 gcloud compute instances stop --zone z\n",
			want: []want{{1, "xargs", "gcp-instance-stop", "echo gpu-1 | xargs -r -n1 gcloud compute instances stop --zone z", "xargs → gcloud"}}},
		{name: "xargs sh -c", src: "xargs -I{} sh -c 'sudo reboot {}'\n",
			want: []want{{1, "sudo reboot", "host-reboot", "xargs -I{} sh -c 'sudo reboot {}'", "xargs → sh -c → sudo → reboot"}}},
		{name: "exec command builtin", src: "exec sudo poweroff\ncommand nvidia-smi -r\n",
			want: []want{{1, "exec", "host-shutdown", "exec sudo poweroff", ""}, {2, "command", "gpu-reset", "command nvidia-smi -r", ""}}},
		{name: "nice ionice stdbuf time setsid", src: "nice -n 10 ionice -c 3 stdbuf -oL time -p setsid -f sudo nvidia-smi -rgc\n",
			want: []want{{1, "nice", "gpu-clocks", "nice -n 10 ionice -c 3 stdbuf -oL time -p setsid -f sudo nvidia-smi -rgc",
				"nice → ionice → stdbuf → time → setsid → sudo → nvidia-smi"}}},
		{name: "su -c", src: "su -c 'systemctl poweroff' root\nsu - root -c \"reboot\"\n",
			want: []want{{1, "systemctl", "host-shutdown", "su -c 'systemctl poweroff' root", "su -c → systemctl"},
				{2, "reboot", "host-reboot", "su - root -c \"reboot\"", ""}}},
		{name: "runuser", src: "runuser -u root -- reboot\n",
			want: []want{{1, "runuser", "host-reboot", "runuser -u root -- reboot", ""}}},
		{name: "bash -c", src: "bash -c 'echo hi; sudo reboot'\nsh -ec \"sudo poweroff\"\nzsh -c 'halt'\n/bin/bash -lc \"nvidia-smi -r\"\n",
			want: []want{{1, "sudo", "host-reboot", "bash -c 'echo hi; sudo reboot'", "bash -c → sudo → reboot"},
				{2, "sudo", "host-shutdown", "sh -ec \"sudo poweroff\"", ""}, {3, "halt", "host-shutdown", "zsh -c 'halt'", ""},
				{4, "nvidia-smi", "gpu-reset", "/bin/bash -lc \"nvidia-smi -r\"", ""}}},
		{name: "bash -c arguments", src: "bash -c '\"$1\" -r' _ nvidia-smi\n",
			want: []want{{1, "\"$1\"", "gpu-reset", "bash -c '\"$1\" -r' _ nvidia-smi", ""}}},
		{name: "sudo bash -c with escapes", src: "sudo bash -c \"echo \\\"x\\\" && nvidia-smi -pm 0\"\n",
			want: []want{{1, "nvidia-smi", "gpu-persistence-off", "sudo bash -c \"echo \\\"x\\\" && nvidia-smi -pm 0\"", "sudo → bash -c → nvidia-smi"}}},
		{name: "eval", src: "eval \"sudo shutdown -r now\"\neval sudo halt\n",
			want: []want{{1, "sudo", "host-reboot", "eval \"sudo shutdown -r now\"", "eval → sudo → shutdown"}, {2, "sudo", "host-shutdown", "eval sudo halt", ""}}},
		{name: "ssh", src: "ssh -i ~/.ssh/k -p 2222 -o StrictHostKeyChecking=no ubuntu@gpu 'sudo shutdown -h now'\nssh -t host sudo reboot\n",
			want: []want{{1, "sudo", "host-shutdown", "ssh -i ~/.ssh/k -p 2222 -o StrictHostKeyChecking=no ubuntu@gpu 'sudo shutdown -h now'", "ssh → sudo → shutdown"},
				{2, "sudo", "host-reboot", "ssh -t host sudo reboot", "ssh → sudo → reboot"}}},
		{name: "ssh nested quotes", src: "ssh gpu \"bash -lc 'sudo nvidia-smi -r'\"\n",
			want: []want{{1, "sudo", "gpu-reset", "ssh gpu \"bash -lc 'sudo nvidia-smi -r'\"", "ssh → bash -c → sudo → nvidia-smi"}}},
		{name: "gcloud compute ssh", src: "gcloud compute ssh gpu-1 --zone us-central1-a --command 'sudo reboot'\n" +
			"gcloud compute ssh gpu-1 --command=\"sudo nvidia-smi -r\"\ngcloud compute ssh gpu-1 -- sudo poweroff\n" +
			"gcloud compute tpus tpu-vm ssh t --command 'sudo halt'\n",
			want: []want{{1, "sudo", "host-reboot", "gcloud compute ssh gpu-1 --zone us-central1-a --command 'sudo reboot'", "gcloud compute ssh --command → sudo → reboot"},
				{2, "sudo", "gpu-reset", "gcloud compute ssh gpu-1 --command=\"sudo nvidia-smi -r\"", ""},
				{3, "sudo", "host-shutdown", "gcloud compute ssh gpu-1 -- sudo poweroff", ""},
				{4, "sudo", "host-shutdown", "gcloud compute tpus tpu-vm ssh t --command 'sudo halt'", ""}}},
		{name: "trap", src: "trap 'sudo poweroff' EXIT\n",
			want: []want{{1, "sudo", "host-shutdown", "trap 'sudo poweroff' EXIT", "trap → sudo → poweroff"}}},
		{name: "watch flock chroot nsenter busybox", src: "watch -n 60 'nvidia-smi -rgc'\nflock /tmp/l sudo reboot\nflock -n /tmp/l -c 'halt'\nchroot /host reboot\nnsenter -t 1 -m -u -i -n -p -- reboot\nbusybox poweroff\n",
			want: []want{{1, "nvidia-smi", "gpu-clocks", "watch -n 60 'nvidia-smi -rgc'", ""}, {2, "flock", "host-reboot", "flock /tmp/l sudo reboot", ""},
				{3, "halt", "host-shutdown", "flock -n /tmp/l -c 'halt'", ""}, {4, "chroot", "host-reboot", "chroot /host reboot", ""},
				{5, "nsenter", "host-reboot", "nsenter -t 1 -m -u -i -n -p -- reboot", ""}, {6, "busybox", "host-shutdown", "busybox poweroff", ""}}},
		{name: "python -c", src: "python3 -c 'import os; os.system(\"sudo reboot\")'\n",
			want: []want{{1, "sudo", "host-reboot", "python3 -c 'import os; os.system(\"sudo reboot\")'", "python3 -c → os.system → sudo → reboot"}}},
	})
}

func TestShellIndirection(t *testing.T) {
	runScanCases(t, []scanCase{
		{name: "here-document to bash", src: "bash <<EOF\necho start\nsudo reboot\nEOF\n",
			want: []want{{3, "sudo", "host-reboot", "bash <<EOF … sudo reboot", "bash <<EOF → sudo → reboot"}}},
		{name: "here-document to ssh bash -s", src: "ssh -T host bash -s <<'EOF'\n  nvidia-smi -r\nEOF\n",
			want: []want{{2, "nvidia-smi", "gpu-reset", "ssh -T host bash -s <<'EOF' … nvidia-smi -r", "ssh → bash <<EOF → nvidia-smi"}}},
		{name: "here-document to sudo sh", src: "sudo sh <<EOF\npoweroff\nEOF\n",
			want: []want{{2, "poweroff", "host-shutdown", "sudo sh <<EOF … poweroff", "sudo → sh <<EOF → poweroff"}}},
		{name: "here-document to ssh", src: "ssh host <<-EOF\n\tsudo reboot\n\tEOF\n",
			want: []want{{2, "sudo", "host-reboot", "ssh host <<-EOF … sudo reboot", ""}}},
		{name: "here-string", src: "bash <<< 'sudo reboot'\n",
			want: []want{{1, "sudo", "host-reboot", "bash <<< 'sudo reboot'", ""}}},
		{name: "pipe into a shell", src: "echo \"sudo reboot\" | bash\nprintf 'nvidia-smi -r\\n' | sudo sh\necho 'shutdown -h now' | at now + 1 minute\n",
			want: []want{{1, "sudo", "host-reboot", "echo \"sudo reboot\" | bash", "echo | bash → sudo → reboot"},
				{2, "nvidia-smi", "gpu-reset", "printf 'nvidia-smi -r\\n' | sudo sh", ""},
				{3, "shutdown", "host-shutdown", "echo 'shutdown -h now' | at now + 1 minute", ""}}},
		{name: "function body never called", src: "stop_vm() {\n  gcloud compute instances stop \"$1\" --zone z\n}\nstop_vm gpu-1\n",
			want: []want{{2, "gcloud", "gcp-instance-stop", "gcloud compute instances stop \"$1\" --zone z", ""}}},
		{name: "function forwarding $@", src: "as_root() { sudo \"$@\"; }\nas_root reboot\n",
			want: []want{{2, "as_root", "host-reboot", "as_root reboot", "function as_root → sudo → reboot"}}},
		{name: "function forwarding $1", src: "function gpu { nvidia-smi \"$1\"; }\ngpu -r\ngpu -q\n",
			want: []want{{2, "gpu", "gpu-reset", "gpu -r", "function gpu → nvidia-smi"}}},
		{name: "function calling function", src: "a() { b \"$@\"; }\nb() { sudo \"$@\" now; }\na shutdown -h\n",
			want: []want{{3, "a", "host-shutdown", "a shutdown -h", "function a → function b → sudo → shutdown"}}},
		{name: "alias expanded", src: "alias gce='gcloud compute instances'\ngce stop vm\n",
			want: []want{{2, "gce", "gcp-instance-stop", "gce stop vm", "alias gce → gcloud"}}},
		{name: "alias dangerous on its own", src: "alias off='sudo poweroff'\noff\n",
			want: []want{{1, "sudo", "host-shutdown", "alias off='sudo poweroff'", "alias off → sudo → poweroff"}}},
		{name: "variable command", src: "CMD=\"sudo shutdown -h now\"\n$CMD\n",
			want: []want{{2, "$CMD", "host-shutdown", "$CMD", "$CMD → sudo → shutdown"}}},
		{name: "variable prefix", src: "STOP=\"gcloud compute instances stop\"\n$STOP vm-1\n",
			want: []want{{2, "$STOP", "gcp-instance-stop", "$STOP vm-1", "$STOP → gcloud"}}},
		{name: "variable set in two places", src: "if x; then SUDO=sudo; else SUDO=; fi\n$SUDO nvidia-smi -r\n",
			want: []want{{2, "$SUDO", "gpu-reset", "$SUDO nvidia-smi -r", ""}}},
		{name: "variable through variable", src: "GC=gcloud\nSTOP=\"$GC compute instances stop\"\n${STOP} vm\n",
			want: []want{{3, "${STOP}", "gcp-instance-stop", "${STOP} vm", ""}}},
		{name: "array", src: "cmd=(sudo nvidia-smi -r)\n\"${cmd[@]}\"\n",
			want: []want{{2, "\"${cmd[@]}\"", "gpu-reset", "\"${cmd[@]}\"", "$cmd → sudo → nvidia-smi"}}},
		{name: "default value", src: "${SHUTDOWN:-shutdown} -h now\n",
			want: []want{{1, "${SHUTDOWN", "host-shutdown", "${SHUTDOWN:-shutdown} -h now", ""}}},
		{name: "exported variable in a nested script", src: "export VM=gpu-1\nssh host \"gcloud compute instances delete $VM\"\n",
			want: []want{{2, "gcloud", "gcp-instance-delete", "ssh host \"gcloud compute instances delete $VM\"", ""}}},
	})
}

func TestShellSafe(t *testing.T) {
	runNone(t, "x.sh", []string{
		"# sudo shutdown -h now\n",
		"echo \"sudo shutdown -h now\"\n",
		"echo sudo reboot\n",
		"printf '%s\\n' \"nvidia-smi -r\"\n",
		"cat <<EOF > stop.sh\nsudo reboot\nEOF\n",
		"cat <<'EOF'\ngcloud compute instances stop vm\nEOF\n",
		"tee run.sh <<EOF\npoweroff\nEOF\n",
		"grep -q reboot /var/log/syslog\n",
		"last reboot | head\n",
		"man shutdown; which reboot; type poweroff\n",
		"gcloud compute instances stop --help\n",
		"gcloud help compute instances stop\n",
		"aws ec2 stop-instances help\n",
		"nvidia-smi -r -h\n",
		"shutdown --help\n",
		"gcloud compute instances list --filter stop\n",
		"gcloud compute instances describe vm\n",
		"gcloud compute instances start vm\n",
		"aws ec2 describe-instances\n",
		"aws ec2 stop-instances --dry-run --instance-ids i-1\n",
		"nvidia-smi -q\nnvidia-smi --query-gpu=clocks.sm,power.limit --format=csv\nnvidia-smi -L\nnvidia-smi -pm 1\nnvidia-smi -q -d PERFORMANCE\n",
		"terraform plan -destroy\n",
		"docker stop c\ndocker restart c\n",
		"systemctl stop nginx\nsystemctl restart docker\nsystemctl status reboot.target\n",
		"kubectl delete pod p\nkubectl get nodes\n",
		"shutdown -c\n",
		"command -v shutdown\n",
		"sudo -l reboot\n",
		"ssh host 'echo sudo reboot'\n",
		"reboot() { echo \"not really\"; }\nreboot\n",
		"CMD=\"sudo reboot\"\n\"$CMD\"\n",
		"$UNKNOWN_TOOL reboot\n",
		"echo reboot | grep reboot\n",
		"modprobe nvidia\nrmmod snd_hda\n",
		"systemctl stop actions.runner.foo.service --help\n",
		"echo b > /tmp/sysrq-trigger\ncat /proc/sysrq-trigger\n",
		"curl https://cloud.lambdalabs.com/api/v1/instances\n",
		"python3 -c 'print(\"sudo reboot\")'\n",
		"ssh host cat /var/log/reboot.log\n",
		"bash ./scripts/build.sh reboot\n",
	})
}

func TestShellWrappersSafe(t *testing.T) {
	runNone(t, "x.sh", []string{
		"sudo apt-get update\n", "sudo -v\n", "sudo -i\n", "doas ls\n", "env FOO=1 make\n", "env\n", "nohup ./bench &\n",
		"timeout 10 ./bench\n", "timeout 10s reboot-check\n", "find . -name '*.o' | xargs rm\n", "xargs\n", "exec ./run\n", "exec >log 2>&1\n",
		"command ls\n", "nice -n 5 make\n", "ionice -p 42\n", "stdbuf -oL ./bench\n", "time make -j\n", "setsid ./server\n",
		"su -c 'whoami'\n", "su - builder\n", "runuser -u builder -- make\n", "bash -c 'echo reboot'\n", "bash -c\n", "bash scripts/reboot-check.sh\n",
		"eval \"echo shutdown\"\n", "ssh host uptime\n", "ssh host 'echo reboot'\n", "ssh -o ProxyCommand='ssh -W %h:%p bastion' host uptime\n",
		"gcloud compute ssh vm --command 'nvidia-smi -q'\n", "gcloud compute ssh vm\n", "trap 'echo bye' EXIT\n", "trap - EXIT\n",
		"watch nvidia-smi\n", "flock /tmp/l make\n", "bash <<EOF\necho reboot\nEOF\n", "echo reboot | bash -c cat\n",
		"echo 'shutdown -h now' | tee plan.txt\n", "python3 -c 'print(\"reboot\")'\n", "python3 bench.py reboot\n",
		"chroot /srv/root ls\n", "busybox ls\n", "alias ll='ls -l'\nll\n", "f() { echo \"$@\"; }\nf sudo reboot\n",
	})
}

func TestEndLine(t *testing.T) {
	tests := []struct {
		path, src string
		line, end int
	}{
		{"x.sh", "sudo \\\n  shutdown \\\n  -h now\n", 1, 3},
		{"x.sh", "ssh host \\\n  'sudo reboot'\n", 2, 2},
		{"x.py", "import subprocess\nsubprocess.Popen(\n    [\"sudo\",\n     \"poweroff\"])\n", 2, 4},
		{"x.sh", "f() { sudo \"$@\"; }\nf \\\n  reboot\n", 2, 3},
	}
	for _, tt := range tests {
		fs, _ := ScanFile(tt.path, []byte(tt.src), Config{})
		if len(fs) != 1 || fs[0].Line != tt.line || fs[0].EndLine != tt.end {
			t.Errorf("%q: want lines %d-%d, got:%s", tt.src, tt.line, tt.end, describeFindings(fs))
		}
	}
}
