//go:build linux

package cli

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/envdumptest"
	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
)

// The token stays with kernel-gate: a live run on the fake toolchain, whose every tool
// (nvcc, nvidia-smi, cuobjdump, the harness, ...) writes down the environment it was
// started with, through `kernel-gate run` and through `kernel-gate action` (a pull request
// gated against the fake API, the token as the action's input), with every credential a
// runner may hold in kernel-gate's environment: no tool was handed one, by name or by value,
// nor the runner's command files. The canary shows the dumps are the tools' environments.
func TestNoChildSeesAToken(t *testing.T) {
	api := fakegithub.New()
	defer api.Close()
	api.SetToken("ghs_kgtest_INPUT_github_token_7a1f")
	secrets := map[string]string{
		"GITHUB_TOKEN":                   "ghs_kgtest_GITHUB_TOKEN_3c9e",
		"GH_TOKEN":                       "gho_kgtest_GH_TOKEN_51d0",
		"ACTIONS_RUNTIME_TOKEN":          "kgtest-runtime-token-e44b",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "kgtest-oidc-request-token-90aa",
		"ACTIONS_ID_TOKEN_REQUEST_URL":   "https://pipelines.example/kgtest-oidc-url-77c2",
		"INPUT_GITHUB-TOKEN":             api.Token(),
	}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, repo, dumps string) (int, string)
	}{
		{"kernel-gate run", func(t *testing.T, repo, dumps string) (int, string) {
			code, _, stderr := kg(t, "", runArgs(t, repo, filepath.Join(t.TempDir(), "art"), "--base", "main")...)
			return code, stderr
		}},
		{"kernel-gate action", func(t *testing.T, repo, dumps string) (int, string) {
			work := t.TempDir()
			vars := map[string]string{
				"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request",
				"GITHUB_EVENT_PATH": absPath(t, filepath.Join("testdata", "events", "pull_request_synchronize.json")),
				"GITHUB_REPOSITORY": "Codertocat/Hello-World", "GITHUB_WORKSPACE": repo, "GITHUB_API_URL": api.URL(),
				"GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "7",
				"GITHUB_OUTPUT": filepath.Join(work, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(work, "summary"),
				"INPUT_CONFIG": filepath.Join(repo, "kernel-gate.yml"), "INPUT_BASE-REF": "main",
				"INPUT_RESULTS-FILE": filepath.Join(work, "result.json"),
			}
			for k, v := range secrets {
				vars[k] = v
			}
			for _, k := range []string{"GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"} {
				t.Setenv(k, vars[k])
			}
			args := append([]string{"action"}, fakeGPU(t)...)
			t.Chdir(work) // the action keeps its artifacts in the working directory
			var out, errb bytes.Buffer
			code := run(context.Background(), args, env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
				getenv: func(k string) string { return vars[k] }})
			if len(api.CheckRuns()) != 1 {
				t.Errorf("%d check runs: the token did not reach the API", len(api.CheckRuns()))
			}
			return code, errb.String()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, dumps := fakeRepo(t), t.TempDir()
			for k, v := range secrets {
				t.Setenv(k, v)
			}
			t.Setenv("FAKE_ENV_DUMP", dumps)
			t.Setenv("KG_TOKEN_TEST_CANARY", "the-canary-is-seen")
			code, stderr := tc.run(t, repo, dumps)
			if code != exitPass {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			envdumptest.Check(t, dumps, "KG_TOKEN_TEST_CANARY=the-canary-is-seen", secrets,
				func(name string) bool { return name == "GITHUB_OUTPUT" || name == "GITHUB_STEP_SUMMARY" },
				"nvcc", "nvidia-smi", "harness")
		})
	}
}

// main takes the tokens out of the process's environment before anything else runs
// (childenv.SealSecrets, tested there and by TestNoAncestorHoldsAToken): a process started by code that forgot
// childenv.Environ still inherits none. cmd/kernel-gate's main does nothing but call
// cli.Main, whose first statement is the seal.
func TestMainTakesTheSecretsFirst(t *testing.T) {
	firstCall := func(file, fn string) *ast.CallExpr {
		t.Helper()
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			d, ok := d.(*ast.FuncDecl)
			if !ok || d.Name.Name != fn || d.Recv != nil || len(d.Body.List) == 0 {
				continue
			}
			switch st := d.Body.List[0].(type) {
			case *ast.AssignStmt:
				if len(st.Rhs) == 1 {
					call, _ := st.Rhs[0].(*ast.CallExpr)
					return call
				}
			case *ast.ExprStmt:
				call, _ := st.X.(*ast.CallExpr)
				return call
			}
			return nil
		}
		t.Fatalf("no func %s in %s", fn, file)
		return nil
	}
	isCall := func(call *ast.CallExpr, pkg, name string) bool {
		if call == nil {
			return false
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != name {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		return ok && id.Name == pkg
	}
	exit := firstCall(filepath.Join("cmd", "kernel-gate", "main.go"), "main")
	if !isCall(exit, "os", "Exit") || len(exit.Args) != 1 {
		t.Fatal("main's first statement is not os.Exit(cli.Main(...))")
	}
	if inner, _ := exit.Args[0].(*ast.CallExpr); !isCall(inner, "cli", "Main") {
		t.Fatal("main's first statement is not os.Exit(cli.Main(...))")
	}
	if !isCall(firstCall(filepath.Join("cli", "main.go"), "Main"), "childenv", "SealSecrets") {
		t.Fatal("cli.Main's first statement is not childenv.SealSecrets()")
	}
}

// A harness can read the environment its ancestors were started with
// (/proc/PPID/environ): kernel-gate, started with the tokens in its environment, starts
// itself again without them (Linux), so what a child finds there holds none. The fake
// nvidia-smi, which kernel-gate starts directly, dumps its parent's.
func TestNoAncestorHoldsAToken(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sealing is Linux's")
	}
	bin := buildKernelGate(t, t.TempDir())
	repo, dumps := fakeRepo(t), t.TempDir()
	secrets := map[string]string{
		"INPUT_GITHUB-TOKEN":             "ghs_kgtest_sealed_input_1b2c",
		"GITHUB_TOKEN":                   "ghs_kgtest_sealed_github_3d4e",
		"ACTIONS_RUNTIME_TOKEN":          "kgtest-sealed-runtime-5f60",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "kgtest-sealed-oidc-7a8b",
	}
	cmd := exec.Command(bin, runArgs(t, repo, filepath.Join(t.TempDir(), "art"), "--base", "main")...)
	cmd.Env = append(os.Environ(), "FAKE_PARENT_DUMP="+dumps, "KG_TOKEN_TEST_CANARY=the-canary-is-seen")
	for k, v := range secrets {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != exitPass {
		t.Fatalf("exit %d (%v)\n%s", code, err, out)
	}
	if strings.Contains(string(out), "the credentials stay") {
		t.Errorf("kernel-gate could not seal its credentials:\n%s", out)
	}
	files, _ := os.ReadDir(dumps)
	if len(files) == 0 {
		t.Fatal("the fake nvidia-smi dumped no parent environment: was it run?")
	}
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(dumps, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dump := string(raw)
		for name, value := range secrets {
			if strings.Contains(dump, value) || strings.Contains(dump, name+"=") {
				t.Errorf("%s: a child read %s in kernel-gate's starting environment", f.Name(), name)
			}
		}
		// Read as root, /proc answers and the canary shows the read was real; as another
		// user kernel-gate is not dumpable, and the read is refused.
		if os.Geteuid() == 0 && !strings.Contains(dump, "KG_TOKEN_TEST_CANARY=the-canary-is-seen") {
			t.Errorf("%s: the parent's environment was not read (%q)", f.Name(), msgtext.FirstLine(dump))
		}
		if os.Geteuid() != 0 && strings.TrimSpace(dump) != "unreadable" {
			t.Errorf("%s: another process of the user read kernel-gate's environment", f.Name())
		}
	}
}
