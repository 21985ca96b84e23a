// Package ncu is kernel-gate's Nsight Compute gate: it profiles the harness with
// `ncu --csv --metrics ...` on the main shape, or reads such output saved elsewhere, and
// checks per kernel glob that metrics stay within thresholds. "Attention must be Tensor
// Core bound or not DRAM bound" becomes
//
//	any: [{metric: sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active, min: 50},
//	      {metric: dram__throughput.avg.pct_of_peak_sustained_elapsed, max: 50}]
//
// # Running
//
// Run starts ncu once on the harness command with KG_MODE=check, KG_ROUNDS=1, KG_SHAPES
// set to the configured shape and KG_OUT in the artifact directory. Args always passes
// --clock-control none: ncu would otherwise lock the GPU's clocks while it profiles, and
// kernel-gate never changes GPU settings. It also passes --print-units base (values do not
// change unit with magnitude), --print-kernel-base mangled (names are demangled the way the
// other gates demangle them, so one glob matches everywhere), the metrics the rules name,
// -k with the rules' function names when every glob names its function exactly
// (KernelFilter), and -c (ncu.launches: the most launches profiled in the run, over all
// kernels). A run past its timeout is killed with its whole process group. A missing ncu,
// a nonzero exit status, ==ERROR== lines, "No kernels were profiled.", a hang or output
// without a table fail the gate, naming the cause; none is ever a pass.
//
// # Inputs
//
// Parse reads ncu's --csv details page as a stream: one row per metric ("ID", "Process
// ID", ..., "Kernel Name", ..., "Section Name", "Metric Name", "Metric Unit", "Metric
// Value"), and, with --section, rule rows ("Rule Name", "Rule Type", "Rule
// Description", ...) whose metric fields are empty. Columns are found by name, so older
// layouts without "Block Size"/"Grid Size"/"Device"/"CC" read too. Lines that are not the
// table are skipped: ncu's ==PROF==/==WARNING== messages (==ERROR== lines and "No kernels
// were profiled." are kept) and the program's own output. A header repeated (one per
// profiled process) starts a new table. Values lose their thousands separators
// ("3,176,448" is 3176448); "n/a" is a flag, never a number. Rows may be shorter than the
// header (section mode ends metric rows after the value). CRLF line ends, quoted fields
// with commas and doubled quotes (C++ template names) are read as CSV. ncu's two other
// layouts read into the same launches and metrics: --page raw (one row per launch, one
// column per metric, a line of units under the header) and --print-summary per-kernel or
// per-gpu (one row per kernel and metric with its Minimum, Maximum and Average over the
// kernel's invocations: judged on the average, and the finding says so). A last row cut
// off mid-line, a malformed row or a table of any other layout is a problem that fails
// the gate. Memory grows with the rows kept, not with the
// program output around them; a line is cut at 256 KiB.
//
// # Judging
//
// A kernel is one name as ncu printed it (flash_fwd<64, 64, 0> and flash_fwd<64, 64, 1>
// are two). Each rule is judged for each profiled kernel its glob (kernelname.Glob, over
// the same forms as the other gates: without namespaces, with them, the signature, the
// mangled name) matches, on the median of each metric over that kernel's launches (min
// and max are shown beside it): every threshold of all must hold and, if any is given, at
// least one of any. min and max are inclusive. The value is compared as printed, in the
// unit printed, which every message shows; a threshold with unit: fails on a value printed
// in another. A metric missing from a launch, n/a or not a number fails its threshold.
// Every launch must carry every metric the config names (Run asks ncu for all of them on
// every launch): a launch that lacks one, as the last launch of an output cut on a row
// boundary does, fails the gate naming its kernel, launch and the metric, even where a
// rule would hold through another metric of an any or names another kernel. A
// rule that matches no profiled kernel fails the gate: a renamed kernel, or one the launch
// limit cut off, must not pass silently; a glob that still matches one of its kernels
// cannot tell that another was cut off, as nothing in the output says how many it should
// match. ncu's own rule results (section mode) are
// reported as notices.
package ncu
