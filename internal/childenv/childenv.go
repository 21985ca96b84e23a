// Package childenv is the environment every process kernel-gate starts gets: this
// process's (or the one given) without the credentials the runner hands kernel-gate, and
// without the runner's command files. The build, the harness, nvidia-smi, git and every
// other tool run code kernel-gate does not control (on a pull request, the pull request's
// own); a token in their environment is a token in that code's hands, to print, upload or
// use, and a command file is a way to speak for kernel-gate's step.
//
// Withheld from every child:
//
//   - credentials: any variable whose name begins GITHUB_, GH_, ACTIONS_ or INPUT_ (in any
//     case) and holds TOKEN, SECRET, PASSWORD or PRIVATE_KEY, or ends in _PAT. That is the
//     workflow token wherever it is put (GITHUB_TOKEN, GH_TOKEN, GH_ENTERPRISE_TOKEN,
//     GITHUB_ENTERPRISE_TOKEN, the action's github-token input INPUT_GITHUB-TOKEN), the
//     runner's own (ACTIONS_RUNTIME_TOKEN, for the cache and artifact services) and the
//     OIDC pair (ACTIONS_ID_TOKEN_REQUEST_TOKEN, ACTIONS_ID_TOKEN_REQUEST_URL), and the
//     usual names of a personal access token (GITHUB_PAT, GH_PAT). None of the variables
//     the runner sets for every step matches (GITHUB_SHA, GITHUB_PATH, ACTIONS_RUNTIME_URL,
//     ...).
//   - the runner's command files: GITHUB_ENV, GITHUB_PATH, GITHUB_OUTPUT, GITHUB_STATE and
//     GITHUB_STEP_SUMMARY. What is written there sets the environment of the job's later
//     steps, kernel-gate's step outputs (its verdict) and its job summary: kernel-gate's to
//     write, never the harness's.
//
// Everything else passes: a variable a user set for the harness on purpose (HF_TOKEN,
// CUDA_VISIBLE_DEVICES) is theirs to give. So does whatever a config's env: sets, except
// the names above.
//
// This is about what a child is handed, not what it could find: code running as the
// runner's user can read the environment a process was started with
// (/proc/PID/environ, the runner's shell's included), and a checkout made with
// persist-credentials keeps a token in .git/config. A job that runs untrusted code must
// not hold a token worth stealing (docs/workflows.md).
package childenv

import (
	"os"
	"runtime"
	"strings"
)

// Secret reports whether the variable name holds a credential (see the package comment).
// Names are compared in capitals: Windows' are case-insensitive, and the runner writes an
// input's name in capitals.
func Secret(name string) bool {
	n := strings.ToUpper(name)
	prefixed := false
	for _, p := range [...]string{"GITHUB_", "GH_", "ACTIONS_", "INPUT_"} {
		if strings.HasPrefix(n, p) {
			prefixed = true
			break
		}
	}
	if !prefixed {
		return false
	}
	if strings.HasSuffix(n, "_PAT") {
		return true
	}
	for _, w := range [...]string{"TOKEN", "SECRET", "PASSWORD", "PRIVATE_KEY"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Withheld reports whether a child is never given the variable name: a credential or
// one of the runner's command files.
func Withheld(name string) bool {
	if Secret(name) {
		return true
	}
	switch strings.ToUpper(name) {
	case "GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY":
		return true
	}
	return false
}

// Environ is the environment to start a child with: base without the Withheld
// variables, in base's order. A nil base is this process's environment (os.Environ()),
// as a nil exec.Cmd.Env would be; the result is never nil, so that setting it as a
// Cmd's Env never means "inherit everything".
// Why: docs/threat-model.md, threat-model T8.
func Environ(base []string) []string {
	if base == nil {
		base = os.Environ()
	}
	out := make([]string, 0, len(base))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if name == "" && strings.HasPrefix(kv, "=") {
			// Windows' per-drive working directories ("=C:=C:\\dir"): the name is after
			// the first "=".
			name, _, _ = strings.Cut(kv[1:], "=")
		}
		if Withheld(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// SealSecrets is what the command line (cli.Main) calls first: Seal (on Linux, the process starts
// itself again without the credentials in the environment it was started with), then
// TakeSecrets with what Seal took. sealed is why the sealing could not be done (nil when it
// was, or when there was nothing to seal); the getenv answers the credentials either way.
// Why: docs/threat-model.md, threat-model T8.
func SealSecrets() (getenv func(string) string, sealed error) {
	taken, err := Seal()
	return TakeSecrets(taken), err
}

// TakeSecrets removes every Secret variable from this process's environment and returns
// a getenv that still answers them, from the values read here, and asks os.Getenv for
// every other name. Package main calls it first: the commands that need a token get it
// from the getenv (a value handed down), and a process started later by code that forgot
// Environ inherits no credential. Call it before anything else runs: it changes the
// process's environment.
// Why: docs/threat-model.md, threat-model T8.
//
// sealed are credentials Seal already took (nil for none): they are answered too.
func TakeSecrets(sealed map[string]string) func(string) string {
	taken := map[string]string{}
	for k, v := range sealed {
		taken[k] = v
	}
	for _, kv := range os.Environ() {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || !Secret(name) {
			continue
		}
		taken[name] = value
		os.Unsetenv(name)
	}
	return func(name string) string {
		if v, ok := taken[name]; ok {
			return v
		}
		if runtime.GOOS == "windows" { // names are case-insensitive there
			for k, v := range taken {
				if strings.EqualFold(k, name) {
					return v
				}
			}
		}
		return os.Getenv(name)
	}
}
