// Package envdumptest reads the environments that the fake toolchain
// (testdata/fakegpu) writes down, one file a process named tool.pid in the
// directory FAKE_ENV_DUMP names, and checks that no tool was handed a secret. It is for
// tests only: no package of the product imports it.
package envdumptest

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Check fails the test where a dump in dir lacks canary (a NAME=value line the tools
// inherit: without it the dump is not a tool's environment), holds the value of one of
// secrets (name → value), or a variable named in secrets or one that forbidden (nil: none
// more) names; and where one of tools left no dump.
func Check(t testing.TB, dir, canary string, secrets map[string]string, forbidden func(name string) bool, tools ...string) {
	t.Helper()
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		tool, _, _ := strings.Cut(f.Name(), ".")
		seen[tool] = true
		env := string(raw)
		if !strings.Contains(env, canary) {
			t.Errorf("%s: the dump is not the tool's environment:\n%s", f.Name(), env)
		}
		for name, value := range secrets {
			if strings.Contains(env, value) {
				t.Errorf("%s was handed the value of %s", f.Name(), name)
			}
		}
		for _, line := range strings.Split(env, "\n") {
			name, _, _ := strings.Cut(line, "=")
			if _, ok := secrets[name]; ok || forbidden != nil && forbidden(name) {
				t.Errorf("%s was handed %s", f.Name(), name)
			}
		}
	}
	for _, tool := range tools {
		if !seen[tool] {
			t.Errorf("%s left no environment dump (dumps of: %v): the fake toolchain did not run", tool, slices.Sorted(maps.Keys(seen)))
		}
	}
}
