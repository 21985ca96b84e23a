package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/ptxas"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/gpuinfo"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/msgtext"
	"github.com/kernel-gate/kernel-gate/internal/pathglob"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/shellcmd"
	"github.com/kernel-gate/kernel-gate/internal/strictjson"
)

// A target with a harness command (config.Target.HasCommands) is built by the repository's
// own build and run by its own harness: per side (base's worktree, head) kernel-gate gives
// it a fresh cache directory, runs its build command there, then its harness once in check
// mode (a JIT harness builds its kernels on that first use), and reads the binaries its
// globs then name with cuobjdump. Everything the build and the first run printed is the
// ptxas gate's log; cuobjdump's resource usage adds the kernels no log described, its SASS
// feeds the sass gate and the unchanged-SASS digest. So the static gates of these targets
// are judged after their first harness run; a sources target is built and judged as before.

// appendFlagsSince is the CUDA release from which kernel-gate relies on nvcc reading
// NVCC_APPEND_FLAGS (and NVCC_PREPEND_FLAGS), which came with the 11.x releases; 11.5 is
// the cautious bound. An older nvcc would silently build without -lineinfo -Xptxas=-v.
var appendFlagsSince = semver.MustParse("11.5.0")

// appendedFlags are what kernel-gate adds to NVCC_APPEND_FLAGS for every nvcc a build
// runs: source lines for the sanitizer and ptxas's resource usage. Never an arch flag:
// what the build targets is the build's business, and the sass gate checks it runs here.
const appendedFlags = "-lineinfo -Xptxas=-v"

// Metrics of the static gates' findings about one harness target's binaries: the sass
// gate's about what they hold, the ptxas gate's when they describe no kernel.
const (
	metricBinaries  = "binaries"
	metricNoRecords = "no-records"
)

// commandBuild is a harness target's build on both sides.
type commandBuild struct {
	target config.Target
	sides  [2]commandSide
	// checked is head's first harness run judged as the correctness check; nil when it did
	// not run.
	checked *result.Gate
	// refused says why kernel-gate ran neither side's build ("" when it ran them).
	refused string
}

// commandSide is what one side's build, first run and binaries left.
type commandSide struct {
	cache string   // KG_CACHE_DIR ("" replaying)
	env   []string // what its commands add to the environment
	// failed says why the side has nothing to read: its build, or base's first run,
	// failed ("" when neither did). It starts with the target's name, as every finding
	// about one harness target does (commandFailure).
	failed string
	// firstLog is its first harness run's output, relative to the artifacts ("" when none ran).
	firstLog string
	list     binaryList
	binaries []readBinary
}

// binaryList is what the binaries globs found on one side, kept in the artifacts
// (binaries.json) so that a replay reads the same binaries' dumps without the files.
type binaryList struct {
	Binaries []listedBinary `json:"binaries"`
	// Problem says why the globs could not be expanded ("" when they could).
	Problem string `json:"problem,omitempty"`
}

type listedBinary struct {
	// Path is what a user reads: relative to the tree's root, or "$KG_CACHE_DIR/...".
	Path string `json:"path"`
	// File is the absolute path cuobjdump was given.
	File string `json:"file"`
}

const binariesFile = "binaries.json"

// readBinary is what cuobjdump said of one binary.
type readBinary struct {
	listedBinary
	listing *sass.Listing
	// problem says why it could not be read ("" when it was).
	problem string
	// res and sass are its resource usage and SASS dumps in the artifacts ("" when not read).
	res, sass string
	dump      *sass.Dump
}

// treeDir is a side's tree: head's repository or base's worktree.
func (p *pipeline) treeDir(side int) string {
	if side == sideBase {
		return p.baseDir
	}
	return p.headDir
}

// commandEnv is what a side's commands add to the environment: its own cache directories
// (base and head never share or reuse a build), the target's env, NVCC_APPEND_FLAGS
// extended (the target's value, else the inherited one, then appendedFlags) and Triton's
// ptxas log.
func (p *pipeline) commandEnv(c *commandBuild, side int) []string {
	cache := c.sides[side].cache
	env := []string{config.CacheDirVar + "=" + cache,
		"TORCH_EXTENSIONS_DIR=" + filepath.Join(cache, "torch_extensions"),
		"TRITON_CACHE_DIR=" + filepath.Join(cache, "triton"),
		"CUDA_CACHE_PATH=" + filepath.Join(cache, "nv"),
		"TRITON_DUMP_PTXAS_LOG=1"}
	appendFlags, _ := abrun.LookupEnv(p.o.Environ, "NVCC_APPEND_FLAGS")
	for _, k := range slices.Sorted(maps.Keys(c.target.Env)) {
		if k == "NVCC_APPEND_FLAGS" {
			appendFlags = c.target.Env[k]
			continue
		}
		env = append(env, k+"="+c.target.Env[k])
	}
	env = append(env, "NVCC_APPEND_FLAGS="+strings.TrimSpace(appendFlags+" "+appendedFlags))
	return append(env, p.jobLimit(c.target)...)
}

// refuseOldNVCC refuses every harness target's build when nvcc --version names a toolkit
// older than appendFlagsSince: its nvcc would ignore NVCC_APPEND_FLAGS. An nvcc that cannot
// be asked refuses nothing (a Triton target needs none; a build that needs one fails
// saying so).
func (p *pipeline) refuseOldNVCC() {
	v := p.nvccRelease()
	if v == nil || !v.LessThan(appendFlagsSince) {
		return
	}
	for _, b := range p.builds {
		if b.cmd != nil {
			b.cmd.refused = fmt.Sprintf("%s: not built: nvcc --version says CUDA %s, and nvcc reads NVCC_APPEND_FLAGS only from CUDA %d.%d on, "+
				"so kernel-gate could not ask the build's nvcc for %s; use CUDA %d.%d or later (run.nvcc names the nvcc asked)",
				b.name, v, appendFlagsSince.Major(), appendFlagsSince.Minor(), appendedFlags, appendFlagsSince.Major(), appendFlagsSince.Minor())
			p.progress("%s", b.cmd.refused)
		}
	}
}

// buildCommand prepares one side of a harness target, a fresh cache directory and its
// environment, and runs its build command (none for a JIT harness).
func (p *pipeline) buildCommand(ctx context.Context, b *build, side int) error {
	c := b.cmd
	s := &c.sides[side]
	if c.refused != "" {
		s.failed = c.refused
		return nil
	}
	if !p.replaying {
		s.cache = filepath.Join(p.work, sideName(side), b.name)
		// Inside kernel-gate's own directory, whatever an earlier build (which knows it
		// from its KG_CACHE_DIR) left in this one's path.
		if err := procgroup.MkdirArtifact(p.work, sideName(side)+"/"+b.name); err != nil {
			return fmt.Errorf("the %s cache directory of %s: %w", sideName(side), b.name, err)
		}
	}
	s.env = p.commandEnv(c, side)
	b.ok[side] = true
	if strings.TrimSpace(c.target.Build) == "" {
		if side == sideHead || !p.baseRestored() {
			p.progress("%s %s: no build command: the harness builds its kernels on first use", sideName(side), b.name)
		}
		return nil
	}
	rel := sideName(side) + "/" + b.name
	st, err := p.x.run(ctx, proc{id: "build/" + rel, argv: shellcmd.Argv(c.target.Build), dir: p.treeDir(side),
		env: s.env, timeout: p.set.Timeout, log: rel + "/build.log"})
	if err != nil {
		return err
	}
	b.log[side] = rel + "/build.log"
	if side == sideHead {
		p.noteBuiltIn(st.Dir)
	}
	if st.Why != "" {
		b.ok[side] = false
		s.failed = fmt.Sprintf("%s: the %s build failed: %s", b.name, sideName(side), st.failureText())
		p.progress("%s build of %s failed: %s", sideName(side), b.name, st.Why)
		return nil
	}
	p.progress("%s build of %s: %.1fs", sideName(side), b.name, st.Seconds)
	return nil
}

// firstRunsAndBinaries runs a harness target's harness once per side in check mode (head's
// run is the correctness check) and reads its binaries: head, then base (the baseline, and
// base's SASS for the unchanged-SASS digest), where each built. A live run with both sides
// built runs the two first runs at once (concurrent.go). Without a GPU the harness does not
// run, and whatever the build alone made is read.
func (p *pipeline) firstRunsAndBinaries(ctx context.Context, b *build) error {
	if p.bothFirstRunsAtOnce(b) {
		return p.firstRunsAtOnce(ctx, b)
	}
	for _, side := range []int{sideHead, sideBase} {
		if !b.ok[side] || side == sideBase && (!p.hasBase() || !b.ok[sideHead]) {
			continue
		}
		if p.gpuWhy == "" && p.gpuLost == "" {
			if err := p.firstRun(ctx, b, side); err != nil {
				return err
			}
		}
		if !b.ok[side] {
			continue
		}
		if err := p.readBinaries(ctx, b, side); err != nil {
			return err
		}
	}
	return nil
}

// firstRun runs the harness once in check mode on one side. Head's run is judged as the
// correctness check; a failed base run leaves base unbuilt (nothing to compare with).
func (p *pipeline) firstRun(ctx context.Context, b *build, side int) error {
	c := b.cmd
	t := target{Target: c.target, b: b}
	if side == sideHead {
		g, err := p.check(ctx, t)
		if err != nil {
			return err
		}
		c.checked = &g
		c.sides[side].firstLog = t.Name + "/check.log"
		if b.log[side] == "" {
			b.log[side] = c.sides[side].firstLog
		}
		return nil
	}
	s, err := p.baseFirstRun(ctx, b)
	if err != nil {
		return err
	}
	p.applyBaseFirstRun(b, s)
	return nil
}

// baseFirstRun runs base's harness once in check mode and returns how it ended, changing
// nothing of b (applyBaseFirstRun keeps it): it may run beside head's check.
func (p *pipeline) baseFirstRun(ctx context.Context, b *build) (step, error) {
	c := b.cmd
	t := target{Target: c.target, b: b}
	rel := "base/" + t.Name
	out := p.x.path(rel + "/check.json")
	env := append(slices.Clone(c.sides[sideBase].env), harnessEnv(t.Target, "check", t.Shapes.Check, "KG_ROUNDS=1", "KG_OUT="+out)...)
	if !p.baseRestored() {
		p.progress("%s: base's first harness run (check mode), which builds what a JIT harness builds", t.Name)
	}
	return p.x.run(ctx, proc{id: "check/base/" + t.Name, argv: shellcmd.Argv(c.target.Harness), dir: p.baseDir, env: env,
		timeout: p.set.Timeout, log: rel + "/check.log", fresh: []string{rel + "/check.json"}})
}

// applyBaseFirstRun keeps what base's first run left: its log, and base unbuilt when it failed.
func (p *pipeline) applyBaseFirstRun(b *build, s step) {
	c := b.cmd
	c.sides[sideBase].firstLog = "base/" + b.name + "/check.log"
	if b.log[sideBase] == "" {
		b.log[sideBase] = c.sides[sideBase].firstLog
	}
	if s.Why != "" {
		b.ok[sideBase] = false
		c.sides[sideBase].failed = fmt.Sprintf("%s: base's first harness run failed: %s", b.name, s.failureText())
		p.progress("%s", msgtext.FirstLine(c.sides[sideBase].failed))
	}
}

// readBinaries finds a side's binaries (live: by the globs, kept in binaries.json; a
// replay reads that file) and asks cuobjdump for each one's cubins, resource usage and SASS.
func (p *pipeline) readBinaries(ctx context.Context, b *build, side int) error {
	c := b.cmd
	s := &c.sides[side]
	rel := sideName(side) + "/" + b.name
	listFile := rel + "/" + binariesFile
	if p.replaying {
		raw, err := input.ReadFile(ctx, p.x.path(listFile), input.JSON)
		if err != nil {
			return exitcode.BadInputf("the recording lacks what %s's binaries globs found: %v", b.name, err)
		}
		if err := strictjson.Unmarshal(raw, &s.list, strictjson.Options{}); err != nil {
			return exitcode.BadInputf("%s: %v", listFile, err)
		}
	} else {
		s.list = p.expandBinaries(c, side)
		raw, err := json.MarshalIndent(s.list, "", "  ")
		if err != nil {
			return exitcode.CouldNotRun(err)
		}
		if err := procgroup.WriteArtifact(p.x.path(""), listFile, append(raw, '\n'), 0o644); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(s.list.Binaries))
	for _, bin := range s.list.Binaries {
		names = append(names, bin.Path)
	}
	p.progress("%s %s: binaries: %s", sideName(side), b.name, cmp.Or(strings.Join(names, ", "), "none"))
	var all sass.Dump
	for i, bin := range s.list.Binaries {
		// Each binary's dumps in a folder of its own, named as a build's are (record.sh
		// compresses every sass.txt).
		rb, err := p.readBinary(ctx, bin, fmt.Sprintf("%s/%s/%d", sideName(side), b.name, i), fmt.Sprintf("%s/bin%d/", rel, i))
		if err != nil {
			return err
		}
		if rb.dump != nil {
			all.Format = cmp.Or(all.Format, rb.dump.Format)
			all.Functions = append(all.Functions, rb.dump.Functions...)
		}
		s.binaries = append(s.binaries, rb)
	}
	if len(all.Functions) > 0 {
		b.dump[side] = &all
	}
	return nil
}

// readBinary runs cuobjdump --list-elf on one binary, then, when it holds cubins,
// --dump-resource-usage, and dumps its SASS (sassdump.go: by its cubins with nvdisasm, at
// once, else cuobjdump --dump-sass).
func (p *pipeline) readBinary(ctx context.Context, bin listedBinary, id, prefix string) (readBinary, error) {
	rb := readBinary{listedBinary: bin}
	run := func(what, flag, suffix string) (string, error) {
		log := prefix + suffix
		s, err := p.x.run(ctx, proc{id: what + "/" + id, argv: []string{p.o.Tools.Cuobjdump, flag, bin.File}, timeout: sassStepTimeout, log: log})
		if err != nil {
			return "", err
		}
		// What was cut could list a cubin, a kernel's registers or its spills.
		if rb.problem = s.notWhole("cuobjdump "+flag, log, "what it printed after them was never read"); rb.problem != "" {
			return "", nil
		}
		return log, nil
	}
	elf, err := run("elf", "--list-elf", "list-elf.txt")
	if err != nil || elf == "" {
		return rb, err
	}
	err = input.Files([]string{input.ExistingOrGz(p.x.path(elf))}, nil, func(r io.Reader, _ string) error {
		l, err := sass.ParseListELF(r)
		if err != nil {
			rb.problem = fmt.Sprintf("cuobjdump --list-elf (%s): %v", elf, err)
			return nil
		}
		rb.listing = &l
		return nil
	})
	if err != nil || rb.listing == nil || rb.listing.NoDeviceCode {
		return rb, err
	}
	// Dumped whatever the listing says: a .cubin read by itself, say, is one cubin that
	// --list-elf need not list, and the SASS names its arch.
	if rb.res, err = run("res", "--dump-resource-usage", "resource-usage.txt"); err != nil || rb.res == "" {
		return rb, err
	}
	d := &sassDump{bin: bin.File, id: id, prefix: prefix, listing: rb.listing}
	if err := p.dumpBinaries(ctx, []*sassDump{d}, false); err != nil {
		return rb, err
	}
	if d.wholeStep == nil {
		rb.sass, rb.dump, rb.problem = d.sass, d.dump, d.problem
		return rb, nil
	}
	// Dumped whole by cuobjdump, read as it always was.
	if rb.problem = d.wholeStep.notWhole("cuobjdump --dump-sass", d.prefix+sassFile, "what it printed after them was never read"); rb.problem != "" {
		return rb, nil
	}
	rb.sass = d.prefix + sassFile
	switch rb.dump, err = readSASS(p.x.path(rb.sass)); {
	case sass.NoSASS(err):
		rb.dump, rb.sass = nil, "" // no SASS in it (PTX only): binaryFindings says so
	case err != nil:
		rb.problem = fmt.Sprintf("cuobjdump --dump-sass: %v", err)
		rb.dump, rb.sass = nil, ""
	}
	return rb, nil
}

// sassArchs are the archs a binary holds SASS for: its listing's cubins and its dump's
// functions.
func (rb readBinary) sassArchs() []string {
	var archs []string
	if rb.listing != nil {
		archs = rb.listing.Archs("ELF")
	}
	if rb.dump != nil {
		for _, f := range rb.dump.Functions {
			if f.Arch != "" && !slices.Contains(archs, f.Arch) {
				archs = append(archs, f.Arch)
			}
		}
	}
	return archs
}

// expandBinaries expands a side's binaries globs: relative ones in its tree, those under
// $KG_CACHE_DIR/ in its cache directory. Each file is listed once, in glob order.
func (p *pipeline) expandBinaries(c *commandBuild, side int) binaryList {
	list := binaryList{Binaries: []listedBinary{}}
	seen := map[string]bool{}
	for _, g := range c.target.Binaries {
		underCache, rel := config.CacheGlob(g)
		root, shown := p.treeDir(side), ""
		if underCache {
			root, shown = c.sides[side].cache, "$"+config.CacheDirVar+"/"
		}
		files, err := pathglob.Expand(root, rel)
		if err != nil {
			list.Problem = fmt.Sprintf("binaries %q: %v", g, err)
			return list
		}
		for _, f := range files {
			if path := shown + f; !seen[path] {
				seen[path] = true
				list.Binaries = append(list.Binaries, listedBinary{Path: path, File: filepath.Join(root, filepath.FromSlash(f))})
			}
		}
	}
	return list
}

// commandLogs are the ptxas gate's inputs of a harness target's side: its build's output
// and its first harness run's.
func (b *build) commandLogs(side int) []string {
	s := b.cmd.sides[side]
	var out []string
	if strings.TrimSpace(b.cmd.target.Build) != "" && b.cmd.refused == "" {
		out = append(out, sideName(side)+"/"+b.name+"/build.log")
	}
	if s.firstLog != "" {
		out = append(out, s.firstLog)
	}
	return out
}

// commandSASS are the SASS dumps of a side's binaries.
func (b *build) commandSASS(side int) []string {
	var out []string
	for _, rb := range b.cmd.sides[side].binaries {
		if rb.sass != "" {
			out = append(out, rb.sass)
		}
	}
	return out
}

// addCommandRecords adds to a side's parsed log what cuobjdump --dump-resource-usage says
// of the kernels its logs did not describe (records from cuobjdump), with spill figures
// counted in the same binary's SASS (cuobjdump prints none), and, for head, an error for
// each harness target whose build failed or was refused, so that the ptxas gate fails
// naming it even when the build printed nothing it recognises.
func (p *pipeline) addCommandRecords(l *ptxas.Log, side int) error {
	described := map[string]bool{}
	for _, k := range l.Kernels {
		described[k.Name+"\x00"+k.Arch] = true
	}
	for _, b := range p.builds {
		if b.cmd == nil {
			continue
		}
		if side == sideHead {
			switch s := b.cmd.sides[side]; {
			case b.cmd.refused != "":
				l.Diagnostics = append(l.Diagnostics, ptxas.Diagnostic{Severity: "error", Kind: "toolkit-too-old", Input: nvccVersionFile, InputLn: 1, Text: b.cmd.refused, Count: 1})
			case !b.ok[side] && s.failed != "":
				l.Diagnostics = append(l.Diagnostics, ptxas.Diagnostic{Severity: "error", Kind: "build-failed", Input: b.log[side], InputLn: lineCount(p.x.path(b.log[side])), Text: s.failed, Count: 1})
			}
		}
		read := 0 // kernels its binaries' resource usage describes
		for _, rb := range b.cmd.sides[side].binaries {
			if rb.res == "" {
				continue
			}
			var res ptxas.Log
			err := input.Files([]string{input.ExistingOrGz(p.x.path(rb.res))}, nil, func(r io.Reader, _ string) error {
				return res.Parse(r, rb.Path, nil)
			})
			if err != nil {
				return err
			}
			read += len(res.Kernels)
			archs := rb.sassArchs()
			for _, k := range res.Kernels {
				if k.Arch == "" && len(archs) == 1 {
					k.Arch = archs[0] // a lone cubin's listing names no arch; its SASS does
				}
				key := k.Name + "\x00" + k.Arch
				if described[key] {
					continue
				}
				described[key] = true
				if k.SpillStores == nil && k.SpillLoads == nil {
					if a, ok := localAccess(rb.dump, k.Name, k.Arch); ok {
						k.SpillStores, k.SpillLoads, k.SpillsFrom = &a.StoreBytes, &a.LoadBytes, ptxas.SpillsFromSASS
					}
				}
				l.Kernels = append(l.Kernels, k)
			}
			l.Diagnostics = append(l.Diagnostics, res.Diagnostics...)
			l.Inputs = append(l.Inputs, res.Inputs...)
		}
		if side == sideHead && b.ok[side] && read == 0 {
			// Whatever its logs said, the binaries that run hold no kernel to judge: fail
			// closed (the sass gate says what the binaries hold).
			l.Diagnostics = append(l.Diagnostics, ptxas.Diagnostic{Severity: "error", Kind: metricNoRecords, Input: binariesFile, InputLn: 1, Count: 1,
				Text: fmt.Sprintf("%s: cuobjdump --dump-resource-usage of its binaries describes no kernel (see the sass gate's findings on them): the kernels that run were not judged", b.name)})
		}
	}
	return nil
}

// localAccess finds a function's LDL/STL counts in a dump.
func localAccess(d *sass.Dump, mangled, arch string) (sass.LocalAccess, bool) {
	if d == nil {
		return sass.LocalAccess{}, false
	}
	for _, f := range d.Functions {
		if f.Name.Mangled == mangled && f.Arch == arch {
			return f.LocalAccess(), true
		}
	}
	return sass.LocalAccess{}, false
}

// lineCount is how many lines a log has (0 when it cannot be read): a failed build's
// finding points at its end, where the failure shows.
func lineCount(path string) int {
	n := 0
	_ = input.Files([]string{input.ExistingOrGz(path)}, nil, func(r io.Reader, _ string) error {
		buf := make([]byte, 64<<10)
		for {
			k, err := r.Read(buf)
			n += strings.Count(string(buf[:k]), "\n")
			if err != nil {
				return nil
			}
		}
	})
	return n
}

// binaryFindings are the sass gate's findings about head's binaries of each harness
// target: none found, one cuobjdump could not read, one without SASS for this GPU (its
// kernels would be JIT-compiled from PTX when loaded: what runs would not be what was
// gated), one without device code.
func (p *pipeline) binaryFindings() (fs []result.Finding) {
	for _, b := range p.builds {
		if b.cmd == nil || !b.ok[sideHead] {
			continue
		}
		s := b.cmd.sides[sideHead]
		bad := func(format string, a ...any) {
			fs = append(fs, result.Finding{Severity: result.Error, Metric: metricBinaries, Message: b.name + ": " + fmt.Sprintf(format, a...)})
		}
		switch {
		case s.list.Problem != "":
			bad("%s", s.list.Problem)
			continue
		case len(s.list.Binaries) == 0:
			why := "after its build and its harness's first run"
			if s.firstLog == "" {
				why = "after its build (the harness did not run: " + msgtext.FirstLine(cmp.Or(p.gpuLost, p.gpuWhy)) + ")"
			}
			bad("binaries %q matched no file %s: the ptxas and sass gates have nothing to read", b.cmd.target.Binaries, why)
			continue
		}
		withSASS := 0
		for _, rb := range s.binaries {
			switch {
			case rb.problem != "":
				bad("%s: %s", rb.Path, rb.problem)
			case rb.listing.NoDeviceCode:
				fs = append(fs, result.Finding{Severity: result.Notice, Metric: metricBinaries, Message: fmt.Sprintf("%s: %s holds no device code: nothing to read in it", b.name, rb.Path)})
			case rb.dump == nil && len(rb.listing.Files) > 0:
				bad("%s: cuobjdump --list-elf lists %d cubin(s) but its SASS dump shows no function", rb.Path, len(rb.listing.Files))
			case rb.dump == nil:
				bad("%s holds no SASS at all: every kernel in it would be JIT-compiled from PTX when it loads, so what runs would not be what was gated", rb.Path)
			default:
				withSASS++ // its SASS is judged, whatever GPU it is for
				archs := rb.sassArchs()
				warn := func(format string, a ...any) {
					fs = append(fs, result.Finding{Severity: result.Warning, Metric: metricBinaries, Message: b.name + ": " + fmt.Sprintf(format, a...)})
				}
				switch {
				case len(archs) == 0:
					warn("%s: neither its cubins' names nor its SASS give an arch, so whether its SASS runs on this GPU was not checked", rb.Path)
				case p.gpu == nil:
					warn("%s: there is no GPU to ask for its arch, so whether its SASS (%s) runs here was not checked", rb.Path, strings.Join(archs, ", "))
				case !gpuinfo.RunnableOn(archs, p.gpu.Arch()):
					bad("%s holds SASS for %s only, none that runs on this GPU (%s, %s): the driver would JIT-compile its kernels from PTX when it loads them, so what runs would not be what was gated; build it for %s too (TORCH_CUDA_ARCH_LIST, -gencode, CMAKE_CUDA_ARCHITECTURES)",
						rb.Path, strings.Join(archs, ", "), p.gpu.Arch(), p.gpu.Name, p.gpu.Arch())
				}
			}
		}
		if withSASS == 0 && len(s.binaries) > 0 {
			bad("none of its binaries (%d) holds SASS that could be read: the sass gate has nothing to judge", len(s.binaries))
		}
	}
	return fs
}

// commandFailure says why a harness target's own static findings stop its GPU steps ("" when
// none does): an error about no kernel in particular whose message starts with the
// target's name (its build failed or was refused, its logs report a failed step, its
// binaries hold no SASS for this GPU or none at all). staticFailure leaves these to it, so
// that one target's build does not stop the others.
func commandFailure(static []result.Gate, t target) string {
	if t.b == nil || t.b.cmd == nil {
		return ""
	}
	for _, g := range static {
		for _, f := range g.Findings {
			if f.Severity == result.Error && f.Kernel == "" && strings.HasPrefix(f.Message, t.Name+": ") {
				return fmt.Sprintf("the %s gate failed for its build or binaries", g.Name)
			}
		}
	}
	return ""
}

// scopeToTarget marks the diagnostics read from a harness target's logs as that target's
// (their text starts with its name), so that a failed step there stops only its GPU steps.
func (p *pipeline) scopeToTarget(l *ptxas.Log, side int) {
	owner := map[string]string{}
	for _, b := range p.builds {
		if b.cmd != nil {
			for _, rel := range b.commandLogs(side) {
				owner[input.ExistingOrGz(p.x.path(rel))] = b.name
			}
		}
	}
	for i := range l.Diagnostics {
		d := &l.Diagnostics[i]
		if name, ok := owner[d.Input]; ok && !strings.HasPrefix(d.Text, name+": ") {
			d.Text = name + ": " + d.Text
		}
	}
}

// harnessTargetNames are the names of the run's harness targets.
func (p *pipeline) harnessTargetNames() []string {
	var out []string
	for _, b := range p.builds {
		if b.cmd != nil {
			out = append(out, b.name)
		}
	}
	return out
}

// harnessArgv is how a step starts a target's harness on one side: the built binary, or
// the target's command (through sh -c: shellcmd) with the side's own variables.
func (p *pipeline) harnessArgv(t target, side int, command string) (argv, env []string) {
	if t.b.cmd == nil {
		return []string{t.b.bin[side]}, nil
	}
	return shellcmd.Argv(command), slices.Clone(t.b.cmd.sides[side].env)
}

// inTree is harnessArgv for a tool that starts the harness itself in its own directory
// (compute-sanitizer, ncu): a harness command first changes to the tree's root.
func (p *pipeline) inTree(t target, side int, command string) (argv, env []string) {
	argv, env = p.harnessArgv(t, side, command)
	if t.b.cmd != nil {
		argv = shellcmd.Argv("cd " + procgroup.ShellQuote(p.treeDir(side)) + " && " + command)
	}
	return argv, env
}
