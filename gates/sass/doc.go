// Package sass is kernel-gate's SASS gate: it reads the machine code that the CUDA tools
// print for a binary and checks, per kernel glob, that some instructions are present
// (require) and others absent (forbid). "flash_fwd must use tensor cores" becomes
// "require HMMA|HGMMA"; "no local-memory traffic in the hot loop" becomes "forbid LDL|STL".
//
// # Inputs
//
// Parse reads, as a stream, any of:
//
//   - cuobjdump --dump-sass (-sass) of an object, executable, library or fatbin: "code for
//     sm_XX" sections with "Function : NAME" headers; every instruction line carries its
//     encoding, older archs on a second, encoding-only line that is not an instruction;
//   - cuobjdump -sass of a .cubin (one arch, no fatbin headers);
//   - nvdisasm of a .cubin, with or without -g/-gi (line-info comments), -c (code only),
//     -hex or -plr: a header that names the arch (".target sm_90a" in CUDA 13; before,
//     `.headerflags @"... EF_CUDA_SM90 ..."`, with EF_CUDA_ACCELERATORS for the "a"
//     variant), then ".section .text.NAME" per function; data sections (.nv.info,
//     .debug_frame, ...) print ".byte"/".word" lines with addresses that are not
//     instructions and are not counted;
//   - several nvdisasm outputs concatenated (one per cubin of a binary, as kernel-gate run
//     keeps them): each header starts a cubin, whose functions take its arch and never the
//     one before's; a .headerflags with a flag the parser does not know names no arch,
//     rather than a guess;
//   - either of those filtered through grep (grep -n 'Function\|HMMA' keeps the "NN:"
//     prefix) or captured into a log: a "+ command" echo and an "exit=N" trailer are
//     skipped, CRLF line ends and ANSI colour escapes are removed, lines longer than 64 KiB
//     are cut to their first 64 KiB.
//
// A function is one "Function :" block of cuobjdump or one .text section of nvdisasm, so
// both tools give the same instruction count for the same cubin: the instructions of a
// subroutine that the compiler placed in a kernel's section (such as
// $__internal_0_$__cuda_sm20_rcp_rn_f32_slowpath) count for that kernel, as do the
// trailing "BRA self" and NOP padding. A grep-filtered dump yields the counts of the lines
// the filter kept, and no arch unless it kept the "code for" line (ParseOptions.Arch
// supplies one).
//
// The parser keeps, per function, a count per opcode and nothing per instruction, so its
// memory grows with the number of functions times distinct opcodes, not with input size.
//
// # Whole and cut dumps
//
// cuobjdump ends every function with a line of dots ("..........") and prints its
// .headerflags; nvdisasm names the label that ends each function in its .size
// (".size NAME,(.L_x_30 - NAME)"). A dump that shows any of these is whole, and then
// every function of that tool must reach its end and hold an instruction: a function cut
// short (a dump cut mid-function, one function's lines run into the next header) or empty
// fails Parse with ErrIncomplete and the line of the function, since a forbid rule would
// pass on the instructions the cut removed. So does an instruction outside any function
// (nvdisasm prints a code section under its name, and one a build renamed from .text.NAME
// starts no function): no rule could judge it, so a forbidden one would pass. A dump
// that shows none of the marks of a whole one is grep-filtered: its functions are marked
// Function.Filtered, require rules judge them, and forbid rules fail on them, since what
// the filter dropped cannot be ruled out.
//
// # Entry points
//
// nvdisasm says which functions are kernels (".other NAME,@"STO_CUDA_ENTRY ..."") and prints
// no .other line for a device function: a function it shows whole (with its .size) without
// one is no kernel; one of a grep-filtered dump is not known. The output of cuobjdump does
// not say; there, Function.EntryKnown is set only for functions that cannot be kernels:
// names that start with "$" or "__cuda_" or "__internal_" (compiler helpers), functions in
// the nvcuda namespace (the WMMA header, shown as functions of their own in -G builds), and
// templates whose mangled name gives a return type other than void.
// The config's top-level require skips functions known not to be kernels; its top-level
// forbid applies to every function, since a device function's code runs inside the kernels
// that call it (a forbidden instruction moved into a __noinline__ helper is still found).
// Rules with a glob apply to whatever function they match.
//
// # Patterns
//
// A pattern is a Go regular expression (package regexp syntax) matched against an
// instruction's opcode with its modifiers ("HMMA.16816.F32", "LDG.E.128.CONSTANT"), not
// against predicates or operands. It is anchored at the start of the opcode and must end
// at the end of the opcode or at a '.' boundary: the pattern P is compiled as
//
//	^(?:P)(?:\.|$)
//
// so "HMMA|HGMMA" matches HMMA.16816.F32 and HGMMA.64x128x16.F32, "LDL" matches LDL and
// LDL.64 but not LDLX, "HMMA.16816" matches HMMA.16816.F32 but not HMMA.1688.F32, and
// "LDG.E.128" matches LDG.E.128.CONSTANT but not LDG.E.64. Matching is case-sensitive;
// opcodes are upper case (write (?i) to change that).
//
// # Config
//
// The sass section of kernel-gate.yml:
//
//	sass:
//	  forbid: [LDL, STL]            # every kernel: no local memory
//	  kernels:
//	    - match: "flash_fwd*"       # kernelname glob
//	      arch: [sm_80, sm_90]      # optional; sm_90 also covers sm_90a
//	      require: ["HMMA|HGMMA"]
//	      reason: the attention kernels must run on tensor cores
//
// A rule whose glob matches no function (of its archs) in the dump fails the gate: a
// renamed kernel must not pass silently.
//
// # Binaries
//
// ParseListELF reads `cuobjdump --list-elf` ("ELF file    1: ext.1.sm_90.cubin"): which
// archs a binary holds SASS for, so that kernel-gate run can refuse one whose kernels would
// be JIT-compiled from PTX on the runner's GPU. Function.LocalAccess counts a function's
// LDL and STL instructions and their bytes: where a record has no spill figure
// (cuobjdump --dump-resource-usage), that is the figure ptxas would have printed, local
// arrays included.
//
// # Instruction mix
//
// Function.Mix folds a function's opcode counts into classes (ClassOf: global, shared and
// local loads and stores, tensor-core MMA, FP32/FP16/FP64 math, conversions, barriers,
// branches, integer, special functions, other), and the gate's data keeps them per
// function (FunctionData.Mix, with ClockReads), so that package explain can compare two
// saved results as it compares two dumps. ReadData reads the data back from a result
// nobody vouches for and checks every mix (CheckMix).
package sass
