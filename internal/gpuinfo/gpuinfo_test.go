package gpuinfo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The H200's real answer, kept by a recorded kernel-gate run.
var recorded = filepath.Join("..", "..", "testdata", "replay", "clean", "gpu.csv")

func TestParse(t *testing.T) {
	g, err := ParseFile(recorded)
	if err != nil || g.Name != "NVIDIA H200" || g.ComputeCap != "9.0" || g.Driver != "580.159.04" || g.Arch() != "sm_90" {
		t.Fatalf("%+v %v", g, err)
	}
	two, err := Parse(strings.NewReader("NVIDIA L4, 8.9, 550.54.15\nNVIDIA H100 80GB HBM3, 9.0, 550.54.15\n"))
	if err != nil || two.Arch() != "sm_89" {
		t.Errorf("several GPUs: the first is used: %+v %v", two, err)
	}
	for _, bad := range []string{"", "\n\n", "NVIDIA H200, 9.0\n", "NVIDIA H200, nine, 580\n", "No devices were found\n",
		"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", " , 9.0, 580\n", "X, 100.0, 1\n"} {
		if g, err := Parse(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: accepted as %+v", bad, g)
		}
	}
}

func TestRunnableOn(t *testing.T) {
	for _, tc := range []struct {
		built []string
		gpu   string
		want  bool
	}{
		{[]string{"sm_89", "sm_90a"}, "sm_90", true},
		{[]string{"sm_89"}, "sm_90", false},
		{[]string{"sm_80"}, "sm_89", true},
		{[]string{"sm_90a"}, "sm_100", false},
		{[]string{"sm_100f"}, "sm_100", true},
		{[]string{"sm_86"}, "sm_80", false},
		{[]string{"sm_120"}, "sm_120", true},
		{[]string{"native"}, "sm_90", false},
		{[]string{"sm_90"}, "gpu", false},
	} {
		if got := RunnableOn(tc.built, tc.gpu); got != tc.want {
			t.Errorf("RunnableOn(%v, %s) = %v", tc.built, tc.gpu, got)
		}
	}
}

func FuzzParse(f *testing.F) {
	raw, err := os.ReadFile(recorded)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(raw))
	f.Add("NVIDIA L4, 8.9, 550.54.15\nNVIDIA L4, 8.9, 550.54.15\n")
	f.Add("[N/A], [N/A], [N/A]\n")
	f.Fuzz(func(t *testing.T, s string) {
		g, err := Parse(strings.NewReader(s))
		if err != nil {
			return
		}
		if !validComputeCap(g.ComputeCap) || g.Name == "" {
			t.Errorf("accepted %q as %+v", s, g)
		}
		if _, _, ok := archNumber(g.Arch()); !ok {
			t.Errorf("%q: arch %q does not read back", s, g.Arch())
		}
	})
}
