package registry

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// module is the module's path; the layers are named relative to it.
const module = "github.com/kernel-gate/kernel-gate/"

// layers are the packages from the lowest layer up, by path prefix: a package may import
// one of its own layer or a lower one, never a higher one. baseline/trend draws the trend
// page, so it sits with report. explain reads the gates' records only, so that the pipeline
// and the reports can both use it; docs holds the docs' tests, which nothing imports.
var layers = [][]string{
	{"internal/"},
	{"gates/"},
	{"explain"},
	{"baseline"},
	{"registry"},
	{"config"},
	{"pipeline"},
	{"report", "baseline/trend"},
	{"action"},
	{"cli"},
	{"cmd/", "docs"},
}

// layerOf is the layer of a package path relative to the module (-1: none), taking the
// longest prefix that is the whole path or ends at a '/'.
func layerOf(rel string) int {
	layer, best := -1, 0
	for i, prefixes := range layers {
		for _, p := range prefixes {
			whole := strings.TrimSuffix(p, "/")
			if (rel == whole || strings.HasPrefix(rel, whole+"/")) && len(whole) > best {
				layer, best = i, len(whole)
			}
		}
	}
	return layer
}

// No package imports one of a higher layer (tests may: they are not imported), and every
// package of the module has a layer. It reads the imports with go list, without building.
func TestLayers(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	packages := 0
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(fields[0], module)
		from := layerOf(pkg)
		if from < 0 {
			t.Errorf("%s has no layer: add it to layers (and to the layering in the docs)", pkg)
			continue
		}
		packages++
		for _, imp := range fields[1:] {
			rel, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if to := layerOf(rel); to > from {
				t.Errorf("%s (layer %v) imports %s (layer %v): an arrow up", pkg, layers[from], rel, layers[to])
			}
		}
	}
	if packages < 10 {
		t.Errorf("go list found %d packages", packages)
	}
}

func TestLayerOf(t *testing.T) {
	for rel, want := range map[string]int{
		"internal/result": 0, "gates/speedup/abrun": 1, "explain": 2, "baseline": 3, "baseline/trend": 7,
		"registry": 4, "cmd/kernel-gate": 10, "docs": 10, "configs": -1, "reporter": -1,
	} {
		if got := layerOf(rel); got != want {
			t.Errorf("layerOf(%q) = %d, want %d", rel, got, want)
		}
	}
}
