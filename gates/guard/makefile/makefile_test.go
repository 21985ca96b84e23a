package makefile_test

import (
	"testing"

	"github.com/kernel-gate/kernel-gate/gates/guard"
	"github.com/kernel-gate/kernel-gate/gates/guard/internal/guardtest"
)

func TestMakefile(t *testing.T) {
	guardtest.Run(t, guard.ScanFile, []guardtest.Case{
		{Name: "recipes", Path: "Makefile", Src: "STOP = gcloud compute instances stop\nVM ?= gpu-1\n\n.PHONY: all\nall:\n" +
			"\t@echo \"sudo shutdown -h now\"\n\t-sudo nvidia-smi -pm 0\n\t@$(STOP) $(VM)\n\techo $$HOME && \\\n\t  sudo poweroff\n\t+$(MAKE) -C sub\n",
			Want: []guardtest.Want{{Line: 7, At: "sudo", Rule: "gpu-persistence-off", Cmd: "sudo nvidia-smi -pm 0"}, {Line: 8, At: "$(STOP)", Rule: "gcp-instance-stop", Cmd: "$(STOP) $(VM)"},
				{Line: 10, At: "sudo", Rule: "host-shutdown", Cmd: "sudo poweroff"}}},
		{Name: "$(shell ...) anywhere", Path: "Makefile", Src: "X := $(shell sudo reboot)\nall:\n\techo $@ $(shell nvidia-smi -r)\n",
			Want: []guardtest.Want{{Line: 1, At: "sudo", Rule: "host-reboot", Cmd: "sudo reboot"}, {Line: 3, At: "nvidia-smi", Rule: "gpu-reset", Cmd: "nvidia-smi -r"}}},
		{Name: "define used in a recipe", Path: "rules.mk", Src: "define TEARDOWN\nterraform destroy -auto-approve\nendef\n\nclean:\n\t$(TEARDOWN)\n",
			Want: []guardtest.Want{{Line: 2, At: "terraform", Rule: "terraform-destroy", Cmd: "terraform destroy -auto-approve"}}},
		{Name: "inline recipe and .ONESHELL", Path: "GNUmakefile", Src: ".ONESHELL:\nquick: ; sudo reboot\nlong:\n\tif [ -f x ]; then\n\t  kubectl drain gpu-1\n\tfi\n",
			Want: []guardtest.Want{{Line: 2, At: "sudo", Rule: "host-reboot", Cmd: "sudo reboot"}, {Line: 5, At: "kubectl", Rule: "k8s-node-drain", Cmd: "kubectl drain gpu-1"}}},
		{Name: "shell variable in a recipe", Path: "Makefile", Src: "stop:\n\tCMD=\"sudo halt\"; $$CMD\n",
			Want: []guardtest.Want{{Line: 2, At: "$$CMD", Rule: "host-shutdown", Cmd: "$$CMD"}}},
	})
	guardtest.RunNone(t, guard.ScanFile, "Makefile", []string{
		"# sudo reboot\nall:\n\t@echo reboot\n",
		"help:\n\t@echo \"reboot - reboots the device\"\n",
		"define HELP\nreboot - reboots\nendef\nexport HELP\n",
		"X = sudo reboot\nall:\n\techo '$(X)'\n",
		"all:\n\t$(MAKE) stop\n",
	})
}
