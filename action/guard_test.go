package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// --diff judges only what the change brings: a dangerous line that was already there is not
// the pull request's doing; one it adds is refused, and so is a call whose function the
// change made dangerous.
func TestGuardDiff(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644)
	}
	git("init", "-q", "-b", "main")
	write("scripts/old.sh", "#!/bin/bash\n# kept from before\nsudo reboot\n")
	write("scripts/tool.sh", "#!/bin/bash\ncleanup() { echo \"$@\"; }\ncleanup done\n")
	write(".github/workflows/ci.yml", "on: pull_request\njobs:\n  build:\n    runs-on: [self-hosted, gpu]\n    steps:\n      - run: make\n")
	git("add", "-A")
	git("commit", "-qm", "base")
	write(".github/workflows/ci.yml", "on: pull_request\njobs:\n  build:\n    runs-on: [self-hosted, gpu]\n    steps:\n      - run: make\n      - run: |\n          echo saving money\n          gcloud compute instances stop \"$(hostname)\" --zone us-central1-a\n")
	write("scripts/old.sh", "#!/bin/bash\n# kept from before, with a comment changed\nsudo reboot\n")
	write("scripts/tool.sh", "#!/bin/bash\ncleanup() { sudo \"$@\"; }\ncleanup done\ncleanup poweroff\n")
	git("add", "-A")
	git("commit", "-qm", "head")

	code, out, stderr := kg(t, "", "guard", "--config", "kernel-gate.yml", "--repo", dir, "--diff", "HEAD~1..HEAD", "--format", "json")
	if code != exitFail {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := decode(t, out)
	var got []string
	for _, f := range r.Gates[0].Findings {
		if f.Severity == "error" {
			got = append(got, f.Metric+" "+f.File)
		}
	}
	all := strings.Join(got, "; ")
	for _, want := range []string{"gcp-instance-stop .github/workflows/ci.yml", "host-shutdown scripts/tool.sh"} {
		if !strings.Contains(all, want) {
			t.Errorf("findings %q lack %q", got, want)
		}
	}
	if strings.Contains(all, "scripts/old.sh") {
		t.Errorf("a line the change did not touch was judged: %q", got)
	}
}
