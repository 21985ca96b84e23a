package correctness

import (
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/kernel-gate/kernel-gate/internal/benchfile"
)

// bigCheckFile streams a check-mode harness file of n clean results without holding it.
type bigCheckFile struct {
	n, i int
	buf  []byte
}

func (c *bigCheckFile) Read(p []byte) (int, error) {
	for len(c.buf) < len(p) && c.i <= c.n+1 {
		switch {
		case c.i == 0:
			c.buf = append(c.buf, `{"schema": "kernel-gate/bench/v1", "device": {"name": "NVIDIA H200", "compute_cap": "9.0", "driver": "580.159.04", "cuda": "13.0"}, "request": {"mode": "check", "rounds": 3}, "results": [`...)
		case c.i <= c.n:
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
	return k, nil
}

// heapPeak samples the heap's objects every millisecond until stop is called, and
// returns the largest sample.
func heapPeak() (stop func() uint64) {
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

// BenchmarkCheck is `kernel-gate check` on 10^6 results (a 189 MiB file) without the
// report: benchfile.Read, then Evaluate. It reports the heap's peak in each step and what
// the file and the gate hold afterwards, all proportional to the results.
//
//	go test -run '^$' -bench Check -benchtime 1x ./gates/correctness/
func BenchmarkCheck(b *testing.B) {
	const n = 1_000_000
	var readPeak, evalPeak, fileKept, gateKept uint64
	for b.Loop() {
		runtime.GC()
		var m0, m1, m2 runtime.MemStats
		runtime.ReadMemStats(&m0)
		stop := heapPeak()
		f, err := benchfile.Read(&bigCheckFile{n: n})
		readPeak = stop() - m0.HeapAlloc
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		fileKept = m1.HeapAlloc - m0.HeapAlloc
		stop = heapPeak()
		g, err := Evaluate(f, "check.json", Config{})
		evalPeak = stop() - m0.HeapAlloc
		if err != nil || len(g.Table.Rows) != n || g.Verdict != "pass" {
			b.Fatalf("%v %s", err, g.Verdict)
		}
		runtime.GC()
		runtime.ReadMemStats(&m2)
		gateKept = m2.HeapAlloc - m1.HeapAlloc
		runtime.KeepAlive(f)
		runtime.KeepAlive(g)
	}
	b.ReportMetric(float64(readPeak)/(1<<20), "read-peak-MiB")
	b.ReportMetric(float64(fileKept)/(1<<20), "file-MiB")
	b.ReportMetric(float64(evalPeak)/(1<<20), "evaluate-peak-MiB")
	b.ReportMetric(float64(gateKept)/(1<<20), "gate-MiB")
}
