package workflowcmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/repopath"
)

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "100%", "a\nb\r\nc", "%0A%0D%25%3A%2C", "%250A", "::a,b=c::", "%%0A0A", "\r%\n", "txt\u202eexe.cu"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data, prop := EscapeData(s), EscapeProperty(s)
		for _, e := range []string{data, prop} {
			if strings.ContainsAny(e, "\r\n") {
				t.Fatalf("escaped %q holds a line break: %q", s, e)
			}
		}
		if strings.ContainsAny(prop, ":,") {
			t.Fatalf("property %q holds ':' or ',': %q", s, prop)
		}
		if got := unescapeData(data); got != s {
			t.Fatalf("runner decodes EscapeData(%q) = %q to %q", s, data, got)
		}
		if got := unescapeProperty(prop); got != s {
			t.Fatalf("runner decodes EscapeProperty(%q) = %q to %q", s, prop, got)
		}
		// A whole annotation carrying s everywhere is one command whose values decode to s.
		var buf bytes.Buffer
		Annotate(&buf, []GateFinding{{Gate: "g", Finding: findingWith(s)}}, AnnotateOptions{})
		cmds := parseRunner(buf.String())
		if len(cmds) != 1 || strings.Count(buf.String(), "\n") != 1 {
			t.Fatalf("annotation of %q is %d commands: %q", s, len(cmds), buf.String())
		}
		// A path that would display as another's is named in the message, not posted.
		wantFile, wantMsg := annotationPath("f"+s, ""), s
		if repopath.Disguised("f" + s) {
			wantFile, wantMsg = "", s+" (file "+repopath.Quote("f"+s)+")"
		}
		if got := cmds[0].props["file"]; got != wantFile || repopath.Disguised(got) {
			t.Fatalf("file property decodes to %q, want %q: %q", got, wantFile, buf.String())
		}
		if got := cmds[0].data; strings.TrimSpace(s) != "" && got != Neutralize(wantMsg) {
			t.Fatalf("message decodes to %q, want %q", got, Neutralize(wantMsg))
		}
	})
}

func FuzzNeutralize(f *testing.F) {
	for _, s := range []string{"", "  ::add-mask::x", "\t::set-output name=a::b", "foo ##[error]bar", "::stop-commands::t",
		"#\u200d#[error]", "\ufeff::error::x", "a\r::b::c\n##[group]", "###[", "\xff::", ":\u200b:x::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Neutralize(s)
		if why := neutralized(out); why != "" {
			t.Fatalf("Neutralize(%q) = %q: %s", s, out, why)
		}
		if Neutralize(out) != out {
			t.Fatalf("Neutralize is not idempotent on %q", s)
		}
		// Only ':' and '#' are ever replaced, and only where a command could start.
		back := strings.NewReplacer(string(colonLookalike), ":", string(hashLookalike), "#").Replace(out)
		if !strings.Contains(s, string(colonLookalike)) && !strings.Contains(s, string(hashLookalike)) && back != s {
			t.Fatalf("Neutralize(%q) = %q changed more than ':' and '#'", s, out)
		}
	})
}
