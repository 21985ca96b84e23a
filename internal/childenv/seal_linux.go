//go:build linux

package childenv

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// passedFD names the descriptor a sealed process reads its credentials from (Seal).
const passedFD = "KG_SECRETS_FD"

// maxPassed bounds what is passed: a pipe holds 64 KiB before a write blocks, and a write
// that blocked before exec would never end.
const maxPassed = 60 << 10

// Seal keeps the credentials out of the environment this process was started with, which
// any process of the runner's user can read in /proc/PID/environ (the harness, which
// kernel-gate starts, among them: it reads its parent's). It starts this program again in
// the same process (execve of /proc/self/exe, the same PID and arguments) with the
// credentials removed from the environment, handing them over through a pipe that only
// the new image reads, once. The new image also marks itself not dumpable, so that its
// memory, which holds the credentials, cannot be read through /proc or ptrace by a
// process of the same user that is not root.
//
// It returns the credentials, by name: the ones handed over, after the exec; none when
// there were none. When the exec cannot be made (no /proc, more than maxPassed bytes of
// credentials), it returns them as they are, with an error that says why (the process
// then runs with them in its starting environment, as before).
func Seal() (map[string]string, error) {
	if fd := os.Getenv(passedFD); fd != "" {
		os.Unsetenv(passedFD)
		taken, err := readPassed(fd)
		notDumpable()
		return taken, err
	}
	taken := map[string]string{}
	var env []string
	size := 0
	for _, kv := range os.Environ() {
		name, value, ok := strings.Cut(kv, "=")
		if ok && Secret(name) {
			taken[name] = value
			size += len(kv)
			continue
		}
		env = append(env, kv)
	}
	if len(taken) == 0 {
		return taken, nil
	}
	if size > maxPassed {
		return taken, fmt.Errorf("the credentials in the environment are %d bytes, more than the %d that can be handed over", size, maxPassed)
	}
	raw, err := json.Marshal(taken)
	if err != nil {
		return taken, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return taken, err
	}
	if _, err := w.Write(raw); err != nil {
		r.Close()
		w.Close()
		return taken, err
	}
	w.Close()
	// The read end survives the exec (os.Pipe opens it close-on-exec); nothing else does.
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, r.Fd(), syscall.F_SETFD, 0); errno != 0 {
		r.Close()
		return taken, errno
	}
	env = append(env, passedFD+"="+strconv.FormatUint(uint64(r.Fd()), 10))
	err = syscall.Exec("/proc/self/exe", os.Args, env)
	// Only a failed exec gets here.
	r.Close()
	return taken, fmt.Errorf("starting kernel-gate again without the credentials in its environment: %w", err)
}

// readPassed reads the credentials Seal handed over on descriptor fd, which must be a
// pipe, and closes it.
func readPassed(fd string) (map[string]string, error) {
	n, err := strconv.ParseUint(fd, 10, 31)
	if err != nil || n < 3 {
		return nil, fmt.Errorf("%s=%q is not a descriptor kernel-gate handed over", passedFD, fd)
	}
	f := os.NewFile(uintptr(n), "credentials")
	if f == nil {
		return nil, fmt.Errorf("%s=%s: no such descriptor", passedFD, fd)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return nil, fmt.Errorf("%s=%s is not the pipe kernel-gate hands its credentials over", passedFD, fd)
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxPassed+1))
	if err != nil {
		return nil, err
	}
	taken := map[string]string{}
	if len(raw) > maxPassed || json.Unmarshal(raw, &taken) != nil {
		return nil, fmt.Errorf("%s=%s: what was handed over is not kernel-gate's", passedFD, fd)
	}
	for name := range taken {
		if !Secret(name) {
			delete(taken, name) // only credentials come this way
		}
	}
	return taken, nil
}

// notDumpable makes /proc/self's files root's and refuses ptrace to the user's other
// processes (prctl PR_SET_DUMPABLE 0). Children are not affected: execve resets it.
func notDumpable() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0)
}
