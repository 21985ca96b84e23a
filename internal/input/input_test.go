package input

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
)

func TestFilesReadsPlainGzipAndStdin(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "a.log")
	os.WriteFile(plain, []byte("plain text\n"), 0o644)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("compressed text\n"))
	zw.Close()
	packed := filepath.Join(dir, "b.txt") // gzip whatever the name says
	os.WriteFile(packed, gz.Bytes(), 0o644)

	var got []string
	err := Files([]string{plain, packed, "-"}, strings.NewReader("from stdin\n"), func(r io.Reader, name string) error {
		b, err := io.ReadAll(r)
		got = append(got, filepath.Base(name)+"="+strings.TrimSpace(string(b)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "a.log=plain text|b.txt=compressed text|stdin=from stdin"
	if strings.Join(got, "|") != want {
		t.Errorf("got %q, want %q", strings.Join(got, "|"), want)
	}
}

func TestFilesErrorsAreBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.log")
	err := Files([]string{missing}, nil, func(io.Reader, string) error { return nil })
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "nope.log") {
		t.Errorf("a missing file: %v (exit %d)", err, exitcode.Of(err))
	}
	bad := errors.New("line 3: not a number")
	err = Files([]string{"-"}, strings.NewReader("x"), func(io.Reader, string) error { return bad })
	if exitcode.Of(err) != exitcode.Usage || !errors.Is(err, bad) {
		t.Errorf("a parse error: %v (exit %d)", err, exitcode.Of(err))
	}
	// A gzip header that lies is named.
	err = Files([]string{"-"}, bytes.NewReader([]byte{0x1f, 0x8b, 0, 0}), func(io.Reader, string) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "stdin") {
		t.Errorf("a broken gzip stream: %v", err)
	}
}

func TestExistingOrGz(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "sass.txt.gz"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "both.txt"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "both.txt.gz"), nil, 0o644)
	for in, want := range map[string]string{"sass.txt": "sass.txt.gz", "both.txt": "both.txt", "none.txt": "none.txt"} {
		if got := ExistingOrGz(filepath.Join(dir, in)); got != filepath.Join(dir, want) {
			t.Errorf("ExistingOrGz(%s) = %s, want %s", in, filepath.Base(got), want)
		}
	}
}
