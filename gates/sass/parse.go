package sass

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/kernelname"

	"github.com/kernel-gate/kernel-gate/internal/linescan"
)

// Format names the tool whose output a Dump was read from.
type Format string

const (
	FormatCuobjdump Format = "cuobjdump"
	FormatNvdisasm  Format = "nvdisasm"
)

// Dump is what Parse read: the functions in input order.
type Dump struct {
	// Format is the tool that printed the first function.
	Format    Format
	Functions []Function
}

// Function is one function of one arch and the opcodes of its instructions.
type Function struct {
	Name kernelname.Name
	// Arch is the SASS architecture ("sm_90a"); empty when the dump does not say and
	// ParseOptions.Arch was empty.
	Arch string
	// Entry reports whether the function is a kernel; it means something only when
	// EntryKnown is set (see the package documentation).
	Entry      bool
	EntryKnown bool
	// Instructions is the number of instruction lines; it equals the sum of Opcodes.
	Instructions int
	// Opcodes counts instructions per opcode with its modifiers ("HMMA.16816.F32"),
	// without predicate and operands.
	Opcodes map[string]int
	// Digest is the SHA-256 (hex) of the function's instruction and encoding lines as
	// printed, surrounding space trimmed, with what names the build rather than the code
	// taken out (digestText): two builds whose digests of a function agree have the same
	// SASS for it, so nothing measured of it can have changed.
	Digest string
	// Filtered is set when the dump shows only some lines of the function: a dump
	// filtered through grep keeps neither cuobjdump's "......" end line nor its
	// .headerflags, nor nvdisasm's .size, so its end cannot be checked and an instruction
	// missing from it may still be in the code. A require rule can be judged on it (what
	// is there is there); a forbid rule cannot, and fails.
	Filtered bool
	// Registers is the register count nvdisasm of CUDA 12 and older states for the
	// function (`.sectioninfo @"SHI_REGISTERS=N"`, from the cubin's section header: the
	// number ptxas -v reports); zero where the dump does not say.
	Registers int
	// ClockReads counts the instructions that read a clock (SR_CLOCKLO, SR_CLOCKHI,
	// SR_GLOBALTIMER*): a timed wait or in-kernel timing, which no opcode count shows.
	ClockReads int
}

// Count returns how many of f's instructions p matches.
func (f Function) Count(p Pattern) int {
	n := 0
	for op, c := range f.Opcodes {
		if p.Match(op) {
			n += c
		}
	}
	return n
}

// ParseOptions tunes Parse.
type ParseOptions struct {
	// Arch is the architecture of functions whose dump names none (a grep-filtered dump
	// without its "code for" line). The dump's own "code for" and ".target" lines win.
	Arch string
}

var (
	// ErrNoFunctions reports input in which no SASS function was found.
	ErrNoFunctions = errors.New("no SASS functions found")
	// ErrToolFailed reports input in which cuobjdump or nvdisasm printed a fatal error:
	// whatever dump precedes it may be incomplete.
	ErrToolFailed = errors.New("the tool reported an error")
	// ErrIncomplete reports a dump with a function that has no end (cuobjdump's
	// ".........." line, the label nvdisasm's .size names) or no instruction: the dump was
	// cut, and what it no longer shows cannot be judged.
	ErrIncomplete = errors.New("the SASS dump is incomplete")
)

const (
	// maxLine is the longest line Parse looks at; the rest of a longer line is skipped.
	maxLine = 64 << 10
	// maxOpcode is the longest token taken as an opcode.
	maxOpcode = 64
	// maxDiags is how many tool error lines are kept for the error message.
	maxDiags = 3
	// maxQuote is how much of an input line an error message quotes.
	maxQuote = 160
)

// Parse reads cuobjdump or nvdisasm SASS output (see the package documentation) line by
// line. It fails, wrapping ErrNoFunctions, when the input holds no function, wrapping
// ErrToolFailed, when the tool printed a fatal or error line, and, wrapping ErrIncomplete
// with the line of the function, when a function of a whole (not grep-filtered) dump has
// no end or no instruction, or with the line of the first, when instructions stand outside
// any function (with ErrNoFunctions too when no function holds any: NoSASS tells that from
// an input without SASS).
func Parse(r io.Reader, opts ParseOptions) (*Dump, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: no input", ErrNoFunctions)
	}
	p := &parser{opts: opts, cur: -1, intern: map[string]string{}, newline: [1]byte{'\n'}}
	if err := linescan.Each(r, maxLine, p.line); err != nil {
		return nil, fmt.Errorf("reading SASS input (line %d): %w", p.lines+1, err)
	}
	return p.finish()
}

// parser is Parse's state.
type parser struct {
	opts   ParseOptions
	format Format
	funcs  []Function
	cur    int    // index of the function that instructions go to, -1 outside one
	arch   string // from the latest "code for" / ".target" / "arch =" line, or nvdisasm's .headerflags
	// inHeader: the lines since the last other line are a cubin's header as nvdisasm prints
	// it (.target, .headerflags, .elftype): one cubin's, whose arch they say together.
	inHeader bool
	// intern shares one string per distinct opcode across functions, so counting an
	// instruction allocates nothing.
	intern  map[string]string
	scratch []byte
	// hashes[i] accumulates funcs[i].Digest.
	hashes []hash.Hash
	// labels numbers the current function's nvdisasm labels in the order they appear
	// (digestText); digestBuf is its scratch.
	labels    map[string]int
	digestBuf []byte
	newline   [1]byte
	// frames[i] is what says whether funcs[i] is whole.
	frames []frame

	lines   int // lines read
	content int // lines with content other than a command echo or exit status
	first   string
	diags   []string // fatal/error lines of the tool
	info    string   // first info/warning line of cuobjdump or nvdisasm
	orphans int      // instruction lines outside any function
	// orphanLine is the line of the first of them.
	orphanLine int
	sawPTX     bool
	sawELF     bool
	exitCode   string
}

// frame records where a function starts and whether its end was seen.
type frame struct {
	format Format
	line   int // of its header (cuobjdump) or first naming line (nvdisasm)
	// ended: cuobjdump's "......" line, or the label of nvdisasm's .size, came after its
	// last instruction.
	ended bool
	// framed: the dump shows the function whole: cuobjdump printed its .headerflags or
	// its end line, nvdisasm a .size with an end label.
	framed bool
	// endLabel is the label nvdisasm's latest .size in the function's section names as
	// the end ("(.L_x_30 - NAME)").
	endLabel string
}

func (p *parser) line(raw []byte) {
	p.lines++
	b := trimRightSpace(raw)
	if bytes.IndexByte(b, 0x1b) >= 0 {
		p.scratch = linescan.StripANSI(p.scratch[:0], b)
		b = p.scratch
	}
	b = stripGrepPrefix(b)
	t := trimSpace(b)
	if len(t) == 0 {
		return
	}
	if p.inHeader && !isDirective(t, ".headerflags") && !isDirective(t, ".target") && !isDirective(t, ".elftype") {
		p.inHeader = false
	}
	switch {
	case hasPrefix(t, "/*"):
		p.content++
		p.note(t)
		p.instruction(t)
		if p.cur >= 0 {
			h := p.hashes[p.cur]
			h.Write(p.digestText(t))
			h.Write(p.newline[:])
		}
		return
	case hasPrefix(t, "+ "):
		return // the capture's echo of the command
	case hasPrefix(t, "exit="):
		if _, err := strconv.Atoi(string(t[5:])); err == nil {
			p.exitCode = string(t[5:])
			return
		}
	}
	p.content++
	p.note(t)
	switch {
	case isEndLine(t):
		if p.cur >= 0 && p.frames[p.cur].format == FormatCuobjdump {
			p.frames[p.cur].ended, p.frames[p.cur].framed = true, true
		}
	case isDirective(t, ".headerflags"):
		if p.cur >= 0 && p.frames[p.cur].format == FormatCuobjdump {
			p.frames[p.cur].framed = true
			break
		}
		// Outside a cuobjdump function: the header of a cubin that nvdisasm printed.
		p.cubinHeader(headerFlagsArch(t[len(".headerflags"):]))
	case isDirective(t, ".size") && p.cur >= 0:
		p.size(t[len(".size"):])
	case t[len(t)-1] == ':' && p.cur >= 0 && p.frames[p.cur].endLabel != "" && string(t[:len(t)-1]) == p.frames[p.cur].endLabel:
		p.frames[p.cur].ended = true
	case hasPrefix(t, "//"):
		p.comment(t)
	case hasPrefix(t, "Function"):
		p.cuobjdumpHeader(t)
	case hasPrefix(t, "code for "):
		p.cur = -1
		p.setArch(t[len("code for "):])
	case isDirective(t, ".target"):
		if p.cur >= 0 && p.frames[p.cur].format == FormatCuobjdump {
			p.setArch(t[len(".target"):])
			break
		}
		p.cubinHeader(archField(t[len(".target"):]))
	case hasPrefix(t, "arch = "):
		p.setArch(t[len("arch = "):])
	case hasPrefix(t, "Fatbin "):
		p.arch = ""
		p.cur = -1
		p.sawPTX = p.sawPTX || hasPrefix(t, "Fatbin ptx")
		p.sawELF = p.sawELF || hasPrefix(t, "Fatbin elf")
	case isDirective(t, ".sectioninfo"):
		p.sectionInfo(t[len(".sectioninfo"):])
	case isDirective(t, ".section"):
		p.section(t[len(".section"):])
	case isDirective(t, ".other"):
		p.other(t[len(".other"):])
	case hasPrefix(t, ".text.") && t[len(t)-1] == ':':
		p.start(string(t[len(".text."):len(t)-1]), FormatNvdisasm)
	default:
		p.diagnostic(t)
	}
}

// isEndLine reports cuobjdump's end of a function: a line of dots ("..........").
func isEndLine(t []byte) bool {
	if len(t) < 3 {
		return false
	}
	for _, c := range t {
		if c != '.' {
			return false
		}
	}
	return true
}

// size handles nvdisasm's ".size NAME,(.L_x_30 - NAME)" in a text section: the label
// after the last instruction of NAME. A section's later .size (a subroutine placed in it)
// moves its end to that one's label.
func (p *parser) size(rest []byte) {
	name, expr, ok := bytes.Cut(trimSpace(rest), []byte(","))
	if !ok {
		return
	}
	expr = trimSpace(expr)
	if len(expr) < 2 || expr[0] != '(' || expr[len(expr)-1] != ')' {
		return // a plain byte count names no label
	}
	label, base, ok := bytes.Cut(expr[1:len(expr)-1], []byte(" - "))
	label, base = trimSpace(label), trimSpace(base)
	if !ok || len(label) == 0 || len(label) > maxOpcode*4 || string(base) != string(trimSpace(name)) {
		return
	}
	fr := &p.frames[p.cur]
	fr.endLabel, fr.ended, fr.framed = string(label), false, true
}

// note keeps the first line with content, for the error message of an input without
// functions.
func (p *parser) note(t []byte) {
	if p.first == "" {
		p.first = quote(t)
	}
}

// cuobjdumpHeader handles "Function : NAME".
func (p *parser) cuobjdumpHeader(t []byte) {
	rest := trimSpace(t[len("Function"):])
	if len(rest) == 0 || rest[0] != ':' {
		p.diagnostic(t)
		return
	}
	p.start(string(trimSpace(rest[1:])), FormatCuobjdump)
}

// comment handles nvdisasm's section banners ("//----- .text.NAME -----"); other
// comments (//## line info, //----- nvinfo) are skipped.
func (p *parser) comment(t []byte) {
	rest := bytes.TrimLeft(t, "/-")
	if len(rest) == len(t)-2 || len(rest) == 0 || (rest[0] != ' ' && rest[0] != '\t') {
		return // "//" followed by text, not a banner
	}
	f := fields(rest)
	if len(f) < 2 || !bytes.HasPrefix(f[1], []byte("---")) {
		return
	}
	p.enterSection(f[0])
}

// section handles ".section NAME,FLAGS,TYPE".
func (p *parser) section(rest []byte) {
	rest = trimSpace(rest)
	if i := bytes.IndexAny(rest, ", \t"); i >= 0 {
		rest = rest[:i]
	}
	p.enterSection(rest)
}

// maxRegisters is the most registers a thread can have on any architecture.
const maxRegisters = 255

// sectionInfo handles nvdisasm's `.sectioninfo @"SHI_REGISTERS=N"` (CUDA 12 and older)
// after a text section's .section line: the function's register count. Any other
// section information is skipped; it never starts a section.
func (p *parser) sectionInfo(rest []byte) {
	v, ok := bytes.CutPrefix(trimSpace(rest), []byte(`@"SHI_REGISTERS=`))
	if !ok || p.cur < 0 {
		return
	}
	v, ok = bytes.CutSuffix(v, []byte(`"`))
	n, err := strconv.Atoi(string(v))
	if !ok || err != nil || n <= 0 || n > maxRegisters {
		return // not a count a GPU could run: stated nothing
	}
	p.funcs[p.cur].Registers = n
}

func (p *parser) enterSection(name []byte) {
	if hasPrefix(name, ".text.") && len(name) > len(".text.") {
		p.start(string(name[len(".text."):]), FormatNvdisasm)
		return
	}
	p.cur = -1 // a data section, SYMBOLS, ...: its lines are not instructions
}

// other handles nvdisasm's ".other NAME,@"STO_CUDA_ENTRY STV_DEFAULT"", which says
// whether the function of the current section is a kernel.
func (p *parser) other(rest []byte) {
	rest = trimSpace(rest)
	name, flags, ok := bytes.Cut(rest, []byte(","))
	if !ok || p.cur < 0 {
		return
	}
	f := &p.funcs[p.cur]
	if string(trimSpace(name)) != f.Name.Mangled {
		return
	}
	f.EntryKnown = true
	f.Entry = bytes.Contains(flags, []byte("STO_CUDA_ENTRY"))
}

func (p *parser) setArch(rest []byte) {
	if a := archField(rest); a != "" {
		p.arch = a
	}
}

// archField is the arch a "code for", ".target" or "arch =" line names ("sm_90a"), "" when
// its first field is none.
func archField(rest []byte) string {
	f := fields(rest)
	if len(f) == 0 {
		return ""
	}
	a := bytes.TrimRight(f[0], ",")
	if !isArch(a) {
		return ""
	}
	return string(a)
}

// isArch reports whether a names a SASS arch: sm_, 2 to 4 digits, and a variant letter or
// none ("sm_89", "sm_90a", "sm_100f").
func isArch(a []byte) bool {
	n, ok := bytes.CutPrefix(a, []byte("sm_"))
	if !ok {
		return false
	}
	if l := len(n); l > 0 && n[l-1] >= 'a' && n[l-1] <= 'z' {
		n = n[:l-1]
	}
	if len(n) < 2 || len(n) > 4 {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// cubinHeader handles a line of the header nvdisasm prints before a cubin's sections
// (".target sm_90a" in CUDA 13, ".headerflags @"... EF_CUDA_SM90 ..."" before), with the
// arch it names ("" for none). Several nvdisasm outputs concatenated (one per cubin of a
// binary) each start with one: no function continues past it, and a cubin's functions
// never take the arch of the one before. Within one header the arch a line names wins
// over a line that names none.
func (p *parser) cubinHeader(arch string) {
	p.cur = -1
	if arch != "" || !p.inHeader {
		p.arch = arch
	}
	p.inHeader = true
}

// knownHeaderFlags are the e_flags names nvdisasm and cuobjdump print in .headerflags that
// say nothing of the arch, or say it in the EF_CUDA_SM token: any other name (a flag of a
// newer toolkit, such as a family variant) might change what the arch is, so headerFlagsArch
// then names none rather than guess.
var knownHeaderFlags = []string{"EF_CUDA_TEXMODE_UNIFIED", "EF_CUDA_TEXMODE_INDEPENDANT", "EF_CUDA_64BIT_ADDRESS", "EF_CUDA_SW_FLAG_V2"}

// headerFlagsArch is the arch nvdisasm's `.headerflags @"EF_CUDA_TEXMODE_UNIFIED
// EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"` names: sm_ and the
// number of its one EF_CUDA_SM token, with "a" when EF_CUDA_ACCELERATORS (the
// arch-specific features of sm_90a, sm_100a: the _V1 name is the older ELF layout's bit)
// is set. "" when the flags name no arch, more than one, or a flag this parser does not
// know (knownHeaderFlags): the functions then have no arch, and kernel-gate run, which
// knows each cubin's arch from its name, refuses the dump.
func headerFlagsArch(rest []byte) string {
	v := trimSpace(rest)
	if len(v) < 3 || v[0] != '@' || v[1] != '"' || v[len(v)-1] != '"' {
		return ""
	}
	var sm string
	accel := false
	for _, tok := range fields(v[2 : len(v)-1]) {
		switch s := string(tok); {
		case strings.HasPrefix(s, "EF_CUDA_VIRTUAL_SM(") || strings.HasPrefix(s, "EF_CUDA_PTX_SM("):
			// the PTX the cubin was made from, not its SASS's arch
		case s == "EF_CUDA_ACCELERATORS" || s == "EF_CUDA_ACCELERATORS_V1":
			accel = true
		case strings.HasPrefix(s, "EF_CUDA_SM"):
			n := s[len("EF_CUDA_SM"):]
			if sm != "" || len(n) < 2 || len(n) > 4 || strings.Trim(n, "0123456789") != "" {
				return ""
			}
			sm = n
		case slices.Contains(knownHeaderFlags, s):
		default:
			return ""
		}
	}
	if sm == "" {
		return ""
	}
	if accel {
		return "sm_" + sm + "a"
	}
	return "sm_" + sm
}

// start begins a function. nvdisasm names a function up to three times (banner,
// .section, .text label); a repeat before any instruction continues the same function.
func (p *parser) start(name string, format Format) {
	if name == "" || strings.ContainsAny(name, " \t") {
		return
	}
	arch := p.arch
	if arch == "" {
		arch = p.opts.Arch
	}
	if p.cur >= 0 {
		f := &p.funcs[p.cur]
		if f.Name.Mangled == name && f.Arch == arch && f.Instructions == 0 {
			return
		}
	}
	if p.format == "" {
		p.format = format
	}
	p.funcs = append(p.funcs, Function{
		Name:    kernelname.Parse(name),
		Arch:    arch,
		Opcodes: map[string]int{},
	})
	p.hashes = append(p.hashes, sha256.New())
	p.labels = map[string]int{}
	p.frames = append(p.frames, frame{format: format, line: p.lines})
	p.cur = len(p.funcs) - 1
}

// instruction handles a line that starts with "/*": "/*0160*/ @!P0 HMMA.16816.F32 R16, ...;"
// counts; "/* 0x000fe400078e00ff */" (an encoding) and "/*0000*/ .byte ..." (data) do not.
func (p *parser) instruction(t []byte) {
	end := bytes.Index(t[2:], []byte("*/"))
	if end <= 0 || !isHex(t[2:2+end]) {
		return
	}
	rest := trimSpace(t[2+end+2:])
	if len(rest) > 0 && rest[0] == '{' { // dual-issue group on Kepler/Maxwell
		rest = trimSpace(rest[1:])
	}
	if len(rest) > 0 && rest[0] == '@' { // predicate: @P0, @!PT, @UP1
		i := bytes.IndexAny(rest, " \t")
		if i < 0 {
			return
		}
		rest = trimSpace(rest[i:])
	}
	n := 0
	for n < len(rest) && !isOpcodeEnd(rest[n]) {
		n++
	}
	op := rest[:n]
	if !validOpcode(op) {
		return
	}
	if p.cur < 0 {
		if p.orphans++; p.orphans == 1 {
			p.orphanLine = p.lines
		}
		return
	}
	key, ok := p.intern[string(op)]
	if !ok {
		key = string(op)
		p.intern[key] = key
	}
	f := &p.funcs[p.cur]
	f.Opcodes[key]++
	f.Instructions++
	if bytes.Contains(rest[n:], []byte("SR_CLOCK")) || bytes.Contains(rest[n:], []byte("SR_GLOBALTIMER")) {
		f.ClockReads++
	}
	p.frames[p.cur].ended = false // an instruction after the end: the end was not the end
}

// diagnostic keeps the tool's own messages: "cuobjdump fatal : ...", "nvdisasm error :
// ...", "error: ...", "cuobjdump info : File 'x' does not contain device code".
func (p *parser) diagnostic(t []byte) {
	head, msg, ok := bytes.Cut(t, []byte(":"))
	if !ok || len(trimSpace(msg)) == 0 {
		return // not a message; "error:" alone is an nvdisasm label
	}
	f := fields(head)
	if len(f) == 0 || len(f) > 2 {
		return
	}
	switch strings.ToLower(string(f[len(f)-1])) {
	case "fatal", "error":
		if len(p.diags) < maxDiags {
			p.diags = append(p.diags, quote(t))
		}
	case "info", "warning":
		if tool := string(f[0]); p.info == "" && len(f) == 2 && (tool == "cuobjdump" || tool == "nvdisasm") {
			p.info = quote(t)
		}
	}
}

// NoSASS reports whether err, Parse's, says the input holds no SASS at all: no function,
// no tool error, no instruction (PTX only, a cubin whose output is its header alone).
// Instructions that no function holds are not that: they are code the dump does not
// attribute, which must fail whatever judges it.
func NoSASS(err error) bool {
	return errors.Is(err, ErrNoFunctions) && !errors.Is(err, ErrToolFailed) && !errors.Is(err, ErrIncomplete)
}

func (p *parser) finish() (*Dump, error) {
	if len(p.diags) > 0 {
		msg := strings.Join(p.diags, "; ")
		if len(p.funcs) == 0 {
			return nil, fmt.Errorf("%w: %w: %s", ErrNoFunctions, ErrToolFailed, msg)
		}
		return nil, fmt.Errorf("%w after %d functions, so the dump may be incomplete: %s", ErrToolFailed, len(p.funcs), msg)
	}
	if len(p.funcs) == 0 && p.orphans > 0 {
		// Code, but no function to judge it as: not "no SASS" (NoSASS), a dump that cannot
		// be judged.
		return nil, fmt.Errorf("%w: %w: %s", ErrNoFunctions, ErrIncomplete, p.nothingFound())
	}
	if len(p.funcs) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNoFunctions, p.nothingFound())
	}
	if p.orphans > 0 {
		// nvdisasm prints a code section whose name is not .text.NAME (a cubin a build
		// post-processed) without any line that starts a function: its instructions would
		// be judged as nobody's, a forbidden one among them.
		return nil, fmt.Errorf("line %d: %w: %d instruction lines outside any function (no \"Function :\" header or .text.NAME section before them): the dump shows code it does not say the function of, which cannot be judged",
			p.orphanLine, ErrIncomplete, p.orphans)
	}
	if err := p.checkFrames(); err != nil {
		return nil, err
	}
	for i := range p.funcs {
		f := &p.funcs[i]
		f.Digest = hex.EncodeToString(p.hashes[i].Sum(nil))
		// nvdisasm prints ".other NAME,@"STO_CUDA_ENTRY ..."" beside a kernel's .size, and no
		// .other for a device function (testdata/cuda11.8-rdc): a function shown whole with
		// none is no kernel.
		fr := p.frames[i]
		if !f.EntryKnown && (notKernel(f.Name) || fr.format == FormatNvdisasm && fr.framed && !f.Filtered) {
			f.EntryKnown, f.Entry = true, false
		}
	}
	return &Dump{Format: p.format, Functions: p.funcs}, nil
}

// checkFrames refuses a whole dump with a function that has no end or no instruction, and
// marks the functions of a filtered one (see Function.Filtered). A dump is whole when any
// of its functions shows the marks a filter drops: cuobjdump's .headerflags or end line,
// nvdisasm's .size. Then every function of that tool must end, and have an instruction:
// real cuobjdump and nvdisasm print neither an empty function nor one without its end.
func (p *parser) checkFrames() error {
	whole := map[Format]bool{}
	for _, fr := range p.frames {
		whole[fr.format] = whole[fr.format] || fr.framed
	}
	var first error
	bad := 0
	for i, fr := range p.frames {
		f := &p.funcs[i]
		if !whole[fr.format] {
			f.Filtered = true
			continue
		}
		var why string
		switch {
		case !fr.ended && fr.format == FormatCuobjdump:
			why = `has no end (cuobjdump's ".........." line)`
		case !fr.ended && fr.endLabel != "":
			why = fmt.Sprintf("has no end (the label %s that its .size names)", fr.endLabel)
		case !fr.ended:
			why = "has no .size and no end"
		case f.Instructions == 0:
			why = "has no instructions"
		default:
			continue
		}
		if bad++; bad == 1 {
			first = fmt.Errorf("line %d: %w: function %s (%s) %s: the dump is cut or garbled, and what it no longer shows cannot be judged",
				fr.line, ErrIncomplete, f.Name.Mangled, cmp.Or(f.Arch, "arch unknown"), why)
		}
	}
	if bad > 1 {
		return fmt.Errorf("%w (and %d more functions like it)", first, bad-1)
	}
	return first
}

// nothingFound says what the input held instead of functions.
func (p *parser) nothingFound() string {
	var msg string
	switch {
	case p.content == 0 && p.lines == 0:
		msg = "empty input"
	case p.content == 0:
		msg = fmt.Sprintf("no content in %d lines", p.lines)
	case p.orphans > 0:
		msg = fmt.Sprintf("%d instruction lines but no \"Function :\" header (cuobjdump) or .text section (nvdisasm) to attribute them to; first line %s", p.orphans, p.first)
	case p.info != "":
		msg = p.info
	case p.sawPTX && !p.sawELF:
		msg = "the input holds PTX but no SASS (compile with a real arch, e.g. -gencode arch=compute_90a,code=sm_90a)"
	case p.sawELF:
		msg = fmt.Sprintf("the input lists ELF code but no SASS function (was cuobjdump run with --dump-sass?); first line %s", p.first)
	default:
		msg = fmt.Sprintf("%d lines, none of cuobjdump --dump-sass or nvdisasm output; first line %s", p.lines, p.first)
	}
	if p.exitCode != "" && p.exitCode != "0" {
		msg += "; the command exited with status " + p.exitCode
	}
	return msg
}

// notKernel reports names that cannot be kernels (see the package documentation).
func notKernel(n kernelname.Name) bool {
	m := n.Mangled
	if strings.HasPrefix(m, "$") || strings.HasPrefix(m, "__cuda_") || strings.HasPrefix(m, "__internal_") {
		return true
	}
	s := n.Short
	if strings.HasPrefix(s, "_INTERNAL_") {
		if _, after, ok := strings.Cut(s, "::"); ok {
			s = after
		}
	}
	if strings.HasPrefix(s, "nvcuda::") {
		return true
	}
	// A function template's mangled name encodes its return type: kernels return void.
	// Demangled is "RET [_INTERNAL_x::]SHORT(PARAMS)".
	if i := strings.Index(n.Demangled, n.Short+"("); i > 0 && n.Short != "" {
		ret := n.Demangled[:i]
		if strings.HasSuffix(ret, "::") {
			ret = ret[:strings.LastIndexByte(ret, ' ')+1]
		}
		if ret = strings.TrimSpace(ret); ret != "" && ret != "void" {
			return true
		}
	}
	return false
}

func isOpcodeEnd(c byte) bool {
	return c == ' ' || c == '\t' || c == ';' || c == '}' || c == ','
}

// validOpcode accepts an upper-case mnemonic with modifiers: HMMA.16816.F32,
// HGMMA.64x128x16.F32, UTMALDG.2D.
func validOpcode(op []byte) bool {
	if len(op) == 0 || len(op) > maxOpcode || op[0] < 'A' || op[0] > 'Z' {
		return false
	}
	for _, c := range op {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '.', c == '_':
		default:
			return false
		}
	}
	return op[len(op)-1] != '.'
}

func isHex(b []byte) bool {
	if len(b) == 0 || len(b) > 16 {
		return false
	}
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

func trimRightSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return trimRightSpace(b)
}

// isDirective reports whether t is the directive name with its operands: ".section X" but
// not ".sectionflags X" (nvdisasm of CUDA 12 and older prints .sectionflags and
// .sectionentsize inside sections, text ones included).
func isDirective(t []byte, name string) bool {
	return hasPrefix(t, name) && (len(t) == len(name) || t[len(name)] == ' ' || t[len(name)] == '\t')
}

func hasPrefix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[:len(s)]) == s
}

// fields splits on spaces and tabs without allocating for the common short case.
func fields(b []byte) [][]byte {
	var out [][]byte
	for {
		b = trimSpace(b)
		if len(b) == 0 {
			return out
		}
		i := 0
		for i < len(b) && !isSpace(b[i]) {
			i++
		}
		out = append(out, b[:i])
		b = b[i:]
	}
}

// stripGrepPrefix drops the "NN:" or "NN-" that grep -n puts before a line (each of them,
// when grep ran twice). No line of cuobjdump or nvdisasm output starts with a digit.
func stripGrepPrefix(b []byte) []byte {
	for {
		i := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == 0 || i == len(b) || (b[i] != ':' && b[i] != '-') {
			return b
		}
		b = b[i+1:]
	}
}

// quote renders an input line for an error message: cut short, non-printable bytes
// escaped.
func quote(t []byte) string {
	cut := len(t) > maxQuote
	if cut {
		t = t[:maxQuote]
	}
	s := strconv.QuoteToASCII(string(t))
	if cut {
		s += "..."
	}
	return s
}

// digestText is an instruction or encoding line as a function's digest reads it. Two parts
// of nvdisasm's text name the build, not the code: the hash in the namespace nvcc gives an
// anonymous namespace or an internal-linkage symbol (_GLOBAL__N__0fd4f9d3_..., _INTERNAL_
// 29c3d034_...), which depends on the source file's path, so a function's own name in its
// RET.REL.NODEC differs between the base worktree and the checkout; and the .L_x_N labels,
// which nvdisasm numbers across a whole cubin, so a change to one function renumbers the
// next one's. The hash becomes "~" and each label its order of first use in the function;
// the encodings (-hex) still hold every relative offset. cuobjdump prints neither.
func (p *parser) digestText(t []byte) []byte {
	// Every name it rewrites holds a '_'; most lines (every encoding line) hold none.
	if bytes.IndexByte(t, '_') < 0 ||
		!bytes.Contains(t, []byte("_GLOBAL__N__")) && !bytes.Contains(t, []byte("_INTERNAL_")) && !bytes.Contains(t, []byte(".L_x_")) {
		return t
	}
	out := p.digestBuf[:0]
	for i := 0; i < len(t); {
		rest := t[i:]
		switch {
		case bytes.HasPrefix(rest, []byte("_GLOBAL__N__")) && hexRun(rest[12:]) == 8:
			out = append(out, "_GLOBAL__N__~"...)
			i += 12 + 8
		case bytes.HasPrefix(rest, []byte("_INTERNAL_")) && hexRun(rest[10:]) == 8:
			out = append(out, "_INTERNAL_~"...)
			i += 10 + 8
		case bytes.HasPrefix(rest, []byte(".L_x_")) && digitRun(rest[5:]) > 0:
			n := digitRun(rest[5:])
			name := string(rest[:5+n])
			k, ok := p.labels[name]
			if !ok {
				k = len(p.labels)
				p.labels[name] = k
			}
			out = append(out, ".L~"...)
			out = strconv.AppendInt(out, int64(k), 10)
			i += 5 + n
		default:
			out = append(out, t[i])
			i++
		}
	}
	p.digestBuf = out
	return out
}

// hexRun is how many lower-case hex digits b starts with; digitRun how many decimal digits.
func hexRun(b []byte) int {
	n := 0
	for n < len(b) && (b[n] >= '0' && b[n] <= '9' || b[n] >= 'a' && b[n] <= 'f') {
		n++
	}
	return n
}

func digitRun(b []byte) int {
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	return n
}
