package procgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
)

// notStarted says why program could not be started as a person fixes it: which program,
// and that it is not on PATH, does not exist or may not be run. It begins "could not be
// started", which callers look for.
func notStarted(program string, err error) string {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return fmt.Sprintf("could not be started: %s is not on PATH (install it, or give its path)", program)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("could not be started: %s does not exist", program)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("could not be started: %s may not be run (permission denied)", program)
	}
	return fmt.Sprintf("could not be started: %v", err)
}
