package pipeline

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The nvcc command lines of a build: one command of its sources, a source's compile (-c),
// the link of the objects (no -x, which names what the sources are); --threads only where
// the flags do not set it.
func TestNVCCArgs(t *testing.T) {
	p := &pipeline{}
	p.set.NVCC, p.set.Arch = "nvcc", []string{"sm_89", "sm_90a"}
	one := &build{sources: []string{"h.cu"}, flags: []string{"-O3"}}
	two := &build{sources: []string{"h.cu", "k.cpp"}, flags: []string{"-O3", "-x", "cu", "--x=cu", "-std=c++17"}}
	own := &build{sources: []string{"h.cu", "k.cu"}, flags: []string{"--threads=4"}}
	gencode := "-gencode arch=compute_89,code=sm_89 -gencode arch=compute_90a,code=sm_90a"
	for _, tc := range []struct {
		name    string
		args    []string
		want    string
		compile bool
	}{
		{"one command", p.nvccArgs(one, "bin", false, 2, one.sources...), "nvcc -lineinfo -Xptxas -v -O3 " + gencode + " --threads 2 -o bin h.cu", false},
		{"one command, one thread", p.nvccArgs(one, "bin", false, 0, one.sources...), "nvcc -lineinfo -Xptxas -v -O3 " + gencode + " -o bin h.cu", false},
		{"a source's compile", p.nvccArgs(two, "1.o", true, 2, "k.cpp"), "nvcc -lineinfo -Xptxas -v -O3 -x cu --x=cu -std=c++17 " + gencode + " --threads 2 -c -o 1.o k.cpp", true},
		{"the link", p.nvccArgs(two, "bin", false, 0, "0.o", "1.o"), "nvcc -lineinfo -Xptxas -v -O3 -std=c++17 " + gencode + " -o bin 0.o 1.o", false},
		{"the flags' own --threads", p.nvccArgs(own, "0.o", true, 2, "h.cu"), "nvcc -lineinfo -Xptxas -v --threads=4 " + gencode + " -c -o 0.o h.cu", true},
	} {
		if got := strings.Join(tc.args, " "); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		if slices.Contains(tc.args, "-c") != tc.compile {
			t.Errorf("%s: -c %v", tc.name, !tc.compile)
		}
	}
}

// A host-only source (a .c, .cc, .cpp or .cxx: nvcc runs only the host compiler) gets no
// --threads, and the device sources' --threads share the cores without it; -x in the flags
// makes every source CUDA.
func TestSourceThreads(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, nvccVersionFile), []byte("Cuda compilation tools, release 13.0, V13.0.88\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &pipeline{x: &replayer{dir: dir}}
	p.set.Arch = []string{"sm_89", "sm_90a"}
	split := []string{"kernels/harness.cpp", "kernels/harness_cases.cpp", "kernels/harness_device.cu", "kernels/flash_fwd.cu", "kernels/gemm_wmma.cu", "kernels/softmax.cu"}
	for _, tc := range []struct {
		name    string
		sources []string
		flags   []string
		jobs    int
		want    []int
	}{
		{"two .cpp beside four .cu, 8 cores", split, []string{"-O3"}, 8, []int{0, 0, 2, 2, 2, 2}},
		{"five .cu, 8 cores", []string{"a.cu", "b.cu", "c.cu", "d.cu", "e.cu"}, nil, 8, []int{0, 0, 0, 0, 0}},
		{"two .cpp beside four .cu, 4 cores", split, nil, 4, []int{0, 0, 0, 0, 0, 0}},
		{"two .cpp beside four .cu, 16 cores", split, nil, 16, []int{0, 0, 2, 2, 2, 2}},
		{"-x cu: the .cpp is CUDA", split, []string{"-x", "cu"}, 16, []int{2, 2, 2, 2, 2, 2}},
		{"each host-only suffix", []string{"a.c", "b.cc", "c.cxx", "d.cpp", "k.cu"}, nil, 2, []int{0, 0, 0, 0, 2}},
		{"host-only alone", []string{"a.cpp", "b.cc"}, nil, 8, []int{0, 0}},
		{"--x=cu: the .cpp is CUDA", split, []string{"--x=cu"}, 12, []int{2, 2, 2, 2, 2, 2}},
	} {
		got := p.sourceThreads(&build{sources: tc.sources, flags: tc.flags}, tc.jobs)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: --threads %v, want %v", tc.name, got, tc.want)
		}
	}
}
