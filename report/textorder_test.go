package report

import (
	"strings"
	"testing"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// The text report shows failing gates first (what to fix is at the top of a terminal), the
// others after them, each group in the result's order.
func TestTextFailingGatesFirst(t *testing.T) {
	res := result.New("kernel-gate test",
		result.Gate{Name: "ptxas", Verdict: result.Pass},
		result.Gate{Name: "sass", Verdict: result.Fail},
		result.Gate{Name: "sanitizer", Verdict: result.Skip},
		result.Gate{Name: "speedup", Verdict: result.Fail},
	)
	var b strings.Builder
	if err := Render(&b, res, Text, Options{}); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, line := range strings.Split(b.String(), "\n") {
		if name, ok := strings.CutPrefix(line, "== "); ok {
			order = append(order, strings.Fields(name)[0])
		}
	}
	if got, want := strings.Join(order, " "), "sass: speedup: ptxas: sanitizer:"; got != want {
		t.Errorf("gates in order %q, want %q:\n%s", got, want, b.String())
	}
}
