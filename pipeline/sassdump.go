package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/internal/exitcode"
	"github.com/kernel-gate/kernel-gate/internal/input"
	"github.com/kernel-gate/kernel-gate/internal/procgroup"
	"github.com/kernel-gate/kernel-gate/internal/strictjson"
)

// The SASS dumps (issue 22). cuobjdump --dump-sass spends a roughly fixed time on each
// function it prints (about 0.25 s each with CUDA 11.8, 5.4 s for this repository's harness
// binary), while cuobjdump -xelf writes a binary's cubins out at once and nvdisasm
// disassembles one in a fraction of that. So a binary's SASS is dumped by its cubins:
//
//  1. cuobjdump --list-elf names them (a harness target's binaries are listed anyway);
//  2. cuobjdump -xelf all writes them into a fresh directory kernel-gate made in the
//     artifacts (the step's working directory, removed once the dumps are read), which must
//     then hold exactly the listed names, each a regular file (cubins.json keeps what it
//     held, for a replay and the base cache);
//  3. nvdisasm -c -hex disassembles each cubin, every one of the run's at once up to the
//     machine's cores (base's and head's together), each its own step and log;
//  4. each cubin's functions must have the arch its name says, and the outputs, in the
//     listing's order, are kept as the binary's sass.txt: the one file the gates, the
//     reports and the base cache read, as they read cuobjdump's dump before.
//
// Anything that goes wrong there (a name that could leave the directory, a cubin not
// extracted, a file not listed, a link, nvdisasm failing on one cubin, a log cut) is a
// problem the sass gate fails on, naming it: never a partial dump judged as whole. Where
// nvdisasm cannot be used the binary is dumped by cuobjdump --dump-sass as before: no
// nvdisasm (the progress says why), no cubin listed (a lone .cubin, PTX only), two cubins of
// one name (-xelf would write one over the other), or an nvdisasm output whose arch
// disagrees with its cubin's name (a flag this nvdisasm prints that the parser does not
// know). A replay (and a restored base) takes the way its recording took: a binary whose
// cuobjdump --dump-sass step was recorded is read from that, as every older recording is.

// Names of a binary's SASS files in its folder of the artifacts.
const (
	listELFLog   = "list-elf.txt"
	xelfLog      = "xelf.txt"
	cubinsDir    = "cubins"
	cubinsRecord = "cubins.json"
	sassFile     = "sass.txt"
)

// nvdisasmArgs are nvdisasm's options before the cubin: code sections only, each
// instruction with its encoding, so that a function's digest covers its bytes (scheduling
// control bits included), as cuobjdump's does.
var nvdisasmArgs = []string{"-c", "-hex"}

// sassDump is the SASS dump of one binary.
type sassDump struct {
	bin string // the binary (absolute)
	// id is what its steps' ids have after their kind: "head/attention" for a sources
	// build, "head/torch/0" for a harness target's first binary.
	id     string
	prefix string // its files' folder in the artifacts, ending in "/"
	// listing is what cuobjdump --list-elf said (nil until read).
	listing *sass.Listing
	// whole says why it is dumped by cuobjdump --dump-sass, whole ("" when by cubins).
	whole string
	// wholeStep is how that dump ended (nil until it ran).
	wholeStep *step
	// cubins are the listed cubins' names, in order, once extracted whole; sizes their
	// sizes (live; zero from a record), the order their dumps start in.
	cubins []string
	sizes  []int64
	steps  []step // each cubin's nvdisasm
	// cached: the extraction came from the base cache (no directory to read or remove).
	cached bool
	// sass is the dump to judge, relative to the artifacts ("" when there is none);
	// dump its functions (nil when none could be read).
	sass string
	dump *sass.Dump
	// problem says why its SASS cannot be judged ("" when it can).
	problem string
}

func (d *sassDump) wholeID() string          { return "sass/" + d.id }
func (d *sassDump) cubinID(i int) string     { return "sass/" + d.id + "/" + strconv.Itoa(i+1) }
func (d *sassDump) cubinLog(i int) string    { return d.prefix + "sass/" + strconv.Itoa(i+1) + ".txt" }
func (d *sassDump) dir() string              { return d.prefix + cubinsDir }
func (d *sassDump) failf(f string, a ...any) { d.problem = fmt.Sprintf(f, a...) }

// findNvdisasm is the nvdisasm a live run's SASS dumps use: --nvdisasm's; else the one
// beside cuobjdump (the same toolkit's bin directory: as found, then where a link of it
// leads); else, when cuobjdump itself was looked up on PATH, nvdisasm on PATH. An explicit
// --cuobjdump path names the toolkit: nvdisasm is not then taken from another one on PATH.
// "" and why when there is none (the dumps are then cuobjdump's).
func findNvdisasm(flag, cuobjdump string, lookPath func(string) (string, error)) (string, string) {
	if flag != "" {
		bin, err := lookPath(flag)
		if err != nil {
			return "", fmt.Sprintf("--nvdisasm %s: %v", flag, err)
		}
		return bin, ""
	}
	found := cuobjdump
	if !strings.ContainsRune(cuobjdump, filepath.Separator) {
		var err error
		if found, err = lookPath(cuobjdump); err != nil {
			found = ""
		}
	}
	var dirs []string
	if found != "" {
		dirs = append(dirs, filepath.Dir(found))
		if real, err := filepath.EvalSymlinks(found); err == nil && filepath.Dir(real) != dirs[0] {
			dirs = append(dirs, filepath.Dir(real))
		}
	}
	for _, dir := range dirs {
		if bin, err := lookPath(filepath.Join(dir, "nvdisasm")); err == nil {
			return bin, ""
		}
	}
	if strings.ContainsRune(cuobjdump, filepath.Separator) {
		return "", fmt.Sprintf("no nvdisasm beside %s (--nvdisasm names one)", cuobjdump)
	}
	if bin, err := lookPath("nvdisasm"); err == nil {
		return bin, ""
	}
	return "", fmt.Sprintf("nvdisasm is neither beside cuobjdump (%s) nor on PATH (it is the toolkit's cuda-nvdisasm package; --nvdisasm names one)", cmp.Or(found, cuobjdump+": not found"))
}

// locateNvdisasm finds nvdisasm for a live run (once, before anything is dumped).
func (p *pipeline) locateNvdisasm() {
	if !p.replaying {
		p.nvdisasm, p.nvdisasmWhy = findNvdisasm(p.o.Tools.Nvdisasm, p.o.Tools.Cuobjdump, exec.LookPath)
	}
}

// disassembler names how a live run dumps SASS, for the base cache's key: an entry keeps
// base's dumps, whose digests only a dump of the same kind compares with.
func (p *pipeline) disassembler() string {
	if p.nvdisasm != "" {
		return "nvdisasm"
	}
	return "cuobjdump --dump-sass"
}

// byCubins says whether a binary is dumped by its cubins: live, when nvdisasm was found;
// replaying, unless its recording holds its cuobjdump --dump-sass step (every recording
// made before, or one that took that way for this binary).
func (p *pipeline) byCubins(d *sassDump) bool {
	if p.replaying {
		return !p.x.has(d.wholeID())
	}
	return p.nvdisasm != ""
}

// dumpJob is one process of the SASS dumps; weight orders their start (the larger first,
// so that the longest does not start last).
type dumpJob struct {
	proc   proc
	weight int64
	out    *step
}

// dumpJobs is how many SASS dump processes run at once: one per core, for every binary
// being dumped (base's and head's together).
func dumpJobs() int { return buildJobs(1) }

// runAtOnce runs jobs, at most dumpJobs at a time, the heaviest first; the journal keeps
// them in the given order (atOnce).
func (p *pipeline) runAtOnce(ctx context.Context, jobs []dumpJob) error {
	if len(jobs) == 0 {
		return nil
	}
	if len(jobs) > 1 {
		ids := make([]string, len(jobs))
		for i, j := range jobs {
			ids[i] = j.proc.id
		}
		p.x.atOnce(ids...)
	}
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(jobs[b].weight, jobs[a].weight) })
	next := make(chan int)
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for range min(len(jobs), dumpJobs()) {
		wg.Go(func() {
			for i := range next {
				*jobs[i].out, errs[i] = p.x.run(ctx, jobs[i].proc)
			}
		})
	}
	for _, i := range order {
		next <- i
	}
	close(next)
	wg.Wait()
	return cmp.Or(errs...)
}

// dumpBinaries dumps the SASS of ds, all at once: each one's listing (when list is set;
// a harness target's binaries were listed already), extraction and cubins' dumps, each
// kind of step for all of them together, then the whole dumps of those that take
// cuobjdump's way. It sets each one's sass, dump and problem; the caller reads a whole
// dump (wholeStep) its own way.
func (p *pipeline) dumpBinaries(ctx context.Context, ds []*sassDump, list bool) error {
	var cubins []*sassDump
	for _, d := range ds {
		if p.byCubins(d) {
			cubins = append(cubins, d)
			continue
		}
		d.whole = cmp.Or(p.nvdisasmWhy, "its recording dumped it with cuobjdump --dump-sass")
		if p.nvdisasmWhy != "" {
			p.saidNoNvdisasm.Do(func() {
				p.progress("SASS dumps by cuobjdump --dump-sass, whole, not by cubins with nvdisasm (faster): %s", p.nvdisasmWhy)
			})
		}
	}
	if list {
		var jobs []dumpJob
		steps := make([]step, len(cubins))
		for i, d := range cubins {
			jobs = append(jobs, dumpJob{proc: proc{id: "elf/" + d.id, argv: []string{p.o.Tools.Cuobjdump, "--list-elf", d.bin}, timeout: sassStepTimeout, log: d.prefix + listELFLog}, out: &steps[i]})
		}
		if err := p.runAtOnce(ctx, jobs); err != nil {
			return err
		}
		for i, d := range cubins {
			p.readListing(d, steps[i])
		}
	}
	var extract []*sassDump
	for _, d := range cubins {
		if d.problem == "" && p.planCubins(d) {
			extract = append(extract, d)
		}
	}
	if err := p.extractAll(ctx, extract); err != nil {
		return err
	}
	var jobs []dumpJob
	for _, d := range extract {
		if d.problem != "" {
			continue
		}
		d.steps = make([]step, len(d.cubins))
		for i, name := range d.cubins {
			argv := append(append([]string{p.nvdisasm}, nvdisasmArgs...), filepath.Join(p.x.path(d.dir()), name))
			jobs = append(jobs, dumpJob{proc: proc{id: d.cubinID(i), argv: argv, timeout: sassStepTimeout, log: d.cubinLog(i), logShare: d.wholeID()},
				weight: d.sizes[i], out: &d.steps[i]})
		}
	}
	jobs = append(jobs, p.wholeJobs(ds)...)
	start := time.Now()
	err := p.runAtOnce(ctx, jobs)
	for _, d := range extract {
		p.removeCubins(d)
	}
	if err != nil {
		return err
	}
	var done []string
	for _, d := range extract {
		if d.problem == "" {
			done = append(done, fmt.Sprintf("%s: %d cubins", d.id, len(d.cubins)))
			p.readCubins(d)
		}
	}
	if len(done) > 0 {
		p.progress("SASS by nvdisasm, a process per cubin, at most %d at once (%s): %.1fs", dumpJobs(), strings.Join(done, ", "), time.Since(start).Seconds())
	}
	// Those whose cubins' archs disagreed with their names, dumped again whole.
	return p.runAtOnce(ctx, p.wholeJobs(ds))
}

// wholeJobs are the cuobjdump --dump-sass processes of the binaries of ds that take that
// way and have not run it yet.
func (p *pipeline) wholeJobs(ds []*sassDump) []dumpJob {
	var jobs []dumpJob
	for _, d := range ds {
		if d.whole == "" || d.wholeStep != nil || d.problem != "" {
			continue
		}
		if p.nvdisasm != "" && !p.replaying {
			p.progress("%s: SASS by cuobjdump --dump-sass: %s", d.id, d.whole)
		}
		d.wholeStep = &step{}
		// First: it takes as long as all of a binary's cubins.
		jobs = append(jobs, dumpJob{proc: proc{id: d.wholeID(), argv: []string{p.o.Tools.Cuobjdump, "--dump-sass", d.bin}, timeout: sassStepTimeout, log: d.prefix + sassFile},
			weight: 1 << 62, out: d.wholeStep})
	}
	return jobs
}

// readListing reads a sources build's cuobjdump --list-elf.
func (p *pipeline) readListing(d *sassDump, s step) {
	log := d.prefix + listELFLog
	if d.problem = s.notWhole("cuobjdump --list-elf", log, "the cubins it listed after them were never read"); d.problem != "" {
		return
	}
	err := input.Files([]string{input.ExistingOrGz(p.x.path(log))}, nil, func(r io.Reader, _ string) error {
		l, err := sass.ParseListELF(r)
		if err != nil {
			return err
		}
		d.listing = &l
		return nil
	})
	if err != nil {
		d.failf("cuobjdump --list-elf (%s): %v", log, err)
	}
}

// planCubins decides, from the listing, whether d's cubins are extracted (true), dumped
// whole by cuobjdump (d.whole) or refused (d.problem).
func (p *pipeline) planCubins(d *sassDump) bool {
	var names []string
	for _, f := range d.listing.Files {
		if f.Kind == "ELF" {
			names = append(names, f.Name)
		}
	}
	seen := map[string]bool{}
	for _, n := range names {
		if why := cubinNameProblem(n); why != "" {
			d.failf("cuobjdump --list-elf names a cubin %s, which %s: refusing to extract it (cuobjdump -xelf writes each cubin under its name)", strconv.Quote(n), why)
			return false
		}
		if seen[n] {
			d.whole = fmt.Sprintf("two of its cubins are named %s, which cuobjdump -xelf would write one over the other", strconv.Quote(n))
			return false
		}
		seen[n] = true
	}
	if len(names) == 0 {
		d.whole = "cuobjdump --list-elf lists no cubin in it"
		return false
	}
	d.cubins = names
	return true
}

// cubinNameProblem says why a listed cubin's name could not be extracted as a file of the
// extraction directory, and only there ("" when it can).
// Why: docs/threat-model.md, threat-model T20.
func cubinNameProblem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case strings.ContainsAny(name, `/\`):
		return "holds a path separator"
	case strings.Contains(name, ".."):
		return `holds ".."`
	case strings.HasPrefix(name, "-"):
		return `starts with "-"`
	case strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return "holds a control character"
	}
	return ""
}

// extractAll runs cuobjdump -xelf all for each of ds, at once, each in a fresh directory
// of its own, and checks what each wrote.
func (p *pipeline) extractAll(ctx context.Context, ds []*sassDump) error {
	var jobs []dumpJob
	steps := make([]step, len(ds))
	for i, d := range ds {
		if !p.replaying {
			if err := p.freshDir(d.dir()); err != nil {
				return err
			}
		}
		jobs = append(jobs, dumpJob{proc: proc{id: "xelf/" + d.id, argv: []string{p.o.Tools.Cuobjdump, "-xelf", "all", d.bin}, dir: p.x.path(d.dir()), timeout: sassStepTimeout, log: d.prefix + xelfLog}, out: &steps[i]})
	}
	if err := p.runAtOnce(ctx, jobs); err != nil {
		return err
	}
	for i, d := range ds {
		s := steps[i]
		d.cached = s.Cached
		if d.problem = s.notWhole("cuobjdump -xelf all", d.prefix+xelfLog, "what it said of the cubins it wrote was never read"); d.problem != "" {
			continue
		}
		rec, err := p.extracted(ctx, d)
		if err != nil {
			return err
		}
		if why := rec.check(d.cubins); why != "" {
			d.failf("cuobjdump -xelf all (in %s): %s: the cubins are not what --list-elf lists, so their SASS cannot stand for the binary's", d.dir(), why)
			continue
		}
		d.sizes = make([]int64, len(d.cubins))
		for j, name := range d.cubins {
			d.sizes[j] = rec.size(name)
		}
	}
	return nil
}

// freshDir makes rel, a directory of the artifacts that must not exist yet: a name
// already there (which no earlier step of this run made) is refused, not reused.
func (p *pipeline) freshDir(rel string) error {
	root, err := os.OpenRoot(p.x.path(""))
	if err != nil {
		return exitcode.CouldNotRunf("artifact directory: %v", err)
	}
	defer root.Close()
	name := filepath.FromSlash(rel)
	if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return exitcode.BadInputf("directory %s: %v: a link out of the artifacts, or a file, is in its path", p.x.path(filepath.Dir(rel)), err)
	}
	if err := root.Mkdir(name, 0o755); err != nil {
		return exitcode.BadInputf("directory %s for cuobjdump -xelf: %v: it must be new", p.x.path(rel), err)
	}
	return nil
}

// cubinsFile is what the extraction directory held once cuobjdump -xelf ended, as
// kernel-gate saw it (kept as cubins.json): a replay and a restored base check the same.
type cubinsFile struct {
	Entries []cubinEntry `json:"entries"`
	// More is set when the directory held more entries than were read (the listing's
	// cubins and one).
	More bool `json:"more,omitempty"`
}

type cubinEntry struct {
	Name string `json:"name"`
	// Kind is "file" for a regular file, else what it is ("a symbolic link", ...).
	Kind string `json:"kind"`
	Size int64  `json:"size,omitempty"`
}

// size is the size of the entry name (0 when there is none).
func (c cubinsFile) size(name string) int64 {
	for _, e := range c.Entries {
		if e.Name == name {
			return e.Size
		}
	}
	return 0
}

// check says how the entries differ from names, the listed cubins ("" when they are
// exactly those, each a regular file).
func (c cubinsFile) check(names []string) string {
	seen := map[string]bool{}
	for _, e := range c.Entries {
		q := strconv.Quote(e.Name)
		switch {
		case seen[e.Name]:
			return fmt.Sprintf("%s is there twice", q)
		case !slices.Contains(names, e.Name):
			return fmt.Sprintf("it holds %s, which --list-elf does not list", q)
		case e.Kind != "file":
			return fmt.Sprintf("%s is %s, not a regular file", q, e.Kind)
		case e.Size < 0:
			return fmt.Sprintf("%s has size %d", q, e.Size)
		}
		seen[e.Name] = true
	}
	if c.More {
		return "it holds more files than --list-elf lists"
	}
	for _, n := range names {
		if !seen[n] {
			return fmt.Sprintf("%s, which --list-elf lists, was not extracted", strconv.Quote(n))
		}
	}
	return ""
}

// extracted is what d's extraction directory held: live, read now (the names and kinds
// of at most the listed cubins and one more, without following a link) and kept as
// cubins.json; replaying, or restored from the base cache, that file.
func (p *pipeline) extracted(ctx context.Context, d *sassDump) (cubinsFile, error) {
	rel := d.prefix + cubinsRecord
	var c cubinsFile
	if p.replaying || d.cached {
		raw, err := input.ReadFile(ctx, p.x.path(rel), input.JSON)
		if err != nil {
			return c, exitcode.BadInputf("the recording lacks what cuobjdump -xelf extracted of %s: %v", d.id, err)
		}
		if err := readCubinsFile(raw, &c); err != nil {
			return c, exitcode.BadInputf("%s: %v", rel, err)
		}
		return c, nil
	}
	root, err := os.OpenRoot(p.x.path(""))
	if err != nil {
		return c, exitcode.CouldNotRunf("artifact directory: %v", err)
	}
	defer root.Close()
	// Made by kernel-gate (freshDir), opened inside the artifacts; what is in it is
	// listed, never followed.
	f, err := root.Open(filepath.FromSlash(d.dir()))
	if err != nil {
		return c, exitcode.CouldNotRunf("the directory cuobjdump -xelf wrote in: %v", err)
	}
	entries, err := f.ReadDir(len(d.cubins) + 1)
	f.Close()
	if err != nil && !errors.Is(err, io.EOF) {
		return c, exitcode.CouldNotRunf("the directory cuobjdump -xelf wrote in: %v", err)
	}
	c.Entries = []cubinEntry{}
	for _, e := range entries {
		ce := cubinEntry{Name: e.Name(), Kind: "file"}
		info, err := e.Info() // lstat: a link is a link
		switch {
		case err != nil:
			ce.Kind = "unreadable"
		case !info.Mode().IsRegular():
			ce.Kind = input.KindOf(info.Mode())
		default:
			ce.Size = info.Size()
		}
		c.Entries = append(c.Entries, ce)
	}
	c.More = len(entries) > len(d.cubins)
	raw, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return c, exitcode.CouldNotRun(err)
	}
	return c, procgroup.WriteArtifact(p.x.path(""), rel, append(raw, '\n'), 0o644)
}

// readCubinsFile reads cubins.json strictly: a key twice or one it does not know refuses it,
// and so does a kind of entry extracted never writes (its message shows the kind as it is).
func readCubinsFile(raw []byte, c *cubinsFile) error {
	if err := strictjson.UnmarshalKnown(raw, c, strictjson.Options{}); err != nil {
		return err
	}
	if c.Entries == nil {
		return errors.New("no entries")
	}
	kinds := []string{"file", "unreadable"}
	for _, m := range []fs.FileMode{fs.ModeDir, fs.ModeSymlink, fs.ModeNamedPipe, fs.ModeSocket, fs.ModeDevice | fs.ModeCharDevice, fs.ModeDevice, fs.ModeIrregular} {
		kinds = append(kinds, input.KindOf(m))
	}
	for i, e := range c.Entries {
		if !slices.Contains(kinds, e.Kind) {
			return fmt.Errorf("entry %d (%s): kind %s is none a directory's entry has", i+1, strconv.Quote(e.Name), strconv.Quote(e.Kind))
		}
	}
	return nil
}

// removeCubins removes a live extraction's directory once its cubins were dumped (or,
// restored from the base cache, never written): the logs and sass.txt are what the run
// keeps (commands.sh extracts them again).
func (p *pipeline) removeCubins(d *sassDump) {
	if p.replaying {
		return
	}
	root, err := os.OpenRoot(p.x.path(""))
	if err != nil {
		return
	}
	defer root.Close()
	_ = root.RemoveAll(filepath.FromSlash(d.dir())) // leftover cubins are only clutter
}

// readCubins judges d's cubins' dumps: each must have ended well and whole and parse (one
// without code parses to nothing), and each function must have its cubin's arch, as its
// name says; then, live, their outputs are kept, in the listing's order, as sass.txt, and
// their functions are d's dump. A disagreeing arch sends d to cuobjdump --dump-sass.
func (p *pipeline) readCubins(d *sassDump) {
	var all sass.Dump
	for i, name := range d.cubins {
		s, q := d.steps[i], strconv.Quote(name)
		if d.problem = s.notWhole("nvdisasm of its cubin "+q, d.cubinLog(i), "the functions it printed after them were never read"); d.problem != "" {
			return
		}
		dump, err := readSASS(p.x.path(d.cubinLog(i)))
		switch {
		case sass.NoSASS(err):
			continue // a cubin without code (a link's stub)
		case err != nil:
			d.failf("nvdisasm of its cubin %s: %v", q, err)
			return
		}
		want := archOfCubin(d.listing, name)
		for _, f := range dump.Functions {
			if f.Arch == "" || want != "" && f.Arch != want {
				d.whole = fmt.Sprintf("nvdisasm says function %s of its cubin %s is for %s, where the cubin's name says %s",
					f.Name.Mangled, q, cmp.Or(f.Arch, "no arch"), cmp.Or(want, "none"))
				return
			}
		}
		all.Format = cmp.Or(all.Format, dump.Format)
		all.Functions = append(all.Functions, dump.Functions...)
	}
	rel := d.prefix + sassFile
	if !p.replaying && !d.cached {
		if err := p.concatenate(rel, d); err != nil {
			d.failf("keeping its SASS in %s: %v", rel, err)
			return
		}
	}
	if len(all.Functions) > 0 {
		d.sass, d.dump = rel, &all
	}
}

// archOfCubin is the arch the listing's name of a cubin says ("" for none).
func archOfCubin(l *sass.Listing, name string) string {
	for _, f := range l.Files {
		if f.Kind == "ELF" && f.Name == name {
			return f.Arch
		}
	}
	return ""
}

// concatenate writes d's cubins' outputs, in the listing's order, to rel.
func (p *pipeline) concatenate(rel string, d *sassDump) error {
	out, err := procgroup.CreateArtifact(p.x.path(""), rel, 0o644)
	if err != nil {
		return err
	}
	paths := make([]string, len(d.cubins))
	for i := range d.cubins {
		paths[i] = p.x.path(d.cubinLog(i))
	}
	if err := concatOutputs(out, paths); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// concatOutputs copies the files to out in order; one that does not end its last line gets
// a newline, so that the next one's header (which says its cubin's arch) stays a line of its
// own.
func concatOutputs(out io.Writer, paths []string) error {
	for _, path := range paths {
		in, err := input.Open(path)
		if err != nil {
			return err
		}
		last := &lastByte{w: out}
		_, err = io.Copy(last, in)
		in.Close()
		if err == nil && last.n > 0 && last.b != '\n' {
			_, err = out.Write([]byte{'\n'})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// lastByte passes writes on to w and keeps the last byte written.
type lastByte struct {
	w io.Writer
	b byte
	n int64
}

func (l *lastByte) Write(b []byte) (int, error) {
	n, err := l.w.Write(b)
	if n > 0 {
		l.b, l.n = b[n-1], l.n+int64(n)
	}
	return n, err
}

// sassProblemFindings are the sass gate's errors about head's sources builds whose SASS
// could not be dumped whole by its cubins (harness targets' binaries: binaryFindings).
func (p *pipeline) sassProblemFindings() []string {
	var out []string
	for _, b := range p.builds {
		if b.cmd == nil && b.ok[sideHead] && b.sassProblem[sideHead] != "" {
			out = append(out, fmt.Sprintf("%s: %s", b.name, b.sassProblem[sideHead]))
		}
	}
	return out
}

// isDumpDir reports whether a step's working directory is one the run made in the
// artifacts for it (an extraction's), which commands.sh must make again.
func isDumpDir(dir, artifacts string) bool {
	rel, err := filepath.Rel(artifacts, dir)
	return err == nil && filepath.IsLocal(rel) && filepath.Base(rel) == cubinsDir
}
