package dockerfile_test

import (
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/guard"
	"github.com/kernel-gate/kernel-gate/gates/guard/internal/guardtest"
)

func TestDockerfile(t *testing.T) {
	guardtest.Run(t, guard.ScanFile, []guardtest.Case{
		{Name: "shell form with continuation and comment", Path: "Dockerfile", Src: "FROM ubuntu\nRUN apt-get update && \\\n    # install\n    apt-get install -y x && \\\n    sudo reboot\n",
			Want: []guardtest.Want{{Line: 5, At: "sudo", Rule: "host-reboot", Cmd: "sudo reboot"}}},
		{Name: "flags", Path: "Dockerfile", Src: "RUN --mount=type=cache,target=/x --network=none nvidia-smi -r\n",
			Want: []guardtest.Want{{Line: 1, At: "nvidia-smi", Rule: "gpu-reset", Cmd: "nvidia-smi -r"}}},
		{Name: "exec form", Path: "docker/Dockerfile.gpu", Src: "FROM x\nRUN [\"sh\", \"-c\", \"sudo shutdown -h now\"]\nRUN [ \"nvidia-smi\", \"-pm\", \"0\" ]\n",
			Want: []guardtest.Want{{Line: 2, At: "sudo", Rule: "host-shutdown", Cmd: `["sh", "-c", "sudo shutdown -h now"]`, Via: "sh -c → sudo → shutdown"},
				{Line: 3, At: "[", Rule: "gpu-persistence-off", Cmd: `[ "nvidia-smi", "-pm", "0" ]`}}},
		{Name: "here-documents", Path: "Dockerfile", Src: "RUN <<EOF\necho hi\nsudo poweroff\nEOF\nRUN bash <<EOT\nsystemctl reboot\nEOT\nRUN cat <<EOT > /etc/motd\nreboot now\nEOT\n",
			Want: []guardtest.Want{{Line: 3, At: "sudo", Rule: "host-shutdown", Cmd: "sudo poweroff"}, {Line: 6, At: "systemctl", Rule: "host-reboot", Cmd: "bash <<EOT … systemctl reboot"}}},
		{Name: "onbuild and lower case", Path: "gpu.dockerfile", Src: "onbuild run halt\nrun shutdown now\n",
			Want: []guardtest.Want{{Line: 1, At: "halt", Rule: "host-shutdown", Cmd: "halt"}, {Line: 2, At: "shutdown", Rule: "host-shutdown", Cmd: "shutdown now"}}},
		{Name: "escape directive", Path: "Dockerfile", Src: "# escape=`\nFROM x\nRUN echo a && `\n    sudo reboot\n",
			Want: []guardtest.Want{{Line: 4, At: "sudo", Rule: "host-reboot", Cmd: "sudo reboot"}}},
	})
	guardtest.RunNone(t, guard.ScanFile, "Dockerfile", []string{
		"# RUN sudo reboot\nFROM x\n",
		"CMD [\"reboot\"]\nENTRYPOINT shutdown\n",
		"RUN echo 'sudo reboot'\n",
		"LABEL description=\"sudo reboot\"\n",
	})
}
