// Package input opens what a command was told to read: named files or standard input
// ("-"), gzip-compressed or not (kept artifacts often are), so that every command and the
// pipeline read their inputs one way. A file that cannot be opened or parsed is unreadable
// input (exitcode.BadInput), named in the error.
package input

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
)

// ReadFunc reads one input; name is the file's name ("stdin" for standard input), for
// messages.
type ReadFunc func(r io.Reader, name string) error

// Files calls read on each named file in turn ("-" is stdin), decompressing gzip input as
// it streams, whatever its name.
func Files(files []string, stdin io.Reader, read ReadFunc) error {
	for _, f := range files {
		if f == "-" {
			if err := maybeGzip(stdin, "stdin", read); err != nil {
				return exitcode.BadInput(err)
			}
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			return exitcode.BadInput(err)
		}
		err = maybeGzip(fh, f, read)
		fh.Close()
		if err != nil {
			return exitcode.BadInput(err)
		}
	}
	return nil
}

func maybeGzip(r io.Reader, name string, read ReadFunc) error {
	br := bufio.NewReader(r)
	magic, _ := br.Peek(2)
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		return read(zr, name)
	}
	return read(br, name)
}

// Exists reports whether path names something that can be stat'ed.
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// ExistingOrGz is path, or path.gz when only that exists (recordings compress big dumps).
func ExistingOrGz(path string) string {
	if !Exists(path) && Exists(path+".gz") {
		return path + ".gz"
	}
	return path
}
