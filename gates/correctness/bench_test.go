package correctness

import (
	"runtime"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/benchfile"
	"github.com/kernel-gate/kernel-gate/internal/benchfiletest"
)

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
		stop := benchfiletest.HeapPeak()
		f, err := benchfile.Read(&benchfiletest.CheckFile{N: n})
		readPeak = stop() - m0.HeapAlloc
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		fileKept = m1.HeapAlloc - m0.HeapAlloc
		stop = benchfiletest.HeapPeak()
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
