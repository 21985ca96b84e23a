package abrun_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kernel-gate/kernel-gate/gates/speedup"
	"github.com/kernel-gate/kernel-gate/gates/speedup/abrun"
	"github.com/kernel-gate/kernel-gate/internal/benchfile"
)

// Judge is the gate of an A/B run from what the run kept: its merged base and head files
// and the runner's data. Here they are a real run's on an H200
// (testdata/timing/serve-h200-overlap: head's flash_fwd made 3% slower, served harnesses
// restarted every 4 rounds), so judging them again, as a replay of a recording does,
// reaches the run's own verdict and summary.
func ExampleJudge() {
	dir := filepath.Join("..", "..", "..", "testdata", "timing", "serve-h200-overlap", "attention-3pct-serve")
	raw, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		panic(err)
	}
	var recorded struct {
		Gates []struct {
			Summary string     `json:"summary"`
			Data    abrun.Data `json:"data"`
		} `json:"gates"`
	}
	if err := json.Unmarshal(raw, &recorded); err != nil {
		panic(err)
	}
	run := recorded.Gates[0]
	// The merged files, base's and head's rounds side by side, as the run kept them.
	var merged []*benchfile.File
	for _, name := range []string{"base.json", "head.json"} {
		if b, err := os.ReadFile(filepath.Join(dir, "artifacts", name)); err != nil {
			panic(err)
		} else if f, err := benchfile.Read(bytes.NewReader(b)); err != nil {
			panic(err)
		} else {
			merged = append(merged, f)
		}
	}
	g, err := abrun.Judge(merged[0], merged[1], speedup.Config{}, run.Data.Runner, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(g.Verdict)
	fmt.Println(g.Summary)
	fmt.Println(g.Summary == run.Summary)
	// Output:
	// fail
	// 1 kernel × shape pair(s) compared on NVIDIA H200: 1 slower; 1 error(s), 0 warning(s); 16 round(s) side by side, ABBA, served (restarted every 4), 2.2 s of wall time
	// true
}
