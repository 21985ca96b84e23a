// Package guard is kernel-gate's GPU-stop guard: it finds, by parsing and never by grep,
// commands in a change that would stop, deallocate, reboot or reset the GPU machine the
// gates run on (gcloud compute instances stop, sudo shutdown -h now, nvidia-smi -r, ...).
//
// Rule IDs (the table in rules/rules.go is the one place they are defined):
//
//	gcp-instance-stop        gcloud compute instances|tpus stop|suspend; the Compute API and REST stop
//	gcp-instance-delete      gcloud compute instances|tpus delete, instance-groups managed delete-instances; the Compute API and REST DELETE
//	gcp-instance-reset       gcloud compute instances reset
//	aws-ec2-stop             aws ec2 stop-instances (also --hibernate), reboot-instances; boto3 stop_instances, Instance(id).stop(), instances.filter(...).stop()
//	aws-ec2-terminate        aws ec2 terminate-instances; boto3 terminate_instances, Instance(id).terminate()
//	azure-vm-stop            az vm|vmss stop|deallocate; azure-mgmt begin_deallocate|begin_power_off; the REST API
//	azure-vm-delete          az vm delete, az vmss delete|delete-instances; azure-mgmt begin_delete
//	azure-vm-restart         az vm restart, az vmss restart|reimage; azure-mgmt begin_restart
//	oci-instance-stop        oci compute instance action --action STOP|SOFTSTOP|RESET|SOFTRESET; instance_action
//	oci-instance-terminate   oci compute instance terminate; terminate_instance
//	runpod-pod-stop          runpodctl stop|remove pod; runpod.stop_pod|terminate_pod; the REST and GraphQL APIs
//	vastai-instance-stop     vastai stop|destroy|reboot|recycle instance; the REST API's DELETE, reboot, recycle and state stopped
//	lambda-instance-terminate  Lambda Cloud API .../instance-operations/terminate (curl, wget, requests)
//	paperspace-machine-stop  paperspace machines stop|destroy|restart; pspace machine stop|delete|restart
//	k8s-node-delete          kubectl delete node|nodes|no
//	k8s-node-drain           kubectl drain
//	k8s-node-cordon          kubectl cordon, kubectl patch node ... "unschedulable":true; the Python client's V1NodeSpec(unschedulable=True) and patch_node
//	k8s-nodepool-scale-zero  a GPU node pool scaled to zero: gcloud container clusters resize --num-nodes 0, az aks [nodepool] scale --node-count 0, eksctl scale nodegroup --nodes 0, aws eks update-nodegroup-config desiredSize=0, kubectl|oc scale machineset --replicas 0; set_node_pool_size(node_count=0)
//	terraform-destroy        terraform|tofu destroy; terraform|tofu apply -destroy; pulumi destroy; destroy actions
//	host-shutdown            shutdown (not -r), poweroff, halt, systemctl|loginctl poweroff|halt, init 0, telinit 0, D-Bus PowerOff, kill -RTMIN+4 1, ipmitool chassis power off
//	host-reboot              reboot, shutdown -r, systemctl reboot|kexec, loginctl reboot, init 6, telinit 6, D-Bus Reboot, ipmitool chassis power cycle|reset
//	host-suspend             systemctl|loginctl suspend|hibernate|hybrid-sleep|suspend-then-hibernate, D-Bus Suspend
//	host-sysrq               a write to /proc/sysrq-trigger
//	gpu-reset                nvidia-smi -r|--gpu-reset, nvidia-smi drain -m 1, a write to /sys/bus/pci/devices/*/reset|remove
//	gpu-persistence-off      nvidia-smi -pm 0|--persistence-mode=0 (-pm 1 is no stop)
//	gpu-clocks               nvidia-smi clock and power changes: -lgc -rgc -lmc -rmc -ac -rac -pl and their long forms (a warning unless guard.block names it)
//	gpu-driver-unload        rmmod nvidia*, modprobe -r nvidia*, unbinding the nvidia driver
//	runner-stop              svc.sh stop|uninstall, config.sh remove, systemctl stop|disable actions.runner*, pkill Runner.Listener
//	cloud-vm-stop            other clouds' VM lifecycle: hcloud, doctl, linode-cli, scw, ibmcloud is, exo, openstack, nova, vultr-cli, civo, lightsail, tccli (Tencent), aliyun ecs; their HTTP APIs and SDKs
//	vm-action-stop           a workflow step that stops, terminates or deletes a VM or runner through a third-party action (uses:)
//	vm-verb-unresolved       a VM lifecycle command whose verb is a variable, parameter or command substitution the guard cannot resolve
//
// # How a scan runs, and where each step lives
//
// The gate (this package) keeps the API its callers use — Config, ScanFile, ScanTree,
// ScanPaths, ScanDiff, Evaluate — and the steps that are about files, not languages:
//
//  1. Config.Resolve checks the guard section and builds the active rules.Set once.
//  2. ScanTree, ScanPaths and ScanDiff (tree.go, paths.go) pick the files: the
//     repository's tree, the paths given, or a change's files; links, excludes, skips,
//     unreadable files.
//  3. Classify (classify.go) says how each file is read (a source.Kind) from its path,
//     its shebang or its YAML keys.
//  4. scanKindWork (scan.go) refuses what cannot be judged (too large, binary), makes a
//     shell.File (the text, its line table, the rules, the Python reader) and hands it to
//     the front end of its kind: shell.Scan, python.Scan, makefile.Scan,
//     dockerfile.Scan, workflow.Scan.
//  5. The front end turns its language into scripts (source.Text mapped to the file's
//     bytes) and runs them in the shell analyzer, which unwraps each command and matches
//     it against the rules, recording hits on the File.
//  6. File.Finish applies allow comments; the scripts the file runs by name (File.Refs)
//     are judged as what runs them reads them (step 4 again).
//  7. Evaluate (evaluate.go) makes the findings and warnings a gate verdict.
//
// The packages, each importing only those below it (an arrow is an import):
//
//	guard ──────────────┬────────────┬──────────────┬──────────────┐
//	  │                 ▼            ▼              ▼              ▼
//	  │             workflow     dockerfile      makefile        python
//	  │         (workflow.go,        │              │              │
//	  │       actions.go, expr.go)   │              │              │
//	  │                 └────────────┴──────┬───────┴──────────────┘
//	  ▼                                     ▼
//	shell  the command analyzer: shell.File, Analyzer, Frame; variables, functions,
//	  │    wrappers (bash -c, ssh, su -c, containers), `python -c` through the File's reader
//	  ├──────────────────┬─────────────────┐
//	  ▼                  ▼                 ▼
//	rules              finding           source
//	the rule table,    Finding,          Text and Builder (text mapped to file offsets),
//	matching, Set,     Warning           Lines, Kind, decoders
//	Wrapper grammar
//	  │
//	  ▼
//	source
//
// The front ends never import each other, except that every one may hand Python to the
// shell analyzer's RunPython: the shell analyzer cannot import package python (Python's
// subprocess calls are read as shell), so the gate gives each shell.File python.Read
// (scan.go), and shell calls it through the File.
//
// # Adding a front end
//
// A new language is a package under gates/guard with a Scan(*shell.File) that builds a
// source.Text for each script it finds and runs it with shell.NewAnalyzer(fc).RunShell
// (or RunPython); a Kind in package source and its name in kindName; Classify telling
// the files apart; one case in scanKindWork; and a table test with real examples in the
// package, through guard.ScanFile (see gates/guard/internal/guardtest). A rule is added in
// package rules (see its doc).
//
// # What is read
//
// Classify decides how a file is read from its path and first line: shell scripts (*.sh,
// *.bash, a sh/bash/dash/zsh shebang), GitHub workflows (.github/workflows/*.yml) and
// composite actions (action.yml), Makefiles, Dockerfiles and Python. Prose (Markdown,
// reStructuredText, text, docs/) is never blocked.
//
// Shell is parsed with mvdan.cc/sh. Workflow `run:` scripts are mapped back to their exact
// bytes (block scalars, folding, quoting) with `${{ }}` replaced by unknown bytes of the
// same length, and read in the shell that `shell:` names (Python for `shell: python`; a
// warning for pwsh and cmd). Makefile recipes have make's syntax undone (`$$`, literal
// variables, `$(shell ...)`), Dockerfile RUN is read in shell, exec and here-document form,
// and Python's subprocess, os.system, boto3, runpod and requests calls are read with a
// small tokenizer, so comments, docstrings and printed strings are never code. Dockerfile
// CMD and ENTRYPOINT (shell and exec form) are read as RUN is: they run when a container
// of the image starts on the GPU machine.
//
// What a file is comes from its path in its repository (the directory above it that holds
// .git), whatever directory the guard was pointed at or runs in: `guard .github`, `guard
// .github/workflows/ci.yml` and `guard .` run inside .github all read the workflow as a
// workflow, and the scripts it runs by their names from the repository's root. Outside
// any repository the path says it (a .github/workflows/x.yml in it), or a YAML file's
// keys do (`jobs:` is a workflow, `runs: using:` an action). Every file named or found
// that the guard did not read (not code, prose, excluded, in vendor/) is named in a
// notice, at most ten for each reason, and listed in the gate's data.
//
// # What cannot be judged
//
// A file the guard cannot judge fails it, naming the file, the line and why (an unjudged
// Warning, an error in Evaluate): larger than 2 MiB, binary (a NUL byte) though named like
// code, nested beyond the parsers' limits (500 levels of shell brackets, quotes, blocks or
// pipeline stages; 2,000 levels of shell syntax tree; 200 of Python brackets; 32 of make's
// $(...); 12 scripts inside scripts or function calls; 64 variables in one value), too
// complex to finish, a symbolic link out of the repository or (named like code) one that
// does not resolve, a file or directory it cannot read (permissions; a FIFO, socket or
// device, whatever its name), a workflow or action its YAML parser refuses, a step or RUN
// in a shell it does not read (pwsh, cmd). Every bound is checked before the recursive walk it protects,
// so no input can exhaust the stack. `guard.unjudged: warn` turns these into warnings, and
// `guard.skip` path globs let a vendored tree go unjudged (its findings still fail). A byte
// that is not UTF-8 is read as an unknown byte, not a reason to stop; a shell syntax error
// stays a warning (the shell stops there too). Symbolic links are followed within the
// repository; an executable text file without an extension or a shebang is a shell
// script; and a file the repository runs by its name (`bash ci/teardown`, `./tools/reap`,
// `source env.sh`, `python3 tools/x`) is judged as what runs it reads it.
//
// # Beyond literal commands
//
// What is dangerous is often not written out. The guard also follows:
//
//   - verbs it cannot resolve: in a lifecycle CLI (gcloud, aws, az, oci, runpodctl, vastai,
//     hcloud, doctl, ...), a command that a rule would match were its verb, the word right
//     after the known ones, known is vm-verb-unresolved (gcloud compute instances "$1" vm,
//     aws ec2 ${ACTION}-instances); a program it cannot resolve whose arguments are word
//     for word a lifecycle verb path is that CLI ($GCLOUD compute instances delete);
//   - wrappers: functions (their local variables set from parameters too), bash -c, ssh,
//     sudo, env, nohup, timeout, screen (-X stuff), tmux (new-session, send-keys),
//     systemd-run, script -c, sg, unshare, sshpass; containers that reach the host
//     (docker/podman run|exec with --privileged, --pid=host, SYS_ADMIN/SYS_BOOT or / mounted;
//     kubectl debug node/...): their command is judged as run on the host;
//   - workflow expressions: `${{ }}` takes the values of inputs (defaults and choice
//     options), matrix entries (and include), env values and literal alternatives
//     ('a' || 'b'); the script is judged once per value (at most 8 variants);
//   - actions: inputs that hold scripts (script, run, command, inlineScript) are shell (an
//     ssh action's on the remote machine), a CLI action's args are that CLI's, and the step
//     itself is the pseudo-command `uses OWNER/REPO[/PATH] KEY=VALUE...` that
//     vm-action-stop and config rules match;
//   - values the shell computes: a loop variable takes each word of its list (for m in
//     nvidia_uvm nvidia; do rmmod "$m"), a variable set in if/elif branches each value, and
//     env's and sudo's NAME=VALUE words are skipped whatever their value ("PATH=$PATH");
//   - script text written to a file (echo, printf or cat with a redirection, tee with a
//     here-document or piped text): it runs when the script later runs the file by its path
//     (bash FILE, nohup FILE, a unit's ExecStart), and at once when the file is one the
//     system runs by itself: cron's script directories (/etc/cron.hourly, ...) and crontabs
//     (/etc/cron.d, /var/spool/cron; their commands), systemd's unit directories (a unit's
//     Exec*= lines), init scripts; `crontab FILE|-` and `at -f FILE` run what they are
//     given. Text written anywhere else and never run is data;
//   - decoded text: base64, base32 and hex literals decoded by base64 -d, xxd -r -p,
//     printf and echo -e escapes or Python's b64decode are read as what they decode to; a
//     blob that cannot be decoded, fed to a shell, is a warning;
//   - Python: the file's functions that run a parameter (def sh(cmd): subprocess.run(cmd))
//     run their arguments; a receiver is resolved through assignments and loops
//     (instance = ec2.Instance(id); instance.stop()); a method a rule names that is referred
//     to without being called there (action_to_fn = {"stop": ec2.stop_instances}) is taken
//     as called, the call being decided at run time; HTTP requests (curl, wget, httpie,
//     requests, httpx, urllib) match rules by URL and method.
//
// # How a command is matched
//
// Wrappers are unwrapped down to the command that runs: sudo, doas, env, nohup, timeout,
// xargs, exec, command, nice, ionice, stdbuf, time, setsid, su -c, bash/sh/zsh -c, eval,
// trap, watch, flock, chroot, nsenter, ssh host '...', gcloud compute ssh --command, and
// scripts fed to a shell on standard input (here-documents, here-strings, echo | bash).
// Functions, aliases and variables with literal values in the same file are expanded; a
// function's own commands are reported where it is defined, and a call is reported only
// when its arguments make the function dangerous. The rule then matches the program's base
// name, its verb path as an ordered subsequence of the positional words, and its flags
// (see Rule). Only literal words match: a word the guard cannot resolve never equals a
// rule's word. A `# kernel-gate: allow <rule-id> <reason>` comment on the line or the line
// above allows one finding; without a reason it is a warning and allows nothing.
package guard
