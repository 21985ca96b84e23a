package configpos

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// testRule and testConfig are a gate's section in miniature.
type testRule struct {
	Match string `yaml:"match"`
	Item  `yaml:"-"`
}

type testConfig struct {
	Section[testCompiled] `yaml:",inline"`
	Limit                 *int                `yaml:"limit"`
	Arch                  map[string]int      `yaml:"arch"`
	Kernels               List[testRule]      `yaml:"kernels"`
	Env                   map[string][]string `yaml:"env"`

	calls *int // counts compile calls; unexported, so no setting
}

type testCompiled struct {
	limitAt string
	matches []string
}

func (c testConfig) compile() (testCompiled, error) {
	if c.calls != nil {
		*c.calls++
	}
	cc := testCompiled{limitAt: c.KeyWhere("limit")}
	for _, r := range c.Kernels {
		if r.Match == "" {
			return testCompiled{}, errors.New(c.Where(r.Line) + ": empty match")
		}
		cc.matches = append(cc.matches, r.Match+"@"+c.Where(r.Line))
	}
	return cc, nil
}

func decodeTest(t *testing.T, text string) testConfig {
	t.Helper()
	var doc struct {
		S testConfig `yaml:"s"`
	}
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.S
}

// The lines reach the section through its inline field, and each rule keeps its own, while
// every other key decodes as usual (an UnmarshalYAML promoted from Section would decode the
// Section alone).
func TestSectionDecodes(t *testing.T) {
	c := decodeTest(t, `s:
  limit: 3
  arch:
    sm_90: 1
  kernels:
    - match: a
    - &b {match: b}
    - ~
    - *b
`)
	if c.Limit == nil || *c.Limit != 3 || c.Arch["sm_90"] != 1 || len(c.Kernels) != 3 {
		t.Fatalf("decoded %+v", c)
	}
	for key, want := range map[string]int{"limit": 2, "arch": 3, "arch.sm_90": 4, "kernels": 5, "kernels[0]": 6, "kernels[2]": 8, "nothing": 0} {
		if got := c.KeyLine(key); got != want {
			t.Errorf("KeyLine(%q) = %d, want %d", key, got, want)
		}
	}
	var lines []int
	for _, r := range c.Kernels {
		lines = append(lines, r.Line)
	}
	if !slices.Equal(lines, []int{6, 7, 7}) { // YAML leaves the null out; an alias has its anchor's line
		t.Errorf("rule lines %v", lines)
	}
	if c.KeyWhere("limit") != "kernel-gate.yml:2" || c.FileName() != DefaultFile {
		t.Errorf("where %q, file %q", c.KeyWhere("limit"), c.FileName())
	}
}

// A merged mapping ("<<") decodes after the section's own keys: those keep their lines, and
// the merged keys get none, as when each section recorded its own node's keys.
func TestSectionMergeKeepsOwnLines(t *testing.T) {
	c := decodeTest(t, "base: &base\n  limit: 1\n  arch: {sm_80: 2}\ns:\n  <<: *base\n  limit: 5\n")
	if *c.Limit != 5 || c.Arch["sm_80"] != 2 {
		t.Fatalf("decoded %+v", c)
	}
	if c.KeyLine("limit") != 6 || c.KeyLine("arch") != 0 || c.KeyLine("<<") != 5 {
		t.Errorf("lines limit %d, arch %d, << %d", c.KeyLine("limit"), c.KeyLine("arch"), c.KeyLine("<<"))
	}
}

func TestListKeepsTypeErrors(t *testing.T) {
	var c testConfig
	err := yaml.Unmarshal([]byte("kernels:\n  - match: [x]\n"), &c)
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("err = %v", err)
	}
}

// A resolved section is used as it was resolved, however often; a copy made with Change
// sees its change, resolved again from the same file, and the original stays kept.
func TestResolveKeepsAndChangeResolves(t *testing.T) {
	calls := 0
	c := decodeTest(t, "s:\n  limit: 3\n  kernels:\n    - match: a\n    - match: b\n")
	c.calls = &calls
	if err := Resolve(&c, "k.yml", testConfig.compile); err != nil {
		t.Fatal(err)
	}
	if c.File != "k.yml" || calls != 1 {
		t.Fatalf("file %q, %d compiles", c.File, calls)
	}
	for range 3 {
		cc, err := Resolved(c, testConfig.compile)
		if err != nil || calls != 1 || cc.limitAt != "k.yml:2" || !slices.Equal(cc.matches, []string{"a@k.yml:4", "b@k.yml:5"}) {
			t.Fatalf("kept %+v %v, %d compiles", cc, err, calls)
		}
	}
	for name, tt := range map[string]struct {
		change func(*testConfig)
		want   []string
	}{
		"pointer replaced": {func(c *testConfig) { n := 4; c.Limit = &n }, []string{"a@k.yml:4", "b@k.yml:5"}},
		"fewer rules":      {func(c *testConfig) { c.Kernels = slices.Clone(c.Kernels[:1]) }, []string{"a@k.yml:4"}},
		"rule in place":    {func(c *testConfig) { c.Kernels = slices.Clone(c.Kernels); c.Kernels[1].Match = "c" }, []string{"a@k.yml:4", "c@k.yml:5"}},
		"rule line":        {func(c *testConfig) { c.Kernels = slices.Clone(c.Kernels); c.Kernels[0].Line = 9 }, []string{"a@k.yml:9", "b@k.yml:5"}},
		"map entry":        {func(c *testConfig) { c.Arch = map[string]int{"sm_90": 1} }, []string{"a@k.yml:4", "b@k.yml:5"}},
	} {
		calls = 0
		d, err := Change(c, tt.change, testConfig.compile)
		if err != nil || calls != 1 || d.File != "k.yml" {
			t.Errorf("%s: %d compiles (%v), file %q", name, calls, err, d.File)
			continue
		}
		if cc, err := Resolved(d, testConfig.compile); err != nil || calls != 1 || !slices.Equal(cc.matches, tt.want) {
			t.Errorf("%s: %+v (%v), %d compiles, want %q", name, cc, err, calls, tt.want)
		}
	}
	calls = 0
	if cc, err := Resolved(c, testConfig.compile); err != nil || calls != 0 || len(cc.matches) != 2 || *c.Limit != 3 {
		t.Errorf("the original: %+v %v, %d compiles", cc, err, calls)
	}
	// A change that breaks the section is an error naming the file's line.
	if _, err := Change(c, func(c *testConfig) { c.Kernels = slices.Clone(c.Kernels); c.Kernels[1].Match = "" }, testConfig.compile); err == nil || err.Error() != "k.yml:5: empty match" {
		t.Errorf("a bad change: %v", err)
	}
}

func TestResolveError(t *testing.T) {
	c := decodeTest(t, "s:\n  kernels:\n    - match: \"\"\n")
	if err := Resolve(&c, "k.yml", testConfig.compile); err == nil || err.Error() != "k.yml:3: empty match" {
		t.Fatalf("err = %v", err)
	}
	if c.kept != nil {
		t.Error("a failed resolve kept something")
	}
	// A section built in Go resolves when used.
	built := testConfig{Kernels: List[testRule]{{Match: "a", Item: Item{Line: 4}}}}
	if cc, err := Resolved(built, testConfig.compile); err != nil || !slices.Equal(cc.matches, []string{"a@kernel-gate.yml:4"}) {
		t.Errorf("built in Go: %+v %v", cc, err)
	}
}

func TestDerive(t *testing.T) {
	calls := 0
	c := decodeTest(t, "s:\n  kernels:\n    - match: a\n    - match: b\n    - match: c\n")
	c.calls = &calls
	if err := Resolve(&c, "k.yml", testConfig.compile); err != nil {
		t.Fatal(err)
	}
	keep := []bool{true, false, true}
	only := func(c testConfig) testConfig {
		return Derive(c, func(c *testConfig) { c.Kernels = Filter(c.Kernels, keep) },
			func(cc testCompiled) testCompiled { cc.matches = Filter(cc.matches, keep); return cc })
	}
	d := only(c)
	calls = 0
	cc, err := Resolved(d, testConfig.compile)
	if err != nil || calls != 0 || !slices.Equal(cc.matches, []string{"a@k.yml:3", "c@k.yml:5"}) {
		t.Errorf("derived %+v %v, %d compiles", cc, err, calls)
	}
	fresh, _ := d.compile()
	if !slices.Equal(fresh.matches, cc.matches) || fresh.limitAt != cc.limitAt {
		t.Errorf("derived %+v, compiled afresh %+v", cc, fresh)
	}
	if len(c.Kernels) != 3 {
		t.Errorf("the original changed: %+v", c.Kernels)
	}
	// A section never resolved derives nothing: it resolves when used.
	built := decodeTest(t, "s:\n  kernels:\n    - match: a\n    - match: b\n    - match: c\n")
	built.File, built.calls = "x.yml", &calls
	e := only(built)
	calls = 0
	if cc, _ := Resolved(e, testConfig.compile); calls != 1 || !slices.Equal(cc.matches, []string{"a@x.yml:3", "c@x.yml:5"}) {
		t.Errorf("never resolved: %+v, %d compiles", cc, calls)
	}
}

func TestFilter(t *testing.T) {
	if got := Filter([]string{"a", "b", "c"}, []bool{false, true, true}); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("got %q", got)
	}
}
