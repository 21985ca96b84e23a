// Package input opens what a command was told to read: named files or standard input
// ("-"), gzip-compressed or not (kept artifacts often are), so that every command and the
// pipeline read their inputs one way. A file that cannot be opened or parsed is unreadable
// input (exitcode.BadInput), named in the error.
//
// Every read is bounded, so that no input can keep a command from ending:
//
//   - a named input must be a regular file (or a link to one): a FIFO, a device such as
//     /dev/zero, a socket or a directory is refused, named, without blocking in open;
//     standard input ("-") may be a pipe;
//   - each input may hold at most its Limit (decompressed, and its compressed bytes too),
//     past which it is refused, named, rather than read without end;
//   - a cancelled context (SIGINT, SIGTERM) ends a read promptly, standard input's too,
//     even while it waits on a pipe that never closes.
//
// The limit and a cancel decide whatever the ReadFunc made of the error it saw: a parser
// that stops quietly at a read error cannot pass a cut input.
package input

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/numtext"
)

// ReadFunc reads one input; name is the file's name ("stdin" for standard input), for
// messages.
type ReadFunc func(r io.Reader, name string) error

// Limit is the most one input may hold, and what such an input is, for the message that
// refuses a bigger one.
type Limit struct {
	Bytes int64
	What  string
}

// The limits of each kind of input. A log or dump is kernel-gate's own artifacts' size
// (a step's log is cut at 64 MiB) many times over; the JSON files are far smaller.
var (
	// Log bounds build logs, SASS dumps, compute-sanitizer logs and XML, ncu's CSV.
	Log = Limit{Bytes: 512 << 20, What: "a log or dump"}
	// JSON bounds results, baselines, harness files (kernel-gate/bench/v1) and journals.
	JSON = Limit{Bytes: 64 << 20, What: "a JSON file"}
	// Config bounds kernel-gate.yml.
	Config = Limit{Bytes: 1 << 20, What: "a config file"}
	// Line bounds a file of a line or two (a recording's RECORDED, nvidia-smi's answer).
	Line = Limit{Bytes: 64 << 10, What: "a one-line file"}
	// Default is the limit of a Limit left zero.
	Default = Log
)

func (l Limit) orDefault() Limit {
	if l.Bytes <= 0 {
		return Default
	}
	return l
}

// ErrTooBig is wrapped by the error that refuses an input over its limit.
var ErrTooBig = errors.New("input over its size limit")

// ErrNotRegular is wrapped by the error that refuses a named input that is not a regular
// file.
var ErrNotRegular = errors.New("not a regular file")

// Files is Read with Default's limit, and the context of stdin when it came from Stdin (a
// command's standard input carries the command's context, so that what it reads stops on
// its signal), else none.
func Files(files []string, stdin io.Reader, read ReadFunc) error {
	ctx := context.Background()
	if s, ok := stdin.(*stdinReader); ok {
		ctx = s.ctx
	}
	return Read(ctx, files, stdin, Default, read)
}

// Read calls read on each named file in turn ("-" is stdin), decompressing gzip input as it
// streams, whatever its name. Each input is bounded by lim (zero: Default) and ctx (see the
// package comment). Every error is exitcode.BadInput: unreadable input, or a read stopped
// by a cancel (which exits 2 too).
func Read(ctx context.Context, files []string, stdin io.Reader, lim Limit, read ReadFunc) error {
	lim = lim.orDefault()
	for _, f := range files {
		if err := readOne(ctx, f, stdin, lim, read); err != nil {
			return exitcode.BadInput(err)
		}
	}
	return nil
}

func readOne(ctx context.Context, f string, stdin io.Reader, lim Limit, read ReadFunc) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: not read: %w", f, err)
	}
	if f == "-" {
		if stdin == nil {
			return errors.New(`"-" names standard input, and there is none here`)
		}
		return stream(ctx, Stdin(ctx, stdin), "stdin", lim, read)
	}
	fh, err := Open(f)
	if err != nil {
		return err
	}
	defer fh.Close()
	if err := checkSize(fh, f, lim); err != nil {
		return err
	}
	return stream(ctx, fh, f, lim, read)
}

// stream reads one opened input through its bounds, gunzipping it when it is gzip.
func stream(ctx context.Context, src io.Reader, name string, lim Limit, read ReadFunc) error {
	raw := &bounded{ctx: ctx, r: src, left: lim.Bytes, lim: lim, name: name}
	br := bufio.NewReader(raw)
	magic, _ := br.Peek(2)
	if err := raw.err; err != nil {
		return err
	}
	var err error
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, zerr := gzip.NewReader(br)
		if zerr != nil {
			return cmpErr(raw.err, fmt.Errorf("%s: %w", name, zerr))
		}
		body := &bounded{ctx: ctx, r: zr, left: lim.Bytes, lim: lim, name: name}
		err = read(body, name)
		zr.Close()
		if body.err != nil {
			return body.err
		}
	} else {
		err = read(br, name)
	}
	if raw.err != nil {
		return raw.err
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%s: reading stopped: %w", name, cerr)
	}
	return err
}

func cmpErr(first, second error) error {
	if first != nil {
		return first
	}
	return second
}

// bounded passes on at most lim.Bytes of r and stops when ctx is done; the first of those
// it met stays in err, whatever the reader downstream does with it.
type bounded struct {
	ctx  context.Context
	r    io.Reader
	left int64
	lim  Limit
	name string
	err  error
}

func (b *bounded) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if err := b.ctx.Err(); err != nil {
		b.err = fmt.Errorf("%s: reading stopped: %w", b.name, err)
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte past the limit tells a bigger input
	}
	n, err := b.r.Read(p)
	if int64(n) > b.left {
		b.err = TooBig(b.name, b.lim)
		return int(b.left), b.err
	}
	b.left -= int64(n)
	return n, err
}

// TooBig is the error that refuses name for holding more than lim (it is ErrTooBig).
func TooBig(name string, lim Limit) error { return tooBig{name, lim} }

type tooBig struct {
	name string
	lim  Limit
}

func (e tooBig) Error() string {
	return fmt.Sprintf("%s holds more than %s, the limit for %s: refusing to read on", e.name, numtext.Bytes(e.lim.Bytes), e.lim.What)
}

func (e tooBig) Is(target error) bool { return target == ErrTooBig }

// Open opens a named input for reading: a regular file, or a link to one. A FIFO, a device,
// a socket or a directory is refused (ErrNotRegular), named: reading one could block for
// ever (a FIFO with no writer) or never end (/dev/zero). Opening never blocks, whatever
// path names: the file is opened non-blocking and checked before it is read.
func Open(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|NonBlock, 0)
	if err != nil {
		return nil, err
	}
	return checkOpened(f, path)
}

// OpenIn is Open of name inside root: a name or a link that leads out of root is an error.
func OpenIn(root *os.Root, name string) (*os.File, error) {
	st, err := root.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, notRegular(name, st.Mode())
	}
	f, err := root.OpenFile(name, os.O_RDONLY|NonBlock, 0)
	if err != nil {
		return nil, err
	}
	return checkOpened(f, name)
}

// checkOpened refuses what is not a regular file after all (it changed since the Stat).
func checkOpened(f *os.File, name string) (*os.File, error) {
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(name, st.Mode())
	}
	return f, nil
}

func notRegular(name string, m fs.FileMode) error { return notRegularError{name, m} }

type notRegularError struct {
	name string
	mode fs.FileMode
}

func (e notRegularError) Error() string {
	return fmt.Sprintf("%s is %s, not a regular file: name a file (or - for standard input)", e.name, KindOf(e.mode))
}

func (e notRegularError) Is(target error) bool { return target == ErrNotRegular }

// KindOf says what a file mode is, in words: "a FIFO (named pipe)", "a directory".
func KindOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// ReadFile reads a named input whole, as it is (no gunzip): a regular file of at most lim
// (zero: Default), read while ctx lasts. The errors name path and are not marked.
func ReadFile(ctx context.Context, path string, lim Limit) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := checkSize(f, path, lim); err != nil {
		return nil, err
	}
	return readAll(ctx, f, path, lim)
}

// ReadFileIn is ReadFile of name inside root (OpenIn).
func ReadFileIn(ctx context.Context, root *os.Root, name string, lim Limit) ([]byte, error) {
	f, err := OpenIn(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := checkSize(f, name, lim); err != nil {
		return nil, err
	}
	return readAll(ctx, f, name, lim)
}

// checkSize refuses an opened regular file that already holds more than lim before any of
// it is read (the read is bounded too: the file may grow).
func checkSize(f *os.File, name string, lim Limit) error {
	lim = lim.orDefault()
	if st, err := f.Stat(); err == nil && st.Size() > lim.Bytes {
		return TooBig(name, lim)
	}
	return nil
}

func readAll(ctx context.Context, r io.Reader, name string, lim Limit) ([]byte, error) {
	lim = lim.orDefault()
	b := &bounded{ctx: ctx, r: r, left: lim.Bytes, lim: lim, name: name}
	raw, err := io.ReadAll(b)
	if b.err != nil {
		return nil, b.err
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return raw, nil
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
