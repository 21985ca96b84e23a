package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/gates/sass"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/gpuinfo"
	"github.com/kernel-gate/kernel-gate/internal/result"
)

// A side's commands get its own caches, the target's env, and NVCC_APPEND_FLAGS extended:
// the target's value, else the inherited one, then -lineinfo -Xptxas=-v.
func TestCommandEnv(t *testing.T) {
	for _, tc := range []struct {
		name     string
		environ  []string
		env      map[string]string
		wantFlag string
	}{
		{"nothing inherited", []string{"PATH=/bin"}, nil, "-lineinfo -Xptxas=-v"},
		{"inherited", []string{"NVCC_APPEND_FLAGS=-DA", "NVCC_APPEND_FLAGS=--threads 8"}, nil, "--threads 8 -lineinfo -Xptxas=-v"},
		{"the target's wins", []string{"NVCC_APPEND_FLAGS=-DA"}, map[string]string{"NVCC_APPEND_FLAGS": "-DB", "MAX_JOBS": "4"}, "-DB -lineinfo -Xptxas=-v"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &pipeline{o: Options{Environ: tc.environ}}
			c := &commandBuild{target: config.Target{Env: tc.env}}
			c.sides[sideBase].cache, c.sides[sideHead].cache = "/w/base/t", "/w/head/t"
			base, head := p.commandEnv(c, sideBase), p.commandEnv(c, sideHead)
			if v, _ := abrun.LookupEnv(head, "NVCC_APPEND_FLAGS"); v != tc.wantFlag {
				t.Errorf("NVCC_APPEND_FLAGS=%q, want %q", v, tc.wantFlag)
			}
			for _, kv := range []string{"KG_CACHE_DIR=/w/head/t", "TORCH_EXTENSIONS_DIR=/w/head/t/torch_extensions",
				"TRITON_CACHE_DIR=/w/head/t/triton", "CUDA_CACHE_PATH=/w/head/t/nv", "TRITON_DUMP_PTXAS_LOG=1"} {
				if !slices.Contains(head, kv) {
					t.Errorf("head's env lacks %s: %q", kv, head)
				}
				if slices.Contains(base, kv) && strings.Contains(kv, "/w/") {
					t.Errorf("base shares %s", kv)
				}
			}
			if tc.env["MAX_JOBS"] != "" && !slices.Contains(head, "MAX_JOBS=4") {
				t.Errorf("the target's env is missing: %q", head)
			}
			if n := strings.Count(strings.Join(head, "\n"), "NVCC_APPEND_FLAGS="); n != 1 {
				t.Errorf("NVCC_APPEND_FLAGS set %d times", n)
			}
		})
	}
}

// A finding about a harness target's kernel lands in the sources beside the files its
// commands name, or the directory above them; a directory that is a link out of the
// repository is not read.
func TestCommandDirsLocateKernels(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
	}
	write("kernels/flash_fwd.cu", "namespace kg {\ntemplate <int B>\n__global__ void flash_fwd(float* o) {}\n}\n")
	write("kernels/torch/kg_harness.py", "import torch\n")
	write("kernels/torch/ext.cu", "__global__ void bound_kernel(float* o) {}\n")
	os.WriteFile(filepath.Join(outside, "h.py"), nil, 0o644)
	os.WriteFile(filepath.Join(outside, "secret.cu"), []byte("__global__ void secret(float* o) {}\n"), 0o644)
	os.Symlink(outside, filepath.Join(root, "linked"))
	tg := config.Target{Name: "t", Harness: "python3 kernels/torch/kg_harness.py --fast", Build: "python3 linked/h.py", Sanitize: "python3 'unclosed"}
	if got := commandDirs(root, tg); !slices.Equal(got, []string{filepath.FromSlash("kernels/torch"), "kernels", "."}) {
		t.Errorf("dirs %q", got)
	}
	p := &pipeline{targets: []config.Target{tg}}
	idx := p.kernelIndex(root)
	for id, want := range map[string]string{"flash_fwd": "kernels/flash_fwd.cu", "bound_kernel": "kernels/torch/ext.cu"} {
		if d, ok := idx.Find(id); !ok || d.File != want {
			t.Errorf("%s found at %+v (%v), want %s", id, d, ok, want)
		}
	}
	if d, ok := idx.Find("secret"); ok {
		t.Errorf("a kernel outside the repository was read: %+v", d)
	}
}

// The sass gate's findings about head's binaries: none found, no SASS for this GPU, no
// SASS at all, no device code, a listing without arch names, no GPU to ask.
func TestBinaryFindings(t *testing.T) {
	h200 := &gpuinfo.Info{Name: "NVIDIA H200", ComputeCap: "9.0"}
	listing := func(archs ...string) *sass.Listing {
		l := &sass.Listing{}
		for i, a := range archs {
			l.Files = append(l.Files, sass.Embedded{Kind: "ELF", Index: i + 1, Name: "k." + a + ".cubin", Arch: a})
		}
		return l
	}
	// bin is a binary whose SASS dump has a function per cubin the listing names.
	bin := func(l *sass.Listing) readBinary {
		rb := readBinary{listedBinary: listedBinary{Path: "build/k.so"}, listing: l}
		for _, f := range l.Files {
			if rb.dump == nil {
				rb.dump = &sass.Dump{}
			}
			rb.dump.Functions = append(rb.dump.Functions, sass.Function{Arch: f.Arch})
		}
		return rb
	}
	cubin := readBinary{listedBinary: listedBinary{Path: "k.cubin"}, listing: &sass.Listing{}, dump: &sass.Dump{Functions: []sass.Function{{Arch: "sm_90a"}}}}
	listedNoDump := bin(listing("sm_90"))
	listedNoDump.dump = nil
	for _, tc := range []struct {
		name     string
		gpu      *gpuinfo.Info
		side     commandSide
		want     []string
		severity result.Severity
	}{
		{"runs here", h200, commandSide{list: binaryList{Binaries: []listedBinary{{Path: "build/k.so"}}}, binaries: []readBinary{bin(listing("sm_80", "sm_90a"))}}, nil, ""},
		{"none found", h200, commandSide{firstLog: "t/check.log"}, []string{`t: binaries ["build/**/*.so"] matched no file after its build and its harness's first run`}, result.Error},
		{"glob problem", h200, commandSide{list: binaryList{Problem: `binaries "x": too many`}}, []string{`t: binaries "x": too many`}, result.Error},
		{"other arch", h200, commandSide{list: binaryList{Binaries: []listedBinary{{}}}, binaries: []readBinary{bin(listing("sm_80", "sm_89"))}},
			[]string{"t: build/k.so holds SASS for sm_80, sm_89 only, none that runs on this GPU (sm_90, NVIDIA H200)"}, result.Error},
		{"PTX only", h200, commandSide{list: binaryList{Binaries: []listedBinary{{}}}, binaries: []readBinary{bin(listing())}},
			[]string{"t: build/k.so holds no SASS at all", "none of its binaries (1) holds SASS"}, result.Error},
		{"host code", h200, commandSide{list: binaryList{Binaries: []listedBinary{{}}}, binaries: []readBinary{bin(&sass.Listing{NoDeviceCode: true})}},
			[]string{"t: build/k.so holds no device code", "none of its binaries (1) holds SASS"}, result.Error},
		{"no arch in the names", h200, commandSide{list: binaryList{Binaries: []listedBinary{{}}}, binaries: []readBinary{bin(&sass.Listing{Files: []sass.Embedded{{Kind: "ELF", Index: 1, Name: "k.cubin"}}})}},
			[]string{"neither its cubins' names nor its SASS give an arch"}, result.Warning},
		{"a cubin --list-elf does not list", h200, commandSide{list: binaryList{Binaries: []listedBinary{{}}}, binaries: []readBinary{cubin}}, nil, ""},
		{"listed but no SASS dumped", h200, commandSide{list: binaryList{Binaries: []listedBinary{{}}}, binaries: []readBinary{listedNoDump}},
			[]string{"t: build/k.so: cuobjdump --list-elf lists 1 cubin(s) but its SASS dump shows no function"}, result.Error},
		{"no GPU", nil, commandSide{list: binaryList{Binaries: []listedBinary{{}}}, binaries: []readBinary{bin(listing("sm_90"))}},
			[]string{"there is no GPU to ask for its arch"}, result.Warning},
		{"cuobjdump failed", h200, commandSide{list: binaryList{Binaries: []listedBinary{{}}}, binaries: []readBinary{{listedBinary: listedBinary{Path: "build/k.so"}, problem: "cuobjdump --list-elf: exited with status 1"}}},
			[]string{"t: build/k.so: cuobjdump --list-elf: exited with status 1"}, result.Error},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &build{name: "t", cmd: &commandBuild{target: config.Target{Binaries: []string{"build/**/*.so"}}}}
			b.ok[sideHead] = true
			b.cmd.sides[sideHead] = tc.side
			p := &pipeline{gpu: tc.gpu, builds: []*build{b}}
			got := p.binaryFindings()
			var all []string
			worst := result.Severity("")
			for _, f := range got {
				all = append(all, f.Message)
				if worst == "" || f.Severity.Rank() < worst.Rank() {
					worst = f.Severity
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(strings.Join(all, "\n"), w) {
					t.Errorf("findings lack %q:\n%s", w, strings.Join(all, "\n"))
				}
			}
			if worst != tc.severity {
				t.Errorf("worst severity %q, want %q: %q", worst, tc.severity, all)
			}
		})
	}
}
