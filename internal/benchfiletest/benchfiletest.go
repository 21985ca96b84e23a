// Package benchfiletest is for the tests and benchmarks of code that reads harness files
// (benchfile.Read and the gates after it): CheckFile streams a check-mode file of any
// number of results without holding it, and HeapPeak measures the most the heap held
// while it was read, so a benchmark can show that memory follows the results kept, not
// the file. It is for tests only: no package of the product imports it.
package benchfiletest

import (
	"fmt"
	"io"
	"runtime/metrics"
	"time"
)

// CheckFile streams a check-mode harness file of N clean results ("kernel_1" … on shape
// "mission", from an H200) without holding it; Size counts the bytes read so far.
type CheckFile struct {
	N    int
	Size int64
	i    int
	buf  []byte
}

func (c *CheckFile) Read(p []byte) (int, error) {
	for len(c.buf) < len(p) && c.i <= c.N+1 {
		switch {
		case c.i == 0:
			c.buf = append(c.buf, `{"schema": "kernel-gate/bench/v1", "device": {"name": "NVIDIA H200", "compute_cap": "9.0", "driver": "580.159.04", "cuda": "13.0"}, "request": {"mode": "check", "rounds": 3}, "results": [`...)
		case c.i <= c.N:
			if c.i > 1 {
				c.buf = append(c.buf, ",\n"...)
			}
			c.buf = fmt.Appendf(c.buf, `{"kernel": "kernel_%d", "shape": "mission", "max_err": 0.0004, "mean_err": 0.00002, "ref_max_abs": 3.5, "nan_count": 0, "inf_count": 0, "checks": 3, "repeat_launches": 2, "repeat_max_diff": 0}`, c.i)
		default:
			c.buf = append(c.buf, "]}\n"...)
		}
		c.i++
	}
	if len(c.buf) == 0 {
		return 0, io.EOF
	}
	k := copy(p, c.buf)
	c.buf = c.buf[:copy(c.buf, c.buf[k:])]
	c.Size += int64(k)
	return k, nil
}

// HeapPeak samples the heap's objects every millisecond until stop is called, and
// returns the largest sample.
func HeapPeak() (stop func() uint64) {
	done := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var p uint64
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			p = max(p, s[0].Value.Uint64())
			select {
			case <-done:
				peak <- p
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-peak }
}
