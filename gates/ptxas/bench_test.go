package ptxas

import (
	"fmt"
	"io"
	"runtime"
	"testing"
)

// repeatReader streams src n times without holding more than one copy, and samples the
// heap as it goes so a benchmark can report the peak while parsing.
type repeatReader struct {
	src      []byte
	left     int64 // bytes still to produce
	off      int
	sampled  int64
	peakHeap uint64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && r.left > 0 {
		c := copy(p[n:min(len(p), n+int(min(r.left, int64(len(r.src)-r.off))))], r.src[r.off:])
		n += c
		r.off = (r.off + c) % len(r.src)
		r.left -= int64(c)
	}
	r.sampled += int64(n)
	if r.sampled >= 8<<20 { // sample the heap every 8 MiB
		r.sampled = 0
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		r.peakHeap = max(r.peakHeap, ms.HeapInuse)
	}
	return n, nil
}

// BenchmarkParseStream parses a concatenation of real logs (every ptxas capture in
// testdata, repeated) of 16 MiB, 256 MiB and 1 GiB. The peak-heap-MiB metric must stay flat
// as the log grows: records are deduplicated and nothing keeps the lines.
//
//	go test -run '^$' -bench ParseStream -benchtime 1x ./gates/ptxas/
func BenchmarkParseStream(b *testing.B) {
	var src []byte
	for _, tt := range realLogs {
		src = append(src, readTestdata(b, tt.file)...)
	}
	for _, size := range []int64{16 << 20, 256 << 20, 1 << 30} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			var peak uint64
			for b.Loop() {
				runtime.GC()
				r := &repeatReader{src: src, left: size}
				var l Log
				if err := l.Parse(r, "stream", nil); err != nil {
					b.Fatal(err)
				}
				if len(l.Kernels) == 0 {
					b.Fatal("no records")
				}
				peak = max(peak, r.peakHeap)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}
