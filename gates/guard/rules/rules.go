package rules

import (
	"path"
	"slices"
	"strings"

	"github.com/kernel-gate/kernel-gate/gates/guard/source"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
)

// Rule is one pattern of a dangerous command. A rule ID may have several patterns
// (host-shutdown is `shutdown`, `poweroff`, `systemctl poweroff`, `init 0`, ...); each is
// one Rule in the table.
//
// A command matches when, after its wrappers are unwrapped (sudo, env, ssh, bash -c, ...):
//   - its program's base name matches one of Command (a glob: '*' any run, '?' one character);
//   - Args, in order, match an ordered subsequence of its positional words (flags and their
//     "=values" skipped, and the word after a flag listed in ValueFlags); each element lists
//     alternatives separated by '|', each a glob: "stop|suspend", "nvidia*";
//   - at least one of AnyFlag is present, when AnyFlag is set: "-r" matches "-r" and
//     "-r=..."; "-pm=0" matches "-pm=0" and "-pm 0" (values compare without case);
//   - none of NoFlag is present;
//   - some word contains one of ArgContains, when set;
//   - no word is one of Help (default "--help", "-h", "help"): a help request runs nothing.
//
// WriteTo rules match a write to a file (`> FILE`, `>> FILE`, `tee FILE`, `dd of=FILE`,
// Python's open(FILE)). Call rules match Python calls by their dotted name (a glob:
// "*.stop_instances"), with the keyword arguments in Kwargs, and a string argument
// containing one of ArgContains when set.
//
// Only literal words match: a word holding an expansion the guard cannot resolve never
// equals a rule's word, and a program whose name is not literal is never a finding.
type Rule struct {
	ID   string `json:"id"`
	What string `json:"what"`
	Why  string `json:"why"`

	Command     []string `json:"command,omitempty"`
	Args        []string `json:"args,omitempty"`
	AnyFlag     []string `json:"any_flag,omitempty"`
	NoFlag      []string `json:"no_flag,omitempty"`
	ArgContains []string `json:"arg_contains,omitempty"`
	ValueFlags  []string `json:"value_flags,omitempty"`
	Help        []string `json:"help,omitempty"`
	WriteTo     []string `json:"write_to,omitempty"`
	Call        []string `json:"call,omitempty"`
	Kwargs      []string `json:"kwargs,omitempty"`
	// URL and Method match an HTTP request (curl, wget, httpie and xh commands, Python's
	// requests, httpx and urllib calls, as Command and Call say): one of the URL globs
	// (an id the guard cannot resolve fills a '*') and, when set, one of the methods.
	URL    []string `json:"url,omitempty"`
	Method []string `json:"method,omitempty"`

	// unresolved marks the table's vm-verb-unresolved pattern: it matches a command of a
	// lifecycle CLI (Command) that another rule would match were one word, the verb, known.
	unresolved bool
	// exact keeps the pattern out of its CLI's lifecycle family: a value the guard cannot
	// resolve (a node count) is not an unresolved verb.
	exact bool
	// vmAction marks the table's vm-action-stop pattern: it matches the workflow
	// front-end's pseudo-command `uses ACTION KEY=VALUE...` by what the action's name and
	// inputs say (see package workflow), never a shell command.
	vmAction bool
}

// defaultHelp are the words that make a command a request for help.
var defaultHelp = []string{"--help", "-h", "help"}

// Flags of the CLIs in the table that take their value as the next word; knowing them
// keeps a value ("--filter stop") from reading as a verb.
var (
	GcloudValueFlags = []string{"--project", "--zone", "--region", "--account", "--configuration", "--format",
		"--filter", "--verbosity", "--impersonate-service-account", "--billing-project", "--flags-file", "--trace-token"}
	awsValueFlags = []string{"--region", "--profile", "--output", "--query", "--endpoint-url", "--cli-input-json",
		"--color", "--ca-bundle", "--cli-read-timeout", "--cli-connect-timeout"}
	azValueFlags  = []string{"-g", "--resource-group", "-n", "--name", "--subscription", "-o", "--output", "--query"}
	ociValueFlags = []string{"--instance-id", "--action", "--profile", "--config-file", "--region", "--auth",
		"--output", "--query", "--compartment-id"}
	kubectlValueFlags = []string{"-n", "--namespace", "--context", "--cluster", "--kubeconfig", "-l", "--selector",
		"-f", "--filename", "-o", "--output", "--field-selector", "--user", "-s", "--server", "--grace-period", "--timeout"}
	systemctlValueFlags = []string{"-t", "--type", "-p", "--property", "-s", "--signal", "--state", "-n", "--lines",
		"-o", "--output", "-H", "--host", "-M", "--machine", "--root", "--job-mode", "--kill-whom", "--what", "--message", "--when"}
	terraformValueFlags = []string{"-var", "-var-file", "-target", "-replace"}
	hostHelp            = []string{"--help"}
	terraformHelp       = []string{"-help", "--help", "-h", "help"}
)

const (
	whyRunner = "the gates run on this self-hosted GPU runner; with the machine down every kernel pull request waits until someone brings it back by hand"
	whyGone   = "deleting the GPU machine loses it, its disks and its runner registration; recreating it takes a person, quota and hours"
	whyReboot = "a reboot takes the runner offline mid-job, kills every running gate and can leave the GPU driver unloaded or the machine unreachable"
	whyGPU    = "the GPU is shared by every gate on the runner: this changes or resets it for every job, can hang the driver, and makes timings and results incomparable"
)

// DefaultRules is the one table of dangerous commands: each pattern with its rule ID,
// what it does and why it is refused. It returns a new table on every call: changing it
// changes nothing else.
func DefaultRules() []Rule {
	rules := defaultRules()
	for i := range rules {
		r := &rules[i]
		if r.unresolved {
			r.Command = slices.Clone(LifecycleCLIs)
		}
		for _, l := range []*[]string{&r.Command, &r.Args, &r.AnyFlag, &r.NoFlag, &r.ArgContains, &r.ValueFlags, &r.Help, &r.WriteTo, &r.Call, &r.Kwargs, &r.URL, &r.Method} {
			*l = slices.Clone(*l)
		}
	}
	return rules
}

func defaultRules() []Rule {
	return []Rule{
		{ID: "gcp-instance-stop", What: "stops or suspends a Google Cloud VM", Why: whyRunner,
			Command: []string{"gcloud"}, Args: []string{"compute", "instances", "stop|suspend"}, ValueFlags: GcloudValueFlags},
		{ID: "gcp-instance-stop", What: "stops or suspends a Google Cloud VM through the Compute API", Why: whyRunner,
			Call: []string{"*.stop", "*.suspend"}, Kwargs: []string{"instance", "zone"}},
		{ID: "gcp-instance-stop", What: "builds a request to stop or suspend a Google Cloud VM", Why: whyRunner,
			Call: []string{"*StopInstanceRequest", "*SuspendInstanceRequest"}},
		{ID: "gcp-instance-stop", What: "stops a Google Cloud TPU VM", Why: whyRunner,
			Command: []string{"gcloud"}, Args: []string{"compute", "tpus", "stop"}, ValueFlags: GcloudValueFlags},
		{ID: "gcp-instance-stop", What: "stops or suspends a Google Cloud VM through the Compute API", Why: whyRunner,
			Call: []string{"*.instances().stop", "*.instances().suspend", "*InstancesClient().stop", "*InstancesClient().suspend"}},
		{ID: "gcp-instance-delete", What: "deletes a Google Cloud VM", Why: whyGone,
			Command: []string{"gcloud"}, Args: []string{"compute", "instances", "delete"}, ValueFlags: GcloudValueFlags},
		{ID: "gcp-instance-delete", What: "deletes a Google Cloud TPU VM (or its queued resource)", Why: whyGone,
			Command: []string{"gcloud"}, Args: []string{"compute", "tpus", "delete"}, ValueFlags: GcloudValueFlags},
		{ID: "gcp-instance-delete", What: "deletes a Google Cloud VM through the Compute API", Why: whyGone,
			Call: []string{"*.instances().delete", "*InstancesClient().delete"}},
		{ID: "gcp-instance-delete", What: "deletes VMs of a Google Cloud managed instance group", Why: whyGone,
			Command: []string{"gcloud"}, Args: []string{"compute", "instance-groups", "managed", "delete-instances"}, ValueFlags: GcloudValueFlags},
		{ID: "gcp-instance-reset", What: "hard-resets a Google Cloud VM through the Compute API", Why: whyReboot,
			Call: []string{"*InstancesClient().reset"}},
		{ID: "gcp-instance-delete", What: "deletes a Google Cloud VM through the Compute API", Why: whyGone,
			Call: []string{"*.delete"}, Kwargs: []string{"instance", "zone"}},
		{ID: "gcp-instance-delete", What: "builds a request to delete a Google Cloud VM", Why: whyGone,
			Call: []string{"*DeleteInstanceRequest"}},
		{ID: "gcp-instance-reset", What: "hard-resets a Google Cloud VM", Why: whyReboot,
			Command: []string{"gcloud"}, Args: []string{"compute", "instances", "reset"}, ValueFlags: GcloudValueFlags},
		{ID: "gcp-instance-reset", What: "hard-resets a Google Cloud VM through the Compute API", Why: whyReboot,
			Call: []string{"*.reset"}, Kwargs: []string{"instance", "zone"}},
		{ID: "gcp-instance-reset", What: "builds a request to hard-reset a Google Cloud VM", Why: whyReboot,
			Call: []string{"*ResetInstanceRequest"}},

		{ID: "aws-ec2-stop", What: "stops (or hibernates) an EC2 instance", Why: whyRunner,
			Command: []string{"aws"}, Args: []string{"ec2", "stop-instances"}, NoFlag: []string{"--dry-run"}, ValueFlags: awsValueFlags},
		{ID: "aws-ec2-stop", What: "reboots an EC2 instance", Why: whyReboot,
			Command: []string{"aws"}, Args: []string{"ec2", "reboot-instances"}, NoFlag: []string{"--dry-run"}, ValueFlags: awsValueFlags},
		{ID: "aws-ec2-stop", What: "stops an EC2 instance through boto3", Why: whyRunner,
			Call: []string{"*.stop_instances", "stop_instances", "*.reboot_instances"}},
		{ID: "aws-ec2-stop", What: "stops an EC2 instance through a boto3 resource (Instance(id).stop(), instances.filter(...).stop())", Why: whyRunner,
			Call: []string{"*Instance().stop", "*Instance().reboot", "*.instances.stop", "*.instances.*.stop", "*.instances.*.reboot"}},
		{ID: "aws-ec2-terminate", What: "terminates an EC2 instance", Why: whyGone,
			Command: []string{"aws"}, Args: []string{"ec2", "terminate-instances"}, NoFlag: []string{"--dry-run"}, ValueFlags: awsValueFlags},
		{ID: "aws-ec2-terminate", What: "terminates an EC2 instance through boto3", Why: whyGone,
			Call: []string{"*.terminate_instances", "terminate_instances"}},
		{ID: "aws-ec2-terminate", What: "terminates an EC2 instance through a boto3 resource", Why: whyGone,
			Call: []string{"*Instance().terminate", "*.instances.terminate", "*.instances.*.terminate"}},

		{ID: "azure-vm-stop", What: "powers off or deallocates an Azure VM", Why: whyRunner,
			Command: []string{"az"}, Args: []string{"vm", "stop|deallocate"}, ValueFlags: azValueFlags},
		{ID: "azure-vm-stop", What: "powers off or deallocates an Azure scale set", Why: whyRunner,
			Command: []string{"az"}, Args: []string{"vmss", "stop|deallocate"}, ValueFlags: azValueFlags},
		{ID: "azure-vm-stop", What: "powers off or deallocates an Azure VM through the Azure SDK", Why: whyRunner,
			Call: []string{"*.begin_deallocate", "*.begin_power_off", "*virtual_machines.deallocate", "*virtual_machines.power_off",
				"*virtual_machine_scale_sets.deallocate", "*virtual_machine_scale_sets.power_off"}},
		{ID: "azure-vm-delete", What: "deletes an Azure VM", Why: whyGone,
			Command: []string{"az"}, Args: []string{"vm", "delete"}, ValueFlags: azValueFlags},
		{ID: "azure-vm-delete", What: "deletes an Azure scale set or its instances", Why: whyGone,
			Command: []string{"az"}, Args: []string{"vmss", "delete|delete-instances"}, ValueFlags: azValueFlags},
		{ID: "azure-vm-delete", What: "deletes an Azure VM through the Azure SDK", Why: whyGone,
			Call: []string{"*virtual_machines.begin_delete", "*virtual_machines.delete", "*virtual_machine_scale_sets.begin_delete*"}},
		{ID: "azure-vm-restart", What: "restarts an Azure VM", Why: whyReboot,
			Command: []string{"az"}, Args: []string{"vm", "restart"}, ValueFlags: azValueFlags},
		{ID: "azure-vm-restart", What: "restarts an Azure scale set", Why: whyReboot,
			Command: []string{"az"}, Args: []string{"vmss", "restart|reimage"}, ValueFlags: azValueFlags},
		{ID: "azure-vm-restart", What: "restarts an Azure VM through the Azure SDK", Why: whyReboot,
			Call: []string{"*virtual_machines.begin_restart", "*virtual_machines.restart", "*virtual_machine_scale_sets.begin_restart"}},

		{ID: "oci-instance-stop", What: "stops or resets an Oracle Cloud instance", Why: whyRunner,
			Command: []string{"oci"}, Args: []string{"compute", "instance", "action"},
			AnyFlag: []string{"--action=STOP", "--action=SOFTSTOP", "--action=RESET", "--action=SOFTRESET"}, ValueFlags: ociValueFlags},
		{ID: "oci-instance-terminate", What: "terminates an Oracle Cloud instance", Why: whyGone,
			Command: []string{"oci"}, Args: []string{"compute", "instance", "terminate"}, ValueFlags: ociValueFlags},
		{ID: "oci-instance-stop", What: "stops or resets an Oracle Cloud instance through the OCI SDK", Why: whyRunner,
			Call: []string{"*.instance_action"}, ArgContains: []string{"STOP", "SOFTSTOP", "RESET", "SOFTRESET"}},
		{ID: "oci-instance-terminate", What: "terminates an Oracle Cloud instance through the OCI SDK", Why: whyGone,
			Call: []string{"*.terminate_instance"}},

		{ID: "runpod-pod-stop", What: "stops or removes a RunPod pod", Why: whyRunner,
			Command: []string{"runpodctl"}, Args: []string{"stop|remove", "pod|pods"}},
		{ID: "runpod-pod-stop", What: "stops or terminates a RunPod pod through the runpod SDK", Why: whyRunner,
			Call: []string{"stop_pod", "*.stop_pod", "terminate_pod", "*.terminate_pod"}},
		{ID: "vastai-instance-stop", What: "stops, destroys or reboots a Vast.ai instance", Why: whyRunner,
			Command: []string{"vastai"}, Args: []string{"stop|destroy|reboot|recycle", "instance|instances"}},
		{ID: "lambda-instance-terminate", What: "terminates a Lambda Cloud instance through its API", Why: whyGone,
			Command: []string{"curl", "wget", "http", "https", "xh"}, ArgContains: []string{"instance-operations/terminate"}},
		{ID: "lambda-instance-terminate", What: "terminates a Lambda Cloud instance through its API", Why: whyGone,
			Call:        []string{"post", "*.post", "*.request", "urlopen", "*.urlopen", "Request", "*.Request"},
			ArgContains: []string{"instance-operations/terminate"}},
		{ID: "paperspace-machine-stop", What: "stops, restarts or destroys a Paperspace machine", Why: whyRunner,
			Command: []string{"paperspace"}, Args: []string{"machines", "stop|destroy|restart"}},
		{ID: "paperspace-machine-stop", What: "stops, restarts or deletes a Paperspace machine", Why: whyRunner,
			Command: []string{"pspace"}, Args: []string{"machine|machines", "stop|delete|restart"}},

		{ID: "cloud-vm-stop", What: "stops, deletes or reboots a Hetzner Cloud server", Why: whyRunner,
			Command: []string{"hcloud"}, Args: []string{"server", "shutdown|poweroff|delete|reset|reboot"}},
		{ID: "cloud-vm-stop", What: "deletes a DigitalOcean droplet", Why: whyGone,
			Command: []string{"doctl"}, Args: []string{"compute", "droplet", "delete|rm|d"}},
		{ID: "cloud-vm-stop", What: "powers off, shuts down or power-cycles a DigitalOcean droplet", Why: whyRunner,
			Command: []string{"doctl"}, Args: []string{"compute", "droplet-action", "power-off|shutdown|power-cycle|reboot"}},
		{ID: "cloud-vm-stop", What: "deletes, shuts down or reboots a Linode", Why: whyRunner,
			Command: []string{"linode-cli"}, Args: []string{"linodes", "delete|rm|shutdown|reboot"}},
		{ID: "cloud-vm-stop", What: "stops, terminates or reboots a Scaleway instance", Why: whyRunner,
			Command: []string{"scw"}, Args: []string{"instance", "server", "stop|terminate|delete|reboot"}},
		{ID: "cloud-vm-stop", What: "stops, deletes or reboots an IBM Cloud VPC instance", Why: whyRunner,
			Command: []string{"ibmcloud"}, Args: []string{"is", "instance-stop|instance-delete|instance-reboot|instance-reset"}},
		{ID: "cloud-vm-stop", What: "stops, deletes or reboots an Exoscale instance", Why: whyRunner,
			Command: []string{"exo"}, Args: []string{"compute", "instance", "stop|delete|reboot|reset"}},
		{ID: "cloud-vm-stop", What: "stops, deletes, shelves or reboots an OpenStack server", Why: whyRunner,
			Command: []string{"openstack"}, Args: []string{"server", "stop|delete|shelve|suspend|reboot|pause"},
			ValueFlags: []string{"--os-cloud", "--os-project-name", "--os-region-name", "-f", "--format", "-c", "--column"}},
		{ID: "cloud-vm-stop", What: "stops, deletes, shelves or reboots an OpenStack server (nova)", Why: whyRunner,
			Command: []string{"nova"}, Args: []string{"delete|force-delete|stop|shelve|suspend|reboot"}},
		{ID: "cloud-vm-stop", What: "stops, deletes or restarts a Vultr instance", Why: whyRunner,
			Command: []string{"vultr-cli"}, Args: []string{"instance", "delete|stop|restart|halt"}},
		{ID: "cloud-vm-stop", What: "stops, removes or reboots a Civo instance", Why: whyRunner,
			Command: []string{"civo"}, Args: []string{"instance", "stop|remove|delete|reboot"}},
		{ID: "cloud-vm-stop", What: "stops, terminates or reboots a Tencent Cloud instance", Why: whyRunner,
			Command: []string{"tccli"}, Args: []string{"cvm|lighthouse", "StopInstances|TerminateInstances|RebootInstances|ResetInstance|ResetInstances"}},
		{ID: "cloud-vm-stop", What: "stops, deletes or reboots an Alibaba Cloud ECS instance", Why: whyRunner,
			Command: []string{"aliyun"}, Args: []string{"ecs", "StopInstance|StopInstances|DeleteInstance|DeleteInstances|RebootInstance|RebootInstances"}},
		{ID: "cloud-vm-stop", What: "stops, deletes or reboots an AWS Lightsail instance", Why: whyRunner,
			Command: []string{"aws"}, Args: []string{"lightsail", "stop-instance|delete-instance|reboot-instance"}, ValueFlags: awsValueFlags},
		{ID: "cloud-vm-stop", What: "stops, deletes or reboots a cloud VM through another provider's SDK", Why: whyRunner,
			Call: []string{"*.servers.shutdown", "*.servers.power_off", "*.servers.delete", "*.servers.reset",
				"*Droplet().shutdown", "*Droplet().power_off", "*Droplet().destroy", "*.destroy_node", "*.stop_node", "*.ex_stop_node",
				"*.destroy_instance", "*.stop_instance", "*.delete_node", "*.stop_node"}},

		{ID: "cloud-vm-stop", What: "deletes a cloud VM through its provider's HTTP API (DELETE on the instance)", Why: whyGone,
			Command: httpClients, Call: pyHTTPCalls, Method: []string{"DELETE"},
			URL: []string{"https://api.linode.com/v4/linode/instances/*", "https://api.vultr.com/v2/instances/*", "https://api.digitalocean.com/v2/droplets/*",
				"https://api.hetzner.cloud/v1/servers/*", "https://api.scaleway.com/instance/v1/zones/*/servers/*", "https://api.civo.com/v2/instances/*",
				"https://api-*.exoscale.com/v2/instance/*", "https://api.paperspace.io/machines/*", "https://api.paperspace.com/v1/machines/*"}},
		{ID: "cloud-vm-stop", What: "shuts down, powers off or reboots a cloud VM through its provider's HTTP API", Why: whyRunner,
			Command: httpClients, Call: pyHTTPCalls, Method: []string{"POST", "PUT"},
			URL: []string{"https://api.linode.com/v4/linode/instances/*/shutdown", "https://api.linode.com/v4/linode/instances/*/reboot",
				"https://api.vultr.com/v2/instances/*/halt", "https://api.vultr.com/v2/instances/*/reboot", "https://api.vultr.com/v2/instances/halt",
				"https://api.hetzner.cloud/v1/servers/*/actions/poweroff", "https://api.hetzner.cloud/v1/servers/*/actions/shutdown",
				"https://api.hetzner.cloud/v1/servers/*/actions/reset", "https://api.hetzner.cloud/v1/servers/*/actions/reboot",
				"https://api.civo.com/v2/instances/*/stop", "https://api.civo.com/v2/instances/*/reboots", "https://api.paperspace.com/v1/machines/*/stop"}},
		{ID: "cloud-vm-stop", What: "powers off or shuts down a cloud VM through an action request of its provider's HTTP API", Why: whyRunner,
			Command: httpClients, Call: pyHTTPCalls, Method: []string{"POST"},
			URL:         []string{"https://api.digitalocean.com/v2/droplets/*/actions", "https://api.scaleway.com/instance/v1/zones/*/servers/*/action"},
			ArgContains: []string{"power_off", "shutdown", "power_cycle", "poweroff", "terminate", "stop_in_place", "reboot"}},
		{ID: "runpod-pod-stop", What: "stops or terminates a RunPod pod through its HTTP API", Why: whyRunner,
			Command: httpClients, Call: pyHTTPCalls, Method: []string{"POST"},
			URL: []string{"https://rest.runpod.io/v1/pods/*/stop", "https://api.runpod.io/v1/*pods/*/stop"}},
		{ID: "runpod-pod-stop", What: "terminates a RunPod pod through its HTTP API", Why: whyRunner,
			Command: httpClients, Call: pyHTTPCalls, Method: []string{"DELETE"}, URL: []string{"https://rest.runpod.io/v1/pods/*"}},
		{ID: "runpod-pod-stop", What: "stops or terminates a RunPod pod through its GraphQL API", Why: whyRunner,
			Command: httpClients, Call: pyHTTPCalls, URL: []string{"https://api.runpod.io/graphql*"},
			ArgContains: []string{"podStop", "podTerminate", "stopPod", "terminatePod"}},
		{ID: "vastai-instance-stop", What: "destroys a Vast.ai instance through its HTTP API", Why: whyRunner,
			Command: httpClients, Call: pyHTTPCalls, Method: []string{"DELETE"},
			URL: []string{"https://console.vast.ai/api/v0/instances/*", "https://cloud.vast.ai/api/v0/instances/*"}},
		{ID: "vastai-instance-stop", What: "reboots or recycles a Vast.ai instance through its HTTP API", Why: whyReboot,
			Command: httpClients, Call: pyHTTPCalls, Method: []string{"PUT", "POST"},
			URL: []string{"https://console.vast.ai/api/v0/instances/reboot/*", "https://console.vast.ai/api/v0/instances/recycle/*",
				"https://cloud.vast.ai/api/v0/instances/reboot/*", "https://cloud.vast.ai/api/v0/instances/recycle/*"}},
		{ID: "vastai-instance-stop", What: "stops a Vast.ai instance through its HTTP API (state stopped)", Why: whyRunner,
			Command: httpClients, Call: pyHTTPCalls, Method: []string{"PUT"},
			URL: []string{"https://console.vast.ai/api/v0/instances/*", "https://cloud.vast.ai/api/v0/instances/*"}, ArgContains: []string{"stopped"}},
		{ID: "gcp-instance-stop", What: "stops or suspends a Google Cloud VM through the Compute REST API", Why: whyRunner,
			Command: httpClients, Call: pyHTTPCalls, Method: []string{"POST"},
			URL: []string{"https://compute.googleapis.com/compute/*/instances/*/stop*", "https://compute.googleapis.com/compute/*/instances/*/suspend*"}},
		{ID: "gcp-instance-delete", What: "deletes a Google Cloud VM through the Compute REST API", Why: whyGone,
			Command: httpClients, Call: pyHTTPCalls, Method: []string{"DELETE"}, URL: []string{"https://compute.googleapis.com/compute/*/instances/*"}},
		{ID: "azure-vm-stop", What: "powers off or deallocates an Azure VM through the management REST API", Why: whyRunner,
			Command: httpClients, Call: pyHTTPCalls, Method: []string{"POST"},
			URL: []string{"https://management.azure.com/*/virtualMachines/*/deallocate*", "https://management.azure.com/*/virtualMachines/*/powerOff*"}},

		{ID: "vm-action-stop", What: "stops, terminates or deletes a VM or runner machine through a third-party action", Why: whyRunner,
			Command: []string{"uses"}, vmAction: true},
		{ID: "vm-verb-unresolved", What: "runs a VM lifecycle command whose verb is a variable, parameter or command substitution the guard cannot resolve: it may stop, delete or reboot the machine",
			Why: whyRunner + "; make the verb literal (one command per action), or allow it with a reason", Command: LifecycleCLIs, unresolved: true},

		{ID: "k8s-node-delete", What: "deletes a Kubernetes node", Why: whyGone,
			Command: []string{"kubectl", "oc"}, Args: []string{"delete", "node|nodes|no|node/*|nodes/*|no/*"}, ValueFlags: kubectlValueFlags},
		{ID: "k8s-node-drain", What: "drains a Kubernetes node (evicts the runner's pods)", Why: whyRunner,
			Command: []string{"kubectl", "oc"}, Args: []string{"drain"}, ValueFlags: kubectlValueFlags},
		{ID: "k8s-node-cordon", What: "cordons a Kubernetes node: no new pod, the runner's included, is scheduled on it", Why: whyRunner,
			Command: []string{"kubectl", "oc"}, Args: []string{"cordon"}, NoFlag: []string{"--dry-run"}, ValueFlags: kubectlValueFlags},
		{ID: "k8s-node-cordon", What: "marks a Kubernetes node unschedulable", Why: whyRunner,
			Command: []string{"kubectl", "oc"}, Args: []string{"patch", "node|nodes|no|node/*|nodes/*|no/*"},
			ArgContains: []string{`"unschedulable":true`, `"unschedulable": true`, "unschedulable: true"}, NoFlag: []string{"--dry-run"}, ValueFlags: kubectlValueFlags},
		{ID: "k8s-node-cordon", What: "marks a Kubernetes node unschedulable through the Kubernetes client", Why: whyRunner,
			Call: []string{"*V1NodeSpec", "*.patch_node"}, Kwargs: []string{"unschedulable=True"}},
		{ID: "k8s-nodepool-scale-zero", What: "resizes a GKE node pool to zero nodes", Why: whyGone,
			Command: []string{"gcloud"}, Args: []string{"container", "clusters", "resize"}, AnyFlag: []string{"--num-nodes=0", "--size=0"},
			ValueFlags: GcloudValueFlags, exact: true},
		{ID: "k8s-nodepool-scale-zero", What: "scales an AKS node pool (or cluster) to zero nodes", Why: whyGone,
			Command: []string{"az"}, Args: []string{"aks", "scale"}, AnyFlag: []string{"--node-count=0", "-c=0"}, ValueFlags: azValueFlags, exact: true},
		{ID: "k8s-nodepool-scale-zero", What: "scales an EKS node group to zero nodes", Why: whyGone,
			Command: []string{"eksctl"}, Args: []string{"scale", "nodegroup|ng"}, AnyFlag: []string{"--nodes=0", "-N=0"}},
		{ID: "k8s-nodepool-scale-zero", What: "sets an EKS node group's desired size to zero", Why: whyGone,
			Command: []string{"aws"}, Args: []string{"eks", "update-nodegroup-config"}, ArgContains: []string{"desiredSize=0", `"desiredSize":0`, `"desiredSize": 0`},
			NoFlag: []string{"--dry-run"}, ValueFlags: awsValueFlags},
		{ID: "k8s-nodepool-scale-zero", What: "scales a cluster API MachineSet (OpenShift's machine pool) to zero machines", Why: whyGone,
			Command: []string{"kubectl", "oc"}, Args: []string{"scale", "machineset*|ms|machineset*/*"}, AnyFlag: []string{"--replicas=0"},
			NoFlag: []string{"--dry-run"}, ValueFlags: kubectlValueFlags},
		{ID: "k8s-nodepool-scale-zero", What: "sets a GKE node pool's size to zero through the Container API", Why: whyGone,
			Call: []string{"*.set_node_pool_size", "*SetNodePoolSizeRequest"}, Kwargs: []string{"node_count=0"}},
		{ID: "terraform-destroy", What: "destroys the infrastructure of a Terraform/OpenTofu configuration", Why: whyGone,
			Command: []string{"terraform", "tofu", "terragrunt"}, Args: []string{"destroy"}, ValueFlags: terraformValueFlags, Help: terraformHelp},
		{ID: "terraform-destroy", What: "destroys the infrastructure of a Pulumi stack", Why: whyGone,
			Command: []string{"pulumi"}, Args: []string{"destroy|down"}, ValueFlags: []string{"-s", "--stack", "-C", "--cwd"}, Help: terraformHelp},
		{ID: "terraform-destroy", What: "destroys the infrastructure of a Terraform/OpenTofu configuration (apply -destroy)", Why: whyGone,
			Command: []string{"terraform", "tofu", "terragrunt"}, Args: []string{"apply"}, AnyFlag: []string{"-destroy", "--destroy"},
			ValueFlags: terraformValueFlags, Help: terraformHelp},

		{ID: "host-shutdown", What: "powers off the machine", Why: whyRunner,
			Command: []string{"shutdown"}, NoFlag: []string{"-r", "--reboot", "-c", "-k"}, Help: hostHelp},
		{ID: "host-shutdown", What: "powers off the machine", Why: whyRunner,
			Command: []string{"poweroff", "halt"}, Help: hostHelp},
		{ID: "host-shutdown", What: "powers off the machine", Why: whyRunner,
			Command: []string{"systemctl"}, Args: []string{"poweroff|halt"}, ValueFlags: systemctlValueFlags},
		{ID: "host-shutdown", What: "powers off the machine", Why: whyRunner,
			Command: []string{"systemctl"}, Args: []string{"start|isolate", "poweroff.target|halt.target"}, ValueFlags: systemctlValueFlags},
		{ID: "host-shutdown", What: "switches to runlevel 0 (power off)", Why: whyRunner,
			Command: []string{"init", "telinit"}, Args: []string{"0"}, Help: hostHelp},
		{ID: "host-shutdown", What: "powers off the machine through logind", Why: whyRunner,
			Command: []string{"loginctl"}, Args: []string{"poweroff|halt"}},
		{ID: "host-shutdown", What: "powers off the machine over D-Bus (logind or systemd PowerOff/Halt)", Why: whyRunner,
			Command: []string{"dbus-send", "gdbus", "qdbus"}, ArgContains: []string{".Manager.PowerOff", ".Manager.Halt", "Manager.PowerOff", "Manager.Halt"}},
		{ID: "host-shutdown", What: "powers off the machine over D-Bus (busctl call ... PowerOff)", Why: whyRunner,
			Command: []string{"busctl"}, Args: []string{"call", "PowerOff|Halt"}},
		{ID: "host-shutdown", What: "signals init to power off or halt (SIGRTMIN+4, SIGRTMIN+3)", Why: whyRunner,
			Command: []string{"kill"}, Args: []string{"1"}, AnyFlag: []string{"-SIGRTMIN+4", "-RTMIN+4", "-SIGRTMIN+3", "-RTMIN+3", "-s=SIGRTMIN+4", "-s=RTMIN+4", "-s=SIGRTMIN+3", "-s=RTMIN+3"}},
		{ID: "host-shutdown", What: "powers the machine off through its BMC (IPMI)", Why: whyRunner,
			Command: []string{"ipmitool"}, Args: []string{"chassis", "power", "off|soft"},
			ValueFlags: []string{"-H", "-U", "-P", "-I", "-p", "-L", "-f", "-E", "-y", "-k", "-K"}},
		{ID: "host-reboot", What: "reboots the machine", Why: whyReboot,
			Command: []string{"reboot"}, Help: hostHelp},
		{ID: "host-reboot", What: "reboots the machine", Why: whyReboot,
			Command: []string{"shutdown"}, AnyFlag: []string{"-r", "--reboot"}, NoFlag: []string{"-c", "-k"}, Help: hostHelp},
		{ID: "host-reboot", What: "reboots the machine", Why: whyReboot,
			Command: []string{"systemctl"}, Args: []string{"reboot|kexec|soft-reboot"}, ValueFlags: systemctlValueFlags},
		{ID: "host-reboot", What: "reboots the machine", Why: whyReboot,
			Command: []string{"systemctl"}, Args: []string{"start|isolate", "reboot.target|kexec.target"}, ValueFlags: systemctlValueFlags},
		{ID: "host-reboot", What: "switches to runlevel 6 (reboot)", Why: whyReboot,
			Command: []string{"init", "telinit"}, Args: []string{"6"}, Help: hostHelp},
		{ID: "host-reboot", What: "boots into a loaded kernel (kexec -e)", Why: whyReboot,
			Command: []string{"kexec"}, AnyFlag: []string{"-e", "--exec"}, Help: hostHelp},
		{ID: "host-reboot", What: "reboots the machine through logind", Why: whyReboot,
			Command: []string{"loginctl"}, Args: []string{"reboot|kexec"}},
		{ID: "host-reboot", What: "reboots the machine over D-Bus (logind or systemd Reboot)", Why: whyReboot,
			Command: []string{"dbus-send", "gdbus", "qdbus"}, ArgContains: []string{".Manager.Reboot", "Manager.Reboot", ".Manager.KExec"}},
		{ID: "host-reboot", What: "reboots the machine over D-Bus (busctl call ... Reboot)", Why: whyReboot,
			Command: []string{"busctl"}, Args: []string{"call", "Reboot|KExec"}},
		{ID: "host-reboot", What: "signals init to reboot (SIGRTMIN+5, SIGRTMIN+6)", Why: whyReboot,
			Command: []string{"kill"}, Args: []string{"1"}, AnyFlag: []string{"-SIGRTMIN+5", "-RTMIN+5", "-SIGRTMIN+6", "-RTMIN+6", "-s=SIGRTMIN+5", "-s=RTMIN+5"}},
		{ID: "host-reboot", What: "power-cycles or resets the machine through its BMC (IPMI)", Why: whyReboot,
			Command: []string{"ipmitool"}, Args: []string{"chassis", "power", "cycle|reset"},
			ValueFlags: []string{"-H", "-U", "-P", "-I", "-p", "-L", "-f", "-E", "-y", "-k", "-K"}},
		{ID: "host-suspend", What: "suspends or hibernates the machine", Why: whyRunner,
			Command: []string{"systemctl"}, Args: []string{"suspend|hibernate|hybrid-sleep|suspend-then-hibernate"}, ValueFlags: systemctlValueFlags},
		{ID: "host-suspend", What: "suspends or hibernates the machine", Why: whyRunner,
			Command: []string{"pm-suspend", "pm-hibernate", "pm-suspend-hybrid"}, Help: hostHelp},
		{ID: "host-suspend", What: "suspends or hibernates the machine through logind", Why: whyRunner,
			Command: []string{"loginctl"}, Args: []string{"suspend|hibernate|hybrid-sleep|suspend-then-hibernate"}},
		{ID: "host-suspend", What: "suspends or hibernates the machine over D-Bus", Why: whyRunner,
			Command: []string{"dbus-send", "gdbus", "qdbus"}, ArgContains: []string{".Manager.Suspend", ".Manager.Hibernate", ".Manager.HybridSleep"}},
		{ID: "host-sysrq", What: "writes to /proc/sysrq-trigger (instant reboot, power off or crash of the kernel)", Why: whyReboot,
			WriteTo: []string{"/proc/sysrq-trigger"}},

		{ID: "gpu-reset", What: "resets the GPU (nvidia-smi -r)", Why: whyGPU,
			Command: []string{"nvidia-smi"}, AnyFlag: []string{"-r", "--gpu-reset"}},
		{ID: "gpu-reset", What: "drains the GPU (nvidia-smi drain -m 1): no job can use it", Why: whyGPU,
			Command: []string{"nvidia-smi"}, Args: []string{"drain"}, AnyFlag: []string{"-m=1", "--modify=1"}},
		{ID: "gpu-reset", What: "resets or removes a PCI device through sysfs (the GPU falls off the bus)", Why: whyGPU,
			WriteTo: []string{"/sys/bus/pci/devices/*/reset", "/sys/bus/pci/devices/*/remove", "/sys/devices/pci*/reset", "/sys/devices/pci*/remove"}},
		{ID: "gpu-persistence-off", What: "turns GPU persistence mode off (the driver unloads between jobs)", Why: whyGPU,
			Command: []string{"nvidia-smi"}, AnyFlag: []string{"-pm=0", "--persistence-mode=0", "-pm=DISABLED", "--persistence-mode=DISABLED"}},
		{ID: "gpu-clocks", What: "locks, resets or limits GPU clocks or power", Why: whyGPU,
			Command: []string{"nvidia-smi"}, AnyFlag: []string{"-lgc", "--lock-gpu-clocks", "-rgc", "--reset-gpu-clocks",
				"-lmc", "--lock-memory-clocks", "-rmc", "--reset-memory-clocks", "-ac", "--applications-clocks",
				"-rac", "--reset-applications-clocks", "-pl", "--power-limit"}},
		{ID: "gpu-driver-unload", What: "unloads the NVIDIA kernel driver", Why: whyGPU,
			Command: []string{"rmmod"}, Args: []string{"nvidia*"}},
		{ID: "gpu-driver-unload", What: "unbinds a device from the NVIDIA driver", Why: whyGPU,
			WriteTo: []string{"/sys/bus/pci/drivers/nvidia*/unbind"}},
		{ID: "gpu-driver-unload", What: "unloads the NVIDIA kernel driver", Why: whyGPU,
			Command: []string{"modprobe"}, Args: []string{"nvidia*"}, AnyFlag: []string{"-r", "--remove"},
			ValueFlags: []string{"-C", "--config", "-d", "--dirname", "-S", "--set-version"}},

		{ID: "runner-stop", What: "stops or uninstalls the GitHub Actions runner service", Why: whyRunner,
			Command: []string{"svc.sh"}, Args: []string{"stop|uninstall"}},
		{ID: "runner-stop", What: "unregisters the GitHub Actions runner", Why: whyRunner,
			Command: []string{"config.sh"}, Args: []string{"remove"}},
		{ID: "runner-stop", What: "stops or disables the GitHub Actions runner service", Why: whyRunner,
			Command: []string{"systemctl"}, Args: []string{"stop|disable|kill|mask", "actions.runner*"}, ValueFlags: systemctlValueFlags},
		{ID: "runner-stop", What: "kills the GitHub Actions runner's processes", Why: whyRunner,
			Command: []string{"pkill", "killall"}, ArgContains: []string{"Runner.Listener", "Runner.Worker", "actions-runner", "actions.runner"}},
	}
}

// httpClients are the commands that make HTTP requests; pyHTTPCalls the Python calls.
var (
	httpClients = []string{"curl", "wget", "http", "https", "xh", "xhs"}
	pyHTTPCalls = []string{"*.get", "*.post", "*.put", "*.delete", "*.patch", "*.request", "post", "put", "delete", "request",
		"*.urlopen", "urlopen", "Request", "*.Request"}
)

// LifecycleCLIs are the programs whose commands start, stop, delete or reboot machines:
// with them, a verb the guard cannot resolve may be a destructive one.
var LifecycleCLIs = []string{"gcloud", "aws", "az", "oci", "runpodctl", "vastai", "paperspace", "pspace", "hcloud", "doctl",
	"linode-cli", "scw", "ibmcloud", "exo", "openstack", "nova", "vultr-cli", "civo", "tccli", "aliyun", "init", "telinit", "loginctl", "ipmitool"}

// wholeCLILifecycle are lifecycle CLIs whose every verb is about a machine's lifecycle, so
// that a one-word pattern (init 0, nova delete) is a family on its own.
func wholeCLILifecycle(prog string) bool {
	switch prog {
	case "runpodctl", "vastai", "nova", "init", "telinit", "loginctl":
		return true
	}
	return false
}

// family reports whether the rule is a lifecycle family's destructive verb: a command rule
// of a lifecycle CLI with a verb path.
func (r *Rule) family() bool {
	if !r.IsCommandRule() || r.unresolved || r.exact || len(r.Args) == 0 || len(r.ArgContains) > 0 {
		return false
	}
	for _, c := range r.Command {
		if slices.Contains(LifecycleCLIs, c) && (len(r.Args) >= 2 || wholeCLILifecycle(c)) {
			return true
		}
	}
	return false
}

// MatchPossibly reports whether argv would match the family rule if one unknown word, the
// next positional word after the known ones before it, were the rule's verb.
func (r *Rule) MatchPossibly(argv []string) bool {
	if len(argv) == 0 || !Known(argv[0]) || !GlobList(r.Command, ProgName(argv[0])) {
		return false
	}
	args := argv[1:]
	help := r.Help
	if help == nil {
		help = defaultHelp
	}
	for _, w := range args {
		if slices.Contains(help, w) {
			return false
		}
	}
	flags, pos := SplitArgs(args, r.ValueFlags)
	for _, f := range r.NoFlag {
		if hasFlag(flags, f) {
			return false
		}
	}
	flagUnknown := false // the flag that makes it dangerous has a value the guard cannot resolve
	if len(r.AnyFlag) > 0 {
		ok := false
		for _, f := range r.AnyFlag {
			switch {
			case hasFlag(flags, f):
				ok = true
			case possibleFlag(flags, f):
				ok, flagUnknown = true, true
			}
		}
		if !ok {
			return false
		}
	}
	// (element, used the unknown word) states; the unknown word must come right after the
	// word that matched the element before it (or be the first positional word).
	type state struct {
		i       int
		used    bool
		lastPos int // index in pos of the last matched word
	}
	states := []state{{0, false, -1}}
	for k, w := range pos {
		var next []state
		for _, st := range states {
			next = append(next, st)
			if st.i == len(r.Args) {
				continue
			}
			switch {
			case Known(w) && GlobAny(r.Args[st.i], w):
				next = append(next, state{st.i + 1, st.used, k})
			case !Known(w) && !st.used && st.lastPos == k-1 && possibleGlob(r.Args[st.i], w):
				next = append(next, state{st.i + 1, true, k})
			}
		}
		if len(next) > 64 {
			next = next[:64]
		}
		states = next
	}
	for _, st := range states {
		if st.i == len(r.Args) && (st.used || flagUnknown) {
			return true
		}
	}
	return false
}

// possibleFlag reports whether spec ("--action=STOP") is present with a value the guard
// cannot resolve.
func possibleFlag(flags []FlagWord, spec string) bool {
	name, _, withValue := strings.Cut(spec, "=")
	if !withValue {
		return false
	}
	for _, f := range flags {
		if v, ok := strings.CutPrefix(f.word, name+"="); ok && !Known(v) {
			return true
		}
		if f.word == name && !Known(f.next) {
			return true
		}
	}
	return false
}

// possibleGlob reports whether a word with unknown bytes could be one of the alternatives:
// its known parts, in order, fit one.
func possibleGlob(alts, w string) bool {
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		switch c := w[i]; {
		case c == source.UnknownByte:
			if !strings.HasSuffix(b.String(), "*") {
				b.WriteByte('*')
			}
		case c == '*' || c == '?':
			b.WriteByte('?')
		default:
			b.WriteByte(c)
		}
	}
	g := kernelname.Glob(b.String())
	for a := range strings.SplitSeq(alts, "|") {
		if g.Match(strings.NewReplacer("*", "", "?", "").Replace(a)) {
			return true
		}
	}
	return false
}

// IsCommandRule, isWriteRule and isCallRule say which front-end a pattern is for.
func (r *Rule) IsCommandRule() bool { return len(r.Command) > 0 }
func (r *Rule) IsWriteRule() bool   { return len(r.WriteTo) > 0 }
func (r *Rule) IsCallRule() bool    { return len(r.Call) > 0 }

// IsVMAction reports whether the rule is the vm-action-stop pattern, which package workflow
// matches against its `uses` pseudo-command by what the action says.
func (r *Rule) IsVMAction() bool { return r.vmAction }

// ProgName is the base name a rule's Command compares with.
func ProgName(word string) string {
	w := strings.TrimRight(word, "/")
	if w == "" {
		return word
	}
	b := path.Base(w)
	return strings.TrimSuffix(b, ".exe")
}

// GlobAny reports whether s matches one of the '|'-separated globs of alts.
func GlobAny(alts, s string) bool {
	for a := range strings.SplitSeq(alts, "|") {
		if kernelname.Glob(a).Match(s) {
			return true
		}
	}
	return false
}

// GlobList reports whether s matches one of the globs of list.
func GlobList(list []string, s string) bool {
	for _, g := range list {
		if GlobAny(g, s) {
			return true
		}
	}
	return false
}

// Known reports whether w holds no UnknownByte: only a known word can equal a rule's word.
func Known(w string) bool { return strings.IndexByte(w, source.UnknownByte) < 0 }

// MatchCommand reports whether the argv (program first) matches the rule.
func (r *Rule) MatchCommand(argv []string) bool {
	if r.vmAction || r.unresolved || len(argv) == 0 || !Known(argv[0]) || !GlobList(r.Command, ProgName(argv[0])) {
		return false
	}
	args := argv[1:]
	help := r.Help
	if help == nil {
		help = defaultHelp
	}
	for _, w := range args {
		for _, h := range help {
			if w == h {
				return false
			}
		}
	}
	if len(r.URL) > 0 {
		req, ok := httpCommand(ProgName(argv[0]), args)
		return ok && r.MatchRequest(req) && ArgContains(args, r.ArgContains)
	}
	flags, pos := SplitArgs(args, r.ValueFlags)
	if len(r.AnyFlag) > 0 {
		ok := false
		for _, f := range r.AnyFlag {
			if hasFlag(flags, f) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, f := range r.NoFlag {
		if hasFlag(flags, f) {
			return false
		}
	}
	if len(r.ArgContains) > 0 {
		ok := false
		for _, w := range args {
			for _, c := range r.ArgContains {
				if c != "" && strings.Contains(w, c) {
					ok = true
				}
			}
		}
		if !ok {
			return false
		}
	}
	return subsequence(r.Args, pos)
}

// FlagWord is one option with the word after it (its value, if it takes one).
type FlagWord struct{ word, next string }

// SplitArgs separates options from positional words. An option listed in valueFlags
// takes the next word as its value; after any other option the next word stays
// positional (erring toward finding a verb). "--" ends the options.
func SplitArgs(args, valueFlags []string) (flags []FlagWord, pos []string) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(w) > 1 && w[0] == '-' {
			next := ""
			if i+1 < len(args) {
				next = args[i+1]
			}
			flags = append(flags, FlagWord{w, next})
			if !strings.Contains(w, "=") && slices.Contains(valueFlags, w) {
				i++
			}
			continue
		}
		pos = append(pos, w)
	}
	return flags, pos
}

// hasFlag reports whether spec ("-r" or "-pm=0") is among the options.
func hasFlag(flags []FlagWord, spec string) bool {
	name, value, withValue := strings.Cut(spec, "=")
	for _, f := range flags {
		if !withValue {
			if f.word == name || strings.HasPrefix(f.word, name+"=") {
				return true
			}
			continue
		}
		if v, ok := strings.CutPrefix(f.word, name+"="); ok && strings.EqualFold(v, value) {
			return true
		}
		if f.word == name && strings.EqualFold(f.next, value) {
			return true
		}
	}
	return false
}

// subsequence reports whether the pattern words match, in order, some of the words.
func subsequence(pattern, words []string) bool {
	i := 0
	for _, w := range words {
		if i == len(pattern) {
			break
		}
		if (Known(w) || strings.ContainsAny(pattern[i], "*?")) && GlobAny(pattern[i], w) {
			i++ // a word with unknown bytes can still fill a glob's '*'
		}
	}
	return i == len(pattern)
}

// MatchWrite reports whether writing to the file p is the rule's danger.
func (r *Rule) MatchWrite(p string) bool {
	for _, g := range r.WriteTo {
		if (Known(p) || strings.ContainsAny(g, "*?")) && GlobAny(g, p) {
			return true // unknown bytes (/sys/bus/pci/devices/$GPU/reset) only ever fill a '*'
		}
	}
	return false
}

// ArgContains reports whether some word contains one of subs (true when subs is empty).
func ArgContains(words, subs []string) bool {
	if len(subs) == 0 {
		return true
	}
	for _, w := range words {
		for _, c := range subs {
			if c != "" && strings.Contains(w, c) {
				return true
			}
		}
	}
	return false
}

// HTTPRequest is what an HTTP request command or call asks: its method and URLs.
type HTTPRequest struct {
	Method string // upper case; "" when unknown
	URLs   []string
}

// MatchRequest reports whether the request is one the rule's URL and Method describe.
func (r *Rule) MatchRequest(req HTTPRequest) bool {
	if len(r.Method) > 0 && !slices.ContainsFunc(r.Method, func(m string) bool { return strings.EqualFold(m, req.Method) }) {
		return false
	}
	for _, u := range req.URLs {
		for _, g := range r.URL {
			if kernelname.Glob(g).Match(u) {
				return true
			}
		}
	}
	return false
}

// httpCommand reads the method and URLs of a curl, wget, httpie or xh command.
func httpCommand(prog string, args []string) (HTTPRequest, bool) {
	var req HTTPRequest
	data := false
	isURL := func(w string) bool {
		return strings.HasPrefix(w, "http://") || strings.HasPrefix(w, "https://") || strings.Contains(w, "://") && !strings.HasPrefix(w, "file:")
	}
	switch prog {
	case "curl":
		for i := 0; i < len(args); i++ {
			w := args[i]
			next := ""
			if i+1 < len(args) {
				next = args[i+1]
			}
			switch {
			case w == "-X" || w == "--request":
				req.Method = strings.ToUpper(next)
				i++
			case strings.HasPrefix(w, "--request="):
				req.Method = strings.ToUpper(strings.TrimPrefix(w, "--request="))
			case strings.HasPrefix(w, "-X") && len(w) > 2:
				req.Method = strings.ToUpper(w[2:])
			case w == "--url":
				req.URLs = append(req.URLs, next)
				i++
			case strings.HasPrefix(w, "--url="):
				req.URLs = append(req.URLs, strings.TrimPrefix(w, "--url="))
			case w == "-d" || strings.HasPrefix(w, "--data") || w == "-F" || w == "--form" || w == "--json" || w == "-T" || w == "--upload-file":
				data = true
				i++
			case w == "-I" || w == "--head":
				req.Method = "HEAD"
			case isURL(w):
				req.URLs = append(req.URLs, w)
			}
		}
		if req.Method == "" {
			req.Method = "GET"
			if data {
				req.Method = "POST"
			}
		}
	case "wget":
		req.Method = "GET"
		for _, w := range args {
			switch {
			case strings.HasPrefix(w, "--method="):
				req.Method = strings.ToUpper(strings.TrimPrefix(w, "--method="))
			case strings.HasPrefix(w, "--post-data") || strings.HasPrefix(w, "--post-file"):
				if req.Method == "GET" {
					req.Method = "POST"
				}
			case isURL(w):
				req.URLs = append(req.URLs, w)
			}
		}
	default: // httpie, xh: [METHOD] URL [items]
		for _, w := range args {
			if strings.HasPrefix(w, "-") {
				continue
			}
			switch strings.ToUpper(w) {
			case "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD":
				if req.Method == "" && len(req.URLs) == 0 {
					req.Method = strings.ToUpper(w)
					continue
				}
			}
			if isURL(w) || len(req.URLs) == 0 && strings.Contains(w, ".") && strings.Contains(w, "/") {
				u := w
				if !strings.Contains(u, "://") {
					u = "https://" + u
				}
				req.URLs = append(req.URLs, u)
			} else if strings.ContainsAny(w, "=:") && req.Method == "" {
				req.Method = "POST" // a data item
			}
		}
		if req.Method == "" {
			req.Method = "GET"
		}
	}
	return req, len(req.URLs) > 0
}
