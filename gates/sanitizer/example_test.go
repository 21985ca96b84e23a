package sanitizer_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kernel-gate/kernel-gate/gates/sanitizer"
)

// ParseText reads compute-sanitizer's text output, here racecheck's on a real H200
// (testdata/sanitizer-kernels-h200), mixed with what the harness printed; Evaluate judges
// the runs. The race is pinned to its kernel and source line.
func ExampleParseText() {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "sanitizer-kernels-h200", "cs_racecheck_race.txt"))
	if err != nil {
		panic(err)
	}
	defer f.Close()
	runs, err := sanitizer.ParseText(f, "cs_racecheck_race.txt")
	if err != nil {
		panic(err)
	}
	for _, r := range runs {
		for _, rec := range r.Records {
			fmt.Printf("%s %s at %s:%d (%d hazards)\n", r.Tool, rec.Kind, rec.File, rec.Line, rec.Hazards)
		}
	}
	g, err := sanitizer.Evaluate(runs, map[string]int{"*": 1}, sanitizer.Config{})
	if err != nil {
		panic(err)
	}
	fmt.Println(g.Verdict)
	fmt.Println(g.Summary)
	// Output:
	// racecheck race-raw at flash_fwd.cu:177 (16384 hazards)
	// fail
	// racecheck: 1 error at 1 site
}

// ParseXML reads the record file of compute-sanitizer --xml --save, here memcheck's on a
// kernel that writes past its output, which makes the program's later CUDA calls fail and
// leak: identical records are grouped into one site with a count.
func ExampleParseXML() {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "sanitizer-kernels-h200", "xml_memcheck_oob.xml"))
	if err != nil {
		panic(err)
	}
	defer f.Close()
	run, err := sanitizer.ParseXML(f, "xml_memcheck_oob.xml")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d errors at %d sites\n", run.Tool, run.Errors, len(run.Records))
	rec := run.Records[0]
	fmt.Printf("%s ×%d: %s at %s:%d\n", rec.Kind, rec.Count, rec.Access, filepath.Base(rec.File), rec.Line)
	// Output:
	// memcheck: 12 errors at 5 sites
	// out-of-bounds ×2: __global__ write of size 2 bytes at flash_fwd.cu:200
}
