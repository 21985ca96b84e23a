package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/gittest"
	"github.com/kernel-gate/kernel-gate/internal/hangtest"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// --diff judges only what the change brings: a dangerous line that was already there is not
// the pull request's doing; one it adds is refused, and so is a call whose function the
// change made dangerous.
func TestGuardDiff(t *testing.T) {
	repo := gittest.New(t)
	repo.Write(map[string]string{
		"scripts/old.sh":           "#!/bin/bash\n# kept from before\nsudo reboot\n",
		"scripts/tool.sh":          "#!/bin/bash\ncleanup() { echo \"$@\"; }\ncleanup done\n",
		".github/workflows/ci.yml": "on: pull_request\njobs:\n  build:\n    runs-on: [self-hosted, gpu]\n    steps:\n      - run: make\n",
	})
	repo.Commit("base")
	repo.Write(map[string]string{
		".github/workflows/ci.yml": "on: pull_request\njobs:\n  build:\n    runs-on: [self-hosted, gpu]\n    steps:\n      - run: make\n      - run: |\n          echo saving money\n          gcloud compute instances stop \"$(hostname)\" --zone us-central1-a\n",
		"scripts/old.sh":           "#!/bin/bash\n# kept from before, with a comment changed\nsudo reboot\n",
		"scripts/tool.sh":          "#!/bin/bash\ncleanup() { sudo \"$@\"; }\ncleanup done\ncleanup poweroff\n",
	})
	repo.Commit("head")

	code, out, stderr := kg(t, "", "guard", "--config", "kernel-gate.yml", "--repo", repo.Dir, "--diff", "HEAD~1..HEAD", "--format", "json")
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

// TestGuardPointedAtGithub: `kernel-gate guard .github` scanned nothing and passed though a
// workflow there held `sudo shutdown -h now`; so did `guard .github/workflows` and `guard`
// run inside .github. Every way of pointing at the workflow fails, naming it by its path in
// the repository; so does --diff with --repo .github.
func TestGuardPointedAtGithub(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "repo")
	write := func(p, s string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(filepath.Join(repo, p)), 0o755)
		if err := os.WriteFile(filepath.Join(repo, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# r\n")
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	var git *gittest.Repo
	if _, err := exec.LookPath("git"); err == nil {
		os.RemoveAll(filepath.Join(repo, ".git"))
		git = gittest.Init(t, repo)
		git.Commit("base")
	}
	write(".github/workflows/ci.yml", "on: pull_request\njobs:\n  gpu:\n    runs-on: [self-hosted, gpu]\n    steps:\n      - run: make\n      - run: sudo shutdown -h now\n")
	link := filepath.Join(t.TempDir(), "gh")
	if err := os.Symlink(filepath.Join(repo, ".github"), link); err != nil {
		link = ""
	}
	tests := []struct{ name, cwd, path string }{
		{"guard .github", ".", ".github"},
		{"guard .github/workflows", ".", ".github/workflows"},
		{"guard the workflow", ".", ".github/workflows/ci.yml"},
		{"guard an absolute .github", ".", filepath.Join(repo, ".github")},
		{"guard run inside .github", ".github", ""},
		{"guard ci.yml run inside workflows", ".github/workflows", "ci.yml"},
		{"guard a link to .github", ".", link},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.path == "" && tt.name == "guard a link to .github" {
				t.Skip("no symbolic links here")
			}
			t.Chdir(filepath.Join(repo, tt.cwd))
			args := []string{"guard", "--format", "json"}
			if tt.path != "" {
				args = append(args, tt.path)
			}
			code, out, stderr := kg(t, "", args...)
			if code != exitFail {
				t.Fatalf("exit %d, want %d: %s%s", code, exitFail, stderr, out)
			}
			r := decode(t, out)
			if f := r.Gates[0].Findings; len(f) == 0 || f[0].Metric != "host-shutdown" || f[0].File != ".github/workflows/ci.yml" || f[0].Line != 7 {
				t.Errorf("findings %+v, want host-shutdown at .github/workflows/ci.yml:7", f)
			}
		})
	}
	if git == nil {
		return
	}
	git.Commit("head")
	for _, at := range []string{".github", ".github/workflows"} {
		t.Run("--diff --repo "+at, func(t *testing.T) {
			t.Chdir(filepath.Join(repo, at))
			code, out, stderr := kg(t, "", "guard", "--diff", "HEAD~1..HEAD", "--format", "json")
			if code != exitFail {
				t.Fatalf("exit %d, want %d: %s%s", code, exitFail, stderr, out)
			}
			if f := decode(t, out).Gates[0].Findings; len(f) == 0 || f[0].File != ".github/workflows/ci.yml" {
				t.Errorf("findings %+v", f)
			}
		})
	}
}

// TestGuardUnreadableFails: a tree with a file the guard cannot read (a FIFO named like a
// script: even root cannot read one without a writer) fails the gate, exit 1, naming it.
func TestGuardUnreadableFails(t *testing.T) {
	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	os.MkdirAll(filepath.Join(repo, "ci"), 0o755)
	os.WriteFile(filepath.Join(repo, "ci", "build.sh"), []byte("make\n"), 0o644)
	hangtest.FIFO(t, filepath.Join(repo, "ci", "teardown.sh"))
	code, out, stderr := kg(t, "", "guard", "--format", "json", repo)
	if code != exitFail {
		t.Fatalf("exit %d, want %d: %s%s", code, exitFail, stderr, out)
	}
	if f := decode(t, out).Gates[0].Findings; len(f) == 0 || f[0].Severity != result.Error || f[0].File != "ci/teardown.sh" {
		t.Errorf("findings %+v, want an error naming ci/teardown.sh", f)
	}
}

// A change is judged with the guard settings of its base, never its own: a pull request
// that adds a script stopping the machine and, in the same change, excludes it, skips it or
// disables the rule in kernel-gate.yml passed the guard it had changed. A notice says the
// change's own settings were not used; settings the base already had still apply.
func TestGuardDiffJudgedWithTheBaseConfig(t *testing.T) {
	const stop = "#!/bin/bash\nsudo shutdown -h now\n"
	for _, tc := range []struct {
		name       string
		base, head map[string]string
		code       int
		notice     bool
	}{
		{"the change excludes its own script",
			map[string]string{"kernel-gate.yml": "cuda: \">=12\"\n"},
			map[string]string{"kernel-gate.yml": "cuda: \">=12\"\nguard:\n  exclude: [scripts]\n", "scripts/stop.sh": stop}, exitFail, true},
		{"the change disables the rule",
			map[string]string{"kernel-gate.yml": "cuda: \">=12\"\n"},
			map[string]string{"kernel-gate.yml": "cuda: \">=12\"\nguard:\n  disable: [host-shutdown]\n", "scripts/stop.sh": stop}, exitFail, true},
		{"the change makes the rule a warning",
			map[string]string{"kernel-gate.yml": "guard:\n  unjudged: fail\n"},
			map[string]string{"kernel-gate.yml": "guard:\n  unjudged: fail\n  warn: [host-shutdown]\n", "scripts/stop.sh": stop}, exitFail, true},
		{"the change adds the config",
			map[string]string{"README.md": "x\n"},
			map[string]string{"kernel-gate.yml": "guard:\n  exclude: [scripts]\n", "scripts/stop.sh": stop}, exitFail, true},
		{"the base's own exclusion applies",
			map[string]string{"kernel-gate.yml": "guard:\n  exclude: [vendor]\n"},
			map[string]string{"vendor/stop.sh": stop}, exitPass, false},
		{"a comment changed in the guard section is no change",
			map[string]string{"kernel-gate.yml": "guard:\n  exclude: [vendor] # old\n"},
			map[string]string{"kernel-gate.yml": "guard:\n  # third-party code\n  exclude: [vendor]\n", "vendor/stop.sh": stop}, exitPass, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := gittest.New(t)
			repo.Write(tc.base)
			repo.Commit("base")
			repo.Write(tc.head)
			repo.Commit("head")
			code, out, stderr := kg(t, "", "guard", "--config", filepath.Join(repo.Dir, "kernel-gate.yml"), "--repo", repo.Dir, "--diff", "HEAD~1...HEAD", "--format", "json")
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s\n%s", code, tc.code, stderr, out)
			}
			noticed := strings.Contains(out, "the change edits the guard's settings")
			if noticed != tc.notice {
				t.Errorf("notice of the changed settings: %v, want %v\n%s", noticed, tc.notice, out)
			}
		})
	}
}
