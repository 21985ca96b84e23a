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
		// CMD and ENTRYPOINT run when a container starts (issue 21). This input was a
		// no-finding case until then.
		{Name: "CMD and ENTRYPOINT", Path: "Dockerfile", Src: "CMD [\"reboot\"]\nENTRYPOINT shutdown\n",
			Want: []guardtest.Want{{Line: 1, At: "[", Rule: "host-reboot", Cmd: `["reboot"]`}, {Line: 2, At: "shutdown", Rule: "host-shutdown", Cmd: "shutdown"}}},
		// benvenutto/fast-ai-mooc's Dockerfile at 587f6ca79dee: exec form over two lines.
		{Name: "CMD exec form continued (benvenutto/fast-ai-mooc)", Path: "Dockerfile",
			Src: "FROM nvcr.io/nvidia/pytorch:19.07-py3 AS pytorch\nEXPOSE 8888\nCMD [\"sh\",\"-c\", \\\n\t\"nvidia-smi -pm ENABLED -i 0 && nvidia-smi -pl 300 -i 0 && jupyter notebook --allow-root --ip='0.0.0.0' --port=8888 --no-browser\"]\n",
			Want: []guardtest.Want{{Line: 4, At: "nvidia-smi -pl", Rule: "gpu-clocks", Via: "sh -c → nvidia-smi",
				Cmd: `["sh","-c", \ "nvidia-smi -pm ENABLED -i 0 && nvidia-smi -pl 300 -i 0 && jupyter notebook --allow-root --ip='0.0.0.0' --port=8888 --no-browser"]`}}},
		// The same repository's Dockerfile.dev at 0658921c4cd7, its query turned into a limit.
		{Name: "ENTRYPOINT shell form continued", Path: "Dockerfile.dev",
			Src:  "FROM x\nENTRYPOINT \\\n\tnvidia-smi -pl 280 -i 0 && \\\n\tjupyter notebook --allow-root 2>&1\n",
			Want: []guardtest.Want{{Line: 3, At: "nvidia-smi", Rule: "gpu-clocks", Cmd: "nvidia-smi -pl 280 -i 0"}}},
	})
	guardtest.RunNone(t, guard.ScanFile, "Dockerfile", []string{
		"# RUN sudo reboot\nFROM x\n",
		"CMD [\"jupyter\", \"lab\"]\nENTRYPOINT [\"/bin/bash\", \"-c\", \"./entrypoint.sh\"]\n",
		// benvenutto/fast-ai-mooc's Dockerfile.dev at 0658921c4cd7: the entrypoint only reads the power state.
		"ENTRYPOINT \\\n\tnvidia-smi  -q -i 0 -d POWER && \\\n\tpython -m fastai.utils.show_install && \\\n\tjupyter notebook --allow-root --ip='0.0.0.0' --port=8888 --no-browser 2>&1 \n",
		"CMD [\"sh\", \"-c\", \\\n  \"nvidia-smi -q -d POWER\"]\n",
		"RUN echo 'sudo reboot'\n",
		"LABEL description=\"sudo reboot\"\n",
	})
}
