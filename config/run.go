package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
	"github.com/kernel-gate/kernel-gate/internal/pathglob"
	"github.com/kernel-gate/kernel-gate/internal/shellcmd"
)

// Defaults of the run section.
const (
	DefaultRunNVCC        = "nvcc"
	DefaultRunCheckRounds = 3
	DefaultRunTimeout     = 10 * time.Minute
	DefaultRunArch        = "native"
)

// Run is the run section: what `kernel-gate run` builds, and which kernels each harness
// covers. The thresholds stay in the gates' own sections; base_ref, samples and the
// timing budget in bench.
//
//	run:
//	  arch: [sm_89, sm_90a]        # -gencode per arch; "native" asks nvidia-smi
//	  flags: ["-O3", "-std=c++17"] # every build
//	  targets:
//	    - name: attention
//	      sources: [kernels/harness.cpp, kernels/harness_cases.cpp, kernels/harness_device.cu, kernels/flash_fwd.cu]  # several: compiled apart, linked
//	      kernels: [flash_fwd, flash_fwd_causal]   # KG_KERNELS
//	      functions: ["flash_fwd<*>"]              # whose SASS decides "unchanged"
//	      shapes: {check: [small, mission, long], sanitize: [small], bench: [mission, long]}
//	      reference: "python3 kernels/sdpa_reference.py"
//	    - name: attention-torch    # a target built by the repository's own build (issue 14)
//	      build: "python3 setup.py build_ext --inplace"   # sh -c in each tree; "" = JIT
//	      env: {MAX_JOBS: "4"}
//	      harness: "python3 kernels/torch/kg_harness.py"
//	      binaries: ["$KG_CACHE_DIR/torch_extensions/**/*.so", "build/**/*.so"]
//	      kernels: [flash_fwd]
type Run struct {
	configpos.Section[RunSettings] `yaml:",inline"`
	// Arch lists the SASS architectures every target is built for ("sm_90a"); "native" is
	// the GPU's own (nvidia-smi --query-gpu=compute_cap). Default [native]. The GPU's own
	// architecture must be among them, or the harness could not run.
	Arch []string `yaml:"arch"`
	// NVCC is the compiler (a name on PATH or a path; default nvcc).
	NVCC string `yaml:"nvcc"`
	// Flags are added to every build (kernel-gate adds -lineinfo -Xptxas -v, the -gencode
	// flags and -o itself).
	Flags []string `yaml:"flags"`
	// Timeout bounds one harness run in check mode and one build command: each nvcc process
	// of a target of sources (one source's compile, the link), or a harness target's build
	// (default 10m).
	Timeout string `yaml:"timeout"`
	// CheckRounds is KG_ROUNDS in check mode: fresh random inputs per round (default 3).
	CheckRounds *int `yaml:"check_rounds"`
	// Targets are the harnesses; each covers the kernels it names.
	Targets configpos.List[Target] `yaml:"targets"`
}

// Target is one harness and the kernels it gates. It comes in two forms: Sources, a harness
// kernel-gate builds with nvcc (the short-hand), or Harness, a command of the repository's
// own that runs what its Build command (or the harness itself, on first use) built, read
// from Binaries with cuobjdump.
type Target struct {
	// Name names the target in reports and its artifacts folder: letters, digits, '.',
	// '_' and '-'.
	Name string `yaml:"name"`
	// Sources are nvcc's inputs, relative to the repository root: together they make the
	// harness, which speaks kernel-gate/bench/v1. Targets with the same sources and flags
	// share one build.
	Sources []string `yaml:"sources"`
	// Flags are more nvcc flags for this target (a Sources target only).
	Flags []string `yaml:"flags"`
	// Build is a shell command (sh -c) run from the root of each tree, base's worktree and
	// head, with Env and the variables kernel-gate sets (BuildEnv); empty for a harness
	// that builds its kernels on first use (torch.utils.cpp_extension.load, Triton).
	Build string `yaml:"build"`
	// Env is more environment for Build, Harness and Sanitize. NVCC_APPEND_FLAGS here
	// replaces the inherited value and is then extended like it; the variables kernel-gate
	// sets itself cannot be set (ReservedEnv).
	Env map[string]string `yaml:"env"`
	// Harness is a shell command (sh -c, from the tree's root) that speaks
	// kernel-gate/bench/v1 (KG_MODE, KG_SHAPES, KG_OUT, ...) as a built harness does:
	// "python3 bench/kg_harness.py".
	Harness string `yaml:"harness"`
	// Sanitize is a smaller command for compute-sanitizer's runs (default: Harness).
	Sanitize string `yaml:"sanitize"`
	// Binaries are path globs ("**" any directories) of what Build, or the harness's first
	// run, made: .so files, executables, .cubin. Relative to the tree's root, or under
	// "$KG_CACHE_DIR/". kernel-gate reads them with cuobjdump (--list-elf,
	// --dump-resource-usage, --dump-sass). Required with Harness: without them the ptxas
	// and sass gates would have nothing to read.
	Binaries []string `yaml:"binaries"`
	// Kernels is KG_KERNELS: the harness's names of the kernels this target runs; empty
	// leaves the harness's default (all of them).
	Kernels []string `yaml:"kernels"`
	// Functions are kernelname globs over the compiled functions that belong to this
	// target: when every one of them has the same SASS as in base, on every arch, the
	// target is not sanitized, timed or profiled again. Empty: every function of its build.
	// They also decide which static-gate failures stop the target's GPU steps.
	Functions []string `yaml:"functions"`
	// Shapes are KG_SHAPES per mode; empty leaves the harness's default.
	Shapes TargetShapes `yaml:"shapes"`
	// Reference is a shell command (sh -c, from the repository root) that times a
	// reference implementation of the same kernels × shapes in bench mode, once per round
	// beside head: PyTorch SDPA for min_speedup_vs_reference, say.
	Reference string `yaml:"reference"`
	// ReferenceName names the reference in reports (default: what its file says).
	ReferenceName  string `yaml:"reference_name"`
	configpos.Item `yaml:"-"`
}

// TargetShapes are KG_SHAPES of each mode.
type TargetShapes struct {
	Check    []string `yaml:"check"`
	Sanitize []string `yaml:"sanitize"`
	Bench    []string `yaml:"bench"`
}

// HasCommands reports whether the target is built and run by commands of the repository's
// own (Harness) rather than built by kernel-gate from Sources.
func (t Target) HasCommands() bool { return t.Harness != "" }

// SanitizeCommand is the command compute-sanitizer runs: Sanitize, else Harness.
func (t Target) SanitizeCommand() string { return cmp.Or(strings.TrimSpace(t.Sanitize), t.Harness) }

// CacheDirVar is the variable that names a side's own cache directory: kernel-gate sets it
// for every command of a harness target, and a binaries glob may start with it.
const CacheDirVar = "KG_CACHE_DIR"

// ReservedEnv are the variables kernel-gate sets for a harness target's commands, which
// its env cannot set: the harness protocol's, the side's cache directories (base and head
// must never share a build) and Triton's ptxas log switch. NVCC_APPEND_FLAGS is not among
// them: kernel-gate extends it.
func ReservedEnv() []string {
	return []string{"KG_MODE", "KG_ROUNDS", "KG_SAMPLES", "KG_SHAPES", "KG_OUT", "KG_KERNELS", CacheDirVar,
		"TORCH_EXTENSIONS_DIR", "TRITON_CACHE_DIR", "CUDA_CACHE_PATH", "TRITON_DUMP_PTXAS_LOG"}
}

// CacheGlob splits a binaries glob into whether it is under KG_CACHE_DIR and the glob
// relative to the directory it is expanded in.
func CacheGlob(glob string) (underCache bool, rel string) {
	for _, prefix := range []string{"$" + CacheDirVar + "/", "${" + CacheDirVar + "}/"} {
		if rest, ok := strings.CutPrefix(glob, prefix); ok {
			return true, rest
		}
	}
	return false, glob
}

var (
	archPattern       = regexp.MustCompile(`^sm_[0-9]{2,3}[af]?$`)
	targetNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
)

// ownedFlags are the nvcc flags kernel-gate sets itself; a config that sets them would
// build something other than what the gates read.
var ownedFlags = []string{"-o", "--output-file", "-c", "--compile", "-gencode", "--generate-code", "-arch", "--gpu-architecture", "-code", "--gpu-code", "-G", "--device-debug"}

func (r Run) where(key string) string { return r.KeyWhere(key) + ": run." + key }

// TargetWhere names a target in messages: "kernel-gate.yml:40: run.targets[attention]".
func (r Run) TargetWhere(t Target) string {
	return fmt.Sprintf("%s: run.targets[%s]", r.Where(t.Line), t.Name)
}

// RunSettings is the run section resolved.
type RunSettings struct {
	Arch        []string // as configured; "native" not yet resolved
	NVCC        string
	Flags       []string
	Timeout     time.Duration
	CheckRounds int
	Targets     []Target
}

// Resolve checks the section, read from file, and keeps its settings. The error names every
// bad setting and its line.
func (r *Run) Resolve(file string) error { return configpos.Resolve(r, file, Run.resolve) }

// Settings returns the section with its defaults filled in: as Resolve kept it, or resolved
// now. The error names every bad setting and its line.
func (r Run) Settings() (RunSettings, error) {
	s, err := configpos.Resolved(r, Run.resolve)
	// The caller may change its copy; the kept one is shared by every copy of r.
	s.Arch, s.Flags, s.Targets = slices.Clone(s.Arch), slices.Clone(s.Flags), slices.Clone(s.Targets)
	return s, err
}

func (r Run) resolve() (RunSettings, error) {
	s := RunSettings{Arch: r.Arch, NVCC: cmp.Or(strings.TrimSpace(r.NVCC), DefaultRunNVCC), Flags: r.Flags,
		Timeout: DefaultRunTimeout, CheckRounds: DefaultRunCheckRounds, Targets: r.Targets}
	var errs []error
	bad := func(where, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", where, fmt.Sprintf(format, a...)))
	}
	if len(s.Arch) == 0 {
		s.Arch = []string{DefaultRunArch}
	}
	seen := map[string]bool{}
	for _, a := range s.Arch {
		if a != DefaultRunArch && !archPattern.MatchString(a) {
			bad(r.where("arch"), "%q is not an architecture (want sm_90a, sm_89, ... or native)", a)
		}
		if seen[a] {
			bad(r.where("arch"), "%q is listed twice", a)
		}
		seen[a] = true
	}
	checkFlags := func(where string, flags []string) {
		for _, f := range flags {
			name, _, _ := strings.Cut(f, "=")
			if slices.Contains(ownedFlags, name) {
				bad(where, "%q is set by kernel-gate run (it builds with -lineinfo -Xptxas -v, -gencode per run.arch and its own -o)", f)
			}
		}
	}
	checkFlags(r.where("flags"), r.Flags)
	if r.Timeout != "" {
		d, err := time.ParseDuration(strings.TrimSpace(r.Timeout))
		if err != nil || d <= 0 {
			bad(r.where("timeout"), "%q is not a positive duration (e.g. \"10m\")", r.Timeout)
		} else {
			s.Timeout = d
		}
	}
	if r.CheckRounds != nil {
		if *r.CheckRounds < 1 || *r.CheckRounds > 1000 {
			bad(r.where("check_rounds"), "must be between 1 and 1000, got %d", *r.CheckRounds)
		} else {
			s.CheckRounds = *r.CheckRounds
		}
	}
	names := map[string]bool{}
	for _, t := range r.Targets {
		w := r.TargetWhere(t)
		if !targetNamePattern.MatchString(t.Name) {
			bad(w, "name %q: a target needs a name of letters, digits, '.', '_' and '-' (it names its artifacts folder)", t.Name)
		}
		if names[t.Name] {
			bad(w, "the name %q is used twice", t.Name)
		}
		names[t.Name] = true
		if t.HasCommands() {
			checkCommandTarget(t, func(format string, a ...any) { bad(w, format, a...) })
		} else {
			if len(t.Sources) == 0 {
				bad(w, "sources: name the .cu files nvcc builds the harness from, or give harness (with build and binaries) for a target your own build makes")
			}
			for _, f := range []struct {
				key string
				set bool
			}{{"build", t.Build != ""}, {"env", len(t.Env) > 0}, {"sanitize", t.Sanitize != ""}, {"binaries", len(t.Binaries) > 0}} {
				if f.set {
					bad(w, "%s: only a target with harness has one (kernel-gate builds a sources target itself)", f.key)
				}
			}
		}
		for _, src := range t.Sources {
			if strings.TrimSpace(src) == "" || strings.HasPrefix(src, "-") {
				bad(w, "sources: %q is not a file", src)
			}
		}
		checkFlags(w+".flags", t.Flags)
		for _, k := range t.Kernels {
			if strings.TrimSpace(k) == "" || strings.Contains(k, ",") {
				bad(w, "kernels: %q: a kernel name is non-empty and has no comma (KG_KERNELS is comma-separated)", k)
			}
		}
		for _, g := range t.Functions {
			if !kernelname.Glob(g).Valid() {
				bad(w, "functions: %q is not a glob: it is empty", g)
			}
		}
		for mode, shapes := range map[string][]string{"check": t.Shapes.Check, "sanitize": t.Shapes.Sanitize, "bench": t.Shapes.Bench} {
			for _, sh := range shapes {
				if strings.TrimSpace(sh) == "" || strings.Contains(sh, ",") {
					bad(w, "shapes.%s: %q: a shape name is non-empty and has no comma", mode, sh)
				}
			}
		}
		if t.Reference != "" {
			if err := shellcmd.Check(t.Reference); err != nil {
				bad(w, "reference: %v", err)
			}
		}
	}
	return s, errors.Join(errs...)
}

// checkCommandTarget checks the fields of a target made by the repository's own commands.
func checkCommandTarget(t Target, bad func(format string, a ...any)) {
	if len(t.Sources) > 0 {
		bad("sources and harness: give one: sources for a harness kernel-gate builds with nvcc, harness (with build and binaries) for one your own build makes")
	}
	if len(t.Flags) > 0 {
		bad("flags: nvcc flags of a sources target; a harness target's build sets its own (env's NVCC_APPEND_FLAGS is extended, not replaced)")
	}
	for i, cmd := range []string{t.Harness, t.Build, t.Sanitize} {
		if i > 0 && strings.TrimSpace(cmd) == "" {
			continue // no build (a JIT harness), or sanitize is the harness
		}
		if err := shellcmd.Check(cmd); err != nil {
			bad("%s: %v", []string{"harness", "build", "sanitize"}[i], err)
		}
	}
	if len(t.Binaries) == 0 {
		bad("binaries: name what build (or the harness's first run, in $%s) makes, e.g. [\"$%s/torch_extensions/**/*.so\"]: the ptxas and sass gates read them with cuobjdump, and cannot pass without them", CacheDirVar, CacheDirVar)
	}
	for _, g := range t.Binaries {
		_, rel := CacheGlob(g)
		if strings.Contains(rel, "$") {
			bad("binaries: %q: only $%s/ at the start expands; a glob is relative to the tree's root or under $%s/", g, CacheDirVar, CacheDirVar)
			continue
		}
		if err := pathglob.Check(rel); err != nil {
			bad("binaries: %v", err)
		}
	}
	names := slices.Sorted(maps.Keys(t.Env))
	for _, k := range names {
		v := t.Env[k]
		switch {
		case !abrun.ValidEnvName(k):
			bad("env: %q is not a variable name (letters, digits and _)", k)
		case slices.Contains(ReservedEnv(), k):
			bad("env: %s is set by kernel-gate run for each side (base and head get their own caches; the KG_ variables are the harness protocol's)", k)
		case strings.ContainsRune(v, 0):
			bad("env: %s: a value holds no NUL byte", k)
		}
	}
}
