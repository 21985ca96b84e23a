package acttest

import (
	"bytes"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/fakegithub"
	"github.com/kernel-gate/kernel-gate/internal/result"
	"github.com/kernel-gate/kernel-gate/internal/shard"
)

// shardJSON is shard i/n of a run of three targets on an L4, every gate passed.
func shardJSON(t *testing.T, i, n int) string {
	t.Helper()
	all := []string{"attention", "gemm", "softmax"}
	g := result.Gate{Name: "correctness", Findings: []result.Finding{{Severity: result.Notice, Message: "checked"}}}
	g.Decide(true)
	r := result.New("kernel-gate test", g)
	r.Device = &result.Device{Name: "NVIDIA L4", Arch: "sm_89"}
	r.Shard = &result.Shard{Index: i, Count: n, Targets: shard.Spec{Index: i, Count: n}.Select(all), AllTargets: all, Commit: "c0ffee"}
	var b bytes.Buffer
	if err := result.Write(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The merge job of kernel-gate-matrix.yml: command merge with files (a glob), expect-shards
// and expect-gpus. Shards 1 and 3 of 3 came, shard 2 did not: the merged result fails
// its shards gate naming the missing shard, the step exits 1 and the outputs say so.
func TestActMergeMissingShard(t *testing.T) {
	t.Parallel()
	h := newHarness(t, `name: e2e
on: pull_request
permissions:
  contents: read
jobs:
  merge:
    runs-on: self-hosted
    steps:
`+checkoutStep+`      - id: kg
        uses: ./
        with:
          command: merge
          files: shards/*/kernel-gate-result.json
          expect-shards: "3"
          expect-gpus: "1"
          results-file: kernel-gate-result.json
`+showOutputs,
		map[string]string{"shards/kernel-gate-shard-l4-1/kernel-gate-result.json": shardJSON(t, 1, 3),
			"shards/kernel-gate-shard-l4-3/kernel-gate-result.json": shardJSON(t, 3, 3)},
	)
	r := h.run(t, "http://127.0.0.1:9/", fakegithub.DefaultToken)
	if c := stepExit(r.log, "Run kernel-gate"); c != 1 {
		t.Errorf("Run kernel-gate: exit %d, want 1 (a shard is missing)", c)
	}
	got := outputs(r.log)
	if got["verdict"] != "fail" || got["failed-gates"] != "shards" || got["result-present"] != "yes" {
		t.Errorf("outputs %v: want verdict fail, failed-gates shards and the merged result", got)
	}
	mustContain(t, r.log, "command 'merge'", "shard 2/3 of L4, sm_89 is missing")
}
