package speedup_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
)

// Compare judges a head build's timings against its base's. These are the merged files of
// a real A/B run on an H200 (testdata/timing/serve-h200-overlap), where head's flash_fwd
// was made 3% slower: 16 rounds side by side show it beyond the noise.
func ExampleCompare() {
	dir := filepath.Join("..", "..", "testdata", "timing", "serve-h200-overlap", "attention-3pct-serve", "artifacts")
	var files [2]*benchfile.File
	for i, name := range []string{"base.json", "head.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			files[i], err = benchfile.Read(bytes.NewReader(b))
		}
		if err != nil {
			panic(err)
		}
	}
	g, err := speedup.Compare(files[0], files[1], speedup.Config{})
	if err != nil {
		panic(err)
	}
	fmt.Println(g.Verdict)
	fmt.Println(g.Summary)
	for _, r := range g.Table.Rows {
		fmt.Println(r.Cells)
	}
	// Output:
	// fail
	// 1 kernel × shape pair(s) compared on NVIDIA H200: 1 slower; 1 error(s), 0 warning(s)
	// [flash_fwd mission slower 3.3% slower (2.7–4.2%), 16 rounds ]
}
