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

// BenchmarkParseXML reads generated record files of about 200 MiB (200k records over 1000
// distinct sites, and one record whose text never ends) as they stream: peak-heap-MiB
// must stay flat, whatever the file's size (the cap, MaxXMLSize, is 256 MiB).
//
//	go test -run '^$' -bench ParseXML -benchtime 1x ./gates/sanitizer/
func BenchmarkParseXML(b *testing.B) {
	for _, tc := range []struct {
		name string
		src  func() *endlessXML
		ok   func(Run) bool
	}{
		{"records", func() *endlessXML { return &endlessXML{n: 200_000, sites: 1000} },
			func(r Run) bool { return len(r.Records) == 1000 && r.Printed() == 200_000 && len(r.Problems) == 0 }},
		{"endless-text", func() *endlessXML { return &endlessXML{n: 5_000_000, text: true} },
			func(r Run) bool { return len(r.Problems) == 1 }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var peak uint64
			var size int64
			for b.Loop() {
				runtime.GC()
				src := tc.src()
				r, err := ParseXML(src, "big.xml")
				if err != nil || !tc.ok(r) {
					b.Fatalf("%v %d records %q", err, len(r.Records), r.Problems)
				}
				peak = max(peak, src.peakHeap)
				size = src.size
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(size)/(1<<20), "read-MiB")
		})
	}
}
