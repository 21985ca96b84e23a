package childenv

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Every credential the runner or a workflow hands kernel-gate is withheld, and so are the
// runner's command files; the variables a step always has, and a user's own, pass.
func TestWithheld(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"GITHUB_TOKEN", true},
		{"github_token", true},
		{"GH_TOKEN", true},
		{"GH_ENTERPRISE_TOKEN", true},
		{"GITHUB_ENTERPRISE_TOKEN", true},
		{"GITHUB_PAT", true},
		{"GH_PAT", true},
		{"ACTIONS_RUNTIME_TOKEN", true},
		{"ACTIONS_ID_TOKEN_REQUEST_TOKEN", true},
		{"ACTIONS_ID_TOKEN_REQUEST_URL", true},
		{"INPUT_GITHUB-TOKEN", true},
		{"INPUT_TOKEN", true},
		{"INPUT_APP_PRIVATE_KEY", true},
		{"INPUT_DEPLOY-SECRET", true},
		{"GITHUB_APP_PASSWORD", true},
		{"GITHUB_ENV", true},
		{"GITHUB_PATH", true},
		{"GITHUB_OUTPUT", true},
		{"GITHUB_STATE", true},
		{"GITHUB_STEP_SUMMARY", true},
		// What every step has, and what a harness may need.
		{"GITHUB_SHA", false},
		{"GITHUB_WORKSPACE", false},
		{"GITHUB_REPOSITORY", false},
		{"GITHUB_API_URL", false},
		{"GITHUB_EVENT_PATH", false},
		{"GITHUB_ACTION_PATH", false},
		{"GITHUB_PATHS", false},
		{"ACTIONS_RUNTIME_URL", false},
		{"ACTIONS_CACHE_URL", false},
		{"ACTIONS_STEP_DEBUG", false},
		{"INPUT_CONFIG", false},
		{"INPUT_RESULTS-FILE", false},
		{"PATH", false},
		{"HOME", false},
		{"CUDA_VISIBLE_DEVICES", false},
		{"HF_TOKEN", false}, // the user's own, set for the harness on purpose
		{"KG_OUT", false},
		{"", false},
	} {
		if got := Withheld(tc.name); got != tc.want {
			t.Errorf("Withheld(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestEnviron(t *testing.T) {
	base := []string{"PATH=/usr/bin", "GITHUB_TOKEN=ghs_abc", "INPUT_GITHUB-TOKEN=ghs_abc", "KG_MODE=check",
		"GITHUB_OUTPUT=/runner/set_output", "NOEQUALS", "A=b=c", "=C:=C:\\dir", "ACTIONS_ID_TOKEN_REQUEST_URL=https://x"}
	got := Environ(base)
	want := []string{"PATH=/usr/bin", "KG_MODE=check", "NOEQUALS", "A=b=c", "=C:=C:\\dir"}
	if !slices.Equal(got, want) {
		t.Errorf("Environ = %q, want %q", got, want)
	}
	if got := Environ([]string{}); got == nil || len(got) != 0 {
		t.Errorf("an empty environment stays empty, not nil (inherit): %#v", got)
	}
	if got := Environ([]string{"GITHUB_TOKEN=x"}); got == nil {
		t.Error("nil would make exec inherit this process's environment")
	}
	t.Setenv("GITHUB_TOKEN", "ghs_from_the_process")
	t.Setenv("KG_CHILDENV_CANARY", "seen")
	inherited := Environ(nil)
	if !slices.Contains(inherited, "KG_CHILDENV_CANARY=seen") {
		t.Error("a nil base is not this process's environment")
	}
	for _, kv := range inherited {
		if strings.Contains(kv, "ghs_from_the_process") {
			t.Errorf("inherited %q", kv)
		}
	}
}

// After TakeSecrets the process holds no credential in its environment: a child started
// without Environ (a future exec site that forgot it) inherits none, while the getenv it
// returned still gives the commands their token.
func TestTakeSecrets(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the child is sh")
	}
	secrets := map[string]string{
		"GITHUB_TOKEN": "ghs_take_1", "INPUT_GITHUB-TOKEN": "ghs_take_2", "ACTIONS_RUNTIME_TOKEN": "rt_take_3",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc_take_4", "GH_TOKEN": "gho_take_5",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("GITHUB_OUTPUT", "/tmp/kg-output")
	t.Setenv("KG_CHILDENV_CANARY", "seen")
	getenv := TakeSecrets(nil)
	for k, v := range secrets {
		if got := getenv(k); got != v {
			t.Errorf("getenv(%s) = %q, want the value taken", k, got)
		}
		if _, ok := os.LookupEnv(k); ok {
			t.Errorf("%s is still in the process's environment", k)
		}
	}
	if getenv("GITHUB_OUTPUT") != "/tmp/kg-output" || getenv("KG_CHILDENV_CANARY") != "seen" {
		t.Error("getenv lost a variable that is not a credential")
	}
	out, err := exec.Command("sh", "-c", "env").Output() // on purpose without Environ
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "KG_CHILDENV_CANARY=seen") {
		t.Fatalf("the child's environment was not read:\n%s", out)
	}
	for k, v := range secrets {
		if strings.Contains(string(out), v) || strings.Contains(string(out), k+"=") {
			t.Errorf("a child inherited %s", k)
		}
	}
}
