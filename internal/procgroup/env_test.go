//go:build unix

package procgroup

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Neither a command Run runs nor one Start starts sees a token, whether its Env was given
// or inherited; the rest of its environment is as given.
func TestCommandsGetNoToken(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghs_inherited_token")
	t.Setenv("KG_PROCGROUP_CANARY", "inherited")
	given := []string{"PATH=/usr/bin:/bin", "INPUT_GITHUB-TOKEN=ghs_given_token", "ACTIONS_RUNTIME_TOKEN=rt_given", "KG_PROCGROUP_CANARY=given"}
	for _, tc := range []struct {
		name   string
		env    []string
		canary string
	}{
		{"inherited", nil, "KG_PROCGROUP_CANARY=inherited"},
		{"given", given, "KG_PROCGROUP_CANARY=given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Run(context.Background(), Spec{Argv: []string{"/bin/sh", "-c", "env"}, Env: tc.env, Timeout: time.Minute, TailBytes: 1 << 20})
			if err != nil || out.Why != "" {
				t.Fatalf("%v %s", err, out.Why)
			}
			started, err := Start(context.Background(), StartSpec{Argv: []string{"/bin/sh", "-c", "env"}, Env: tc.env, TailBytes: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			<-started.Done()
			for what, env := range map[string]string{"Run": out.Output, "Start": started.Outcome().Output} {
				if !strings.Contains(env, tc.canary) {
					t.Errorf("%s: the environment was not the one given:\n%s", what, env)
				}
				for _, secret := range []string{"ghs_inherited_token", "ghs_given_token", "rt_given", "GITHUB_TOKEN=", "INPUT_GITHUB-TOKEN=", "ACTIONS_RUNTIME_TOKEN="} {
					if strings.Contains(env, secret) {
						t.Errorf("%s: the command saw %q", what, secret)
					}
				}
			}
		})
	}
}
