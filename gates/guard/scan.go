package guard

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
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
}

// Warning is something the guard could not check: an unparsable file or script, a file
// too large or binary, a step in a shell it does not read, an allow comment without a
// reason. Line is 0 when it is about the whole file.
type Warning struct {
	Path    string `json:"path"`
	Line    int    `json:"line"`
	Message string `json:"message"`
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
}

// ruleSet is a config's active rules, sorted by the front-end that uses them and by
// program name. It is built once per scan and only read afterwards.
type ruleSet struct {
	cmdByProg  map[string][]*Rule // rules whose Command is a plain name
	cmdGlob    []*Rule            // rules with a glob in Command
	writeRules []*Rule
	callRules  []*Rule
	knownIDs   map[string]bool
}

func newRuleSet(cfg Config) *ruleSet {
	rs := &ruleSet{cmdByProg: map[string][]*Rule{}, knownIDs: cfg.knownIDs()}
	rules := cfg.rules()
	for i := range rules {
		r := &rules[i]
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
func (fc *fileCtx) warn(a *analyzer, line int, msg string) {
	if a != nil && a.collect != nil {
		return
	}
	line = min(max(line, 0), len(fc.lines.starts)) // yaml counts a lone CR as a line break
	key := fmt.Sprint(line, msg)
	if fc.warned[key] {
		return
	}
	fc.warned[key] = true
	fc.warnings = append(fc.warnings, Warning{Path: fc.path, Line: line, Message: msg})
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
	rel := filepath.ToSlash(path)
	if cfg.excluded(rel) {
		return nil, nil
	}
	return scanKind(rel, Classify(rel, headOf(content)), content, cfg.ruleSet())
}

func headOf(content []byte) []byte { return content[:min(len(content), 512)] }

func scanKind(p string, kind Kind, content []byte, rs *ruleSet) (findings []Finding, warnings []Warning) {
	switch {
	case kind == KindNone || kind == KindDoc:
		return nil, nil
	case len(content) > maxFileSize:
		return nil, []Warning{{Path: p, Message: fmt.Sprintf("not scanned: %d bytes is more than the %d the guard reads", len(content), maxFileSize)}}
	case bytes.IndexByte(content, 0) >= 0:
		return nil, []Warning{{Path: p, Message: "not scanned: binary file (contains a NUL byte)"}}
	}
	fc := newFileCtx(p, content, rs)
	defer func() {
		if r := recover(); r != nil {
			findings, warnings = fc.finish()
			warnings = append(warnings, Warning{Path: p, Message: fmt.Sprintf("internal error while scanning (%v): the rest of the file was not analysed; please report it", r)})
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
	return fc.finish()
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

// skipDir are directories ScanDir never enters.
func skipDir(name string) bool {
	switch name {
	case ".git", ".hg", ".svn", "node_modules", "vendor":
		return true
	}
	return false
}

// ScanDir scans every file under root (except .git, node_modules, vendor and the
// config's excludes) and reports paths relative to root.
func ScanDir(root string, cfg Config) ([]Finding, []Warning, error) {
	f, w, _, err := ScanTree(root, cfg)
	return f, w, err
}

// ScanTree is ScanDir that also says how many files it analysed (for Evaluate).
func ScanTree(root string, cfg Config) (findings []Finding, warnings []Warning, files int, err error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("guard: %w", err)
	}
	if !info.IsDir() {
		return nil, nil, 0, fmt.Errorf("guard: %s is not a directory", root)
	}
	type job struct{ abs, rel string }
	var jobs []job
	err = filepath.WalkDir(root, func(abs string, d fs.DirEntry, werr error) error {
		rel, rerr := filepath.Rel(root, abs)
		if rerr != nil {
			rel = abs
		}
		rel = filepath.ToSlash(rel)
		if werr != nil {
			if abs == root {
				return werr
			}
			warnings = append(warnings, Warning{Path: rel, Message: "not scanned: " + werr.Error()})
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if abs != root && (skipDir(d.Name()) || cfg.excluded(rel)) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || cfg.excluded(rel) {
			return nil
		}
		jobs = append(jobs, job{abs, rel})
		return nil
	})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("guard: walking %s: %w", root, err)
	}
	type out struct {
		f       []Finding
		w       []Warning
		scanned bool
	}
	results := make([]out, len(jobs))
	rs := cfg.ruleSet()
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range next {
				f, w, scanned := scanPath(jobs[i].abs, jobs[i].rel, rs)
				results[i] = out{f, w, scanned}
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, r := range results {
		findings = append(findings, r.f...)
		warnings = append(warnings, r.w...)
		if r.scanned {
			files++
		}
	}
	slices.SortStableFunc(findings, func(a, b Finding) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(warnings, func(a, b Warning) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line))
	})
	return findings, warnings, files, nil
}

// scanPath reads and scans one file, reading only its head when its name and head say
// it is not code.
func scanPath(abs, rel string, rs *ruleSet) ([]Finding, []Warning, bool) {
	kind := Classify(rel, nil)
	f, err := os.Open(abs)
	if err != nil {
		if kind == KindNone || kind == KindDoc {
			return nil, nil, false
		}
		return nil, []Warning{{Path: rel, Message: "not scanned: " + err.Error()}}, false
	}
	defer f.Close()
	if kind == KindNone {
		head := make([]byte, 256)
		n, _ := io.ReadFull(f, head)
		kind = Classify(rel, head[:n])
		if kind == KindNone || kind == KindDoc {
			return nil, nil, false
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, []Warning{{Path: rel, Message: "not scanned: " + err.Error()}}, false
		}
	}
	if kind == KindDoc {
		return nil, nil, false
	}
	content, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, []Warning{{Path: rel, Message: "not scanned: " + err.Error()}}, false
	}
	if len(content) > maxFileSize {
		return nil, []Warning{{Path: rel, Message: fmt.Sprintf("not scanned: larger than the %d bytes the guard reads", maxFileSize)}}, false
	}
	fs, ws := scanKind(rel, kind, content, rs)
	return fs, ws, bytes.IndexByte(content, 0) < 0 // a binary file is skipped with a warning
}
