package baseline

// Naming a store and a key as a user writes them: in the config, on the command line.

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// GitSpec names the git store where a directory could be named ("--store git",
// baseline.store: git); a directory named git is "./git".
const GitSpec = "git"

// Open returns the store spec names: GitSpec for the branch through GitHub's API (o says
// which repository, token and branch), else a directory. o.Keep is the keep of either.
func Open(ctx context.Context, spec string, o GitOptions) (Store, error) {
	spec = strings.TrimSpace(spec)
	switch spec {
	case "":
		return nil, fmt.Errorf("baseline: no store: name a directory, or %s for the repository's %s branch", GitSpec, DefaultBranch)
	case GitSpec:
		return NewGit(ctx, o)
	}
	return NewDir(spec, o.Keep), nil
}

// CheckBranch says why name is not a branch the git store can keep its files on.
func CheckBranch(name string) error {
	b := strings.TrimPrefix(strings.TrimPrefix(name, "refs/"), "heads/")
	if b == "" || !validBranch(b) {
		return fmt.Errorf("%q is not a branch name git accepts", name)
	}
	return nil
}

// ParseKey reads a key as a user gives it to --key (trend and baseline alike): as
// `baseline show` prints it ("NVIDIA H200 (sm_90)"), as GPU/arch ("NVIDIA H200/sm_90",
// "NVIDIA H200/9.0"), or as its file's name ("nvidia-h200.sm_90", with or without .json).
func ParseKey(s string) (Key, error) {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, " ("); i >= 0 && strings.HasSuffix(s, ")") {
		return NewKey(s[:i], s[i+2:len(s)-1])
	}
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return NewKey(s[:i], s[i+1:])
	}
	stem := strings.TrimSuffix(s, fileSuffix)
	i := strings.LastIndexByte(stem, '.')
	if i < 0 {
		return Key{}, errors.New(`write it GPU/arch ("NVIDIA H200/sm_90"), as baseline show prints it ("NVIDIA H200 (sm_90)") or as its file's name ("nvidia-h200.sm_90")`)
	}
	return NewKey(stem[:i], stem[i+1:])
}
