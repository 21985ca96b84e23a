package guard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/gates/guard/internal/guardtest"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

func TestAllowComments(t *testing.T) {
	src := `# kernel-gate: allow host-reboot the scratch VM, not the runner
sudo reboot
sudo reboot # kernel-gate: allow host-reboot same line
# kernel-gate: allow host-reboot two lines above does not count
echo x
sudo reboot
# kernel-gate: allow gpu-reset the wrong rule
sudo reboot
# kernel-gate: allow host-reboot,gpu-reset both, on purpose
sudo reboot; nvidia-smi -r
ssh gpu bash -s <<'EOF' # kernel-gate: allow gpu-reset nightly reset of the bench box
nvidia-smi -r
EOF
`
	guardtest.Run(t, ScanFile, []guardtest.Case{{Name: "shell", Src: src, Want: []guardtest.Want{
		{Line: 2, At: "sudo", Rule: "host-reboot", Cmd: "sudo reboot"},
		{Line: 3, At: "sudo", Rule: "host-reboot", Cmd: "sudo reboot"},
		{Line: 6, At: "sudo", Rule: "host-reboot", Cmd: "sudo reboot"},
		{Line: 8, At: "sudo", Rule: "host-reboot", Cmd: "sudo reboot"},
		{Line: 10, At: "sudo", Rule: "host-reboot", Cmd: "sudo reboot"},
		{Line: 10, At: "nvidia-smi", Rule: "gpu-reset", Cmd: "nvidia-smi -r"},
		{Line: 12, At: "nvidia-smi", Rule: "gpu-reset", Cmd: "ssh gpu bash -s <<'EOF' … nvidia-smi -r"},
	}, Allowed: []bool{true, true, false, false, true, true, true}}})
	fs, _ := ScanFile("x.sh", []byte(src), Config{})
	if fs[0].AllowReason != "the scratch VM, not the runner" {
		t.Errorf("reason %q", fs[0].AllowReason)
	}

	guardtest.Run(t, ScanFile, []guardtest.Case{
		{Name: "workflow", Path: guardtest.WorkflowPath, Src: "jobs:\n  a:\n    steps:\n      - run: |\n          # kernel-gate: allow gpu-clocks we pin clocks for stable timings\n          sudo nvidia-smi -lgc 1410\n",
			Want: []guardtest.Want{{Line: 6, At: "sudo", Rule: "gpu-clocks", Cmd: "sudo nvidia-smi -lgc 1410"}}, Allowed: []bool{true}},
		{Name: "python", Path: "x.py", Src: "import os\n# kernel-gate: allow host-shutdown the job VM is disposable\nos.system('poweroff')\n",
			Want: []guardtest.Want{{Line: 3, At: "poweroff", Rule: "host-shutdown", Cmd: "os.system('poweroff')"}}, Allowed: []bool{true}},
		{Name: "makefile", Path: "Makefile", Src: "x:\n\t# kernel-gate: allow gpu-reset reset before each benchmark\n\tnvidia-smi -r\n",
			Want: []guardtest.Want{{Line: 3, At: "nvidia-smi", Rule: "gpu-reset", Cmd: "nvidia-smi -r"}}, Allowed: []bool{true}},
	})
}

func TestAllowWarnings(t *testing.T) {
	src := "# kernel-gate: allow host-reboot\nsudo reboot\n# kernel-gate: allow no-such-rule because\n# kernel-gate: allow\n# kernel-gate: allow host-reboots typo\n"
	fs, ws := ScanFile("x.sh", []byte(src), Config{})
	if len(fs) != 1 || fs[0].Allowed {
		t.Errorf("an allow without a reason must not allow:%s", guardtest.Describe(fs))
	}
	wantMsgs := []struct {
		line int
		msg  string
	}{
		{1, "has no reason"},
		{3, `unknown rule "no-such-rule"`},
		{4, "names no rule"},
		{5, `(did you mean "host-reboot"?)`},
	}
	if len(ws) != len(wantMsgs) {
		t.Fatalf("warnings %+v", ws)
	}
	for i, w := range wantMsgs {
		if ws[i].Line != w.line || !strings.Contains(ws[i].Message, w.msg) {
			t.Errorf("warning %d = %+v, want line %d with %q", i, ws[i], w.line, w.msg)
		}
	}
}

func TestParseWarnings(t *testing.T) {
	tests := []struct {
		name, path, src string
		findings        int
		line            int
		msg             string
	}{
		{"unterminated quote after a finding", "x.sh", "echo ok\nsudo reboot\nfoo 'unterminated\n", 1, 3, "could not parse shell (reached EOF without closing quote"},
		{"unfinished if", "x.sh", "if true; then\n", 0, 1, "could not parse shell"},
		{"nested script", "x.sh", "echo ok\nbash -c 'if true'\n", 0, 2, "could not parse the script given to bash -c"},
		{"makefile recipe", "Makefile", "a:\n\techo 'oops\n", 0, 2, "could not parse the recipe line"},
		{"dockerfile run", "Dockerfile", "FROM x\nRUN echo $(\n", 0, 2, "could not parse the RUN command"},
		{"binary", "x.sh", "sudo reboot\x00\n", 0, 0, "binary file"},
		{"too large", "x.sh", "#" + strings.Repeat("x", maxFileSize) + "\n", 0, 0, "not scanned"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, ws := ScanFile(tt.path, []byte(tt.src), Config{})
			if len(fs) != tt.findings {
				t.Errorf("findings:%s", guardtest.Describe(fs))
			}
			if len(ws) != 1 || ws[0].Line != tt.line || !strings.Contains(ws[0].Message, tt.msg) || ws[0].Path != tt.path {
				t.Errorf("warnings %+v, want one at line %d with %q", ws, tt.line, tt.msg)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		path string
		head string
		want Kind
	}{
		{".github/workflows/ci.yml", "", KindWorkflow},
		{".github/workflows/ci.yaml", "", KindWorkflow},
		{"sub/.github/workflows/x.yml", "", KindWorkflow},
		{".github/workflows/nested/x.yml", "", KindNone},
		{"action.yml", "", KindAction},
		{".github/actions/teardown/action.yaml", "", KindAction},
		{"Makefile", "", KindMakefile},
		{"kernels/GNUmakefile", "", KindMakefile},
		{"build/rules.mk", "", KindMakefile},
		{"Dockerfile", "", KindDockerfile},
		{"docker/Dockerfile.cuda12", "", KindDockerfile},
		{"gpu.dockerfile", "", KindDockerfile},
		{"scripts/stop.sh", "", KindShell},
		{"scripts/stop.bash", "", KindShell},
		{"tools/reaper", "#!/usr/bin/env bash\nset -e\n", KindShell},
		{"tools/reaper", "#!/bin/sh\n", KindShell},
		{"tools/reaper", "#!/usr/bin/env -S dash -e\n", KindShell},
		{"tools/reaper", "#!/bin/zsh\n", KindShell},
		{"tools/launch", "#!/usr/bin/env python3\n", KindPython},
		{"tools/launch", "#!/usr/bin/python3.11 -u\n", KindPython},
		{"tools/launch.py", "", KindPython},
		{"tools/launch", "#!/usr/bin/env node\n", KindNone},
		{"README.md", "", KindDoc},
		{"docs/runbook.rst", "", KindDoc},
		{"notes.txt", "#!/bin/sh\n", KindDoc},
		{"docs/examples/stop", "", KindDoc},
		{"docs/examples/stop.sh", "", KindShell},
		{"kernel-gate.yml", "", KindNone},
		{"kernels/flash_fwd.cu", "", KindNone},
		{`scripts\win.sh`, "", KindShell},
	}
	for _, tt := range tests {
		if got := Classify(tt.path, []byte(tt.head)); got != tt.want {
			t.Errorf("Classify(%q, %q) = %q, want %q", tt.path, tt.head, got, tt.want)
		}
	}
}

func TestPathGlobs(t *testing.T) {
	tests := []struct {
		glob, path string
		want       bool
	}{
		{"third_party/**", "third_party/x/y.sh", true},
		{"third_party", "third_party/x/y.sh", true},
		{"third_party/", "third_party/y.sh", true},
		{"vendor", "a/vendor/b.sh", true},
		{"*.py", "tools/a.py", true},
		{"tools/*.py", "tools/sub/a.py", true},
		{"tools/*.py", "other/a.py", false},
		{"scripts/stop.sh", "scripts/stop.sh", true},
		{"scripts/stop.sh", "scripts/stop.sh.bak", false},
		{"./scripts", "scripts/a.sh", true},
	}
	for _, tt := range tests {
		if got := matchPathGlob(tt.glob, tt.path); got != tt.want {
			t.Errorf("matchPathGlob(%q, %q) = %v", tt.glob, tt.path, got)
		}
	}
}

type configFile struct {
	Guard Config `yaml:"guard"`
}

func parseConfig(t *testing.T, text string) Config {
	t.Helper()
	var cf configFile
	if err := yaml.Unmarshal([]byte(text), &cf); err != nil {
		t.Fatal(err)
	}
	cf.Guard.File = "kernel-gate.yml"
	return cf.Guard
}

// validate resolves c as config.Parse does, for its error.
func validate(c Config) error { return c.Resolve(c.File) }

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name, yaml, err string
	}{
		{"ok", "guard:\n  disable: [gpu-clocks]\n  exclude: [third_party]\n  rules:\n    - id: lab-stop\n      command: labctl\n      args: [vm, \"stop|halt\"]\n", ""},
		{"unknown disabled ID", "guard:\n  disable:\n    - gpu-reset\n    - gpu-clock\n", `kernel-gate.yml:4: guard.disable: unknown rule ID "gpu-clock" (did you mean "gpu-clocks"?)`},
		{"disable a custom rule", "guard:\n  disable: [mine]\n  rules:\n    - {id: mine, command: x}\n", ""},
		{"rule without a matcher", "guard:\n  rules:\n    - id: x\n      what: nothing\n", "kernel-gate.yml:3: guard.rules[0] (x): set command"},
		{"bad rule id", "guard:\n  rules:\n    - id: Bad ID\n      command: x\n", `kernel-gate.yml:3: guard.rules[0]: id "Bad ID" must be`},
		{"bad flag", "guard:\n  rules:\n    - id: x\n      command: x\n      any_flag: [r]\n", `flag "r" must start with '-'`},
		{"empty alternative", "guard:\n  rules:\n    - id: x\n      command: x\n      args: [\"stop||halt\"]\n", "empty word or alternative"},
		{"empty exclude", "guard:\n  exclude: [\"\"]\n", "kernel-gate.yml:2: guard.exclude[0]: empty path glob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validate(parseConfig(t, tt.yaml))
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("error %v, want %q", err, tt.err)
			}
		})
	}
}

func TestConfigRules(t *testing.T) {
	cfg := parseConfig(t, `guard:
  disable: [gpu-clocks]
  exclude: ["third_party/**"]
  rules:
    - id: lab-vm-stop
      what: stops the lab's GPU box
      why: it is the only one
      command: labctl
      args: [vm, "stop|halt"]
      no_flag: [--dry-run]
    - id: lab-api
      call: ["*.power_off"]
    - id: lab-watchdog
      write_to: /sys/class/watchdog/*
`)
	if err := validate(cfg); err != nil {
		t.Fatal(err)
	}
	src := "sudo nvidia-smi -lgc 1000\nlabctl --region x vm halt gpu-1\nlabctl vm halt --dry-run\necho 1 > /sys/class/watchdog/stop\n"
	fs, _ := ScanFile("x.sh", []byte(src), cfg)
	got := ""
	for _, f := range fs {
		got += f.Rule + "@" + string(rune('0'+f.Line)) + " "
	}
	if got != "lab-vm-stop@2 lab-watchdog@4 " {
		t.Errorf("got %q:%s", got, guardtest.Describe(fs))
	}
	if fs[0].What != "stops the lab's GPU box" || fs[0].Why != "it is the only one" {
		t.Errorf("what/why %q %q", fs[0].What, fs[0].Why)
	}
	fs, _ = ScanFile("x.py", []byte("pdu.power_off(outlet=3)\n"), cfg)
	if len(fs) != 1 || fs[0].Rule != "lab-api" {
		t.Errorf("python rule:%s", guardtest.Describe(fs))
	}
	if fs, ws := ScanFile("third_party/x/stop.sh", []byte("sudo reboot\n"), cfg); fs != nil || ws != nil {
		t.Errorf("an excluded file was scanned: %v %v", fs, ws)
	}
}

func TestEvaluate(t *testing.T) {
	fs, ws := ScanFile("x.sh", []byte("sudo reboot\n# kernel-gate: allow gpu-reset reset between runs\nnvidia-smi -r\nif true; then\n"), Config{})
	g, err := Evaluate(fs, ws, 1, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "guard" || g.Verdict != result.Fail {
		t.Errorf("gate %s verdict %s", g.Name, g.Verdict)
	}
	if len(g.Findings) != 3 {
		t.Fatalf("findings %+v", g.Findings)
	}
	e, n, w := g.Findings[0], g.Findings[1], g.Findings[2]
	if e.Severity != result.Error || e.File != "x.sh" || e.Line != 1 || e.Metric != "host-reboot" ||
		!strings.Contains(e.Message, "`sudo reboot` reboots the machine (via sudo → reboot)") {
		t.Errorf("error finding %+v", e)
	}
	if n.Severity != result.Notice || n.Line != 3 || !strings.Contains(n.Message, "allowed (reset between runs)") {
		t.Errorf("notice %+v", n)
	}
	if w.Severity != result.Warning || w.Line != 4 {
		t.Errorf("warning %+v", w)
	}
	if g.Table == nil || len(g.Table.Rows) != 2 || g.Table.Rows[0].Cells[0] != "x.sh:1" || g.Table.Rows[0].Status != result.Fail ||
		g.Table.Rows[1].Status != result.Pass {
		t.Errorf("table %+v", g.Table)
	}
	var data struct {
		Findings []Finding `json:"findings"`
		Warnings []Warning `json:"warnings"`
		Files    int       `json:"files"`
	}
	if err := json.Unmarshal(g.Data, &data); err != nil {
		t.Fatal(err)
	}
	if len(data.Findings) != 2 || len(data.Warnings) != 1 || data.Files != 1 || data.Findings[0].Command != "sudo reboot" {
		t.Errorf("data %s", g.Data)
	}

	g, _ = Evaluate(nil, nil, 0, Config{})
	if g.Verdict != result.Skip || string(g.Data) != `{"findings":[],"warnings":[],"files":0}` {
		t.Errorf("empty: %s %s", g.Verdict, g.Data)
	}
	g, _ = Evaluate(nil, nil, 3, Config{})
	if g.Verdict != result.Pass {
		t.Errorf("clean: %s", g.Verdict)
	}
}

// TestEvaluateColumn: a result finding keeps the column the scan found.
func TestEvaluateColumn(t *testing.T) {
	fs, ws := ScanFile("x.sh", []byte("if true; then\n  echo hi && sudo reboot\nfi\n"), Config{})
	g, err := Evaluate(fs, ws, 1, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || len(g.Findings) != 1 {
		t.Fatalf("scan %+v, findings %+v", fs, g.Findings)
	}
	if f := g.Findings[0]; f.Line != 2 || f.Column != 14 || f.Column != fs[0].Column {
		t.Errorf("finding at %d:%d, the scan's at %d:%d", f.Line, f.Column, fs[0].Line, fs[0].Column)
	}
}

func TestScanDir(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("scripts/stop.sh", "echo done\nsudo shutdown -h now\n")
	write("tools/reaper", "#!/usr/bin/env bash\nnvidia-smi -r\n")
	write("tools/blob", "\x00\x01binary")
	write("tools/bin.sh", "reboot\x00")
	write("README.md", "```sh\nsudo reboot\n```\n")
	write(".git/hooks/pre-push.sh", "reboot\n")
	write("node_modules/x/y.sh", "reboot\n")
	write("vendor/z.sh", "reboot\n")
	write("third_party/w.sh", "reboot\n")
	write(".github/workflows/ci.yml", "jobs:\n  a:\n    steps:\n      - run: sudo poweroff\n")
	write("kernels/k.cu", "__global__ void k() {}\n")
	fs, ws, files, err := ScanTree(root, Config{Exclude: []string{"third_party"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fs {
		got = append(got, f.Path+":"+f.Rule)
	}
	wantF := []string{".github/workflows/ci.yml:host-shutdown", "scripts/stop.sh:host-shutdown", "tools/reaper:gpu-reset"}
	if !slices.Equal(got, wantF) {
		t.Errorf("findings %v, want %v", got, wantF)
	}
	if len(ws) != 1 || ws[0].Path != "tools/bin.sh" || !strings.Contains(ws[0].Message, "binary") {
		t.Errorf("warnings %+v", ws)
	}
	if files != 3 {
		t.Errorf("files = %d, want 3", files)
	}
	f2, w2, err := ScanDir(root, Config{Exclude: []string{"third_party"}})
	if err != nil || len(f2) != len(fs) || len(w2) != len(ws) {
		t.Errorf("ScanDir differs from ScanTree: %v", err)
	}
	if _, _, err := ScanDir(filepath.Join(root, "missing"), Config{}); err == nil {
		t.Error("a missing root is an error")
	}
}

// TestFixtures scans testdata/guard-unit/repo, a small repository with one file of each kind.
func TestFixtures(t *testing.T) {
	fs, ws, files, err := ScanTree("../../testdata/guard-unit/repo", Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		t.Errorf("warning %+v", w)
	}
	var got []string
	for _, f := range fs {
		s := f.Path + ":" + strconv.Itoa(f.Line) + " " + f.Rule
		if f.Allowed {
			s += " (allowed)"
		}
		got = append(got, s)
	}
	wantF := []string{
		".github/actions/teardown/action.yml:12 terraform-destroy",
		".github/workflows/gpu.yml:19 gpu-clocks (allowed)",
		".github/workflows/gpu.yml:25 gcp-instance-stop",
		".github/workflows/gpu.yml:31 host-reboot",
		"Dockerfile:9 gpu-persistence-off",
		"Makefile:12 gpu-reset",
		"Makefile:15 runner-stop",
		"scripts/teardown.sh:11 gcp-instance-delete",
		"scripts/teardown.sh:17 host-shutdown",
		"scripts/teardown.sh:22 host-sysrq",
		"tools/launch.py:15 aws-ec2-stop",
		"tools/launch.py:20 host-reboot",
	}
	if !slices.Equal(got, wantF) {
		t.Errorf("findings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantF, "\n"))
	}
	if files != 6 {
		t.Errorf("files = %d, want 6", files)
	}
}
