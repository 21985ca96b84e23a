package toolkit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// repoTestdata holds the real captures shared by every gate; testdata/ holds this
// package's own (tool --version banners captured on an H200 with CUDA 13.0).
const repoTestdata = "../../testdata"

// scanFile feeds a file to s line by line, as the PTXAS parser does.
func scanFile(t testing.TB, s *Scanner, path, source string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		s.Line(source, n, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
}

type seen struct{ version, raw, source string }

func summarize(vs []Version) []seen {
	var out []seen
	for _, v := range vs {
		out = append(out, seen{v.Semver.String(), v.Raw, v.Source})
	}
	return out
}

const (
	raw88 = "Cuda compilation tools, release 13.0, V13.0.88"
	raw85 = "Cuda compilation tools, release 13.0, V13.0.85"
)

// Every recorded `kernel-gate run` (testdata/replay/record.sh; testdata/replay-old keeps
// one recording made before the current pipeline) kept `nvcc --version`.
func TestScannerRecordedRuns(t *testing.T) {
	logs, err := filepath.Glob(filepath.Join(repoTestdata, "replay", "*", "nvcc-version.txt"))
	old, oldErr := filepath.Glob(filepath.Join(repoTestdata, "replay-old", "*", "nvcc-version.txt"))
	logs = append(logs, old...)
	if err != nil || oldErr != nil || len(logs) < 8 || len(old) == 0 {
		t.Fatalf("recorded build logs: %v, %v, %v", logs, err, oldErr)
	}
	for _, path := range logs {
		rel, _ := filepath.Rel(repoTestdata, path)
		rel = filepath.ToSlash(rel)
		var s Scanner
		scanFile(t, &s, path, rel)
		if got, want := summarize(s.Versions()), []seen{{"13.0.88", raw88, rel + ":4"}}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: versions\n got %q\nwant %q", rel, got, want)
		}
	}
}

// TestScannerRealFiles runs the Scanner over every real capture: only the version
// banners count, never nvidia-smi's driver "CUDA Version: 13.0", the Nsight tools'
// "Version 2025.3.1.0", torch's "13.0", or a seed log's prose.
func TestScannerRealFiles(t *testing.T) {
	want := map[string][]seen{
		"cuda13-h200/versions.txt": {
			{"13.0.88", raw88, "cuda13-h200/versions.txt:4"}, // nvcc
			{"13.0.85", raw85, "cuda13-h200/versions.txt:9"}, // cuobjdump (nvdisasm's 13.0.85 at :14 is the same)
		},
		"shared-h200-cuda13.0/versions.txt": {
			{"13.0.88", raw88, "shared-h200-cuda13.0/versions.txt:5"},
			{"13.0.85", raw85, "shared-h200-cuda13.0/versions.txt:40"},
		},
		"forms-h200/versions-nvcc.txt": {{"13.0.88", raw88, "forms-h200/versions-nvcc.txt:6"}},
		// The H100 measurement's machine description (nvidia-smi, then nvcc --version | tail -2).
		"timing/serve-h100-sets/machine.txt": {{"13.0.88", raw88, "timing/serve-h100-sets/machine.txt:3"}},
		"forms-h200/versions-cuobjdump.txt":  {{"13.0.85", raw85, "forms-h200/versions-cuobjdump.txt:5"}},
		// ptxas records the toolkit in each cubin's .note.nv.tkinfo; nvdisasm prints it.
		"cuda13-h200/nvdisasm_softmax_sm90a.txt": {
			{"13.0.88", raw88, "cuda13-h200/nvdisasm_softmax_sm90a.txt:837"},
		},
		"cuda13-h200/nvdisasm_softmax_sm80.txt":   {{"13.0.88", raw88, "cuda13-h200/nvdisasm_softmax_sm80.txt:834"}},
		"cuda13-h200/nvdisasm_softmax_sm89.txt":   {{"13.0.88", raw88, "cuda13-h200/nvdisasm_softmax_sm89.txt:835"}},
		"cuda13-h200/nvdisasm_devfirst_sm90a.txt": {{"13.0.88", raw88, "cuda13-h200/nvdisasm_devfirst_sm90a.txt:52"}},
		// CUDA 11.8 on the development machine: nvcc, then cuobjdump (nvdisasm's 11.8.86 at :14 is the same).
		"cuda11.8-cpu/versions.txt": {
			{"11.8.89", "Cuda compilation tools, release 11.8, V11.8.89", "cuda11.8-cpu/versions.txt:4"},
			{"11.8.86", "Cuda compilation tools, release 11.8, V11.8.86", "cuda11.8-cpu/versions.txt:9"},
		},
		// The external repositories' GPU machine (testdata/external/run.sh: its tools' versions).
		"external/recorded-env.txt": {{"13.0.88", raw88, "external/recorded-env.txt:4"}},
		// The H200's per-cubin captures (testdata/cuda13-h200-cubins): the machine's nvcc, and
		// the timing script's header naming the cuobjdump it timed.
		"cuda13-h200-cubins/versions.txt":         {{"13.0.88", raw88, "cuda13-h200-cubins/versions.txt:3"}},
		"cuda13-h200-cubins/sass-dump-timing.txt": {{"13.0.85", raw85, "cuda13-h200-cubins/sass-dump-timing.txt:1"}},
		// The development machine's nvcc 11.8 (testdata/cuda11.8-host-only/capture.sh).
		"cuda11.8-host-only/versions.txt": {{"11.8.89", "Cuda compilation tools, release 11.8, V11.8.89", "cuda11.8-host-only/versions.txt:4"}},
	}
	files := 0
	err := filepath.WalkDir(repoTestdata, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(repoTestdata, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "replay/") || strings.HasPrefix(rel, "replay-old/") || strings.HasPrefix(rel, "sanitizer-kernels-h200/kg_") {
			return nil // recorded runs: TestScannerRecordedRuns
		}
		if strings.HasPrefix(rel, "external/") && strings.Contains(rel, "/recorded/") {
			return nil // the public repositories' recorded runs, replayed by pipeline's TestExternalRepositoriesReplay
		}
		files++
		var s Scanner
		scanFile(t, &s, path, rel)
		if got := summarize(s.Versions()); !reflect.DeepEqual(got, want[rel]) {
			t.Errorf("%s: versions\n got %q\nwant %q", rel, got, want[rel])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"seed-l4-cuda12.8/wmma_proof_0953f67.txt", "seed-l4-cuda12.8/ptxas_52e6ccd.txt"} {
		if _, err := os.Stat(filepath.Join(repoTestdata, must)); err != nil {
			t.Errorf("expected capture missing: %v", err)
		}
	}
	if files < 30 {
		t.Errorf("walked only %d files under %s", files, repoTestdata)
	}
}

func TestScannerOwnCapture(t *testing.T) {
	var s Scanner
	scanFile(t, &s, "testdata/tool_versions_h200_cuda13.0.txt", "tools.log")
	want := []seen{{"13.0.88", raw88, "tools.log:5"}, {"13.0.85", raw85, "tools.log:17"}}
	if got := summarize(s.Versions()); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestScannerOneStream scans several logs through one Scanner (a CI job's whole output):
// versions stay distinct, in first-seen order, with the first sighting's source.
func TestScannerOneStream(t *testing.T) {
	var s Scanner
	scanFile(t, &s, repoTestdata+"/cuda13-h200/nvdisasm_softmax_sm90a.txt", "nvdisasm.txt")
	scanFile(t, &s, repoTestdata+"/shared-h200-cuda13.0/versions.txt", "versions.txt")
	scanFile(t, &s, repoTestdata+"/cuda13-h200/versions.txt", "versions2.txt")
	want := []seen{{"13.0.88", raw88, "nvdisasm.txt:837"}, {"13.0.85", raw85, "versions.txt:40"}}
	if got := summarize(s.Versions()); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	// Versions returns a copy.
	vs := s.Versions()
	vs[0].Source = "changed"
	if s.Versions()[0].Source != "nvdisasm.txt:837" {
		t.Error("Versions shares its slice with the Scanner")
	}
}

func TestScannerLines(t *testing.T) {
	tests := []struct {
		name string
		line string
		want []string // "version|raw"
	}{
		{"nvcc", raw88, []string{"13.0.88|" + raw88}},
		{"release only", "Cuda compilation tools, release 12.8", []string{"12.8.0|Cuda compilation tools, release 12.8"}},
		{"release, bad V", "Cuda compilation tools, release 12.8, V12.8.x", []string{"12.8.0|Cuda compilation tools, release 12.8"}},
		{"V with a fourth part", "Cuda compilation tools, release 12.8, V12.8.93.1", []string{"12.8.0|Cuda compilation tools, release 12.8"}},
		{"crlf", raw88 + "\r", []string{"13.0.88|" + raw88}},
		{"actions timestamp", "2026-11-21T05:21:25.1234567Z " + raw85, []string{"13.0.85|" + raw85}},
		{"make prefix", "[nvcc] Cuda compilation tools, release 11.8, V11.8.89", []string{"11.8.89|Cuda compilation tools, release 11.8, V11.8.89"}},
		{"upper case", "CUDA compilation tools, release 12.4, V12.4.131", []string{"12.4.131|CUDA compilation tools, release 12.4, V12.4.131"}},
		{"tkinfo string", "        /*0030*/ \t.string\t\"" + raw88 + "\"", []string{"13.0.88|" + raw88}},
		{"two on a line", raw88 + "; " + raw85, []string{"13.0.88|" + raw88, "13.0.85|" + raw85}},
		{"same twice on a line", raw88 + " " + raw88, []string{"13.0.88|" + raw88}},
		{"clang", "Found CUDA installation: /usr/local/cuda, version 12.4", []string{"12.4.0|Found CUDA installation: /usr/local/cuda, version 12.4"}},
		{"clang patch", "Found CUDA installation: /opt/cuda-12.6, version 12.6.3", []string{"12.6.3|Found CUDA installation: /opt/cuda-12.6, version 12.6.3"}},
		{"clang unknown", "Found CUDA installation: /usr/local/cuda, version unknown", nil},
		{"clang bad patch", "Found CUDA installation: /usr/local/cuda, version 12.4.x", nil},
		{"clang glued", "Found CUDA installation: /usr/local/cuda, version 12.4beta", nil},
		{"clang no version", "Found CUDA installation: /usr/local/cuda", nil},
		{"driver", "| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |", nil},
		{"nsight", "Version 2025.3.1.0 (build 36400806) (public-release)", nil},
		{"build line", "Build cuda_13.0.r13.0/compiler.36424714_0", nil},
		{"torch", "2.11.0+cu130 13.0", nil},
		{"prose", "GPU: L4, CUDA: 12.8, driver 570", nil},
		{"not cuda", "Fortran compilation tools, release 13.0, V13.0.88", nil},
		{"at line start", "compilation tools, release 13.0, V13.0.88", nil},
		{"no number", "Cuda compilation tools, release ", nil},
		{"major only", "Cuda compilation tools, release 13", nil},
		{"trailing dot", "Cuda compilation tools, release 13.", nil},
		{"glued", "Cuda compilation tools, release 13.0beta", nil},
		{"too many digits", "Cuda compilation tools, release 1234567890.0, V1234567890.0.0", nil},
		{"nine digits", "Cuda compilation tools, release 999999999.0", []string{"999999999.0.0|Cuda compilation tools, release 999999999.0"}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Scanner
			s.Line("b.log", 7, tt.line)
			var got []string
			for _, v := range s.Versions() {
				got = append(got, v.Semver.String()+"|"+v.Raw)
				if v.Source != "b.log:7" {
					t.Errorf("source %q, want b.log:7", v.Source)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Line(%q)\n got %q\nwant %q", tt.line, got, tt.want)
			}
		})
	}
}

func TestScannerSource(t *testing.T) {
	for _, tt := range []struct {
		source string
		line   int
		want   string
	}{
		{"build.log", 3, "build.log:3"},
		{"nvcc --version", 0, "nvcc --version"},
		{"", 9, "line 9"},
		{"", 0, ""},
	} {
		var s Scanner
		s.Line(tt.source, tt.line, raw88)
		if got := s.Versions()[0].Source; got != tt.want {
			t.Errorf("Line(%q, %d): source %q, want %q", tt.source, tt.line, got, tt.want)
		}
	}
	var zero Scanner
	if vs := zero.Versions(); vs != nil {
		t.Errorf("zero Scanner: %v", vs)
	}
}

// sections splits a capture of "+ cmd" blocks into cmd -> output.
func sections(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	cmd := ""
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if c, ok := strings.CutPrefix(line, "+ "); ok {
			cmd = strings.TrimSpace(c)
			continue
		}
		out[cmd] += line
	}
	return out
}

func TestParseRealOutputs(t *testing.T) {
	own := sections(t, "testdata/tool_versions_h200_cuda13.0.txt")
	shared := sections(t, repoTestdata+"/shared-h200-cuda13.0/versions.txt")
	// cuda13-h200/versions.txt is nvcc, cuobjdump and nvdisasm banners back to back, 5 lines each.
	b, err := os.ReadFile(repoTestdata + "/cuda13-h200/versions.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	block := func(i int) string { return strings.Join(lines[5*i:5*i+5], "") }

	tests := []struct {
		name, text, want, raw string
	}{
		{"nvcc", own["nvcc --version"], "13.0.88", raw88},
		{"ptxas", own["ptxas --version"], "13.0.88", raw88},
		{"cuobjdump", own["cuobjdump --version"], "13.0.85", raw85},
		{"nvdisasm", own["nvdisasm --version"], "13.0.85", raw85},
		{"nvlink", own["nvlink --version"], "13.0.88", raw88},
		{"fatbinary", own["fatbinary --version"], "13.0.88", raw88},
		{"cuda13-h200 nvcc", block(0), "13.0.88", raw88},
		{"cuda13-h200 cuobjdump", block(1), "13.0.85", raw85},
		{"cuda13-h200 nvdisasm", block(2), "13.0.85", raw85},
		{"shared nvcc", shared["nvcc --version"], "13.0.88", raw88},
		{"shared cuobjdump", shared["cuobjdump --version"], "13.0.85", raw85},
		{"crlf", strings.ReplaceAll(own["nvcc --version"], "\n", "\r\n"), "13.0.88", raw88},
		{"whole file: first wins", string(b), "13.0.88", raw88},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.text == "" {
				t.Fatal("no such section in the capture")
			}
			v, err := Parse(tt.text)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if v.Semver.String() != tt.want || v.Raw != tt.raw || v.Source != "" {
				t.Errorf("Parse = %s %q %q, want %s %q \"\"", v.Semver, v.Raw, v.Source, tt.want, tt.raw)
			}
		})
	}
}

func TestParseNoVersion(t *testing.T) {
	shared := sections(t, repoTestdata+"/shared-h200-cuda13.0/versions.txt")
	tests := []struct {
		name, text, want string
	}{
		{"nvidia-smi", shared["nvidia-smi"], `driver's CUDA version`},
		{"compute-sanitizer", shared["compute-sanitizer --version"], "Compute Sanitizer"},
		{"ncu", shared["ncu --version"], "Nsight Compute"},
		{"torch", shared[`python3 -c 'import torch;print(torch.__version__, torch.version.cuda)'`], "2.11.0+cu130"},
		{"empty", "", "empty output"},
		{"blank", "\n \n", "empty output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Parse(tt.text)
			if !errors.Is(err, ErrNoVersion) {
				t.Fatalf("Parse = %+v, %v; want ErrNoVersion", v, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}

func ver(t *testing.T, v, source string) Version {
	t.Helper()
	return Version{Semver: semver.MustParse(v), Raw: "Cuda compilation tools, release X, V" + v, Source: source}
}

func TestCheck(t *testing.T) {
	v88 := ver(t, "13.0.88", "build.log:4")
	v85 := ver(t, "13.0.85", "build.log:9")
	v118 := ver(t, "11.8.89", "build.log:3")
	v124 := ver(t, "12.4.131", "nvcc --version")
	v122 := ver(t, "12.2.0", "")
	pre := Version{Semver: semver.MustParse("12.2.0-rc1"), Raw: "x", Source: "s"}

	type finding struct {
		sev result.Severity
		msg string
	}
	tests := []struct {
		name       string
		constraint string
		versions   []Version
		lookupErr  error
		verdict    result.Verdict
		findings   []finding
		satisfies  []bool
	}{
		{"no constraint", "", []Version{v88}, nil, result.Skip,
			[]finding{{result.Notice, "no cuda constraint configured"}}, []bool{false}},
		{"blank constraint, nothing known", "  ", nil, errors.New("nvcc not found"), result.Skip,
			[]finding{{result.Notice, "no cuda constraint configured"}}, nil},
		{"pass", ">=12.2", []Version{v88}, nil, result.Pass,
			[]finding{{result.Notice, "CUDA 13.0.88 satisfies >=12.2 (from build.log:4)"}}, []bool{true}},
		{"pass, both binutils", ">=12.2", []Version{v88, v85}, nil, result.Pass,
			[]finding{{result.Notice, "CUDA 13.0.88 satisfies >=12.2 (from build.log:4)"}, {result.Notice, "CUDA 13.0.85 satisfies >=12.2 (from build.log:9)"}}, []bool{true, true}},
		{"fail", ">=12.2", []Version{v118}, nil, result.Fail,
			[]finding{{result.Error, "CUDA 11.8.89 does not satisfy >=12.2 (from build.log:3)"}}, []bool{false}},
		{"lower bound exact", ">=12.2", []Version{v122}, nil, result.Pass,
			[]finding{{result.Notice, "CUDA 12.2.0 satisfies >=12.2"}}, []bool{true}},
		{"multiple, one failing", ">=13.0.86", []Version{v88, v85}, nil, result.Fail,
			[]finding{{result.Notice, "CUDA 13.0.88 satisfies >=13.0.86 (from build.log:4)"}, {result.Error, "CUDA 13.0.85 does not satisfy >=13.0.86 (from build.log:9)"}}, []bool{true, false}},
		{"tilde pass", "~12.4", []Version{v124}, nil, result.Pass,
			[]finding{{result.Notice, "CUDA 12.4.131 satisfies ~12.4 (from nvcc --version)"}}, []bool{true}},
		{"tilde fail", "~12.4", []Version{v88}, nil, result.Fail,
			[]finding{{result.Error, "CUDA 13.0.88 does not satisfy ~12.4 (from build.log:4)"}}, []bool{false}},
		{"caret", "^13", []Version{v88, v124}, nil, result.Fail,
			[]finding{{result.Notice, "CUDA 13.0.88 satisfies ^13 (from build.log:4)"}, {result.Error, "CUDA 12.4.131 does not satisfy ^13 (from nvcc --version)"}}, []bool{true, false}},
		{"range", ">=12.2, <14", []Version{v88, v124}, nil, result.Pass,
			[]finding{{result.Notice, "CUDA 13.0.88 satisfies >=12.2, <14 (from build.log:4)"}, {result.Notice, "CUDA 12.4.131 satisfies >=12.2, <14 (from nvcc --version)"}}, []bool{true, true}},
		{"range upper", ">=12.2, <13", []Version{v88}, nil, result.Fail,
			[]finding{{result.Error, "CUDA 13.0.88 does not satisfy >=12.2, <13 (from build.log:4)"}}, []bool{false}},
		{"prerelease judged on its release", ">=12.2", []Version{pre}, nil, result.Pass,
			[]finding{{result.Notice, "CUDA 12.2.0-rc1 satisfies >=12.2 (from s)"}}, []bool{true}},
		{"versions win over a lookup error", ">=12.2", []Version{v88}, errors.New("nvcc not found"), result.Pass,
			[]finding{{result.Notice, "CUDA 13.0.88 satisfies >=12.2 (from build.log:4)"}}, []bool{true}},
		{"unknown", ">=12.2", nil, fmt.Errorf("running nvcc --version: %w", errors.New(`exec: "nvcc": executable file not found in $PATH`)), result.Fail,
			[]finding{{result.Error, "cannot determine the CUDA toolkit version: running nvcc --version: exec: \"nvcc\": executable file not found in $PATH; add `nvcc --version` to the build log or put nvcc on PATH"}}, nil},
		{"unknown, no reason given", ">=12.2", []Version{}, nil, result.Fail,
			[]finding{{result.Error, "cannot determine the CUDA toolkit version: no `Cuda compilation tools` line was found; add `nvcc --version` to the build log or put nvcc on PATH"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Check(tt.constraint, tt.versions, tt.lookupErr)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if g.Name != "toolkit" || g.Verdict != tt.verdict {
				t.Errorf("gate %q verdict %q, want toolkit %q", g.Name, g.Verdict, tt.verdict)
			}
			var got []finding
			for _, f := range g.Findings {
				got = append(got, finding{f.Severity, f.Message})
				if f.Metric != "cuda" {
					t.Errorf("finding %q has metric %q", f.Message, f.Metric)
				}
			}
			if !reflect.DeepEqual(got, tt.findings) {
				t.Errorf("findings\n got %q\nwant %q", got, tt.findings)
			}
			if g.Summary == "" {
				t.Error("no summary")
			}

			var d struct {
				Constraint string `json:"constraint"`
				Versions   []struct {
					Version, Raw, Source string
					Satisfies            *bool
				} `json:"versions"`
				Error string `json:"error"`
			}
			if err := json.Unmarshal(g.Data, &d); err != nil {
				t.Fatalf("data %s: %v", g.Data, err)
			}
			if d.Constraint != tt.constraint || len(d.Versions) != len(tt.versions) || d.Versions == nil {
				t.Fatalf("data %s", g.Data)
			}
			for i, v := range tt.versions {
				dv := d.Versions[i]
				if dv.Version != v.Semver.String() || dv.Raw != v.Raw || dv.Source != v.Source {
					t.Errorf("data version %d = %+v, want %s %q %q", i, dv, v.Semver, v.Raw, v.Source)
				}
				judged := tt.satisfies != nil && tt.verdict != result.Skip
				if judged != (dv.Satisfies != nil) || judged && *dv.Satisfies != tt.satisfies[i] {
					t.Errorf("data version %d satisfies = %v, want %v", i, dv.Satisfies, tt.satisfies[i])
				}
			}
			if (tt.lookupErr != nil) != (d.Error != "") {
				t.Errorf("data error %q, lookupErr %v", d.Error, tt.lookupErr)
			}
			if tt.verdict != result.Skip && len(tt.versions) > 0 {
				if g.Table == nil || len(g.Table.Rows) != len(tt.versions) {
					t.Fatalf("table %+v", g.Table)
				}
				if tt.verdict == result.Fail && g.Table.Rows[0].Status != result.Fail {
					t.Errorf("failing row not first: %+v", g.Table.Rows)
				}
			}
		})
	}
}

func TestCheckDataShape(t *testing.T) {
	g, err := Check(">=12.2", []Version{{Semver: semver.MustParse("13.0.88"), Raw: raw88, Source: "build.log:3"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"constraint":">=12.2","versions":[{"version":"13.0.88","raw":"Cuda compilation tools, release 13.0, V13.0.88","source":"build.log:3","satisfies":true}]}`
	sameJSON(t, g.Data, want)
	g, err = Check("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, g.Data, `{"constraint":"","versions":[]}`)
	if g.Findings == nil {
		t.Error("findings is nil (would encode as null)")
	}
}

func sameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("data %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("data\n got %s\nwant %s", got, want)
	}
}

func TestCheckErrors(t *testing.T) {
	v := []Version{{Semver: semver.MustParse("13.0.88")}}
	for _, c := range []string{">=a", ">=12.2,", "cuda 12", "12.2.x.y", ">=12.2 ||"} {
		g, err := Check(c, v, nil)
		if err == nil {
			t.Errorf("Check(%q) = %+v, want an error", c, g)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", c)) {
			t.Errorf("Check(%q): error %q does not name the constraint", c, err)
		}
	}
	// Invalid is an error even with nothing to judge: the config is wrong either way.
	if _, err := Check("bogus", nil, errors.New("nvcc not found")); err == nil {
		t.Error("invalid constraint with no versions: no error")
	}
	// A Version without a value is the caller's bug: an error, not a panic.
	if _, err := Check(">=12.2", []Version{{Raw: "x", Source: "y"}}, nil); err == nil {
		t.Error("nil Semver: no error")
	}
}

func TestEndToEnd(t *testing.T) {
	// The shared capture through the Scanner, then Check: both toolkit binaries judged.
	var s Scanner
	scanFile(t, &s, repoTestdata+"/shared-h200-cuda13.0/versions.txt", "versions.txt")
	g, err := Check(">=12.2", s.Versions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Pass || len(g.Findings) != 2 {
		t.Errorf("got %+v", g)
	}
	g, err = Check("<13", s.Versions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Fail || g.Count(result.Error) != 2 {
		t.Errorf("got %+v", g)
	}
	// The seed log mentions CUDA 12.8 only in prose: nothing is known, so the gate fails.
	var seed Scanner
	scanFile(t, &seed, repoTestdata+"/seed-l4-cuda12.8/wmma_proof_0953f67.txt", "seed.txt")
	g, err = Check(">=12.2", seed.Versions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if g.Verdict != result.Fail {
		t.Errorf("prose-only log: verdict %s", g.Verdict)
	}
}

func FuzzScanner(f *testing.F) {
	for _, p := range []string{
		repoTestdata + "/cuda13-h200/versions.txt",
		repoTestdata + "/shared-h200-cuda13.0/versions.txt",
		"testdata/tool_versions_h200_cuda13.0.txt",
	} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	for _, s := range []string{
		raw88, "Found CUDA installation: /usr/local/cuda, version 12.4", "cuda compilation tools, release 1.2, V",
		"Cuda compilation tools, release 999999999.999999999, V999999999.999999999.999999999",
		"Found CUDA installation: , version 1.2.3.4", "Cuda compilation tools, release 0.0, V0.0.0x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var s Scanner
		for i, line := range strings.Split(text, "\n") {
			s.Line("fuzz", i+1, line)
		}
		vs := s.Versions()
		distinct := map[string]bool{}
		for _, v := range vs {
			if v.Semver == nil {
				t.Fatalf("nil Semver: %+v", v)
			}
			str := v.Semver.String()
			if _, err := semver.StrictNewVersion(str); err != nil {
				t.Fatalf("version %q is not valid semver: %v", str, err)
			}
			if v.Semver.Prerelease() != "" || v.Semver.Metadata() != "" {
				t.Fatalf("version %q has a suffix", str)
			}
			if distinct[str] {
				t.Fatalf("version %q repeated", str)
			}
			distinct[str] = true
			if v.Raw == "" || !strings.Contains(text, v.Raw) || strings.Contains(v.Raw, "\n") {
				t.Fatalf("raw %q is not from one input line", v.Raw)
			}
			if !strings.HasPrefix(v.Source, "fuzz:") {
				t.Fatalf("source %q", v.Source)
			}
		}
		if v, err := Parse(text); err == nil {
			if v.Semver == nil || len(vs) == 0 || v.Semver.String() != vs[0].Semver.String() {
				t.Fatalf("Parse = %+v, scanner saw %+v", v, vs)
			}
		} else if !errors.Is(err, ErrNoVersion) {
			t.Fatalf("Parse error %v does not wrap ErrNoVersion", err)
		}
		g, err := Check(">=12.2, <14", vs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(g.Data) {
			t.Fatalf("data %q", g.Data)
		}
	})
}

func FuzzCheck(f *testing.F) {
	for _, c := range []string{"", ">=12.2", "~12.4", "^13", ">=12.2, <14", "12.x || 13.0.88", "!=13.0.85", ">=a", "<0.0.0-0"} {
		f.Add(c, "13.0.88")
	}
	f.Fuzz(func(t *testing.T, constraint, version string) {
		var vs []Version
		if v, err := semver.NewVersion(version); err == nil {
			vs = append(vs, Version{Semver: v, Raw: version, Source: "fuzz"})
		}
		g, err := Check(constraint, vs, nil)
		if err != nil {
			return
		}
		switch g.Verdict {
		case result.Pass, result.Fail, result.Skip:
		default:
			t.Fatalf("verdict %q", g.Verdict)
		}
		if !json.Valid(g.Data) {
			t.Fatalf("data %q", g.Data)
		}
	})
}

// BenchmarkScannerLine measures the per-line cost on a real ptxas log (no banners).
func BenchmarkScannerLine(b *testing.B) {
	data, err := os.ReadFile(repoTestdata + "/cuda13-h200/ptxas_flash_multi.txt")
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var s Scanner
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		s.Line("ptxas.log", i, lines[i%len(lines)])
	}
}

func TestVersionString(t *testing.T) {
	if s := (Version{}).String(); s != "unknown" {
		t.Errorf("zero Version: %q", s)
	}
	if s := (Version{Semver: semver.MustParse("13.0.88")}).String(); s != "13.0.88" {
		t.Errorf("got %q", s)
	}
}
