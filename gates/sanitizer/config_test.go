package sanitizer

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// decode reads the sanitizer section of a kernel-gate.yml text, as action/config does.
func decode(t *testing.T, text string) Config {
	t.Helper()
	var doc struct {
		Sanitizer Config `yaml:"sanitizer"`
	}
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Sanitizer
}

// validate resolves c as config.Parse does, for its error.
func validate(c Config) error { return c.Resolve(c.File) }

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name, yml string
		want      []string // substrings of the error; none: valid
	}{
		{"defaults", "sanitizer: {}\n", nil},
		{"full", `sanitizer:
  tools: [memcheck, racecheck]
  timeout: 90s
  leaks: warning
  racecheck_warnings: error
  api_errors: ignore
  suppress:
    - tool: racecheck
      kind: race
      kernel: "softmax<*>"
      at: kernels/softmax.cu:88
      reason: warp-synchronous reduction, reviewed
`, nil},
		{"policy word", "sanitizer:\n  leaks: warn\n", []string{`kernel-gate.yml:2: sanitizer.leaks: "warn" is not one of error, warning, ignore`}},
		{"duration", "sanitizer:\n  tools: [memcheck]\n  timeout: 2 minutes\n", []string{`kernel-gate.yml:3: sanitizer.timeout: "2 minutes" is not a duration`}},
		{"negative duration", "sanitizer:\n  timeout: -1s\n", []string{`kernel-gate.yml:2: sanitizer.timeout: "-1s" must be positive`}},
		{"tool", "sanitizer:\n  tools: [memcheck, leakcheck]\n", []string{`kernel-gate.yml:2: sanitizer.tools: unknown tool "leakcheck"`}},
		{"reason", "sanitizer:\n  suppress:\n    - kind: leak\n", []string{"kernel-gate.yml:3: sanitizer.suppress[0]: reason is required"}},
		{"blank reason", "sanitizer:\n  suppress:\n    - kind: leak\n      reason: \"  \"\n", []string{"kernel-gate.yml:3: sanitizer.suppress[0]: reason is required"}},
		{"matches everything", "sanitizer:\n  suppress:\n    - reason: quiet\n", []string{"kernel-gate.yml:3: sanitizer.suppress[0]: matches every record"}},
		{"kind", "sanitizer:\n  suppress:\n    - kind: oob\n      reason: r\n", []string{`kernel-gate.yml:3: sanitizer.suppress[0]: kind "oob" is not one of out-of-bounds`}},
		{"suppression tool", "sanitizer:\n  suppress:\n    - tool: cuda-memcheck\n      reason: r\n", []string{`tool "cuda-memcheck" is not one of`}},
		{"line 0", "sanitizer:\n  suppress:\n    - at: a.cu:0\n      reason: r\n", []string{`at "a.cu:0": the line must be positive`}},
		{"several", "sanitizer:\n  leaks: no\n  api_errors: maybe\n  suppress:\n    - kernel: k\n", []string{
			`kernel-gate.yml:2: sanitizer.leaks: "no"`, `kernel-gate.yml:3: sanitizer.api_errors: "maybe"`, "kernel-gate.yml:5: sanitizer.suppress[0]: reason is required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validate(decode(t, tt.yml))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	c := decode(t, "sanitizer:\n  leaks: warn\n")
	c.File = ".github/kernel-gate.yml"
	if err := validate(c); err == nil || !strings.HasPrefix(err.Error(), ".github/kernel-gate.yml:2:") {
		t.Errorf("File: %v", err)
	}
}

func TestConfigRunOptions(t *testing.T) {
	o, err := decode(t, "sanitizer:\n  tools: [racecheck, memcheck, racecheck]\n  timeout: 90s\n").RunOptions()
	if err != nil || strings.Join(o.Tools, ",") != "racecheck,memcheck" || o.Timeout != 90*time.Second {
		t.Errorf("%+v %v", o, err)
	}
	o, err = Config{}.RunOptions()
	if err != nil || len(o.Tools) != 4 || o.Timeout != DefaultTimeout {
		t.Errorf("defaults %+v %v", o, err)
	}
	if _, err := (Config{Leaks: "x"}).RunOptions(); err == nil {
		t.Error("invalid config accepted")
	}
}

func TestSuppressionMatches(t *testing.T) {
	xmlRec := Record{Tool: ToolRacecheck, Kind: KindRaceRAW, Kernel: "_ZN2kg11row_softmaxILi256EEEvPKfPfi", File: "/home/ci/repo/kernels/softmax.cu", Line: 88}
	textRec := Record{Tool: ToolRacecheck, Kind: KindRaceRAW, Kernel: "void kg::row_softmax<(int)256>(const float *, float *, int)", File: "softmax.cu", Line: 88}
	tests := []struct {
		s    Suppression
		want bool
	}{
		{Suppression{Tool: ToolRacecheck}, true},
		{Suppression{Tool: ToolMemcheck}, false},
		{Suppression{Kind: KindRace}, true}, // "race" covers its three kinds
		{Suppression{Kind: KindRaceWAR}, false},
		{Suppression{Kernel: "row_softmax<*>"}, true},
		{Suppression{Kernel: "kg::row_softmax*"}, true},
		{Suppression{Kernel: "flash_fwd*"}, false},
		{Suppression{At: "kernels/softmax.cu:88"}, true},
		{Suppression{At: "softmax.cu"}, true},
		{Suppression{At: "./kernels/softmax.cu:88"}, true},
		{Suppression{At: "softmax.cu:89"}, false},
		{Suppression{At: "other/softmax.cu:88"}, false},
		{Suppression{At: "max.cu:88"}, false},
	}
	for _, tt := range tests {
		tt.s.Reason = "r"
		c := Config{Suppress: []Suppression{tt.s}}
		cc, err := c.compile()
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range []Record{xmlRec, textRec} {
			if got := cc.supp[0].matches(rec); got != tt.want {
				if tt.s.At == "other/softmax.cu:88" && rec.File == "softmax.cu" {
					// A base name (the text's) cannot rule out another directory.
					continue
				}
				t.Errorf("%+v matches %s = %v", tt.s, rec.Kernel, got)
			}
		}
	}
}
