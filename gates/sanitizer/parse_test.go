package sanitizer

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func parseOne(t *testing.T, text, tool string) Run {
	t.Helper()
	runs, err := ParseTextWith(strings.NewReader(text), "test.log", ParseOptions{Tool: tool})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("%d runs, want 1", len(runs))
	}
	return runs[0]
}

// cut returns the first n lines of a capture.
func cut(t *testing.T, name string, n int) string {
	return string(lines(readCapture(t, name), 0, n))
}

func TestTruncated(t *testing.T) {
	const pad = "sanitizer-h200-cuda13.0/cs_memcheck_oob_padding.txt"
	tests := []struct {
		name, log, tool string
		want            []string
		timedOut        bool
	}{
		// Cut in the middle of the 100 records: 37 whole records and the first line of one
		// more (each record is 8 lines after the header line).
		{"cut", cut(t, pad, 1+37*8+1), "", []string{
			"memcheck text no-summary errors=38 warnings=0 not_printed=0 exit=- launch",
			"  out-of-bounds error x37 bugs.cu:10 (0,0,0)/(1,0,0) oob_write(float *, int) | __global__ write of size 4 bytes",
			// The record cut after its first line still counts, though its kind is not known.
			"  invalid-address error x1 - - - | __global__ write of size 4 bytes",
			"  problem: no ERROR SUMMARY line: the log ends at line 298 before compute-sanitizer finished: it is truncated, or the sanitizer was killed",
		}, false},
		{"cut racecheck", cut(t, "sanitizer-h200-cuda13.0/cs_racecheck_race.txt", 4), "", []string{
			"racecheck text no-summary errors=1 warnings=0 not_printed=0 exit=- launch",
			"  race error x1 h358 bugs.cu:14 - smem_race(float *) | Write access at bugs.cu:14 and Write access at bugs.cu:14 [94 hazards], Read access at bugs.cu:15 [264 hazards]",
			"  problem: no RACECHECK SUMMARY line",
		}, false},
		{"killed", cut(t, pad, 100) + "exit=137\n", "", []string{
			"memcheck text no-summary errors=13 warnings=0 not_printed=0 exit=137 launch timed-out",
			"  out-of-bounds error x12 bugs.cu:10 (0,0,0)/(1,0,0) oob_write(float *, int) | __global__ write of size 4 bytes",
			"  invalid-address error x1 bugs.cu:10 (12,0,0)/(1,0,0) oob_write(float *, int) | __global__ write of size 4 bytes",
			"  problem: no ERROR SUMMARY line: the run was killed (exit 137: SIGKILL",
		}, true},
		{"crashed", cut(t, pad, 100) + "Segmentation fault (core dumped)\nexit=139\n", "", []string{
			"memcheck text no-summary errors=13 warnings=0 not_printed=0 exit=139 launch",
			"  out-of-bounds error x12 bugs.cu:10 (0,0,0)/(1,0,0) oob_write(float *, int) | __global__ write of size 4 bytes",
			"  invalid-address error x1 bugs.cu:10 (12,0,0)/(1,0,0) oob_write(float *, int) | __global__ write of size 4 bytes",
			"  problem: the run ended with exit 139: killed by signal 11 (SIGSEGV) before compute-sanitizer finished",
		}, false},
		{"shell says killed", cut(t, pad, 20) + "./ci.sh: line 3: 4242 Killed compute-sanitizer ./app\n", "", []string{
			"memcheck text no-summary errors=3 warnings=0 not_printed=0 exit=- launch",
			"  out-of-bounds error x2 bugs.cu:10 (0,0,0)/(1,0,0) oob_write(float *, int) | __global__ write of size 4 bytes",
			"  invalid-address error x1 bugs.cu:10 (2,0,0)/(1,0,0) oob_write(float *, int) | __global__ write of size 4 bytes",
			"  problem: the run was killed or crashed (\"./ci.sh: line 3: 4242 Killed",
		}, false},
		// What a hung kernel's run printed (the header alone), killed by a timeout.
		{"hung", string(readCapture(t, "probe/h200-cuda13.0/hang_run.txt")) + "exit=137\n", ToolMemcheck, []string{
			"memcheck text no-summary errors=0 warnings=0 not_printed=0 exit=137 timed-out",
			"  problem: no ERROR SUMMARY line: the run was killed (exit 137",
		}, true},
		{"header only", "========= COMPUTE-SANITIZER\n", ToolSynccheck, []string{
			"synccheck text no-summary errors=0 warnings=0 not_printed=0 exit=-",
			"  problem: the log ends at line 1",
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := parseOne(t, tt.log, tt.tool)
			if err := matchLines(render(r), tt.want); err != nil {
				t.Error(err)
			}
			if r.TimedOut != tt.timedOut || r.Summary {
				t.Errorf("TimedOut %v Summary %v", r.TimedOut, r.Summary)
			}
		})
	}
}

func TestSummaryMismatch(t *testing.T) {
	tests := []struct {
		name, file, old, new, want string
	}{
		{"error count", "sanitizer-h200-cuda13.0/cs_initcheck_uninit.txt", "ERROR SUMMARY: 64 errors", "ERROR SUMMARY: 65 errors",
			"ERROR SUMMARY says 65 errors but the log holds 64 records"},
		{"not printed", "sanitizer-h200-cuda13.0/cs_memcheck_oob_padding.txt", "157 errors were not printed", "150 errors were not printed",
			"ERROR SUMMARY says 257 errors but the log holds 100 records and 150 not printed"},
		{"hazards displayed", "sanitizer-h200-cuda13.0/cs_racecheck_race.txt", "1 hazard displayed (1 error", "2 hazards displayed (2 errors",
			"RACECHECK SUMMARY says 2 hazards displayed but the log holds 1 reports"},
		{"unknown summary form", "sanitizer-h200-cuda13.0/cs_synccheck_sync.txt", "ERROR SUMMARY: 16 errors", "ERROR SUMMARY: 16 errors (3 suppressed)",
			`a summary line kernel-gate cannot read: "ERROR SUMMARY: 16 errors (3 suppressed)"`},
		{"racecheck levels", "sanitizer-h200-cuda13.0/cs_racecheck_race.txt", "(1 error, 0 warnings)", "(0 errors, 1 warning)",
			"RACECHECK SUMMARY counts 0 errors and 1 warnings but the log holds 1 error and 0 warning reports"},
		// A record removed from the middle: the summary still counts it.
		{"record removed", "sanitizer-h200-cuda13.0/cs_synccheck_sync.txt",
			"========= Barrier error detected. Divergent thread(s) in warp.\n=========     at divergent_barrier(float *)+0xc0 in bugs.cu:24\n=========     by thread (3,0,0) in block (0,0,0)\n=========     Saved host backtrace up to driver entry point at kernel launch time\n=========         Host Frame: main [0x923a] in bugs\n========= \n", "",
			"ERROR SUMMARY says 16 errors but the log holds 15 records"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := string(readCapture(t, tt.file))
			edited := strings.Replace(orig, tt.old, tt.new, 1)
			if edited == orig {
				t.Fatalf("%q not in %s", tt.old, tt.file)
			}
			r := parseOne(t, edited, toolFromName(tt.file))
			if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], tt.want) {
				t.Errorf("problems %q, want one with %q", r.Problems, tt.want)
			}
		})
	}
}

func TestNotSanitizerLog(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "the log is empty"},
		{"blank", []byte("\n  \n\t\r\n"), "the log is empty"},
		{"garbage", []byte("\x00\x01\x02\xff\xfe binary\x00\n\x7fELF"), "no compute-sanitizer lines"},
		{"ptxas log", readCapture(t, "shared-h200-cuda13.0/ptxas_sm90.txt"), "ptxas build log"},
		{"json", []byte(`{"schema": "kernel-gate/result/v1", "gates": []}`), `the first is "{\"schema\"`},
		{"help", readCapture(t, "sanitizer-h200-cuda13.0/cs_help.txt"), "help text"},
		{"bad option without its command", []byte("the argument for option '--tool' is invalid\nUsage: compute-sanitizer [options] [your-program] [your-program-options]\n"),
			`printed its usage instead of running ("the argument for option '--tool' is invalid")`},
		{"command not found", []byte("+ compute-sanitizer ./app\n"), ""}, // a run that ran nothing, below
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := ParseText(bytes.NewReader(tt.in), "in.log")
			if tt.want == "" {
				if err != nil || len(runs) != 1 || len(runs[0].Problems) != 1 || !strings.Contains(runs[0].Problems[0], "it printed nothing") {
					t.Errorf("runs %+v, err %v", runs, err)
				}
				return
			}
			if !errors.Is(err, ErrNotSanitizerLog) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "in.log") {
				t.Errorf("error = %v, want ErrNotSanitizerLog with %q", err, tt.want)
			}
			if runs != nil {
				t.Errorf("runs %v", runs)
			}
		})
	}
	if _, err := ParseTextWith(strings.NewReader("========= COMPUTE-SANITIZER\n"), "x", ParseOptions{Tool: "memchek"}); err == nil || !strings.Contains(err.Error(), `unknown tool "memchek"`) {
		t.Errorf("bad tool hint: %v", err)
	}
}

func TestXMLFailClosed(t *testing.T) {
	full := readCapture(t, "sanitizer-h200-cuda13.0/xml_memcheck_oobpad.xml")
	half := full[:len(full)/2]
	// The end of the 50th record: a file cut between records.
	var between []byte
	if i := bytes.Index(full, []byte("</record>")); i >= 0 {
		n, off := 0, 0
		for n < 50 {
			j := bytes.Index(full[off:], []byte("</record>"))
			off += j + len("</record>")
			n++
		}
		between = full[:off]
	}
	malformed := bytes.Replace(full, []byte("</where>"), []byte("</wher>"), 1)
	tests := []struct {
		name    string
		in      []byte
		records int
		problem string
	}{
		{"cut inside a record", half, 49, "truncated inside record 50"},
		{"cut between records", between, 50, "truncated after 50 records"},
		{"malformed", malformed, 0, "malformed in record 1"},
		{"cut in the prolog", []byte(`<?xml version="1.0" encoding="utf-8"?>` + "\n<ComputeSanitizerOutput>\n  <rec"), 0, "truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseXML(bytes.NewReader(tt.in), "m.xml")
			if err != nil {
				t.Fatal(err)
			}
			if r.Printed() != tt.records || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], tt.problem) {
				t.Errorf("printed %d, problems %q; want %d and %q", r.Printed(), r.Problems, tt.records, tt.problem)
			}
		})
	}
	bad := []struct {
		name string
		in   string
		want string
	}{
		{"empty", "", "the XML file is empty"},
		{"blank", "\n \n", "the XML file is empty"},
		{"html", "<html><body>502 Bad Gateway</body></html>", "the XML root is <html>"},
		{"text log", string(readCapture(t, "sanitizer-h200-cuda13.0/cs_memcheck_clean.txt")), "text before any XML element"},
		{"prolog only", `<?xml version="1.0"?>`, "no <ComputeSanitizerOutput> element"},
		{"not xml", "<<<>>>", "not XML"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseXML(strings.NewReader(tt.in), "m.xml")
			if !errors.Is(err, ErrNotSanitizerLog) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "m.xml") {
				t.Errorf("error = %v, want ErrNotSanitizerLog with %q", err, tt.want)
			}
		})
	}
}

// TestNoise: CRLF line ends, ANSI colour, CI timestamps and build lines around a real log
// change nothing.
func TestNoise(t *testing.T) {
	for _, file := range []string{"sanitizer-h200-cuda13.0/cs_racecheck_race.txt", "sanitizer-h200-cuda13.0/cs_printlimit2.txt", "probe/h200-cuda13.0/mc_assert.txt"} {
		orig := string(readCapture(t, file))
		var b strings.Builder
		b.WriteString("make: Entering directory '/src'\n+ nvcc -lineinfo -o bugs bugs.cu\n")
		for i, l := range strings.SplitAfter(orig, "\n") {
			if l == "" {
				continue
			}
			l = strings.TrimSuffix(l, "\n")
			if i%3 == 0 {
				l = "\x1b[36m" + l + "\x1b[0m"
			}
			if i%2 == 0 {
				l = "2026-11-21T05:21:25.1234567Z " + l
			}
			b.WriteString(l + "\r\n")
		}
		want := renderAll(mustParse(t, orig, toolFromName(file)))
		got := renderAll(mustParse(t, b.String(), toolFromName(file)))
		if err := matchLines(got, want); err != nil {
			t.Errorf("%s: %v", file, err)
		}
	}
}

func mustParse(t *testing.T, s, tool string) []Run {
	t.Helper()
	runs, err := ParseTextWith(strings.NewReader(s), "x", ParseOptions{Tool: tool})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

func TestConcatenatedRuns(t *testing.T) {
	var b strings.Builder
	for _, f := range []string{"sanitizer-h200-cuda13.0/cs_memcheck_leak.txt", "sanitizer-h200-cuda13.0/cs_racecheck_race.txt",
		"sanitizer-h200-cuda13.0/cs_synccheck_sync.txt", "probe/h200-cuda13.0/ic_nolaunch.txt", "probe/h200-cuda13.0/sc_nolaunch.txt"} {
		b.Write(readCapture(t, f))
	}
	runs := mustParse(t, b.String(), "")
	var got []string
	for _, r := range runs {
		got = append(got, r.Tool)
		if len(r.Problems) > 0 || r.ExitCode == nil {
			t.Errorf("%s: problems %q exit %v", r.Tool, r.Problems, r.ExitCode)
		}
	}
	// The last two are clean: their tools come from their "+ compute-sanitizer --tool" lines.
	if strings.Join(got, " ") != "memcheck racecheck synccheck initcheck synccheck" {
		t.Errorf("tools %q", got)
	}

	// Spliced without the second header: two summaries in one run.
	spliced := string(readCapture(t, "sanitizer-h200-cuda13.0/cs_memcheck_leak.txt")) +
		strings.Replace(string(readCapture(t, "sanitizer-h200-cuda13.0/cs_memcheck_clean.txt")), "========= COMPUTE-SANITIZER\n", "", 1)
	r := parseOne(t, spliced, "")
	if len(r.Problems) == 0 || !strings.Contains(strings.Join(r.Problems, "\n"), "a second ERROR SUMMARY line in one run") {
		t.Errorf("spliced: %q", r.Problems)
	}

	// A cut run followed by a whole one.
	cutThenWhole := cut(t, "sanitizer-h200-cuda13.0/cs_synccheck_sync.txt", 20) + string(readCapture(t, "sanitizer-h200-cuda13.0/cs_racecheck_race.txt"))
	runs = mustParse(t, cutThenWhole, "")
	if len(runs) != 2 || len(runs[0].Problems) != 1 || !strings.Contains(runs[0].Problems[0], "the run that starts at line 1 ends without one") || len(runs[1].Problems) != 0 {
		t.Errorf("cut then whole: %+v", runs)
	}
}

func TestToolConflict(t *testing.T) {
	r := parseOne(t, string(readCapture(t, "sanitizer-h200-cuda13.0/cs_synccheck_sync.txt")), ToolRacecheck)
	if r.Tool != ToolSynccheck || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "holds synccheck output (line 2) but the run was given as racecheck") {
		t.Errorf("tool %q problems %q", r.Tool, r.Problems)
	}
	x, err := ParseXMLWith(bytes.NewReader(readCapture(t, "sanitizer-h200-cuda13.0/xml_synccheck_sync.xml")), "s.xml", ParseOptions{Tool: ToolMemcheck})
	if err != nil || len(x.Problems) != 1 || !strings.Contains(x.Problems[0], "the XML holds synccheck records but the run was given as memcheck") {
		t.Errorf("xml: %v %q", err, x.Problems)
	}
	// Records of two tools in one run.
	mixed := strings.Replace(string(readCapture(t, "sanitizer-h200-cuda13.0/cs_synccheck_sync.txt")), "========= ERROR SUMMARY: 16 errors",
		"========= Uninitialized __global__ memory read of size 4 bytes\n=========     at k+0x10 in a.cu:3\n=========     by thread (0,0,0) in block (0,0,0)\n========= \n========= ERROR SUMMARY: 17 errors", 1)
	r = parseOne(t, mixed, "")
	if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "several tools (initcheck, synccheck)") {
		t.Errorf("mixed: %q", r.Problems)
	}
}

// TestCUDAMemcheck reads the text of cuda-memcheck (CUDA 10 and 11), the tool that
// compute-sanitizer replaced. No machine here runs it: these logs are RECONSTRUCTED from
// NVIDIA's CUDA-MEMCHECK documentation (its sample outputs), with bugs.cu's kernels and lines.
func TestCUDAMemcheck(t *testing.T) {
	tests := []struct {
		name, log string
		want      []string
	}{
		{"memcheck with line info", `========= CUDA-MEMCHECK
========= Invalid __global__ write of size 4
=========     at 0x00000148 in /src/bugs.cu:10:oob_write(float*, int)
=========     by thread (0,0,0) in block (1,0,0)
=========     Address 0x7f1a2e000400 is out of bounds
=========     Device Frame:/src/bugs.cu:10:oob_write(float*, int) (oob_write(float*, int) : 0x148)
=========     Saved host backtrace up to driver entry point at kernel launch time
=========     Host Frame:/usr/lib/x86_64-linux-gnu/libcuda.so.1 (cuLaunchKernel + 0x34e) [0x2efa4e]
=========     Host Frame:./bugs [0x1b3c9]
=========     Host Frame:./bugs (main + 0x1a4) [0x7c44]
=========
========= Invalid __global__ write of size 4
=========     at 0x00000148 in /src/bugs.cu:10:oob_write(float*, int)
=========     by thread (1,0,0) in block (1,0,0)
=========     Address 0x7f1a2e000404 is out of bounds
=========     Saved host backtrace up to driver entry point at kernel launch time
=========     Host Frame:./bugs (main + 0x1a4) [0x7c44]
=========
========= Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to cudaDeviceSynchronize. 
=========     Saved host backtrace up to driver entry point at error
=========     Host Frame:/usr/lib/x86_64-linux-gnu/libcuda.so.1 [0x3ac5a3]
=========     Host Frame:./bugs (main + 0x1a9) [0x7c49]
=========
========= ERROR SUMMARY: 3 errors
`, []string{
			"memcheck text summary errors=3 warnings=0 not_printed=0 exit=- launch",
			"  out-of-bounds error x2 /src/bugs.cu:10 (0,0,0)/(1,0,0) oob_write(float*, int) | __global__ write of size 4 bytes",
			"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		}},
		{"memcheck without line info", `========= CUDA-MEMCHECK
========= Invalid __shared__ read of size 4
=========     at 0x00000090 in kg::k(float*)
=========     by thread (31,0,0) in block (0,0,0)
=========     Address 0x00000400 is misaligned
=========
========= ERROR SUMMARY: 1 error
`, []string{
			"memcheck text summary errors=1 warnings=0 not_printed=0 exit=- launch",
			"  misaligned error x1 - (31,0,0)/(0,0,0) kg::k(float*) | __shared__ read of size 4 bytes",
		}},
		{"leak", `========= CUDA-MEMCHECK
========= Leaked 1024 bytes at 0x7f1a2e000000
=========     Saved host backtrace up to driver entry point at cudaMalloc time
=========     Host Frame:/usr/lib/x86_64-linux-gnu/libcuda.so.1 (cuMemAlloc_v2 + 0x1a0) [0x2b6c50]
=========     Host Frame:./bugs (main + 0x60) [0x7b00]
=========
========= LEAK SUMMARY: 1024 bytes leaked in 1 allocations
========= ERROR SUMMARY: 1 error
`, []string{
			"memcheck text summary errors=1 warnings=0 not_printed=0 exit=- ",
			"  leak error x1 - - - | 1024 bytes allocated at main+0x60",
		}},
		{"racecheck analysis", `========= CUDA-MEMCHECK
========= ERROR: Race reported between Write access at 0x00000050 in /src/bugs.cu:14:smem_race(float*)
=========     and Read access at 0x00000070 in /src/bugs.cu:15:smem_race(float*) [264 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
`, []string{
			"racecheck text summary errors=1 warnings=0 not_printed=0 exit=- launch",
			"  race-raw error x1 h264 /src/bugs.cu:14 - smem_race(float*) | Write access at bugs.cu:14 and Read access at bugs.cu:15 [264 hazards]",
		}},
		{"racecheck hazards", `========= CUDA-MEMCHECK
========= ERROR: Potential WAW hazard detected at __shared__ 0x0 in block (0, 0, 0) :
=========     Write Thread (31, 0, 0) at 0x00000050 in /src/bugs.cu:14:smem_race(float*)
=========     Write Thread (0, 0, 0) at 0x00000050 in /src/bugs.cu:14:smem_race(float*)
=========     Current Value : 0, Incoming Value : 31
=========
========= WARN: Potential WAR hazard detected at __shared__ 0x4 in block (0, 0, 0) :
=========     Read Thread (1, 0, 0) at 0x00000070 in /src/bugs.cu:15:smem_race(float*)
=========     Write Thread (2, 0, 0) at 0x00000050 in /src/bugs.cu:14:smem_race(float*)
=========     Current Value : 0
=========
========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)
`, []string{
			"racecheck text summary errors=1 warnings=1 not_printed=0 exit=- launch",
			"  race-waw error x1 /src/bugs.cu:14 (31,0,0)/(0,0,0) smem_race(float*) | Write access at bugs.cu:14 and Write access at bugs.cu:14",
			"  race-war warning x1 /src/bugs.cu:15 (1,0,0)/(0,0,0) smem_race(float*) | Read access at bugs.cu:15 and Write access at bugs.cu:14",
		}},
		{"synccheck and initcheck", `========= CUDA-MEMCHECK
========= Barrier error detected. Divergent thread(s) in warp
=========     at 0x00000130 in /src/bugs.cu:24:divergent_barrier(float*)
=========     by thread (0,0,0) in block (0,0,0)
=========
========= ERROR SUMMARY: 1 error
========= CUDA-MEMCHECK
========= Uninitialized __global__ memory read of size 4
=========     at 0x00000060 in /src/bugs.cu:20:uninit_read(float const *, float*)
=========     by thread (0,0,0) in block (0,0,0)
=========     Address 0x7f1a2e000400
=========
========= ERROR SUMMARY: 1 error
`, []string{
			"synccheck text summary errors=1 warnings=0 not_printed=0 exit=- launch",
			"  barrier-divergence error x1 /src/bugs.cu:24 (0,0,0)/(0,0,0) divergent_barrier(float*) | Divergent thread(s) in warp",
			"initcheck text summary errors=1 warnings=0 not_printed=0 exit=- launch",
			"  uninitialized-read error x1 /src/bugs.cu:20 (0,0,0)/(0,0,0) uninit_read(float const *, float*) | __global__ read of size 4 bytes",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = strings.TrimSuffix(w, " ")
			}
			if err := matchLines(renderAll(mustParse(t, tt.log, "")), want); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestLongLine(t *testing.T) {
	log := "========= COMPUTE-SANITIZER\n" + strings.Repeat("x", 200<<10) + "\n========= " + strings.Repeat("y", 100<<10) + "\n========= ERROR SUMMARY: 0 errors\n"
	r := parseOne(t, log, ToolSynccheck)
	if !r.Summary || r.Errors != 0 || len(r.Problems) != 0 || len(r.Notes) != 1 || len(r.Notes[0]) > 300 {
		t.Errorf("%+v", r)
	}
}

func TestCombineNames(t *testing.T) {
	// Racecheck analysis XML records have no host stack: the name comes from the text,
	// mangled when the run used --demangle no.
	x, err := ParseXML(bytes.NewReader(readCapture(t, "sanitizer-h200-cuda13.0/xml_racecheck_race.xml")), "r.xml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(readCapture(t, "sanitizer-h200-cuda13.0/xmlrun_racecheck_race.txt")), "smem_race(float *)", "_Z9smem_racePf")
	c := Combine(x, parseOne(t, text, ""))
	if c.Source != SourceXML || len(c.Records) != 1 || c.Records[0].Kernel != "_Z9smem_racePf" || c.Records[0].Function != "smem_race(float*)" ||
		c.Records[0].File != "/src/probe/bugs.cu" || c.Records[0].Hazards != 358 || len(c.Problems) != 0 {
		t.Errorf("%+v", c)
	}
	// An XML that holds fewer records than the text printed: the text's records, and a
	// problem.
	full := readCapture(t, "sanitizer-h200-cuda13.0/xml_memcheck_oobpad.xml")
	end := bytes.LastIndex(full[:len(full)/2], []byte("</record>")) + len("</record>")
	short := append(append([]byte{}, full[:end]...), "\n</ComputeSanitizerOutput>\n"...)
	x1, err := ParseXML(bytes.NewReader(short), "m.xml")
	if err != nil || len(x1.Problems) != 0 || x1.Printed() != 49 {
		t.Fatalf("short XML: %v %q %d", err, x1.Problems, x1.Printed())
	}
	c = Combine(x1, parseOne(t, string(readCapture(t, "sanitizer-h200-cuda13.0/xmlrun_memcheck_oobpad.txt")), ""))
	if c.Source != SourceText || c.Printed() != 100 || c.Errors != 257 || len(c.Problems) != 1 ||
		!strings.Contains(c.Problems[0], "the XML record file holds 49 records but the text output printed 100") {
		t.Errorf("disagreeing: source %s printed %d problems %q", c.Source, c.Printed(), c.Problems)
	}
	// Of another tool.
	x2, _ := ParseXML(bytes.NewReader(readCapture(t, "sanitizer-h200-cuda13.0/xml_synccheck_sync.xml")), "s.xml")
	c = Combine(x2, parseOne(t, string(readCapture(t, "sanitizer-h200-cuda13.0/xmlrun_initcheck_uninit.txt")), ""))
	if !strings.Contains(strings.Join(c.Problems, "\n"), "the XML holds synccheck records but the text output is initcheck's") {
		t.Errorf("other tool: %q", c.Problems)
	}
}

func TestCombineBareNames(t *testing.T) {
	// A racecheck analysis record of the XML names its kernel by the bare <func>, "flash_fwd"
	// for kg::flash_fwd<64, 64, false>: Combine takes the text's name, printed or mangled
	// (RunTools passes --demangle no).
	x, err := ParseXML(bytes.NewReader(readCapture(t, "sanitizer-kernels-h200/xml_racecheck_race.xml")), "r.xml")
	if err != nil || len(x.Records) != 1 || x.Records[0].Kernel != "flash_fwd" {
		t.Fatalf("%v %+v", err, x.Records)
	}
	text := string(readCapture(t, "sanitizer-kernels-h200/xmlrun_racecheck_race.txt"))
	for _, k := range []string{flashFwdText, flashFwdMangled} {
		c := Combine(x, parseOne(t, strings.ReplaceAll(text, flashFwdText, k), ""))
		if c.Source != SourceXML || len(c.Records) != 1 || c.Records[0].Kernel != k || c.Records[0].Hazards != 16384 ||
			c.Records[0].File != "/work/main/kernels/flash_fwd.cu" || len(c.Problems) != 0 {
			t.Errorf("%s: %+v", k, c)
		}
		if got := displayName(c.Records[0].Kernel); !strings.HasPrefix(got, "kg::flash_fwd<") {
			t.Errorf("%s: display name %q", k, got)
		}
	}
	// Two instantiations with the same bare name (testdata/replay/race/attention: the causal and the
	// non-causal flash_fwd, both racing at 177/178): the XML cannot say which record is
	// which, so the bare name stays and its two records stay one site of 2.
	x, err = ParseXML(bytes.NewReader(readCapture(t, "replay/race/attention/sanitize/racecheck.xml")), "racecheck.xml")
	if err != nil {
		t.Fatal(err)
	}
	tr := parseOne(t, string(readCapture(t, "replay/race/attention/sanitize/racecheck.log")), ToolRacecheck)
	if len(tr.Records) != 2 {
		t.Fatalf("text records %+v", tr.Records)
	}
	c := Combine(x, tr)
	if len(c.Records) != 1 || c.Records[0].Kernel != "flash_fwd" || c.Records[0].Count != 2 || c.Records[0].Hazards != 32768 {
		t.Errorf("two instantiations: %+v", c.Records)
	}
}

func TestFrameName(t *testing.T) {
	for in, want := range map[string]string{
		"main":     "main",
		"run(int)": "run",
		"(anonymous namespace)::Attention::sanitize()": "(anonymous namespace)::Attention::sanitize",
		"void tmpl_oob<float, (int)3>(float*, int)":    "void tmpl_oob<float, (int)3>",
		"ns::S::get(int) const":                        "ns::S::get",
		"(anonymous namespace)":                        "(anonymous namespace)",
	} {
		if got := frameName(in); got != want {
			t.Errorf("frameName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShortSignature(t *testing.T) {
	for in, want := range map[string]string{
		"void ns::k<float, 3>(float *, int)": "ns::k<float, 3>",
		"k":                                  "k",
		" void k<int, 2>() ":                 "k<int, 2>",
		"void (anonymous namespace)::k(int)": "(anonymous namespace)::k",
		"(int)":                              "(int)",
		"k(int))":                            "k(int))",
		"void tmpl_oob<float, (int)3>(float*, int)": "tmpl_oob<float, (int)3>",
	} {
		if got := shortSignature(in); got != want {
			t.Errorf("shortSignature(%q) = %q, want %q", in, got, want)
		}
	}
}
