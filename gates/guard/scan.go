package guard

import (
	"bytes"
	"cmp"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Finding is one dangerous command.
type Finding struct {
	Path string `json:"path"`
	// Line and Column (1-based; the column counts bytes) are where the offending command
	// starts: inside a nested script (bash -c '...', a here-document), the command in it;
	// for a call of a function that its arguments make dangerous, the call. EndLine is the
	// line it ends on.
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	EndLine int    `json:"end_line"`
	Rule    string `json:"rule"`
	// Command is the whole command as written, on one line: for a nested script the outer
	// command that runs it (`ssh host 'sudo shutdown -h now'`); a here-document's command
	// is added after " … ".
	Command string `json:"command"`
	// Via is how the command was reached: "sudo → bash -c → shutdown", "function stop_vm → gcloud".
	Via         string `json:"via,omitempty"`
	What        string `json:"what"`
	Why         string `json:"why"`
	Allowed     bool   `json:"allowed"`
	AllowReason string `json:"allow_reason,omitempty"`
	// Severity is what Evaluate made of it: "error" (refused), "warning" (a rule that
	// warns, see Config.Warn) or "notice" (allowed).
	Severity string `json:"severity,omitempty"`
}

// Warning is something the guard could not check: a script that does not parse, an allow
// comment without a reason, or (Unjudged) a file or part of one the guard could not judge
// at all: too large, binary, nested too deep, a link out of the repository, a step in a
// shell it does not read. Line is 0 when it is about the whole file.
//
// An unjudged warning fails the gate (Evaluate makes it an error) unless the config says
// `guard.unjudged: warn` or the path matches `guard.skip`: a file the guard could not judge
// must not pass as if it had been judged safe.
type Warning struct {
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Message  string `json:"message"`
	Unjudged bool   `json:"unjudged,omitempty"`
	// Skipped is an unjudged file that the config's guard.skip lets pass with a warning.
	Skipped bool `json:"skipped,omitempty"`
}

// maxFileSize is the largest file the guard reads.
const maxFileSize = 2 << 20

// hit is a finding before allow comments and formatting.
type hit struct {
	rule  *Rule
	at    span // where it is reported
	inner span // the offending command itself
	outer span // the outermost command around it
	via   []string
}

// fileCtx is one file being scanned.
type fileCtx struct {
	path       string
	content    string // as read
	text       string // as analysed: CR before LF and a BOM blanked
	lines      lineTable
	rules      *ruleSet
	writeRules []*Rule
	callRules  []*Rule
	knownIDs   map[string]bool
	hits       []hit
	warnings   []Warning
	warned     map[string]bool
	invalid    []int // offsets of the bytes that are not UTF-8 (unknownByte in text)
	refs       []scriptRef
	refSeen    map[scriptRef]bool
	// scanned counts the bytes of text the front-ends went over: each text parsed as shell
	// or read as Python, each make text expanded or searched for $(shell ...). It is the
	// work a file costs, which its nesting must not multiply beyond the bounds (depth.go):
	// TestDeepNesting checks it against the file's size.
	scanned int
}

// scriptRef is a file of the repository that the file runs by its name (`bash ci/teardown`,
// `./tools/reap`, `source env.sh`, `python3 tools/stop.py`): ScanTree and ScanDiff judge it
// as what runs it reads it, whatever its name says.
type scriptRef struct {
	path string
	kind Kind // KindShell, KindPython, or KindNone: by its shebang (none: sh reads it)
	line int
}

// ruleSet is a config's active rules, sorted by the front-end that uses them and by
// program name. It is built once per scan and only read afterwards.
type ruleSet struct {
	byID       map[string]*Rule   // the first pattern of each rule ID
	families   map[string][]*Rule // lifecycle family rules by program (see Rule.family)
	unresolved *Rule              // the vm-verb-unresolved pattern, unless disabled
	cmdByProg  map[string][]*Rule // rules whose Command is a plain name
	cmdGlob    []*Rule            // rules with a glob in Command
	writeRules []*Rule
	callRules  []*Rule
	knownIDs   map[string]bool
}

func newRuleSet(cfg Config) *ruleSet {
	rs := &ruleSet{cmdByProg: map[string][]*Rule{}, families: map[string][]*Rule{}, byID: map[string]*Rule{}, knownIDs: cfg.knownIDs()}
	rules := cfg.rules()
	for i := range rules {
		r := &rules[i]
		if rs.byID[r.ID] == nil {
			rs.byID[r.ID] = r
		}
		if r.unresolved {
			rs.unresolved = r
			continue
		}
		if r.family() {
			for _, c := range r.Command {
				rs.families[c] = append(rs.families[c], r)
			}
		}
		if r.isCommandRule() {
			plain := true
			for _, c := range r.Command {
				if strings.ContainsAny(c, "*?|") {
					plain = false
				}
			}
			if plain {
				for _, c := range r.Command {
					if !slices.Contains(rs.cmdByProg[c], r) {
						rs.cmdByProg[c] = append(rs.cmdByProg[c], r)
					}
				}
			} else {
				rs.cmdGlob = append(rs.cmdGlob, r)
			}
		}
		if r.isWriteRule() {
			rs.writeRules = append(rs.writeRules, r)
		}
		if r.isCallRule() {
			rs.callRules = append(rs.callRules, r)
		}
	}
	return rs
}

// commandRules are the rules that may match a program (by its base name).
func (rs *ruleSet) commandRules(prog string) []*Rule {
	if len(rs.cmdGlob) == 0 {
		return rs.cmdByProg[prog]
	}
	return append(slices.Clone(rs.cmdByProg[prog]), rs.cmdGlob...)
}

func newFileCtx(p string, content []byte, rs *ruleSet) *fileCtx {
	fc := &fileCtx{path: p, content: string(content), rules: rs, knownIDs: rs.knownIDs, writeRules: rs.writeRules,
		callRules: rs.callRules, warned: map[string]bool{}}
	t := []byte(fc.content)
	for i := 0; i+1 < len(t); i++ {
		if t[i] == '\r' && t[i+1] == '\n' {
			t[i] = ' '
		}
	}
	if bytes.HasPrefix(t, []byte("\xef\xbb\xbf")) {
		t[0], t[1], t[2] = ' ', ' ', ' '
	}
	// A byte that is not UTF-8 is a byte the guard cannot read: it stands for itself in
	// the shell (which runs on through it), but no parser takes it. It becomes an unknown
	// byte, so the words around it are judged and the word it is in matches no rule.
	if !utf8.Valid(t) {
		for i := 0; i < len(t); {
			r, n := utf8.DecodeRune(t[i:])
			if r == utf8.RuneError && n <= 1 {
				t[i] = unknownByte
				fc.invalid = append(fc.invalid, i)
				i++
				continue
			}
			i += n
		}
	}
	fc.text = string(t)
	fc.lines = newLineTable(fc.text)
	return fc
}

func (fc *fileCtx) line(off int) int {
	l, _ := fc.lines.pos(off)
	return l
}

func (fc *fileCtx) add(h hit) { fc.hits = append(fc.hits, h) }

// warn records a warning once; during a dry run (a) it records nothing.
func (fc *fileCtx) warn(a *analyzer, line int, msg string) { fc.warning(a, line, msg, false) }

// unjudged records that the file, from line on, could not be judged (see Warning).
func (fc *fileCtx) unjudged(a *analyzer, line int, msg string) { fc.warning(a, line, msg, true) }

func (fc *fileCtx) warning(a *analyzer, line int, msg string, unjudged bool) {
	if a != nil && a.collect != nil {
		return
	}
	line = min(max(line, 0), len(fc.lines.starts)) // yaml counts a lone CR as a line break
	key := fmt.Sprint(line, msg)
	if fc.warned[key] {
		return
	}
	fc.warned[key] = true
	fc.warnings = append(fc.warnings, Warning{Path: fc.path, Line: line, Message: msg, Unjudged: unjudged})
}

// allowRE reads `# kernel-gate: allow <rule-id>[,<rule-id>] <reason>`.
var allowRE = regexp.MustCompile(`#.*?kernel-gate:\s*allow\b[ \t]*([^\s]*)[ \t]*(.*)$`)

type allowComment struct {
	ids    []string
	reason string
}

// allows reads the allow comments of the file, warning about those that allow nothing.
func (fc *fileCtx) allows() map[int]allowComment {
	out := map[int]allowComment{}
	if !strings.Contains(fc.text, "kernel-gate:") {
		return out
	}
	for i := range fc.lines.starts {
		line := i + 1
		text := fc.text[fc.lines.lineStart(line):fc.lines.lineEnd(line)]
		if !strings.Contains(text, "kernel-gate:") {
			continue
		}
		m := allowRE.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		ids := strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' })
		reason := strings.TrimSpace(m[2])
		if len(ids) == 0 {
			fc.warn(nil, line, "kernel-gate allow comment names no rule: write `# kernel-gate: allow <rule-id> <reason>`; it allows nothing")
			continue
		}
		for _, id := range ids {
			if !fc.knownIDs[id] {
				fc.warn(nil, line, fmt.Sprintf("kernel-gate allow comment names unknown rule %q%s", id, suggestID(id, fc.knownIDs)))
			}
		}
		if reason == "" {
			fc.warn(nil, line, fmt.Sprintf("kernel-gate allow comment for %s has no reason, so it allows nothing: write `# kernel-gate: allow %s <why this is safe>`", m[1], m[1]))
			continue
		}
		out[line] = allowComment{ids: ids, reason: reason}
	}
	return out
}

// finish turns the hits into findings.
func (fc *fileCtx) finish() ([]Finding, []Warning) {
	allows := fc.allows()
	seen := map[hitKey]bool{}
	var out []Finding
	for _, h := range fc.hits {
		key := hitKey{h.at.start, h.rule.ID}
		if seen[key] {
			continue
		}
		seen[key] = true
		line, col := fc.lines.pos(h.at.start)
		endLine := line
		if h.at.end > h.at.start {
			endLine, _ = fc.lines.pos(h.at.end - 1)
		}
		f := Finding{Path: fc.path, Line: line, Column: col, EndLine: max(endLine, line), Rule: h.rule.ID,
			What: h.rule.What, Why: h.rule.Why}
		f.Command = fc.commandText(h)
		if len(h.via) > 1 {
			f.Via = strings.Join(h.via, " → ")
		}
		innerLine := fc.line(h.inner.start)
		outerLine := fc.line(h.outer.start)
		for _, l := range []int{line, line - 1, innerLine, innerLine - 1, outerLine, outerLine - 1} {
			if al, ok := allows[l]; ok && slices.Contains(al.ids, f.Rule) {
				f.Allowed, f.AllowReason = true, al.reason
				break
			}
		}
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), strings.Compare(a.Rule, b.Rule))
	})
	slices.SortStableFunc(fc.warnings, func(a, b Warning) int { return cmp.Compare(a.Line, b.Line) })
	return out, fc.warnings
}

func (fc *fileCtx) slice(s span) string {
	st, en := min(max(s.start, 0), len(fc.content)), min(max(s.end, 0), len(fc.content))
	if en < st {
		en = st
	}
	return fc.content[st:en]
}

// commandText is the outer command as written; a nested command that lies outside it (a
// here-document's) follows after " … ".
func (fc *fileCtx) commandText(h hit) string {
	outer := h.outer
	if outer.end <= outer.start {
		outer = h.at
	}
	text := oneLine(fc.slice(outer))
	if h.at == h.inner && (h.inner.start < outer.start || h.inner.end > outer.end) {
		text = oneLine(text + " … " + oneLine(fc.slice(h.inner)))
	}
	if text == "" {
		text = oneLine(fc.slice(h.inner))
	}
	return text
}

// ScanFile scans one file (path relative to the repository root) with the config's
// rules. Prose and files of no known kind give nothing; a file that is too large or
// binary, or that does not parse, gives a warning.
func ScanFile(path string, content []byte, cfg Config) ([]Finding, []Warning) {
	f, w, _ := scanFile(path, content, cfg)
	return f, w
}

// scanFile is ScanFile that also says how many bytes of text the scan went over
// (fileCtx.scanned).
func scanFile(path string, content []byte, cfg Config) ([]Finding, []Warning, int) {
	rel := filepath.ToSlash(path)
	if cfg.excluded(rel) {
		return nil, nil, 0
	}
	f, w, _, scanned := scanKindWork(rel, Classify(rel, headOf(content)), content, cfg.ruleSet())
	cfg.markSkipped(w)
	return f, w, scanned
}

func headOf(content []byte) []byte { return content[:min(len(content), 512)] }

func scanKind(p string, kind Kind, content []byte, rs *ruleSet) (findings []Finding, warnings []Warning) {
	findings, warnings, _ = scanKindRefs(p, kind, content, rs)
	return findings, warnings
}

// scanKindRefs is scanKind that also returns the files the file runs by their names.
func scanKindRefs(p string, kind Kind, content []byte, rs *ruleSet) (findings []Finding, warnings []Warning, refs []scriptRef) {
	findings, warnings, refs, _ = scanKindWork(p, kind, content, rs)
	return findings, warnings, refs
}

// scanKindWork is scanKindRefs that also returns how many bytes of text the scan went
// over (fileCtx.scanned).
func scanKindWork(p string, kind Kind, content []byte, rs *ruleSet) (findings []Finding, warnings []Warning, refs []scriptRef, scanned int) {
	switch {
	case kind == KindNone || kind == KindDoc:
		return nil, nil, nil, 0
	case len(content) > maxFileSize:
		return nil, []Warning{{Path: p, Unjudged: true, Message: fmt.Sprintf("not scanned: %d bytes is more than the %d the guard reads, so it cannot judge this %s", len(content), maxFileSize, kindName(kind))}}, nil, 0
	case bytes.IndexByte(content, 0) >= 0:
		return nil, []Warning{{Path: p, Unjudged: true, Message: fmt.Sprintf("not scanned: binary file (contains a NUL byte, first on line %d), named like a %s: the guard cannot judge it",
			fileLine(content, bytes.IndexByte(content, 0)), kindName(kind))}}, nil, 0
	}
	fc := newFileCtx(p, content, rs)
	defer func() {
		refs, scanned = fc.refs, fc.scanned
		if r := recover(); r != nil {
			findings, warnings = fc.finish()
			warnings = append(warnings, Warning{Path: p, Unjudged: true, Message: fmt.Sprintf("internal error while scanning (%v): the rest of the file was not analysed, so the guard cannot judge it; please report it", r)})
		}
	}()
	switch kind {
	case KindShell:
		scanShellFile(fc)
	case KindWorkflow, KindAction:
		scanWorkflow(fc, kind)
	case KindMakefile:
		scanMakefile(fc)
	case KindDockerfile:
		scanDockerfile(fc)
	case KindPython:
		scanPythonFile(fc)
	}
	findings, warnings = fc.finish()
	return findings, warnings, fc.refs, fc.scanned
}

func scanShellFile(fc *fileCtx) {
	a := newAnalyzer(fc)
	fr := &frame{src: fileSrc(fc.text), lang: langOf(shebangShell([]byte(fc.text[:min(len(fc.text), 256)])))}
	if strings.HasSuffix(fc.path, ".zsh") {
		fr.lang = langOf("zsh")
	}
	a.runShell(fr)
}

func scanPythonFile(fc *fileCtx) {
	a := newAnalyzer(fc)
	a.runPython(&frame{src: fileSrc(fc.text)})
}

// kindName names a kind of file in messages.
func kindName(k Kind) string {
	switch k {
	case KindShell:
		return "shell script"
	case KindWorkflow:
		return "workflow"
	case KindAction:
		return "composite action"
	case KindMakefile:
		return "Makefile"
	case KindDockerfile:
		return "Dockerfile"
	case KindPython:
		return "Python file"
	}
	return "file"
}

// fileLine is the 1-based line of byte offset o.
func fileLine(content []byte, o int) int {
	return bytes.Count(content[:min(max(o, 0), len(content))], []byte("\n")) + 1
}

// ref records a file the command runs by its name.
func (a *analyzer) ref(p string, kind Kind, cc *cmdCtx) {
	if p == "" || !known(p) || strings.HasPrefix(p, "-") || strings.ContainsAny(p, "\n*?[") {
		return
	}
	line := a.fc.line(cc.fr.src.fileOff(cc.start))
	if cc.fr.site != nil {
		line = a.fc.line(cc.fr.site.at.start)
	}
	r := scriptRef{path: p, kind: kind, line: line}
	if a.fc.refSeen == nil {
		a.fc.refSeen = map[scriptRef]bool{}
	}
	if !a.fc.refSeen[r] {
		a.fc.refSeen[r] = true
		a.fc.refs = append(a.fc.refs, r)
	}
}

// maskInvalid turns the bytes of s that stand for bytes of the file that are not UTF-8 back
// into unknown bytes.
func (fc *fileCtx) maskInvalid(s *src) *src {
	if len(fc.invalid) == 0 {
		return s
	}
	var b []byte
	for k, sg := range s.segs {
		if !sg.contiguous {
			continue
		}
		end := len(s.text)
		if k+1 < len(s.segs) {
			end = s.segs[k+1].off
		}
		lo, hi := sg.fileOff, sg.fileOff+end-sg.off
		i := sort.SearchInts(fc.invalid, lo)
		for ; i < len(fc.invalid) && fc.invalid[i] < hi; i++ {
			if b == nil {
				b = []byte(s.text)
			}
			b[sg.off+fc.invalid[i]-sg.fileOff] = unknownByte
		}
	}
	if b == nil {
		return s
	}
	return &src{text: string(b), segs: s.segs}
}
