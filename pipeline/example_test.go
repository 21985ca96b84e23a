package pipeline_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/kernel-gate/kernel-gate/config"
	"github.com/kernel-gate/kernel-gate/pipeline"
)

// Run judges a recording of a real run (testdata/replay/race: a shared-memory read without
// a barrier, recorded on an H200) through the same steps as a live run, without a GPU.
func ExampleRun() {
	root := ".."
	cfg, err := config.Load(filepath.Join(root, "kernel-gate.yml"))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := pipeline.Run(context.Background(), cfg, pipeline.Options{
		Replay: filepath.Join(root, "testdata", "replay", "race"), Dir: root, Tool: "kernel-gate example",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("verdict:", res.Verdict)
	for _, g := range res.Gates {
		fmt.Printf("%s: %s\n", g.Name, g.Verdict)
	}
	// Output:
	// verdict: fail
	// ptxas: pass
	// toolkit: pass
	// sass: pass
	// sanitizer: fail
	// correctness: pass
	// speedup: skip
	// ncu: skip
}
