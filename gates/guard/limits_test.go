package guard

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/guard/internal/guardtest"
	"github.com/kernel-gate/kernel-gate/gates/guard/shell"
	"github.com/kernel-gate/kernel-gate/internal/gitdiff"
	"github.com/kernel-gate/kernel-gate/internal/gittest"
	"github.com/kernel-gate/kernel-gate/internal/hangtest"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// deepNesting is a million nested constructs (within the size cap) for every front-end:
// each is read as an unjudged warning on line; passes bounds the work it may cost, in
// passes over the whole file (0: 4, a text read within a text, a recipe expanded then
// parsed).
func deepNesting() []struct {
	name, path, src string
	line, passes    int
} {
	const n = 1000000
	parens := strings.Repeat("(", n) + "reboot" + strings.Repeat(")", n)
	subst := strings.Repeat("$(", n/2) + "reboot" + strings.Repeat(")", n/2)
	return []struct {
		name, path, src string
		line, passes    int
	}{
		{"parentheses", "x.sh", "echo ok\n" + parens + "\n", 2, 0},
		{"command substitutions", "x.sh", "echo ok\necho " + subst + "\n", 2, 0},
		{"quoted substitutions", "x.sh", "echo " + strings.Repeat("\"$(", n/3) + "x" + strings.Repeat(")\"", n/3) + "\n", 1, 0},
		{"backquotes and braces", "x.sh", strings.Repeat("{ ", n/2) + "reboot;" + strings.Repeat(" }", n/2)[:n/4] + "\n", 1, 0},
		{"if blocks", "x.sh", strings.Repeat("if true; then\n", n/14) + "reboot\n", shell.MaxShellNesting + 1, 0},
		{"arithmetic", "x.sh", "echo $((" + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "))\n", 1, 0},
		{"parameter expansions", "x.sh", "echo " + strings.Repeat("${a:-", n/5) + "x" + strings.Repeat("}", n/5) + "\n", 1, 0},
		{"a pipeline", "x.sh", strings.Repeat("a|", n) + "reboot\n", 1, 0},
		{"an && chain", "x.sh", strings.Repeat("a&&", n/2) + "reboot\n", 1, 0},
		{"a here-document", "x.sh", "cat <<E\n" + subst + "\nE\nreboot\n", 2, 0},
		{"bash -c", "x.sh", "echo ok\nbash -c '" + parens + "'\n", 2, 0},
		{"workflow run", ".github/workflows/ci.yml", "jobs:\n  a:\n    steps:\n      - run: " + parens + "\n", 4, 0},
		{"workflow block", ".github/workflows/ci.yml", "jobs:\n  a:\n    steps:\n      - run: |\n          echo ok\n          " + subst + "\n", 6, 0},
		{"composite action", "action.yml", "runs:\n  steps:\n    - shell: bash\n      run: " + parens + "\n", 4, 0},
		{"Makefile recipe", "Makefile", "all:\n\techo ok\n\t" + parens + "\n", 3, 0},
		// Each $(shell ...) level that make's bound lets through is expanded, searched for
		// $(shell ...) and parsed: three passes over what it holds, maxMakeNesting times.
		{"make $(shell)", "Makefile", "X := " + strings.Repeat("$(shell ", n/8) + "reboot" + strings.Repeat(")", n/8) + "\n", 1, 3 * (shell.MaxMakeNesting + 1)},
		{"Dockerfile RUN", "Dockerfile", "FROM x\nRUN " + parens + "\n", 2, 0},
		{"Dockerfile exec form", "Dockerfile", "FROM x\nRUN [\"sh\", \"-c\", \"" + parens + "\"]\n", 2, 0},
		{"Python brackets", "x.py", "import os\nx = " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\nos.system(x)\n", 2, 0},
		{"Python calls", "x.py", "import os\nos.system(" + strings.Repeat("f(", n/2) + strings.Repeat(")", n/2) + ")\n", 2, 0},
		{"Python shell string", "x.py", "import os\nos.system('" + parens + "')\n", 2, 0},
		{"YAML", ".github/workflows/ci.yml", "jobs: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n", 1, 0},
	}
}

// TestDeepNesting feeds every front-end a million nested constructs (deepNesting): each
// must come back without a stack overflow, as an unjudged warning that names the file and
// the line, and the gate must fail on it. Its work must stay bounded: the bytes of text the
// front-ends went over (shell.File.Scanned) within the case's passes over the file, however
// deep it nests. How fast that is, BenchmarkDeepNesting measures; the 2 minutes here only
// keep a scan that hangs from hanging the suite.
func TestDeepNesting(t *testing.T) {
	for _, tt := range deepNesting() {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.src) > maxFileSize {
				t.Fatalf("bad test: %d bytes is over the cap", len(tt.src))
			}
			type answer struct {
				fs      []Finding
				ws      []Warning
				scanned int
			}
			r := hangtest.Within(t, 2*time.Minute, "the scan", func() answer {
				fs, ws, scanned := scanFile(tt.path, []byte(tt.src), Config{})
				return answer{fs, ws, scanned}
			})
			passes := cmp.Or(tt.passes, 4)
			if r.scanned > passes*len(tt.src) {
				t.Errorf("went over %d bytes of text, %.1f times the file's %d: want at most %d times",
					r.scanned, float64(r.scanned)/float64(len(tt.src)), len(tt.src), passes)
			}
			var un []Warning
			for _, w := range r.ws {
				if w.Unjudged {
					un = append(un, w)
				}
			}
			if len(un) == 0 || un[0].Path != tt.path || un[0].Line != tt.line {
				t.Fatalf("want an unjudged warning on %s:%d, got %+v (findings:%s)", tt.path, tt.line, r.ws, guardtest.Describe(r.fs))
			}
			g, err := Evaluate(r.fs, r.ws, 1, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if g.Verdict != result.Fail {
				t.Errorf("verdict %s, want fail: %+v", g.Verdict, g.Findings)
			}
		})
	}
}

// TestNestingWithinLimits: what real scripts nest (and what only looks like nesting in
// comments, quotes and here-documents) is read as usual.
func TestNestingWithinLimits(t *testing.T) {
	var b strings.Builder
	for range 2000 { // each line on its own: nothing accumulates
		b.WriteString("echo '((((((' \"((( $(echo ')))') \" $'(\\'(' # (((( {{{ if case do\n")
		b.WriteString("case $x in a) echo x;; (b) echo '(';; esac 2>/dev/null || true\n")
		b.WriteString("f() { if [ -n \"${a:-(}\" ]; then for i in 1; do echo $((i+1)); done; fi; }\n")
	}
	b.WriteString("cat <<'EOF'\n" + strings.Repeat("if (( ( $( {\n", 3000) + "EOF\n")
	b.WriteString("cat <<EOF\n" + strings.Repeat("if ( { do case\n", 3000) + "EOF\n")
	b.WriteString("apt-get install -y " + strings.Repeat("a && ", 300) + "b\n")
	b.WriteString("sudo reboot\n")
	fs, ws := ScanFile("x.sh", []byte(b.String()), Config{})
	for _, w := range ws {
		t.Errorf("warning %+v", w)
	}
	if len(fs) != 1 || fs[0].Rule != "host-reboot" {
		t.Errorf("findings:%s", guardtest.Describe(fs))
	}
	deep := strings.Repeat("( ", 400) + "sudo reboot" + strings.Repeat(" )", 400) + "\n"
	if fs, ws := ScanFile("x.sh", []byte(deep), Config{}); len(ws) != 0 || len(fs) != 1 {
		t.Errorf("400 levels: %v%s", ws, guardtest.Describe(fs))
	}
}

// TestUnreadable: a file that cannot be read whole fails the gate, naming it and why; a
// byte that is not UTF-8 is no reason to stop reading.
func TestUnreadable(t *testing.T) {
	for _, tt := range []struct{ path, src, rule string }{
		{"x.sh", "echo \xff\nsudo shutdown -h now\n", "host-shutdown"},
		{"x.sh", "echo '\xfe\xff'; sudo reboot\n", "host-reboot"},
		{".github/workflows/ci.yml", "jobs:\n  a:\n    steps:\n      - run: |\n          echo \xff\xfe\n          sudo shutdown -h now\n", "host-shutdown"},
		{".github/workflows/ci.yml", "jobs:\n  a:\n    steps:\n      - run: \"echo \xff && sudo poweroff\"\n", "host-shutdown"},
		{"Makefile", "all:\n\techo \xff\n\tsudo reboot\n", "host-reboot"},
		{"Dockerfile", "FROM x\nRUN echo \xff && reboot\n", "host-reboot"},
		{"x.py", "import os\n# \xff\nos.system('reboot')\n", "host-reboot"},
	} {
		fs, ws := ScanFile(tt.path, []byte(tt.src), Config{})
		if len(fs) != 1 || fs[0].Rule != tt.rule || len(ws) != 0 {
			t.Errorf("%s %q: %v%s", tt.path, tt.src, ws, guardtest.Describe(fs))
		}
	}
	big := "#!/bin/sh\n" + strings.Repeat("# padding\n", maxFileSize/10) + "shutdown -h now\n"
	for _, tt := range []struct{ path, src, msg string }{
		{"x.sh", big, "more than the"},
		{".github/workflows/ci.yml", "jobs: {}\n" + big, "more than the"},
		{"x.sh", "echo hi\x00\nshutdown -h now\n", "NUL byte, first on line 1"},
		{"Makefile", "all:\n\techo \x00\n", "named like a Makefile"},
	} {
		fs, ws := ScanFile(tt.path, []byte(tt.src), Config{})
		if len(ws) != 1 || !ws[0].Unjudged || !strings.Contains(ws[0].Message, tt.msg) {
			t.Errorf("%s: %+v", tt.path, ws)
			continue
		}
		g, _ := Evaluate(fs, ws, 1, Config{})
		if g.Verdict != result.Fail || len(g.Findings) != 1 || g.Findings[0].Severity != result.Error || g.Findings[0].File != tt.path ||
			!strings.Contains(g.Findings[0].Message, "the guard cannot judge this file") || !strings.Contains(g.Findings[0].Message, "guard.skip") {
			t.Errorf("%s: gate %s %+v", tt.path, g.Verdict, g.Findings)
		}
		warn := parseConfig(t, "guard:\n  unjudged: warn\n")
		if g, _ := Evaluate(fs, ws, 1, warn); g.Verdict != result.Pass || g.Findings[0].Severity != result.Warning ||
			!strings.Contains(g.Findings[0].Message, "kernel-gate.yml:2: guard.unjudged: warn") {
			t.Errorf("%s with unjudged: warn: %s %+v", tt.path, g.Verdict, g.Findings)
		}
	}
	// guard.skip: a vendored tree may go unjudged; its findings still count.
	skip := parseConfig(t, "guard:\n  skip:\n    - \"third_party/**\"\n")
	if err := validate(skip); err != nil {
		t.Fatal(err)
	}
	fs, ws := ScanFile("third_party/x/run.sh", []byte("a\x00"), skip)
	if g, _ := Evaluate(fs, ws, 1, skip); g.Verdict != result.Pass || len(ws) != 1 || !ws[0].Skipped ||
		!strings.Contains(ws[0].Message, "kernel-gate.yml:3: guard.skip lets it go unjudged") {
		t.Errorf("skipped: %s %+v", g.Verdict, ws)
	}
	fs, ws = ScanFile("third_party/x/run.sh", []byte("sudo reboot\n"), skip)
	if g, _ := Evaluate(fs, ws, 1, skip); g.Verdict != result.Fail {
		t.Errorf("a finding under guard.skip must still fail: %s", g.Verdict)
	}
	// A shell syntax error stays a warning: the shell stops there too.
	fs, ws = ScanFile("x.sh", []byte("echo ok\nif true; then\n"), Config{})
	if g, _ := Evaluate(fs, ws, 1, Config{}); g.Verdict != result.Pass || len(ws) != 1 || ws[0].Unjudged {
		t.Errorf("syntax error: %s %+v", g.Verdict, ws)
	}
}

func TestConfigUnjudgedAndSeverity(t *testing.T) {
	for _, tt := range []struct{ yaml, err string }{
		{"guard:\n  unjudged: warn\n  skip: [vendor]\n  warn: [gpu-reset]\n  block: [gpu-clocks]\n", ""},
		{"guard:\n  unjudged: maybe\n", `kernel-gate.yml:2: guard.unjudged: "maybe" must be fail`},
		{"guard:\n  skip:\n    - a\n    - \"\"\n", "kernel-gate.yml:4: guard.skip[1]: empty path glob"},
		{"guard:\n  warn:\n    - gpu-clock\n", `kernel-gate.yml:3: guard.warn: unknown rule ID "gpu-clock" (did you mean "gpu-clocks"?)`},
		{"guard:\n  block: [nope-nope]\n", `kernel-gate.yml:2: guard.block: unknown rule ID "nope-nope"`},
		{"guard:\n  warn: [gpu-reset]\n  block: [gpu-reset]\n", "kernel-gate.yml:3: guard.block[0]: gpu-reset is also in guard.warn"},
	} {
		err := validate(parseConfig(t, tt.yaml))
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%q: error %v, want %q", tt.yaml, err, tt.err)
		}
	}
	// GPU clock and power-limit changes warn by default; block makes them refused, warn
	// demotes another rule.
	src := "sudo nvidia-smi -lgc 1410\nsudo nvidia-smi -pl 300\nnvidia-smi -r\nnvidia-smi -pm 1\n"
	fs, ws := ScanFile("x.sh", []byte(src), Config{})
	if len(fs) != 3 {
		t.Fatalf("findings:%s", guardtest.Describe(fs))
	}
	sev := func(cfg Config) (result.Verdict, []string) {
		g, _ := Evaluate(fs, ws, 1, cfg)
		var out []string
		for _, f := range g.Findings {
			out = append(out, f.Metric+":"+string(f.Severity))
		}
		return g.Verdict, out
	}
	if v, got := sev(Config{}); v != result.Fail || !slices.Equal(got, []string{"gpu-clocks:warning", "gpu-clocks:warning", "gpu-reset:error"}) {
		t.Errorf("default: %s %v", v, got)
	}
	if v, got := sev(parseConfig(t, "guard:\n  warn: [gpu-reset]\n")); v != result.Pass || !slices.Equal(got, []string{"gpu-clocks:warning", "gpu-clocks:warning", "gpu-reset:warning"}) {
		t.Errorf("warn: %s %v", v, got)
	}
	if v, got := sev(parseConfig(t, "guard:\n  block: [gpu-clocks]\n")); v != result.Fail || !slices.Equal(got, []string{"gpu-clocks:error", "gpu-clocks:error", "gpu-reset:error"}) {
		t.Errorf("block: %s %v", v, got)
	}
}

// TestTreeLinksAndScriptsByName: symbolic links are followed within the repository, never
// out of it, and a file run by its name is judged whatever it is called.
func TestTreeLinksAndScriptsByName(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write := func(rel, content string, mode os.FileMode) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, rel string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Skip("no symbolic links here:", err)
		}
	}
	write("lib/stop.inc", "sudo shutdown -h now\n", 0o644)
	link("../lib/stop.inc", "scripts/stop.sh")                              // a link named like a script: judged as one
	write("scripts/ok.sh", "echo ok\n", 0o644)                              //
	link("ok.sh", "scripts/same.sh")                                        // the same file, judged once
	os.WriteFile(filepath.Join(outside, "x.sh"), []byte("reboot\n"), 0o644) //
	link(filepath.Join(outside, "x.sh"), "scripts/out.sh")                  // out of the repository: cannot be judged
	link(filepath.Join(outside, "x.sh"), "data/blob")                       // out, and named like no code: nothing
	link("../lib", "scripts/libdir")                                        // a directory: its files are judged where they are
	link("missing.sh", "scripts/broken.sh")                                 // does not resolve: cannot be judged
	write("ci/teardown", "gcloud compute instances delete gpu-1 --zone z\n", 0o644)
	write("ci/notes.txt", "sudo nvidia-smi -r\n", 0o644)
	write("tools/reap", "sudo poweroff\n", 0o755) // executable, no extension, no shebang: sh reads it
	write("tools/data", "sudo poweroff\n", 0o644) // not executable: data
	write(".github/workflows/ci.yml", "jobs:\n  a:\n    steps:\n      - run: bash ci/teardown\n      - run: sh ./ci/notes.txt\n      - run: ./tools/reap && source scripts/ok.sh\n", 0o644)
	fs, ws, files, err := ScanTree(root, Config{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, f.Path+":"+f.Rule)
	}
	want := []string{"ci/notes.txt:gpu-reset", "ci/teardown:gcp-instance-delete", "scripts/stop.sh:host-shutdown", "tools/reap:host-shutdown"}
	if !slices.Equal(got, want) {
		t.Errorf("findings %v, want %v", got, want)
	}
	var gotW []string
	for _, w := range ws {
		gotW = append(gotW, fmt.Sprintf("%s unjudged=%v", w.Path, w.Unjudged))
	}
	wantW := []string{"data/blob unjudged=true", "scripts/broken.sh unjudged=true", "scripts/out.sh unjudged=true"}
	if !slices.Equal(gotW, wantW) {
		t.Errorf("warnings %v, want %v (%+v)", gotW, wantW, ws)
	}
	if files != 6 {
		t.Errorf("files = %d, want 6", files)
	}
}

// TestDiffLinksAndScriptsByName: --diff judges what a changed line runs by its name, a
// changed link as the file it points to, a changed extensionless executable as sh.
func TestDiffLinksAndScriptsByName(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := gittest.New(t)
	dir := repo.Dir
	repo.Write(map[string]string{
		"ci/teardown":              "aws ec2 terminate-instances --instance-ids i-1\n",
		"ci/old":                   "sudo reboot\n",
		".github/workflows/ci.yml": "jobs:\n  a:\n    steps:\n      - run: bash ci/old\n",
	})
	repo.Commit("base")
	repo.Write(map[string]string{
		".github/workflows/ci.yml": "jobs:\n  a:\n    steps:\n      - run: bash ci/old\n      - run: bash ci/teardown\n",
		"tools/reap":               "sudo poweroff\n",
		"lib/stop.inc":             "nvidia-smi -r\n",
	})
	if err := os.Chmod(filepath.Join(dir, "tools", "reap"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../lib/stop.inc", filepath.Join(dir, "scripts", "stop.sh")); err != nil {
		os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
		if err := os.Symlink("../lib/stop.inc", filepath.Join(dir, "scripts", "stop.sh")); err != nil {
			t.Skip("no symbolic links here")
		}
	}
	os.Symlink("/etc/x.sh", filepath.Join(dir, "scripts", "out.sh"))
	repo.Commit("head")
	g, err := ScanDiff(t.Context(), dir, gitdiff.Spec{Base: "HEAD~1", Head: "HEAD"}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range g.Findings {
		got = append(got, fmt.Sprintf("%s %s %s", f.Severity, f.File, f.Metric))
	}
	want := []string{"error ci/teardown aws-ec2-terminate", "error scripts/stop.sh gpu-reset", "error tools/reap host-shutdown", "error scripts/out.sh "}
	if !slices.Equal(got, want) {
		t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAliasBomb: YAML aliases can make a small workflow a huge tree (10^9 nodes here); the
// guard reads runs-on and a matrix through them within a budget.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("x0: &a0 [w, w, w, w, w, w, w, w, w, w]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "x%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	b.WriteString("jobs:\n  j:\n    runs-on: *a8\n    strategy:\n      matrix:\n        k: *a8\n    steps:\n      - run: echo ${{ matrix.k }} && sudo reboot\n")
	start := time.Now()
	fs, _ := ScanFile(".github/workflows/x.yml", []byte(b.String()), Config{})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if len(fs) != 1 || fs[0].Rule != "host-reboot" {
		t.Errorf("findings:%s", guardtest.Describe(fs))
	}
}
