//go:build unix

package shellcmd

import (
	"context"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/procgroup"
)

// Now that a harness is sh -c, $NAME in the config's line expands in the harness's own
// environment: what it expands to is what procgroup.Command (childenv.Environ) hands the
// shell, with no credential and none of the runner's command files, even when the
// environment it is given holds them. A user's own variable (HF_TOKEN) passes. This held
// before this round: a defence proven (every exec site is checked by childenv's
// TestEveryExecSiteUsesEnviron; Argv starts nothing itself).
func TestExpansionSeesNoCredential(t *testing.T) {
	env := []string{"PATH=/usr/bin:/bin", "GITHUB_TOKEN=ghs_secret1", "GH_TOKEN=gho_secret2", "ACTIONS_RUNTIME_TOKEN=secret3",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN=secret4", "GITHUB_OUTPUT=/tmp/output", "GITHUB_ENV=/tmp/env", "HF_TOKEN=users_own"}
	line := `printf '[%s]' "$GITHUB_TOKEN" "$GH_TOKEN" "$ACTIONS_RUNTIME_TOKEN" "$ACTIONS_ID_TOKEN_REQUEST_TOKEN" "$GITHUB_OUTPUT" "$GITHUB_ENV" "$HF_TOKEN"; env`
	argv := Argv(line)
	cmd := procgroup.Command(context.Background(), env, argv[0], argv[1:]...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	if !strings.HasPrefix(got, "[][][][][][][users_own]") {
		t.Errorf("expanded: %.200q", got)
	}
	for _, secret := range []string{"secret", "/tmp/output", "/tmp/env"} {
		if strings.Contains(got, secret) {
			t.Errorf("the harness's shell sees %q:\n%s", secret, got)
		}
	}
}
