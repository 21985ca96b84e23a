package ncu

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kernel-gate/kernel-gate/internal/configpos"
)

// config decodes the ncu section of a kernel-gate.yml text, named k.yml in messages.
func config(t testing.TB, text string) Config {
	t.Helper()
	var doc struct {
		NCU Config `yaml:"ncu"`
	}
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	doc.NCU.File = "k.yml"
	return doc.NCU
}

// validate resolves c as config.Parse does, for its error.
func validate(c Config) error { return c.Resolve(c.File) }

// issueConfig is the issue's rule for flash_fwd and one for row_softmax.
const issueConfig = `ncu:
  shape: mission
  launches: 16
  timeout: 5m
  kernels:
    - match: "flash_fwd<*>"
      any:
        - metric: sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
          min: 50
        - metric: dram__throughput.avg.pct_of_peak_sustained_elapsed
          max: 50
      reason: "attention must be Tensor Core bound or not DRAM bound"
    - match: "row_softmax<*>"
      all:
        - metric: dram__throughput.avg.pct_of_peak_sustained_elapsed
          min: 30
        - {metric: gpu__time_duration.sum, max: 1000000, unit: ns}
`

func TestConfigDecodes(t *testing.T) {
	c := config(t, issueConfig)
	if err := validate(c); err != nil {
		t.Fatal(err)
	}
	if c.Shape != "mission" || *c.Launches != 16 || len(c.Kernels) != 2 || c.Kernels[0].Line != 6 || c.Kernels[0].Any[1].Line != 10 ||
		*c.Kernels[0].Any[1].Max != 50 || c.Kernels[1].All[1].Unit != "ns" || c.Kernels[1].All[1].Line != 17 {
		t.Errorf("%+v", c)
	}
	o, err := c.Options([]string{"./h"})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Command: []string{"./h"}, Launches: 16, Shape: "mission", Timeout: 5 * time.Minute, KernelFilter: "regex:flash_fwd|row_softmax",
		Metrics: []string{"dram__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__time_duration.sum", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"}}
	if !slices.Equal(o.Command, want.Command) || !slices.Equal(o.Metrics, want.Metrics) || o.Launches != want.Launches || o.Shape != want.Shape ||
		o.Timeout != want.Timeout || o.KernelFilter != want.KernelFilter {
		t.Errorf("Options = %+v\nwant %+v", o, want)
	}
	if d, _ := (Config{}).Options(nil); d.Launches != DefaultLaunches || d.Timeout != DefaultTimeout || d.Shape != "" || d.Metrics != nil {
		t.Errorf("defaults %+v", d)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"no any or all", "ncu:\n  kernels:\n    - match: a\n", `k.yml:3: ncu.kernels[0] (match "a"): the rule has neither any nor all`},
		{"empty match", "ncu:\n  kernels:\n    - all: [{metric: a__b, min: 1}]\n", "k.yml:3: ncu.kernels[0] (match \"\"): match must be a non-empty kernel glob"},
		{"no bound", "ncu:\n  kernels:\n    - match: a\n      all:\n        - metric: a__b\n", "k.yml:5: ncu.kernels[0].all[0]: give min, max or both"},
		{"no metric", "ncu:\n  kernels:\n    - match: a\n      any:\n        - min: 1\n", "k.yml:5: ncu.kernels[0].any[0]: metric is required"},
		{"a section label", "ncu:\n  kernels:\n    - match: a\n      any:\n        - {metric: DRAM Throughput, max: 1}\n", `metric "DRAM Throughput" is not an ncu metric name`},
		{"a metric list", "ncu:\n  kernels:\n    - match: a\n      any:\n        - {metric: 'a__b,c__d', max: 1}\n", `metric "a__b,c__d" is not an ncu metric name`},
		{"regex syntax", "ncu:\n  kernels:\n    - match: a\n      any:\n        - {metric: 'regex:sm__.*', max: 1}\n", `is not an ncu metric name`},
		{"min above max", "ncu:\n  kernels:\n    - match: a\n      any:\n        - {metric: a__b, min: 5, max: 1}\n", "min 5 is above max 1"},
		{"nan", "ncu:\n  kernels:\n    - match: a\n      any:\n        - {metric: a__b, min: .nan}\n", "min must be a finite number"},
		{"launches", "ncu:\n  launches: 0\n", "k.yml:2: ncu.launches: must be between 1 and 10000"},
		{"timeout", "ncu:\n  timeout: soon\n", `k.yml:2: ncu.timeout: "soon" is not a duration`},
		{"negative timeout", "ncu:\n  timeout: -1s\n", `must be positive`},
		{"two shapes", "ncu:\n  shape: small,mission\n", "k.yml:2: ncu.shape"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validate(config(t, tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestValidMetric(t *testing.T) {
	for _, m := range []string{"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
		"gpu__time_duration.sum", "launch__grid_size", "launch__registers_per_thread", "l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum.per_second", "smsp__inst_executed.sum"} {
		if !ValidMetric(m) {
			t.Errorf("%q should be valid", m)
		}
	}
	for _, m := range []string{"", "DRAM Throughput", "dram_throughput", "__x", "a__", "a__b.", "a__b..c", "a__b,c__d", "regex:a__b", "breakdown:a__b", "1a__b", "a__b c"} {
		if ValidMetric(m) {
			t.Errorf("%q should be invalid", m)
		}
	}
}

func TestKernelFilter(t *testing.T) {
	tests := []struct {
		globs []string
		want  string
	}{
		{[]string{"flash_fwd<*>", "row_softmax<*>"}, "regex:flash_fwd|row_softmax"},
		{[]string{"row_softmax", "kg::flash_fwd<64, *>", "void flash_fwd<*>(*)"}, "regex:flash_fwd|row_softmax"},
		{[]string{"flash_fwd<*>", "flash_*"}, ""},                            // a wildcard in the function name: no filter at all
		{[]string{"*::flash_fwd<*>"}, ""},                                    // nor in the scope
		{[]string{"_Z9flash_fwdILi64ELi64ELi0EEvPK6__halfS2_S2_PS0_if"}, ""}, // mangled
		{[]string{"operator()<*>"}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		var c Config
		for _, g := range tt.globs {
			c.Kernels = append(c.Kernels, Rule{Match: g})
		}
		if got := KernelFilter(c); got != tt.want {
			t.Errorf("KernelFilter(%q) = %q, want %q", tt.globs, got, tt.want)
		}
	}
}

func TestMetricsSortedUnique(t *testing.T) {
	c := config(t, issueConfig)
	got := Metrics(c)
	if !slices.IsSorted(got) || len(got) != 3 {
		t.Errorf("Metrics = %q", got)
	}
}

func TestThresholdString(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		t    Threshold
		want string
	}{
		{Threshold{Min: f(50)}, ">= 50"},
		{Threshold{Max: f(0.5), Unit: "%"}, "<= 0.5 %"},
		{Threshold{Min: f(30), Max: f(70)}, "in [30, 70]"},
	} {
		if got := tt.t.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.t, got, tt.want)
		}
	}
}

// Only keeps a resolved section resolved: its compiled form is cut with the rules, and is what
// compiling the cut section gives.
func TestOnly(t *testing.T) {
	c := config(t, issueConfig)
	if err := c.Resolve(c.File); err != nil {
		t.Fatal(err)
	}
	calls := 0
	only := c.Only(func(r Rule) bool { calls++; return r.Match != "row_softmax<*>" })
	if len(c.Kernels) != 2 || len(only.Kernels) != 2-1 || calls != 2 || slices.ContainsFunc(only.Kernels, func(r Rule) bool { return r.Match == "row_softmax<*>" }) {
		t.Fatalf("%d calls; kept %+v of %+v", calls, only.Kernels, c.Kernels)
	}
	kept, err := configpos.Resolved(only, func(Config) (compiled, error) {
		t.Error("Only's copy compiled again")
		return compiled{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fresh, err := only.compile(); err != nil || !reflect.DeepEqual(kept, fresh) {
		t.Errorf("kept %+v\nfresh %+v (%v)", kept, fresh, err)
	}
	// A section built in Go stays unresolved: it resolves when used.
	built := Config{Kernels: c.Kernels}.Only(func(Rule) bool { return true })
	if _, err := built.compiled(); err != nil || len(built.Kernels) != 2 {
		t.Errorf("%v %+v", err, built.Kernels)
	}
}
