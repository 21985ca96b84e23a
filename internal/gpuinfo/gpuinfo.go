// Package gpuinfo reads what nvidia-smi says about the GPU a pipeline runs on, and tells
// whether a build's SASS architectures can run on it. It never changes GPU settings: the
// only query it reads is `nvidia-smi --query-gpu=name,compute_cap,driver_version
// --format=csv,noheader`.
package gpuinfo

import (
	"context"
	"time"

	"bufio"
	"errors"
	"fmt"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"io"
	"strings"
)

// QueryArgs are nvidia-smi's arguments for the answer Parse reads.
func QueryArgs() []string {
	return []string{"--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"}
}

// Info is one GPU as nvidia-smi names it.
type Info struct {
	Name, ComputeCap, Driver string
}

// Arch is the GPU's SASS architecture: compute capability 9.0 is sm_90.
func (g Info) Arch() string {
	return "sm_" + strings.ReplaceAll(g.ComputeCap, ".", "")
}

// ParseFile reads a kept answer.
func ParseFile(path string) (Info, error) {
	f, err := input.Open(path) // a regular file: a FIFO is refused, not waited on
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	return Parse(f)
}

// Parse reads the first GPU of nvidia-smi's CSV answer: "NVIDIA H200, 9.0, 580.159.04".
// A machine with several GPUs lists one per line; the harnesses run on the first (CUDA's
// device 0 unless CUDA_VISIBLE_DEVICES says otherwise).
func Parse(r io.Reader) (Info, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		parts := strings.Split(line, ",")
		if len(parts) != 3 {
			return Info{}, fmt.Errorf("nvidia-smi printed %q, not name, compute_cap, driver_version", msgtext.Clip(line, 200))
		}
		g := Info{Name: strings.TrimSpace(parts[0]), ComputeCap: strings.TrimSpace(parts[1]), Driver: strings.TrimSpace(parts[2])}
		if !validComputeCap(g.ComputeCap) {
			return Info{}, fmt.Errorf("nvidia-smi gave the compute capability %q, not MAJOR.MINOR", msgtext.Clip(g.ComputeCap, 50))
		}
		if g.Name == "" {
			return Info{}, errors.New("nvidia-smi gave no GPU name")
		}
		return g, nil
	}
	if err := sc.Err(); err != nil {
		return Info{}, fmt.Errorf("reading nvidia-smi's answer: %w", err)
	}
	return Info{}, errors.New("nvidia-smi listed no GPU")
}

func validComputeCap(s string) bool {
	major, minor, ok := strings.Cut(s, ".")
	return ok && major != "" && len(major) <= 2 && len(minor) == 1 &&
		strings.Trim(major, "0123456789") == "" && strings.Trim(minor, "0123456789") == ""
}

// RunnableOn reports whether SASS built for one of the architectures runs on a GPU of
// architecture gpu: SASS runs on the same major version at the same or a later minor; an
// "a" or "f" build (sm_90a, sm_100f) only on its own chip.
func RunnableOn(built []string, gpu string) bool {
	gmaj, gmin, ok := archNumber(gpu)
	if !ok {
		return false
	}
	for _, a := range built {
		num := strings.TrimRight(a, "af")
		maj, min, ok := archNumber(num)
		if !ok {
			continue
		}
		if num != a {
			if maj == gmaj && min == gmin {
				return true
			}
			continue
		}
		if maj == gmaj && min <= gmin {
			return true
		}
	}
	return false
}

// archNumber splits "sm_90" into 9 and 0, "sm_120" into 12 and 0.
func archNumber(a string) (major, minor int, ok bool) {
	n := strings.TrimPrefix(a, "sm_")
	if n == a || len(n) < 2 || len(n) > 3 || strings.Trim(n, "0123456789") != "" {
		return 0, 0, false
	}
	var v int
	for _, c := range n {
		v = v*10 + int(c-'0')
	}
	return v / 10, v % 10, true
}

// Query asks nvidia-smi (at smi) about the GPU, within timeout.
func Query(ctx context.Context, smi string, timeout time.Duration) (Info, error) {
	out, err := procgroup.Run(ctx, procgroup.Spec{Argv: append([]string{smi}, QueryArgs()...), Timeout: timeout, TailBytes: 4096})
	if err != nil {
		return Info{}, err
	}
	if out.Why != "" {
		return Info{}, fmt.Errorf("%s %s", smi, out.Why)
	}
	return Parse(strings.NewReader(out.Output))
}
