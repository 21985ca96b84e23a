// Package needtool is how a test that needs a tool from outside Go (act, chromium,
// shellcheck, mermaid's script) says that the tool is missing: on a developer's machine
// the test skips, saying what to install; where KG_REQUIRE_TOOLS is set (.ci/run sets it)
// it fails, so that CI cannot pass by skipping what it was meant to run. make test lists
// every skipped test with its reason at the end. It is for tests only: no package of the
// product imports it.
package needtool

import (
	"os"
	"os/exec"
	"testing"
)

// Env is the variable that turns a missing tool from a skip into a failure.
const Env = "KG_REQUIRE_TOOLS"

// Missing skips the test saying msg (what is missing and how to get it), or fails it when
// KG_REQUIRE_TOOLS is set.
func Missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv(Env) != "" {
		t.Fatal(msg + " (" + Env + " is set: a missing tool is a failure)")
	} else {
		t.Skip(msg)
	}
}

// Path is the first of names found on PATH; without any, Missing says "NAME is not on
// PATH: " and hint (how to install it).
func Path(t testing.TB, hint string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	Missing(t, names[0]+" is not on PATH: "+hint)
	return ""
}
