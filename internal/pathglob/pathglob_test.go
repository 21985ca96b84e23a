package pathglob

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		glob, path string
		want       bool
	}{
		{"build/*.so", "build/a.so", true},
		{"build/*.so", "build/x/a.so", false},
		{"build/**/*.so", "build/a.so", true},
		{"build/**/*.so", "build/x/y/a.so", true},
		{"build/**/*.so", "other/a.so", false},
		{"**/*.cubin", "a.cubin", true},
		{"**/*.cubin", "d/e/a.cubin", true},
		{"torch_extensions/**/*.so", "torch_extensions/py312_cu130/kg_ext/kg_ext.so", true},
		{"**", "anything/at/all", true},
		{"a/**/b/**/c", "a/b/c", true},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/**/b/**/c", "a/x/c", false},
		{"./build/h?rness", "build/harness", true},
		{"build/[ab].so", "build/c.so", false},
		{"../x", "../x", false}, // refused by Check: matches nothing
		{"/abs/*.so", "abs/a.so", false},
	} {
		if got := Match(tc.glob, tc.path); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.glob, tc.path, got, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	for glob, want := range map[string]string{
		"":                             "empty",
		"/usr/lib/*.so":                "absolute",
		"a/../b":                       `".."`,
		"a//b":                         "empty",
		"a/**x/b":                      "whole segment",
		"a/[/b":                        "syntax error",
		`a\b`:                          "backslash",
		"a/b/**/c/*.so":                "",
		"./out/*.so":                   "",
		strings.Repeat("**/", 9) + "x": "more than 8",
	} {
		err := Check(glob)
		switch {
		case want == "" && err != nil:
			t.Errorf("Check(%q) = %v", glob, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("Check(%q) = %v, want %q", glob, err, want)
		}
	}
}

func write(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestExpand(t *testing.T) {
	root := t.TempDir()
	write(t, root, "torch_extensions/py312/kg_ext/kg_ext.so", "torch_extensions/py312/kg_ext/build.ninja",
		"torch_extensions/top.so", "build/lib/a.so", "build/lib/deep/b.so", ".git/objects/x.so", "triton/abc/k.cubin")
	for _, tc := range []struct {
		glob string
		want []string
	}{
		{"torch_extensions/**/*.so", []string{"torch_extensions/py312/kg_ext/kg_ext.so", "torch_extensions/top.so"}},
		{"build/lib/*.so", []string{"build/lib/a.so"}},
		{"build/**/*.so", []string{"build/lib/a.so", "build/lib/deep/b.so"}},
		{"**/*.so", []string{"build/lib/a.so", "build/lib/deep/b.so", "torch_extensions/py312/kg_ext/kg_ext.so", "torch_extensions/top.so"}},
		{"triton/*/*.cubin", []string{"triton/abc/k.cubin"}},
		{"nothing/here/*.so", nil},
		{"build/lib/a.so", []string{"build/lib/a.so"}},
	} {
		got, err := Expand(root, tc.glob)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Expand(%q) = %q, %v; want %q", tc.glob, got, err, tc.want)
		}
	}
}

// A link is taken only when it stays inside the tree and leads to a regular file; a
// directory link is not walked through.
func TestExpandLinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	write(t, root, "lib/libk.so.1")
	write(t, outside, "secret.so", "d/x.so")
	os.Symlink("libk.so.1", filepath.Join(root, "lib", "libk.so"))
	got, err := Expand(root, "lib/*.so")
	if err != nil || !slices.Equal(got, []string{"lib/libk.so"}) {
		t.Errorf("a link inside: %q, %v", got, err)
	}
	os.Symlink(filepath.Join(outside, "d"), filepath.Join(root, "lib", "dir"))
	if got, err := Expand(root, "lib/**/*.so"); err != nil || slices.Contains(got, "lib/dir/x.so") {
		t.Errorf("a directory link was walked: %q, %v", got, err)
	}
	os.Symlink(filepath.Join(outside, "secret.so"), filepath.Join(root, "lib", "out.so"))
	if _, err := Expand(root, "lib/*.so"); err == nil || !strings.Contains(err.Error(), "lib/out.so") || !strings.Contains(err.Error(), "leads out") {
		t.Errorf("a link out: %v", err)
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("build/**/*.so", "build/x/a.so")
	f.Add("a/**/b/**/c", "a/x/b/y/z/c")
	f.Add("[", "x")
	f.Fuzz(func(t *testing.T, glob, p string) {
		got := Match(glob, p)
		if got && Check(glob) != nil {
			t.Fatalf("a glob Check refuses matched %q", p)
		}
		if Check(glob) == nil && !strings.Contains(glob, "**") && literalGlob(glob) {
			if want := strings.TrimPrefix(glob, "./") == strings.TrimPrefix(p, "./"); got != want {
				t.Fatalf("literal glob %q vs %q: %v", glob, p, got)
			}
		}
	})
}

func literalGlob(g string) bool {
	for _, s := range strings.Split(g, "/") {
		if !literal(s) {
			return false
		}
	}
	return true
}
