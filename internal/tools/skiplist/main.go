// Skiplist runs a `go test -json` command and shows its results as go test does without
// -json (each failure's output, one line a package), then lists every skipped test with
// its reason, and exits with the command's status. make test runs the tests through it,
// so that a test that skipped on this machine (no act, chromium, shellcheck, GPU, root's
// permissions...) is seen at the end instead of passing silently:
//
//	go run ./internal/tools/skiplist go test -json ./...
//
// The steps: run starts the command and hands its standard output to a stream (stream.go),
// which keeps each test's output until the test ends (printing it only if the test failed)
// and each skip's reason; run then prints the skip list and returns the command's exit
// status (2 if it could not be started). The command's standard error passes through.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kernel-gate/kernel-gate/internal/childenv"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs argv, shows its stream on stdout with the skip list after it, and returns its
// exit status.
func run(ctx context.Context, argv []string, stdout, stderr io.Writer) int {
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "usage: skiplist go test -json [flags] [packages]")
		return 2
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// An interrupt reaches go test as it would without skiplist, so that it can say which
	// test was running (exec's default, SIGKILL, would say nothing).
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	// As every exec site of the repository (childenv's TestEveryExecSiteUsesEnviron): the
	// tests get no runner credentials or command files, which none of them needs.
	cmd.Env = childenv.Environ(nil)
	cmd.Stdin, cmd.Stderr = os.Stdin, stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "skiplist: %v\n", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "skiplist: %v\n", err)
		return 2
	}
	w := bufio.NewWriter(stdout)
	s := newStream(w, modulePath("go.mod"))
	readErr := s.read(out)
	err = cmd.Wait()
	s.printSkips()
	w.Flush()
	if readErr != nil {
		fmt.Fprintf(stderr, "skiplist: reading %s's output: %v\n", argv[0], readErr)
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		return exit.ExitCode()
	case err != nil: // killed by a signal, or not waited for
		fmt.Fprintf(stderr, "skiplist: %s: %v\n", strings.Join(argv, " "), err)
		return 1
	case readErr != nil:
		return 1
	}
	return 0
}

// modulePath is the module path that file (a go.mod) declares, or "" when there is none:
// the skip list names packages relative to it.
func modulePath(file string) string {
	raw, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
