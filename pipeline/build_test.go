package pipeline

import (
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
