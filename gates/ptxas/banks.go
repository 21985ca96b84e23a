package ptxas

import (
	"iter"
	"slices"
	"strconv"
)

// sortedBanks yields constant banks in numeric order.
func sortedBanks(m map[string]int64) iter.Seq2[string, int64] {
	return func(yield func(string, int64) bool) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			x, _ := strconv.Atoi(a)
			y, _ := strconv.Atoi(b)
			if x != y {
				return x - y
			}
			if a < b {
				return -1
			}
			if a > b {
				return 1
			}
			return 0
		})
		for _, k := range keys {
			if !yield(k, m[k]) {
				return
			}
		}
	}
}
