package config

import (
	"cmp"
	"context"
	"strings"

	"github.com/kernel-gate/kernel-gate/baseline"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/githubapi"
)

// StoreChoice is what a command's flags say of the baseline store; each one given wins over
// the baseline section's.
type StoreChoice struct {
	// Store is a directory or baseline.GitSpec; Branch the git store's branch; Keep the
	// entries an update keeps per GPU (0: the section's).
	Store, Branch string
	Keep          int
	// DefaultGit opens the git store when neither the flags nor the section name one (a
	// command inside GitHub Actions).
	DefaultGit bool
}

// StoreSpec is the store c, else the section, names: a directory, baseline.GitSpec, or ""
// for none.
func (s BaselineSettings) StoreSpec(c StoreChoice) string {
	spec := cmp.Or(strings.TrimSpace(c.Store), s.Store)
	if spec == "" && c.DefaultGit {
		spec = baseline.GitSpec
	}
	return spec
}

// OpenStore opens the store StoreSpec names, the git one through gh; nil when none is
// named. A --branch for a directory store, a bad branch, or a store that cannot be opened
// is exitcode.BadInput.
func (s BaselineSettings) OpenStore(ctx context.Context, c StoreChoice, gh githubapi.Options) (baseline.Store, error) {
	spec := s.StoreSpec(c)
	if spec == "" {
		return nil, nil
	}
	if strings.TrimSpace(c.Branch) != "" && spec != baseline.GitSpec {
		return nil, exitcode.BadInputf("--branch names the git store's branch; the store here is the directory %s: leave out --branch", spec)
	}
	branch := cmp.Or(strings.TrimSpace(c.Branch), s.Branch)
	if err := baseline.CheckBranch(branch); err != nil {
		return nil, exitcode.BadInputf("--branch: %v", err)
	}
	keep := s.Keep
	if c.Keep > 0 {
		keep = c.Keep
	}
	st, err := baseline.Open(ctx, spec, baseline.GitOptions{Options: gh, Branch: branch, Keep: keep})
	if err != nil {
		return nil, exitcode.BadInput(err)
	}
	return st, nil
}
