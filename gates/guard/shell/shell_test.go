package shell_test

import (
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/guard"
	"github.com/kernel-gate/kernel-gate/gates/guard/internal/guardtest"
)

func TestShellDirect(t *testing.T) {
	guardtest.Run(t, guard.ScanFile, []guardtest.Case{
		{Name: "shutdown", Src: "sudo shutdown -h now\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-shutdown", Cmd: "sudo shutdown -h now", Via: "sudo → shutdown"}}},
		{Name: "shutdown -r is a reboot", Src: "shutdown -r +1\n",
			Want: []guardtest.Want{{Line: 1, At: "shutdown", Rule: "host-reboot", Cmd: "shutdown -r +1"}}},
		{Name: "absolute path", Src: "/sbin/poweroff\n",
			Want: []guardtest.Want{{Line: 1, At: "/sbin", Rule: "host-shutdown", Cmd: "/sbin/poweroff"}}},
		{Name: "systemctl verbs", Src: "systemctl poweroff\nsystemctl --no-block reboot\nsystemctl hibernate\nsystemctl isolate halt.target\n",
			Want: []guardtest.Want{{Line: 1, At: "systemctl", Rule: "host-shutdown", Cmd: "systemctl poweroff"}, {Line: 2, At: "systemctl", Rule: "host-reboot", Cmd: "systemctl --no-block reboot"},
				{Line: 3, At: "systemctl", Rule: "host-suspend", Cmd: "systemctl hibernate"}, {Line: 4, At: "systemctl", Rule: "host-shutdown", Cmd: "systemctl isolate halt.target"}}},
		{Name: "init levels", Src: "init 0\ntelinit 6\n",
			Want: []guardtest.Want{{Line: 1, At: "init", Rule: "host-shutdown", Cmd: "init 0"}, {Line: 2, At: "telinit", Rule: "host-reboot", Cmd: "telinit 6"}}},
		{Name: "nvidia-smi", Src: "nvidia-smi -i 0 -r\nnvidia-smi --persistence-mode=0\nnvidia-smi -pm 0\nnvidia-smi -lgc 1410,1410\nnvidia-smi --power-limit=300\nnvidia-smi --gpu-reset\n",
			Want: []guardtest.Want{{Line: 1, At: "nvidia-smi", Rule: "gpu-reset", Cmd: "nvidia-smi -i 0 -r"}, {Line: 2, At: "nvidia-smi", Rule: "gpu-persistence-off", Cmd: "nvidia-smi --persistence-mode=0"},
				{Line: 3, At: "nvidia-smi", Rule: "gpu-persistence-off", Cmd: "nvidia-smi -pm 0"}, {Line: 4, At: "nvidia-smi", Rule: "gpu-clocks", Cmd: "nvidia-smi -lgc 1410,1410"},
				{Line: 5, At: "nvidia-smi", Rule: "gpu-clocks", Cmd: "nvidia-smi --power-limit=300"}, {Line: 6, At: "nvidia-smi", Rule: "gpu-reset", Cmd: "nvidia-smi --gpu-reset"}}},
		{Name: "driver unload", Src: "rmmod nvidia_uvm\nmodprobe -r nvidia_drm nvidia\n",
			Want: []guardtest.Want{{Line: 1, At: "rmmod", Rule: "gpu-driver-unload", Cmd: "rmmod nvidia_uvm"}, {Line: 2, At: "modprobe", Rule: "gpu-driver-unload", Cmd: "modprobe -r nvidia_drm nvidia"}}},
		{Name: "clouds", Src: "gcloud --project p compute instances suspend vm\ngcloud compute instances delete vm --quiet\ngcloud beta compute instances reset vm\n" +
			"aws --region us-east-1 ec2 stop-instances --instance-ids i-1 --hibernate\naws ec2 terminate-instances --instance-ids i-1\n" +
			"az vm deallocate -g rg -n vm\naz vm delete --ids x --yes\naz vm restart -g rg -n vm\n" +
			"oci compute instance action --instance-id ocid --action SOFTSTOP\noci compute instance action --action=reset --instance-id x\noci compute instance terminate --instance-id x\n" +
			"runpodctl stop pod abc\nvastai destroy instance 42\ncurl -X POST -u $KEY: https://cloud.lambdalabs.com/api/v1/instance-operations/terminate -d @ids.json\n" +
			"paperspace machines stop --machineId m\npspace machine delete m\nkubectl --context prod delete nodes gpu-1\nkubectl delete node/gpu-1\nkubectl drain gpu-1 --ignore-daemonsets\n" +
			"terraform -chdir=infra destroy -auto-approve\ntofu apply -destroy\n",
			Want: []guardtest.Want{
				{Line: 1, At: "gcloud", Rule: "gcp-instance-stop", Cmd: "gcloud --project p compute instances suspend vm"},
				{Line: 2, At: "gcloud", Rule: "gcp-instance-delete", Cmd: "gcloud compute instances delete vm --quiet"},
				{Line: 3, At: "gcloud", Rule: "gcp-instance-reset", Cmd: "gcloud beta compute instances reset vm"},
				{Line: 4, At: "aws", Rule: "aws-ec2-stop", Cmd: "aws --region us-east-1 ec2 stop-instances --instance-ids i-1 --hibernate"},
				{Line: 5, At: "aws", Rule: "aws-ec2-terminate", Cmd: "aws ec2 terminate-instances --instance-ids i-1"},
				{Line: 6, At: "az", Rule: "azure-vm-stop", Cmd: "az vm deallocate -g rg -n vm"},
				{Line: 7, At: "az", Rule: "azure-vm-delete", Cmd: "az vm delete --ids x --yes"},
				{Line: 8, At: "az", Rule: "azure-vm-restart", Cmd: "az vm restart -g rg -n vm"},
				{Line: 9, At: "oci", Rule: "oci-instance-stop", Cmd: "oci compute instance action --instance-id ocid --action SOFTSTOP"},
				{Line: 10, At: "oci", Rule: "oci-instance-stop", Cmd: "oci compute instance action --action=reset --instance-id x"},
				{Line: 11, At: "oci", Rule: "oci-instance-terminate", Cmd: "oci compute instance terminate --instance-id x"},
				{Line: 12, At: "runpodctl", Rule: "runpod-pod-stop", Cmd: "runpodctl stop pod abc"},
				{Line: 13, At: "vastai", Rule: "vastai-instance-stop", Cmd: "vastai destroy instance 42"},
				{Line: 14, At: "curl", Rule: "lambda-instance-terminate", Cmd: "curl -X POST -u $KEY: https://cloud.lambdalabs.com/api/v1/instance-operations/terminate -d @ids.json"},
				{Line: 15, At: "paperspace", Rule: "paperspace-machine-stop", Cmd: "paperspace machines stop --machineId m"},
				{Line: 16, At: "pspace", Rule: "paperspace-machine-stop", Cmd: "pspace machine delete m"},
				{Line: 17, At: "kubectl", Rule: "k8s-node-delete", Cmd: "kubectl --context prod delete nodes gpu-1"},
				{Line: 18, At: "kubectl", Rule: "k8s-node-delete", Cmd: "kubectl delete node/gpu-1"},
				{Line: 19, At: "kubectl", Rule: "k8s-node-drain", Cmd: "kubectl drain gpu-1 --ignore-daemonsets"},
				{Line: 20, At: "terraform", Rule: "terraform-destroy", Cmd: "terraform -chdir=infra destroy -auto-approve"},
				{Line: 21, At: "tofu", Rule: "terraform-destroy", Cmd: "tofu apply -destroy"},
			}},
		{Name: "runner", Src: "./svc.sh stop\nsudo ./svc.sh uninstall\n./config.sh remove --token T\nsudo systemctl disable --now actions.runner.org-repo.gpu.service\nbash svc.sh stop\n",
			Want: []guardtest.Want{{Line: 1, At: "./svc.sh", Rule: "runner-stop", Cmd: "./svc.sh stop"}, {Line: 2, At: "sudo", Rule: "runner-stop", Cmd: "sudo ./svc.sh uninstall"},
				{Line: 3, At: "./config.sh", Rule: "runner-stop", Cmd: "./config.sh remove --token T"},
				{Line: 4, At: "sudo", Rule: "runner-stop", Cmd: "sudo systemctl disable --now actions.runner.org-repo.gpu.service"},
				{Line: 5, At: "bash", Rule: "runner-stop", Cmd: "bash svc.sh stop", Via: "bash → svc.sh"}}},
		{Name: "sysrq", Src: "echo b > /proc/sysrq-trigger\necho o | sudo tee -a /proc/sysrq-trigger >/dev/null\ndd of=/proc/sysrq-trigger <<< c\n",
			Want: []guardtest.Want{{Line: 1, At: "echo", Rule: "host-sysrq", Cmd: "echo b > /proc/sysrq-trigger"},
				{Line: 2, At: "sudo", Rule: "host-sysrq", Cmd: "echo o | sudo tee -a /proc/sysrq-trigger >/dev/null", Via: "sudo → tee /proc/sysrq-trigger"},
				{Line: 3, At: "dd", Rule: "host-sysrq", Cmd: "dd of=/proc/sysrq-trigger <<< c"}}},
		{Name: "in compound commands", Src: "if [ -f done ]; then\n  sudo reboot\nfi\nfor i in 1; do nvidia-smi -r; done\ncheck && shutdown now || true\n( halt )\n",
			Want: []guardtest.Want{{Line: 2, At: "sudo", Rule: "host-reboot", Cmd: "sudo reboot"}, {Line: 4, At: "nvidia-smi", Rule: "gpu-reset", Cmd: "nvidia-smi -r"},
				{Line: 5, At: "shutdown", Rule: "host-shutdown", Cmd: "shutdown now"}, {Line: 6, At: "halt", Rule: "host-shutdown", Cmd: "halt"}}},
		{Name: "continued line", Src: "sudo \\\n  shutdown \\\n  -h now\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-shutdown", Cmd: "sudo \\ shutdown \\ -h now"}}},
		{Name: "command substitution runs", Src: "out=\"$(sudo reboot)\"\necho `poweroff`\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-reboot", Cmd: "out=\"$(sudo reboot)\""}, {Line: 2, At: "poweroff", Rule: "host-shutdown", Cmd: "echo `poweroff`"}}},
		{Name: "time keyword", Src: "time sudo reboot\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-reboot", Cmd: "time sudo reboot"}}},
		{Name: "quoted program", Src: "'sudo' \"reboot\"\n",
			Want: []guardtest.Want{{Line: 1, At: "'sudo'", Rule: "host-reboot", Cmd: "'sudo' \"reboot\""}}},
		{Name: "CRLF", Src: "echo a\r\nsudo reboot\r\n",
			Want: []guardtest.Want{{Line: 2, At: "sudo", Rule: "host-reboot", Cmd: "sudo reboot"}}},
	})
}

func TestShellWrappers(t *testing.T) {
	guardtest.Run(t, guard.ScanFile, []guardtest.Case{
		{Name: "sudo options", Src: "sudo -u root -E -H --preserve-env=PATH reboot\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-reboot", Cmd: "sudo -u root -E -H --preserve-env=PATH reboot", Via: "sudo → reboot"}}},
		{Name: "sudo assignments", Src: "sudo -n FOO=1 nvidia-smi -r\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "gpu-reset", Cmd: "sudo -n FOO=1 nvidia-smi -r"}}},
		{Name: "doas", Src: "doas -u root poweroff\n",
			Want: []guardtest.Want{{Line: 1, At: "doas", Rule: "host-shutdown", Cmd: "doas -u root poweroff", Via: "doas → poweroff"}}},
		{Name: "env", Src: "env -i -u HOME PATH=/bin GCE=1 gcloud compute instances stop vm\n",
			Want: []guardtest.Want{{Line: 1, At: "env", Rule: "gcp-instance-stop", Cmd: "env -i -u HOME PATH=/bin GCE=1 gcloud compute instances stop vm", Via: "env → gcloud"}}},
		{Name: "env -S", Src: "env -S 'nvidia-smi -r'\n",
			Want: []guardtest.Want{{Line: 1, At: "env", Rule: "gpu-reset", Cmd: "env -S 'nvidia-smi -r'"}}},
		{Name: "nohup and background", Src: "nohup sudo halt &\n",
			Want: []guardtest.Want{{Line: 1, At: "nohup", Rule: "host-shutdown", Cmd: "nohup sudo halt", Via: "nohup → sudo → halt"}}},
		{Name: "timeout", Src: "timeout -k 5 -s TERM 30s sudo systemctl reboot\n",
			Want: []guardtest.Want{{Line: 1, At: "timeout", Rule: "host-reboot", Cmd: "timeout -k 5 -s TERM 30s sudo systemctl reboot", Via: "timeout → sudo → systemctl"}}},
		{Name: "xargs", Src: "echo gpu-1 | xargs -r -n1 gcloud compute instances stop --zone z\n",
			Want: []guardtest.Want{{Line: 1, At: "xargs", Rule: "gcp-instance-stop", Cmd: "echo gpu-1 | xargs -r -n1 gcloud compute instances stop --zone z", Via: "xargs → gcloud"}}},
		{Name: "xargs sh -c", Src: "xargs -I{} sh -c 'sudo reboot {}'\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo reboot", Rule: "host-reboot", Cmd: "xargs -I{} sh -c 'sudo reboot {}'", Via: "xargs → sh -c → sudo → reboot"}}},
		{Name: "exec command builtin", Src: "exec sudo poweroff\ncommand nvidia-smi -r\n",
			Want: []guardtest.Want{{Line: 1, At: "exec", Rule: "host-shutdown", Cmd: "exec sudo poweroff"}, {Line: 2, At: "command", Rule: "gpu-reset", Cmd: "command nvidia-smi -r"}}},
		{Name: "nice ionice stdbuf time setsid", Src: "nice -n 10 ionice -c 3 stdbuf -oL time -p setsid -f sudo nvidia-smi -rgc\n",
			Want: []guardtest.Want{{Line: 1, At: "nice", Rule: "gpu-clocks", Cmd: "nice -n 10 ionice -c 3 stdbuf -oL time -p setsid -f sudo nvidia-smi -rgc",
				Via: "nice → ionice → stdbuf → time → setsid → sudo → nvidia-smi"}}},
		{Name: "su -c", Src: "su -c 'systemctl poweroff' root\nsu - root -c \"reboot\"\n",
			Want: []guardtest.Want{{Line: 1, At: "systemctl", Rule: "host-shutdown", Cmd: "su -c 'systemctl poweroff' root", Via: "su -c → systemctl"},
				{Line: 2, At: "reboot", Rule: "host-reboot", Cmd: "su - root -c \"reboot\""}}},
		{Name: "runuser", Src: "runuser -u root -- reboot\n",
			Want: []guardtest.Want{{Line: 1, At: "runuser", Rule: "host-reboot", Cmd: "runuser -u root -- reboot"}}},
		{Name: "bash -c", Src: "bash -c 'echo hi; sudo reboot'\nsh -ec \"sudo poweroff\"\nzsh -c 'halt'\n/bin/bash -lc \"nvidia-smi -r\"\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-reboot", Cmd: "bash -c 'echo hi; sudo reboot'", Via: "bash -c → sudo → reboot"},
				{Line: 2, At: "sudo", Rule: "host-shutdown", Cmd: "sh -ec \"sudo poweroff\""}, {Line: 3, At: "halt", Rule: "host-shutdown", Cmd: "zsh -c 'halt'"},
				{Line: 4, At: "nvidia-smi", Rule: "gpu-reset", Cmd: "/bin/bash -lc \"nvidia-smi -r\""}}},
		{Name: "bash -c arguments", Src: "bash -c '\"$1\" -r' _ nvidia-smi\n",
			Want: []guardtest.Want{{Line: 1, At: "\"$1\"", Rule: "gpu-reset", Cmd: "bash -c '\"$1\" -r' _ nvidia-smi"}}},
		{Name: "sudo bash -c with escapes", Src: "sudo bash -c \"echo \\\"x\\\" && nvidia-smi -pm 0\"\n",
			Want: []guardtest.Want{{Line: 1, At: "nvidia-smi", Rule: "gpu-persistence-off", Cmd: "sudo bash -c \"echo \\\"x\\\" && nvidia-smi -pm 0\"", Via: "sudo → bash -c → nvidia-smi"}}},
		{Name: "eval", Src: "eval \"sudo shutdown -r now\"\neval sudo halt\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-reboot", Cmd: "eval \"sudo shutdown -r now\"", Via: "eval → sudo → shutdown"}, {Line: 2, At: "sudo", Rule: "host-shutdown", Cmd: "eval sudo halt"}}},
		{Name: "ssh", Src: "ssh -i ~/.ssh/k -p 2222 -o StrictHostKeyChecking=no ubuntu@gpu 'sudo shutdown -h now'\nssh -t host sudo reboot\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-shutdown", Cmd: "ssh -i ~/.ssh/k -p 2222 -o StrictHostKeyChecking=no ubuntu@gpu 'sudo shutdown -h now'", Via: "ssh → sudo → shutdown"},
				{Line: 2, At: "sudo", Rule: "host-reboot", Cmd: "ssh -t host sudo reboot", Via: "ssh → sudo → reboot"}}},
		{Name: "ssh nested quotes", Src: "ssh gpu \"bash -lc 'sudo nvidia-smi -r'\"\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "gpu-reset", Cmd: "ssh gpu \"bash -lc 'sudo nvidia-smi -r'\"", Via: "ssh → bash -c → sudo → nvidia-smi"}}},
		{Name: "gcloud compute ssh", Src: "gcloud compute ssh gpu-1 --zone us-central1-a --command 'sudo reboot'\n" +
			"gcloud compute ssh gpu-1 --command=\"sudo nvidia-smi -r\"\ngcloud compute ssh gpu-1 -- sudo poweroff\n" +
			"gcloud compute tpus tpu-vm ssh t --command 'sudo halt'\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-reboot", Cmd: "gcloud compute ssh gpu-1 --zone us-central1-a --command 'sudo reboot'", Via: "gcloud compute ssh --command → sudo → reboot"},
				{Line: 2, At: "sudo", Rule: "gpu-reset", Cmd: "gcloud compute ssh gpu-1 --command=\"sudo nvidia-smi -r\""},
				{Line: 3, At: "sudo", Rule: "host-shutdown", Cmd: "gcloud compute ssh gpu-1 -- sudo poweroff"},
				{Line: 4, At: "sudo", Rule: "host-shutdown", Cmd: "gcloud compute tpus tpu-vm ssh t --command 'sudo halt'"}}},
		{Name: "trap", Src: "trap 'sudo poweroff' EXIT\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-shutdown", Cmd: "trap 'sudo poweroff' EXIT", Via: "trap → sudo → poweroff"}}},
		{Name: "watch flock chroot nsenter busybox", Src: "watch -n 60 'nvidia-smi -rgc'\nflock /tmp/l sudo reboot\nflock -n /tmp/l -c 'halt'\nchroot /host reboot\nnsenter -t 1 -m -u -i -n -p -- reboot\nbusybox poweroff\n",
			Want: []guardtest.Want{{Line: 1, At: "nvidia-smi", Rule: "gpu-clocks", Cmd: "watch -n 60 'nvidia-smi -rgc'"}, {Line: 2, At: "flock", Rule: "host-reboot", Cmd: "flock /tmp/l sudo reboot"},
				{Line: 3, At: "halt", Rule: "host-shutdown", Cmd: "flock -n /tmp/l -c 'halt'"}, {Line: 4, At: "chroot", Rule: "host-reboot", Cmd: "chroot /host reboot"},
				{Line: 5, At: "nsenter", Rule: "host-reboot", Cmd: "nsenter -t 1 -m -u -i -n -p -- reboot"}, {Line: 6, At: "busybox", Rule: "host-shutdown", Cmd: "busybox poweroff"}}},
		{Name: "python -c", Src: "python3 -c 'import os; os.system(\"sudo reboot\")'\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-reboot", Cmd: "python3 -c 'import os; os.system(\"sudo reboot\")'", Via: "python3 -c → os.system → sudo → reboot"}}},
	})
}

func TestShellIndirection(t *testing.T) {
	guardtest.Run(t, guard.ScanFile, []guardtest.Case{
		{Name: "here-document to bash", Src: "bash <<EOF\necho start\nsudo reboot\nEOF\n",
			Want: []guardtest.Want{{Line: 3, At: "sudo", Rule: "host-reboot", Cmd: "bash <<EOF … sudo reboot", Via: "bash <<EOF → sudo → reboot"}}},
		{Name: "here-document to ssh bash -s", Src: "ssh -T host bash -s <<'EOF'\n  nvidia-smi -r\nEOF\n",
			Want: []guardtest.Want{{Line: 2, At: "nvidia-smi", Rule: "gpu-reset", Cmd: "ssh -T host bash -s <<'EOF' … nvidia-smi -r", Via: "ssh → bash <<EOF → nvidia-smi"}}},
		{Name: "here-document to sudo sh", Src: "sudo sh <<EOF\npoweroff\nEOF\n",
			Want: []guardtest.Want{{Line: 2, At: "poweroff", Rule: "host-shutdown", Cmd: "sudo sh <<EOF … poweroff", Via: "sudo → sh <<EOF → poweroff"}}},
		{Name: "here-document to ssh", Src: "ssh host <<-EOF\n\tsudo reboot\n\tEOF\n",
			Want: []guardtest.Want{{Line: 2, At: "sudo", Rule: "host-reboot", Cmd: "ssh host <<-EOF … sudo reboot"}}},
		{Name: "here-string", Src: "bash <<< 'sudo reboot'\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-reboot", Cmd: "bash <<< 'sudo reboot'"}}},
		{Name: "pipe into a shell", Src: "echo \"sudo reboot\" | bash\nprintf 'nvidia-smi -r\\n' | sudo sh\necho 'shutdown -h now' | at now + 1 minute\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-reboot", Cmd: "echo \"sudo reboot\" | bash", Via: "echo | bash → sudo → reboot"},
				{Line: 2, At: "nvidia-smi", Rule: "gpu-reset", Cmd: "printf 'nvidia-smi -r\\n' | sudo sh"},
				{Line: 3, At: "shutdown", Rule: "host-shutdown", Cmd: "echo 'shutdown -h now' | at now + 1 minute"}}},
		{Name: "function body never called", Src: "stop_vm() {\n  gcloud compute instances stop \"$1\" --zone z\n}\nstop_vm gpu-1\n",
			Want: []guardtest.Want{{Line: 2, At: "gcloud", Rule: "gcp-instance-stop", Cmd: "gcloud compute instances stop \"$1\" --zone z"}}},
		{Name: "function forwarding $@", Src: "as_root() { sudo \"$@\"; }\nas_root reboot\n",
			Want: []guardtest.Want{{Line: 2, At: "as_root", Rule: "host-reboot", Cmd: "as_root reboot", Via: "function as_root → sudo → reboot"}}},
		{Name: "function forwarding $1", Src: "function gpu { nvidia-smi \"$1\"; }\ngpu -r\ngpu -q\n",
			Want: []guardtest.Want{{Line: 2, At: "gpu", Rule: "gpu-reset", Cmd: "gpu -r", Via: "function gpu → nvidia-smi"}}},
		{Name: "function calling function", Src: "a() { b \"$@\"; }\nb() { sudo \"$@\" now; }\na shutdown -h\n",
			Want: []guardtest.Want{{Line: 3, At: "a", Rule: "host-shutdown", Cmd: "a shutdown -h", Via: "function a → function b → sudo → shutdown"}}},
		{Name: "alias expanded", Src: "alias gce='gcloud compute instances'\ngce stop vm\n",
			Want: []guardtest.Want{{Line: 2, At: "gce", Rule: "gcp-instance-stop", Cmd: "gce stop vm", Via: "alias gce → gcloud"}}},
		{Name: "alias dangerous on its own", Src: "alias off='sudo poweroff'\noff\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-shutdown", Cmd: "alias off='sudo poweroff'", Via: "alias off → sudo → poweroff"}}},
		{Name: "variable command", Src: "CMD=\"sudo shutdown -h now\"\n$CMD\n",
			Want: []guardtest.Want{{Line: 2, At: "$CMD", Rule: "host-shutdown", Cmd: "$CMD", Via: "$CMD → sudo → shutdown"}}},
		{Name: "variable prefix", Src: "STOP=\"gcloud compute instances stop\"\n$STOP vm-1\n",
			Want: []guardtest.Want{{Line: 2, At: "$STOP", Rule: "gcp-instance-stop", Cmd: "$STOP vm-1", Via: "$STOP → gcloud"}}},
		{Name: "variable set in two places", Src: "if x; then SUDO=sudo; else SUDO=; fi\n$SUDO nvidia-smi -r\n",
			Want: []guardtest.Want{{Line: 2, At: "$SUDO", Rule: "gpu-reset", Cmd: "$SUDO nvidia-smi -r"}}},
		{Name: "variable through variable", Src: "GC=gcloud\nSTOP=\"$GC compute instances stop\"\n${STOP} vm\n",
			Want: []guardtest.Want{{Line: 3, At: "${STOP}", Rule: "gcp-instance-stop", Cmd: "${STOP} vm"}}},
		{Name: "array", Src: "cmd=(sudo nvidia-smi -r)\n\"${cmd[@]}\"\n",
			Want: []guardtest.Want{{Line: 2, At: "\"${cmd[@]}\"", Rule: "gpu-reset", Cmd: "\"${cmd[@]}\"", Via: "$cmd → sudo → nvidia-smi"}}},
		{Name: "default value", Src: "${SHUTDOWN:-shutdown} -h now\n",
			Want: []guardtest.Want{{Line: 1, At: "${SHUTDOWN", Rule: "host-shutdown", Cmd: "${SHUTDOWN:-shutdown} -h now"}}},
		{Name: "exported variable in a nested script", Src: "export VM=gpu-1\nssh host \"gcloud compute instances delete $VM\"\n",
			Want: []guardtest.Want{{Line: 2, At: "gcloud", Rule: "gcp-instance-delete", Cmd: "ssh host \"gcloud compute instances delete $VM\""}}},
	})
}

func TestShellSafe(t *testing.T) {
	guardtest.RunNone(t, guard.ScanFile, "x.sh", []string{
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
	guardtest.RunNone(t, guard.ScanFile, "x.sh", []string{
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
		fs, _ := guard.ScanFile(tt.path, []byte(tt.src), guard.Config{})
		if len(fs) != 1 || fs[0].Line != tt.line || fs[0].EndLine != tt.end {
			t.Errorf("%q: want lines %d-%d, got:%s", tt.src, tt.line, tt.end, guardtest.Describe(fs))
		}
	}
}

// Issue 21's classes, on snippets of the real scripts named (rewritten, the construct kept):
// values the shell computes, env's NAME=VALUE with an expansion, and script text written to
// a file that the system or the script then runs.
func TestShellComputedAndWritten(t *testing.T) {
	guardtest.Run(t, guard.ScanFile, []guardtest.Case{
		// Scotchman0/NVIDIA_Drivers driver_mismatch.sh, its list written out.
		{Name: "loop variable", Src: "for mod in nvidia_uvm nvidia_drm nvidia; do echo \"$mod\"; rmmod $mod; done\n",
			Want: []guardtest.Want{{Line: 1, At: "rmmod", Rule: "gpu-driver-unload", Cmd: "rmmod $mod"}}},
		// ruddj/UNSW-Rocks-Config ipmi/power-action.sh.
		{Name: "power verb from an argument", Src: "for i in {0..9}\ndo\n ipmitool -I lan -H ipmi-0-$i.admin -f $passfile -U root chassis power $1\ndone\n",
			Want: []guardtest.Want{{Line: 3, At: "ipmitool", Rule: "vm-verb-unresolved", Cmd: "ipmitool -I lan -H ipmi-0-$i.admin -f $passfile -U root chassis power $1"}}},
		// Asimawad/aide-ds reset_system.sh, through sudo -E env "PATH=$PATH".
		{Name: "env with an expansion in a value", Src: "sudo -E env \"PATH=$PATH\" nvidia-smi --gpu-reset -i \"$idx\"\nsudo PATH=\"$PATH\" nvidia-smi -r\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "gpu-reset", Cmd: "sudo -E env \"PATH=$PATH\" nvidia-smi --gpu-reset -i \"$idx\""}, {Line: 2, At: "sudo", Rule: "gpu-reset", Cmd: "sudo PATH=\"$PATH\" nvidia-smi -r"}}},
		// edvborg/autoinstall 120-setShutdownTime.sh.
		{Name: "script written to cron.hourly", Src: "echo '#! /bin/bash\nif [ $(date +%H) -eq \"22\" ];\nthen\n\tsystemctl poweroff\nfi\n' > /etc/cron.hourly/shutDownAt22Clock\nchmod 755 /etc/cron.hourly/shutDownAt22Clock\n",
			Want: []guardtest.Want{{Line: 4, At: "systemctl", Rule: "host-shutdown", Cmd: "echo '#! /bin/bash if [ $(date +%H) -eq \"22\" ]; then systemctl poweroff fi ' > /etc/cron.hourly/shutDownAt22Clock"}}},
		// rhattox/debian-preseed systemctl.sh.
		{Name: "unit written with a here-document", Src: "UNITS=/etc/systemd/system\ncat > \"${UNITS}/auto-shutdown.service\" <<EOF\n[Service]\nType=oneshot\nExecStart=/sbin/shutdown -h +480\nEOF\nsystemctl enable auto-shutdown.service\n",
			Want: []guardtest.Want{{Line: 5, At: "/sbin", Rule: "host-shutdown", Cmd: "cat > \"${UNITS}/auto-shutdown.service\" <<EOF … /sbin/shutdown -h +480"}}},
		// carloscoelhoww/bash-scripts apagado-automatico.sh: printf writes the script, the unit runs it.
		{Name: "printf script run by a unit", Src: "sudo printf '%s\\n' '#!/bin/bash' 'sleep 7200' 'sudo shutdown now' > /usr/bin/apagado.sh\nsudo printf '%s\\n' '[Service]' 'ExecStart=/usr/bin/apagado.sh' > /lib/systemd/system/apagado.service\nsudo systemctl enable apagado.service\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo shutdown", Rule: "host-shutdown", Cmd: "sudo printf '%s\\n' '[Service]' 'ExecStart=/usr/bin/apagado.sh' > /lib/systemd/system/apagado.service … sudo shutdown now"}}},
		{Name: "crontab line in cron.d", Src: "echo \"0 2 * * * root /sbin/shutdown -h now\" | sudo tee /etc/cron.d/auto-shutdown\n",
			Want: []guardtest.Want{{Line: 1, At: "/sbin", Rule: "host-shutdown", Cmd: "echo \"0 2 * * * root /sbin/shutdown -h now\" | sudo tee /etc/cron.d/auto-shutdown"}}},
		{Name: "written script started with nohup", Src: "cat > /tmp/idle.sh <<'EOF'\nsleep 3600\nsudo poweroff\nEOF\nchmod +x /tmp/idle.sh\nnohup /tmp/idle.sh >/dev/null 2>&1 &\n",
			Want: []guardtest.Want{{Line: 3, At: "sudo", Rule: "host-shutdown", Cmd: "nohup /tmp/idle.sh >/dev/null 2>&1 … sudo poweroff"}}},
		{Name: "crontab installed from standard input and from a written file", Src: "echo \"*/5 * * * * /usr/local/bin/idle-check && sudo /sbin/shutdown -h now\" | crontab -\necho \"@reboot sleep 3600; poweroff\" > /tmp/ct\ncrontab /tmp/ct\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-shutdown", Cmd: "echo \"*/5 * * * * /usr/local/bin/idle-check && sudo /sbin/shutdown -h now\" | crontab -"}, {Line: 2, At: "poweroff", Rule: "host-shutdown", Cmd: "crontab /tmp/ct … poweroff"}}},
		{Name: "at -f a written file", Src: "cat > /tmp/off.sh <<'X'\nsudo halt\nX\nat -f /tmp/off.sh now + 1 hour\n",
			Want: []guardtest.Want{{Line: 2, At: "sudo", Rule: "host-shutdown", Cmd: "at -f /tmp/off.sh now + 1 hour … sudo halt"}}},
		// taikochain/zkevm-circuits bench-results-local-cleanup.sh.
		{Name: "tccli", Src: "tccli cvm TerminateInstances --InstanceIds \"[\\\"$PROVER_INSTANCE\\\"]\" --ReleasePrepaidDataDisk True\n",
			Want: []guardtest.Want{{Line: 1, At: "tccli", Rule: "cloud-vm-stop", Cmd: "tccli cvm TerminateInstances --InstanceIds \"[\\\"$PROVER_INSTANCE\\\"]\" --ReleasePrepaidDataDisk True"}}},
		// howardlau1999/hcache ros/stop-ecs.sh.
		{Name: "aliyun", Src: "aliyun ecs StopInstance --InstanceId $INSTANCE_ID\n",
			Want: []guardtest.Want{{Line: 1, At: "aliyun", Rule: "cloud-vm-stop", Cmd: "aliyun ecs StopInstance --InstanceId $INSTANCE_ID"}}},
		// christian-posta/scripted-solo-demos, bytes1inger/ai-infra-labs-2026, Goorm-TeamProject/project2_MSA_Backend;
		// the eksctl and oc lines follow public scripts whose repository the code search did not name.
		{Name: "node pools to zero", Src: "gcloud container clusters resize $CLUSTER_NAME \\\n    --zone $ZONE \\\n    --node-pool gpu-pool \\\n    --num-nodes 0 \\\n    --quiet\n" +
			"az aks nodepool scale --resource-group \"${RG}\" --cluster-name \"${C}\" --name \"${POOL}\" --node-count 0\n" +
			"aws eks update-nodegroup-config --cluster-name $C --nodegroup-name $NG --scaling-config minSize=0,maxSize=1,desiredSize=0\n" +
			"eksctl scale nodegroup -r $region --cluster $cluster -n $ng -N 0\noc scale --replicas=0 machineset ${workermachine} -n openshift-machine-api\n",
			Want: []guardtest.Want{{Line: 1, At: "gcloud", Rule: "k8s-nodepool-scale-zero", Cmd: "gcloud container clusters resize $CLUSTER_NAME \\ --zone $ZONE \\ --node-pool gpu-pool \\ --num-nodes 0 \\ --quiet"}, {Line: 6, At: "az", Rule: "k8s-nodepool-scale-zero", Cmd: "az aks nodepool scale --resource-group \"${RG}\" --cluster-name \"${C}\" --name \"${POOL}\" --node-count 0"},
				{Line: 7, At: "aws", Rule: "k8s-nodepool-scale-zero", Cmd: "aws eks update-nodegroup-config --cluster-name $C --nodegroup-name $NG --scaling-config minSize=0,maxSize=1,desiredSize=0"}, {Line: 8, At: "eksctl", Rule: "k8s-nodepool-scale-zero", Cmd: "eksctl scale nodegroup -r $region --cluster $cluster -n $ng -N 0"},
				{Line: 9, At: "oc", Rule: "k8s-nodepool-scale-zero", Cmd: "oc scale --replicas=0 machineset ${workermachine} -n openshift-machine-api"}}},
		{Name: "cordon", Src: "for NODE in $(kubectl get nodes -l cloud.google.com/gke-nodepool=$POOL -o name); do\n  kubectl cordon \"$NODE\"\ndone\nkubectl patch node gpu-1 -p '{\"spec\":{\"unschedulable\":true}}'\n",
			Want: []guardtest.Want{{Line: 2, At: "kubectl", Rule: "k8s-node-cordon", Cmd: "kubectl cordon \"$NODE\""}, {Line: 4, At: "kubectl", Rule: "k8s-node-cordon", Cmd: "kubectl patch node gpu-1 -p '{\"spec\":{\"unschedulable\":true}}'"}}},
		{Name: "mig delete-instances", Src: "gcloud compute instance-groups managed delete-instances $GROUP --instances=$NODE --zone z\n",
			Want: []guardtest.Want{{Line: 1, At: "gcloud", Rule: "gcp-instance-delete", Cmd: "gcloud compute instance-groups managed delete-instances $GROUP --instances=$NODE --zone z"}}},
	})
	guardtest.RunNone(t, guard.ScanFile, "x.sh", []string{
		"for mod in vfio_pci vfio; do rmmod \"$mod\"; done\n",
		"ipmitool -I lanplus -H bmc -U admin chassis power status\n",
		"sudo -E env \"PATH=$PATH\" nvidia-smi -q -i \"$idx\"\n",
		"echo '#!/bin/bash\nnvidia-smi >> /var/log/gpu.csv\n' > /etc/cron.hourly/gpulog\n",
		"cat > /etc/systemd/system/exporter.service <<EOF\n[Service]\nExecStart=/usr/local/bin/exporter --port 9835\nEOF\n",
		"cat > stop.sh <<EOF\nsudo shutdown -h now\nEOF\nchmod +x stop.sh\n",
		"tee staged/clocks.service <<'EOF'\n[Service]\nExecStart=/usr/bin/nvidia-smi -lgc 1980\nEOF\n",
		"echo '0 2 * * * root /usr/local/bin/backup' | sudo tee /etc/cron.d/backup\n",
		"tccli cvm RunInstances --InstanceType GN10X --ImageId img-1\ntccli cvm DescribeInstances --InstanceIds '[\"ins-1\"]'\n",
		"gcloud container clusters resize $C --node-pool gpu-pool --num-nodes 1\n",
		"az aks nodepool scale -g rg --cluster-name c --name gpu --node-count \"${COUNT}\"\n",
		"aws eks update-nodegroup-config --cluster-name c --nodegroup-name ng --scaling-config minSize=1,maxSize=3,desiredSize=1\n",
		"kubectl uncordon gpu-1\nkubectl cordon gpu-1 --dry-run=client\nkubectl patch node gpu-1 -p '{\"spec\":{\"unschedulable\":false}}'\n",
		"oc scale --replicas=2 machineset gpu -n openshift-machine-api\n",
		"crontab -l\necho \"0 * * * * /usr/bin/backup\" | crontab -\ncrontab -r\n",
		"cat > /tmp/job.sh <<'X'\nmake bench\nX\nat -f /tmp/job.sh now\n",
	})
}
