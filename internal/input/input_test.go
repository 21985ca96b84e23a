package input

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/hangtest"
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

func readAllFunc(r io.Reader, name string) error {
	_, err := io.ReadAll(r)
	return err
}

// Standard input that never ends (a pipe nobody closes) stops when the context is
// cancelled, with the cancel's error (exit 2), whatever the ReadFunc waits on.
func TestStdinStopsOnCancel(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte("ptxas info    : Compiling entry function\n")) // then nothing, for ever
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	err := hangtest.Within(t, 5*time.Second, "reading stdin", func() error { return Read(ctx, []string{"-"}, pr, Log, readAllFunc) })
	if !errors.Is(err, context.Canceled) || exitcode.Of(err) != exitcode.Usage {
		t.Errorf("err %v (exit %d)", err, exitcode.Of(err))
	}

	// A command's stdin made by Stdin carries its context into Files, named files too.
	ctx2, cancel2 := context.WithCancel(context.Background())
	pr2, pw2 := io.Pipe()
	defer pw2.Close()
	time.AfterFunc(100*time.Millisecond, cancel2)
	err = hangtest.Within(t, 5*time.Second, "Files on stdin", func() error {
		return Files([]string{"-"}, Stdin(ctx2, pr2), func(r io.Reader, _ string) error {
			io.ReadAll(r)
			return nil // a parser that drops the error must not pass a cut input
		})
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Files on a cancelled stdin: %v", err)
	}
	f := filepath.Join(t.TempDir(), "a.log")
	os.WriteFile(f, []byte("x\n"), 0o644)
	if err := Files([]string{f}, Stdin(ctx2, strings.NewReader("")), readAllFunc); !errors.Is(err, context.Canceled) {
		t.Errorf("Files of a named file under a cancelled command: %v", err)
	}
}

// Stdin passes everything through while its context lasts, in any buffer size.
func TestStdinPassesThrough(t *testing.T) {
	want := strings.Repeat("0123456789", 1000)
	for _, src := range []io.Reader{iotest.OneByteReader(strings.NewReader(want)), strings.NewReader(want), iotest.HalfReader(strings.NewReader(want))} {
		got, err := io.ReadAll(Stdin(context.Background(), src))
		if err != nil || string(got) != want {
			t.Errorf("read %d bytes, %v", len(got), err)
		}
		var b bytes.Buffer // small buffers, leftovers carried over
		if _, err := io.CopyBuffer(&b, struct{ io.Reader }{Stdin(context.Background(), strings.NewReader(want))}, make([]byte, 7)); err != nil || b.String() != want {
			t.Errorf("small buffers: %d bytes, %v", b.Len(), err)
		}
	}
	if Stdin(context.Background(), nil) != nil {
		t.Error("a nil stdin must stay nil")
	}
}

// Every input is bounded: a file, stdin or a gzip stream over the limit is refused, named,
// even by a ReadFunc that stops quietly at the error; a file at the limit is read.
func TestInputsOverTheLimitAreRefused(t *testing.T) {
	dir := t.TempDir()
	lim := Limit{Bytes: 1000, What: "a test file"}
	at := filepath.Join(dir, "at.log")
	over := filepath.Join(dir, "over.log")
	os.WriteFile(at, bytes.Repeat([]byte("a"), 1000), 0o644)
	os.WriteFile(over, bytes.Repeat([]byte("a"), 1001), 0o644)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(bytes.Repeat([]byte("a"), 1<<20)) // a small file that expands past the limit
	zw.Close()
	bomb := filepath.Join(dir, "bomb.txt.gz")
	os.WriteFile(bomb, gz.Bytes(), 0o644)
	quiet := func(r io.Reader, _ string) error {
		io.ReadAll(r)
		return nil
	}
	if err := Read(context.Background(), []string{at}, nil, lim, readAllFunc); err != nil {
		t.Errorf("a file at the limit: %v", err)
	}
	for _, tc := range []struct {
		name  string
		file  string
		stdin io.Reader
	}{
		{"file", over, nil},
		{"stdin", "-", bytes.NewReader(bytes.Repeat([]byte("a"), 5000))},
		{"gzip", bomb, nil},
	} {
		for _, read := range []ReadFunc{readAllFunc, quiet} {
			err := Read(context.Background(), []string{tc.file}, tc.stdin, lim, read)
			if !errors.Is(err, ErrTooBig) || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "1000 bytes, the limit for a test file") {
				t.Errorf("%s: %v", tc.name, err)
			}
			if tc.file != "-" && !strings.Contains(err.Error(), tc.file) {
				t.Errorf("%s: the error does not name the file: %v", tc.name, err)
			}
		}
	}
	if _, err := ReadFile(context.Background(), over, lim); !errors.Is(err, ErrTooBig) {
		t.Errorf("ReadFile: %v", err)
	}
	if raw, err := ReadFile(context.Background(), at, lim); err != nil || len(raw) != 1000 {
		t.Errorf("ReadFile at the limit: %d bytes, %v", len(raw), err)
	}
}

// ReadFileIn reads inside its root only: a link out of it is refused.
func TestReadFileInStaysInside(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("TOKEN=s3cret\n"), 0o600)
	os.Symlink(secret, filepath.Join(dir, "abs"))
	rel, _ := filepath.Rel(dir, secret)
	os.Symlink(rel, filepath.Join(dir, "rel"))
	os.WriteFile(filepath.Join(dir, "in"), []byte("ok"), 0o644)
	os.Symlink("in", filepath.Join(dir, "inner"))
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, name := range []string{"abs", "rel"} {
		raw, err := ReadFileIn(context.Background(), root, name, Line)
		if err == nil || strings.Contains(fmt.Sprint(err), "s3cret") {
			t.Errorf("%s: read %q, %v", name, raw, err)
		}
	}
	if raw, err := ReadFileIn(context.Background(), root, "inner", Line); err != nil || string(raw) != "ok" {
		t.Errorf("a link inside: %q, %v", raw, err)
	}
}

// A file whose size is over the limit is refused before a byte of it is read: a sparse
// file of a terabyte costs no time and no memory, and the ReadFunc never runs.
func TestOversizedFileRefusedBeforeReading(t *testing.T) {
	huge := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		f.Close()
		t.Skipf("no sparse file here: %v", err)
	}
	f.Close()
	called := false
	err = Read(context.Background(), []string{huge}, nil, JSON, func(io.Reader, string) error { called = true; return nil })
	if !errors.Is(err, ErrTooBig) || called || !strings.Contains(err.Error(), huge) {
		t.Errorf("Read: %v (ReadFunc called: %v)", err, called)
	}
	if _, err := ReadFile(context.Background(), huge, JSON); !errors.Is(err, ErrTooBig) {
		t.Errorf("ReadFile: %v", err)
	}
	root, err := os.OpenRoot(filepath.Dir(huge))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := ReadFileIn(context.Background(), root, "huge.json", JSON); !errors.Is(err, ErrTooBig) {
		t.Errorf("ReadFileIn: %v", err)
	}
}
