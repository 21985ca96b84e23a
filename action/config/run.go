package config

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/configpos"
	"github.com/kernel-gate/kernel-gate/internal/kernelname"
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
//	      sources: [kernels/harness.cu]
//	      kernels: [flash_fwd, flash_fwd_causal]   # KG_KERNELS
//	      functions: ["flash_fwd<*>"]              # whose SASS decides "unchanged"
//	      shapes: {check: [small, mission, long], sanitize: [small], bench: [mission, long]}
//	      reference: "python3 kernels/sdpa_reference.py"
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
	// Timeout bounds one harness run in check mode and one build (default 10m).
	Timeout string `yaml:"timeout"`
	// CheckRounds is KG_ROUNDS in check mode: fresh random inputs per round (default 3).
	CheckRounds *int `yaml:"check_rounds"`
	// Targets are the harnesses; each covers the kernels it names.
	Targets configpos.List[Target] `yaml:"targets"`
}

// Target is one harness binary (built from Sources) and the kernels it gates.
type Target struct {
	// Name names the target in reports and its artifacts folder: letters, digits, '.',
	// '_' and '-'.
	Name string `yaml:"name"`
	// Sources are nvcc's inputs, relative to the repository root: together they make the
	// harness, which speaks kernel-gate/bench/v1. Targets with the same sources and flags
	// share one build.
	Sources []string `yaml:"sources"`
	// Flags are more nvcc flags for this target.
	Flags []string `yaml:"flags"`
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
	// Reference is a command (shell words, run from the repository root) that times a
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
		if len(t.Sources) == 0 {
			bad(w, "sources: name the .cu files nvcc builds the harness from")
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
			if _, err := abrun.SplitCommand(t.Reference, nil); err != nil {
				bad(w, "reference: %v", err)
			}
		}
	}
	return s, errors.Join(errs...)
}
