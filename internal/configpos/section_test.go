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

func TestResolveKeepsUntilChanged(t *testing.T) {
	calls := 0
	c := decodeTest(t, "s:\n  limit: 3\n  kernels:\n    - match: a\n    - match: b\n")
	c.calls = &calls
	if err := Resolve(&c, "k.yml", testConfig.compile); err != nil {
		t.Fatal(err)
	}
	if c.File != "k.yml" || calls != 1 {
		t.Fatalf("file %q, %d compiles", c.File, calls)
	}
	cc, err := Resolved(c, testConfig.compile)
	if err != nil || calls != 1 || cc.limitAt != "k.yml:2" || !slices.Equal(cc.matches, []string{"a@k.yml:4", "b@k.yml:5"}) {
		t.Fatalf("kept %+v %v, %d compiles", cc, err, calls)
	}
	// Every change to a copy's settings is seen, in place or not; the original stays kept.
	for name, change := range map[string]func(*testConfig){
		"file":             func(c *testConfig) { c.File = "other.yml" },
		"pointer replaced": func(c *testConfig) { n := 4; c.Limit = &n },
		"fewer rules":      func(c *testConfig) { c.Kernels = slices.Clone(c.Kernels[:1]) },
		"rule in place":    func(c *testConfig) { c.Kernels = slices.Clone(c.Kernels); c.Kernels[1].Match = "c" },
		"rule line":        func(c *testConfig) { c.Kernels = slices.Clone(c.Kernels); c.Kernels[0].Line = 9 },
		"map entry":        func(c *testConfig) { c.Arch = map[string]int{"sm_90": 1} },
		"nil to empty":     func(c *testConfig) { c.Env = map[string][]string{} },
	} {
		d := c
		change(&d)
		calls = 0
		if _, err := Resolved(d, testConfig.compile); err != nil || calls != 1 {
			t.Errorf("%s: %d compiles (%v), want the change seen", name, calls, err)
		}
	}
	calls = 0
	d := c
	n := *c.Limit
	d.Limit = &n // another pointer to the same value: the same settings
	if _, err := Resolved(d, testConfig.compile); err != nil || calls != 0 {
		t.Errorf("equal settings compiled again (%d)", calls)
	}
	if _, err := Resolved(c, testConfig.compile); err != nil || calls != 0 {
		t.Errorf("the original compiled again (%d)", calls)
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
	// A copy that was not current derives nothing: it resolves when used.
	stale := c
	stale.File = "x.yml"
	e := only(stale)
	calls = 0
	if cc, _ := Resolved(e, testConfig.compile); calls != 1 || !slices.Equal(cc.matches, []string{"a@x.yml:3", "c@x.yml:5"}) {
		t.Errorf("stale copy: %+v, %d compiles", cc, calls)
	}
}

func TestFilter(t *testing.T) {
	if got := Filter([]string{"a", "b", "c"}, []bool{false, true, true}); !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("got %q", got)
	}
}
