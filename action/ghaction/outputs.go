package ghaction

import (
	"strings"

	"github.com/kernel-gate/kernel-gate/internal/result"
)

// failedGates is the failed-gates output: the names of the gates that failed, comma-
// separated, in the result's order. A report's gate names come from an untrusted file and
// an output is often spliced into a later step's script: any character but letters,
// digits, '_', '-' and '.' becomes '_'.
func failedGates(res result.Result) string {
	var names []string
	for _, g := range res.Gates {
		if g.Verdict != result.Fail {
			continue
		}
		name := strings.Map(func(r rune) rune {
			if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '-' || r == '.' {
				return r
			}
			return '_'
		}, g.Name)
		if len(name) > 64 {
			name = name[:64]
		}
		names = append(names, name)
	}
	return strings.Join(names, ",")
}
