package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// build is one nvcc build (targets with the same sources and flags share it) on both sides,
// or a harness target's own build (cmd, see commands.go).
type build struct {
	name    string // the first target's name
	sources []string
	flags   []string
	targets []string
	// cmd is set for a target built by the repository's own commands; nil for nvcc's build
	// of sources.
	cmd *commandBuild
	// per side: sideBase, sideHead
	ok [2]bool
	// failed says how an nvcc build failed (its step's failure text), "" when it did not.
	failed [2]string
	bin    [2]string // the harness binary (absolute)
	// log is the build's log, relative to the artifacts: its one nvcc command's, or, for
	// sources compiled apart, the link's, or the log of the compile that failed.
	log [2]string
	// compiled are the logs of the sources' compiles (compileApart), in the sources' order;
	// none for a build of one command.
	compiled [2][]string
	sass     [2]string
	dump     [2]*sass.Dump
	// sassProblem says why a side's SASS, dumped by its cubins, cannot be judged ("" when
	// it can): the sass gate fails on head's naming it (sassdump.go).
	sassProblem [2]string
}

const (
	sideBase = 0
	sideHead = 1
)

// metricDump is the metric of a finding about a SASS dump itself.
const metricDump = "dump"

func sideName(i int) string {
	if i == sideHead {
		return "head"
	}
	return "base"
}

// planBuilds groups the targets by sources and flags; a harness target is a build of its own.
func (p *pipeline) planBuilds() {
	for _, t := range p.targets {
		if t.HasCommands() {
			p.builds = append(p.builds, &build{name: t.Name, targets: []string{t.Name}, cmd: &commandBuild{target: t}})
			continue
		}
		flags := append(slices.Clone(p.set.Flags), t.Flags...)
		i := slices.IndexFunc(p.builds, func(b *build) bool {
			return b.cmd == nil && slices.Equal(b.sources, t.Sources) && slices.Equal(b.flags, flags)
		})
		if i < 0 {
			p.builds = append(p.builds, &build{name: t.Name, sources: t.Sources, flags: flags})
			i = len(p.builds) - 1
		}
		p.builds[i].targets = append(p.builds[i].targets, t.Name)
	}
}

func (p *pipeline) buildOf(target string) *build {
	for _, b := range p.builds {
		if slices.Contains(b.targets, target) {
			return b
		}
	}
	return nil
}

// nvcc is the compiler's path: the option, else the config's.
func (p *pipeline) nvcc() string {
	if p.o.Tools.NVCC != "" {
		return p.o.Tools.NVCC
	}
	return p.set.NVCC
}

// nvccArgs is one nvcc command of a build: inputs (sources, or the objects to link) made
// into out, with -c when compile; threads > 1 adds --threads (nvccThreads) unless the flags
// set it. A link of objects leaves out the flags' -x: "-x cu" would compile the objects.
func (p *pipeline) nvccArgs(b *build, out string, compile bool, threads int, inputs ...string) []string {
	args := []string{p.nvcc(), "-lineinfo", "-Xptxas", "-v"}
	flags := b.flags
	if !compile && len(b.sources) > 1 {
		flags = withoutLanguage(flags)
	}
	args = append(args, flags...)
	for _, a := range p.set.Arch {
		num := strings.TrimPrefix(a, "sm_")
		args = append(args, "-gencode", "arch=compute_"+num+",code=sm_"+num)
	}
	if threads > 1 && !slices.ContainsFunc(b.flags, isThreadsFlag) {
		args = append(args, "--threads", strconv.Itoa(threads))
	}
	if compile {
		args = append(args, "-c")
	}
	args = append(args, "-o", out)
	return append(args, inputs...)
}

// hostOnly says whether nvcc compiles src with the host compiler alone: a C or C++ file
// (.c, .cc, .cpp, .cxx, as nvcc tells them by their suffix) while the flags name no language
// (-x cu makes nvcc compile any file as CUDA). Such a compile has no device passes: its log
// holds no ptxas output, and --threads would do nothing.
func hostOnly(src string, flags []string) bool {
	if len(withoutLanguage(flags)) != len(flags) {
		return false
	}
	switch path.Ext(src) {
	case ".c", ".cc", ".cpp", ".cxx":
		return true
	}
	return false
}

// isThreadsFlag says whether an nvcc flag sets --threads (-t) itself.
func isThreadsFlag(f string) bool {
	return f == "-t" || f == "--threads" || strings.HasPrefix(f, "-t=") || strings.HasPrefix(f, "--threads=")
}

// withoutLanguage is flags without nvcc's -x (--x) and its language, which names what the
// inputs are: sources, never the objects a link reads.
func withoutLanguage(flags []string) []string {
	var out []string
	for i := 0; i < len(flags); i++ {
		switch f := flags[i]; {
		case f == "-x" || f == "--x":
			i++ // and its value
		case strings.HasPrefix(f, "-x=") || strings.HasPrefix(f, "--x="):
		default:
			out = append(out, f)
		}
	}
	return out
}

const nvccVersionFile = "nvcc-version.txt"

// buildAll asks nvcc its version, then builds base and head side by side (nvcc is
// single-threaded; a build command gets half the cores, concurrent.go), then dumps each
// build's SASS; a harness target's harness runs once on
// each side and its binaries are read.
func (p *pipeline) buildAll(ctx context.Context) error {
	version, err := p.x.run(ctx, proc{id: "nvcc-version", argv: []string{p.nvcc(), "--version"}, timeout: versionTimeout, log: nvccVersionFile})
	if err != nil {
		return err
	}
	if slices.ContainsFunc(p.builds, func(b *build) bool { return b.cmd != nil }) {
		p.refuseOldNVCC()
		if !p.replaying {
			// Each side's caches live here, outside the artifacts (which are uploaded), and go
			// when the run ends.
			work, err := p.workDir()
			if err != nil {
				return exitcode.CouldNotRunf("a directory for the harness targets' caches: %v", err)
			}
			p.work = work
		}
	}
	if err := p.restoreBase(ctx, version); err != nil {
		return err
	}
	sides := []int{sideHead}
	if p.hasBase() {
		sides = []int{sideBase, sideHead}
	}
	var ids []string
	for _, side := range sides {
		for _, b := range p.builds {
			if b.cmd == nil && len(b.sources) > 1 {
				for i := range b.sources {
					ids = append(ids, compileID(side, b, i))
				}
			}
			ids = append(ids, "build/"+sideName(side)+"/"+b.name)
		}
	}
	if len(ids) > 1 {
		p.x.atOnce(ids...)
		if p.hasBase() && !p.baseRestored() && slices.ContainsFunc(p.builds, func(b *build) bool { return b.cmd != nil }) {
			p.progress("base and head build at once: %d build jobs each (MAX_JOBS, CMAKE_BUILD_PARALLEL_LEVEL, unless set)", sideJobs())
		}
	}
	errs := make(chan error, len(sides)*len(p.builds))
	for _, side := range sides {
		for _, b := range p.builds {
			go func() { errs <- p.buildOne(ctx, b, side) }()
		}
	}
	var first error
	for range len(sides) * len(p.builds) {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return first
	}
	if err := p.dumpAll(ctx, sides); err != nil {
		return err
	}
	for _, b := range p.builds {
		if b.cmd != nil {
			if err := p.firstRunsAndBinaries(ctx, b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *pipeline) buildOne(ctx context.Context, b *build, side int) error {
	if b.cmd != nil {
		return p.buildCommand(ctx, b, side)
	}
	dir := p.headDir
	if side == sideBase {
		dir = p.baseDir
	}
	rel := sideName(side) + "/" + b.name
	bin := p.x.path(rel + "/harness")
	b.bin[side], b.log[side] = bin, rel+"/build.log"
	// One nvcc command, or the link of the sources compiled apart.
	one := proc{id: "build/" + rel, dir: dir, timeout: p.set.Timeout, log: b.log[side]}
	what := "build"
	var s step
	if p.compilesApart(b, side) {
		objs, failed, fs, err := p.compileApart(ctx, b, side, dir)
		if err != nil {
			return err
		}
		if failed >= 0 {
			// No link: the build's log is that of the compile that failed, which says why.
			s, b.log[side] = fs, b.compiled[side][failed]
		} else {
			one.argv, what = p.nvccArgs(b, bin, false, 0, objs...), "link"
			s, err = p.x.run(ctx, one)
		}
		p.removeObjects(objs)
		if err != nil {
			return err
		}
	} else {
		one.argv = p.nvccArgs(b, bin, false, p.nvccThreads(p.nvccJobs()), b.sources...)
		var err error
		if s, err = p.x.run(ctx, one); err != nil {
			return err
		}
	}
	b.ok[side] = s.Why == ""
	if side == sideHead {
		p.noteBuiltIn(s.Dir)
	}
	if s.Why != "" {
		b.failed[side] = fmt.Sprintf("%s: the %s build failed: %s", b.name, sideName(side), s.failureText())
		p.progress("%s build of %s failed: %s", sideName(side), b.name, s.Why)
	} else {
		p.progress("%s %s of %s: %.1fs", sideName(side), what, b.name, s.Seconds)
	}
	return nil
}

// compileID names the step that compiles b's i-th source on side (compileApart).
func compileID(side int, b *build, i int) string {
	return "compile/" + sideName(side) + "/" + b.name + "/" + strconv.Itoa(i)
}

// compilesApart says whether b's sources are compiled each by its own nvcc -c, then
// linked: several sources, live; replaying, where the recording did so (one made when every
// build was one nvcc command replays as one).
func (p *pipeline) compilesApart(b *build, side int) bool {
	return len(b.sources) > 1 && (!p.replaying || p.x.has(compileID(side, b, 0)))
}

// compileApart compiles each of b's sources on side with nvcc -c into its own object, at
// most nvccJobs at once, with --threads for the archs where cores are left over. It returns
// the objects, in the sources' order, and the first source (its index, its step) whose
// compile failed, -1 when none did. Every compile runs to its end, so that each one's
// errors are in its log for the ptxas gate. A host-only source's log holds no ptxas output,
// which the gate reads as a log with no kernels.
func (p *pipeline) compileApart(ctx context.Context, b *build, side int, dir string) (objs []string, failed int, fs step, err error) {
	n, jobs := len(b.sources), p.nvccJobs()
	threads := p.sourceThreads(b, jobs)
	objs, b.compiled[side] = make([]string, n), make([]string, n)
	steps, errs := make([]step, n), make([]error, n)
	slots := make(chan struct{}, min(n, jobs))
	var wg sync.WaitGroup
	for i, src := range b.sources {
		rel := fmt.Sprintf("%s/%s/compile/%d", sideName(side), b.name, i)
		objs[i], b.compiled[side][i] = p.x.path(rel+".o"), rel+".log"
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			steps[i], errs[i] = p.x.run(ctx, proc{id: compileID(side, b, i), argv: p.nvccArgs(b, objs[i], true, threads[i], src),
				dir: dir, timeout: p.set.Timeout, log: b.compiled[side][i], fresh: []string{rel + ".o"}, partOf: "build/" + sideName(side) + "/" + b.name})
		})
	}
	wg.Wait()
	if err := cmp.Or(errs...); err != nil {
		return nil, -1, step{}, err
	}
	first, last := math.Inf(1), 0.0
	for _, s := range steps {
		first, last = min(first, s.Start), max(last, s.Start+s.Seconds)
	}
	but := ""
	if host := slices.IndexFunc(b.sources, func(src string) bool { return hostOnly(src, b.flags) }); host >= 0 {
		but = ", none for the host-only"
	}
	p.progress("%s %s: %d sources compiled apart, %d at a time (--threads %d each%s): %.1fs", sideName(side), b.name, n, min(n, jobs), max(slices.Max(threads), 1), but, last-first)
	for i, s := range steps {
		if s.Why != "" {
			return objs, i, s, nil
		}
	}
	return objs, -1, step{}, nil
}

// sourceThreads is the --threads of each of b's sources compiled apart by jobs cores at once
// (nvccThreads: 0 for none). A host-only source (hostOnly: a .cpp, which nvcc hands to the
// host compiler alone) gets none, having no device passes to run at once, and the others'
// are counted over them alone: a host-only compile is one process, as each device compile
// is for its own front end and host compile, and the threads run only the device passes
// (cicc and ptxas per arch). So with a side's 8 cores four .cu files keep --threads 2 beside
// a .cpp, as they had before it.
func (p *pipeline) sourceThreads(b *build, jobs int) []int {
	device := 0
	for _, src := range b.sources {
		if !hostOnly(src, b.flags) {
			device++
		}
	}
	threads := make([]int, len(b.sources))
	if device == 0 {
		return threads
	}
	t := p.nvccThreads(jobs / min(device, jobs))
	for i, src := range b.sources {
		if !hostOnly(src, b.flags) {
			threads[i] = t
		}
	}
	return threads
}

// removeObjects removes a live build's objects once linked, or once a compile failed: the
// binary and the logs are what the run keeps (commands.sh makes them again).
func (p *pipeline) removeObjects(objs []string) {
	if p.replaying {
		return
	}
	for _, o := range objs {
		os.Remove(o) // a leftover object is only clutter in the artifacts
	}
}

// nvccLogs are the logs of b's nvcc build on side, relative to the artifacts: each
// compile's, then the link's (or the one command's).
func (b *build) nvccLogs(side int) []string {
	if slices.Contains(b.compiled[side], b.log[side]) {
		return b.compiled[side]
	}
	return append(slices.Clone(b.compiled[side]), b.log[side])
}

// noteBuiltIn keeps the directory a head build ran in (builds run side by side).
func (p *pipeline) noteBuiltIn(dir string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if dir != "" {
		p.builtIn = dir
	}
}

// dumpAll dumps the SASS of every nvcc build that built, on each of sides, all at once
// (sassdump.go: by their cubins with nvdisasm, else cuobjdump --dump-sass), every side's
// processes sharing the machine's cores.
func (p *pipeline) dumpAll(ctx context.Context, sides []int) error {
	type owner struct {
		b    *build
		side int
	}
	var ds []*sassDump
	var owners []owner
	for _, side := range sides {
		for _, b := range p.builds {
			if b.cmd == nil && b.ok[side] {
				rel := sideName(side) + "/" + b.name
				ds = append(ds, &sassDump{bin: b.bin[side], id: rel, prefix: rel + "/"})
				owners = append(owners, owner{b, side})
			}
		}
	}
	if err := p.dumpBinaries(ctx, ds, true); err != nil {
		return err
	}
	for i, d := range ds {
		b, side := owners[i].b, owners[i].side
		if d.wholeStep != nil {
			p.readWholeDump(b, side, *d.wholeStep, d.prefix+sassFile)
			continue
		}
		b.sass[side], b.dump[side], b.sassProblem[side] = d.sass, d.dump, d.problem
		if d.problem == "" && d.dump == nil {
			b.sassProblem[side] = fmt.Sprintf("nvdisasm found no function in its %d cubin(s)", len(d.cubins))
		}
	}
	return nil
}

// readWholeDump keeps an nvcc build's cuobjdump --dump-sass: the SASS gate reads the
// dump, and fails on cuobjdump's error or on the cut; only a dump that ended well and
// whole is the build's digest.
func (p *pipeline) readWholeDump(b *build, side int, s step, rel string) {
	b.sass[side] = rel
	if s.Why != "" || s.LogCut != "" {
		return
	}
	if d, err := readSASS(p.x.path(rel)); err == nil {
		b.dump[side] = d
	}
}

// readSASS parses a dump kept in the artifacts (or its .gz, as recordings keep them).
func readSASS(path string) (*sass.Dump, error) {
	var d *sass.Dump
	err := input.Files([]string{input.ExistingOrGz(path)}, nil, func(r io.Reader, name string) error {
		var err error
		d, err = sass.Parse(r, sass.ParseOptions{})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	return d, err
}

// staticGates judges head's builds: ptxas (with base's builds as the baseline) and the
// toolkit from the build logs, sass from the dumps.
func (p *pipeline) staticGates(ctx context.Context) ([]result.Gate, error) {
	start := time.Now()
	defer func() { p.x.timing("static gates", start, time.Since(start)) }()
	var in PtxasInputs
	logs := []string{nvccVersionFile} // relative to the artifacts
	var sassLogs []string
	for _, b := range p.builds {
		if b.cmd != nil {
			logs = append(logs, b.commandLogs(sideHead)...)
			sassLogs = append(sassLogs, b.commandSASS(sideHead)...)
			continue
		}
		logs = append(logs, b.nvccLogs(sideHead)...)
		if b.sass[sideHead] != "" {
			sassLogs = append(sassLogs, b.sass[sideHead])
		}
	}
	files, sassFiles := p.artifactFiles(logs), p.artifactFiles(sassLogs)
	if err := input.Files(files, nil, in.Read); err != nil {
		return nil, err
	}
	p.addFailedBuilds(&in.Log)
	p.addCutLogs(&in.Log, logs, "")
	p.scopeToTarget(&in.Log, sideHead)
	if err := p.addCommandRecords(&in.Log, sideHead); err != nil {
		return nil, err
	}
	p.records[sideHead] = in.Log.Kernels
	var base *ptxas.Baseline
	if p.hasBase() {
		var bl PtxasInputs
		for _, b := range p.builds {
			if !b.ok[sideBase] {
				continue
			}
			logs := b.nvccLogs(sideBase)
			if b.cmd != nil {
				logs = b.commandLogs(sideBase)
			}
			for _, rel := range logs {
				if err := input.Files(p.artifactFiles([]string{rel}), nil, bl.Read); err != nil {
					return nil, err
				}
			}
			// Head is compared with all of base's records, or the gate fails: a record lost
			// to a cut would make head's kernel look new, compared with nothing.
			p.addCutLogs(&in.Log, logs, "base's ")
		}
		if err := p.addCommandRecords(&bl.Log, sideBase); err != nil {
			return nil, err
		}
		p.records[sideBase] = bl.Log.Kernels
		if len(bl.Log.Kernels) > 0 {
			base = ptxas.NewBaseline("base "+abrun.ShortRev(p.decided.BaseRev), bl.Log.Kernels)
		}
	}
	var stored *result.Finding
	if base == nil {
		base, stored = p.storedPtxasBaseline(ctx)
	}
	gates, err := PtxasGates(ctx, &in, p.cfg, base, "", "")
	if err != nil {
		return nil, err
	}
	addStoredBaselineFinding(gates, stored)
	var sg result.Gate
	cutDumps := p.cutFindings(sassLogs, metricDump)
	if len(sassFiles) == 0 {
		sg = failedGate(sass.Name, "build", "no build to dump",
			"no head build succeeded, so there is no SASS to read: see the ptxas gate for nvcc's errors")
	} else if sg, err = SASSGate(sassFiles, nil, p.cfg, ""); err != nil {
		sg = failedGate(sass.Name, metricDump, "the SASS dump could not be read",
			fmt.Sprintf("cuobjdump's SASS could not be read: %v", err))
	}
	extra := append(p.binaryFindings(), cutDumps...)
	for _, msg := range p.sassProblemFindings() {
		extra = append(extra, result.Finding{Severity: result.Error, Metric: metricDump, Message: msg})
	}
	failed := slices.ContainsFunc(extra, func(f result.Finding) bool { return f.Severity == result.Error })
	if len(sassFiles) == 0 && failed {
		// The binaries' findings say why there is no SASS; "no head build" would not.
		sg = result.Gate{Name: sass.Name, Summary: "no SASS to read"}
	}
	sg.Findings = append(sg.Findings, extra...)
	if failed {
		sg.Decide(true)
	}
	return append(gates, sg), nil
}

// artifactFiles are the files of logs relative to the artifacts, each as kept (a recording
// keeps dumps gzipped).
func (p *pipeline) artifactFiles(rels []string) []string {
	out := make([]string, len(rels))
	for i, rel := range rels {
		out[i] = input.ExistingOrGz(p.x.path(rel))
	}
	return out
}

// addFailedBuilds adds to head's parsed logs an error for each nvcc build of head that
// failed while its log says nothing the parser reads as a failure (a crash printed into
// another line where a kernel's name could end, a tool killed without a word): the ptxas
// gate fails naming the step, and never passes a build that did not finish.
func (p *pipeline) addFailedBuilds(l *ptxas.Log) {
	for _, b := range p.builds {
		if b.cmd != nil || b.failed[sideHead] == "" {
			continue
		}
		file := input.ExistingOrGz(p.x.path(b.log[sideHead]))
		if slices.ContainsFunc(l.Diagnostics, func(d ptxas.Diagnostic) bool { return d.Severity == "error" && d.Input == file }) {
			continue // its log says why
		}
		l.Diagnostics = append(l.Diagnostics, ptxas.Diagnostic{Severity: "error", Kind: "build-failed", Input: file, InputLn: lineCount(file), Text: b.failed[sideHead], Count: 1})
	}
}

// addCutLogs adds to l an error for each of logs (relative to the artifacts) that is not
// all its step printed (the log cap): what was cut could hold a spill report or a crash.
// whose labels base's logs.
func (p *pipeline) addCutLogs(l *ptxas.Log, logs []string, whose string) {
	for _, rel := range logs {
		why := p.x.logCut(rel)
		if why == "" {
			continue
		}
		file := input.ExistingOrGz(p.x.path(rel))
		text := fmt.Sprintf("%slog %s is cut: %s, so the resource usage and failures it printed after them were never read and the gate cannot pass on it", whose, rel, why)
		// The parse finds the cut line itself: its error says the same, in these words.
		if i := slices.IndexFunc(l.Diagnostics, func(d ptxas.Diagnostic) bool { return d.Kind == ptxas.KindLogCut && d.Input == file }); i >= 0 {
			l.Diagnostics[i].Text = text
			continue
		}
		l.Diagnostics = append(l.Diagnostics, ptxas.Diagnostic{Severity: "error", Kind: ptxas.KindLogCut, Input: file, InputLn: lineCount(file), Text: text, Count: 1})
	}
}

// cutFindings are error findings for each of logs (relative to the artifacts) that is not
// all its step printed: a dump cut short lacks functions a gate would judge.
func (p *pipeline) cutFindings(logs []string, metric string) []result.Finding {
	var out []result.Finding
	for _, rel := range logs {
		if why := p.x.logCut(rel); why != "" {
			out = append(out, result.Finding{Severity: result.Error, Metric: metric,
				Message: fmt.Sprintf("%s is cut: %s, so the functions it printed after them were never read and the gate cannot pass on it", rel, why)})
		}
	}
	return out
}

// failedGate is a gate failed by one error finding.
func failedGate(name, metric, summary, message string) result.Gate {
	g := result.Gate{Name: name, Summary: summary, Findings: []result.Finding{{Severity: result.Error, Metric: metric, Message: message}}}
	g.Decide(true)
	return g
}
