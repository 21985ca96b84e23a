package workflowcmd

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestSetOutput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "output")
	getenv := env(map[string]string{"GITHUB_OUTPUT": path})
	values := map[string]string{
		"verdict":      "fail",
		"failed-gates": "ptxas,sanitizer",
		"empty":        "",
		"multi":        "line 1\nline 2\n\nname<<EOF\nEOF\nx=y\n",
		"sneaky":       "ghadelimiter_\nghadelimiter_0000\n%0A::set-output name=a::b",
	}
	for _, name := range []string{"verdict", "failed-gates", "empty", "multi", "sneaky"} {
		if err := SetOutput(getenv, name, values[name]); err != nil {
			t.Fatal(err)
		}
	}
	text, _ := os.ReadFile(path)
	got, err := parseFileCommands(string(text))
	if err != nil {
		t.Fatalf("runner cannot read the file: %v\n%s", err, text)
	}
	if len(got) != len(values) {
		t.Errorf("runner reads %d outputs, want %d: %q", len(got), len(values), got)
	}
	for k, v := range values {
		if got[k] != v {
			t.Errorf("output %s = %q, want %q", k, got[k], v)
		}
	}
}

func TestSetOutputDelimiterInValue(t *testing.T) {
	const first = "0123456789abcdef0123456789abcdef"
	const second = "fedcba9876543210fedcba9876543210"
	withRandom(t, first, second)
	path := filepath.Join(t.TempDir(), "output")
	value := "a\nghadelimiter_" + first + "\ninjected=1\nb"
	if err := SetOutput(env(map[string]string{"GITHUB_OUTPUT": path}), "x", value); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(path)
	if strings.Contains(string(text), "x<<ghadelimiter_"+first) || !strings.Contains(string(text), "x<<ghadelimiter_"+second) {
		t.Errorf("delimiter found in the value was used:\n%s", text)
	}
	got, err := parseFileCommands(string(text))
	if err != nil || len(got) != 1 || got["x"] != value {
		t.Errorf("runner reads %q, %v", got, err)
	}
}

func TestSetOutputFileWithoutFinalNewline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "output")
	os.WriteFile(path, []byte("other=1"), 0o644)
	if err := SetOutput(env(map[string]string{"GITHUB_OUTPUT": path}), "verdict", "pass"); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(path)
	got, err := parseFileCommands(string(text))
	if err != nil || got["other"] != "1" || got["verdict"] != "pass" {
		t.Errorf("runner reads %q, %v from %q", got, err, text)
	}
}

func TestSetOutputErrors(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "file")
	os.WriteFile(regular, nil, 0o644)
	readOnly := filepath.Join(dir, "read-only")
	os.WriteFile(readOnly, nil, 0o444)
	tests := []struct {
		name, path, output string
		unset, rootWrites  bool
		linuxOnly          bool
	}{
		{name: "unset", unset: true, output: "verdict"},
		{name: "a directory", path: dir, output: "verdict"},
		{name: "under a regular file", path: filepath.Join(regular, "output"), output: "verdict"},
		{name: "missing directory", path: filepath.Join(dir, "no", "such", "output"), output: "verdict"},
		{name: "read-only", path: readOnly, output: "verdict", rootWrites: true},
		{name: "a file that refuses writes, even root's", path: "/proc/version", output: "verdict", linuxOnly: true},
		{name: "bad name with =", path: filepath.Join(dir, "ok"), output: "a=b"},
		{name: "bad name with <<", path: filepath.Join(dir, "ok"), output: "a<<b"},
		{name: "bad name with newline", path: filepath.Join(dir, "ok"), output: "a\nb"},
		{name: "empty name", path: filepath.Join(dir, "ok"), output: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.linuxOnly && runtime.GOOS != "linux" {
				t.Skip("Linux's /proc")
			}
			if tt.rootWrites && os.Geteuid() == 0 {
				t.Skip("root can write a read-only file")
			}
			vars := map[string]string{}
			if !tt.unset {
				vars["GITHUB_OUTPUT"] = tt.path
				vars["GITHUB_STEP_SUMMARY"] = tt.path
			}
			err := SetOutput(env(vars), tt.output, "v")
			if err == nil {
				t.Fatal("no error")
			}
			if tt.unset != errors.Is(err, ErrUnset) {
				t.Errorf("errors.Is(%v, ErrUnset) = %v", err, !tt.unset)
			}
			if tt.output == "verdict" {
				if err := AppendSummary(env(vars), "# x\n", 0); err == nil {
					t.Error("AppendSummary: no error")
				} else if tt.unset != errors.Is(err, ErrUnset) {
					t.Errorf("AppendSummary: errors.Is(%v, ErrUnset) = %v", err, !tt.unset)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "ok")); err == nil {
		t.Error("a bad name still wrote the file")
	}
}

func TestAppendSummary(t *testing.T) {
	line := strings.Repeat("x", 99) + "\n" // 100 bytes
	tests := []struct {
		name     string
		existing string
		md       string
		limit    int
		wantAll  bool
		wantErr  bool
	}{
		{name: "fits", md: "## kernel-gate: ✅ pass\n", wantAll: true},
		{name: "fits exactly", md: strings.Repeat(line, 10), limit: 1000, wantAll: true},
		{name: "over the limit", md: strings.Repeat(line, 30), limit: 1000},
		{name: "existing content counts", existing: strings.Repeat(line, 5), md: strings.Repeat(line, 8), limit: 1000},
		{name: "no final newline in the file", existing: "previous step", md: "## report\n", wantAll: true},
		{name: "a first line longer than the room", md: strings.Repeat("y", 5000) + "\n", limit: 1000},
		{name: "no room for the note", existing: strings.Repeat(line, 9), md: strings.Repeat(line, 3), limit: 1000, wantErr: true},
		{name: "default limit", md: strings.Repeat(line, 20000)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "summary")
			if tt.existing != "" {
				os.WriteFile(path, []byte(tt.existing), 0o644)
			}
			err := AppendSummary(env(map[string]string{"GITHUB_STEP_SUMMARY": path}), tt.md, tt.limit)
			text, _ := os.ReadFile(path)
			if tt.wantErr {
				if err == nil || string(text) != tt.existing {
					t.Errorf("err %v, file %d bytes; want an error and the file unchanged", err, len(text))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			limit := tt.limit
			if limit <= 0 {
				limit = DefaultSummaryLimit
			}
			if len(text) > limit {
				t.Errorf("file has %d bytes, over the limit %d", len(text), limit)
			}
			if !strings.HasPrefix(string(text), tt.existing) {
				t.Errorf("existing content changed")
			}
			added := strings.TrimPrefix(string(text), tt.existing)
			if tt.existing != "" && !strings.HasSuffix(tt.existing, "\n") {
				if !strings.HasPrefix(added, "\n") {
					t.Errorf("appended text joins the file's last line: %q", text)
				}
				added = added[1:]
			}
			if tt.wantAll {
				if added != tt.md {
					t.Errorf("appended %q, want %q", added, tt.md)
				}
				return
			}
			kept, note, ok := strings.Cut(added, "\n> ✂️ kernel-gate cut this summary to ")
			if !ok || !strings.Contains(note, "GitHub refuses a step summary over 1 MiB") {
				t.Fatalf("no note in %q", added)
			}
			if !strings.HasPrefix(tt.md, kept) || (kept != "" && !strings.HasSuffix(kept, "\n")) {
				t.Errorf("kept text is not whole lines of the report: %q", kept)
			}
			if want := len(kept); !strings.HasPrefix(note, strconv.Itoa(want)+" of "+strconv.Itoa(len(tt.md))+" bytes") {
				t.Errorf("note %q does not say %d of %d bytes", note, want, len(tt.md))
			}
			// Nearly everything that fits is kept: less than a line plus the note is lost.
			if slack := limit - len(text); slack > 100+len(cutNote(len(tt.md), len(tt.md))) && kept != "" {
				t.Errorf("%d bytes of room left unused", slack)
			}
		})
	}
}

func TestCutMarkdownClosesBlocks(t *testing.T) {
	md := "## report\n\n<details><summary>Findings (40)</summary>\n\n" + strings.Repeat("| a | b |\n", 40) +
		"\n</details>\n\n```\ncode\n" + strings.Repeat("more\n", 40) + "```\n"
	for _, tt := range []struct {
		avail        int
		wantDetails  bool
		wantFenceEnd bool
	}{
		{avail: 120, wantDetails: true},
		{avail: len(md) - 30, wantFenceEnd: true},
		{avail: 5},
	} {
		kept, closers := cutMarkdown(md, tt.avail)
		if len(kept)+len(closers) > tt.avail {
			t.Errorf("avail %d: %d + %d bytes", tt.avail, len(kept), len(closers))
		}
		if got := strings.Contains(closers, "</details>"); got != tt.wantDetails {
			t.Errorf("avail %d: closers %q", tt.avail, closers)
		}
		if got := strings.HasPrefix(closers, "```"); got != tt.wantFenceEnd {
			t.Errorf("avail %d: closers %q", tt.avail, closers)
		}
	}
}
