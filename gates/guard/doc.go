// Package guard is kernel-gate's GPU-stop guard: it finds, by parsing and never by grep,
// commands in a change that would stop, deallocate, reboot or reset the GPU machine the
// gates run on (gcloud compute instances stop, sudo shutdown -h now, nvidia-smi -r, ...).
//
// Rule IDs (the rules table in rules.go is the one place they are defined):
//
//	gcp-instance-stop        gcloud compute instances stop|suspend
//	gcp-instance-delete      gcloud compute instances delete
//	gcp-instance-reset       gcloud compute instances reset
//	aws-ec2-stop             aws ec2 stop-instances (also --hibernate); boto3 stop_instances
//	aws-ec2-terminate        aws ec2 terminate-instances; boto3 terminate_instances
//	azure-vm-stop            az vm stop|deallocate
//	azure-vm-delete          az vm delete
//	azure-vm-restart         az vm restart
//	oci-instance-stop        oci compute instance action --action STOP|SOFTSTOP|RESET|SOFTRESET
//	oci-instance-terminate   oci compute instance terminate
//	runpod-pod-stop          runpodctl stop|remove pod; runpod.stop_pod|terminate_pod
//	vastai-instance-stop     vastai stop|destroy instance
//	lambda-instance-terminate  Lambda Cloud API .../instance-operations/terminate (curl, wget, requests)
//	paperspace-machine-stop  paperspace machines stop|destroy|restart; pspace machine stop|delete|restart
//	k8s-node-delete          kubectl delete node|nodes|no
//	k8s-node-drain           kubectl drain
//	terraform-destroy        terraform|tofu destroy; terraform|tofu apply -destroy
//	host-shutdown            shutdown (not -r), poweroff, halt, systemctl poweroff|halt, init 0, telinit 0
//	host-reboot              reboot, shutdown -r, systemctl reboot|kexec, init 6, telinit 6
//	host-suspend             systemctl suspend|hibernate|hybrid-sleep|suspend-then-hibernate
//	host-sysrq               a write to /proc/sysrq-trigger
//	gpu-reset                nvidia-smi -r|--gpu-reset
//	gpu-persistence-off      nvidia-smi -pm 0|--persistence-mode=0
//	gpu-clocks               nvidia-smi clock and power changes: -lgc -rgc -lmc -rmc -ac -rac -pl and their long forms
//	gpu-driver-unload        rmmod nvidia*, modprobe -r nvidia*
//	runner-stop              svc.sh stop|uninstall, config.sh remove, systemctl stop|disable actions.runner*
package guard
