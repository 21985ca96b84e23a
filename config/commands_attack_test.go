package config

import (
	"regexp"
	"strings"
	"testing"
)

// Every command of the config (run through sh -c: shellcmd) that sh cannot be handed whole
// is refused where it is written, file:line first, and the refusal does not echo a huge
// value back: a NUL byte (sh -c would get the line cut at it), a command past
// shellcmd.MaxBytes (Linux refuses such an argument). A newline is a shell script's line
// break and is run as written (displays escape it: TestCommandsAreEscapedWhereShown).
func TestCommandsSHCannotRunAreRefusedWithFileAndLine(t *testing.T) {
	huge := "echo " + strings.Repeat("x", 129<<10)
	target := "run:\n  targets:\n    - name: t\n"
	ok := "      harness: ./h\n      binaries: [build/h]\n"
	for _, field := range []struct {
		name string
		yaml func(v string) string
	}{
		{"harness", func(v string) string { return target + "      harness: " + v + "\n      binaries: [build/h]\n" }},
		{"build", func(v string) string { return target + ok + "      build: " + v + "\n" }},
		{"sanitize", func(v string) string { return target + ok + "      sanitize: " + v + "\n" }},
		{"reference", func(v string) string {
			return target + "      sources: [a.cu]\n      reference: " + v + "\n"
		}},
		{"speedup.harness", func(v string) string { return "speedup:\n  harness: " + v + "\n" }},
		{"speedup.build", func(v string) string { return "speedup:\n  harness: ./h\n  build: " + v + "\n" }},
	} {
		for _, value := range []struct{ name, yaml, want string }{
			{"NUL", `"./h\0 --x"`, "NUL"},
			{"huge", `"` + huge + `"`, "131072"},
			{"long, unclosed quote", `"echo '` + strings.Repeat("x", 100<<10) + `"`, "not a shell command"},
		} {
			t.Run(field.name+"/"+value.name, func(t *testing.T) {
				_, err := Parse([]byte(field.yaml(value.yaml)), "k.yml")
				if err == nil {
					t.Fatal("accepted")
				}
				msg := err.Error()
				if !regexp.MustCompile(`(^|\n)k\.yml:\d+: `).MatchString(msg) || !strings.Contains(msg, value.want) {
					t.Errorf("error %.300q, want k.yml:LINE: and %q", msg, value.want)
				}
				if len(msg) > 4<<10 {
					t.Errorf("the error is %d bytes long: it echoes the command", len(msg))
				}
			})
		}
	}
}

// Any other string of the config with a NUL byte (speedup.env, nvcc flags, shapes, kernel
// names, keys), or longer than an argument can be, ends in an argument or a harness's
// environment, where the process would not start: refused at its line. Before the fix these were accepted and met later as a step
// that could not run (exit 3) or not at all.
func TestNULAnywhereIsRefusedAtItsLine(t *testing.T) {
	target := "run:\n  targets:\n    - name: t\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"speedup.env", "speedup:\n  harness: ./h\n  env: {A: \"x\\0y\"}\n", "k.yml:3: "},
		{"flags", target + "      sources: [a.cu]\n      flags: [\"-DX=\\0\"]\n", "k.yml:5: "},
		{"shapes", target + "      harness: ./h\n      binaries: [build/h]\n      shapes: {check: [\"a\\0b\"]}\n", "k.yml:6: "},
		{"kernels", target + "      harness: ./h\n      binaries: [build/h]\n      kernels: [\"a\\0b\"]\n", "k.yml:6: "},
		{"a key", "speedup:\n  harness: ./h\n  env: {\"A\\0\": x}\n", "k.yml:3: "},
		{"a huge env value", "speedup:\n  harness: ./h\n  env: {A: " + strings.Repeat("x", 129<<10) + "}\n", "k.yml:3: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "k.yml")
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !strings.Contains(err.Error(), "NUL") && !strings.Contains(err.Error(), "no command, argument or variable can carry more") || len(err.Error()) > 1000 {
				t.Errorf("error %.300v, want %q…NUL or the length", err, tc.want)
			}
		})
	}
}
