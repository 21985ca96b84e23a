package sanitizer

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// realCapture is what one real capture must parse to, with the tool its file name gives
// (or tool). want holds the runs as render writes them: a header line per run ("tool source
// summary errors= warnings= not_printed= exit= [launch] [timed-out]"), then one line per
// record group ("  kind severity xCOUNT [hHAZARDS] file:line thread/block kernel | access"),
// then "  problem: ..." and "  note: ..." lines, which match by substring. err, when set, is a
// substring of the ErrNotSanitizerLog error the file must give.
//
// Adding a capture is one row here. The numbers were read off the files themselves; the
// comments say how.
type realCapture struct {
	file string
	tool string
	err  string
	want []string
}

var realCaptures = []realCapture{
	// bugs.cu, cs_help.txt, exitcodes.txt: not a run (ErrNotSanitizerLog). cs_help.txt is the
	// --help text; exitcodes.txt three lines of a script's own output.
	{file: "sanitizer-h200-cuda13.0/bugs.cu", err: "no compute-sanitizer lines (\"=========\") in 64 lines; the first is \"#include <cstring>\""},
	{file: "sanitizer-h200-cuda13.0/cs_help.txt", err: "compute-sanitizer's help text"},
	// A clean initcheck or synccheck run prints only "ERROR SUMMARY: 0 errors": the tool comes
	// from the file name (toolFromName), as RunTools gives it.
	{file: "sanitizer-h200-cuda13.0/cs_initcheck_clean.txt", want: []string{
		"initcheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_initcheck_leak.txt", want: []string{
		"initcheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_initcheck_oob.txt", want: []string{
		"initcheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_initcheck_race.txt", want: []string{
		"initcheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_initcheck_sync.txt", want: []string{
		"initcheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	// grep -c 'Uninitialized __global__ memory read' = 64, all at bugs.cu:20 (grep '    at ' | uniq -c),
	// threads (0..63,0,0) of block (0,0,0): one site x64 = ERROR SUMMARY 64.
	{file: "sanitizer-h200-cuda13.0/cs_initcheck_uninit.txt", want: []string{
		"initcheck text summary errors=64 warnings=0 not_printed=0 exit=0 launch",
		"  uninitialized-read error x64 bugs.cu:20 (0,0,0)/(0,0,0) uninit_read(const float *, float *) | __global__ read of size 4 bytes",
	}},
	// Every memcheck run of bugs.cu leaks its 4 buffers (grep -c Leaked = 4, LEAK SUMMARY 4
	// allocations) and ERROR SUMMARY counts them: 4 errors, 5 with the leak case. Each leak is its
	// own site (its cudaMalloc call in main). No kernel error: without --padding the oob write
	// lands in the next allocation, so memcheck does not see it.
	{file: "sanitizer-h200-cuda13.0/cs_memcheck_clean.txt", want: []string{
		"memcheck text summary errors=4 warnings=0 not_printed=0 exit=0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d7d",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dc7",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_memcheck_leak.txt", want: []string{
		"memcheck text summary errors=5 warnings=0 not_printed=0 exit=0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d7d",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dc7",
		"  leak error x1 - - - | 4096 bytes allocated at main+0x92a3",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_memcheck_oob.txt", want: []string{
		"memcheck text summary errors=4 warnings=0 not_printed=0 exit=0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d7d",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dc7",
	}},
	// grep -c 'Invalid __global__ write' = 100, all bugs.cu:10, first thread (0,0,0) block (1,0,0);
	// ERROR SUMMARY 257 and "157 errors were not printed": 100 + 157 = 257 (the 256 writes of
	// block 1 plus the launch failure cudaDeviceSynchronize reports). No --leak-check here.
	{file: "sanitizer-h200-cuda13.0/cs_memcheck_oob_padding.txt", want: []string{
		"memcheck text summary errors=257 warnings=0 not_printed=157 exit=0 launch",
		"  out-of-bounds error x100 bugs.cu:10 (0,0,0)/(1,0,0) oob_write(float *, int) | __global__ write of size 4 bytes",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_memcheck_race.txt", want: []string{
		"memcheck text summary errors=4 warnings=0 not_printed=0 exit=0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d7d",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dc7",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_memcheck_sync.txt", want: []string{
		"memcheck text summary errors=4 warnings=0 not_printed=0 exit=0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d7d",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dc7",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_memcheck_uninit.txt", want: []string{
		"memcheck text summary errors=4 warnings=0 not_printed=0 exit=0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d7d",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dc7",
	}},
	// cs_printlimit.txt: --print-limit 2 without padding: nothing found, no exit line.
	// cs_printlimit2.txt: --print-limit 2 with padding: 2 records printed, 259 not, ERROR SUMMARY
	// 261 = 256 writes + 1 launch failure + 4 leaks; the program's own "CUDA error" line between.
	{file: "sanitizer-h200-cuda13.0/cs_printlimit.txt", tool: ToolMemcheck, want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_printlimit2.txt", want: []string{
		"memcheck text summary errors=261 warnings=0 not_printed=259 exit=- launch",
		"  out-of-bounds error x2 bugs.cu:10 (0,0,0)/(1,0,0) oob_write(float *, int) | __global__ write of size 4 bytes",
	}},
	// racecheck: "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)".
	{file: "sanitizer-h200-cuda13.0/cs_racecheck_clean.txt", want: []string{
		"racecheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	// --racecheck-report hazard: grep -c 'hazard detected' = 100 (32 WAW at 14/14, 68 RAW at
	// 14/15: grep -o 'Potential [A-Z]*' | uniq -c), summary "100 hazards displayed (358 errors, 0
	// warnings)": 100 printed + 258 not printed = 358.
	{file: "sanitizer-h200-cuda13.0/cs_racecheck_hazard.txt", want: []string{
		"racecheck text summary errors=358 warnings=0 not_printed=258 exit=- launch",
		"  race-waw error x32 bugs.cu:14 (32,0,0)/(0,0,0) smem_race(float *) | Write access at bugs.cu:14 and Write access at bugs.cu:14",
		"  race-raw error x68 bugs.cu:14 (97,0,0)/(0,0,0) smem_race(float *) | Write access at bugs.cu:14 and Read access at bugs.cu:15",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_racecheck_leak.txt", want: []string{
		"racecheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_racecheck_oob.txt", want: []string{
		"racecheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	// Analysis mode: one report for line 14 racing with 14 (94 hazards) and 15 (264): one error,
	// 358 hazards; cs_racecheck_sync.txt one report 24/25 (64 hazards).
	{file: "sanitizer-h200-cuda13.0/cs_racecheck_race.txt", want: []string{
		"racecheck text summary errors=1 warnings=0 not_printed=0 exit=0 launch",
		"  race error x1 h358 bugs.cu:14 - smem_race(float *) | Write access at bugs.cu:14 and Write access at bugs.cu:14 [94 hazards], Read access at bugs.cu:15 [264 hazards]",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_racecheck_sync.txt", want: []string{
		"racecheck text summary errors=1 warnings=0 not_printed=0 exit=0 launch",
		"  race-raw error x1 h64 bugs.cu:24 - divergent_barrier(float *) | Write access at bugs.cu:24 and Read access at bugs.cu:25 [64 hazards]",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_racecheck_uninit.txt", want: []string{
		"racecheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_synccheck_clean.txt", want: []string{
		"synccheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_synccheck_leak.txt", want: []string{
		"synccheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_synccheck_oob.txt", want: []string{
		"synccheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_synccheck_race.txt", want: []string{
		"synccheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	// grep -c 'Barrier error detected' = 16 (threads 0..15 at bugs.cu:24) = ERROR SUMMARY 16.
	{file: "sanitizer-h200-cuda13.0/cs_synccheck_sync.txt", want: []string{
		"synccheck text summary errors=16 warnings=0 not_printed=0 exit=0 launch",
		"  barrier-divergence error x16 bugs.cu:24 (0,0,0)/(0,0,0) divergent_barrier(float *) | Divergent thread(s) in warp",
	}},
	{file: "sanitizer-h200-cuda13.0/cs_synccheck_uninit.txt", want: []string{
		"synccheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-h200-cuda13.0/exitcodes.txt", err: "no compute-sanitizer lines (\"=========\") in 3 lines; the first is \"padding error-exitcode -> 17\""},
	// hang.txt: `timeout -s KILL 20 ./bugs hang` without the sanitizer: no sanitizer line, the
	// shell's "Killed" and exit=137: a hung run, not an unreadable log.
	{file: "sanitizer-h200-cuda13.0/hang.txt", want: []string{
		"- text no-summary errors=0 warnings=0 not_printed=0 exit=137 timed-out",
		"  problem: the process was killed (exit 137: SIGKILL, as `timeout -s KILL` or the",
	}},
	// XML record files: no summary, so the counts are what the records add up to; a clean run's
	// file is an empty <ComputeSanitizerOutput/> (tool from the file name). grep -c '<record>':
	// initcheck_uninit 64, memcheck_oobpad 100, racecheck_race 1, racecheck_sync 1,
	// synccheck_sync 16. The kernel's mangled name comes from the host stack's device stub.
	{file: "sanitizer-h200-cuda13.0/xml_initcheck_race.xml", want: []string{
		"initcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-h200-cuda13.0/xml_initcheck_sync.xml", want: []string{
		"initcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-h200-cuda13.0/xml_initcheck_uninit.xml", want: []string{
		"initcheck xml no-summary errors=64 warnings=0 not_printed=0 exit=- launch",
		"  uninitialized-read error x64 /src/probe/bugs.cu:20 (0,0,0)/(0,0,0) _Z11uninit_readPKfPf | __global__ read of size 4 bytes",
	}},
	{file: "sanitizer-h200-cuda13.0/xml_memcheck_oobpad.xml", want: []string{
		"memcheck xml no-summary errors=100 warnings=0 not_printed=0 exit=- launch",
		"  out-of-bounds error x100 /src/probe/bugs.cu:10 (0,0,0)/(1,0,0) _Z9oob_writePfi | __global__ write of size 4 bytes",
	}},
	{file: "sanitizer-h200-cuda13.0/xml_memcheck_race.xml", want: []string{
		"memcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-h200-cuda13.0/xml_memcheck_sync.xml", want: []string{
		"memcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-h200-cuda13.0/xml_memcheck_uninit.xml", want: []string{
		"memcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-h200-cuda13.0/xml_racecheck_race.xml", want: []string{
		"racecheck xml no-summary errors=1 warnings=0 not_printed=0 exit=- launch",
		"  race error x1 h358 /src/probe/bugs.cu:14 - smem_race | Write access at bugs.cu:14 and Write access at bugs.cu:14 [94 hazards], Read access at bugs.cu:15 [264 hazards]",
	}},
	{file: "sanitizer-h200-cuda13.0/xml_racecheck_sync.xml", want: []string{
		"racecheck xml no-summary errors=1 warnings=0 not_printed=0 exit=- launch",
		"  race-raw error x1 h64 /src/probe/bugs.cu:24 - divergent_barrier | Write access at bugs.cu:24 and Read access at bugs.cu:25 [64 hazards]",
	}},
	{file: "sanitizer-h200-cuda13.0/xml_racecheck_uninit.xml", want: []string{
		"racecheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-h200-cuda13.0/xml_synccheck_race.xml", want: []string{
		"synccheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-h200-cuda13.0/xml_synccheck_sync.xml", want: []string{
		"synccheck xml no-summary errors=16 warnings=0 not_printed=0 exit=- launch",
		"  barrier-divergence error x16 /src/probe/bugs.cu:24 (0,0,0)/(0,0,0) _Z17divergent_barrierPf | Divergent thread(s) in warp",
	}},
	{file: "sanitizer-h200-cuda13.0/xml_synccheck_uninit.xml", want: []string{
		"synccheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	// What the XML runs printed: the same as cs_*.txt, without exit lines (and without
	// --leak-check, so no leaks).
	{file: "sanitizer-h200-cuda13.0/xmlrun_initcheck_race.txt", want: []string{
		"initcheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-h200-cuda13.0/xmlrun_initcheck_sync.txt", want: []string{
		"initcheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-h200-cuda13.0/xmlrun_initcheck_uninit.txt", want: []string{
		"initcheck text summary errors=64 warnings=0 not_printed=0 exit=- launch",
		"  uninitialized-read error x64 bugs.cu:20 (0,0,0)/(0,0,0) uninit_read(const float *, float *) | __global__ read of size 4 bytes",
	}},
	{file: "sanitizer-h200-cuda13.0/xmlrun_memcheck_oobpad.txt", want: []string{
		"memcheck text summary errors=257 warnings=0 not_printed=157 exit=- launch",
		"  out-of-bounds error x100 bugs.cu:10 (0,0,0)/(1,0,0) oob_write(float *, int) | __global__ write of size 4 bytes",
	}},
	{file: "sanitizer-h200-cuda13.0/xmlrun_memcheck_race.txt", want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-h200-cuda13.0/xmlrun_memcheck_sync.txt", want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-h200-cuda13.0/xmlrun_memcheck_uninit.txt", want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-h200-cuda13.0/xmlrun_racecheck_race.txt", want: []string{
		"racecheck text summary errors=1 warnings=0 not_printed=0 exit=- launch",
		"  race error x1 h358 bugs.cu:14 - smem_race(float *) | Write access at bugs.cu:14 and Write access at bugs.cu:14 [94 hazards], Read access at bugs.cu:15 [264 hazards]",
	}},
	{file: "sanitizer-h200-cuda13.0/xmlrun_racecheck_sync.txt", want: []string{
		"racecheck text summary errors=1 warnings=0 not_printed=0 exit=- launch",
		"  race-raw error x1 h64 bugs.cu:24 - divergent_barrier(float *) | Write access at bugs.cu:24 and Read access at bugs.cu:25 [64 hazards]",
	}},
	{file: "sanitizer-h200-cuda13.0/xmlrun_racecheck_uninit.txt", want: []string{
		"racecheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-h200-cuda13.0/xmlrun_synccheck_race.txt", want: []string{
		"synccheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-h200-cuda13.0/xmlrun_synccheck_sync.txt", want: []string{
		"synccheck text summary errors=16 warnings=0 not_printed=0 exit=- launch",
		"  barrier-divergence error x16 bugs.cu:24 (0,0,0)/(0,0,0) divergent_barrier(float *) | Divergent thread(s) in warp",
	}},
	{file: "sanitizer-h200-cuda13.0/xmlrun_synccheck_uninit.txt", want: []string{
		"synccheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	// The probe's captures (testdata/probe/README.md). Option errors: a usage text after the
	// command echo is a run that ran nothing.
	{file: "probe/h200-cuda13.0/cs_badtool.txt", want: []string{
		"- text no-summary errors=0 warnings=0 not_printed=0 exit=255",
		"  problem: \"the argument for option '--tool' is invalid\"; exit 255",
	}},
	{file: "probe/h200-cuda13.0/cs_missing_target.txt", want: []string{
		"memcheck text no-summary errors=0 warnings=0 not_printed=0 exit=1",
		"  problem: compute-sanitizer could not start the target:",
	}},
	{file: "probe/h200-cuda13.0/cs_xml_nosave.txt", want: []string{
		"memcheck text no-summary errors=0 warnings=0 not_printed=0 exit=255",
		"  problem: \"--xml was enabled but no save location was specified\"; exit 255",
	}},
	// hang_kill.txt is a process list, but its "Killed" line reads as a killed run; hang_run.txt is
	// what a hung run printed before its sanitizer was killed: the header alone.
	{file: "probe/h200-cuda13.0/hang_kill.txt", want: []string{
		"- text no-summary errors=0 warnings=0 not_printed=0 exit=- timed-out",
		"  problem: the process was killed (\"gates/sanitizer/testdata/probe/capture.sh: line 45:  1247 Killed",
	}},
	{file: "probe/h200-cuda13.0/hang_run.txt", want: []string{
		"- text no-summary errors=0 warnings=0 not_printed=0 exit=-",
		"  problem: no ERROR SUMMARY line: the log ends at line 1 before compute-sanitizer",
	}},
	{file: "probe/h200-cuda13.0/ic_nolaunch.txt", want: []string{
		"initcheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "probe/h200-cuda13.0/ic_nolaunch.xml", want: []string{
		"initcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/ic_uninitcopy.txt", want: []string{
		"initcheck text summary errors=8 warnings=0 not_printed=0 exit=86",
		"  uninitialized-read error x8 - - - | host API access of size 256 bytes",
	}},
	{file: "probe/h200-cuda13.0/ic_uninitcopy.xml", want: []string{
		"initcheck xml no-summary errors=8 warnings=0 not_printed=0 exit=-",
		"  uninitialized-read error x8 - - - | host API access of size 256 bytes",
	}},
	{file: "probe/h200-cuda13.0/ic_unused.txt", want: []string{
		"initcheck text summary errors=1 warnings=0 not_printed=0 exit=86",
		"  unused-memory error x1 - - - | allocation of 4096 bytes at main+0x99dc",
	}},
	{file: "probe/h200-cuda13.0/ic_unused.xml", want: []string{
		"initcheck xml no-summary errors=1 warnings=0 not_printed=0 exit=-",
		"  unused-memory error x1 - - - | allocation of 4096 bytes at main+0x99dc",
	}},
	// abort(), exit(3), SIGSEGV after a clean kernel: ERROR SUMMARY 0, the target failed, and the
	// sanitizer exits with the target's status (the signal number for signals).
	{file: "probe/h200-cuda13.0/mc_abort.txt", want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=6",
		"  problem: the target application failed (compute-sanitizer: \"Target application returned an error\"); exit 6",
	}},
	{file: "probe/h200-cuda13.0/mc_abort.xml", want: []string{
		"memcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/mc_apierr.txt", want: []string{
		"memcheck text summary errors=1 warnings=0 not_printed=0 exit=86",
		"  api-error error x1 - - - | cudaMemcpy returned cudaErrorInvalidValue",
	}},
	{file: "probe/h200-cuda13.0/mc_apierr.xml", want: []string{
		"memcheck xml no-summary errors=1 warnings=0 not_printed=0 exit=-",
		"  api-error error x1 - - - | cudaMemcpy returned cudaErrorInvalidValue",
	}},
	// A failed device assert: 4 "Warp assert" (one per thread, at __assertfail; the kernel from
	// the host frame), the API errors it causes, 2 leaks: ERROR SUMMARY 9.
	{file: "probe/h200-cuda13.0/mc_assert.txt", want: []string{
		"memcheck text summary errors=9 warnings=0 not_printed=0 exit=86 launch",
		"  device-assert error x4 - (0,0,0)/(0,0,0) dev_assert(int const*) | Warp assert",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorAssert",
		"  api-error error x2 - - - | cudaFree returned cudaErrorAssert",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d4c",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8da2",
	}},
	{file: "probe/h200-cuda13.0/mc_assert.xml", want: []string{
		"memcheck xml no-summary errors=9 warnings=0 not_printed=0 exit=- launch",
		"  device-assert error x4 - (0,0,0)/(0,0,0) _Z10dev_assertPKi | Warp assert",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorAssert",
		"  api-error error x2 - - - | cudaFree returned cudaErrorAssert",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d4c",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8da2",
	}},
	// Writes through pointer 0x10: reported as out of bounds. 32 writes + 1 + 2 API errors + 2 leaks
	// = ERROR SUMMARY 37 (grep '^========= [A-Z]' | sort | uniq -c). Same for mc_misaligned and mc_smem.
	{file: "probe/h200-cuda13.0/mc_badaddr.txt", want: []string{
		"memcheck text summary errors=37 warnings=0 not_printed=0 exit=86 launch",
		"  out-of-bounds error x32 probe.cu:12 (0,0,0)/(0,0,0) bad_address(float *) | __global__ write of size 4 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x2 - - - | cudaFree returned cudaErrorLaunchFailure",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d4c",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8da2",
	}},
	{file: "probe/h200-cuda13.0/mc_badaddr.xml", want: []string{
		"memcheck xml no-summary errors=37 warnings=0 not_printed=0 exit=- launch",
		"  out-of-bounds error x32 /src/probe.cu:12 (0,0,0)/(0,0,0) _Z11bad_addressPf | __global__ write of size 4 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x2 - - - | cudaFree returned cudaErrorLaunchFailure",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d4c",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8da2",
	}},
	{file: "probe/h200-cuda13.0/mc_doublefree.txt", want: []string{
		"memcheck text summary errors=1 warnings=0 not_printed=0 exit=86",
		"  api-error error x1 - - - | cudaFree returned cudaErrorInvalidValue",
	}},
	{file: "probe/h200-cuda13.0/mc_doublefree.xml", want: []string{
		"memcheck xml no-summary errors=1 warnings=0 not_printed=0 exit=-",
		"  api-error error x1 - - - | cudaFree returned cudaErrorInvalidValue",
	}},
	{file: "probe/h200-cuda13.0/mc_exit3.txt", want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=3",
		"  problem: the target application failed (compute-sanitizer: \"Target application returned an error\"); exit 3",
	}},
	{file: "probe/h200-cuda13.0/mc_exit3.xml", want: []string{
		"memcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/mc_fine.txt", want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "probe/h200-cuda13.0/mc_fine.xml", want: []string{
		"memcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/mc_fine_session.txt", want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "probe/h200-cuda13.0/mc_fine_session.xml", want: []string{
		"memcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/mc_leak.txt", want: []string{
		"memcheck text summary errors=1 warnings=0 not_printed=0 exit=86",
		"  leak error x1 - - - | 4096 bytes allocated at main+0x9b6e",
	}},
	{file: "probe/h200-cuda13.0/mc_leak.xml", want: []string{
		"memcheck xml no-summary errors=1 warnings=0 not_printed=0 exit=-",
		"  leak error x1 - - - | 4096 bytes allocated at main+0x9b6e",
	}},
	{file: "probe/h200-cuda13.0/mc_misaligned.txt", want: []string{
		"memcheck text summary errors=37 warnings=0 not_printed=0 exit=86 launch",
		"  misaligned error x32 probe.cu:11 (0,0,0)/(0,0,0) misaligned(float *) | __global__ write of size 4 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x2 - - - | cudaFree returned cudaErrorLaunchFailure",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d4c",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8da2",
	}},
	{file: "probe/h200-cuda13.0/mc_misaligned.xml", want: []string{
		"memcheck xml no-summary errors=37 warnings=0 not_printed=0 exit=- launch",
		"  misaligned error x32 /src/probe.cu:11 (0,0,0)/(0,0,0) _Z10misalignedPf | __global__ write of size 4 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x2 - - - | cudaFree returned cudaErrorLaunchFailure",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d4c",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8da2",
	}},
	// A program that never calls CUDA: no summary, exit 255.
	{file: "probe/h200-cuda13.0/mc_nocuda.txt", want: []string{
		"memcheck text no-summary errors=0 warnings=0 not_printed=0 exit=255",
		"  problem: the target application exited before its first CUDA call (compute-sani",
	}},
	{file: "probe/h200-cuda13.0/mc_nolaunch.txt", want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "probe/h200-cuda13.0/mc_nolaunch.xml", want: []string{
		"memcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/mc_nolaunch_session.txt", want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "probe/h200-cuda13.0/mc_nolaunch_session.xml", want: []string{
		"memcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/mc_ns.txt", want: []string{
		"memcheck text summary errors=7 warnings=0 not_printed=0 exit=86 launch",
		"  out-of-bounds error x4 probe.cu:39 (0,0,0)/(0,0,0) kg::ns_oob(float *, int) | __global__ write of size 4 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x2 - - - | cudaFree returned cudaErrorLaunchFailure",
	}},
	{file: "probe/h200-cuda13.0/mc_ns.xml", want: []string{
		"memcheck xml no-summary errors=7 warnings=0 not_printed=0 exit=- launch",
		"  out-of-bounds error x4 /src/probe.cu:39 (0,0,0)/(0,0,0) _ZN2kg6ns_oobEPfi | __global__ write of size 4 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x2 - - - | cudaFree returned cudaErrorLaunchFailure",
	}},
	{file: "probe/h200-cuda13.0/mc_segv.txt", want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=11",
		"  problem: the target application failed (compute-sanitizer: \"Target application returned an error\"); exit 11",
	}},
	{file: "probe/h200-cuda13.0/mc_segv.xml", want: []string{
		"memcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/mc_smem.txt", want: []string{
		"memcheck text summary errors=37 warnings=0 not_printed=0 exit=86 launch",
		"  out-of-bounds error x32 probe.cu:15 (0,0,0)/(0,0,0) smem_oob(float *, int) | __shared__ write of size 4 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x2 - - - | cudaFree returned cudaErrorLaunchFailure",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d4c",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8da2",
	}},
	{file: "probe/h200-cuda13.0/mc_smem.xml", want: []string{
		"memcheck xml no-summary errors=37 warnings=0 not_printed=0 exit=- launch",
		"  out-of-bounds error x32 /src/probe.cu:15 (0,0,0)/(0,0,0) _Z8smem_oobPfi | __shared__ write of size 4 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x2 - - - | cudaFree returned cudaErrorLaunchFailure",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d4c",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8da2",
	}},
	// Template and namespaced kernels; --demangle no prints the mangled name in the text.
	{file: "probe/h200-cuda13.0/mc_tmpl.txt", want: []string{
		"memcheck text summary errors=7 warnings=0 not_printed=0 exit=86 launch",
		"  out-of-bounds error x4 probe.cu:37 (0,0,0)/(0,0,0) void tmpl_oob<float, (int)3>(T1 *, int) | __global__ write of size 4 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x2 - - - | cudaFree returned cudaErrorLaunchFailure",
	}},
	{file: "probe/h200-cuda13.0/mc_tmpl.xml", want: []string{
		"memcheck xml no-summary errors=7 warnings=0 not_printed=0 exit=- launch",
		"  out-of-bounds error x4 /src/probe.cu:37 (0,0,0)/(0,0,0) _Z8tmpl_oobIfLi3EEvPT_i | __global__ write of size 4 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x2 - - - | cudaFree returned cudaErrorLaunchFailure",
	}},
	{file: "probe/h200-cuda13.0/mc_tmpl_apiall.txt", want: []string{
		"memcheck text summary errors=9 warnings=0 not_printed=0 exit=86 launch",
		"  out-of-bounds error x4 probe.cu:37 (0,0,0)/(0,0,0) void tmpl_oob<float, (int)3>(T1 *, int) | __global__ write of size 4 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x2 - - - | cudaFree returned cudaErrorLaunchFailure",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d4c",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8da2",
	}},
	{file: "probe/h200-cuda13.0/mc_tmpl_demangle_no.txt", want: []string{
		"memcheck text summary errors=7 warnings=0 not_printed=0 exit=86 launch",
		"  out-of-bounds error x4 probe.cu:37 (0,0,0)/(0,0,0) _Z8tmpl_oobIfLi3EEvPT_i | __global__ write of size 4 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x2 - - - | cudaFree returned cudaErrorLaunchFailure",
	}},
	{file: "probe/h200-cuda13.0/mc_tmpl_demangle_no.xml", want: []string{
		"memcheck xml no-summary errors=7 warnings=0 not_printed=0 exit=- launch",
		"  out-of-bounds error x4 /src/probe.cu:37 (0,0,0)/(0,0,0) _Z8tmpl_oobIfLi3EEvPT_i | __global__ write of size 4 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x2 - - - | cudaFree returned cudaErrorLaunchFailure",
	}},
	{file: "probe/h200-cuda13.0/rc_nolaunch.txt", want: []string{
		"racecheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "probe/h200-cuda13.0/rc_nolaunch.xml", want: []string{
		"racecheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rc_samevalue_all.txt", want: []string{
		"racecheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "probe/h200-cuda13.0/rc_samevalue_all.xml", want: []string{
		"racecheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rc_samevalue_analysis.txt", want: []string{
		"racecheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "probe/h200-cuda13.0/rc_samevalue_analysis.xml", want: []string{
		"racecheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rc_samevalue_hazard.txt", want: []string{
		"racecheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "probe/h200-cuda13.0/rc_samevalue_hazard.xml", want: []string{
		"racecheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	// Racecheck warnings: hazard mode prints 4 errors and 96 "Warning: (Warp Level Programming)"
	// hazards, summary (8 errors, 248 warnings) with 156 not printed; "all" adds the analysis
	// report (9 errors). The hazard XML carries no level.
	{file: "probe/h200-cuda13.0/rc_war_all.txt", want: []string{
		"racecheck text summary errors=9 warnings=248 not_printed=157 exit=86 launch",
		"  race-war error x4 probe.cu:25 (31,0,0)/(0,0,0) war_race(float *) | Read access at probe.cu:25 and Write access at probe.cu:26",
		"  race-war warning x96 probe.cu:25 (32,0,0)/(0,0,0) war_race(float *) | Read access at probe.cu:25 and Write access at probe.cu:26",
	}},
	{file: "probe/h200-cuda13.0/rc_war_analysis.txt", want: []string{
		"racecheck text summary errors=1 warnings=0 not_printed=0 exit=86 launch",
		"  race-war error x1 h256 probe.cu:25 - war_race(float *) | Read access at probe.cu:25 and Write access at probe.cu:26 [256 hazards]",
	}},
	{file: "probe/h200-cuda13.0/rc_war_analysis.xml", want: []string{
		"racecheck xml no-summary errors=1 warnings=0 not_printed=0 exit=- launch",
		"  race-war error x1 h256 /src/probe.cu:25 - war_race | Read access at probe.cu:25 and Write access at probe.cu:26 [256 hazards]",
	}},
	{file: "probe/h200-cuda13.0/rc_war_hazard.txt", want: []string{
		"racecheck text summary errors=8 warnings=248 not_printed=156 exit=86 launch",
		"  race-war error x4 probe.cu:25 (31,0,0)/(0,0,0) war_race(float *) | Read access at probe.cu:25 and Write access at probe.cu:26",
		"  race-war warning x96 probe.cu:25 (32,0,0)/(0,0,0) war_race(float *) | Read access at probe.cu:25 and Write access at probe.cu:26",
	}},
	{file: "probe/h200-cuda13.0/rc_war_hazard.xml", want: []string{
		"racecheck xml no-summary errors=100 warnings=0 not_printed=0 exit=- launch",
		"  race-war error x100 /src/probe.cu:25 (31,0,0)/(0,0,0) _Z8war_racePf | Read access at probe.cu:25 and Write access at probe.cu:26",
		"  note: 100 racecheck hazard records carry no level in the XML (--racecheck-re",
	}},
	// rt_<case>_<tool>: what RunTools itself wrote (its arguments: --demangle no, --print-limit
	// 10000, --leak-check full --padding 4096, --racecheck-report analysis) for `bugs <case>`,
	// kept by TestRunToolsReal. With padding and no print limit every write is printed: 256
	// out-of-bounds + 1 launch failure + 4 leaks = 261. rt_hang_memcheck.log is the header
	// alone: the hung run was killed after 15 s, and no XML file was written at all.
	{file: "probe/h200-cuda13.0/rt_clean_initcheck.log", want: []string{
		"initcheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_clean_initcheck.xml", want: []string{
		"initcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_clean_memcheck.log", want: []string{
		"memcheck text summary errors=4 warnings=0 not_printed=0 exit=-",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d86",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dd9",
	}},
	{file: "probe/h200-cuda13.0/rt_clean_memcheck.xml", want: []string{
		"memcheck xml no-summary errors=4 warnings=0 not_printed=0 exit=-",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d86",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dd9",
	}},
	{file: "probe/h200-cuda13.0/rt_clean_racecheck.log", want: []string{
		"racecheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_clean_racecheck.xml", want: []string{
		"racecheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_clean_synccheck.log", want: []string{
		"synccheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_clean_synccheck.xml", want: []string{
		"synccheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_hang_memcheck.log", want: []string{
		"memcheck text no-summary errors=0 warnings=0 not_printed=0 exit=-",
		"  problem: no ERROR SUMMARY line: the log ends at line 1",
	}},
	{file: "probe/h200-cuda13.0/rt_oob_initcheck.log", want: []string{
		"initcheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_oob_initcheck.xml", want: []string{
		"initcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_oob_memcheck.log", want: []string{
		"memcheck text summary errors=261 warnings=0 not_printed=0 exit=- launch",
		"  out-of-bounds error x256 bugs.cu:10 (0,0,0)/(1,0,0) _Z9oob_writePfi | __global__ write of size 4 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d86",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dd9",
	}},
	{file: "probe/h200-cuda13.0/rt_oob_memcheck.xml", want: []string{
		"memcheck xml no-summary errors=261 warnings=0 not_printed=0 exit=- launch",
		"  out-of-bounds error x256 /src/bugs.cu:10 (0,0,0)/(1,0,0) _Z9oob_writePfi | __global__ write of size 4 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d86",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dd9",
	}},
	{file: "probe/h200-cuda13.0/rt_oob_racecheck.log", want: []string{
		"racecheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_oob_racecheck.xml", want: []string{
		"racecheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_oob_synccheck.log", want: []string{
		"synccheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_oob_synccheck.xml", want: []string{
		"synccheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_race_initcheck.log", want: []string{
		"initcheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_race_initcheck.xml", want: []string{
		"initcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_race_memcheck.log", want: []string{
		"memcheck text summary errors=4 warnings=0 not_printed=0 exit=-",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d86",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dd9",
	}},
	{file: "probe/h200-cuda13.0/rt_race_memcheck.xml", want: []string{
		"memcheck xml no-summary errors=4 warnings=0 not_printed=0 exit=-",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d86",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dd9",
	}},
	{file: "probe/h200-cuda13.0/rt_race_racecheck.log", want: []string{
		"racecheck text summary errors=1 warnings=0 not_printed=0 exit=- launch",
		"  race error x1 h358 bugs.cu:14 - _Z9smem_racePf | Write access at bugs.cu:14 and Write access at bugs.cu:14 [94 hazards], Read access at bugs.cu:15 [264 hazards]",
	}},
	{file: "probe/h200-cuda13.0/rt_race_racecheck.xml", want: []string{
		"racecheck xml no-summary errors=1 warnings=0 not_printed=0 exit=- launch",
		"  race error x1 h358 /src/bugs.cu:14 - smem_race | Write access at bugs.cu:14 and Write access at bugs.cu:14 [94 hazards], Read access at bugs.cu:15 [264 hazards]",
	}},
	{file: "probe/h200-cuda13.0/rt_race_synccheck.log", want: []string{
		"synccheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_race_synccheck.xml", want: []string{
		"synccheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_sync_initcheck.log", want: []string{
		"initcheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_sync_initcheck.xml", want: []string{
		"initcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_sync_memcheck.log", want: []string{
		"memcheck text summary errors=4 warnings=0 not_printed=0 exit=-",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d86",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dd9",
	}},
	{file: "probe/h200-cuda13.0/rt_sync_memcheck.xml", want: []string{
		"memcheck xml no-summary errors=4 warnings=0 not_printed=0 exit=-",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d86",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dd9",
	}},
	{file: "probe/h200-cuda13.0/rt_sync_racecheck.log", want: []string{
		"racecheck text summary errors=1 warnings=0 not_printed=0 exit=- launch",
		"  race-raw error x1 h64 bugs.cu:24 - _Z17divergent_barrierPf | Write access at bugs.cu:24 and Read access at bugs.cu:25 [64 hazards]",
	}},
	{file: "probe/h200-cuda13.0/rt_sync_racecheck.xml", want: []string{
		"racecheck xml no-summary errors=1 warnings=0 not_printed=0 exit=- launch",
		"  race-raw error x1 h64 /src/bugs.cu:24 - divergent_barrier | Write access at bugs.cu:24 and Read access at bugs.cu:25 [64 hazards]",
	}},
	{file: "probe/h200-cuda13.0/rt_sync_synccheck.log", want: []string{
		"synccheck text summary errors=16 warnings=0 not_printed=0 exit=- launch",
		"  barrier-divergence error x16 bugs.cu:24 (0,0,0)/(0,0,0) _Z17divergent_barrierPf | Divergent thread(s) in warp",
	}},
	{file: "probe/h200-cuda13.0/rt_sync_synccheck.xml", want: []string{
		"synccheck xml no-summary errors=16 warnings=0 not_printed=0 exit=- launch",
		"  barrier-divergence error x16 /src/bugs.cu:24 (0,0,0)/(0,0,0) _Z17divergent_barrierPf | Divergent thread(s) in warp",
	}},
	{file: "probe/h200-cuda13.0/rt_uninit_initcheck.log", want: []string{
		"initcheck text summary errors=64 warnings=0 not_printed=0 exit=- launch",
		"  uninitialized-read error x64 bugs.cu:20 (0,0,0)/(0,0,0) _Z11uninit_readPKfPf | __global__ read of size 4 bytes",
	}},
	{file: "probe/h200-cuda13.0/rt_uninit_initcheck.xml", want: []string{
		"initcheck xml no-summary errors=64 warnings=0 not_printed=0 exit=- launch",
		"  uninitialized-read error x64 /src/bugs.cu:20 (0,0,0)/(0,0,0) _Z11uninit_readPKfPf | __global__ read of size 4 bytes",
	}},
	{file: "probe/h200-cuda13.0/rt_uninit_memcheck.log", want: []string{
		"memcheck text summary errors=4 warnings=0 not_printed=0 exit=-",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d86",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dd9",
	}},
	{file: "probe/h200-cuda13.0/rt_uninit_memcheck.xml", want: []string{
		"memcheck xml no-summary errors=4 warnings=0 not_printed=0 exit=-",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8ce0",
		"  leak error x1 - - - | 1024 bytes allocated at main+0x8d33",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8d86",
		"  leak error x1 - - - | 512 bytes allocated at main+0x8dd9",
	}},
	{file: "probe/h200-cuda13.0/rt_uninit_racecheck.log", want: []string{
		"racecheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_uninit_racecheck.xml", want: []string{
		"racecheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_uninit_synccheck.log", want: []string{
		"synccheck text summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/rt_uninit_synccheck.xml", want: []string{
		"synccheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/sc_nolaunch.txt", want: []string{
		"synccheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "probe/h200-cuda13.0/sc_nolaunch.xml", want: []string{
		"synccheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/sc_syncwarp.txt", want: []string{
		"synccheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "probe/h200-cuda13.0/sc_syncwarp.xml", want: []string{
		"synccheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "probe/h200-cuda13.0/version.txt", err: "no compute-sanitizer lines (\"=========\") in 10 lines; the first is \"NVIDIA (R) Compute Sanitizer\""},

	// testdata/sanitizer-kernels-h200 (capture.sh there): the four tools on kernels/harness.cu
	// in sanitize mode, one launch of kg::flash_fwd<64, 64, false> on the small shape, built
	// clean and with each planted defect of kernels/flash_fwd.cu. Counts: grep '^========= [A-Z]'
	// FILE | sort | uniq -c for the records and summaries, grep '^=========     at ' FILE | sed
	// 's/.* in //' | uniq -c for the lines, grep -o 'by thread .*' FILE for threads and blocks,
	// grep -c '<record>' and grep -o '<kind>[A-Za-z]*' | uniq -c for the XML. Every run prints
	// the harness's own JSON between the sanitizer's lines; a clean run proves no launch.
	{file: "sanitizer-kernels-h200/cs_initcheck_clean.txt", want: []string{
		"initcheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-kernels-h200/cs_memcheck_clean.txt", want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-kernels-h200/cs_racecheck_clean.txt", want: []string{
		"racecheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-kernels-h200/cs_synccheck_clean.txt", want: []string{
		"synccheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	// KG_DEFECT_UNINIT: grep -c 'Uninitialized __global__ memory read of size 2 bytes' = 16, all at
	// flash_fwd.cu:184, threads (0,0,0) and (1,0,0) of blocks (0,0..7,0) (2 per block), the first
	// printed thread (0,0,0) of block (0,1,0): one site x16 = ERROR SUMMARY 16; exit 0.
	{file: "sanitizer-kernels-h200/cs_initcheck_uninit.txt", want: []string{
		"initcheck text summary errors=16 warnings=0 not_printed=0 exit=0 launch",
		"  uninitialized-read error x16 flash_fwd.cu:184 (0,0,0)/(0,1,0) " + flashFwdText + " | __global__ read of size 2 bytes",
	}},
	// KG_DEFECT_OOB with --padding 4096: 2 "Invalid __global__ write of size 2 bytes" at
	// flash_fwd.cu:200 (threads 126 and 127 of block (7,7,0)), then 6 "Program hit
	// cudaErrorLaunchFailure" (grep -o 'call to [A-Za-z]*' | uniq -c: cudaDeviceSynchronize 1,
	// cudaFree 4, cudaPeekAtLastError 1) and 4 "Leaked 524,288 bytes" (LEAK SUMMARY: 2097152
	// bytes leaked in 4 allocations) = 2 + 6 + 4 = ERROR SUMMARY 12. Each leak is its own
	// cudaMalloc call in Attention::sanitize() (grep -A3 Leaked | grep -v cudaMalloc). The
	// harness reports the launch failure and exits 1 ("Target application returned an
	// error"): a problem, with the sanitizer's exit 1.
	{file: "sanitizer-kernels-h200/cs_memcheck_oob.txt", want: []string{
		"memcheck text summary errors=12 warnings=0 not_printed=0 exit=1 launch",
		"  out-of-bounds error x2 flash_fwd.cu:200 (126,0,0)/(7,7,0) " + flashFwdText + " | __global__ write of size 2 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x4 - - - | cudaFree returned cudaErrorLaunchFailure",
		"  api-error error x1 - - - | cudaPeekAtLastError returned cudaErrorLaunchFailure",
		"  leak error x1 - - - | 524288 bytes allocated at (anonymous namespace)::Attention::sanitize+0x18e66",
		"  leak error x1 - - - | 524288 bytes allocated at (anonymous namespace)::Attention::sanitize+0x18eae",
		"  leak error x1 - - - | 524288 bytes allocated at (anonymous namespace)::Attention::sanitize+0x18ef3",
		"  leak error x1 - - - | 524288 bytes allocated at (anonymous namespace)::Attention::sanitize+0x18f32",
		"  problem: the target application failed (compute-sanitizer: \"Target application returned an error\"); exit 1",
	}},
	// KG_DEFECT_RACE: grep -c 'Race reported between' = 1: Write at flash_fwd.cu:177 and Read at
	// flash_fwd.cu:178 [16384 hazards]; "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0
	// warnings)"; exit 0.
	{file: "sanitizer-kernels-h200/cs_racecheck_race.txt", want: []string{
		"racecheck text summary errors=1 warnings=0 not_printed=0 exit=0 launch",
		"  race-raw error x1 h16384 flash_fwd.cu:177 - " + flashFwdText + " | Write access at flash_fwd.cu:177 and Read access at flash_fwd.cu:178 [16384 hazards]",
	}},
	// KG_DEFECT_DIVERGENT_BARRIER: grep -c 'Barrier error detected. Divergent thread(s) in warp' =
	// 64, all at flash_fwd.cu:208, threads 0-15, 32-47, 64-79 and 96-111 of block (0,0,0) (grep -o
	// 'by thread ([0-9]*' | sort -n), the first printed (64,0,0) = ERROR SUMMARY 64. The kernel
	// then fails, the harness exits 1: "Target application returned an error", exit 1.
	{file: "sanitizer-kernels-h200/cs_synccheck_divergent.txt", want: []string{
		"synccheck text summary errors=64 warnings=0 not_printed=0 exit=1 launch",
		"  barrier-divergence error x64 flash_fwd.cu:208 (64,0,0)/(0,0,0) " + flashFwdText + " | Divergent thread(s) in warp",
		"  problem: the target application failed (compute-sanitizer: \"Target application returned an error\"); exit 1",
	}},
	// KG_DEFECT_CRASH: the harness abort()s after a clean launch: "Error: process didn't
	// terminate successfully", "Target application returned an error", ERROR SUMMARY 0, LEAK
	// SUMMARY 0 allocations, exit=6 (SIGABRT's number, as probe/mc_abort.txt).
	{file: "sanitizer-kernels-h200/cs_memcheck_crash.txt", want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=6",
		"  problem: the target application failed (compute-sanitizer: \"Target application returned an error\"); exit 6",
	}},
	// KG_DEFECT_HANG under `timeout -s KILL 20`: the header alone, then exit=137 (3 lines, no
	// summary): a hung run.
	{file: "sanitizer-kernels-h200/cs_memcheck_hang.txt", want: []string{
		"memcheck text no-summary errors=0 warnings=0 not_printed=0 exit=137 timed-out",
		"  problem: no ERROR SUMMARY line: the run was killed (exit 137: SIGKILL, as `timeout -s KILL` or the OOM killer sends), a hung kernel killed by a timeout?",
	}},
	// KG_KERNELS=none: the harness prints "harness: none small: unknown kernel or shape" and
	// exits 1 without launching anything; ERROR SUMMARY 0, LEAK SUMMARY 0 allocations. The exit
	// says the target failed; nothing in the log can say that no kernel ran (TestKeptArtifacts).
	{file: "sanitizer-kernels-h200/cs_memcheck_nolaunch.txt", want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=1",
		"  problem: the target application failed (compute-sanitizer: \"Target application returned an error\"); exit 1",
	}},
	// kg_<case>.txt: what `kernel-gate sanitize` itself printed (its own progress lines and
	// exit=1), not sanitizer output; the kept artifacts are read by TestKeptArtifacts.
	{file: "sanitizer-kernels-h200/kg_crash.txt", err: "no compute-sanitizer lines (\"=========\") in 4 lines; the first is \"+ kernel-gate sanitize --tools memcheck -- /tmp/tmp.Rhm12ODqBG/h_crash\""},
	{file: "sanitizer-kernels-h200/kg_hang.txt", err: "no compute-sanitizer lines (\"=========\") in 4 lines; the first is \"+ kernel-gate sanitize --timeout 20s --tools memcheck,racecheck"},
	{file: "sanitizer-kernels-h200/kg_nolaunch.txt", err: "no compute-sanitizer lines (\"=========\") in 4 lines; the first is \"+ kernel-gate sanitize --tools memcheck -- /tmp/tmp.Rhm12ODqBG/h_clean\""},
	{file: "sanitizer-kernels-h200/kg_nonprotocol.txt", err: "no compute-sanitizer lines (\"=========\") in 4 lines; the first is \"+ kernel-gate sanitize --tools memcheck -- /bin/true\""},
	// The XML record files: grep -c '<record>': initcheck_uninit 16 (all <kind>Initcheck),
	// memcheck_oob 12 (Precise 2, Api 6, Leak 4), racecheck_race 1 (Analysis), synccheck_divergent
	// 64 (Synccheck); the clean and crash files are an empty <ComputeSanitizerOutput/>. The kernel
	// is the device stub's mangled name (grep -o '__device_stub__[^<]*' | uniq -c), except in the
	// racecheck analysis record, which has no host stack: its <func> is the bare "flash_fwd".
	// The leak records' allocation frame, (anonymous namespace)::Attention::sanitize() in the
	// text, has no <func> in the XML (only its <pc>), so the site is the next named frame,
	// main+0xbda8, the same for all four: one group x4 where the text has four sites
	// (xmlKnownDiffs).
	{file: "sanitizer-kernels-h200/xml_initcheck_clean.xml", want: []string{
		"initcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-kernels-h200/xml_initcheck_uninit.xml", want: []string{
		"initcheck xml no-summary errors=16 warnings=0 not_printed=0 exit=- launch",
		"  uninitialized-read error x16 /work/main/kernels/flash_fwd.cu:184 (0,0,0)/(0,1,0) " + flashFwdMangled + " | __global__ read of size 2 bytes",
	}},
	{file: "sanitizer-kernels-h200/xml_memcheck_clean.xml", want: []string{
		"memcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-kernels-h200/xml_memcheck_crash.xml", want: []string{
		"memcheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-kernels-h200/xml_memcheck_oob.xml", want: []string{
		"memcheck xml no-summary errors=12 warnings=0 not_printed=0 exit=- launch",
		"  out-of-bounds error x2 /work/main/kernels/flash_fwd.cu:200 (126,0,0)/(7,7,0) " + flashFwdMangled + " | __global__ write of size 2 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x4 - - - | cudaFree returned cudaErrorLaunchFailure",
		"  api-error error x1 - - - | cudaPeekAtLastError returned cudaErrorLaunchFailure",
		"  leak error x4 - - - | 524288 bytes allocated at main+0xbda8",
	}},
	{file: "sanitizer-kernels-h200/xml_racecheck_clean.xml", want: []string{
		"racecheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-kernels-h200/xml_racecheck_race.xml", want: []string{
		"racecheck xml no-summary errors=1 warnings=0 not_printed=0 exit=- launch",
		"  race-raw error x1 h16384 /work/main/kernels/flash_fwd.cu:177 - flash_fwd | Write access at flash_fwd.cu:177 and Read access at flash_fwd.cu:178 [16384 hazards]",
	}},
	{file: "sanitizer-kernels-h200/xml_synccheck_clean.xml", want: []string{
		"synccheck xml no-summary errors=0 warnings=0 not_printed=0 exit=-",
	}},
	{file: "sanitizer-kernels-h200/xml_synccheck_divergent.xml", want: []string{
		"synccheck xml no-summary errors=64 warnings=0 not_printed=0 exit=- launch",
		"  barrier-divergence error x64 /work/main/kernels/flash_fwd.cu:208 (64,0,0)/(0,0,0) " + flashFwdMangled + " | Divergent thread(s) in warp",
	}},
	// xmlrun_<tool>_<case>.txt: what the XML runs printed, the same records and counts as the
	// cs_ runs (the same greps give the same numbers; --xml does not silence the text).
	{file: "sanitizer-kernels-h200/xmlrun_initcheck_clean.txt", want: []string{
		"initcheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-kernels-h200/xmlrun_initcheck_uninit.txt", want: []string{
		"initcheck text summary errors=16 warnings=0 not_printed=0 exit=0 launch",
		"  uninitialized-read error x16 flash_fwd.cu:184 (0,0,0)/(0,1,0) " + flashFwdText + " | __global__ read of size 2 bytes",
	}},
	{file: "sanitizer-kernels-h200/xmlrun_memcheck_clean.txt", want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-kernels-h200/xmlrun_memcheck_crash.txt", want: []string{
		"memcheck text summary errors=0 warnings=0 not_printed=0 exit=6",
		"  problem: the target application failed (compute-sanitizer: \"Target application returned an error\"); exit 6",
	}},
	{file: "sanitizer-kernels-h200/xmlrun_memcheck_oob.txt", want: []string{
		"memcheck text summary errors=12 warnings=0 not_printed=0 exit=1 launch",
		"  out-of-bounds error x2 flash_fwd.cu:200 (126,0,0)/(7,7,0) " + flashFwdText + " | __global__ write of size 2 bytes",
		"  api-error error x1 - - - | cudaDeviceSynchronize returned cudaErrorLaunchFailure",
		"  api-error error x4 - - - | cudaFree returned cudaErrorLaunchFailure",
		"  api-error error x1 - - - | cudaPeekAtLastError returned cudaErrorLaunchFailure",
		"  leak error x1 - - - | 524288 bytes allocated at (anonymous namespace)::Attention::sanitize+0x18e66",
		"  leak error x1 - - - | 524288 bytes allocated at (anonymous namespace)::Attention::sanitize+0x18eae",
		"  leak error x1 - - - | 524288 bytes allocated at (anonymous namespace)::Attention::sanitize+0x18ef3",
		"  leak error x1 - - - | 524288 bytes allocated at (anonymous namespace)::Attention::sanitize+0x18f32",
		"  problem: the target application failed (compute-sanitizer: \"Target application returned an error\"); exit 1",
	}},
	{file: "sanitizer-kernels-h200/xmlrun_racecheck_clean.txt", want: []string{
		"racecheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-kernels-h200/xmlrun_racecheck_race.txt", want: []string{
		"racecheck text summary errors=1 warnings=0 not_printed=0 exit=0 launch",
		"  race-raw error x1 h16384 flash_fwd.cu:177 - " + flashFwdText + " | Write access at flash_fwd.cu:177 and Read access at flash_fwd.cu:178 [16384 hazards]",
	}},
	{file: "sanitizer-kernels-h200/xmlrun_synccheck_clean.txt", want: []string{
		"synccheck text summary errors=0 warnings=0 not_printed=0 exit=0",
	}},
	{file: "sanitizer-kernels-h200/xmlrun_synccheck_divergent.txt", want: []string{
		"synccheck text summary errors=64 warnings=0 not_printed=0 exit=1 launch",
		"  barrier-divergence error x64 flash_fwd.cu:208 (64,0,0)/(0,0,0) " + flashFwdText + " | Divergent thread(s) in warp",
		"  problem: the target application failed (compute-sanitizer: \"Target application returned an error\"); exit 1",
	}},
}

// The kernel of testdata/sanitizer-kernels-h200 as the text prints it and as the XML's
// device stub names it.
const (
	flashFwdText    = "void kg::flash_fwd<(int)64, (int)64, (bool)0>(const __half *, const __half *, const __half *, __half *, int, float)"
	flashFwdMangled = "_ZN2kg9flash_fwdILi64ELi64ELb0EEEvPK6__halfS3_S3_PS1_if"
)

// parseCapture parses a capture as text or XML by its extension.
func parseCapture(t testing.TB, name, tool string, data []byte) ([]Run, error) {
	t.Helper()
	if strings.HasSuffix(name, ".xml") {
		r, err := ParseXMLWith(bytes.NewReader(data), filepath.Base(name), ParseOptions{Tool: tool})
		if err != nil {
			return nil, err
		}
		return []Run{r}, nil
	}
	return ParseTextWith(bytes.NewReader(data), filepath.Base(name), ParseOptions{Tool: tool})
}

func TestRealCaptures(t *testing.T) {
	for _, tc := range realCaptures {
		t.Run(tc.file, func(t *testing.T) {
			tool := tc.tool
			if tool == "" {
				tool = toolFromName(tc.file)
			}
			runs, err := parseCapture(t, tc.file, tool, readCapture(t, tc.file))
			if tc.err != "" {
				if !errors.Is(err, ErrNotSanitizerLog) || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), filepath.Base(tc.file)) {
					t.Fatalf("error = %v, want ErrNotSanitizerLog naming the file and %q", err, tc.err)
				}
				if runs != nil {
					t.Errorf("runs with the error: %v", runs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := matchLines(renderAll(runs), tc.want); err != nil {
				t.Error(err)
			}
			for _, r := range runs {
				if err := consistent(r); err != nil {
					t.Error(err)
				}
				if r.Records == nil {
					t.Error("nil Records (the JSON contract has a list)")
				}
			}
		})
	}
}

// TestRealCapturesWithoutHint parses every capture without the tool its name gives: the
// result is the same, except that a run whose output cannot show its tool has none; the
// tool read from the output always agrees with the file name.
func TestRealCapturesWithoutHint(t *testing.T) {
	for _, tc := range realCaptures {
		if tc.err != "" {
			continue
		}
		hint := cmpOr(tc.tool, toolFromName(tc.file))
		data := readCapture(t, tc.file)
		with, err1 := parseCapture(t, tc.file, hint, data)
		without, err2 := parseCapture(t, tc.file, "", data)
		if err1 != nil || err2 != nil || len(with) != len(without) {
			t.Errorf("%s: %v / %v / %d vs %d runs", tc.file, err1, err2, len(with), len(without))
			continue
		}
		for i := range with {
			w, o := with[i], without[i]
			if o.Tool != "" && o.Tool != w.Tool {
				t.Errorf("%s: read tool %q, the file name says %q", tc.file, o.Tool, w.Tool)
			}
			o.Tool = w.Tool
			for j := range o.Records {
				o.Records[j].Tool = w.Tool
			}
			if err := matchLines(render(o), render(w)); err != nil {
				t.Errorf("%s without the hint: %v", tc.file, err)
			}
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// captureFolders are the folders whose every file must have a row in realCaptures, with
// the files that are not sanitizer output (scripts, the harness's own results) and the
// least number of files with a row (a folder that lost its captures fails).
var captureFolders = []struct {
	dir    string
	ignore []string
	min    int
}{
	{"sanitizer-h200-cuda13.0", nil, 50},
	{"probe/h200-cuda13.0", nil, 50},
	// The captures of the planted defects in kernels/ (capture.sh there). harness_* are the
	// harness's own check/bench/sanitize output; kg_<case>.json are kernel-gate result files
	// (kernel-gate/result/v1), not sanitizer output; kg_<case>/ directories hold the artifacts
	// that `kernel-gate sanitize` kept, read by TestKeptArtifacts (keptArtifactCases).
	{"sanitizer-kernels-h200", []string{"capture.sh", "README*", "harness_*", "build_*", "kg_*.json"}, 33},
}

func TestRealCapturesCovered(t *testing.T) {
	have := map[string]bool{}
	for _, tc := range realCaptures {
		if have[tc.file] {
			t.Errorf("%s: two rows", tc.file)
		}
		have[tc.file] = true
	}
	kept := map[string]bool{}
	for _, c := range keptArtifactCases {
		kept[c.dir] = true
	}
	for _, f := range captureFolders {
		entries, err := os.ReadDir(capturePath(f.dir))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
	entry:
		for _, e := range entries {
			name := f.dir + "/" + e.Name()
			if e.IsDir() {
				if !kept[name] {
					t.Errorf("%s/ has no case in keptArtifactCases: add one with the problem it must fail on", name)
				}
				continue
			}
			for _, pat := range f.ignore {
				if ok, _ := filepath.Match(pat, e.Name()); ok {
					continue entry
				}
			}
			n++
			if !have[name] {
				t.Errorf("%s has no row in realCaptures: add one with what it must parse to", name)
			}
		}
		if n < f.min {
			t.Errorf("%s: only %d files, want at least %d", f.dir, n, f.min)
		}
	}
}

// xmlPairs are the XML record files and the text their runs printed.
func xmlPairs(t *testing.T) [][2]string {
	var pairs [][2]string
	for _, tc := range realCaptures {
		base := filepath.Base(tc.file)
		dir := filepath.Dir(tc.file)
		if !strings.HasSuffix(base, ".xml") || tc.err != "" {
			continue
		}
		text := strings.TrimSuffix(base, ".xml") + ".txt"
		if strings.HasPrefix(base, "rt_") {
			text = strings.TrimSuffix(base, ".xml") + ".log"
		}
		if rest, ok := strings.CutPrefix(base, "xml_"); ok {
			text = "xmlrun_" + strings.TrimSuffix(rest, ".xml") + ".txt"
		}
		if _, err := os.Stat(capturePath(dir + "/" + text)); err != nil {
			t.Errorf("%s: no text output %s beside it", tc.file, text)
			continue
		}
		pairs = append(pairs, [2]string{tc.file, dir + "/" + text})
	}
	return pairs
}

// siteKey is what the XML and the text of one run must agree on per site. Names compare
// without template arguments and parameters: the text prints "void tmpl_oob<float, (int)3>
// (T1 *, int)" where the XML's stub demangles to tmpl_oob<float, 3>.
func siteKey(r Record) string {
	n := displayName(r.Kernel)
	if i := strings.IndexByte(n, '<'); i > 0 {
		n = n[:i]
	}
	return strings.Join([]string{r.Kind, r.Severity, n, baseFile(r.File), itoa(r.Line), r.Thread, r.Block, r.Access, itoa(r.Count), itoa(r.Hazards)}, "|")
}

// rawSiteKey is siteKey with the kernel's bare name, without its namespace: a racecheck
// analysis record of the XML has no host stack and names the kernel by its bare <func>
// ("flash_fwd" for kg::flash_fwd<64, 64, false>). Combine puts the text's name back
// (mergeNames), so the combined records must agree with siteKey itself.
func rawSiteKey(r Record) string {
	r.Kernel = bareName(r.Kernel)
	return siteKey(r)
}

// siteCounts renders records by key, with the counts and hazards of records whose keys are
// equal added up, sorted.
func siteCounts(recs []Record, key func(Record) string) []string {
	type n struct{ count, hazards int }
	m := map[string]n{}
	for _, r := range recs {
		v := m[key(r)]
		m[key(r)] = n{v.count + r.Count, v.hazards + r.Hazards}
	}
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s|x%d|h%d", k, v.count, v.hazards))
	}
	slices.Sort(out)
	return out
}

// withoutAllocSite is rawSiteKey without the count, and without the allocation site of a
// leak or an unused allocation ("524288 bytes allocated at main+0xbda8" -> "524288 bytes").
func withoutAllocSite(r Record) string {
	if r.Kind == KindLeak || r.Kind == KindUnusedMemory {
		if i := strings.Index(r.Access, " at "); i >= 0 {
			r.Access = r.Access[:i]
		}
	}
	r.Kernel = bareName(r.Kernel)
	r.Count, r.Hazards = 0, 0
	return siteKey(r)
}

// xmlKnownDiffs are the XML/text pairs whose sites differ for a reason in the XML itself,
// with the reason. Their sites must agree without the allocation site (withoutAllocSite)
// and must differ with it, so that an entry goes once the parser reads the difference away.
var xmlKnownDiffs = map[string]string{
	// The allocating frame of each leak, "(anonymous namespace)::Attention::sanitize() [0x18e66]"
	// in the text, is a <frame> with a <pc> and no <func> in the XML; the XML's site is the
	// next named frame, main+0xbda8, the same for the four leaks.
	"sanitizer-kernels-h200/xml_memcheck_oob.xml": "a leak's allocating frame has no <func> in the XML: the four leak sites read as one, main+0xbda8",
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestXMLMatchesText checks that the XML record file and the text output of the same run
// give the same sites and counts, and that Combine takes the XML's records without a
// Problem and with the text's kernel names.
func TestXMLMatchesText(t *testing.T) {
	pairs := xmlPairs(t)
	if len(pairs) < 30 {
		t.Fatalf("only %d XML/text pairs", len(pairs))
	}
	seen := map[string]bool{}
	for _, p := range pairs {
		t.Run(p[0], func(t *testing.T) {
			tool := toolFromName(p[0])
			xr, err := parseCapture(t, p[0], tool, readCapture(t, p[0]))
			if err != nil {
				t.Fatal(err)
			}
			tr, err := parseCapture(t, p[1], tool, readCapture(t, p[1]))
			if err != nil || len(tr) != 1 {
				t.Fatalf("%s: %v, %d runs", p[1], err, len(tr))
			}
			x, txt := xr[0], tr[0]
			c := Combine(x, txt)
			hazard := x.RacecheckReport == "hazard" || x.RacecheckReport == "all"
			xs, ts, cs := siteCounts(x.Records, rawSiteKey), siteCounts(txt.Records, rawSiteKey), siteCounts(c.Records, siteKey)
			strict := siteCounts(txt.Records, siteKey)
			if reason, known := xmlKnownDiffs[p[0]]; known {
				seen[p[0]] = true
				if slices.Equal(xs, ts) {
					t.Errorf("the sites agree: remove the xmlKnownDiffs entry (%s)", reason)
				}
				xs, ts = siteCounts(x.Records, withoutAllocSite), siteCounts(txt.Records, withoutAllocSite)
				cs, strict = siteCounts(c.Records, withoutAllocSite), ts
			}
			if !hazard && !slices.Equal(xs, ts) {
				t.Errorf("sites differ\n xml: %q\ntext: %q", xs, ts)
			}
			if !slices.Equal(cs, strict) {
				t.Errorf("combined sites differ from the text's\ncombined: %q\n    text: %q", cs, strict)
			}
			if x.Printed() != txt.Printed() {
				t.Errorf("xml printed %d, text %d", x.Printed(), txt.Printed())
			}
			if x.Tool != "" && x.Tool != txt.Tool {
				t.Errorf("tools %q and %q", x.Tool, txt.Tool)
			}
			if len(c.Problems) != len(txt.Problems) {
				t.Errorf("Combine added problems: %q", c.Problems)
			}
			wantSource := SourceXML
			if hazard {
				wantSource = SourceText // hazard XML has no levels
			}
			if c.Source != wantSource || c.Printed() != txt.Printed() || c.Errors != txt.Errors || c.NotPrinted != txt.NotPrinted {
				t.Errorf("Combine = source %s printed %d errors %d not printed %d", c.Source, c.Printed(), c.Errors, c.NotPrinted)
			}
			if err := consistent(c); err != nil {
				t.Error(err)
			}
		})
	}
	for f := range xmlKnownDiffs {
		if !seen[f] {
			t.Errorf("xmlKnownDiffs names %s, which is no XML/text pair", f)
		}
	}
}
