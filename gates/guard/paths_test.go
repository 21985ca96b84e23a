package guard

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/gitdiff"
	"github.com/kernel-gate/kernel-gate/internal/gittest"
	"github.com/kernel-gate/kernel-gate/internal/hangtest"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

const shutdownWorkflow = "on: push\njobs:\n  a:\n    runs-on: [self-hosted, gpu]\n    steps:\n      - run: sudo shutdown -h now\n      - run: bash ci/stop\n"

// writeTree writes files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// shutdownRepo is a repository whose workflow holds `sudo shutdown -h now` and runs
// ci/stop (a file named like no code) by its name.
func shutdownRepo(t *testing.T) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "repo")
	writeTree(t, repo, map[string]string{
		".git/HEAD":                "ref: refs/heads/main\n",
		".github/workflows/ci.yml": shutdownWorkflow,
		"ci/stop":                  "sudo reboot\n",
		"README.md":                "# repo\n",
		"src/kernel.cu":            "__global__ void k() {}\n",
	})
	return repo
}

func errorsOf(g result.Gate) []string {
	var out []string
	for _, f := range g.Findings {
		if f.Severity == result.Error {
			out = append(out, f.File+" "+f.Metric)
		}
	}
	return out
}

func noticesOf(g result.Gate) string {
	var out []string
	for _, f := range g.Findings {
		if f.Severity == result.Notice {
			out = append(out, f.Message)
		}
	}
	return strings.Join(out, "\n")
}

func symlinkOrSkip(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
}

// TestScanPathsPointedAnywhere: `kernel-gate guard .github` (and every other way of
// pointing at a workflow: its directory, the file, from inside .github, through a link)
// scanned nothing and passed, because what a file is was decided from its path below the
// directory named. Each must find the workflow's `sudo shutdown -h now`, by the
// workflow's path in the repository, and the script it runs by its name from the
// repository's root.
func TestScanPathsPointedAnywhere(t *testing.T) {
	repo := shutdownRepo(t)
	outside := t.TempDir()
	symlinkOrSkip(t, filepath.Join(repo, ".github"), filepath.Join(outside, "gh"))
	symlinkOrSkip(t, filepath.Join(repo, ".github", "workflows", "ci.yml"), filepath.Join(outside, "wf.yml"))
	symlinkOrSkip(t, ".github", filepath.Join(repo, "gh-link"))
	both := []string{".github/workflows/ci.yml host-shutdown", "ci/stop host-reboot"}
	for _, tt := range []struct {
		name, cwd, path string
		want            []string
	}{
		{"the repository", ".", ".", both},
		{"the repository's absolute root, as the action names it", ".github", repo, both},
		{".github", ".", ".github", both},
		{".github/", ".", ".github/", both},
		{".github/workflows", ".", ".github/workflows", both},
		{"the workflow", ".", ".github/workflows/ci.yml", both},
		{"./.github", ".", "./.github", both},
		{"absolute .github", ".", filepath.Join(repo, ".github"), both},
		{"absolute workflow", ".", filepath.Join(repo, ".github/workflows/ci.yml"), both},
		{"from inside .github", ".github", ".", both},
		{"from inside workflows", ".github/workflows", ".", both},
		{"the file from inside workflows", ".github/workflows", "ci.yml", both},
		{"../.github from a subdirectory", "src", "../.github", both},
		{"../../.github from inside workflows", ".github/workflows", "../../.github", both},
		{"a link in the repository to .github", ".", "gh-link", both},
		{"a link elsewhere to .github", ".", filepath.Join(outside, "gh"), both},
		// A link to the workflow, named like no workflow, outside the repository: read by
		// its keys, as it was named on the command line.
		{"a link elsewhere to the workflow", ".", filepath.Join(outside, "wf.yml"), []string{filepath.ToSlash(filepath.Join(outside, "wf.yml")) + " host-shutdown"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(filepath.Join(repo, tt.cwd))
			g, err := ScanPaths([]string{tt.path}, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if g.Verdict != result.Fail {
				t.Errorf("verdict %s, want fail: %+v", g.Verdict, g.Findings)
			}
			if got := errorsOf(g); !slices.Equal(got, tt.want) {
				t.Errorf("errors %q, want %q", got, tt.want)
			}
		})
	}
}

// TestScanPathsOutsideRepository: a path in no repository is judged from the path itself:
// a .github/workflows/x.yml in it is a workflow, and a YAML file named on the command line
// is read by its keys; findings keep the path as named.
func TestScanPathsOutsideRepository(t *testing.T) {
	dir := t.TempDir()
	if _, ok := repoRoot(dir); ok {
		t.Skip("the temporary directory is inside a git repository")
	}
	writeTree(t, dir, map[string]string{
		"proj/.github/workflows/ci.yml": shutdownWorkflow,
		"proj/ci/stop":                  "sudo reboot\n",
		"loose/gpu.yaml":                shutdownWorkflow,
		"loose/action-copy.yml":         "runs:\n  using: composite\n  steps:\n    - shell: bash\n      run: sudo poweroff\n",
		"loose/values.yml":              "jobs: 3\nname: sudo reboot\n",
	})
	t.Chdir(dir)
	wf := []string{"proj/.github/workflows/ci.yml host-shutdown", "proj/ci/stop host-reboot"}
	for _, tt := range []struct {
		name, path string
		want       []string
	}{
		{"the project", "proj", wf},
		{".github", "proj/.github", wf},
		{".github/workflows", "proj/.github/workflows", wf},
		{"the workflow", "proj/.github/workflows/ci.yml", wf},
		{"absolute .github", filepath.Join(dir, "proj/.github"), []string{
			filepath.ToSlash(filepath.Join(dir, "proj/.github/workflows/ci.yml")) + " host-shutdown",
			filepath.ToSlash(filepath.Join(dir, "proj/ci/stop")) + " host-reboot"}},
		{"a workflow by its keys", "loose/gpu.yaml", []string{"loose/gpu.yaml host-shutdown"}},
		{"an action by its keys", "loose/action-copy.yml", []string{"loose/action-copy.yml host-shutdown"}},
		{"a directory of YAML read by its keys", "loose", []string{"loose/action-copy.yml host-shutdown", "loose/gpu.yaml host-shutdown"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, err := ScanPaths([]string{tt.path}, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if got := errorsOf(g); !slices.Equal(got, tt.want) || g.Verdict != result.Fail {
				t.Errorf("verdict %s, errors %q, want fail with %q", g.Verdict, got, tt.want)
			}
		})
	}
	// values.yml has no jobs mapping: not a workflow, and named as not read.
	g, err := ScanPaths([]string{"loose/values.yml"}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict == result.Fail || !strings.Contains(noticesOf(g), "loose/values.yml") {
		t.Errorf("values.yml: verdict %s, notices %q", g.Verdict, noticesOf(g))
	}
}

// TestScanPathsCannotRead: a file the guard should read but cannot (a FIFO, which even
// root cannot read without a writer; a link that leads nowhere; a file or directory
// without read permission) fails the gate, naming it, whatever its name.
func TestScanPathsCannotRead(t *testing.T) {
	type setup func(t *testing.T, repo string) string // makes the file; returns its path
	mkfifo := func(rel string) setup {
		return func(t *testing.T, repo string) string {
			p := filepath.Join(repo, filepath.FromSlash(rel))
			os.MkdirAll(filepath.Dir(p), 0o755)
			hangtest.FIFO(t, p)
			return rel
		}
	}
	unreadable := func(rel string, dir bool) setup {
		return func(t *testing.T, repo string) string {
			if os.Geteuid() == 0 {
				t.Skip("root reads a file without read permission")
			}
			p := filepath.Join(repo, filepath.FromSlash(rel))
			writeTree(t, repo, map[string]string{rel: "sudo reboot\n"})
			if dir {
				p = filepath.Dir(p)
				rel = filepath.ToSlash(filepath.Dir(filepath.FromSlash(rel)))
			}
			os.Chmod(p, 0)
			t.Cleanup(func() { os.Chmod(p, 0o755) })
			return rel
		}
	}
	dangling := func(rel string) setup {
		return func(t *testing.T, repo string) string {
			p := filepath.Join(repo, filepath.FromSlash(rel))
			os.MkdirAll(filepath.Dir(p), 0o755)
			symlinkOrSkip(t, "../out/generated.sh", p)
			return rel
		}
	}
	for _, tt := range []struct {
		name string
		make setup
	}{
		{"a FIFO named like a script", mkfifo("scripts/stop.sh")},
		{"a FIFO named like a workflow", mkfifo(".github/workflows/gpu.yml")},
		{"a FIFO named like nothing", mkfifo("tools/pipe")},
		{"a link to nowhere named like a script", dangling("scripts/stop.sh")},
		{"an unreadable script", unreadable("scripts/stop.sh", false)},
		{"an unreadable file named like nothing", unreadable("tools/reap", false)},
		{"an unreadable directory", unreadable("scripts/x/stop.sh", true)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			repo := filepath.Join(t.TempDir(), "repo")
			writeTree(t, repo, map[string]string{".git/HEAD": "x\n", ".github/workflows/ok.yml": "on: push\njobs:\n  a:\n    steps:\n      - run: make\n"})
			rel := tt.make(t, repo)
			for _, p := range []string{repo, filepath.Join(repo, filepath.Dir(filepath.FromSlash(rel)))} {
				g, err := ScanPaths([]string{p}, Config{})
				if err != nil {
					t.Fatal(err)
				}
				if got := errorsOf(g); g.Verdict != result.Fail || !slices.Contains(got, rel+" ") {
					t.Errorf("guard %s: verdict %s, errors %q, want fail naming %s", p, g.Verdict, got, rel)
				}
			}
		})
	}
	// A FIFO run by its name from a workflow, outside the directory named.
	repo := filepath.Join(t.TempDir(), "repo")
	writeTree(t, repo, map[string]string{".git/HEAD": "x\n", ".github/workflows/ci.yml": "on: push\njobs:\n  a:\n    steps:\n      - run: bash ci/pipe\n"})
	mkfifo("ci/pipe")(t, repo)
	g, err := ScanPaths([]string{filepath.Join(repo, ".github")}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if got := errorsOf(g); g.Verdict != result.Fail || !slices.Equal(got, []string{"ci/pipe "}) {
		t.Errorf("a FIFO run by its name: verdict %s, errors %q", g.Verdict, got)
	}
}

// TestScanPathsNamesWhatItSkips: a file named or found that the guard did not read is
// named in a notice (at most ten a reason, those named on the command line first) and in
// the gate's data; a pass never hides one.
func TestScanPathsNamesWhatItSkips(t *testing.T) {
	repo := shutdownRepo(t)
	files := map[string]string{"vendor/lib/x.sh": "reboot\n", "third_party/y.sh": "reboot\n", "docs/guide.md": "sudo reboot\n",
		"notes/txt\u202egnp.md": "x\n"} // a name that displays reversed is named escaped
	for i := range 25 {
		files["src/k"+string(rune('a'+i))+".cu"] = "__global__ void k() {}\n"
	}
	writeTree(t, repo, files)
	os.Remove(filepath.Join(repo, ".github/workflows/ci.yml"))
	t.Chdir(repo)
	g, err := ScanPaths([]string{"README.md", "src/ky.cu", "."}, Config{Exclude: []string{"third_party"}})
	if err != nil {
		t.Fatal(err)
	}
	notices := noticesOf(g)
	for _, want := range []string{
		`3 path(s) not read, prose (Markdown, text, docs/), never blocked: README.md, docs/guide.md, notes/txt\u202egnp.md (1 of them named on the command line)`,
		"27 path(s) not read, not a shell script, workflow, composite action, Makefile, Dockerfile or Python file (by its path, first line and mode), and run by none of them by its name: src/ky.cu, ci/stop, src/ka.cu, src/kb.cu, src/kc.cu, src/kd.cu, src/ke.cu, src/kernel.cu, src/kf.cu, src/kg.cu and 17 more (1 of them named on the command line)",
		"1 path(s) not read, excluded by guard.exclude: third_party/",
		"1 path(s) not read, in a directory the guard does not enter",
		": vendor/",
	} {
		if !strings.Contains(notices, want) {
			t.Errorf("notices lack %q:\n%s", want, notices)
		}
	}
	if strings.Contains(notices, ".git") {
		t.Errorf("notices name .git:\n%s", notices)
	}
	var data Data
	if err := json.Unmarshal(g.Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.SkippedTotal != 32 || len(data.Skipped) != 32 || data.Skipped[0] != (Skipped{Path: "README.md", Why: whyProse, Given: true}) {
		t.Errorf("data: %d skipped, %+v", data.SkippedTotal, data.Skipped[:min(3, len(data.Skipped))])
	}
}

// TestScanDiffFromAnywhere: --diff pointed at .github (or any directory of the
// repository), even where git's diff.relative would make the change's paths relative to
// it, judges the change by the repository's paths; a changed file it does not read is
// named.
func TestScanDiffFromAnywhere(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := gittest.New(t)
	repo.Write(map[string]string{".github/workflows/ci.yml": "on: push\njobs:\n  a:\n    steps:\n      - run: make\n"})
	repo.Commit("base")
	repo.Write(map[string]string{".github/workflows/ci.yml": shutdownWorkflow, "NOTES.md": "sudo reboot\n"})
	repo.Commit("head")
	for _, relative := range []string{"false", "true"} {
		repo.Git("config", "diff.relative", relative)
		for _, at := range []string{".", ".github", ".github/workflows"} {
			g, err := ScanDiff(t.Context(), filepath.Join(repo.Dir, at), gitdiff.Spec{Base: "HEAD~1", Head: "HEAD"}, Config{})
			if err != nil {
				t.Fatalf("diff.relative=%s, repo %s: %v", relative, at, err)
			}
			if got := errorsOf(g); g.Verdict != result.Fail || !slices.Equal(got, []string{".github/workflows/ci.yml host-shutdown"}) {
				t.Errorf("diff.relative=%s, repo %s: verdict %s, errors %q", relative, at, g.Verdict, got)
			}
			if n := noticesOf(g); relative == "false" && !strings.Contains(n, "NOTES.md") {
				t.Errorf("diff.relative=%s, repo %s: notices do not name NOTES.md: %q", relative, at, n)
			}
		}
	}
}

// TestScanDiffMovedFiles: a change that adds no line can still make a file run. A workflow
// kept outside .github and renamed (or copied) into .github/workflows, a script made
// executable, are judged whole; a file renamed where it runs no differently is not.
func TestScanDiffMovedFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	for _, tc := range []struct {
		name   string
		change []string // git commands that make head
		want   []string
	}{
		{"a pure rename into .github/workflows", []string{"mv docs/notes.yml .github/workflows/notes.yml"},
			[]string{".github/workflows/notes.yml host-shutdown"}},
		{"a copy into .github/workflows", []string{"cp docs/notes.yml .github/workflows/notes.yml"},
			[]string{".github/workflows/notes.yml host-shutdown"}},
		{"a rename into .github/workflows with one line changed", []string{"mv docs/notes.yml .github/workflows/notes.yml", "sed -i s/name:.x/name:\\ y/ .github/workflows/notes.yml"},
			[]string{".github/workflows/notes.yml host-shutdown"}},
		{"a script made executable", []string{"chmod +x tools/stop"},
			[]string{"tools/stop host-shutdown"}},
		{"a document renamed", []string{"mv docs/README.md docs/GUIDE.md"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := gittest.New(t)
			sh := func(script string) {
				t.Helper()
				cmd := exec.Command("sh", "-c", script)
				cmd.Dir = repo.Dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", script, err, out)
				}
			}
			repo.Write(map[string]string{
				"docs/notes.yml":           "name: x\non: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: sudo shutdown -h now\n",
				"docs/README.md":           "To stop the machine: sudo shutdown -h now\n",
				"tools/stop":               "#!/bin/sh\nsudo shutdown -h now\n",
				".github/workflows/ci.yml": "on: push\njobs:\n  a:\n    steps:\n      - run: make\n",
			})
			repo.Commit("base")
			for _, c := range tc.change {
				sh(c)
			}
			repo.Commit("head")
			g, err := ScanDiff(t.Context(), repo.Dir, gitdiff.Spec{Base: "HEAD~1", Head: "HEAD"}, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if got := errorsOf(g); !slices.Equal(got, tc.want) {
				t.Errorf("verdict %s, errors %q, want %q", g.Verdict, got, tc.want)
			}
			if (len(tc.want) > 0) != (g.Verdict == result.Fail) {
				t.Errorf("verdict %s with errors %q", g.Verdict, tc.want)
			}
		})
	}
}
