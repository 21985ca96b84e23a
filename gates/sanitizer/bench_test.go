package sanitizer

import (
	"fmt"
	"io"
	"runtime"
	"testing"
)

// siteLog streams a compute-sanitizer log of n records spread over sites distinct error
// sites (the real record of cs_memcheck_oob_padding.txt with other lines and threads),
// without holding it, and samples the heap as it goes.
type siteLog struct {
	n, sites, i int
	buf         []byte
	peakHeap    uint64
	sampled     int
	done        bool
}

func (s *siteLog) Read(p []byte) (int, error) {
	for len(s.buf) < len(p) && !s.done {
		switch {
		case s.i == 0:
			s.buf = append(s.buf, "========= COMPUTE-SANITIZER\n"...)
		case s.i <= s.n:
			k := s.i - 1
			s.buf = fmt.Appendf(s.buf, `========= Invalid __global__ write of size 4 bytes
=========     at oob_write(float *, int)+0x90 in bugs.cu:%d
=========     by thread (%d,0,0) in block (1,0,0)
=========     Access to 0x7ff41c800400 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7ff41c800000 of size 1,024 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: main [0x8f5b] in bugs
========= 
done %d
`, 10+k%s.sites, k%1024, k)
		default:
			s.buf = fmt.Appendf(s.buf, "========= ERROR SUMMARY: %d errors\n", s.n)
			s.done = true
		}
		s.i++
	}
	if len(s.buf) == 0 {
		return 0, io.EOF
	}
	c := copy(p, s.buf)
	s.buf = s.buf[:copy(s.buf, s.buf[c:])]
	s.sampled += c
	if s.sampled >= 4<<20 {
		s.sampled = 0
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s.peakHeap = max(s.peakHeap, ms.HeapInuse)
	}
	return c, nil
}

// BenchmarkParseText parses generated logs of 200k records (about 90 MiB) with 10 and 1000
// distinct sites: peak-heap-MiB must not grow with the number of records, only (a little)
// with the number of sites.
//
//	go test -run '^$' -bench ParseText -benchtime 1x ./gates/sanitizer/
func BenchmarkParseText(b *testing.B) {
	for _, sites := range []int{10, 1000} {
		b.Run(fmt.Sprintf("sites=%d", sites), func(b *testing.B) {
			b.ReportAllocs()
			var peak uint64
			for b.Loop() {
				runtime.GC()
				src := &siteLog{n: 200_000, sites: sites}
				runs, err := ParseText(src, "big.log")
				if err != nil || len(runs) != 1 || len(runs[0].Records) != sites || runs[0].Printed() != 200_000 || len(runs[0].Problems) != 0 {
					b.Fatalf("%v %+v", err, runs)
				}
				peak = max(peak, src.peakHeap)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}
