//go:build unix

package input

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/hangtest"
)

// A named input that is not a regular file is refused, named, at once: a FIFO with no
// writer (whose open would block), a device that never ends, a directory.
func TestFilesRefuseWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := hangtest.FIFO(t, filepath.Join(dir, "build.log"))
	link := filepath.Join(dir, "link.log") // a link to a FIFO is one too
	os.Symlink(fifo, link)
	for _, name := range []string{fifo, link, "/dev/zero", dir} {
		err := hangtest.Within(t, 5*time.Second, "reading "+name, func() error {
			return Read(context.Background(), []string{name}, nil, Log, readAllFunc)
		})
		if !errors.Is(err, ErrNotRegular) || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v (exit %d)", name, err, exitcode.Of(err))
		}
		if _, err := ReadFile(context.Background(), name, Config); !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadFile(%s): %v", name, err)
		}
	}
	// The old entry point refuses them too.
	if err := Files([]string{"/dev/zero"}, nil, readAllFunc); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Files(/dev/zero): %v", err)
	}
}
