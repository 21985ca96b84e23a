package guard

import (
	"path"
	"slices"
	"strings"

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
}

// defaultHelp are the words that make a command a request for help.
var defaultHelp = []string{"--help", "-h", "help"}

// Flags of the CLIs in the table that take their value as the next word; knowing them
// keeps a value ("--filter stop") from reading as a verb.
var (
	gcloudValueFlags = []string{"--project", "--zone", "--region", "--account", "--configuration", "--format",
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
		for _, l := range []*[]string{&r.Command, &r.Args, &r.AnyFlag, &r.NoFlag, &r.ArgContains, &r.ValueFlags, &r.Help, &r.WriteTo, &r.Call, &r.Kwargs} {
			*l = slices.Clone(*l)
		}
	}
	return rules
}

func defaultRules() []Rule {
	return []Rule{
		{ID: "gcp-instance-stop", What: "stops or suspends a Google Cloud VM", Why: whyRunner,
			Command: []string{"gcloud"}, Args: []string{"compute", "instances", "stop|suspend"}, ValueFlags: gcloudValueFlags},
		{ID: "gcp-instance-stop", What: "stops or suspends a Google Cloud VM through the Compute API", Why: whyRunner,
			Call: []string{"*.stop", "*.suspend"}, Kwargs: []string{"instance", "zone"}},
		{ID: "gcp-instance-stop", What: "builds a request to stop or suspend a Google Cloud VM", Why: whyRunner,
			Call: []string{"*StopInstanceRequest", "*SuspendInstanceRequest"}},
		{ID: "gcp-instance-delete", What: "deletes a Google Cloud VM", Why: whyGone,
			Command: []string{"gcloud"}, Args: []string{"compute", "instances", "delete"}, ValueFlags: gcloudValueFlags},
		{ID: "gcp-instance-delete", What: "deletes a Google Cloud VM through the Compute API", Why: whyGone,
			Call: []string{"*.delete"}, Kwargs: []string{"instance", "zone"}},
		{ID: "gcp-instance-delete", What: "builds a request to delete a Google Cloud VM", Why: whyGone,
			Call: []string{"*DeleteInstanceRequest"}},
		{ID: "gcp-instance-reset", What: "hard-resets a Google Cloud VM", Why: whyReboot,
			Command: []string{"gcloud"}, Args: []string{"compute", "instances", "reset"}, ValueFlags: gcloudValueFlags},
		{ID: "gcp-instance-reset", What: "hard-resets a Google Cloud VM through the Compute API", Why: whyReboot,
			Call: []string{"*.reset"}, Kwargs: []string{"instance", "zone"}},
		{ID: "gcp-instance-reset", What: "builds a request to hard-reset a Google Cloud VM", Why: whyReboot,
			Call: []string{"*ResetInstanceRequest"}},

		{ID: "aws-ec2-stop", What: "stops (or hibernates) an EC2 instance", Why: whyRunner,
			Command: []string{"aws"}, Args: []string{"ec2", "stop-instances"}, NoFlag: []string{"--dry-run"}, ValueFlags: awsValueFlags},
		{ID: "aws-ec2-stop", What: "stops an EC2 instance through boto3", Why: whyRunner,
			Call: []string{"*.stop_instances", "stop_instances"}},
		{ID: "aws-ec2-terminate", What: "terminates an EC2 instance", Why: whyGone,
			Command: []string{"aws"}, Args: []string{"ec2", "terminate-instances"}, NoFlag: []string{"--dry-run"}, ValueFlags: awsValueFlags},
		{ID: "aws-ec2-terminate", What: "terminates an EC2 instance through boto3", Why: whyGone,
			Call: []string{"*.terminate_instances", "terminate_instances"}},

		{ID: "azure-vm-stop", What: "powers off or deallocates an Azure VM", Why: whyRunner,
			Command: []string{"az"}, Args: []string{"vm", "stop|deallocate"}, ValueFlags: azValueFlags},
		{ID: "azure-vm-stop", What: "powers off or deallocates an Azure VM through the Azure SDK", Why: whyRunner,
			Call: []string{"*virtual_machines.begin_deallocate", "*virtual_machines.begin_power_off"}},
		{ID: "azure-vm-delete", What: "deletes an Azure VM", Why: whyGone,
			Command: []string{"az"}, Args: []string{"vm", "delete"}, ValueFlags: azValueFlags},
		{ID: "azure-vm-delete", What: "deletes an Azure VM through the Azure SDK", Why: whyGone,
			Call: []string{"*virtual_machines.begin_delete"}},
		{ID: "azure-vm-restart", What: "restarts an Azure VM", Why: whyReboot,
			Command: []string{"az"}, Args: []string{"vm", "restart"}, ValueFlags: azValueFlags},
		{ID: "azure-vm-restart", What: "restarts an Azure VM through the Azure SDK", Why: whyReboot,
			Call: []string{"*virtual_machines.begin_restart"}},

		{ID: "oci-instance-stop", What: "stops or resets an Oracle Cloud instance", Why: whyRunner,
			Command: []string{"oci"}, Args: []string{"compute", "instance", "action"},
			AnyFlag: []string{"--action=STOP", "--action=SOFTSTOP", "--action=RESET", "--action=SOFTRESET"}, ValueFlags: ociValueFlags},
		{ID: "oci-instance-terminate", What: "terminates an Oracle Cloud instance", Why: whyGone,
			Command: []string{"oci"}, Args: []string{"compute", "instance", "terminate"}, ValueFlags: ociValueFlags},

		{ID: "runpod-pod-stop", What: "stops or removes a RunPod pod", Why: whyRunner,
			Command: []string{"runpodctl"}, Args: []string{"stop|remove", "pod|pods"}},
		{ID: "runpod-pod-stop", What: "stops or terminates a RunPod pod through the runpod SDK", Why: whyRunner,
			Call: []string{"stop_pod", "*.stop_pod", "terminate_pod", "*.terminate_pod"}},
		{ID: "vastai-instance-stop", What: "stops or destroys a Vast.ai instance", Why: whyRunner,
			Command: []string{"vastai"}, Args: []string{"stop|destroy", "instance|instances"}},
		{ID: "lambda-instance-terminate", What: "terminates a Lambda Cloud instance through its API", Why: whyGone,
			Command: []string{"curl", "wget", "http", "https", "xh"}, ArgContains: []string{"instance-operations/terminate"}},
		{ID: "lambda-instance-terminate", What: "terminates a Lambda Cloud instance through its API", Why: whyGone,
			Call:        []string{"post", "*.post", "*.request", "urlopen", "*.urlopen", "Request", "*.Request"},
			ArgContains: []string{"instance-operations/terminate"}},
		{ID: "paperspace-machine-stop", What: "stops, restarts or destroys a Paperspace machine", Why: whyRunner,
			Command: []string{"paperspace"}, Args: []string{"machines", "stop|destroy|restart"}},
		{ID: "paperspace-machine-stop", What: "stops, restarts or deletes a Paperspace machine", Why: whyRunner,
			Command: []string{"pspace"}, Args: []string{"machine|machines", "stop|delete|restart"}},

		{ID: "k8s-node-delete", What: "deletes a Kubernetes node", Why: whyGone,
			Command: []string{"kubectl", "oc"}, Args: []string{"delete", "node|nodes|no|node/*|nodes/*|no/*"}, ValueFlags: kubectlValueFlags},
		{ID: "k8s-node-drain", What: "drains a Kubernetes node (evicts the runner's pods)", Why: whyRunner,
			Command: []string{"kubectl", "oc"}, Args: []string{"drain"}, ValueFlags: kubectlValueFlags},
		{ID: "terraform-destroy", What: "destroys the infrastructure of a Terraform/OpenTofu configuration", Why: whyGone,
			Command: []string{"terraform", "tofu", "terragrunt"}, Args: []string{"destroy"}, ValueFlags: terraformValueFlags, Help: terraformHelp},
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
		{ID: "host-suspend", What: "suspends or hibernates the machine", Why: whyRunner,
			Command: []string{"systemctl"}, Args: []string{"suspend|hibernate|hybrid-sleep|suspend-then-hibernate"}, ValueFlags: systemctlValueFlags},
		{ID: "host-suspend", What: "suspends or hibernates the machine", Why: whyRunner,
			Command: []string{"pm-suspend", "pm-hibernate", "pm-suspend-hybrid"}, Help: hostHelp},
		{ID: "host-sysrq", What: "writes to /proc/sysrq-trigger (instant reboot, power off or crash of the kernel)", Why: whyReboot,
			WriteTo: []string{"/proc/sysrq-trigger"}},

		{ID: "gpu-reset", What: "resets the GPU (nvidia-smi -r)", Why: whyGPU,
			Command: []string{"nvidia-smi"}, AnyFlag: []string{"-r", "--gpu-reset"}},
		{ID: "gpu-persistence-off", What: "turns GPU persistence mode off (the driver unloads between jobs)", Why: whyGPU,
			Command: []string{"nvidia-smi"}, AnyFlag: []string{"-pm=0", "--persistence-mode=0", "-pm=DISABLED", "--persistence-mode=DISABLED"}},
		{ID: "gpu-clocks", What: "locks, resets or limits GPU clocks or power", Why: whyGPU,
			Command: []string{"nvidia-smi"}, AnyFlag: []string{"-lgc", "--lock-gpu-clocks", "-rgc", "--reset-gpu-clocks",
				"-lmc", "--lock-memory-clocks", "-rmc", "--reset-memory-clocks", "-ac", "--applications-clocks",
				"-rac", "--reset-applications-clocks", "-pl", "--power-limit"}},
		{ID: "gpu-driver-unload", What: "unloads the NVIDIA kernel driver", Why: whyGPU,
			Command: []string{"rmmod"}, Args: []string{"nvidia*"}},
		{ID: "gpu-driver-unload", What: "unloads the NVIDIA kernel driver", Why: whyGPU,
			Command: []string{"modprobe"}, Args: []string{"nvidia*"}, AnyFlag: []string{"-r", "--remove"},
			ValueFlags: []string{"-C", "--config", "-d", "--dirname", "-S", "--set-version"}},

		{ID: "runner-stop", What: "stops or uninstalls the GitHub Actions runner service", Why: whyRunner,
			Command: []string{"svc.sh"}, Args: []string{"stop|uninstall"}},
		{ID: "runner-stop", What: "unregisters the GitHub Actions runner", Why: whyRunner,
			Command: []string{"config.sh"}, Args: []string{"remove"}},
		{ID: "runner-stop", What: "stops or disables the GitHub Actions runner service", Why: whyRunner,
			Command: []string{"systemctl"}, Args: []string{"stop|disable|kill|mask", "actions.runner*"}, ValueFlags: systemctlValueFlags},
	}
}

// isCommandRule, isWriteRule and isCallRule say which front-end a pattern is for.
func (r *Rule) isCommandRule() bool { return len(r.Command) > 0 }
func (r *Rule) isWriteRule() bool   { return len(r.WriteTo) > 0 }
func (r *Rule) isCallRule() bool    { return len(r.Call) > 0 }

// progName is the base name a rule's Command compares with.
func progName(word string) string {
	w := strings.TrimRight(word, "/")
	if w == "" {
		return word
	}
	b := path.Base(w)
	return strings.TrimSuffix(b, ".exe")
}

// globAny reports whether s matches one of the '|'-separated globs of alts.
func globAny(alts, s string) bool {
	for a := range strings.SplitSeq(alts, "|") {
		if kernelname.Glob(a).Match(s) {
			return true
		}
	}
	return false
}

func globList(list []string, s string) bool {
	for _, g := range list {
		if globAny(g, s) {
			return true
		}
	}
	return false
}

func known(w string) bool { return strings.IndexByte(w, unknownByte) < 0 }

// matchCommand reports whether the argv (program first) matches the rule.
func (r *Rule) matchCommand(argv []string) bool {
	if len(argv) == 0 || !known(argv[0]) || !globList(r.Command, progName(argv[0])) {
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
	flags, pos := splitArgs(args, r.ValueFlags)
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

// flagWord is one option with the word after it (its value, if it takes one).
type flagWord struct{ word, next string }

// splitArgs separates options from positional words. An option listed in valueFlags
// takes the next word as its value; after any other option the next word stays
// positional (erring toward finding a verb). "--" ends the options.
func splitArgs(args, valueFlags []string) (flags []flagWord, pos []string) {
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
			flags = append(flags, flagWord{w, next})
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
func hasFlag(flags []flagWord, spec string) bool {
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
		if known(w) && globAny(pattern[i], w) {
			i++
		}
	}
	return i == len(pattern)
}

// matchWrite reports whether writing to the file p is the rule's danger.
func (r *Rule) matchWrite(p string) bool {
	return known(p) && globList(r.WriteTo, p)
}
