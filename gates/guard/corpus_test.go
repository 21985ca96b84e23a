package guard

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The labelled corpus of testdata/guard (see its README.md): dangerous/<case>/ and
// safe/<case>/ directories, each a small repository, and labels.yaml mapping
// "<class>/<case>" to the rule IDs the case must trigger, exactly those.
const (
	corpusRoot = "../../testdata/guard"
	// corpusMinCases is the fewest cases each class may have.
	corpusMinCases = 60
	// corpusMinRuleCases is the fewest dangerous cases that must label each rule ID.
	corpusMinRuleCases = 2
)

var corpusClasses = []string{"dangerous", "safe"}

type corpusCase struct {
	name  string // <class>/<case-dir>, as in labels.yaml
	class string
	dir   string
	want  []string
	kind  string // the kinds of its files, sorted, joined with "+"
	files []string
}

// corpusCounts are the (case, rule) pairs a scan got right and wrong.
type corpusCounts struct {
	cases, tp, fp, fn, warnings int
}

func (c *corpusCounts) add(o corpusCounts) {
	c.cases += o.cases
	c.tp += o.tp
	c.fp += o.fp
	c.fn += o.fn
	c.warnings += o.warnings
}

func ratio(num, den int) float64 {
	if den == 0 {
		return 1
	}
	return float64(num) / float64(den)
}

func (c corpusCounts) String() string {
	return fmt.Sprintf("cases %3d  TP %3d  FP %3d  FN %3d  warnings %2d  precision %6.2f%%  recall %6.2f%%",
		c.cases, c.tp, c.fp, c.fn, c.warnings, 100*ratio(c.tp, c.tp+c.fp), 100*ratio(c.tp, c.tp+c.fn))
}

// docRuleIDs reads the rule IDs from the table in doc.go's package comment, so the corpus is
// checked against the rules the package documents without a second list here.
func docRuleIDs(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^//\t([a-z0-9]+(?:-[a-z0-9]+)+)  +\S`).FindAllSubmatch(src, -1) {
		ids[string(m[1])] = true
	}
	if len(ids) == 0 {
		t.Fatal("doc.go: no rule IDs found in the package comment's table")
	}
	return ids
}

// corpusFileKind is the kind of a case file from its repository-relative path and its first
// line, the way the guard tells them apart.
func corpusFileKind(rel string, firstLine []byte) string {
	base := path.Base(rel)
	switch {
	case strings.HasPrefix(rel, ".github/workflows/"):
		return "workflow"
	case base == "action.yml" || base == "action.yaml":
		return "composite-action"
	case base == "Makefile" || base == "GNUmakefile" || strings.HasSuffix(base, ".mk"):
		return "makefile"
	case base == "Dockerfile" || strings.HasPrefix(base, "Dockerfile.") || strings.HasSuffix(base, ".Dockerfile"):
		return "dockerfile"
	case strings.HasSuffix(base, ".md"):
		return "markdown"
	case strings.HasSuffix(base, ".py"):
		return "python"
	case strings.HasSuffix(base, ".sh") || strings.HasSuffix(base, ".bash"):
		return "shell"
	case bytes.HasPrefix(firstLine, []byte("#!")) && bytes.Contains(firstLine, []byte("python")):
		return "shebang-python"
	case bytes.HasPrefix(firstLine, []byte("#!")):
		return "shebang-shell"
	}
	return "other"
}

// loadCorpus reads labels.yaml and the case directories and checks that they agree.
func loadCorpus(t *testing.T, rules map[string]bool) []corpusCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(corpusRoot, "labels.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var labels map[string][]string
	if err := yaml.Unmarshal(data, &labels); err != nil {
		t.Fatalf("labels.yaml: %v", err)
	}

	dirs := map[string]bool{}
	for _, class := range corpusClasses {
		entries, err := os.ReadDir(filepath.Join(corpusRoot, class))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !e.IsDir() {
				t.Errorf("%s/%s: not a case directory", class, e.Name())
				continue
			}
			dirs[class+"/"+e.Name()] = true
		}
	}

	var cases []corpusCase
	var dirNames []string
	for name := range dirs {
		dirNames = append(dirNames, name)
	}
	sort.Strings(dirNames)
	for _, name := range dirNames {
		if _, ok := labels[name]; !ok {
			t.Errorf("%s: case directory without a label in labels.yaml", name)
		}
	}
	var names []string
	for name := range labels {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		want := labels[name]
		class, _, _ := strings.Cut(name, "/")
		if class != "dangerous" && class != "safe" {
			t.Errorf("labels.yaml: %s: the key must be dangerous/<case> or safe/<case>", name)
			continue
		}
		if !dirs[name] {
			t.Errorf("labels.yaml: %s: no such case directory", name)
			continue
		}
		seen := map[string]bool{}
		for _, r := range want {
			if !rules[r] {
				t.Errorf("labels.yaml: %s: unknown rule ID %q (not in doc.go)", name, r)
			}
			if seen[r] {
				t.Errorf("labels.yaml: %s: rule %s listed twice", name, r)
			}
			seen[r] = true
		}
		if class == "dangerous" && len(want) == 0 {
			t.Errorf("labels.yaml: %s: a dangerous case must list the rules it triggers", name)
		}
		if class == "safe" && len(want) != 0 {
			t.Errorf("labels.yaml: %s: a safe case must be labelled []", name)
		}

		c := corpusCase{name: name, class: class, dir: filepath.Join(corpusRoot, filepath.FromSlash(name)), want: want}
		kinds := map[string]bool{}
		err := filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if !d.Type().IsRegular() {
				return fmt.Errorf("%s: not a regular file", p)
			}
			rel, err := filepath.Rel(c.dir, p)
			if err != nil {
				return err
			}
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			first, _, _ := bytes.Cut(src, []byte("\n"))
			rel = filepath.ToSlash(rel)
			kinds[corpusFileKind(rel, first)] = true
			c.files = append(c.files, rel)
			return nil
		})
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if len(c.files) == 0 {
			t.Errorf("%s: empty case directory", name)
		}
		var ks []string
		for k := range kinds {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		c.kind = strings.Join(ks, "+")
		cases = append(cases, c)
	}
	return cases
}

// TestCorpus runs the guard on every case of testdata/guard and requires 100% precision and
// recall on (case, rule) pairs, and no warning on any case.
func TestCorpus(t *testing.T) {
	rules := docRuleIDs(t)
	cases := loadCorpus(t, rules)

	perClass := map[string]int{}
	perRuleLabels := map[string]int{}
	for _, c := range cases {
		perClass[c.class]++
		if c.class == "dangerous" {
			for _, r := range c.want {
				perRuleLabels[r]++
			}
		}
	}
	for _, class := range corpusClasses {
		if perClass[class] < corpusMinCases {
			t.Errorf("the corpus has %d %s cases; it must have at least %d", perClass[class], class, corpusMinCases)
		}
	}
	var ruleIDs []string
	for r := range rules {
		ruleIDs = append(ruleIDs, r)
	}
	sort.Strings(ruleIDs)
	for _, r := range ruleIDs {
		if perRuleLabels[r] < corpusMinRuleCases {
			t.Errorf("rule %s labels %d dangerous cases; it must label at least %d", r, perRuleLabels[r], corpusMinRuleCases)
		}
	}

	absRoot, err := filepath.Abs(corpusRoot)
	if err != nil {
		t.Fatal(err)
	}
	var total corpusCounts
	byClass := map[string]*corpusCounts{}
	byKind := map[string]*corpusCounts{}
	byRule := map[string]*corpusCounts{}
	bump := func(m map[string]*corpusCounts, k string, o corpusCounts) {
		if m[k] == nil {
			m[k] = &corpusCounts{}
		}
		m[k].add(o)
	}

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			where := func(f Finding) string {
				p := f.Path
				if filepath.IsAbs(p) {
					if rel, err := filepath.Rel(absRoot, p); err == nil {
						p = rel
					}
				} else {
					p = path.Join(c.name, filepath.ToSlash(p))
				}
				return fmt.Sprintf("%s:%d:%d", filepath.ToSlash(p), f.Line, f.Column)
			}
			describe := func(f Finding) string {
				s := fmt.Sprintf("%s %s: %q", where(f), f.Rule, f.Command)
				if f.Via != "" {
					s += fmt.Sprintf(" via %q", f.Via)
				}
				return s
			}

			findings, all, err := ScanDir(c.dir, Config{})
			if err != nil {
				t.Errorf("ScanDir: %v", err)
			}
			// Every case must parse cleanly. The one warning a case may carry on purpose is an
			// allow comment without a reason: it allows nothing, and the guard says so.
			var warnings []Warning
			for _, w := range all {
				if strings.Contains(w.Message, "has no reason, so it allows nothing") {
					continue
				}
				warnings = append(warnings, w)
				t.Errorf("%s: warning (every case must parse cleanly): %+v", c.name, w)
			}

			found := map[string][]Finding{}
			for _, f := range findings {
				if !f.Allowed {
					found[f.Rule] = append(found[f.Rule], f)
				}
			}
			want := map[string]bool{}
			for _, r := range c.want {
				want[r] = true
			}

			counts := corpusCounts{cases: 1, warnings: len(warnings)}
			perRule := map[string]corpusCounts{}
			for _, r := range c.want {
				if len(found[r]) > 0 {
					counts.tp++
					perRule[r] = corpusCounts{cases: 1, tp: 1}
					continue
				}
				counts.fn++
				perRule[r] = corpusCounts{cases: 1, fn: 1}
				var got []string
				for _, f := range findings {
					got = append(got, describe(f)+fmt.Sprintf(" (allowed %v)", f.Allowed))
				}
				t.Errorf("false negative: %s not found in %s (files %s); findings: %s",
					r, c.name, strings.Join(c.files, ", "), orNone(got))
			}
			var extra []string
			for r := range found {
				if !want[r] {
					extra = append(extra, r)
				}
			}
			sort.Strings(extra)
			for _, r := range extra {
				counts.fp++
				perRule[r] = corpusCounts{fp: 1}
				for _, f := range found[r] {
					t.Errorf("false positive: %s%s", describe(f), orEmpty(" ("+f.What+": "+f.Why+")", f.What+f.Why))
				}
			}

			total.add(counts)
			bump(byClass, c.class, counts)
			bump(byKind, c.class+" "+c.kind, counts)
			for r, o := range perRule {
				bump(byRule, r, o)
			}
		})
	}

	t.Logf("corpus: %d dangerous and %d safe cases, %d rule IDs", perClass["dangerous"], perClass["safe"], len(rules))
	t.Logf("  %-34s %s", "total", total)
	for _, m := range []map[string]*corpusCounts{byClass, byKind, byRule} {
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.Logf("  %-34s %s", k, m[k])
		}
	}
	if total.fp != 0 || total.fn != 0 || total.warnings != 0 {
		t.Errorf("precision %.2f%%, recall %.2f%%, %d warnings: the corpus requires 100%%, 100%% and none",
			100*ratio(total.tp, total.tp+total.fp), 100*ratio(total.tp, total.tp+total.fn), total.warnings)
	}
}

func orEmpty(s, unless string) string {
	if unless == "" {
		return ""
	}
	return s
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "; ")
}
