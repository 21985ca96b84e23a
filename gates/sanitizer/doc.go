// Package sanitizer is kernel-gate's compute-sanitizer gate: it runs (RunTools) or reads
// (ParseText, ParseXML) NVIDIA compute-sanitizer's four tools — memcheck, racecheck,
// initcheck, synccheck — over a program that launches the kernels, and passes only when
// every run finished, found zero errors and launched a kernel, each error pinned to its
// kernel and source line.
//
// # Inputs
//
// ParseText reads the text output of compute-sanitizer (2020 to 2025.3) and of the older
// cuda-memcheck: "=========" lines, records separated by a bare "=========" line, a summary
// at the end ("ERROR SUMMARY: N errors", or racecheck's "RACECHECK SUMMARY: N hazards
// displayed (E errors, W warnings)"), mixed with whatever the program printed. The prefix
// is read wherever a line holds it, so a sanitizer line glued behind program output that
// lacked its newline ("progress 50%========= ERROR SUMMARY: 0 errors") still counts. A log
// pasted without the prefix (as in issues and READMEs) is read by the lines only the
// sanitizer prints: its header, summaries and the first lines of its records, whose
// indented detail lines follow and which a blank line ends; such a log parses to the same
// runs as the original. It streams: memory grows with the number of distinct error sites,
// not with the log, and at most MaxGroups sites are kept per run. ParseXML reads the
// record file of --xml --save, streaming its tokens with every element bounded
// (MaxXMLElement) and the file capped (MaxXMLSize, an error naming the file). Identical
// sites (same tool, kind, kernel, file, line, access and level) are grouped into one
// Record with a Count; the thread and block are the first occurrence's.
//
// # What the real output says (compute-sanitizer 2025.3.1, CUDA 13.0, H200)
//
// The captures under testdata/sanitizer-h200-cuda13.0, testdata/sanitizer-kernels-h200 and
// gates/sanitizer/testdata/probe/h200-cuda13.0 show:
//
//   - Exit status: 0 when nothing was found, and also with errors unless --error-exitcode
//     is given (then that code, leaks included); the target's own status when the target
//     failed but the sanitizer found nothing (3 for exit(3); 6 and 11, the bare signal
//     numbers, for abort() and SIGSEGV, next to "Error: process didn't terminate
//     successfully" and "Target application returned an error"); 255 when the program never
//     called CUDA ("Target application terminated before first instrumented API call", no
//     summary) or an option is bad (usage text, no header); 1 when the program does not
//     exist. So RunTools passes --error-exitcode 86 and reads any other status as a failed
//     target, and a clean summary from a failed target is a Problem.
//   - The summary counts what was not printed: "ERROR SUMMARY: 257 errors" with 100
//     records and "157 errors were not printed" (256 out-of-bounds writes plus the launch
//     failure that cudaDeviceSynchronize then reports). Leaks count as errors. Records past
//     the print limit are in neither the text nor the XML.
//   - A device error is followed by "Program hit cudaErrorLaunchFailure ... on CUDA API call
//     to cudaDeviceSynchronize" and by one such record per later API call, and the failed
//     frees then leak: one planted bug gives several kinds of records.
//   - Without --padding, an out-of-bounds write that lands in the next allocation is not
//     seen at all (ERROR SUMMARY: 0 errors). An address in no allocation (a null pointer) is
//     reported as out of bounds, not as an invalid address.
//   - The XML has no summary, no count of unprinted errors and nothing about kernel
//     launches: a clean run's file is an empty <ComputeSanitizerOutput/>, and
//     --save-session-details adds only the host, driver and command line. Records with a
//     host stack saved "at kernel launch time" prove a launch and name the kernel's device
//     stub ("__device_stub__Z9oob_writePfi", whence the mangled name); the <func> of a
//     record is the bare name ("oob_write", "tmpl_oob"; "flash_fwd" for kg::flash_fwd<64, 64,
//     false>) whatever --demangle says; racecheck analysis records have no host stack, so
//     the records of two instantiations of one template differ only in their <pc>. A host
//     frame in an anonymous namespace has a <pc> but no <func> (the text prints "(anonymous
//     namespace)::Attention::sanitize()"), so an allocation site read from the XML is the
//     next named frame. Racecheck hazard records (--racecheck-report hazard) carry no
//     <level>, so warp-level warnings cannot be told from errors there.
//   - Killing only the sanitizer of a hung run leaves its TreeLauncherSubreaper and the
//     target running on the GPU; they share the sanitizer's process group.
//
// # One finding per cause
//
// Evaluate reports a kernel's fault as the error and folds what follows from it into one
// finding under it (MetricAfterFault, "and 6 API errors and 4 leaks after it: the CUDA
// context was broken"): from the first API call that failed with a sticky error
// (cudaErrorLaunchFailure, an illegal address, ...) after the first device fault, every
// API error and leak of the run. Each keeps its row in the table. Racecheck analysis
// reports that differ only in their other sides are one record per hazard kind, kernel
// and first access, each other side listed once with its hazards summed (an unrolled
// store's 16 instructions at one line are one side). A leak allocated inside a CUDA
// library's handle or plan (its frames in libcublas, libcudnn, libcufft, ...) names the
// library, the call that created it and what frees it (cublasDestroy, ...).
//
// # Fail-closed
//
// A run proves little when its log has no summary (the target crashed, the run was killed,
// the log is cut), when the summary disagrees with the records, when the target failed,
// when the XML is cut or malformed, or when no kernel was launched. The first are
// Run.Problems, each an error finding; so are every number that does not parse (a count
// past any integer, misplaced commas: never read as 0), an XML element under the root
// other than <record> and <session> (it may hold a newer version's errors), text or
// content after the root, an element past its bound and more than MaxGroups distinct
// sites. A run that launched no kernel needs the caller's launch count, because neither
// output shows launches: Evaluate's launches argument (0 is an error, unknown a warning
// unless a record proves a launch). Input that is not sanitizer output at all
// returns an error wrapping ErrNotSanitizerLog.
package sanitizer
