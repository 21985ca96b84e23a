package config

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/internal/configpos"
)

// Baseline is the baseline section: where the baseline store is, how much history it
// keeps, and which stored entries a run may be compared with.
//
//	baseline:
//	  store: git                  # or a directory; default git inside GitHub Actions
//	  branch: kernel-gate-baseline
//	  keep: 200
//	  compatible_cuda: "~13.0"    # entries measured with another toolkit are not compared
//	  compatible_driver: ">=570"
type Baseline struct {
	configpos.Section[BaselineSettings] `yaml:",inline"`
	// Store is "git" (the branch, through GitHub's API) or a directory, relative to where
	// kernel-gate runs. Empty: git inside GitHub Actions; elsewhere `kernel-gate baseline`
	// asks for --store and `kernel-gate run` reads no store.
	Store string `yaml:"store"`
	// Branch is the git store's branch (default baseline.DefaultBranch).
	Branch string `yaml:"branch"`
	// Keep is how many entries per GPU an update keeps (default baseline.DefaultKeep).
	Keep *int `yaml:"keep"`
	// CompatibleCUDA and CompatibleDriver are semver constraints on the toolkit and the
	// driver a stored entry was measured with (baseline.Constraints).
	CompatibleCUDA   string `yaml:"compatible_cuda"`
	CompatibleDriver string `yaml:"compatible_driver"`
}

// BaselineSettings is the baseline section resolved.
type BaselineSettings struct {
	// Store is as configured, trimmed: "" when not set.
	Store  string
	Branch string
	Keep   int
	// Constraints are checked: each is empty or a constraint that parses.
	Constraints baseline.Constraints
}

// Resolve checks the section, read from file, and keeps its settings. The error names
// every bad setting and its line.
func (b *Baseline) Resolve(file string) error { return configpos.Resolve(b, file, Baseline.resolve) }

// Settings returns the section with its defaults filled in. The error names every bad
// setting and its line.
func (b Baseline) Settings() (BaselineSettings, error) {
	return configpos.Resolved(b, Baseline.resolve)
}

func (b Baseline) where(key string) string { return b.KeyWhere(key) + ": baseline." + key }

func (b Baseline) resolve() (BaselineSettings, error) {
	s := BaselineSettings{
		Store: strings.TrimSpace(b.Store), Branch: cmp.Or(strings.TrimSpace(b.Branch), baseline.DefaultBranch), Keep: baseline.DefaultKeep,
		Constraints: baseline.Constraints{CUDA: strings.TrimSpace(b.CompatibleCUDA), Driver: strings.TrimSpace(b.CompatibleDriver)},
	}
	var errs []error
	bad := func(key, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", b.where(key), fmt.Sprintf(format, a...)))
	}
	if b.Store != "" && s.Store == "" {
		bad("store", "is blank: name a directory, or %s for the %s branch", baseline.GitSpec, s.Branch)
	}
	if err := baseline.CheckBranch(s.Branch); err != nil {
		bad("branch", "%v", err)
	}
	if b.Keep != nil {
		if *b.Keep < 1 {
			bad("keep", "must be at least 1, got %d", *b.Keep)
		} else {
			s.Keep = *b.Keep
		}
	}
	for _, c := range []struct{ key, value, example string }{
		{"compatible_cuda", s.Constraints.CUDA, `"~13.0"`},
		{"compatible_driver", s.Constraints.Driver, `">=570, <590"`},
	} {
		if c.value == "" {
			continue
		}
		if _, err := semver.NewConstraint(c.value); err != nil {
			bad(c.key, "%q is not a version constraint (e.g. %s): %v", c.value, c.example, err)
		}
	}
	return s, errors.Join(errs...)
}
