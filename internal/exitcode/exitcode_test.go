package exitcode

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"testing"
)

func TestOf(t *testing.T) {
	disk := errors.New("write kernel-gate-artifacts/journal.json: no space left on device")
	for _, tt := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, Pass},
		{"help", flag.ErrHelp, Pass},
		{"bad input", BadInputf("--targets: no target %q", "x"), Usage},
		{"bad input wrapped", fmt.Errorf("run: %w", BadInput(fs.ErrNotExist)), Usage},
		{"could not run", CouldNotRun(disk), Internal},
		{"unmarked is kernel-gate's own failure", disk, Internal},
		{"cancelled by a signal", fmt.Errorf("sanitizer: %w", context.Canceled), Usage},
		{"the innermost mark wins", CouldNotRun(BadInputf("config: bad")), Usage},
		{"a mark outside a cancellation", CouldNotRun(context.Canceled), Internal},
	} {
		if got := Of(tt.err); got != tt.want {
			t.Errorf("%s: Of(%v) = %d, want %d", tt.name, tt.err, got, tt.want)
		}
	}
	if BadInput(nil) != nil || CouldNotRun(nil) != nil {
		t.Error("nil stays nil")
	}
	if err := BadInputf("a %s", "b"); err.Error() != "a b" || !errors.Is(BadInput(fs.ErrNotExist), fs.ErrNotExist) {
		t.Errorf("a mark changes neither the message nor the chain: %v", err)
	}
}
