package sanitizer

import (
	"bytes"
	"errors"
	"testing"
)

func FuzzParseText(f *testing.F) {
	// Short slices of real captures (headers, record boundaries, summaries, print-limit
	// lines, foreign lines), so that iterations stay cheap.
	seeds := []struct {
		file     string
		from, to int
	}{
		{"sanitizer-h200-cuda13.0/cs_memcheck_oob_padding.txt", 0, 18},
		{"sanitizer-h200-cuda13.0/cs_memcheck_oob_padding.txt", 795, 805},
		{"sanitizer-h200-cuda13.0/cs_printlimit2.txt", 0, 30},
		{"sanitizer-h200-cuda13.0/cs_racecheck_race.txt", 0, 10},
		{"sanitizer-h200-cuda13.0/cs_racecheck_hazard.txt", 0, 16},
		{"sanitizer-h200-cuda13.0/cs_racecheck_hazard.txt", 795, 805},
		{"sanitizer-h200-cuda13.0/cs_synccheck_sync.txt", 0, 14},
		{"sanitizer-h200-cuda13.0/cs_initcheck_uninit.txt", 0, 12},
		{"sanitizer-h200-cuda13.0/cs_memcheck_leak.txt", 0, 40},
		{"sanitizer-h200-cuda13.0/hang.txt", 0, 10},
		{"probe/h200-cuda13.0/mc_assert.txt", 0, 20},
		{"probe/h200-cuda13.0/mc_abort.txt", 0, 20},
		{"probe/h200-cuda13.0/ic_uninitcopy.txt", 0, 10},
		{"probe/h200-cuda13.0/ic_unused.txt", 0, 20},
		{"probe/h200-cuda13.0/rc_war_hazard.txt", 20, 45},
		{"probe/h200-cuda13.0/cs_badtool.txt", 0, 6},
		{"probe/h200-cuda13.0/mc_fine_session.txt", 0, 20},
	}
	for _, s := range seeds {
		f.Add(lines(readCapture(f, s.file), s.from, s.to))
	}
	f.Add([]byte("========= CUDA-MEMCHECK\n========= Invalid __global__ write of size 4\n=========     at 0x00000148 in /src/bugs.cu:10:oob_write(float*, int)\n=========     by thread (0,0,0) in block (1,0,0)\n=========\n========= ERROR SUMMARY: 1 error\n"))
	f.Add([]byte("+ compute-sanitizer --tool racecheck ./a\n========= COMPUTE-SANITIZER\r\n\x1b[31m========= ERROR SUMMARY: 1,024 errors\x1b[0m\nexit=86\n"))
	// Hostile numbers, glued and stripped prefixes.
	f.Add([]byte("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 9223372036854775808 errors\n"))
	f.Add([]byte("========= RACECHECK SUMMARY: 1,0 hazards displayed (18446744073709551616 errors, 0 warnings)\nexit=99999999999999999999\n"))
	f.Add([]byte("+ compute-sanitizer --error-exitcode 99999999999999999999 ./a\n========= Invalid __global__ write of size 4 bytes\n=========     at k()+0x10 in a.cu:99999999999999999999\n========= \n"))
	f.Add([]byte("========= COMPUTE-SANITIZER\nprogress 50%========= ERROR SUMMARY: 0 errors\n"))
	f.Add([]byte("Error: Race reported between Write access at smem_race(float *)+0xa0 in bugs.cu:25\n    and Read access at smem_race(float *)+0xc0 in bugs.cu:27 [264 hazards]\n\nRACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n"))
	f.Add([]byte("Invalid __global__ write of size 4 bytes\nDevice 0: H200\nWarp Illegal Address\n   col\n\nERROR SUMMARY: 1 error\n"))
	f.Add(stripPrefix(lines(readCapture(f, "sanitizer-h200-cuda13.0/cs_memcheck_leak.txt"), 0, 40), true))
	f.Add(stripPrefix(lines(readCapture(f, "sanitizer-h200-cuda13.0/cs_racecheck_hazard.txt"), 0, 16), false))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, in []byte) {
		runs, err := ParseText(bytes.NewReader(in), "fuzz")
		if err != nil {
			if runs != nil || !errors.Is(err, ErrNotSanitizerLog) || err.Error() == "" {
				t.Fatalf("runs %v with error %v", runs, err)
			}
			return
		}
		if len(runs) == 0 {
			t.Fatal("no runs and no error")
		}
		for _, r := range runs {
			checkRun(t, r)
		}
	})
}

func FuzzParseXML(f *testing.F) {
	for _, s := range []struct {
		file     string
		from, to int
	}{
		{"sanitizer-h200-cuda13.0/xml_memcheck_oobpad.xml", 0, 90},
		{"sanitizer-h200-cuda13.0/xml_racecheck_race.xml", 0, 60},
		{"sanitizer-h200-cuda13.0/xml_synccheck_sync.xml", 0, 70},
		{"sanitizer-h200-cuda13.0/xml_initcheck_uninit.xml", 0, 30},
		{"sanitizer-h200-cuda13.0/xml_memcheck_race.xml", 0, 5},
		{"probe/h200-cuda13.0/mc_assert.xml", 0, 70},
		{"probe/h200-cuda13.0/mc_apierr.xml", 0, 40},
		{"probe/h200-cuda13.0/mc_leak.xml", 0, 20},
		{"probe/h200-cuda13.0/ic_unused.xml", 0, 20},
		{"probe/h200-cuda13.0/rc_war_hazard.xml", 0, 50},
		{"probe/h200-cuda13.0/mc_fine_session.xml", 0, 20},
	} {
		f.Add(lines(readCapture(f, s.file), s.from, s.to))
	}
	f.Add([]byte("<ComputeSanitizerOutput><record><kind>Precise</kind><what><size>-5</size></what></record></ComputeSanitizerOutput>"))
	// Unknown elements, text and content after the root, numbers that do not parse.
	f.Add([]byte("<ComputeSanitizerOutput><error><kind>Precise</kind></error></ComputeSanitizerOutput>"))
	f.Add([]byte("<ComputeSanitizerOutput>1 error<record><kind>Leak</kind><what><size>9223372036854775808</size></what></record></ComputeSanitizerOutput>"))
	f.Add([]byte("<ComputeSanitizerOutput/><ComputeSanitizerOutput><record/></ComputeSanitizerOutput>trailing"))
	f.Add([]byte("<ComputeSanitizerOutput><record><kind>Analysis</kind><what><source><direction>Write</direction></source><destination><count>1,0</count><where><line>-1</line></where></destination></what></record></ComputeSanitizerOutput>"))
	f.Add([]byte("<!--<ComputeSanitizerOutput>--><![CDATA[x]]><ComputeSanitizerOutput><session><x/></session></ComputeSanitizerOutput>"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := ParseXML(bytes.NewReader(in), "fuzz.xml")
		if err != nil {
			if !errors.Is(err, ErrNotSanitizerLog) && !errors.Is(err, ErrTooLarge) || err.Error() == "" {
				t.Fatalf("error %v", err)
			}
			return
		}
		checkRun(t, r)
		if r.Errors+r.Warnings != r.Printed() && !contains(r.Problems, tooManyGroups()) || r.Summary {
			t.Fatalf("xml counts: errors %d warnings %d printed %d", r.Errors, r.Warnings, r.Printed())
		}
	})
}

// checkRun holds for every run either parser returns.
func checkRun(t *testing.T, r Run) {
	t.Helper()
	if r.Records == nil {
		t.Fatal("nil Records")
	}
	if r.Tool != "" && !validTool(r.Tool) {
		t.Fatalf("tool %q", r.Tool)
	}
	if r.Errors < 0 || r.Warnings < 0 || r.NotPrinted < 0 {
		t.Fatalf("negative counts %+v", r)
	}
	seen := map[recordKey]bool{}
	for _, rec := range r.Records {
		if rec.Count <= 0 || !validKind(rec.Kind) || (rec.Severity != SeverityError && rec.Severity != SeverityWarning) || rec.Tool != r.Tool || rec.Line < 0 {
			t.Fatalf("record %+v", rec)
		}
		if seen[rec.key()] {
			t.Fatalf("two groups for %+v", rec)
		}
		seen[rec.key()] = true
		_ = describe(rec) // never panics
	}
	if err := consistent(r); err != nil {
		t.Fatal(err)
	}
	if !r.Summary && len(r.Problems) == 0 && r.Source == SourceText {
		t.Fatalf("a text run without a summary and without a problem: %+v", r)
	}
	if _, err := Evaluate([]Run{r}, nil, Config{}); err != nil {
		t.Fatal(err)
	}
}
