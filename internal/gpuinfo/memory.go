package gpuinfo

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/msgtext"
)

// FreeMemoryArgs are nvidia-smi's read-only question about each GPU's free memory, in MiB.
func FreeMemoryArgs() []string {
	return []string{"--query-gpu=memory.free", "--format=csv,noheader,nounits"}
}

// ParseFreeMiB reads the answer to FreeMemoryArgs: the first GPU's free memory in MiB (the
// one the run uses, as Parse reads the first GPU).
func ParseFreeMiB(r io.Reader) (int, error) {
	sc := bufio.NewScanner(io.LimitReader(r, 64<<10))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		n, err := strconv.Atoi(line)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("nvidia-smi printed %q, not the free memory in MiB", msgtext.Clip(line, 100))
		}
		return n, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("reading nvidia-smi's answer: %w", err)
	}
	return 0, errors.New("nvidia-smi listed no GPU's free memory")
}
